"""The last memory bombs: an .npz whose members inflate far beyond the file, documents read at
bounded memory, and the fused-kernel cache bounded."""

from __future__ import annotations

import os
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

from circuits.utils.errors import DepthsepError


def _bomb(path, inflated: int):
    """A valid .npz whose one member is ``inflated`` bytes of zeros, deflated (about 1000x)."""
    from numpy.lib import format as npf

    import io

    head = io.BytesIO()
    npf.write_array_header_1_0(head, {"descr": "|u1", "fortran_order": False,
                                      "shape": (inflated,)})
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("w0.npy", "w", force_zip64=True) as fh:
            fh.write(head.getvalue())
            block = bytes(1 << 20)
            left = inflated
            while left:
                fh.write(block[: min(left, len(block))])
                left -= min(left, len(block))
    return path


def test_an_npz_bomb_is_refused_from_the_zip_directory(tmp_path):
    from networks.interop import load_state_dict

    p = _bomb(tmp_path / "bomb.npz", 200 << 20)
    assert p.stat().st_size < 1 << 20
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(DepthsepError, match="inflate.*times the file"):
            load_state_dict(p)
        took = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert took < 2.0 and peak < 8 << 20, (took, peak)
    # control: the same content stored as save_state_dict writes it loads, and a trusted bomb
    # loads with the ratio lifted
    from networks.interop import save_state_dict

    save_state_dict({"w0": np.zeros(3 << 20, dtype=np.uint8)}, tmp_path / "plain.npz")
    assert load_state_dict(tmp_path / "plain.npz")["w0"].shape == (3 << 20,)
    small = _bomb(tmp_path / "small.npz", 4 << 20)
    assert load_state_dict(small, max_ratio=None)["w0"].shape == (4 << 20,)


def test_depthsep_info_refuses_the_bomb_at_once(tmp_path, capsys):
    from experiments import cli

    p = _bomb(tmp_path / "bomb.npz", 200 << 20)
    t0 = time.perf_counter()
    rc = cli.main(["info", str(p)])
    assert rc == 1 and time.perf_counter() - t0 < 5.0
    assert "times the file" in capsys.readouterr().err


def _rss() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) << 10
    raise RuntimeError("no VmRSS")                              # pragma: no cover


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_compiled_circuit_kernels_stay_bounded_per_process(tmp_path, monkeypatch):
    """numba never frees machine code, so what bounds a loop over many circuits is how many
    distinct kernels ``auto`` compiles in one process: measured per kernel here, the whole
    budget must stay under 64 MiB (it was 256 kernels, about 400 MiB)."""
    import numba

    import circuits as c
    from circuits import _bitsliced_cache as kc
    from tests.test_bitsliced import random_circuit

    if numba.config.DISABLE_JIT:
        pytest.skip("no compiled kernels with the JIT off")
    monkeypatch.setenv("DEPTHSEP_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(4242)
    c.count_ones(random_circuit(rng, 13, (3,)), kernel="fused")     # the driver, compiled once
    before = _rss()
    k = 3
    for _ in range(k):
        c.count_ones(random_circuit(rng, 13, (3,)), kernel="fused")
    per_kernel = max((_rss() - before) / k, 1 << 20)
    budget = getattr(kc, "SHIPPED_MAX_PROCESS_KERNELS", kc.MAX_PROCESS_KERNELS)
    assert budget * per_kernel <= 64 << 20, (budget, per_kernel)


def _peak_ratio(load, path) -> float:
    import gc

    gc.collect()
    tracemalloc.start()
    try:
        load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / path.stat().st_size


@pytest.mark.parametrize("shape", ["ones", "wide"])
def test_circuit_documents_load_within_ten_bytes_per_byte(tmp_path, shape):
    import json

    from circuits.io import load_circuit

    n, g = (64, 40_000) if shape == "ones" else (4000, 600)
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"format": "depthsep.circuit", "version": 1, "kind": "layered",
                             "n_inputs": n,
                             "layers": [{"weights": [[1] * n] * g, "thresholds": [1] * g},
                                        {"weights": [[1] * g], "thresholds": [1]}]},
                            separators=(",", ":")))
    assert p.stat().st_size > 4 << 20
    assert _peak_ratio(load_circuit, p) <= 10.0


@pytest.mark.parametrize("shape", ["zeros", "random"])
def test_network_documents_load_within_ten_bytes_per_byte(tmp_path, shape):
    import json

    from networks.sigma import FORMAT, FORMAT_VERSION, SigmaNetwork

    p = tmp_path / "n.json"
    if shape == "zeros":
        n = 400_000
        p.write_text(json.dumps({"format": FORMAT, "version": FORMAT_VERSION,
                                 "activation": "relu",
                                 "layers": [{"weights": [[0.0]] * n, "bias": [0.0] * n},
                                            {"weights": [[0.0] * n], "bias": [0.0]}]},
                                separators=(",", ":")))
    else:
        SigmaNetwork.random([100, 2000, 100, 1], "relu", seed=0, bias_scale=0.1).save(p)
    assert p.stat().st_size > 4 << 20
    net = SigmaNetwork.load(p)
    assert net.dims[0] in (1, 100)
    assert _peak_ratio(SigmaNetwork.load, p) <= 10.0
