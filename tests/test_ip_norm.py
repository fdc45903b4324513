"""The depth-3 IP nets of smaller path norm: exact on the whole cube (numba kernel against the
network's own forward pass), path norms measured against their closed forms."""

import numpy as np
import pytest

from embeddings import CodeEmbedding
from networks import constructions as cs
from networks.constructions.ip_norm import NETS, composed_error, cube_error, depth3_norm
from networks.separation.sampled import code_rows
from networks.sigma import DenseLayer, SigmaNetwork
from networks.separation.sampled_verdict import depth3_path_norm

BUILD = {"tri": cs.ip_depth3_relu, "balanced": cs.ip_depth3_balanced,
         "fourier": cs.ip_depth3_fourier}


def _naive_error(net, generator, n):
    """The twin: the SigmaNetwork forward pass on all 4^n embedded pairs."""
    N = 1 << n
    X = code_rows(generator, np.arange(N))
    a, b = np.divmod(np.arange(N * N), N)
    pts = np.concatenate([X[a], X[b]], axis=1)
    par = np.array([bin(int(x)).count("1") % 2 for x in (a & b)], dtype=float)
    return float(np.abs(net(pts) - par).max())


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("name", NETS)
def test_kernel_equals_forward_pass(n, name):
    code = CodeEmbedding(n, seed=0, tries=2)
    c = BUILD[name](n, code.m)
    assert cube_error(c.network, code.generator, n) == pytest.approx(
        _naive_error(c.network, code.generator, n), abs=1e-12)
    # a perturbed net is wrong somewhere, and both say by how much
    L1, L2, L3 = c.network.layers
    net = SigmaNetwork([L1, L2, DenseLayer(L3.weights, L3.bias + 0.25)], activation="relu")
    e = cube_error(net, code.generator, n)
    assert e == pytest.approx(_naive_error(net, code.generator, n), abs=1e-12) and e >= 0.25


@pytest.mark.parametrize("name", NETS)
def test_exact_on_the_whole_cube(name):
    for n in range(1, 8):
        code = CodeEmbedding(n, seed=0, tries=2)
        c = BUILD[name](n, code.m)
        assert cube_error(c.network, code.generator, n) < 1e-9
        assert composed_error(c.network, n, code.m) < 1e-9


@pytest.mark.slow
def test_exact_on_the_whole_cube_n12():
    code = CodeEmbedding(12, seed=0, tries=2)
    for name in ("tri", "balanced"):
        assert cube_error(BUILD[name](12, code.m).network, code.generator, 12) < 1e-9
    assert composed_error(cs.ip_depth3_fourier(12, code.m).network, 12, code.m) < 1e-9


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6, 9, 12])
def test_path_norms_measured_and_ordered(n):
    got = {}
    for name in NETS:
        c = BUILD[name](n)
        got[name] = depth3_path_norm(c.network)
        assert got[name] == pytest.approx(depth3_norm(n, name), rel=1e-12)
    if n >= 2:
        assert got["balanced"] < got["tri"]
    if n >= 4:
        assert got["fourier"] < got["balanced"]


def test_composed_error_refuses_a_dense_first_layer():
    from circuits.utils.errors import DepthsepError

    L1, L2, L3 = cs.ip_depth3_balanced(3).network.layers
    W = L1.weights.copy()
    W[0, 5] = 0.1
    net = SigmaNetwork([DenseLayer(W, L1.bias), L2, L3], activation="relu")
    with pytest.raises(DepthsepError, match="cube_error"):
        composed_error(net, 3, 12)
