"""Truth tables to and from other tools' conventions (boofun, SageMath, MSB-first tables).

depthsep's convention (:mod:`circuits.hypercube`): a truth table is a ``uint8`` array ``t`` of
length 2^N with ``t[k] = f(z)`` where bit i of the index is variable i, ``z_i = (k >> i) & 1``
("LSB first", variable 0 is the least significant bit).  Values are 0/1; the ±1 form is
``F = (-1)^f`` (0 -> +1, 1 -> -1), the form whose Walsh transform :mod:`circuits.analysis` uses.

What other tools do, as read in their sources:

* **boofun** (``pip install boofun``; GabbyTab/boofun, ``core/representations/truth_table.py``
  and its bit-ordering tests): truth tables are indexed "LSB = x₀", i.e. position i holds
  f(x) with ``x_j = (i >> j) & 1`` -- the same order as ours -- and its Fourier convention
  follows O'Donnell, *Analysis of Boolean Functions*: Boolean 0 -> +1, 1 -> -1, so ±1 tables
  are ``(-1)^f`` as here.  ``bf.create([0, 1, 1, 0])`` is XOR in both libraries.
* **SageMath** ``sage.crypto.boolean_function.BooleanFunction`` (``boolean_function.pyx``):
  ``BooleanFunction(list)`` takes the truth table with variable k = bit k of the index (the
  constructor from a Boolean polynomial sets index ``sum(1 << k for k in monomial)``, and
  ``B([x0, x1, ...])`` evaluates at ``ZZ(list, 2)``, little-endian digits) -- again our order.
  ``BooleanFunction("hex")`` and ``truth_table(format='hex')`` use the hexadecimal string of
  the integer whose bit i is f(i), most significant digit first, padded to 2^N / 4 digits
  (e.g. the table (1, 1, 0, 0, 0, 0, 1, 0) is ``'43'``).  Its Walsh transform
  ``W(j) = sum_i (-1)^(f(i) xor i.j)`` equals :func:`circuits.analysis.walsh_spectrum`'s.
* **MSB-first tables** (textbook truth tables listing rows 00...0, 00...1, ... with x₁ as the
  leftmost, most significant column; Mathematica's ``BooleanTable`` order reversed): use
  :func:`reverse_bit_order`, which maps between the two index orders.

Examples
--------
>>> import numpy as np
>>> from circuits.interop import to_pm1, from_pm1, reverse_bit_order, to_sage_hex, from_sage_hex
>>> t = np.array([0, 1, 1, 0], dtype=np.uint8)          # XOR
>>> to_pm1(t).tolist()
[1, -1, -1, 1]
>>> from_pm1([1, -1, -1, 1]).tolist()
[0, 1, 1, 0]
>>> reverse_bit_order([0, 1, 0, 0, 0, 0, 0, 0]).tolist()   # z = (1, 0, 0) -> index 4 MSB-first
[0, 0, 0, 0, 1, 0, 0, 0]
>>> to_sage_hex([1, 1, 0, 0, 0, 0, 1, 0])
'43'
>>> from_sage_hex('43').tolist()
[1, 1, 0, 0, 0, 0, 1, 0]
"""

from __future__ import annotations

import numpy as np

from circuits.functions import as_truth_table
from circuits.utils.errors import DimensionError, InvalidCircuitError

__all__ = [
    "to_pm1",
    "from_pm1",
    "reverse_bit_order",
    "to_boofun",
    "from_boofun",
    "to_sage",
    "from_sage",
    "to_sage_hex",
    "from_sage_hex",
]


def _n_bits(length: int) -> int:
    return int(length).bit_length() - 1


def to_pm1(table) -> np.ndarray:
    """The ±1 form F = (-1)^f of a 0/1 truth table (0 -> +1, 1 -> -1), as int8.

    Parameters
    ----------
    table : array_like of 0/1 (or bool), length 2^N
        Truth table in any order; the order is kept.

    Returns
    -------
    numpy.ndarray
        int8 array of +1/-1 of the same length.

    Examples
    --------
    >>> to_pm1([0, 0, 0, 1]).tolist()          # AND
    [1, 1, 1, -1]
    """
    t = as_truth_table(table)
    return (1 - 2 * t.astype(np.int8)).astype(np.int8)


