"""Tests of the embeddings package: kernels against naive twins, the code embedding and the
embedding contract (the hard instance and the R-cube variant: tests/test_hard_instance.py)."""

import itertools
import json
import math

import numpy as np
import pytest

import embeddings as E
from circuits.utils.errors import DimensionError
from circuits.hypercube import bits_of, index_of, points
from embeddings import _kernels
from embeddings.code import _gray_min_table, _pack_rows, _unpack_words
from tests import naive_embeddings as naive


def random_generator(rng, n, m, systematic=True):
    p = rng.integers(0, 2, size=(n, m - n) if systematic else (n, m), dtype=np.uint8)
    return np.hstack([np.eye(n, dtype=np.uint8), p]) if systematic else p


# ----------------------------------------------------------------------------- kernels vs twins
@pytest.mark.parametrize("n,m", [(1, 1), (1, 5), (2, 3), (3, 12), (5, 20), (6, 70), (8, 32),
                                 (9, 130), (10, 40)])
def test_certified_min_distance_matches_naive(rng, n, m):
    for systematic in (True, False):
        for _ in range(3):
            g = random_generator(rng, n, m, systematic)
            d, e = E.certified_min_distance(g)
            nd, witnesses = naive.min_distance(g.tolist())
            assert d == nd
            if d > 0 or not systematic:
                assert e in witnesses


def test_certified_min_distance_detects_non_injective_code():
    g = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]], dtype=np.uint8)   # row 2 = row 0 ^ row 1
    assert E.certified_min_distance(g) == (0, 7)


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 7, 64, 200])
def test_gray_kernel_independent_of_blocks_and_stops_early(rng, n_blocks):
    n, m = 7, 28
    gens = [random_generator(rng, n, m) for _ in range(3)]
    rows = np.stack([_pack_rows(g) for g in gens])
    want = [naive.min_distance(g.tolist())[0] for g in gens]
    best, where = _gray_min_table(rows, n, n_blocks, 0)
    assert best.shape == (3, n_blocks)
    assert best.min(axis=1).tolist() == want
    for t, g in enumerate(gens):
        blk = int(np.argmin(best[t]))
        assert bin(naive.codeword(g.tolist(), int(where[t, blk]))).count("1") == want[t]
    d = want[0]
    # early stop: with stop_at >= d some block reports a weight <= stop_at
    best, _ = _gray_min_table(rows[:1], n, n_blocks, d + 2)
    assert int(best.min()) <= d + 2
    # with stop_at < d the enumeration is complete and exact
    best, _ = _gray_min_table(rows[:1], n, n_blocks, d - 1)
    assert int(best.min()) == d


def test_batched_and_sequential_search_agree(monkeypatch):
    import embeddings.code as code
    a = E.CodeEmbedding(6, seed=4, tries=30)
    monkeypatch.setattr(code, "_BATCH_WORK", 0)
    b = E.CodeEmbedding(6, seed=4, tries=30)
    assert np.array_equal(a.generator, b.generator) and a.min_distance == b.min_distance


