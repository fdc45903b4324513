"""Walsh–Hadamard transform, spectra and correlations against naive twins and ground truths."""

from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from math import comb

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings, strategies as st

import circuits
import circuits.analysis.fwht as sp
from circuits import DimensionError, InnerProductMod2, InvalidCircuitError, Majority, Parity, ThresholdCircuit
from circuits.analysis import correlation, correlation_counts, degree, fourier_coefficients, gate_ip_correlation, influences, noise_sensitivity, spectral_norm, total_influence, walsh_hadamard, walsh_hadamard_, walsh_spectrum
from circuits.analysis import _kernels_spectral as ks
from circuits.constructions import ip_depth2, ip_depth3, parity_depth2
from circuits.analysis.bounds import advantage_bound, gate_lemma_bound
from tests import naive_analysis as naive

A006516 = [0, 1, 6, 28, 120, 496, 2016, 8128, 32640, 130816]


# ------------------------------------------------------------------------------------ transform

@pytest.mark.parametrize("N", range(0, 9))
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_transform_matches_naive_twin(N, dtype, rng):
    x = rng.integers(-7, 8, 1 << N)
    got = walsh_hadamard(x.astype(dtype))
    assert got.dtype == dtype
    assert got.tolist() == naive.walsh(x.tolist())


@pytest.mark.parametrize("N", [9, 10, 11])
def test_transform_is_sylvester_hadamard(N, rng):
    x = rng.integers(-3, 4, 1 << N)
    H = scipy.linalg.hadamard(1 << N)
    assert np.array_equal(walsh_hadamard(x), H @ x)
    assert np.array_equal(walsh_hadamard(x.astype(np.float64)), (H @ x).astype(np.float64))


@pytest.mark.parametrize("block_bytes", [64, 512, 4096])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_every_blocking_plan_agrees(monkeypatch, block_bytes, dtype, rng):
    # tiny blocks force several strip sweeps, odd pass counts and the thread pool
    monkeypatch.setattr(sp, "_BLOCK_BYTES", block_bytes)
    monkeypatch.setattr(sp, "_PARALLEL_MIN", 16)
    for N in [1, 2, 3, 5, 8, 11]:
        x = rng.integers(-3, 4, 1 << N).astype(dtype)
        ref = scipy.linalg.hadamard(1 << N) @ x
        assert np.array_equal(walsh_hadamard(x), ref), N
    N = 15
    x = rng.integers(-3, 4, 1 << N).astype(dtype)
    assert np.array_equal(walsh_hadamard(walsh_hadamard(x)), x * (1 << N))


def test_grouped_and_scalar_first_passes_agree(rng):
    v = rng.integers(-9, 10, 1 << 12)
    a, b = v.copy(), v.copy()
    ks._fwht_blocks(a, 12, 0, 1, True)
    ks._fwht_blocks(b, 12, 0, 1, False)
    assert np.array_equal(a, b)
    assert a.tolist() == naive.walsh(v.tolist())


def test_in_place_returns_same_array_and_involution():
    v = np.arange(16, dtype=np.int64)
    out = walsh_hadamard_(v)
    assert out is v
    walsh_hadamard_(v)
    assert v.tolist() == [16 * k for k in range(16)]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 7).flatmap(lambda N: st.lists(st.integers(-50, 50), min_size=1 << N,
                                                    max_size=1 << N)))
def test_parseval_and_involution(values):
    v = np.array(values, dtype=np.int64)
    N = v.size.bit_length() - 1
    w = walsh_hadamard(v)
    assert int((w.astype(object) ** 2).sum()) == (1 << N) * int((v.astype(object) ** 2).sum())
    assert np.array_equal(walsh_hadamard(w), v << N)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 6).flatmap(lambda N: st.tuples(
    st.lists(st.integers(-9, 9), min_size=1 << N, max_size=1 << N),
    st.lists(st.integers(-9, 9), min_size=1 << N, max_size=1 << N))))
