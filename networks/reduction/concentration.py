"""How many copies k the self-reduction needs: Hoeffding (THEORY §4.4) and Bernstein (§4.8).

Each copy T_{r,s} contributes H(a,b)·T_{r,s}(a,b) = U(a⊕r, b⊕s), U = H ⊙ Ñ, at a uniformly shifted
point: mean ρ, variance σ² = Var(U) = E[Ñ²] - ρ², values in [-M, M].  With a union bound over the
4^n pairs, k copies give margin min H·M_k >= ρ - t everywhere with probability >= 1 - δ when

* Hoeffding (two-sided, as §4.4 states it): k >= (2M²/t²)(2n ln 2 + ln(2/δ));
* Bernstein (one-sided lower tail): k >= (2σ² + 2ct/3)(2n ln 2 + ln(1/δ))/t², with
  c = M + ρ >= ρ - U (the range constant of the lower tail; §4.8 writes M, which is smaller).

``target`` is the margin aimed at as a fraction of ρ: t = (1 - target)·ρ, so target = 3/4 is the
§4.4 certificate (H·M_k >= 3ρ/4) and target = 0 asks only for margin > 0 (sign(M_k) = H).
"""

from __future__ import annotations

import math

from circuits.utils.errors import ReductionError
from circuits.utils.validation import check_real

__all__ = ["hoeffding_k", "bernstein_k"]


def _common(rho, n, delta, target):
    rho = check_real(rho, minimum=0, name="rho")
    delta = check_real(delta, minimum=0, name="delta")
    if delta >= 1:
        raise ReductionError(f"delta is a failure probability in (0, 1), got {delta}")
    target = float(target)
    if not 0 <= target < 1:
        raise ReductionError(f"target is the aimed margin as a fraction of ρ, in [0, 1), got "
                             f"{target}")
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ReductionError(f"n must be a positive integer (bits per party), got {n!r}")
    return rho, int(n), delta, (1.0 - target) * rho


def hoeffding_k(M: float, rho: float, n: int, *, delta: float = 0.5, target: float = 0.75) -> int:
    """k = ⌈(2M²/t²)(2n ln 2 + ln(2/δ))⌉, t = (1 - target)ρ; target 3/4 is THEORY §4.4's
    ⌈(32M²/ρ²)(2n ln 2 + ln(2/δ))⌉.

    >>> hoeffding_k(1.0, 1.0, 1)            # 32·(2 ln 2 + ln 4) = 88.7
    89
    """
    M = check_real(M, minimum=0, name="M")
    rho, n, delta, t = _common(rho, n, delta, target)
    return int(math.ceil((2.0 * M * M / (t * t)) * (2 * n * math.log(2) + math.log(2 / delta))))


def bernstein_k(variance: float, M: float, rho: float, n: int, *, delta: float = 0.5,
                target: float = 0.75) -> int:
    """k = ⌈(2σ² + 2ct/3)(2n ln 2 + ln(1/δ))/t²⌉, t = (1 - target)ρ, c = M + ρ (THEORY §4.8).

    ``variance`` is σ² = Var_μ₀(H·Ñ) (exact from the value table: E[Ñ²] - ρ²).

    >>> bernstein_k(0.0, 1.0, 1.0, 1, target=0.0)   # (2·2/3)(2 ln 2 + ln 2) = 2.77
    3
    """
    M = check_real(M, minimum=0, name="M")
    var = float(variance)
    if not (math.isfinite(var) and var >= 0):
        raise ReductionError(f"variance must be a finite number >= 0, got {variance!r}")
    rho, n, delta, t = _common(rho, n, delta, target)
    c = M + rho
    return int(math.ceil((2.0 * var + 2.0 * c * t / 3.0)
                         * (2 * n * math.log(2) + math.log(1 / delta)) / (t * t)))
