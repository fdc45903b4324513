"""Lower-bound calculators: values recomputed from first principles, checked on built circuits."""

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from circuits.analysis import Bound, advantage_bound, discriminator_check, forster_sign_rank_bound, gate_lemma_bound, gate_lemma_constant, lindsey_bound, maj_maj_bound, maj_thr_bound, parity_depth_bound, sign_matrix, thr_maj_bound, thr_thr_bound
from circuits import DimensionError, InvalidCircuitError, ThresholdCircuit
from circuits.constructions import ip_depth2, ip_depth3, parity_depth2
from tests import naive_analysis as naive

getcontext().prec = 80


def _ceil_decimal(x: Decimal) -> int:
    return int(x.to_integral_value(rounding="ROUND_CEILING"))


def _discriminator_reference(n, w_top, c: Decimal) -> int:
    """ceil((4^n - 1) / (W_top (2^{n+1} + 2 c 2^{3n/2}))) in 80-digit decimal arithmetic."""
    two = Decimal(2)
    denom = Decimal(w_top) * (two ** (n + 1) + 2 * c * two.sqrt() ** (3 * n))
    return _ceil_decimal((Decimal(4) ** n - 1) / denom)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 20, 33, 64])
@pytest.mark.parametrize("w_top, w_bot", [(1, 1), (1, 9), (3, 2), (7, 100)])
def test_maj_maj_matches_decimal_reference(n, w_top, w_bot):
    b = maj_maj_bound(n, w_top, w_bot)
    c = Decimal(2 * n * w_bot + 1).sqrt()
    assert b.value == _discriminator_reference(n, w_top, c)
    assert "HMPST" in b.formula and "Hajnal" in b.reference
    assert b.inputs == {"n": n, "w_top": w_top, "w_bot": w_bot} and b.kind == "lower"


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 10, 21, 40, 101])
@pytest.mark.parametrize("w_top", [1, 2, 5])
def test_maj_thr_matches_decimal_reference(n, w_top):
    assert maj_thr_bound(n, w_top).value == _discriminator_reference(n, w_top, Decimal(n + 1))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9, 16, 17, 40, 99])
@pytest.mark.parametrize("w_bot", [1, 2, 33])
def test_thr_maj_matches_first_principles(n, w_bot):
    K = 2 * n * w_bot + 1
    ref = _ceil_decimal((Decimal(2).sqrt() ** n - 1) / K)
    assert thr_maj_bound(n, w_bot).value == max(ref, 0)


@pytest.mark.parametrize("N", range(1, 40))
@pytest.mark.parametrize("D", [2, 3, 4])
def test_parity_bound_is_least_integer(N, D):
    g = parity_depth_bound(N, D).value
    e = 2 * (D - 1)
    assert g == naive.least_int_at_least(lambda s: 2 * s ** e >= N)
    assert g >= (N / 2) ** (1 / e) - 1e-9


@pytest.mark.parametrize("n", range(1, 8))
def test_ip_depth2_respects_the_depth2_bounds(n):
    c = ip_depth2(n)
    hidden, top = c.layers
    w_bot = int(np.abs(hidden.weights).max())
    w_top = int(np.abs(top.weights).max())
    assert (w_bot, w_top) == (n + 1, 1)                 # MAJ o MAJ with W_bot = n + 1
    assert c.size == n * 2 ** (n - 1)
    assert maj_maj_bound(n, w_top, w_bot).satisfied_by(c.size)
    assert maj_thr_bound(n, w_top).satisfied_by(c.size)
    assert thr_maj_bound(n, w_bot).satisfied_by(c.size)
    assert thr_thr_bound(n).satisfied_by(c.size)


@pytest.mark.parametrize("N", range(2, 17))
def test_parity_constructions_respect_ips(N):
    b = parity_depth_bound(N, 2)
    assert parity_depth2(N).size >= b.value and b.satisfied_by(parity_depth2(N).size)
    assert b.value >= 1 and not b.satisfied_by(b.value - 1)      # the check can fail


@pytest.mark.parametrize("n", [1, 2, 3, pytest.param(4, marks=pytest.mark.slow)])
def test_discriminator_lemma_on_ip_depth2(n):
    r = discriminator_check(ip_depth2(n))
    assert r.computes_ip and r.holds and r.gate_bounds_hold
    assert r.weighted_sum >= 1
    # each advantage recomputed from naive counts over all 4^n points
    hidden = ip_depth2(n).layers[0]
    a1 = (1 << (2 * n - 1)) - (1 << (n - 1))
    a0 = (1 << (2 * n)) - a1
    for row, t, adv in zip(hidden.weights.tolist(), hidden.thresholds.tolist(), r.advantages):
        ones, ones1, _ = naive.gate_counts(row, t, n)
        assert adv == Fraction(ones1, a1) - Fraction(ones - ones1, a0)


