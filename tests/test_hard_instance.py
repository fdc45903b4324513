"""Tests of the hard instance (mu, f_d, delta*, shifts, summary) and the R-cube variant, with
their large cases and the negative controls of every certified property."""

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import embeddings as E
from circuits import inner_product_mod2
from circuits.utils.errors import DimensionError
from circuits.hypercube import bits_of, points
from circuits.utils.rng import uniform_ball
from tests import naive_embeddings as naive

# ----------------------------------------------------------------------------- hard instance
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_support_layout_and_geometry(n):
    inst = E.HardInstance(n, seed=0)
    m, d = inst.m, inst.dim
    S = inst.support()
    k = np.arange(4 ** n)
    assert S.points.shape == (4 ** n, d) and S.bits.shape == (4 ** n, 2 * n)
    assert np.array_equal(S.indices, k) and np.array_equal(S.bits, bits_of(k, 2 * n))
    assert np.array_equal(S.labels, inner_product_mod2(n))
    assert np.array_equal(S.points, inst.pair_embedding(S.bits))
    e = inst.embedding
    assert np.array_equal(S.points[:, :m], e.embed_indices(k & ((1 << n) - 1)))   # Alice = low
    assert np.array_equal(S.points[:, m:], e.embed_indices(k >> n))
    np.testing.assert_allclose(np.linalg.norm(S.points, axis=1), 1.0, rtol=0, atol=1e-12)
    C = e.encode(points(n))
    X = S.points
    D2 = ((X[:, None] - X[None]) ** 2).sum(axis=2)
    a, b = k & ((1 << n) - 1), k >> n
    dh = (C[a][:, None] != C[a][None]).sum(axis=2) + (C[b][:, None] != C[b][None]).sum(axis=2)
    np.testing.assert_allclose(D2, 2 * dh / m, rtol=0, atol=1e-12)
    # delta*_0 = sqrt(2 d_C / m) is the distance between the labels, and it is attained
    diff = S.labels[:, None] != S.labels[None]
    assert abs(math.sqrt(D2[diff].min()) - inst.delta_star) < 1e-12
    assert abs(inst.delta_star - math.sqrt(2 * e.min_distance / m)) < 1e-15
    x0, x1, k0, k1 = inst.delta_star_witness()
    assert inst.labels_of([k0, k1]).tolist() == [0, 1]
    assert abs(float(np.linalg.norm(x0 - x1)) - inst.delta_star) < 1e-12
    assert np.array_equal(np.vstack([x0, x1]), S.points[[k0, k1]])


@pytest.mark.parametrize("n,tau", [(1, 0.15), (2, 0.1), (3, 0.05)])
def test_box_gap_matches_brute_force(n, tau):
    inst = E.HardInstance(n, tau=tau, seed=0)
    boxes = naive.hard_boxes(inst.embedding.generator.tolist(), tau)
    gap = naive.boxes_gap(boxes)
    want = math.sqrt(2 * inst.embedding.min_distance / inst.m) * (1 - tau) / (1 + tau)
    assert abs(gap - want) < 1e-12 and abs(inst.delta_star - want) < 1e-15
    x0, x1, k0, k1 = inst.delta_star_witness()
    assert abs(float(np.linalg.norm(x0 - x1)) - gap) < 1e-12
    lo, hi = inst._box(np.array([k0, k1]))
    assert ((lo - 1e-15 <= np.vstack([x0, x1])) & (np.vstack([x0, x1]) <= hi + 1e-15)).all()
    assert inst.labels_of([k0, k1]).tolist() == [0, 1]


