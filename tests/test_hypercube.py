import numpy as np
import pytest
from hypothesis import given, strategies as st

from circuits import hypercube as hc
from circuits.utils.errors import DimensionError


@pytest.mark.parametrize("n", range(0, 9))
def test_points_index_roundtrip(n):
    p = hc.points(n)
    assert p.shape == (1 << n, n) and p.dtype == np.uint8
    assert hc.index_of(p).tolist() == list(range(1 << n))


@pytest.mark.parametrize("n", range(1, 9))
def test_points_match_unpackbits_little(n):
    k = np.arange(1 << n, dtype=np.uint16)
    bytes_ = k.view(np.uint8).reshape(-1, 2)
    ref = np.unpackbits(bytes_, axis=1, bitorder="little")[:, :n]
    assert np.array_equal(hc.points(n), ref)


def test_points_slice_and_bits_of():
    assert np.array_equal(hc.points(5, 7, 13), hc.points(5)[7:13])
    assert hc.bits_of([3, 4], 3).tolist() == [[1, 1, 0], [0, 0, 1]]
    with pytest.raises(DimensionError):
        hc.bits_of(8, 3)


@given(st.integers(1, 12), st.data())
def test_split_join(n, data):
    k = data.draw(st.integers(0, (1 << 2 * n) - 1))
    x, y = hc.split_index(k, n)
    assert int(hc.join_index(x, y, n)) == k
    assert int(x) == k % (1 << n) and int(y) == k // (1 << n)


def test_matrix_view_is_x_rows():
    n = 2
    t = np.zeros(16, dtype=np.uint8)
    t[int(hc.join_index(1, 2, n))] = 1           # x = 1, y = 2
    m = hc.as_matrix(t, n)
    assert m[1, 2] == 1 and m.sum() == 1
    assert np.array_equal(hc.from_matrix(m), t)


def test_signs():
    assert hc.signs([0, 1, 1]).tolist() == [1, -1, -1]


def test_check_exhaustive_refuses_with_estimate():
    with pytest.raises(DimensionError, match="allow_large"):
        hc.check_exhaustive(30)
    with pytest.raises(DimensionError, match="GiB"):
        hc.check_exhaustive(45, allow_large=True)
    assert hc.check_exhaustive(10) == 10


def test_bad_inputs():
    with pytest.raises(TypeError):
        hc.check_n_bits(2.5)
    with pytest.raises(DimensionError):
        hc.check_n_bits(-1)
    with pytest.raises(DimensionError, match="only 0 and 1"):
        hc.index_of([[0, 2]])
    with pytest.raises(DimensionError):
        hc.as_matrix(np.zeros(8), 2)


@pytest.mark.parametrize("n", range(1, 9))
def test_ip_values_equals_the_kernel_table_on_the_whole_cube(n):
    from circuits.functions import InnerProductMod2, inner_product_mod2, ip_values
    k = np.arange(1 << (2 * n), dtype=np.int64)
    table = inner_product_mod2(n)                       # numba kernel
    assert np.array_equal(ip_values(k, n), table)
    x, y = hc.split_index(k, n)                         # naive: sum of bit products, mod 2
    naive = np.array([sum(((a >> i) & 1) * ((b >> i) & 1) for i in range(n)) % 2
                      for a, b in zip(x.tolist(), y.tolist())], dtype=np.uint8)
    assert np.array_equal(table, naive)
    assert np.array_equal(InnerProductMod2(n)(hc.bits_of(k, 2 * n)), naive)
    assert InnerProductMod2(n).n_ones == int(naive.sum())
    with pytest.raises(DimensionError):
        ip_values([1 << (2 * n)], n)
    with pytest.raises(TypeError):
        ip_values([0.5], n)