def test_pack_unpack_roundtrip(rng):
    for m in (1, 7, 64, 65, 130):
        bits = rng.integers(0, 2, size=(5, m), dtype=np.uint8)
        w = _pack_rows(bits)
        assert w.shape == (5, (m + 63) // 64) and w.dtype == np.uint64
        assert np.array_equal(_unpack_words(w, m), bits)
        assert [naive.codeword([list(r)], 1) for r in bits.tolist()] == \
            [sum(int(x) << (64 * i) for i, x in enumerate(row)) for row in w.tolist()]


@pytest.mark.parametrize("n,m,half", [(2, 5, 0.0), (3, 12, 0.0), (3, 12, 0.02), (4, 70, 0.01)])
def test_sqdist_table_matches_naive(rng, n, m, half):
    g = random_generator(rng, n, m)
    words = _pack_rows(np.array([[(naive.codeword(g.tolist(), a) >> j) & 1 for j in range(m)]
                                 for a in range(1 << n)], dtype=np.uint8))
    s = 1 / math.sqrt(2 * m)
    X = rng.normal(scale=s, size=(6, m))
    X[0] = naive.embed(g.tolist(), 3 % (1 << n), s)        # an image: distance 0 to itself
    got = _kernels._sqdist_table(words, X, s, half)
    want = naive.sqdist_table(g.tolist(), X.tolist(), s, half)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    if half == 0.0:
        assert got[0, 3 % (1 << n)] == 0.0


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_min_over_label_matches_brute_force(rng, n):
    K = 1 << n
    U = rng.random((5, K))
    V = rng.random((5, K))
    Ui = rng.integers(0, 3, size=(5, K)).astype(np.float64)   # many ties
    Vi = rng.integers(0, 3, size=(5, K)).astype(np.float64)
    for A, B in ((U, V), (Ui, Vi)):
        for label in (0, 1):
            vals, arg = _kernels._min_over_label(A, B, np.int64(label))
            want = naive.min_over_label(A.tolist(), B.tolist(), label)
            assert vals.tolist() == want
            for i, k in enumerate(arg.tolist()):
                if k < 0:
                    assert want[i] == math.inf
                    continue
                a, b = k & (K - 1), k >> n
                assert naive.ip(k, n) == label and A[i, a] + B[i, b] == want[i]


# ----------------------------------------------------------------------------- code embedding
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_code_embedding_geometry_exact(n):
    e = E.CodeEmbedding(n, seed=n)
    m = e.dim
    assert (e.n_bits, m) == (n, 4 * n)
    G = e.generator
    assert np.array_equal(G[:, :n], np.eye(n, dtype=np.uint8)) and not G.flags.writeable
    Z = points(n)
    X = e(Z)
    assert X.dtype == np.float64 and X.shape == (1 << n, m)
    np.testing.assert_allclose((X ** 2).sum(axis=1), 0.5, rtol=0, atol=1e-12)
    assert set(np.abs(X).ravel().tolist()) == {1 / math.sqrt(2 * m)}
    C = e.encode(Z)
    for a, b in itertools.combinations(range(1 << n), 2):
        dh = int((C[a] != C[b]).sum())
        assert abs(float(((X[a] - X[b]) ** 2).sum()) - 2 * dh / m) < 1e-12
    d, _ = naive.min_distance(G.tolist())
    assert e.min_distance == d
    assert bin(naive.codeword(G.tolist(), e.min_weight_message)).count("1") == d
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(axis=2))
    D[np.diag_indices_from(D)] = np.inf
    assert abs(D.min() - e.min_euclidean_distance) < 1e-12
    assert abs(e.min_euclidean_distance - math.sqrt(2 * d / m)) < 1e-12


@pytest.mark.parametrize("n", range(1, 13))
def test_decode_inverts_embed(n):
    e = E.CodeEmbedding(n, seed=0, tries=20)
    Z = points(n)
    X = e(Z)
    assert np.array_equal(e.decode(X), Z)
    if n <= 9:
        assert np.array_equal(e.decode(X, method="nearest"), Z)


def test_nearest_decoding_corrects_noise(rng):
    e = E.CodeEmbedding(6, seed=0)
    Z = rng.integers(0, 2, size=(300, 6), dtype=np.uint8)
    X = e(Z)
    noise = rng.normal(size=X.shape)
    noise *= (0.49 * e.min_euclidean_distance) / np.linalg.norm(noise, axis=1, keepdims=True)
    assert np.array_equal(e.decode(X + noise, method="nearest"), Z)
    assert np.array_equal(e.nearest(X), index_of(Z))


@pytest.mark.parametrize("n", [1, 3, 5])
def test_xor_shift_is_a_sign_flip_exactly(n):
    e = E.CodeEmbedding(n, seed=1, tries=10)
    X = e.embed_indices(np.arange(1 << n))
    for r in range(1 << n):
        flip = e.sign_flip(r)
        assert set(flip.tolist()) <= {-1.0, 1.0}
        assert np.array_equal(flip, e.sign_flip(bits_of(r, n)))
        assert np.array_equal(X[np.arange(1 << n) ^ r], X * flip)


