"""Lower-bound calculators for circuits computing IP_n or PARITY_N (THEORY.md §1.2–§1.3).

Every calculator returns a :class:`Bound`: the value, the formula it evaluates (a string), the
literature reference, the inputs, and whether it bounds a quantity from below (circuit sizes)
or from above (rectangle sums, advantages).  Values that are integers by nature (numbers of
gates) are exact ceilings computed with integer arithmetic, also when the formula contains
square roots: ``ceil(A / (B + C sqrt(D)))`` is found as the least integer s with
``s B + s C sqrt(D) >= A``, decided by squaring integers.  Upper bounds that are square roots
keep their exact square in ``Bound.squared`` so that :meth:`Bound.satisfied_by` decides exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Integral, Rational, Real

import numpy as np

from circuits.utils.errors import DimensionError, InvalidCircuitError
from circuits.hypercube import check_n_bits
from circuits.utils.validation import check_int

__all__ = ["Bound", "maj_maj_bound", "maj_thr_bound", "thr_maj_bound", "thr_thr_bound",
           "parity_depth_bound", "forster_sign_rank_bound", "lindsey_bound",
           "gate_lemma_constant", "gate_lemma_bound", "advantage_bound", "DiscriminatorCheck",
           "discriminator_check"]

_HMPST = ("Hajnal, Maass, Pudlák, Szegedy, Turán, Threshold circuits of bounded depth, JCSS 46 "
          "(1993) 129-154 (discriminator lemma, Lemma 3.3); Lindsey's lemma; THEORY.md §1.2-1.3")
_GHR = ("Goldmann, Håstad, Razborov 1992 (MAJ∘THR = MAJ∘MAJ); Nisan 1993; discriminator lemma "
        "(HMPST 1993) with the gate lemma c = n + 1; THEORY.md §1.2-1.3")
_FORSTER = ("Forster, A linear lower bound on the unbounded error probabilistic communication "
            "complexity, JCSS 65 (2002), doi:10.1016/S0022-0000(02)00019-3; Forster, Krause, "
            "Lokam, Mubarakzjanov, Schmitt, Simon (FKLMSS) 2001; THEORY.md §1.3")
_IPS = ("Impagliazzo, Paturi, Saks, Size-depth trade-offs for threshold circuits, SIAM J. Comput. "
        "26(3) (1997); THEORY.md §1.3")
_LINDSEY = "Lindsey's lemma (standard; e.g. Jukna, Extremal Combinatorics); THEORY.md §1.2"
_GATE = "gate lemma, THEORY.md §1.2 (explicit form of the standard argument; our specification)"


@dataclass(frozen=True)
class Bound:
    """A bound with its formula.

    Attributes
    ----------
    value : int, float, Fraction or None
        ``None`` when no bound is known.
    formula : str
        The formula evaluated, with its name.
    reference : str
    inputs : dict
        The arguments the value was computed from.
    kind : {"lower", "upper"}
        ``"lower"``: the quantity (e.g. a number of gates) is >= value; ``"upper"``: <= value.
    squared : Fraction or None
        Exact value^2 when ``value`` is a square root of a rational (used by ``satisfied_by``).

    Examples
    --------
    >>> b = lindsey_bound(2, 3, 4)                  # sqrt(|X| |Y| 2^n) = sqrt(48)
    >>> round(b.value, 6), b.squared, b.satisfied_by(6), b.satisfied_by(7)
    (6.928203, Fraction(48, 1), True, False)
    """

    value: object
    formula: str
    reference: str
    inputs: dict = field(default_factory=dict)
    kind: str = "lower"
    squared: "Fraction | None" = None

    def satisfied_by(self, quantity) -> bool:
        """Whether ``quantity`` is consistent with the bound (exact when the data allow it).

        Lower bounds: ``quantity >= value``.  Upper bounds: ``|quantity| <= value``, decided
        as ``quantity^2 <= squared`` for rational quantities when ``squared`` is known.
        A bound with ``value is None`` is satisfied by everything.

        Parameters
        ----------
        quantity : int, float or Fraction
            The measured or claimed value to compare with the bound (a circuit size, a rank,
            ...).
        """
        if self.value is None:
            return True
        if self.kind == "lower":
            return quantity >= self.value
        if self.squared is not None and isinstance(quantity, (Rational, Integral)):
            return Fraction(quantity) ** 2 <= self.squared
        return abs(quantity) <= self.value


def _pos_int(v, name: str, minimum: int = 1) -> int:
    return check_int(v, name=name, minimum=minimum)


def _least_s(A: int, B: int, C: int, D: int) -> int:
    """Least integer s >= 0 with s*B + s*C*sqrt(D) >= A (B, C, D >= 0 integers, not all zero)."""
    if A <= 0:
        return 0

    def ok(s: int) -> bool:
        rest = A - s * B
        return rest <= 0 or (s * C) ** 2 * D >= rest * rest

    denom = B + C * math.sqrt(D)
    s = max(0, int(A / denom) - 2) if denom > 0 else 0
    while s > 0 and ok(s):           # float guess may be high
        s -= 1
    while not ok(s):
        s += 1
    return s


def _discriminator_size_bound(n: int, w_top: int, c_int: int, c_sq: int) -> int:
    """ceil((4^n - 1) / (W_top (2^{n+1} + 2 c 2^{3n/2}))) with c = c_int or sqrt(c_sq)."""
    A = (1 << (2 * n)) - 1
    B = w_top << (n + 1)
    # 2 c 2^{3n/2} = 2 sqrt(c^2 2^{3n})
    D = (c_int * c_int if c_sq is None else c_sq) << (3 * n)
    return _least_s(A, B, 2 * w_top, D)


def maj_maj_bound(n: int, w_top: int, w_bot: int) -> Bound:
    """Least number of hidden gates of a MAJ∘MAJ circuit computing IP_n (HMPST + Lindsey).

    s >= ceil((4^n - 1) / (W_top (2^{n+1} + 2 sqrt(2 n W_bot + 1) 2^{3n/2}))), where W_top and
    W_bot bound the absolute integer weights of the top and the bottom gates.

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    w_top : int
        Largest absolute top weight W_top.
    w_bot : int
        Largest absolute bottom weight W_bot.

    Examples
    --------
    >>> maj_maj_bound(16, 1, 17).value          # ip_depth2(16) would have 16 * 2^15 gates
    6
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=10_000)
    w_top = _pos_int(w_top, "w_top")
    w_bot = _pos_int(w_bot, "w_bot")
    K = 2 * n * w_bot + 1
    return Bound(_discriminator_size_bound(n, w_top, 0, K),
                 "HMPST discriminator + Lindsey: s >= ceil((4^n-1)/(W_top(2^{n+1} + "
                 "2 sqrt(2nW_bot+1) 2^{3n/2})))",
                 _HMPST, {"n": n, "w_top": w_top, "w_bot": w_bot})


