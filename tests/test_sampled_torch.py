"""The optional PyTorch backend of the sampled mode (networks.separation._torch_sampled): the
grid step and the estimator's forward against the numpy twin and the numba kernel, on torch's
CPU and, where present, on a CUDA GPU; the same seeded run on both paths; clear errors.
Skips without torch (a large optional wheel), except the error checks that need no torch."""

import sys

import numpy as np
import pytest

from embeddings import HardInstance
from circuits.utils.errors import InvalidArgumentError
from networks.separation import _torch_sampled as T
from networks.separation import sampled as S

RTOL = 1e-10       # float64 on both sides; only the summation order differs


def _devices():
    torch = pytest.importorskip("torch")
    out = ["cpu"]
    if torch.cuda.is_available():
        out.append("cuda")
    return out


def _net(m, w, seed):
    rng = np.random.default_rng(seed)
    return S.SampledNet(rng.normal(size=(w, m)), rng.normal(size=(w, m)), rng.normal(size=w) * 0.3,
                        rng.normal(size=w) / w, float(rng.normal() * 0.3))


def _rel(p, q):
    p, q = np.asarray(p, float), np.asarray(q, float)
    return float(np.max(np.abs(p - q)) / max(float(np.max(np.abs(p))), 1e-300))


@pytest.mark.parametrize("penalty", [0.0, 0.01])
@pytest.mark.parametrize("ka, kb, w, max_terms", [(7, 5, 3, None), (33, 17, 12, 200)])
def test_grid_step_matches_numpy_twin_and_kernel(ka, kb, w, max_terms, penalty):
    """max_terms = 200 forces row blocks of a few rows; negative control: a perturbed net fails."""
    m = 11
    rng = np.random.default_rng(ka)
    XA, XB = rng.normal(size=(ka, m)), rng.normal(size=(kb, m))
    Y = (rng.random((ka, kb)) < 0.5).astype(float)
    net = _net(m, w, ka + w)
    twin = S.grid_loss_and_gradient(net, XA, XB, Y, penalty, kernel=False)
    kern = S.grid_loss_and_gradient(net, XA, XB, Y, penalty, kernel=True)
    for device in _devices():
        dev = T.resolve_device(device)
        got = T.grid_loss_and_gradient(net, XA, XB, Y, penalty, dev, max_terms=max_terms)
        for ref in (twin, kern):
            assert got[0] == pytest.approx(ref[0], rel=RTOL)
            assert got[1] == pytest.approx(ref[1], rel=RTOL)
            assert max(_rel(p, q) for p, q in zip(ref[2], got[2])) <= RTOL
        other = S.SampledNet(net.WA + 1e-3, net.WB, net.b, net.u, net.u0)
        bad = T.grid_loss_and_gradient(other, XA, XB, Y, penalty, dev)
        assert max(_rel(p, q) for p, q in zip(twin[2], bad[2])) > 1e3 * RTOL


def test_forward_matches_sampled_net():
    m, w = 9, 6
    rng = np.random.default_rng(4)
    XA, XB = rng.normal(size=(50, m)), rng.normal(size=(50, m))
    net = _net(m, w, 4)
    for device in _devices():
        out = T.forward(net, XA, XB, T.resolve_device(device))
        assert _rel(net(XA, XB), out) <= RTOL


def test_seeded_run_and_estimate_agree_across_paths():
    """The same seeded training (pairs, labels, Adam on the host) and the same estimator: the
    torch path ends where the numba path ends, to float64 rounding, with the same interval."""
    n = 8
    inst = HardInstance(n, seed=0)
    G = inst.embedding.generator
    ref = S.train_sampled(n, 6, "majand", generator=G, steps=25, grid=16, lr=0.01, seed=3)
    est_ref = S.estimate(ref.net, "majand", n=n, generator=G, pairs=20000, chunk=4096, seed=5)
    for device in _devices():
        st = S.train_sampled(n, 6, "majand", generator=G, steps=25, grid=16, lr=0.01, seed=3,
                             device=device)
        for a, b in zip(S._params(ref.net), S._params(st.net)):
            assert _rel(a, b) <= 1e-8
        est = S.estimate(st.net, "majand", n=n, generator=G, pairs=20000, chunk=4096, seed=5,
                         device=device)
        assert est["device"].startswith("torch")
        for key in ("rho", "rho_h", "mse"):
            assert est[key]["mean"] == pytest.approx(est_ref[key]["mean"], rel=1e-8, abs=1e-12)
            assert est[key]["ci_eb"] == pytest.approx(est_ref[key]["ci_eb"], rel=1e-6)
        assert est["pairs"] == est_ref["pairs"]


def test_device_errors_name_the_fix(monkeypatch):
    assert T.resolve_device(None) is None
    with pytest.raises(InvalidArgumentError, match="device must be"):
        T.resolve_device(3)
    monkeypatch.setitem(sys.modules, "torch", None)            # as if torch were not installed
    with pytest.raises(InvalidArgumentError, match=r"pip install -e '\.\[torch\]'"):
        T.resolve_device("cuda")
    with pytest.raises(InvalidArgumentError, match=r"pip install -e '\.\[torch\]'"):
        S.estimate(_net(4, 2, 0), "ip", n=2, generator=HardInstance(2, seed=0).embedding.generator,
                   pairs=10, device="cuda")


def test_device_errors_with_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(InvalidArgumentError, match="torch device name"):
        T.resolve_device("no-such-device")
    if not torch.cuda.is_available():
        with pytest.raises(InvalidArgumentError, match="no CUDA GPU"):
            T.resolve_device("cuda")