def test_codewords_masks_and_words(rng):
    e = E.CodeEmbedding(5, m=20, seed=3)
    masks = e.codewords()
    assert masks.dtype == np.uint64
    assert masks.tolist() == [naive.codeword(e.generator.tolist(), a) for a in range(32)]
    assert not masks.flags.writeable
    big = E.CodeEmbedding(4, m=70, seed=3, tries=5)
    with pytest.raises(DimensionError, match="codeword_words"):
        big.codewords()
    words = big.codeword_words()
    assert words.shape == (16, 2)
    assert [sum(int(x) << (64 * i) for i, x in enumerate(r)) for r in words.tolist()] == \
        [naive.codeword(big.generator.tolist(), a) for a in range(16)]
    assert np.array_equal(_unpack_words(words, 70), big.encode(points(4)))


def test_weight_distribution_matches_naive():
    e = E.CodeEmbedding(6, seed=2)
    A = e.weight_distribution()
    want = np.zeros(e.dim + 1, dtype=np.int64)
    for a in range(64):
        want[bin(naive.codeword(e.generator.tolist(), a)).count("1")] += 1
    assert A.tolist() == want.tolist()


@pytest.mark.parametrize("n", range(2, 13))
def test_search_beats_random_code_bound_and_singleton(n):
    e = E.CodeEmbedding(n)
    m = 4 * n
    assert E.random_code_distance_bound(n, m) <= e.min_distance <= m - n + 1


def test_random_code_bound_is_valid_over_all_codes():
    # every P for n = 2, m = 6 (2^8 codes): the fraction of codes below the bound <= failure
    n, m = 2, 6
    for failure in (0.1, 0.5, 0.9):
        bound = E.random_code_distance_bound(n, m, failure)
        bad = 0
        for bits in itertools.product((0, 1), repeat=n * (m - n)):
            g = np.hstack([np.eye(n, dtype=np.uint8), np.array(bits, np.uint8).reshape(n, m - n)])
            bad += naive.min_distance(g.tolist())[0] < bound
        assert bad / 2 ** (n * (m - n)) <= failure
    with pytest.raises(ValueError, match="failure"):
        E.random_code_distance_bound(4, 16, 1.5)


def test_search_is_reproducible_and_monotone_in_tries():
    a, b = E.CodeEmbedding(7, seed=11), E.CodeEmbedding(7, seed=11)
    assert np.array_equal(a.generator, b.generator)
    ds = [E.CodeEmbedding(7, seed=11, tries=t).min_distance for t in (1, 5, 25, 200)]
    assert ds == sorted(ds)
    g = np.random.default_rng(5)
    assert E.CodeEmbedding(4, seed=g, tries=3).seed == "generator"


def test_from_generator_and_to_dict():
    g = np.array([[1, 0, 1, 1, 0], [0, 1, 0, 1, 1]], dtype=np.uint8)
    e = E.CodeEmbedding.from_generator(g)
    assert e.min_distance == 3 and e.tries == 0
    d = e.to_dict()
    assert d["generator"] == ["10110", "01011"] and json.loads(json.dumps(d)) == d
    with pytest.raises(DimensionError, match="systematic"):
        E.CodeEmbedding.from_generator([[0, 1, 1], [1, 0, 1]])
    with pytest.raises(DimensionError, match="only 0 and 1"):
        E.CodeEmbedding.from_generator([[1, 2]])


def test_code_embedding_errors():
    with pytest.raises(DimensionError, match="m must be >= n"):
        E.CodeEmbedding(5, m=4)
    with pytest.raises(DimensionError, match="exceeds MAX_CODE_BITS = 32"):
        E.CodeEmbedding(33)
    with pytest.raises(DimensionError, match="between 1 and"):
        E.CodeEmbedding(0)
    with pytest.raises(DimensionError, match="MAX_CODE_LENGTH"):
        E.CodeEmbedding(3, m=5000)
    with pytest.raises(ValueError, match="tries"):
        E.CodeEmbedding(3, tries=0)
    with pytest.raises(TypeError, match="m must be an int"):
        E.CodeEmbedding(3, m=12.0)
    e = E.CodeEmbedding(3, seed=0, tries=2)
    with pytest.raises(DimensionError, match=r"shape \(n_points, 3\)"):
        e([[0, 1]])
    with pytest.raises(DimensionError, match="only 0 and 1"):
        e([[0, 1, 2]])
    with pytest.raises(DimensionError, match=r"shape \(n_points, 12\)"):
        e.decode(np.zeros((2, 5)))
    with pytest.raises(DimensionError, match="finite"):
        e.decode(np.full((1, 12), np.nan))
    with pytest.raises(ValueError, match="'round' or 'nearest'"):
        e.decode(np.zeros((1, 12)), method="magic")
    assert e.affine() is None