def maj_thr_bound(n: int, w_top: int) -> Bound:
    """Least number of hidden gates of a MAJ∘THR circuit (real bottom weights) computing IP_n.

    s >= ceil((4^n - 1) / (W_top (2^{n+1} + 2 (n + 1) 2^{3n/2}))).

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    w_top : int
        Largest absolute top weight W_top (bottom weights are arbitrary reals).

    Examples
    --------
    >>> maj_thr_bound(20, 1).value
    25
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=10_000)
    w_top = _pos_int(w_top, "w_top")
    return Bound(_discriminator_size_bound(n, w_top, n + 1, None),
                 "GHR/Nisan discriminator + gate lemma: s >= ceil((4^n-1)/(W_top(2^{n+1} + "
                 "2(n+1) 2^{3n/2})))",
                 _GHR, {"n": n, "w_top": w_top})


def thr_maj_bound(n: int, w_bot: int) -> Bound:
    """Least number of hidden gates of a THR∘MAJ circuit computing IP_n (Forster / FKLMSS).

    1 + s (2 n W_bot + 1) >= sign-rank(H) >= 2^{n/2}, so s >= ceil((2^{n/2} - 1)/(2 n W_bot + 1));
    the top gate's weights are arbitrary.

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    w_bot : int
        Largest absolute bottom weight W_bot (top weights are arbitrary).

    Examples
    --------
    >>> thr_maj_bound(20, 1).value
    25
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=10_000)
    w_bot = _pos_int(w_bot, "w_bot")
    K = 2 * n * w_bot + 1
    # least s with s K + 1 >= 2^{n/2}  <=>  (s K + 1)^2 >= 2^n
    s = max(0, int((2.0 ** (n / 2) - 1) / K) - 2) if n < 2000 else 0
    while s > 0 and (s * K + 1) ** 2 >= 1 << n:
        s -= 1
    while (s * K + 1) ** 2 < 1 << n:
        s += 1
    return Bound(s, "Forster/FKLMSS sign rank: s >= ceil((2^{n/2} - 1)/(2nW_bot + 1))",
                 _FORSTER, {"n": n, "w_bot": w_bot})