def test_convolution_theorem(pair):
    a, b = (np.array(p, dtype=np.int64) for p in pair)
    n = a.size
    conv = np.array([sum(int(a[y]) * int(b[z ^ y]) for y in range(n)) for z in range(n)])
    assert np.array_equal(walsh_hadamard(conv), walsh_hadamard(a) * walsh_hadamard(b))


def test_dtype_family_and_exactness_bounds():
    assert walsh_hadamard(np.array([1, -1], dtype=np.int8)).dtype == np.int32
    assert walsh_hadamard(np.array([True, False])).dtype == np.int32
    assert walsh_hadamard(np.array([1, 2], dtype=np.uint32)).dtype == np.int64
    assert walsh_hadamard(np.array([1, 2], dtype=np.int64)).dtype == np.int64
    assert walsh_hadamard(np.array([1, 2], dtype=np.float32)).dtype == np.float64
    # int32 input whose transform may leave int32 is widened, exactly
    big = np.full(4, 1 << 30, dtype=np.int32)
    assert walsh_hadamard(big).tolist() == [1 << 32, 0, 0, 0]
    assert walsh_hadamard([1, 2], dtype=np.int32).dtype == np.int32
    assert walsh_hadamard(np.array([1.0, 3.0]), dtype=np.int64).tolist() == [4, -2]


def test_transform_errors():
    with pytest.raises(DimensionError, match="power-of-two"):
        walsh_hadamard([1, 2, 3])
    with pytest.raises(DimensionError, match="1-dimensional"):
        walsh_hadamard(np.ones((2, 2)))
    with pytest.raises(InvalidCircuitError, match="overflow int32"):
        walsh_hadamard(np.full(8, 1 << 29), dtype=np.int32)
    with pytest.raises(InvalidCircuitError, match="overflow int64"):
        walsh_hadamard(np.full(4, 1 << 62, dtype=np.int64))
    with pytest.raises(InvalidCircuitError, match="NaN"):
        walsh_hadamard([1.0, np.nan])
    with pytest.raises(InvalidCircuitError, match="not integers"):
        walsh_hadamard([0.5, 1.0], dtype=np.int64)
    with pytest.raises(InvalidCircuitError, match="numeric"):
        walsh_hadamard(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="dtype"):
        walsh_hadamard([1, 2], dtype=np.int16)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        walsh_hadamard_([1, 2])
    with pytest.raises(TypeError, match="dtype"):
        walsh_hadamard_(np.ones(4, dtype=np.float32))
    with pytest.raises(TypeError, match="C-contiguous"):
        walsh_hadamard_(np.ones(8)[::2])
    ro = np.ones(4)
    ro.setflags(write=False)
    with pytest.raises(TypeError, match="writable"):
        walsh_hadamard_(ro)
    with pytest.raises(InvalidCircuitError, match="overflow int32"):
        walsh_hadamard_(np.full(4, 1 << 30, dtype=np.int32))


# -------------------------------------------------------------------------------------- spectra

@pytest.mark.parametrize("n", range(1, 6))
def test_ip_is_bent_with_exact_signs(n):
    w = fourier_coefficients(InnerProductMod2(n))
    u = np.arange(1 << (2 * n))
    lo, hi = u & ((1 << n) - 1), u >> n
    expected = (1 << n) * (1 - 2 * (np.bitwise_count(lo & hi).astype(np.int64) % 2))
    assert np.array_equal(w, expected)
    nonlinearity = (1 << (2 * n - 1)) - int(np.abs(w).max()) // 2
    assert nonlinearity == A006516[n]


@pytest.mark.parametrize("n", range(1, 8))
def test_number_of_ip_ones_is_a006516(n):
    c = correlation_counts("ip", np.zeros(1 << (2 * n), dtype=np.uint8))
    assert c.disagreements == A006516[n]
    assert c.exact == Fraction(1 << n, 1 << (2 * n))        # sum H = 2^n


@pytest.mark.parametrize("N", range(1, 9))
def test_parity_is_a_single_character(N):
    w = fourier_coefficients(Parity(N))
    assert w.tolist() == [0] * ((1 << N) - 1) + [1 << N]
    assert degree(Parity(N)) == N and spectral_norm(Parity(N)) == 1.0