# ----------------------------------------------------------------------------- contract
EMBEDDINGS = {
    "cube1": lambda: E.ScaledCube(1),
    "cube5": lambda: E.ScaledCube(5),
    "cube7-r1": lambda: E.ScaledCube(7, radius=1.0),
    "code1": lambda: E.CodeEmbedding(1, seed=0),
    "code4": lambda: E.CodeEmbedding(4, seed=0),
    "code6-m30": lambda: E.CodeEmbedding(6, m=30, seed=1, tries=20),
    "code3-m70": lambda: E.CodeEmbedding(3, m=70, seed=0, tries=5),
    "cube3xcube2": lambda: E.ProductEmbedding(E.ScaledCube(3), E.ScaledCube(2)),
    "code4xcube2": lambda: E.ProductEmbedding(E.CodeEmbedding(4, seed=0), E.ScaledCube(2)),
    "instance3-pair": lambda: E.HardInstance(3, seed=0).pair_embedding,
}


@pytest.mark.parametrize("name", sorted(EMBEDDINGS))
def test_embedding_contract(name):
    emb = EMBEDDINGS[name]()
    assert isinstance(emb, E.Embedding)
    report = E.check_embedding(emb)
    assert report.ok and report.n_points == 1 << emb.n_bits
    assert report.max_norm <= 1 + 1e-12
    if emb.affine() is not None:
        assert report.affine_max_error <= 1e-12
    assert report.decode_mismatches == 0


class _Broken:
    """An embedding that breaks every clause (the contract must catch it)."""
    n_bits, dim = 2, 2

    def __call__(self, bits):
        return np.asarray(bits, dtype=np.float64) * 1.5

    def affine(self):
        return np.eye(2), np.ones(2)

    def decode(self, x):
        return np.zeros((len(x), 2), dtype=np.uint8)


def test_contract_catches_violations():
    r = E.check_embedding(_Broken(), raise_on_failure=False)
    assert not r.ok and len(r.failures) == 3
    assert any("unit ball" in f for f in r.failures)
    with pytest.raises(AssertionError, match="breaks the embedding contract"):
        E.check_embedding(_Broken())
    with pytest.raises(TypeError, match="Embedding protocol"):
        E.check_embedding(object())


def test_scaled_cube_and_lipschitz_blow_up():
    for n in (1, 2, 8, 32, 50):
        c = E.ScaledCube(n)
        assert abs(c.min_euclidean_distance - math.sqrt(2 / n)) < 1e-12
        assert abs(E.ip_lipschitz_bound(c) - math.sqrt(n / 2)) < 1e-12
    # the code keeps the constant bounded: sqrt(m / (2 d_C)) with d_C / m bounded below
    for n in (8, 12):
        e = E.CodeEmbedding(n)
        assert abs(E.ip_lipschitz_bound(e) - math.sqrt(4 * n / (2 * e.min_distance))) < 1e-12
        assert E.ip_lipschitz_bound(e) < 1.6 < E.ip_lipschitz_bound(E.ScaledCube(n))
    c = E.ScaledCube(4)
    Z = points(4)
    X = c(Z)
    for r in range(16):
        assert np.array_equal(X[np.arange(16) ^ r], X * c.sign_flip(r))
    with pytest.raises(DimensionError, match="radius"):
        E.ScaledCube(3, radius=1.5)
    with pytest.raises(DimensionError, match="radius 1/sqrt"):
        E.ProductEmbedding(E.ScaledCube(2, radius=1.0), E.ScaledCube(2))
    with pytest.raises(TypeError, match="Embedding"):
        E.ProductEmbedding(E.ScaledCube(2), "cube")