def thr_thr_bound(n: int) -> Bound:
    """THR∘THR (arbitrary weights at both levels): no superpolynomial lower bound is known.

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).

    Examples
    --------
    >>> thr_thr_bound(8).value is None
    True
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=10_000)
    return Bound(None, "none known (THR∘THR lower bounds for IP are open; best upper bound "
                       "O(1.682^n), Amano 2020)",
                 "Amano, LATA 2020; THEORY.md §6", {"n": n})


def parity_depth_bound(n_inputs: int, depth: int) -> Bound:
    """Least number of gates of a depth-D threshold circuit (real weights) computing PARITY_N.

    gates >= (N/2)^{1/(2(D-1))} (Impagliazzo–Paturi–Saks); the value is the least integer g
    with 2 g^{2(D-1)} >= N.

    Parameters
    ----------
    n_inputs : int
        Number of inputs N.
    depth : int
        Circuit depth D >= 2 (gate layers, output included).

    Examples
    --------
    >>> parity_depth_bound(8, 2).value            # sqrt(4) = 2
    2
    >>> parity_depth_bound(9, 2).value            # sqrt(4.5) -> 3
    3
    """
    N = _pos_int(n_inputs, "n_inputs")
    D = _pos_int(depth, "depth")
    if D < 2:
        raise DimensionError(f"depth must be >= 2 (one gate cannot compute PARITY_N for N >= 2), got {D}")
    e = 2 * (D - 1)
    g = max(0, int((N / 2) ** (1 / e)) - 1)
    while g > 0 and 2 * g ** e >= N:
        g -= 1
    while 2 * g ** e < N:
        g += 1
    return Bound(g, f"IPS: gates >= (N/2)^(1/(2(D-1))) = ({N}/2)^(1/{e})", _IPS,
                 {"n_inputs": N, "depth": D})


def forster_sign_rank_bound(matrix, *, rtol: float = 1e-9) -> Bound:
    """Forster's lower bound sign-rank(M) >= sqrt(p q) / ||M||_2 for a +-1 matrix M (p x q).

    ``value`` is the real bound (float; ||M||_2 from an SVD); ``inputs["ceil"]`` is the least
    integer consistent with it, ceil(value (1 - rtol)), the relative slack absorbing the SVD's
    rounding (so that the Hadamard matrix gives exactly 2^{n/2} for even n).

    Parameters
    ----------
    matrix : array_like
        A ±1 matrix of shape (p, q).
    rtol : float
        Relative tolerance of the singular-value computation (pitfall 8 of THEORY §7).

    Examples
    --------
    >>> from circuits.analysis.communication import sign_matrix
    >>> b = forster_sign_rank_bound(sign_matrix("ip", 4))
    >>> round(b.value, 9), b.inputs["ceil"]
    (4.0, 4)
    """
    from circuits.analysis.communication import _as_matrix2d, matrix_spectral_norm
    M = _as_matrix2d(matrix, "matrix")
    if not np.isin(M, (-1, 1)).all():
        raise InvalidCircuitError("matrix must have entries +-1 only (a sign matrix); use "
                                  "circuits.analysis.communication.sign_matrix(f) or np.sign(...)")
    p, q = M.shape
    norm = matrix_spectral_norm(M)
    value = math.sqrt(p * q) / norm
    return Bound(value, "Forster: sign-rank(M) >= sqrt(pq)/||M||_2", _FORSTER,
                 {"p": p, "q": q, "norm": norm, "ceil": math.ceil(value * (1 - rtol))})


def lindsey_bound(n: int, size_x: int, size_y: int) -> Bound:
    """Lindsey's lemma: |sum_{X x Y} H| <= sqrt(|X| |Y| 2^n) for the 2^n x 2^n Hadamard matrix.

    An upper bound; ``squared = |X| |Y| 2^n`` exactly.

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    size_x : int
        |X|, the number of rows of the rectangle.
    size_y : int
        |Y|, the number of columns.

    Examples
    --------
    >>> lindsey_bound(4, 16, 1).value               # a full column: 16 = sqrt(16 * 1 * 16)
    16.0
    """
    n = check_n_bits(n, name="n", minimum=0, maximum=10_000)
    sx = _pos_int(size_x, "size_x", minimum=0)
    sy = _pos_int(size_y, "size_y", minimum=0)
    if sx > 1 << n or sy > 1 << n:
        raise DimensionError(f"|X| = {sx} and |Y| = {sy} must be at most 2^n = {1 << n}")
    sq = Fraction(sx * sy << n)
    return Bound(math.sqrt(sx * sy) * 2.0 ** (n / 2), "Lindsey: |sum_{XxY} H| <= sqrt(|X||Y|2^n)",
                 _LINDSEY, {"n": n, "size_x": sx, "size_y": sy}, kind="upper", squared=sq)


def gate_lemma_constant(n: int, K: int) -> Bound:
    """c_g = min(n + 1, sqrt(K)), K = min(#values of alpha, #values of beta) (§1.2).

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    K : int
        min(#values of alpha, #values of beta) for the gate [alpha(x) + beta(y) >= t].

    Examples
    --------
    >>> gate_lemma_constant(4, 9).value, gate_lemma_constant(2, 100).value
    (3.0, 3.0)
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=10_000)
    K = _pos_int(K, "K")
    sq = Fraction(min((n + 1) ** 2, K))
    return Bound(min(float(n + 1), math.sqrt(K)), "c_g = min(n+1, sqrt(K))", _GATE,
                 {"n": n, "K": K}, kind="upper", squared=sq)


def gate_lemma_bound(n: int, K: int) -> Bound:
    """|sum_{x,y} H g| <= c_g 2^{3n/2} for a gate g = [alpha(x) + beta(y) >= t] (§1.2).

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    K : int
        min(#values of alpha, #values of beta) for the gate [alpha(x) + beta(y) >= t].

    Examples
    --------
    >>> b = gate_lemma_bound(2, 3); b.squared
    Fraction(192, 1)
    """
    c = gate_lemma_constant(n, K)
    n = c.inputs["n"]
    return Bound(c.value * 2.0 ** (1.5 * n), "gate lemma: |sum H g| <= min(n+1, sqrt(K)) 2^{3n/2}",
                 _GATE, dict(c.inputs), kind="upper", squared=c.squared * (1 << (3 * n)))


def advantage_bound(n: int, c=None, *, c_squared=None) -> Bound:
    """adv(n, c) = (2^{n+1} + 2 c 2^{3n/2}) / (4^n - 1) bounds |P_1(g) - P_0(g)| (§1.2).

    Give ``c`` (a number) or ``c_squared`` (exact, e.g. K for c = sqrt(K)).  The check
    ``satisfied_by(adv)`` is exact for rational ``adv`` and rational ``c^2``.

    Parameters
    ----------
    n : int
        Bits per party (IP_n has N = 2n inputs).
    c : float, optional
        The gate-lemma constant c_g of §1.2.
    c_squared : int or Fraction, optional
        c² given exactly instead (e.g. K for c = sqrt(K)); give exactly one of c and c_squared.

    Examples
    --------
    >>> round(advantage_bound(2, 3).value, 6)      # (8 + 6 * 8) / 15
    3.733333
    """
    n = check_n_bits(n, name="n", minimum=1, maximum=10_000)
    if (c is None) == (c_squared is None):
        raise TypeError("give exactly one of c and c_squared")
    if c_squared is not None:
        if not isinstance(c_squared, (Integral, Rational)) or c_squared < 0:
            raise ValueError(f"c_squared must be a non-negative int or Fraction, got {c_squared!r}")
        c_sq = Fraction(c_squared)
        c_val = math.sqrt(c_sq)
    else:
        if isinstance(c, bool) or not isinstance(c, Real) or c < 0:
            raise ValueError(f"c must be a non-negative real number, got {c!r}")
        c_val = float(c)
        c_sq = Fraction(c) ** 2 if isinstance(c, (Integral, Rational)) else None
    value = (2.0 ** (n + 1) + 2 * c_val * 2.0 ** (1.5 * n)) / ((1 << (2 * n)) - 1)
    return _AdvantageBound(value, "adv(n,c) = (2^{n+1} + 2c 2^{3n/2})/(4^n - 1)", _GATE,
                           {"n": n, "c": c_val, "c_squared": c_sq}, kind="upper", squared=None)


@dataclass(frozen=True)
class _AdvantageBound(Bound):
    def satisfied_by(self, quantity) -> bool:
        n, c_sq = self.inputs["n"], self.inputs["c_squared"]
        if c_sq is None or not isinstance(quantity, (Integral, Rational)):
            return abs(quantity) <= self.value
        # |a| (4^n - 1) - 2^{n+1} <= 2 c 2^{3n/2}  <=>  lhs <= 0 or lhs^2 <= 4 c^2 2^{3n}
        lhs = abs(Fraction(quantity)) * ((1 << (2 * n)) - 1) - (1 << (n + 1))
        return lhs <= 0 or lhs * lhs <= 4 * c_sq * (1 << (3 * n))


@dataclass(frozen=True, eq=False)
class DiscriminatorCheck:
    """The discriminator lemma evaluated on a depth-2 circuit for IP_n (§1.2).

    Attributes
    ----------
    n : int
    computes_ip : bool
        Whether the circuit equals IP_n on all 4^n inputs.
    advantages : tuple of Fraction
        P_1(g_i) - P_0(g_i) for each hidden gate (exact).
    weighted_sum : Fraction
        sum_i |v_i| |P_1(g_i) - P_0(g_i)| (>= 1 whenever ``computes_ip``).
    gate_bounds_hold : bool
        Every |advantage_i| <= adv(n, c_i), c_i = min(n + 1, sqrt(K_i)) (exact check).
    """

    n: int
    computes_ip: bool
    advantages: tuple
    weighted_sum: Fraction
    gate_bounds_hold: bool

    @property
    def holds(self) -> bool:
        """The lemma's conclusion where it applies: not computes_ip, or weighted_sum >= 1."""
        return (not self.computes_ip) or self.weighted_sum >= 1


def discriminator_check(circuit) -> DiscriminatorCheck:
    """Evaluate the discriminator lemma on a depth-2 threshold circuit with 2n inputs.

    For each hidden gate g_i the exact advantage P_1(g_i) - P_0(g_i) is computed by
    :func:`circuits.analysis.spectral.gate_ip_correlation`; the weighted sum with the top weights v_i
    must be >= 1 if the circuit computes IP_n (HMPST Lemma 3.3).

    Parameters
    ----------
    circuit : ThresholdCircuit
        A depth-2 circuit on 2n inputs.

    Examples
    --------
    >>> from circuits.constructions import ip_depth2
    >>> r = discriminator_check(ip_depth2(3))
    >>> r.computes_ip, r.holds, r.gate_bounds_hold
    (True, True, True)
    """
    from circuits.simulate import count_disagreements
    from circuits.analysis.correlation import gate_ip_correlation
    from circuits.threshold import ThresholdCircuit
    if not isinstance(circuit, ThresholdCircuit):
        raise TypeError(f"circuit must be a ThresholdCircuit, got {type(circuit).__name__}")
    if circuit.depth != 2:
        raise DimensionError(f"the discriminator lemma is about depth-2 circuits, got depth {circuit.depth}")
    if circuit.n_inputs % 2:
        raise DimensionError(f"IP_n needs 2n inputs, the circuit has {circuit.n_inputs}")
    n = circuit.n_inputs // 2
    hidden, top = circuit.layers
    computes = count_disagreements(circuit, "ip").count == 0
    advs, total, ok = [], Fraction(0), True
    for row, t, v in zip(hidden.weights, hidden.thresholds.tolist(), top.weights[0].tolist()):
        r = gate_ip_correlation(row, int(t))
        a = r.advantage
        advs.append(a)
        total += abs(v) * abs(a)
        ok &= advantage_bound(n, c_squared=min((n + 1) ** 2, r.k_values)).satisfied_by(a)
    return DiscriminatorCheck(n, computes, tuple(advs), total, bool(ok))