@pytest.mark.parametrize("n,tau", [(1, 0.0), (2, 0.0), (3, 0.0), (2, 0.1), (3, 0.15)])
def test_target_and_distance_match_naive(rng, n, tau):
    inst = E.HardInstance(n, tau=tau, seed=1)
    boxes = naive.hard_boxes(inst.embedding.generator.tolist(), tau)
    s = inst.sample(20, rng).points
    X = np.vstack([uniform_ball(20, inst.dim, seed=rng), s + rng.normal(scale=0.05, size=s.shape), s])
    for label in (0, 1):
        dist, k = inst.distance(X, label)
        want = [naive.distance_to_label(boxes, x, label) for x in X.tolist()]
        np.testing.assert_allclose(dist, want, rtol=1e-12, atol=1e-14)
        assert (inst.labels_of(k) == label).all()
        near, dd, _ = inst.project(X, label)
        np.testing.assert_allclose(np.linalg.norm(near - X, axis=1), dd, rtol=1e-12, atol=1e-14)
    f = inst.target(X)
    want = [min(1.0, naive.distance_to_label(boxes, x, 0) / inst.delta_star) for x in X.tolist()]
    np.testing.assert_allclose(f, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(inst.target(X, one_lipschitz=True), np.array(want) * inst.delta_star,
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n,tau", [(2, 0.0), (5, 0.0), (4, 0.1), (6, 0.15)])
def test_target_equals_label_on_support(n, tau):
    inst = E.HardInstance(n, tau=tau, seed=2)
    S = inst.support()
    assert np.abs(inst.target(S.points) - S.labels).max() <= 1e-12
    s = inst.sample(2000, seed=3)
    assert np.abs(inst.target(s.points) - s.labels).max() <= 1e-12
    assert np.array_equal(inst.rounded_label(s.points), s.labels)
    assert np.array_equal(inst.decode(s.points), s.bits)
    assert np.array_equal(inst.decode(s.points, method="nearest"), s.bits)


@pytest.mark.parametrize("n,tau", [(2, 0.0), (4, 0.0), (3, 0.15), (5, 0.1)])
def test_lipschitz_check(n, tau):
    inst = E.HardInstance(n, tau=tau, seed=0)
    r = inst.check_lipschitz(300, seed=n)
    assert r.ok, r.max_ratio
    assert all(v <= 1 + 1e-9 for v in r.max_ratio.values())
    assert r.max_ratio["adversarial"] >= 1 - 1e-9        # the constant is attained
    assert json.loads(json.dumps(r.to_dict()))["ok"] is True


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.floats(1e-6, 2.0))
def test_lipschitz_property_random_pairs(seed, scale):
    inst = _lip_instance()
    g = np.random.default_rng(seed)
    x = inst.sample(8, g).points
    y = x + g.normal(scale=scale / math.sqrt(inst.dim), size=x.shape)
    df = np.abs(inst.target(x) - inst.target(y))
    assert (df <= inst.lipschitz_constant * np.linalg.norm(x - y, axis=1) + 1e-12).all()


_LIP = {}


def _lip_instance():
    if "inst" not in _LIP:
        _LIP["inst"] = E.HardInstance(3, tau=0.1, seed=4)
    return _LIP["inst"]


def test_sampler_statistics():
    inst = E.HardInstance(2, seed=0)
    s = inst.sample(64000, seed=7)
    counts = np.bincount(s.indices, minlength=16)
    assert stats.chisquare(counts).pvalue > 1e-6
    p = inst.label_one_fraction
    assert p == 0.5 - 2 ** -3
    assert abs(s.labels.mean() - p) < 5 * math.sqrt(p * (1 - p) / 64000)
    assert np.array_equal(s.points, inst.points_of(s.indices))
    # reproducible, and rng / seed are the same thing
    assert np.array_equal(inst.sample(50, seed=1).points, inst.sample(50, np.random.default_rng(1)).points)
    with pytest.raises(TypeError, match="either rng or seed"):
        inst.sample(3, 1, seed=1)
    with pytest.raises(ValueError, match="non-negative"):
        inst.sample(-1)


def test_box_sampler_is_uniform_in_boxes_and_in_the_ball():
    tau = 0.15
    inst = E.HardInstance(3, tau=tau, seed=0)
    s = inst.sample(4000, seed=8)
    c = inst.points_of(s.indices)
    h = inst.half_width
    assert abs(h - tau / (math.sqrt(2 * inst.m) * (1 + tau))) < 1e-15
    off = (s.points - c).ravel()
    assert np.abs(off).max() <= h * (1 + 1e-12)
    assert stats.kstest(off, stats.uniform(loc=-h, scale=2 * h).cdf).pvalue > 1e-6
    norms = np.linalg.norm(s.points, axis=1)
    assert norms.max() <= 1 + 1e-12
    assert np.array_equal(np.sign(s.points), np.sign(c))
    # centres of mu_tau are x_{a,b} / (1 + tau)
    x0 = E.HardInstance(3, seed=0).support().points
    np.testing.assert_allclose(inst.support().points, x0 / (1 + tau), rtol=1e-15, atol=0)


def test_iter_support_equals_support():
    inst = E.HardInstance(3, tau=0.05, seed=0)
    S = inst.support()
    chunks = list(inst.iter_support(chunk=7))
    assert [len(c) for c in chunks] == [7] * 9 + [1]
    for field in ("points", "bits", "labels", "indices"):
        assert np.array_equal(np.concatenate([getattr(c, field) for c in chunks]), getattr(S, field))
    with pytest.raises(ValueError, match="chunk"):
        next(inst.iter_support(chunk=0))


@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_shift_signs_act_exactly(tau):
    n = 3
    inst = E.HardInstance(n, tau=tau, seed=0)
    S = inst.support()
    k = np.arange(4 ** n)
    a, b = k & 7, k >> 3
    smp = inst.sample(200, seed=2)
    for r in range(8):
        for s in range(8):
            R = inst.shift_signs(r, s)
            assert np.array_equal(S.points[(a ^ r) + ((b ^ s) << n)], S.points * R)
            # a box sample reflected lies in the shifted box (mu_tau is invariant)
            moved = smp.points * R
            kk = (smp.indices & 7 ^ r) + (((smp.indices >> 3) ^ s) << n)
            lo, hi = inst._box(kk)
            assert ((lo <= moved) & (moved <= hi)).all()
    assert np.array_equal(inst.shift_signs([1, 0, 1], 0), inst.shift_signs(5, 0))


def test_summary_table_and_json():
    inst = E.HardInstance(4, seed=0)
    s = inst.to_dict(generator=False)
    S = inst.support()
    y = S.labels.astype(float)
    assert s["support_size"] == len(S) == 256 and "generator" not in s
    assert abs(s["best_constant_mse"] - ((y - y.mean()) ** 2).mean()) < 1e-15
    assert s["best_constant_mse"] == 0.25 - 4.0 ** -5
    assert abs(s["lipschitz_constant"] - 1 / s["delta_star"]) < 1e-15
    d = json.loads(json.dumps(inst.to_dict()))
    assert d["min_distance"] == inst.embedding.min_distance and len(d["generator"]) == 4
    text = inst.summary()
    assert isinstance(text, str)
    for word in ("d_C (certified)", "delta*", "Lipschitz", "best constant MSE", "256"):
        assert word in text


def test_hard_instance_errors():
    for tau in (0.2, -0.1, 1.0, float("nan")):
        with pytest.raises(DimensionError, match=r"MAX_TAU = 0.15"):
            E.HardInstance(2, tau=tau)
    with pytest.raises(TypeError, match="tau"):
        E.HardInstance(2, tau="0.1")
    with pytest.raises(DimensionError, match="exceeds MAX_INSTANCE_BITS = 20"):
        E.HardInstance(21)
    with pytest.raises(DimensionError, match="MAX_INSTANCE_BITS"):
        E.CubeInstance(21)
    with pytest.raises(DimensionError, match="between 1"):
        E.CubeInstance(0)
    with pytest.raises(DimensionError, match="m must be >= n"):
        E.HardInstance(4, m=3)
    inst = E.HardInstance(2, seed=0, tries=3)
    with pytest.raises(DimensionError, match=r"shape \(n_points, 16\)"):
        inst.target(np.zeros((3, 5)))
    with pytest.raises(DimensionError, match="finite"):
        inst.target(np.full((1, 16), np.inf))
    with pytest.raises(ValueError, match="label"):
        inst.distance(np.zeros((1, 16)), 2)
    with pytest.raises(DimensionError, match=r"\[0, 4\^2\)"):
        inst.points_of([16])
    big = E.HardInstance(13, seed=0, tries=1)
    with pytest.raises(DimensionError, match="iter_support"):
        big.support()


# ----------------------------------------------------------------------------- R-cube variant
@pytest.mark.parametrize("n", [1, 2, 3])
def test_cube_instance_matches_naive(rng, n):
    c = E.CubeInstance(n)
    boxes = naive.cube_boxes(n)
    assert abs(naive.boxes_gap(boxes) - c.delta_star) < 1e-15 and c.lipschitz_constant == 2.0
    S = c.support()
    assert np.array_equal(S.points, bits_of(np.arange(4 ** n), 2 * n).astype(float))
    assert np.array_equal(S.labels, inner_product_mod2(n))
    X = np.vstack([rng.random((30, 2 * n)) * 1.4 - 0.2, c.sample(30, rng).points])
    for label in (0, 1):
        dist, k = c.distance(X, label)
        np.testing.assert_allclose(dist, [naive.distance_to_label(boxes, x, label)
                                          for x in X.tolist()], rtol=1e-12, atol=1e-15)
    s = c.sample(500, seed=1)
    assert np.array_equal(c.target(s.points), s.labels.astype(float))
    assert np.array_equal(c.decode(s.points), s.bits)
    r = c.check_lipschitz(200, seed=0)
    assert r.ok and r.max_ratio["adversarial"] >= 1 - 1e-9


def test_cube_shift_is_affine_reflection():
    n = 2
    c = E.CubeInstance(n)
    s = c.sample(300, seed=3)
    for r, t in itertools.product(range(4), repeat=2):
        sg, off = c.shift_affine(r, t)
        moved = s.points * sg + off
        kk = (s.indices & 3 ^ r) + (((s.indices >> 2) ^ t) << n)
        lo, hi = c._box(kk)
        assert ((lo <= moved) & (moved <= hi)).all()
    with pytest.raises(ValueError, match="rounding only"):
        c.decode(np.zeros((1, 4)), method="nearest")
    assert c.to_dict()["diameter"] == 2.0 and "diameter" in c.summary()


# ----------------------------------------------------------------------------- large (slow)
@pytest.mark.slow
def test_certification_n20_agrees_with_numpy_enumeration():
    e = E.CodeEmbedding(20, 80, seed=0)
    A = e.weight_distribution()                  # numpy doubling + bitwise_count, no kernel
    assert A.sum() == 1 << 20 and A[0] == 1
    assert int(np.flatnonzero(A[1:])[0]) + 1 == e.min_distance
    assert E.random_code_distance_bound(20, 80) <= e.min_distance
    assert bin(naive.codeword(e.generator.tolist(), e.min_weight_message)).count("1") == e.min_distance


@pytest.mark.slow
@pytest.mark.parametrize("tau", [0.0, 0.15])
def test_target_equals_label_on_support_n8(tau):
    inst = E.HardInstance(8, tau=tau, seed=0)
    for S in inst.iter_support(chunk=1 << 14):
        assert np.abs(inst.target(S.points) - S.labels).max() <= 1e-12
        assert np.array_equal(inst.decode(S.points), S.bits)
    r = inst.check_lipschitz(2000, seed=0)
    assert r.ok and r.max_ratio["adversarial"] >= 1 - 1e-9


# ----------------------------------------------------------------------------- negative controls
# Each certified property above has a twin here that shows its check detects a violation.

@pytest.mark.parametrize("n", [3, 6, 9])
def test_negative_control_bad_generator_fails_the_code_bounds(n):
    """[I | 0] (a code of distance 1) must fail the search's random-code and Lipschitz claims."""
    m = 4 * n
    bad = E.CodeEmbedding.from_generator(np.hstack([np.eye(n, dtype=np.uint8),
                                                    np.zeros((n, m - n), dtype=np.uint8)]))
    assert bad.min_distance == 1 == naive.min_distance(bad.generator.tolist())[0]
    assert not E.random_code_distance_bound(n, m) <= bad.min_distance
    assert E.ip_lipschitz_bound(bad) == pytest.approx(math.sqrt(m / 2))   # the cube's blow-up
    assert E.check_embedding(bad).ok          # an injective code: the contract alone is not enough


def test_negative_control_overstated_distance_breaks_the_target(monkeypatch):
    """A certificate claiming d_C + 1 (one more than the truth) makes f_d miss the labels."""
    d = E.HardInstance(3, seed=0).embedding.min_distance
    monkeypatch.setattr(E.CodeEmbedding, "min_distance", property(lambda self: self._d + 1))
    inst = E.HardInstance(3, seed=0)
    assert inst.embedding.min_distance == d + 1
    S = inst.support()
    assert np.abs(inst.target(S.points) - S.labels).max() > 1e-3
    x0, x1, k0, k1 = inst.delta_star_witness()
    assert float(np.linalg.norm(x0 - x1)) < inst.delta_star - 1e-3   # the claimed gap is not real


@pytest.mark.parametrize("n,tau", [(2, 0.0), (3, 0.15)])
def test_negative_control_understated_lipschitz_constant_is_caught(n, tau, monkeypatch):
    inst = E.HardInstance(n, tau=tau, seed=0)
    assert inst.check_lipschitz(300, seed=n).ok
    monkeypatch.setattr(type(inst), "lipschitz_constant",
                        property(lambda self: 0.95 / self.delta_star))
    r = inst.check_lipschitz(300, seed=n)
    assert not r.ok and r.max_ratio["adversarial"] >= 1 / 0.95 - 1e-9


@pytest.mark.parametrize("make", [lambda: E.HardInstance(3, seed=0), lambda: E.CubeInstance(3)])
def test_support_and_ip_table_are_built_once_and_read_only(make):
    inst = make()
    S = inst.support()
    assert inst.support() is S and inst.ip_table() is S.labels
    for a in (S.points, S.bits, S.labels, S.indices):
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[0] = 0
    assert np.array_equal(S.labels, inner_product_mod2(3))
    assert np.array_equal(inst.labels_of(S.indices), S.labels)
    fresh = make()                                 # a new instance builds its own (equal) copy
    assert fresh.support() is not S and np.array_equal(fresh.support().points, S.points)