@pytest.mark.parametrize("N, value", [(1, 1.0), (3, 0.5), (5, 0.375), (7, 0.3125), (9, 0.2734375)])
def test_majority_fourier_values(N, value):
    c = fourier_coefficients(Majority(N), normalized=True)
    u = np.arange(1 << N)
    level = np.bitwise_count(u).astype(np.int64)
    assert np.all(c[level % 2 == 0] == 0)
    singles = np.abs(c[level == 1])
    assert np.all(singles == comb(N - 1, (N - 1) // 2) / 2 ** (N - 1))
    assert singles[0] == value


def _random_tables(rng, N, count=6):
    tables = [rng.integers(0, 2, 1 << N).astype(np.uint8) for _ in range(count)]
    tables += [np.zeros(1 << N, np.uint8), np.ones(1 << N, np.uint8)]
    return tables


@pytest.mark.parametrize("N", range(0, 6))
def test_spectrum_statistics_match_naive_twins(N, rng):
    for t in _random_tables(rng, N):
        s = walsh_spectrum(t)
        tl = t.tolist()
        assert s.walsh.tolist() == naive.walsh_of_table(tl)
        assert list(s.level_sums) == naive.level_sums(tl)
        assert sum(s.level_sums) == 4 ** N                       # Parseval
        assert s.degree == naive.degree(tl) == degree(t)
        assert s.l1_walsh == sum(abs(x) for x in naive.walsh_of_table(tl))
        infl = naive.influences(tl)
        assert influences(t).tolist() == [float(x) for x in infl]
        assert s.influences().tolist() == [float(x) for x in infl]
        assert s.total_influence_exact == sum(infl, Fraction(0))
        assert total_influence(t) == float(sum(infl, Fraction(0)))
        np.testing.assert_array_equal(s.coefficients, np.array(naive.walsh_of_table(tl)) / 2 ** N)


@pytest.mark.parametrize("N", range(1, 5))
def test_noise_sensitivity_exact_against_direct_sum(N, rng):
    for t in _random_tables(rng, N, count=3):
        for delta in [Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(1)]:
            assert noise_sensitivity(t, delta) == naive.noise_sensitivity(t.tolist(), delta)
        exact = naive.noise_sensitivity(t.tolist(), Fraction(1, 10))
        assert noise_sensitivity(t, 0.1) == pytest.approx(float(exact), abs=1e-12)


def test_spectral_stats_kernel_twin(rng):
    for N in range(0, 7):
        w = rng.integers(-3, 4, 1 << N)
        w[rng.random(1 << N) < 0.5] = 0
        levels, l1, deg = ks._spectrum_stats(w.astype(np.int64), N)
        exp = [0] * (N + 1)
        for u, x in enumerate(w.tolist()):
            exp[naive.popcount(u)] += x * x
        nz = [naive.popcount(u) for u, x in enumerate(w.tolist()) if x]
        assert levels.tolist() == exp and l1 == sum(abs(x) for x in w.tolist())
        assert deg == (max(nz) if nz else -1)


def test_functions_circuits_and_tables_give_the_same_spectrum():
    a = walsh_spectrum(ip_depth3(3)).walsh
    b = walsh_spectrum(InnerProductMod2(3)).walsh
    c = walsh_spectrum(InnerProductMod2(3).truth_table()).walsh
    assert np.array_equal(a, b) and np.array_equal(b, c)
    assert spectral_norm(ip_depth2(3)) == 8.0


def test_spectrum_errors():
    with pytest.raises(InvalidCircuitError, match="only 0 and 1"):
        walsh_spectrum([0, 2])
    with pytest.raises(DimensionError, match="power-of-two"):
        fourier_coefficients([0, 1, 1])
    with pytest.raises(TypeError, match="needs its size"):
        degree("ip")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        noise_sensitivity([0, 1], 1.5)
    with pytest.raises(TypeError):
        noise_sensitivity([0, 1], "x")
    with pytest.raises(DimensionError, match="MAX_EXHAUSTIVE_BITS"):
        walsh_spectrum(Parity(25))


# --------------------------------------------------------------------------------- correlations

def test_correlation_of_circuits_functions_tables(rng):
    for n in range(1, 4):
        assert correlation(ip_depth2(n), "ip") == 1.0
        assert correlation(InnerProductMod2(n), ip_depth3(n)) == 1.0
    N = 6
    W = rng.integers(-3, 4, (5, N))
    c = ThresholdCircuit.depth2(W, rng.integers(-2, 3, 5), rng.integers(-2, 3, 5), 0)
    tc = circuits.truth_table(c)
    for _ in range(4):
        t = rng.integers(0, 2, 1 << N).astype(np.uint8)
        expect = naive.correlation(tc.tolist(), t.tolist())
        for a, b in [(c, t), (t, c), (tc, t)]:
            r = correlation_counts(a, b)
            assert r.exact == expect and r.value == float(expect)
            assert r.agreements + r.disagreements == r.n_points == 1 << N
    assert correlation(c, c) == 1.0
    assert correlation(c, parity_depth2(N)) == float(naive.correlation(
        tc.tolist(), [naive.popcount(k) % 2 for k in range(1 << N)]))


def test_correlation_forwards_executor_and_client(monkeypatch):
    import circuits.simulate as simulate
    seen = []
    real = simulate.count_disagreements

    def spy(circuit, target, **kwargs):
        seen.append(dict(kwargs))
        kwargs.pop("client", None)                    # run locally: a real Dask client is slow
        return real(circuit, target, **kwargs)

    circ = ip_depth3(4)
    with ThreadPoolExecutor(2) as ex:
        assert correlation(circ, "ip", executor=ex) == 1.0
    monkeypatch.setattr(simulate, "count_disagreements", spy)
    sentinel = object()
    assert correlation("parity", circ, client=sentinel) == correlation("parity", circ)
    assert seen[0]["client"] is sentinel and seen[0]["executor"] is None


def test_correlation_errors():
    with pytest.raises(DimensionError, match="same cube"):
        correlation([0, 1], [0, 1, 1, 0])
    with pytest.raises(TypeError, match="at least one"):
        correlation("ip", "parity")
    with pytest.raises(DimensionError, match="power-of-two"):
        correlation([0, 1, 1], "parity")


# ------------------------------------------------------------------------- gates and IP (§1.2)

def _check_gate(w, t, n):
    r = gate_ip_correlation(w, t)
    a1 = (1 << (2 * n - 1)) - (1 << (n - 1))
    a0 = (1 << (2 * n)) - a1
    # the §1.2 identity for the advantage, from the counts
    ident = Fraction(r.n_ones * (a0 - a1), 2 * a0 * a1) - Fraction(r.sum_hg * 4 ** n, 2 * a0 * a1)
    assert r.advantage == ident
    assert r.respects_lemma
    assert gate_lemma_bound(n, r.k_values).satisfied_by(r.sum_hg)
    assert advantage_bound(n, c_squared=min((n + 1) ** 2, r.k_values)).satisfied_by(r.advantage)
    return r


@pytest.mark.parametrize("n", range(1, 5))
def test_gate_counts_match_naive_twin(n, rng):
    for _ in range(5):
        w = rng.integers(-4, 5, 2 * n)
        t = int(rng.integers(-3, 4))
        r = _check_gate(w, t, n)
        ones, ones1, s = naive.gate_counts(w.tolist(), t, n)
        assert (r.n_ones, r.n_ones_ip1, r.sum_hg) == (ones, ones1, s)
        assert r.correlation == float(Fraction((1 << n) - 2 * s, 4 ** n))
        # real-weight path agrees on integer-valued float weights (+0.5 offsets the threshold)
        rf = gate_ip_correlation(w.astype(np.float64) + 0.0, t - 0.5)
        assert (rf.n_ones, rf.n_ones_ip1) == (ones, ones1)


@pytest.mark.parametrize("n", range(2, 8))
def test_gate_lemma_on_random_gates(n, rng):
    """|sum H g| <= c_g 2^{3n/2} and |P_1 - P_0| <= adv(n, c_g): real, small-int, +-2^i weights."""
    worst = 0.0
    for trial in range(8):
        kind = trial % 3
        if kind == 0:
            w = rng.normal(size=2 * n)
            t = float(rng.normal())
        elif kind == 1:
            w = rng.integers(-3, 4, 2 * n)
            t = int(rng.integers(-2, 3))
        else:
            w = rng.choice([-1, 1], 2 * n) * (1 << rng.integers(0, n + 1, 2 * n))
            t = int(rng.integers(-(1 << n), (1 << n) + 1))
        r = _check_gate(w, t, n)
        worst = max(worst, abs(r.sum_hg) / ((n + 1) * 2 ** (1.5 * n)))
    assert worst <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("n", [8, 9, 10])
def test_gate_lemma_large_n(n, rng):
    for trial in range(6):
        w = rng.normal(size=2 * n) if trial % 2 else rng.integers(-5, 6, 2 * n)
        _check_gate(w, 0.25 if trial % 2 else 1, n)


def test_gate_errors():
    with pytest.raises(DimensionError, match="even length"):
        gate_ip_correlation([1, 2, 3], 1)
    with pytest.raises(InvalidCircuitError, match="finite"):
        gate_ip_correlation([1.0, np.inf], 1)
    with pytest.raises(DimensionError):
        gate_ip_correlation(np.full(26, 0.5), 0)       # real weights: n <= 12


@pytest.mark.slow
def test_24_variable_spectrum_is_exact():
    s = walsh_spectrum(InnerProductMod2(12))
    assert s.degree == 24 and s.l1_walsh == 1 << 36
    assert np.all(np.abs(s.walsh) == 1 << 12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_large_transform_involution(dtype, rng):
    x = (1 - 2 * rng.integers(0, 2, 1 << 24)).astype(dtype)
    w = walsh_hadamard(x)
    assert int(np.abs(w).max()) <= 1 << 24
    if w.dtype == np.int32:
        # max|w| * 2^24 exceeds 2^31, so the in-place int32 transform cannot be proven exact and
        # is refused; the out-of-place one widens to int64 by the same bound.
        with pytest.raises(InvalidCircuitError, match="overflow int32"):
            walsh_hadamard_(w)
        w = walsh_hadamard(w)
        assert w.dtype == np.int64
    else:
        walsh_hadamard_(w)
    assert np.array_equal(w, x.astype(w.dtype) * (1 << 24))


# ----------------------------------------------------------------------------- negative controls
# The bentness, nonlinearity and gate-lemma checks above must reject functions that break them.

@pytest.mark.parametrize("n", range(1, 5))
def test_negative_control_one_flipped_entry_is_not_bent(n, rng):
    table = InnerProductMod2(n).truth_table().copy()
    k = int(rng.integers(0, table.size))
    table[k] ^= 1
    w = fourier_coefficients(table)
    assert not np.all(np.abs(w) == 1 << n)                       # bentness check fails
    assert int(np.abs(w).max()) == (1 << n) + 2                  # every coefficient moved by 2
    nonlinearity = (1 << (2 * n - 1)) - int(np.abs(w).max()) // 2
    assert nonlinearity == A006516[n] - 1 < A006516[n]
    others = (Parity(2 * n),) if n == 1 else (Parity(2 * n), Majority(2 * n))  # MAJ_2 = OR is bent
    for f in others:
        assert not np.all(np.abs(fourier_coefficients(f)) == 1 << n)


@pytest.mark.parametrize("n", [5, 6, 7])
def test_negative_control_gate_lemma_rejects_ip_itself(n):
    """IP_n is a depth-2 circuit, not a gate: with c_g = 2 its |sum H g| breaks the bound."""
    ip = InnerProductMod2(n).truth_table().astype(np.int64)
    sum_hg = int(((1 - 2 * ip) * ip).sum())
    assert sum_hg == -A006516[n]
    assert not gate_lemma_bound(n, 4).satisfied_by(sum_hg)
