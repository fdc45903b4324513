"""Boolean functions of the theory, with one interface so any circuit can be checked against them.

Every :class:`BooleanFunction` has ``n_inputs``, evaluates a batch of bit rows with
``f(bits)``, produces its truth table in cube order with :meth:`~BooleanFunction.truth_table`,
and exposes a kernel spec so the exhaustive counters compute it on the fly (no table needed,
so IP_16 on 2^32 points streams).
"""

from __future__ import annotations

import numpy as np

from circuits import _kernels
from circuits.utils.errors import DimensionError, InvalidArgumentError, InvalidCircuitError
from circuits.hypercube import check_exhaustive, check_n_bits, index_of, split_index, MAX_STREAM_BITS
from circuits.threshold import as_int64_array, preactivation_bound

__all__ = [
    "BooleanFunction", "InnerProductMod2", "Parity", "Majority", "And", "Or",
    "ThresholdFunction", "TruthTable", "Constant",
    "inner_product_mod2", "ip_values", "parity", "majority", "as_boolean_function",
    "as_truth_table",
]

_EMPTY_TABLE = np.zeros(1, dtype=np.uint8)


class BooleanFunction:
    """Base class: a function {0,1}^N -> {0,1} in the cube convention of ``circuits.hypercube``."""

    name = "function"
    n_inputs: int

    # (kind, params, table) understood by circuits._kernels._target_bit
    def _spec(self):
        raise NotImplementedError

    def truth_table(self, *, allow_large: bool = False) -> np.ndarray:
        """uint8 array of length 2^N with entry k = f(bits of k).

        Parameters
        ----------
        allow_large : bool
            Allow materialising more than 2^24 values (default False: refuse, with a message
            giving the memory estimate).

        """
        n = check_exhaustive(self.n_inputs, allow_large=allow_large, what=f"{self.name}.truth_table()")
        kind, params, table = self._spec()
        return _kernels._table_target(kind, params, table, 0, 1 << n)

    def __call__(self, bits) -> np.ndarray:
        b = np.asarray(bits)
        if b.ndim == 1:
            b = b[None, :]
        if b.ndim != 2 or b.shape[1] != self.n_inputs:
            raise DimensionError(f"bits must have shape (n_points, {self.n_inputs}), got {np.shape(bits)}")
        kind, params, table = self._spec()
        ks = index_of(b)
        return np.array([_kernels._target_bit(int(k), kind, params, table) for k in ks], dtype=np.uint8)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_inputs={self.n_inputs})"


