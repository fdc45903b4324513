"""Sign matrices, rectangles, Lindsey's lemma, norms and numerical rank (E2, E4, E10)."""

from fractions import Fraction

import numpy as np
import pytest
import scipy.linalg

from circuits import DimensionError, InnerProductMod2, InvalidCircuitError
from circuits.analysis import discrepancy, matrix_spectral_norm, max_discrepancy_search, numerical_rank, rectangle_sum, sign_matrix
from circuits.analysis.communication import spectral_norm
from circuits.constructions import ip_depth3
from circuits.hypercube import join_index
from circuits.analysis.bounds import lindsey_bound
from tests import naive_analysis as naive


@pytest.mark.parametrize("n", range(1, 8))
def test_ip_sign_matrix_is_sylvester_hadamard(n):
    H = sign_matrix("ip", n)
    assert H.dtype == np.int8 and H.flags.c_contiguous
    assert np.array_equal(H, scipy.linalg.hadamard(1 << n))
    HH = H.astype(np.int64) @ H.astype(np.int64)
    assert np.array_equal(HH, (1 << n) * np.eye(1 << n, dtype=np.int64))
    assert np.array_equal(sign_matrix(InnerProductMod2(n)), H)


def test_sign_matrix_orientation_rows_are_alice(rng):
    n = 3
    table = rng.integers(0, 2, 1 << (2 * n)).astype(np.uint8)
    M = sign_matrix(table)
    for x in range(1 << n):
        for y in range(1 << n):
            assert M[x, y] == 1 - 2 * int(table[int(join_index(x, y, n))])
    assert np.array_equal(sign_matrix(ip_depth3(3)), sign_matrix("ip", 3))


def test_rectangle_sums_match_naive(rng):
    n = 4
    H = sign_matrix("ip", n)
    rows = H.tolist()
    for _ in range(30):
        X = np.flatnonzero(rng.random(16) < 0.5)
        Y = np.flatnonzero(rng.random(16) < 0.5)
        s = rectangle_sum(H, X, Y)
        assert s == naive.rectangle_sum(rows, X.tolist(), Y.tolist())
        mx, my = np.zeros(16, bool), np.zeros(16, bool)
        mx[X], my[Y] = True, True
        assert rectangle_sum(H, mx, my) == s
        assert discrepancy(H, X, Y, exact=True) == Fraction(abs(s), 256)
        assert discrepancy(H, X, Y) == abs(s) / 256
    assert rectangle_sum(H, [], [1, 2]) == 0
    assert rectangle_sum(np.full((2, 2), 1 << 62, dtype=np.int64), [0, 1], [0, 1]) == 1 << 64
    assert rectangle_sum(np.full((2, 2), 0.5), [0, 1], [0]) == 1.0


@pytest.mark.parametrize("n", [4, 6, 8])
def test_lindsey_on_random_rectangles(n, rng):
    """E4: |sum_{X x Y} H| <= sqrt(|X||Y| 2^n), checked exactly in integers."""
    H = sign_matrix("ip", n)
    size = 1 << n
    worst = 0.0
    for _ in range(200):
        X = np.flatnonzero(rng.random(size) < rng.random())
        Y = np.flatnonzero(rng.random(size) < rng.random())
        s = rectangle_sum(H, X, Y)
        assert s * s <= X.size * Y.size * size
        assert lindsey_bound(n, X.size, Y.size).satisfied_by(s)
        if X.size and Y.size:
            worst = max(worst, abs(s) / np.sqrt(X.size * Y.size * size))
    assert worst <= 1.0


@pytest.mark.parametrize("n", [4, 6, 8])
def test_lindsey_on_searched_rectangles(n):
    """The adversarial search stays under Lindsey's bound and beats the trivial rectangles."""
    H = sign_matrix("ip", n)
    r = max_discrepancy_search(H, n_starts=12, seed=1)
    assert r.rect_sum == naive.rectangle_sum(H.tolist(), r.rows.tolist(), r.cols.tolist())
    assert r.rect_sum ** 2 <= r.rows.size * r.cols.size * (1 << n)
    assert r.ratio <= 1.0 + 1e-12
    assert r.lindsey_bound == pytest.approx(np.sqrt(r.rows.size * r.cols.size * 2.0 ** n))
    assert r.discrepancy <= 2.0 ** (-n / 2)
    assert abs(r.rect_sum) >= 1 << n                    # at least as good as a full column
    assert r.history == sorted(r.history) and len(r.history) == 12


