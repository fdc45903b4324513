"""The sign-product construction of IP_n (circuits.ip_product) on the whole cube, against a
naive evaluation of its gates and against IP_n, and its gate counts."""

import numpy as np
import pytest

from circuits import inner_product_mod2, ip_depth2, parity_depth2, truth_table
from circuits.ip_product import (IP_BLOCKS, ip_block, ip_depth2_product,
                                 ip_depth2_product_size)
from circuits.utils.errors import InvalidArgumentError
from tests import naive


@pytest.mark.parametrize("k", sorted(IP_BLOCKS))
def test_stored_blocks_are_ip_k(k):
    c = ip_block(k)
    assert np.array_equal(naive.circuit_table_int64(c), inner_product_mod2(k))
    assert c.size == {1: 1, 2: 2, 3: 4}[k]


@pytest.mark.parametrize("k", sorted(IP_BLOCKS))
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_product_computes_ip_on_the_whole_cube(n, k):
    if k > n:
        pytest.skip("block larger than n")
    c = ip_depth2_product(n, k)
    kernel = truth_table(c)
    assert np.array_equal(kernel, naive.circuit_table_int64(c))
    assert np.array_equal(kernel, inner_product_mod2(n))
    assert c.depth == 2
    assert c.size == ip_depth2_product_size(n, k, ip_block(k).size)


def test_gate_counts_against_the_folklore_constructions():
    for n in (4, 5, 6):
        assert ip_depth2_product(n, 2).size == 3 * 2 ** (n - 2) - 1 < 2 ** n - 1
        assert ip_depth2_product(n, 1).size == 2 ** n - 1 < ip_depth2(n).size == n * 2 ** (n - 1)
    assert ip_depth2_product(4, 2).size == 11
    assert [ip_depth2_product(n, 3).size for n in (4, 5, 6)] == [9, 19, 39]


def test_a_block_that_is_not_ip_gives_a_wrong_circuit():
    # parity of 4 inputs has the right shape (4 inputs, depth 2) but is not IP_2: the product
    # is then not IP_3, so the check above can fail
    c = ip_depth2_product(3, parity_depth2(4))
    assert not np.array_equal(truth_table(c), inner_product_mod2(3))


def test_bad_blocks_are_refused():
    with pytest.raises(InvalidArgumentError, match="no stored IP_k block"):
        ip_depth2_product(4, 7)
    with pytest.raises(InvalidArgumentError, match="more pairs than n"):
        ip_depth2_product(1, 2)
    with pytest.raises(InvalidArgumentError, match="2k inputs"):
        ip_depth2_product(3, parity_depth2(3))