def from_pm1(values, *, name: str = "values") -> np.ndarray:
    """A 0/1 truth table from its ±1 form (+1 -> 0, -1 -> 1, O'Donnell's convention).

    Parameters
    ----------
    values : array_like of +1/-1, length 2^N
        Exactly +1 or -1 (integers, floats or a boolean array are not accepted: use
        :func:`circuits.functions.as_truth_table` for 0/1 data).
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray
        uint8 0/1 truth table, same order.

    Raises
    ------
    InvalidCircuitError
        If an entry is not ±1.
    DimensionError
        If the length is not a power of two.

    Examples
    --------
    >>> from_pm1([1.0, -1.0]).tolist()
    [0, 1]
    """
    v = np.asarray(values)
    if v.dtype == np.bool_ or not (np.issubdtype(v.dtype, np.integer) or np.issubdtype(v.dtype, np.floating)):
        raise InvalidCircuitError(
            f"{name} must hold the numbers +1 and -1, got dtype {v.dtype}; "
            f"for a 0/1 table use circuits.functions.as_truth_table"
        )
    if v.ndim != 1:
        raise DimensionError(f"{name} must be 1-dimensional (length 2^N), got shape {v.shape}")
    ok = (v == 1) | (v == -1)
    if not ok.all():
        bad = int(np.argmin(ok))
        raise InvalidCircuitError(
            f"{name} must contain only +1 and -1 (F = (-1)^f), found "
            f"{v[bad]!r} at index {bad}; a 0/1 table needs no conversion"
        )
    return as_truth_table((v < 0).astype(np.uint8), name=name)


def reverse_bit_order(table) -> np.ndarray:
    """Map a truth table between LSB-first (depthsep) and MSB-first index order.

    Entry k of the result is entry ``bitreverse_N(k)`` of the input, so variable i becomes
    variable N - 1 - i.  The map is its own inverse.

    Parameters
    ----------
    table : array_like of 0/1, length 2^N

    Returns
    -------
    numpy.ndarray
        uint8 truth table of the same length.

    Examples
    --------
    >>> t = [0, 0, 1, 1]                  # f(z0, z1) = z1 in LSB-first order
    >>> reverse_bit_order(t).tolist()     # MSB-first: f = first (most significant) variable
    [0, 1, 0, 1]
    >>> reverse_bit_order(reverse_bit_order(t)).tolist() == t
    True
    """
    t = as_truth_table(table)
    N = _n_bits(t.size)
    k = np.arange(t.size, dtype=np.int64)
    rev = np.zeros_like(k)
    for i in range(N):
        rev |= ((k >> i) & 1) << (N - 1 - i)
    return np.ascontiguousarray(t[rev])


def to_boofun(table, *, signs: bool = False) -> np.ndarray:
    """A truth table in boofun's convention (for ``boofun.create``).

    boofun indexes truth tables LSB = x₀, like depthsep, so the order is unchanged; with
    ``signs=True`` the values are O'Donnell's ±1 (0 -> +1, 1 -> -1).

    Parameters
    ----------
    table : array_like of 0/1, length 2^N
        depthsep truth table (cube order).
    signs : bool
        Return ±1 (int8) instead of booleans.

    Returns
    -------
    numpy.ndarray
        bool array (``signs=False``) or int8 ±1 array, length 2^N.

    Examples
    --------
    >>> to_boofun([0, 1, 1, 0]).tolist()
    [False, True, True, False]
    >>> to_boofun([0, 1, 1, 0], signs=True).tolist()
    [1, -1, -1, 1]
    """
    t = as_truth_table(table)
    return to_pm1(t) if signs else t.astype(bool)