class InnerProductMod2(BooleanFunction):
    """IP_n(x, y) = popcount(x & y) mod 2 on N = 2n bits (x = low n bits, y = high n bits).

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).

    Examples
    --------
    >>> InnerProductMod2(1).truth_table().tolist()   # k = (x0, y0) = 00, 10, 01, 11
    [0, 0, 0, 1]
    >>> int(InnerProductMod2(3).truth_table().sum()), InnerProductMod2(3).n_ones   # OEIS A006516
    (28, 28)
    """

    name = "ip"

    def __init__(self, n: int):
        self.n = check_n_bits(n, name="n", minimum=1, maximum=MAX_STREAM_BITS // 2)
        self.n_inputs = 2 * self.n

    def _spec(self):
        return _kernels.KIND_IP, np.array([self.n], dtype=np.int64), _EMPTY_TABLE

    def truth_table(self, *, allow_large: bool = False) -> np.ndarray:
        """uint8 array of length 2^N with entry k = IP_n(bits of k) (:func:`inner_product_mod2`:
        numpy, no kernel to compile).

        Parameters
        ----------
        allow_large : bool
            Allow materialising more than 2^24 values.

        """
        return inner_product_mod2(self.n, allow_large=allow_large)

    def __call__(self, bits) -> np.ndarray:
        b = np.asarray(bits)
        if b.ndim == 1:
            b = b[None, :]
        if b.ndim != 2 or b.shape[1] != self.n_inputs:
            raise DimensionError(f"bits must have shape (n_points, {self.n_inputs}), got {np.shape(bits)}")
        return ip_values(index_of(b), self.n)

    @property
    def n_ones(self) -> int:
        """#{(x, y): IP_n(x, y) = 1} = 2^(n-1) (2^n - 1) (OEIS A006516), exact."""
        return (1 << (self.n - 1)) * ((1 << self.n) - 1)

    def __repr__(self):
        return f"InnerProductMod2(n={self.n})"


class Parity(BooleanFunction):
    """PARITY_N = z_0 xor ... xor z_{N-1}.

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.

    Examples
    --------
    >>> Parity(2).truth_table().tolist()
    [0, 1, 1, 0]
    """

    name = "parity"

    def __init__(self, n_inputs: int):
        self.n_inputs = check_n_bits(n_inputs, name="n_inputs", minimum=1)

    def _spec(self):
        return _kernels.KIND_PARITY, np.zeros(1, dtype=np.int64), _EMPTY_TABLE


class _CountAtLeast(BooleanFunction):
    def __init__(self, n_inputs: int):
        self.n_inputs = check_n_bits(n_inputs, name="n_inputs", minimum=1)

    @property
    def threshold(self) -> int:
        raise NotImplementedError

    @property
    def weights(self) -> np.ndarray:
        return np.ones(self.n_inputs, dtype=np.int64)

    def _spec(self):
        return _kernels.KIND_COUNT, np.array([self.threshold], dtype=np.int64), _EMPTY_TABLE


class Majority(_CountAtLeast):
    """MAJ_N = [sum z >= ceil(N/2)] (even N: a tie gives 1).

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.

    Examples
    --------
    >>> Majority(3).truth_table().tolist()
    [0, 0, 0, 1, 0, 1, 1, 1]
    """

    name = "majority"

    @property
    def threshold(self) -> int:
        """ceil(N/2) (a tie gives 1 for even N)."""
        return (self.n_inputs + 1) // 2


class And(_CountAtLeast):
    """AND_N = [sum z >= N].

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.

    """

    name = "and"

    @property
    def threshold(self) -> int:
        """N: every input must be 1."""
        return self.n_inputs


class Or(_CountAtLeast):
    """OR_N = [sum z >= 1].

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.

    """

    name = "or"

    @property
    def threshold(self) -> int:
        """1: some input must be 1."""
        return 1


class ThresholdFunction(BooleanFunction):
    """[w . z >= t] with integer w, t (the gate rule of ``circuits.threshold``).

    Parameters
    ----------
    weights : array_like of int
        Integer weights w (length N).
    threshold : int
        Integer threshold t.

    Examples
    --------
    >>> ThresholdFunction([2, -1], 1).truth_table().tolist()
    [0, 1, 0, 1]
    """

    name = "threshold"

    def __init__(self, weights, threshold):
        self.weights = as_int64_array(weights, name="weights", ndim=1)
        self.threshold = int(as_int64_array([threshold], name="threshold")[0])
        self.n_inputs = check_n_bits(self.weights.shape[0], name="len(weights)", minimum=1)
        preactivation_bound(self.weights, self.threshold,
                            what="threshold function: sum |w| + |t| =")

    def _spec(self):
        return (_kernels.KIND_LINEAR, np.concatenate([[self.threshold], self.weights]).astype(np.int64),
                _EMPTY_TABLE)


class TruthTable(BooleanFunction):
    """A user truth table (uint8 0/1, length 2^N, cube order).

    Parameters
    ----------
    table : array_like
        0/1 (or bool) values, length 2^N, cube order.

    Examples
    --------
    >>> TruthTable([0, 1, 1, 1]).n_inputs
    2
    """

    name = "table"

    def __init__(self, table):
        self.table = as_truth_table(table)
        self.n_inputs = int(self.table.shape[0]).bit_length() - 1

    def _spec(self):
        return _kernels.KIND_TABLE, np.zeros(1, dtype=np.int64), self.table

    def truth_table(self, *, allow_large: bool = False) -> np.ndarray:
        """The stored table (uint8, length 2^N, cube order).

        Parameters
        ----------
        allow_large : bool
            Accepted for interface compatibility; the table is already stored.

        """
        return self.table.copy()


class Constant(BooleanFunction):
    """The constant function with value ``value`` on N inputs.

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.
    value : {0, 1}
        The constant value.

    """

    name = "constant"

    def __init__(self, n_inputs: int, value: int = 0):
        self.n_inputs = check_n_bits(n_inputs, name="n_inputs")
        if value not in (0, 1):
            raise ValueError(f"value must be 0 or 1, got {value!r}")
        self.value = int(value)

    def _spec(self):
        return _kernels.KIND_CONST, np.array([self.value], dtype=np.int64), _EMPTY_TABLE


def as_truth_table(table, *, name: str = "table") -> np.ndarray:
    """Validate a truth table: 1-D, length a power of two, values in {0, 1}; returns C-contiguous uint8.

    >>> as_truth_table([True, False]).tolist()
    [1, 0]
    """
    t = np.asarray(table)
    if t.ndim != 1:
        raise DimensionError(f"{name} must be 1-dimensional (length 2^N in cube order), got shape {t.shape}")
    n = t.shape[0]
    if n == 0 or n & (n - 1):
        raise DimensionError(f"{name} must have a power-of-two length 2^N, got length {n}")
    if t.dtype == np.bool_:
        return np.ascontiguousarray(t, dtype=np.uint8)
    if not (np.issubdtype(t.dtype, np.integer) or np.issubdtype(t.dtype, np.floating)):
        raise InvalidCircuitError(f"{name} must be numeric 0/1 values, got dtype {t.dtype}")
    if not np.isin(t, (0, 1)).all():
        bad = t[~np.isin(t, (0, 1))][0]
        raise InvalidCircuitError(f"{name} must contain only 0 and 1 (a Boolean function), found {bad!r}; "
                                  f"for +-1 signs use (1 - s) // 2")
    return np.ascontiguousarray(t, dtype=np.uint8)


_NAMED = {"ip": None, "parity": Parity, "majority": Majority, "and": And, "or": Or}


def as_boolean_function(target, n_inputs: int) -> BooleanFunction:
    """Turn ``"ip"``, ``"parity"``, ``"majority"``, ``"and"``, ``"or"``, a BooleanFunction or a
    truth table into a BooleanFunction on ``n_inputs`` bits (checking that the sizes agree).

    Parameters
    ----------
    target : str, BooleanFunction, circuit or array_like
        A name ("ip", "parity", "majority", "and", "or"), a function object, a circuit, or a
        truth table.
    n_inputs : int
        The number of inputs the function must have.
    """
    if isinstance(target, str):
        key = target.lower()
        if key not in _NAMED:
            raise InvalidArgumentError(f"unknown target {target!r}; choose one of {sorted(_NAMED)}, "
                                       f"or pass a BooleanFunction or a truth table")
        if key == "ip":
            if n_inputs % 2:
                raise DimensionError(f"target 'ip' needs an even number of inputs (2n), the circuit has {n_inputs}")
            return InnerProductMod2(n_inputs // 2)
        return _NAMED[key](n_inputs)
    if isinstance(target, BooleanFunction):
        f = target
    elif hasattr(target, "truth_table") and hasattr(target, "n_inputs"):   # e.g. a circuit
        f = TruthTable(target.truth_table())
    else:
        f = TruthTable(target)
    if f.n_inputs != n_inputs:
        raise DimensionError(f"target has {f.n_inputs} inputs but the circuit has {n_inputs}")
    return f


def inner_product_mod2(n: int, *, allow_large: bool = False) -> np.ndarray:
    """Truth table of IP_n(x, y) = x . y mod 2 on 2n bits, in cube order.

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    allow_large : bool
        Allow materialising more than 2^24 values (default False: refuse, with a message giving
        the memory estimate).

    Examples
    --------
    >>> inner_product_mod2(1).tolist()     # k = 0..3 is (x0, y0) = 00, 10, 01, 11
    [0, 0, 0, 1]
    """
    N = check_exhaustive(2 * check_n_bits(n, name="n", minimum=1, maximum=MAX_STREAM_BITS // 2),
                         allow_large=allow_large,
                         what=f"inner_product_mod2({n})")
    # numpy (ip_values, in slices of 2^20 points): no kernel to compile on a first run; the
    # tests compare it with the kernel's streaming "ip" target on the whole cube
    out = np.empty(1 << N, dtype=np.uint8)
    step = 1 << 20
    for lo in range(0, 1 << N, step):
        hi = min(1 << N, lo + step)
        out[lo:hi] = ip_values(np.arange(lo, hi, dtype=np.int64), N // 2)
    return out


def ip_values(k, n: int) -> np.ndarray:
    """IP_n at cube points ``k`` of {0,1}^{2n}: ``popcount(x & y) mod 2`` with
    ``(x, y) = split_index(k, n)`` (x = Alice = low n bits), uint8 of the shape of ``k``.

    The one place IP is computed outside the numba kernels (whose streaming twin is the
    ``"ip"`` target of the exhaustive counters; the tests compare the two on the whole cube).
    Bit rows go through :func:`circuits.hypercube.index_of` first; party indices ``(x, y)``
    through :func:`circuits.hypercube.join_index`.

    Parameters
    ----------
    k : array_like of int
        Cube points of {0,1}^{2n} (any shape).
    n : int
        Bits per party.

    Examples
    --------
    >>> ip_values([0, 1, 2, 3], 1).tolist()            # = inner_product_mod2(1)
    [0, 0, 0, 1]
    >>> from circuits.hypercube import join_index
    >>> int(ip_values(join_index(0b101, 0b111, 3), 3)[()])    # <101, 111> = 2 = 0 mod 2
    0
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=MAX_STREAM_BITS // 2)
    k = np.asarray(k)
    if k.dtype == np.bool_ or not np.issubdtype(k.dtype, np.integer):
        raise TypeError(f"k must hold integer cube indices, got dtype {k.dtype}; use "
                        f"circuits.index_of(bits) to turn bit rows into indices")
    if k.size and (int(k.min()) < 0 or int(k.max()) >= 1 << (2 * n)):
        raise DimensionError(f"cube indices must lie in [0, 4^{n}), got min {int(k.min())} "
                             f"max {int(k.max())}")
    x, y = split_index(k, n)
    return (np.bitwise_count(x & y) & 1).astype(np.uint8)


def parity(n_inputs: int, *, allow_large: bool = False) -> np.ndarray:
    """Truth table of PARITY_N.

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.
    allow_large : bool
        Allow materialising more than 2^24 values (default False: refuse, with a message giving
        the memory estimate).

    """
    return Parity(n_inputs).truth_table(allow_large=allow_large)


def majority(n_inputs: int, *, allow_large: bool = False) -> np.ndarray:
    """Truth table of MAJ_N.

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.
    allow_large : bool
        Allow materialising more than 2^24 values (default False: refuse, with a message giving
        the memory estimate).

    """
    return Majority(n_inputs).truth_table(allow_large=allow_large)
