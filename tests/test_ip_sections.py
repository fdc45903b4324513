"""The hyperplane-section construction of IP_n (circuits.ip_sections) and the cover search behind
its blocks (circuits.analysis.synthesis.sections), on the whole cube."""

import itertools

import numpy as np
import pytest

from circuits import inner_product_mod2, ip_depth2, ip_depth2_product, truth_table
from circuits.analysis.synthesis.sections import is_section_cover, pure_sections, section_cover
from circuits.hypercube import points
from circuits.ip_sections import (IP_SECTION_BLOCKS, ip_depth2_sections,
                                  ip_depth2_sections_size, section_blocks)
from circuits.utils.errors import InvalidArgumentError
from tests import naive


def _naive_ip(k: int) -> np.ndarray:
    z = points(2 * k).astype(np.int64)
    return (z[:, :k] * z[:, k:]).sum(axis=1) % 2


@pytest.mark.parametrize("k", sorted(IP_SECTION_BLOCKS))
def test_stored_blocks_are_covers_by_sections(k):
    secs = IP_SECTION_BLOCKS[k]
    assert is_section_cover(k, secs)
    assert len(secs) == {1: 1, 2: 2, 3: 4, 4: 7}[k]
    # the sign-representation it stands for, point by point
    z = points(2 * k).astype(np.int64)
    P = 1 - 2 * sum(((z @ np.asarray(w)) == u).astype(np.int64) for w, u in secs)
    ip = _naive_ip(k)
    assert (P[ip == 0] == 1).all() and (P[ip == 1] <= -1).all()


def test_a_non_cover_is_refused_by_the_check():
    secs = IP_SECTION_BLOCKS[2]
    assert not is_section_cover(2, secs[:1])                           # misses ones
    assert not is_section_cover(2, [*secs, ((1, 0, 0, 0), 0)])         # holds zeros
    with pytest.raises(InvalidArgumentError, match="2k = 4 weights"):
        is_section_cover(2, [((1, 1), 2)])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8])
def test_sections_compute_ip_on_the_whole_cube(n):
    c = ip_depth2_sections(n)
    kernel = truth_table(c)
    assert np.array_equal(kernel, naive.circuit_table_int64(c))
    assert np.array_equal(kernel, inner_product_mod2(n))
    assert c.depth == 2
    assert c.size == ip_depth2_sections_size(n)
    blocks = section_blocks(n)
    terms = int(np.prod([len(IP_SECTION_BLOCKS[k]) + 1 for k in blocks]))
    assert c.size <= 2 * (terms - 1)
    # the overflow bound of the module docstring
    radices = int(np.prod([max(int(np.abs(np.asarray(w)).sum()) for w, _ in IP_SECTION_BLOCKS[k])
                           + 1 for k in blocks]))
    assert c.max_abs_weight <= 5 * radices
    assert int(np.abs(c.layers[1].weights).max()) <= 2 * int(
        np.prod([2 * len(IP_SECTION_BLOCKS[k]) + 1 for k in blocks]))


@pytest.mark.slow
@pytest.mark.parametrize("n", [9, 10])
def test_sections_compute_ip_at_n_9_and_10(n):
    c = ip_depth2_sections(n)
    assert np.array_equal(truth_table(c), inner_product_mod2(n))


def test_gate_counts_against_the_other_constructions():
    sizes = {n: ip_depth2_sections_size(n) for n in range(4, 13)}
    assert [sizes[n] for n in (4, 5, 6, 7, 8)] == [14, 22, 46, 78, 126]
    assert [ip_depth2_product(n, 3).size for n in (4, 5, 6)] == [9, 19, 39]
    for n in range(7, 13):                  # smaller than the sign product 5 2^(n-3) - 1 from 7
        assert sizes[n] < 5 * 2 ** (n - 3) - 1
    for n in (4, 5, 6):
        assert sizes[n] < ip_depth2(n).size
    # the growth: four more pairs multiply the terms by 8; 2 (8^q - 1) gates at n = 4q
    assert [sizes[4 * q] for q in (1, 2, 3)] == [2 * (8 ** q - 1) for q in (1, 2, 3)]
    for n in range(5, 9):
        assert sizes[n + 4] <= 8 * sizes[n] + 16


def test_a_wrong_block_gives_a_wrong_circuit(monkeypatch):
    # drop one section of the IP_4 cover: the product is no longer IP_n, and the check sees it
    broken = dict(IP_SECTION_BLOCKS)
    broken[4] = IP_SECTION_BLOCKS[4][1:]
    monkeypatch.setattr("circuits.ip_sections.IP_SECTION_BLOCKS", broken)
    assert not np.array_equal(truth_table(ip_depth2_sections(4)), inner_product_mod2(4))


@pytest.mark.parametrize("k, w, least", [(1, 1, 1), (2, 3, 2)])
def test_cover_search_finds_the_least_covers(k, w, least):
    r = section_cover(k, w)
    assert r["status"] == "optimal" and r["count"] == least
    assert is_section_cover(k, r["sections"])


def test_pure_sections_against_brute_force():
    # every section of IP_2's cube with |w| <= 1, by brute force over all forms and levels
    k, W = 2, 1
    z = points(2 * k).astype(np.int64)
    ip = _naive_ip(k)
    brute = set()
    for w in itertools.product(range(-W, W + 1), repeat=2 * k):
        v = z @ np.array(w)
        for u in np.unique(v):
            s = v == u
            if (ip[s] == 1).all():
                brute.add(np.packbits(s).tobytes())
    got = {np.packbits(m).tobytes() for _, _, m in pure_sections(k, W)}
    assert got == brute
    for w, u, m in pure_sections(k, W):
        assert np.array_equal((z @ np.array(w)) == u, m)


@pytest.mark.slow
def test_cover_search_at_three_pairs():
    r = section_cover(3, 4)
    assert r["status"] == "optimal" and r["count"] == 4