def from_boofun(values, *, signs: bool = False) -> np.ndarray:
    """A depthsep truth table from a boofun truth table (LSB = x₀ order, unchanged).

    Parameters
    ----------
    values : array_like, length 2^N
        Booleans or 0/1 (``signs=False``), or O'Donnell ±1 values (``signs=True``: +1 is
        False, -1 is True), as boofun's ``get_representation("truth_table")`` or its Fourier
        evaluation gives them.
    signs : bool
        Whether ``values`` are ±1.

    Returns
    -------
    numpy.ndarray
        uint8 0/1 truth table in cube order.

    Examples
    --------
    >>> from_boofun([False, True, True, True]).tolist()          # OR
    [0, 1, 1, 1]
    >>> from_boofun([1, -1, -1, -1], signs=True).tolist()
    [0, 1, 1, 1]
    """
    if signs:
        return from_pm1(values)
    return as_truth_table(values, name="values")


def to_sage(table) -> tuple:
    """The list SageMath's ``BooleanFunction(...)`` takes (its order is depthsep's).

    Parameters
    ----------
    table : array_like of 0/1, length 2^N

    Returns
    -------
    tuple of int
        Equal to ``BooleanFunction(result).truth_table(format='int')`` in Sage.

    Examples
    --------
    >>> to_sage([0, 0, 0, 1])
    (0, 0, 0, 1)
    """
    return tuple(int(v) for v in as_truth_table(table))


def from_sage(values) -> np.ndarray:
    """A depthsep truth table from Sage's ``B.truth_table()`` (booleans) or ``format='int'``.

    Parameters
    ----------
    values : sequence of bool or 0/1, length 2^N

    Returns
    -------
    numpy.ndarray
        uint8 truth table in cube order (Sage's order is the same).

    Examples
    --------
    >>> from_sage((True, True, False, False, False, False, True, False)).tolist()
    [1, 1, 0, 0, 0, 0, 1, 0]
    """
    return as_truth_table(np.asarray(list(values)), name="values")


def to_sage_hex(table) -> str:
    """Sage's hexadecimal form of a truth table (``B.truth_table(format='hex')``).

    The string is the integer sum_k f(k)·2^k in lower-case hexadecimal, most significant digit
    first, zero-padded to 2^N / 4 digits (Sage needs N >= 2 for this format).

    Parameters
    ----------
    table : array_like of 0/1, length 2^N with N >= 2

    Returns
    -------
    str

    Examples
    --------
    >>> to_sage_hex([0, 1, 1, 0])
    '6'
    """
    t = as_truth_table(table)
    if t.size < 4:
        raise DimensionError(
            f"Sage's hexadecimal truth tables need N >= 2 variables (length >= "
            f"4), got length {t.size}; use to_sage for the list form"
        )
    value = int.from_bytes(np.packbits(t, bitorder="little").tobytes(), "little")
    return format(value, "x").rjust(t.size // 4, "0")


def from_sage_hex(text: str) -> np.ndarray:
    """A truth table from Sage's hexadecimal string (``BooleanFunction("12fe342a")``).

    Parameters
    ----------
    text : str
        Hexadecimal digits; the number of digits L must be a power of two and gives
        N = log2(4L) variables.

    Returns
    -------
    numpy.ndarray
        uint8 truth table of length 4L, entry k = bit k of the integer.

    Examples
    --------
    >>> from_sage_hex("6").tolist()
    [0, 1, 1, 0]
    >>> to_sage_hex(from_sage_hex("12fe342a"))
    '12fe342a'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str of hexadecimal digits, got {type(text).__name__}")
    s = text.strip().lower()
    L = len(s)
    if L == 0 or L & (L - 1):
        raise DimensionError(
            f"a Sage hexadecimal truth table has a power-of-two number of "
            f"digits (2^N / 4), got {L} in {text!r}"
        )
    try:
        value = int(s, 16)
    except ValueError:
        raise InvalidCircuitError(f"text must contain only hexadecimal digits 0-9a-f, got {text!r}") from None
    size = 4 * L
    bits = np.unpackbits(
        np.frombuffer(value.to_bytes(size // 8 or 1, "little"), dtype=np.uint8), bitorder="little"
    )[:size]
    return np.ascontiguousarray(bits, dtype=np.uint8)