def test_discriminator_on_a_circuit_that_is_not_ip():
    c = ThresholdCircuit.depth2([[1, 0, 1, 0], [0, 1, 0, 1]], [2, 2], [1, 1], 1)   # OR of ANDs
    r = discriminator_check(c)
    assert not r.computes_ip and r.holds
    with pytest.raises(DimensionError, match="depth-2"):
        discriminator_check(ip_depth3(2))
    with pytest.raises(DimensionError, match="2n inputs"):
        discriminator_check(parity_depth2(3))
    with pytest.raises(TypeError):
        discriminator_check("ip")


@pytest.mark.parametrize("n", range(1, 9))
def test_forster_for_hadamard(n):
    b = forster_sign_rank_bound(sign_matrix("ip", n))
    assert b.value == pytest.approx(2 ** (n / 2), rel=1e-12)
    assert b.inputs["ceil"] == math.ceil(2 ** (n / 2) - 1e-9)
    assert b.kind == "lower" and "Forster" in b.formula


def test_forster_general_matrix(rng):
    M = rng.choice([-1, 1], (12, 20))
    b = forster_sign_rank_bound(M)
    assert b.value == pytest.approx(math.sqrt(240) / np.linalg.norm(M.astype(float), 2))
    assert forster_sign_rank_bound(np.ones((3, 5))).value == pytest.approx(1.0)
    with pytest.raises(InvalidCircuitError, match="\\+-1"):
        forster_sign_rank_bound([[1, 0], [1, 1]])


def test_lindsey_and_gate_lemma_exact_checks():
    b = lindsey_bound(3, 5, 7)                    # sqrt(280) = 16.73...
    assert b.squared == 280 and b.kind == "upper"
    assert b.satisfied_by(16) and b.satisfied_by(-16) and not b.satisfied_by(17)
    assert lindsey_bound(4, 16, 1).satisfied_by(16)          # equality: a full column
    c = gate_lemma_constant(3, 10)
    assert c.value == pytest.approx(math.sqrt(10)) and c.squared == 10
    assert gate_lemma_constant(3, 100).value == 4.0
    g = gate_lemma_bound(2, 100)                  # c = 3, 3 * 2^3 = 24
    assert g.value == 24.0 and g.satisfied_by(24) and not g.satisfied_by(25)


def test_advantage_bound_exact_boundary():
    b = advantage_bound(2, 2)
    exact = Fraction(2 ** 3 + 2 * 2 * 2 ** 3, 15)                     # n = 2: (8 + 32)/15
    assert b.value == pytest.approx(float(exact))
    assert b.satisfied_by(exact) and b.satisfied_by(-exact)
    assert not b.satisfied_by(exact + Fraction(1, 10 ** 12))
    # c = sqrt(K) given exactly
    bk = advantage_bound(3, c_squared=7)
    assert bk.value == pytest.approx((16 + 2 * math.sqrt(7) * 2 ** 4.5) / 63)
    assert bk.satisfied_by(Fraction(1, 1)) is (1 <= bk.value)
    with pytest.raises(TypeError, match="exactly one"):
        advantage_bound(2)
    with pytest.raises(ValueError):
        advantage_bound(2, -1)


def test_thr_thr_has_no_bound():
    b = thr_thr_bound(10)
    assert b.value is None and b.satisfied_by(1) and "none known" in b.formula


def test_bound_errors():
    with pytest.raises(DimensionError):
        maj_maj_bound(0, 1, 1)
    with pytest.raises(DimensionError, match="w_top"):
        maj_maj_bound(3, 0, 1)
    with pytest.raises(TypeError, match="w_bot"):
        thr_maj_bound(3, 1.5)
    with pytest.raises(TypeError):
        maj_thr_bound(3, True)
    with pytest.raises(DimensionError, match="depth must be >= 2"):
        parity_depth_bound(4, 1)
    with pytest.raises(DimensionError, match="at most 2\\^n"):
        lindsey_bound(2, 5, 1)
    assert isinstance(maj_thr_bound(4, 1), Bound)