def test_search_is_reproducible_and_general(rng):
    M = rng.choice([-1, 1], (20, 30))
    a = max_discrepancy_search(M, n_starts=5, seed=7)
    b = max_discrepancy_search(M, n_starts=5, seed=7)
    assert np.array_equal(a.rows, b.rows) and a.rect_sum == b.rect_sum
    # a local optimum: no single row or column can be added or removed to improve the signed sum
    sgn = 1 if a.rect_sum > 0 else -1
    x = np.zeros(20, bool)
    x[a.rows] = True
    y = np.zeros(30, bool)
    y[a.cols] = True
    rs = sgn * (M @ y)
    assert np.all(rs[x] >= 0) and np.all(rs[~x] <= 0)
    assert a.ratio <= 1.0 + 1e-12


@pytest.mark.parametrize("n", [2, 4, 6, 8, pytest.param(10, marks=pytest.mark.slow)])
def test_hadamard_norm_and_singular_values(n):
    H = sign_matrix("ip", n)
    assert matrix_spectral_norm(H) == pytest.approx(2 ** (n / 2), rel=1e-12)
    assert spectral_norm is matrix_spectral_norm
    s = scipy.linalg.svdvals(H.astype(np.float64))
    np.testing.assert_allclose(s, 2 ** (n / 2), rtol=1e-12)


@pytest.mark.parametrize("n", [2, 4, 6, 8])
def test_numerical_rank_of_noisy_hadamard(n, rng):
    """E10: any matrix with the sign pattern of H has rank >= 2^{n/2} (here: full)."""
    H = sign_matrix("ip", n).astype(np.float64)
    noisy = H * (1 + 0.5 * rng.random(H.shape))          # same sign pattern
    r = numerical_rank(noisy)
    assert r >= 2 ** (n / 2)
    assert numerical_rank(H) == 1 << n
    low = rng.normal(size=(1 << n, 3)) @ rng.normal(size=(3, 1 << n))
    assert numerical_rank(low) == min(3, 1 << n)
    assert numerical_rank(np.zeros((3, 4))) == 0


def test_communication_errors():
    with pytest.raises(TypeError, match="needs n"):
        sign_matrix("ip")
    with pytest.raises(DimensionError, match="even number"):
        sign_matrix([0, 1, 1, 0, 0, 1, 1, 0])
    with pytest.raises(DimensionError, match="expected 4"):
        sign_matrix(InnerProductMod2(3), 2)
    H = sign_matrix("ip", 2)
    with pytest.raises(DimensionError, match="repeated"):
        rectangle_sum(H, [0, 0], [1])
    with pytest.raises(DimensionError, match="outside"):
        rectangle_sum(H, [4], [1])
    with pytest.raises(DimensionError, match="mask of length 3"):
        rectangle_sum(H, np.ones(3, bool), [1])
    with pytest.raises(DimensionError, match="2-D"):
        rectangle_sum(np.ones(4), [0], [0])
    with pytest.raises(InvalidCircuitError, match="NaN"):
        numerical_rank(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="rtol"):
        numerical_rank(H, rtol=0)
    with pytest.raises(ValueError, match="n_starts"):
        max_discrepancy_search(H, n_starts=0)
    with pytest.raises(InvalidCircuitError, match="2\\^53"):
        max_discrepancy_search(np.full((4, 4), 1 << 60, dtype=np.int64))
    with pytest.raises(TypeError, match="integer matrix"):
        discrepancy(np.ones((2, 2)), [0], [0], exact=True)


# ----------------------------------------------------------------------------- negative controls
@pytest.mark.parametrize("n", [4, 6])
def test_negative_control_lindsey_fails_for_a_non_hadamard_matrix(n, rng):
    """Lindsey's check (used above on H) must reject a +-1 matrix that is not Hadamard."""
    size = 1 << n
    u, v = rng.choice([-1, 1], size), rng.choice([-1, 1], size)
    M = np.outer(u, v)                                       # rank one: huge rectangles exist
    X, Y = np.flatnonzero(u > 0), np.flatnonzero(v > 0)
    s = rectangle_sum(M, X, Y)
    assert s == X.size * Y.size
    assert not lindsey_bound(n, X.size, Y.size).satisfied_by(s)
    r = max_discrepancy_search(M, n_starts=4, seed=0)
    # the Hadamard-specific check of test_lindsey_on_searched_rectangles fails; (r.ratio uses
    # sqrt(|X||Y|) ||M||_2, which bounds every matrix by Cauchy-Schwarz, so it cannot fail)
    assert r.rect_sum ** 2 > r.rows.size * r.cols.size * size
    assert r.discrepancy > 2.0 ** (-n / 2)
    # and one flipped entry of H already breaks the exact equality of the spectral norm
    H = sign_matrix("ip", n).astype(np.float64)
    H[0, 0] = -H[0, 0]
    assert matrix_spectral_norm(H) > 2 ** (n / 2) * (1 + 1e-9)
