"""Targets on the support of μ₀ for the depth-2 vs depth-3 experiment (THEORY §5 row E23).

A target is a Boolean function of the pair (a, b) ∈ {0,1}^n × {0,1}^n (a = Alice's message,
b = Bob's; bit i of a is ``(a >> i) & 1``).  Every target is computed from (a, b) by vectorised
integer arithmetic, never stored: :func:`target_table` broadcasts it to the full table
Y[a, b] (rows = Alice, the layout of :func:`networks.train_product.train_product`'s ``targets``),
and :func:`target_values` evaluates it on arrays of sampled pairs, so the same registry serves the
exhaustive table (n ≤ 12) and the sampled mode (n up to 24 and beyond).

Built-in targets (``TARGETS``):

* ``ip`` — IP(a, b) = popcount(a ∧ b) mod 2, the hard function (THEORY §1.1).
* ``majand`` — [popcount(a ∧ b) ≥ t_n]: the **same AND layer** with a threshold instead of a
  parity on top (MAJ∘AND).  t_n is the balanced threshold: the t that brings P(label = 1) under
  uniform (a, b) closest to 1/2 (popcount(a ∧ b) ~ Binomial(n, 1/4)); ties go to the smaller t.
  Depth 2 computes it with n + 1 ReLUs, so it is the control that *can* separate.
* ``maj`` — majority of the 2n message bits, [popcount(a) + popcount(b) ≥ n] (tie → 1, §1.1).
* ``ip_j`` (``ip_1``, ``ip_2``, ...) — parity of the first j ANDs: a difficulty dial; IP_j
  correlates with IP_n exactly 2^{j−n}.
* ``thr`` — a random threshold function of the 2m code bits (C(a), C(b)) of the instance's code:
  integer weights in [−8, 8] drawn from ``seed``, threshold the median of the weighted sums over
  4096 random pairs (integer arithmetic decides every bit).
* ``random`` — i.i.d. fair random labels from a 64-bit hash of (a, b, seed): the control that is
  hard for **every** depth (it cannot separate depth 2 from depth 3).

``register_target(name, fn, ...)`` adds a user target: ``fn(a, b, n, context)`` gets int64 arrays
of equal shape and returns 0/1 values of that shape (``context`` holds the code generator and the
seed).

Examples
--------
>>> target_table("ip", 1).tolist()              # Y[a, b], rows = Alice
[[0.0, 0.0], [0.0, 1.0]]
>>> balanced_threshold(4), float(target_table("majand", 4).mean())
(1, 0.68359375)
>>> import numpy as np
>>> a, b = np.array([3, 5]), np.array([1, 7])
>>> target_values("ip", a, b, n=3).tolist(), target_values("ip_1", a, b, n=3).tolist()
([1, 0], [1, 1])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from circuits.utils.errors import InvalidArgumentError
from circuits.utils.validation import check_int
from embeddings.code import code_bits

__all__ = ["Target", "TARGETS", "register_target", "get_target", "target_names", "target_table",
           "target_values", "balanced_threshold", "TargetContext"]

#: Largest n for which :func:`target_table` builds a full (2^n, 2^n) table.
MAX_TABLE_N = 13


@dataclass(frozen=True)
class TargetContext:
    """What a target function may use besides (a, b): n, the seed, and the code generator
    (n × m bits, systematic) of the instance, or None when the target needs no code."""

    n: int
    seed: int = 0
    generator: "np.ndarray | None" = None


@dataclass(frozen=True)
class Target:
    """A registered target.

    ``role`` is "hard" (IP and its relatives), "easy" (the same-shape controls depth 2 computes
    with polynomial width), or "control-all-depths" (random labels: hard for every depth).
    ``needs_code``: the function reads the code bits (``context.generator``).
    """

    name: str
    function: Callable
    description: str
    role: str = "easy"
    needs_code: bool = False


TARGETS: dict = {}


def _popcount(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v).astype(np.uint64)
    if hasattr(np, "bitwise_count"):                  # numpy >= 2.0
        return np.bitwise_count(v).astype(np.int64)
    out = np.zeros(v.shape, dtype=np.int64)
    for i in range(64):
        out += ((v >> np.uint64(i)) & np.uint64(1)).astype(np.int64)
    return out


def balanced_threshold(n: int) -> int:
    """The t in 1..n that brings P(popcount(a ∧ b) ≥ t) closest to 1/2 for uniform a, b
    (popcount(a ∧ b) ~ Binomial(n, 1/4)); the smaller t on a tie.

    >>> [balanced_threshold(n) for n in (1, 2, 4, 8, 12)]
    [1, 1, 1, 2, 3]
    """
    n = check_int(n, name="n", minimum=1, what="bits per party")
    pmf = [math.comb(n, k) * 3 ** (n - k) for k in range(n + 1)]        # × 4^-n
    total = 4 ** n
    best, best_gap = 1, None
    for t in range(1, n + 1):
        gap = abs(2 * sum(pmf[t:]) - total)                              # exact integers
        if best_gap is None or gap < best_gap:
            best, best_gap = t, gap
    return best


def _ip(a, b, n, ctx):
    return _popcount(a & b) & 1


def _majand(a, b, n, ctx):
    return (_popcount(a & b) >= balanced_threshold(n)).astype(np.int64)


def _maj(a, b, n, ctx):
    return (_popcount(a) + _popcount(b) >= n).astype(np.int64)


def _ip_j(j):
    mask = (1 << j) - 1

    def fn(a, b, n, ctx):
        if j > n:
            raise InvalidArgumentError(f"target ip_{j} needs j <= n, got n = {n}; use ip_1 .. "
                                       f"ip_{n}")
        return _popcount(a & b & mask) & 1
    return fn


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 (wrapping arithmetic is intended)."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _random(a, b, n, ctx):
    key = (a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(n)))
    with np.errstate(over="ignore"):
        key = key + np.uint64(0x9E3779B97F4A7C15) * np.uint64((ctx.seed % (1 << 63)) + 1)
    return (_mix64(key) >> np.uint64(63)).astype(np.int64)


def _thr_parameters(ctx):
    m = ctx.generator.shape[1]
    rng = np.random.default_rng([ctx.seed, 7723])
    w = rng.integers(-8, 9, size=2 * m).astype(np.int64)
    a = rng.integers(0, 1 << ctx.n, size=4096)
    b = rng.integers(0, 1 << ctx.n, size=4096)
    s = _weighted(a, b, w, ctx.generator)
    return w, int(np.median(s))


def _weighted(a, b, w, generator):
    m = generator.shape[1]
    ca = code_bits(generator, a).astype(np.int64)
    cb = code_bits(generator, b).astype(np.int64)
    return ca @ w[:m] + cb @ w[m:]                    # |sum| <= 16m: exact in int64


def _thr(a, b, n, ctx):
    if ctx.generator is None:
        raise InvalidArgumentError("target 'thr' reads the code bits: pass generator= (the "
                                   "instance's code, HardInstance(n).embedding.generator)")
    w, t = _thr_parameters(ctx)
    return (_weighted(a, b, w, ctx.generator) >= t).astype(np.int64)


def register_target(name: str, function: Callable, *, description: str, role: str = "easy",
                    needs_code: bool = False, replace: bool = False) -> Target:
    """Add a target to :data:`TARGETS`.

    ``function(a, b, n, context)`` takes int64 arrays a, b of one shape (messages in
    [0, 2^n)) and a :class:`TargetContext`, and returns 0/1 values of that shape.  ``role`` is
    "hard", "easy" or "control-all-depths" (see :class:`Target`).
    """
    if not isinstance(name, str) or not name or name.startswith("ip_"):
        raise InvalidArgumentError(f"target name must be a non-empty string not starting with "
                                   f"'ip_' (reserved for the IP_j dial), got {name!r}")
    if name in TARGETS and not replace:
        raise InvalidArgumentError(f"target {name!r} is already registered; pass replace=True "
                                   f"to overwrite it")
    if role not in ("hard", "easy", "control-all-depths"):
        raise InvalidArgumentError(f"role must be 'hard', 'easy' or 'control-all-depths', got "
                                   f"{role!r}")
    if not callable(function):
        raise TypeError(f"function must be callable, got {type(function).__name__}")
    t = Target(name, function, description, role, needs_code)
    TARGETS[name] = t
    return t


register_target("ip", _ip, description="IP(a, b) = <a, b> mod 2", role="hard")
register_target("majand", _majand, role="easy",
                description="MAJ∘AND: [#{i: a_i b_i = 1} >= t_n], t_n balanced (same AND layer)")
register_target("maj", _maj, role="easy", description="majority of the 2n message bits")
register_target("thr", _thr, role="easy", needs_code=True,
                description="a random threshold function of the 2m code bits (weights in [-8, 8])")
register_target("random", _random, role="control-all-depths",
                description="i.i.d. fair random labels (hash of a, b, seed): hard for every depth")


def get_target(name: str) -> Target:
    """The registered target ``name``; ``ip_j`` for j = 1, 2, ... is built on demand."""
    if isinstance(name, str) and name.startswith("ip_"):
        try:
            j = int(name[3:])
        except ValueError:
            j = 0
        if j < 1:
            raise InvalidArgumentError(f"target {name!r}: the IP_j dial is ip_1, ip_2, ... "
                                       f"(parity of the first j ANDs)")
        return Target(name, _ip_j(j), f"parity of the first {j} ANDs (IP_{j})", "hard")
    try:
        return TARGETS[name]
    except (KeyError, TypeError):
        raise InvalidArgumentError(f"unknown target {name!r}; choose one of {target_names()} or "
                                   f"ip_j (j = 1, 2, ...), or register_target() your own") from None


def target_names() -> list:
    """Names of the registered targets (``ip_j`` is available besides them)."""
    return sorted(TARGETS)


def target_values(name: str, a, b, *, n: int, seed: int = 0, generator=None) -> np.ndarray:
    """0/1 int64 labels of target ``name`` on pairs (a, b) (int arrays of one shape, entries in
    [0, 2^n)); nothing of size 2^n is built."""
    n = check_int(n, name="n", minimum=1, maximum=62, what="bits per party")
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if a.shape != b.shape:
        a, b = np.broadcast_arrays(a, b)
    if a.size and (a.min() < 0 or b.min() < 0 or a.max() >> n or b.max() >> n):
        raise InvalidArgumentError(f"a and b must be messages in [0, 2^{n}) (n = {n})")
    t = get_target(name)
    if t.needs_code and generator is None:
        raise InvalidArgumentError(f"target {name!r} reads the code bits: pass generator= "
                                   f"(HardInstance(n).embedding.generator)")
    g = None if generator is None else np.asarray(generator, dtype=np.uint8)
    if g is not None and g.shape[0] != n:
        raise InvalidArgumentError(f"generator must have n = {n} rows, got shape {g.shape}")
    out = np.asarray(t.function(a, b, n, TargetContext(n, int(seed), g)), dtype=np.int64)
    if out.shape != a.shape:
        raise InvalidArgumentError(f"target {name!r} returned shape {out.shape} for pairs of "
                                   f"shape {a.shape}")
    if out.size and (out.min() < 0 or out.max() > 1):
        raise InvalidArgumentError(f"target {name!r} returned values outside {{0, 1}}")
    return out


def target_table(name: str, n: int, *, seed: int = 0, generator=None) -> np.ndarray:
    """The full table Y[a, b] (float64 0/1, shape (2^n, 2^n), rows = Alice) of target ``name``:
    the ``targets=`` of :func:`networks.train_product.train_product`.
    ``Y.T.reshape(-1)`` lists it in cube order (index a + 2^n·b)."""
    n = check_int(n, name="n", minimum=1, maximum=MAX_TABLE_N, what="bits per party (the table "
                  "has 4^n entries; use target_values on sampled pairs beyond)")
    idx = np.arange(1 << n, dtype=np.int64)
    return target_values(name, idx[:, None], idx[None, :], n=n, seed=seed,
                         generator=generator).astype(np.float64)
