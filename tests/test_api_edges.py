"""Errors raised on purpose at the API's edges are DepthsepErrors with a message that names the
argument and the fix (the README's promise), not numpy's or the OS's bare error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from circuits.threshold import ThresholdCircuit
from circuits.utils.errors import DepthsepError

ROOT = Path(__file__).resolve().parents[1]
XOR = ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1)


def test_negative_seeds_name_the_seed():
    from embeddings import HardInstance
    from networks.sigma import SigmaNetwork

    with pytest.raises(DepthsepError, match=r"seed must be a non-negative integer.*-1"):
        HardInstance(8, seed=-1)
    with pytest.raises(DepthsepError, match=r"seed must be a non-negative integer.*-3"):
        SigmaNetwork.random([4, 3, 1], "relu", seed=-3)
    with pytest.raises(DepthsepError, match="seed must be an int"):
        SigmaNetwork.random([4, 3, 1], "relu", seed="1")


def test_saving_to_a_directory_names_the_directory(tmp_path):
    from circuits.io import save_circuit

    for target in (tmp_path, str(tmp_path) + "/"):
        with pytest.raises(DepthsepError, match=re.escape(str(tmp_path)) + ".*is a directory"):
            save_circuit(XOR, target)
    assert list(tmp_path.iterdir()) == []                  # no temporary file left behind
    assert save_circuit(XOR, tmp_path / "xor.json").is_file()


def test_an_unknown_target_name_is_a_depthsep_error():
    from circuits import count_disagreements

    with pytest.raises(DepthsepError, match=r"unknown target 'ipp'.*choose one of"):
        count_disagreements(XOR, "ipp")
    with pytest.raises(ValueError):                        # still a ValueError for old callers
        count_disagreements(XOR, "ipp")


def test_a_string_where_an_int_is_needed_is_a_depthsep_error():
    from circuits.constructions import ip_depth3

    with pytest.raises(DepthsepError, match=r"n must be an int.*'5'"):
        ip_depth3("5")
    with pytest.raises(TypeError):                         # still a TypeError for old callers
        ip_depth3("5")


def test_device_is_checked_while_the_arguments_are_parsed(capsys):
    from experiments import sampled as E

    p = E.build_parser()
    for bad in ("no-such-device", "cuda:99"):
        with pytest.raises(SystemExit) as exc:
            p.parse_args(["--device", bad])
        assert exc.value.code == 2
        assert "--device" in capsys.readouterr().err


def test_ip_demo_json_without_out_names_no_path_that_is_then_removed():
    proc = subprocess.run([sys.executable, "-m", "experiments.cli", "ip-demo", "--n-max", "2",
                           "--json"], cwd=str(ROOT), capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    files = json.loads(proc.stdout)["files"]
    assert "ip_demo.json" in files and any(k.startswith("circuits/") for k in files)
    for line in proc.stderr.splitlines():
        if line.startswith("wrote "):
            for path in re.findall(r"(/\S+)", line):
                assert os.path.exists(path), f"logged {path!r}, which does not exist: {line}"
