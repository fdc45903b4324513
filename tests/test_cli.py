"""The ``depthsep`` command line (experiments/cli.py): dispatch, --json, exit codes, file checks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import circuits
from experiments import cli

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------------------------ top level
def test_help_lists_every_command(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0
    for name in [*cli.EXPERIMENTS, *cli.FILE_COMMANDS]:
        assert f"  {name}" in out


def test_no_command_is_a_usage_error(capsys):
    rc, out, err = run(capsys)
    assert rc == 2 and out == "" and "usage: depthsep" in err


def test_version(capsys):
    rc, out, _ = run(capsys, "--version")
    assert rc == 0 and out.strip() == f"depthsep {circuits.__version__}"


def test_unknown_command_suggests(capsys):
    rc, out, err = run(capsys, "redcue")
    assert rc == 2 and out == ""
    assert "unknown command 'redcue'" in err and "did you mean 'reduce'" in err


def test_missing_experiment_module_is_clear(capsys, monkeypatch):
    monkeypatch.setitem(cli.EXPERIMENTS, "future", ("experiments.no_such_experiment_xyz", "later"))
    rc, out, err = run(capsys, "future", "--n", "3")
    assert rc == 2 and out == ""
    assert "no module experiments.no_such_experiment_xyz" in err and "not part of this version" in err


@pytest.mark.parametrize("command", ["ceiling", "radial"])
def test_new_experiments_dispatch_or_explain(capsys, command):
    """ceiling/radial land from other branches: either --help works or the message says why not."""
    rc, out, err = run(capsys, command, "--help")
    if rc == 2:
        assert f"no module {cli.EXPERIMENTS[command][0]}" in err
    else:
        assert rc == 0 and "usage" in out.lower()


def test_experiment_help_is_forwarded(capsys):
    rc, out, _ = run(capsys, "reduce", "--help")
    assert rc == 0 and "--n" in out and "--activation" in out


def test_bad_experiment_option_exits_2(capsys):
    rc, _, err = run(capsys, "ip-demo", "--no-such-option")
    assert rc == 2 and "unrecognized arguments" in err


# ------------------------------------------------------------------------------- ip-demo
def test_ip_demo_writes_json(capsys, tmp_path):
    rc, out, _ = run(capsys, "ip-demo", "--n-max", "3", "--depth2-n-max", "2", "--out", str(tmp_path))
    assert rc == 0 and "all circuits compute IP mod 2" in out
    rec = json.loads((tmp_path / "ip_demo.json").read_text())
    assert rec["ok"] is True and len(rec["rows"]) == 3 + 2
    row = rec["rows"][0]
    assert row["hidden_gates"] == 2 and row["gates_with_output"] == 3  # ip_depth3(1): 2n, 2n+1


def test_ip_demo_json_on_stdout_logs_on_stderr(capsys):
    rc, out, err = run(capsys, "ip-demo", "--n-max", "2", "--depth2-n-max", "1", "--json")
    assert rc == 0
    rec = json.loads(out)  # stdout is exactly one JSON document
    assert rec["command"] == "ip-demo" and rec["exit_code"] == 0 and rec["out"] is None
    assert rec["files"]["ip_demo.json"]["ok"] is True
    assert "ip_depth3" in err  # the table went to stderr


def test_json_keeps_user_out_dir(capsys, tmp_path):
    rc, out, _ = run(capsys, "--json", "ip-demo", "--n-max", "1", f"--out={tmp_path}")
    assert rc == 0 and json.loads(out)["out"] == str(tmp_path)
    assert (tmp_path / "ip_demo.json").is_file()


# -------------------------------------------------------------------------- file commands
@pytest.fixture
def ip3_file(tmp_path):
    return str(circuits.save_circuit(circuits.ip_depth3(3), tmp_path / "ip3.json"))


def test_check_agrees(capsys, ip3_file):
    rc, out, _ = run(capsys, "check", ip3_file, "--target", "ip")
    assert rc == 0 and "0 of 64 inputs differ" in out


def test_check_disagreement_exits_1_with_counterexample(capsys, ip3_file):
    rc, out, _ = run(capsys, "check", ip3_file, "--target", "parity", "--json")
    assert rc == 1
    rec = json.loads(out)
    expect = circuits.count_disagreements(circuits.ip_depth3(3), "parity")
    assert rec["disagreements"] == expect.count > 0
    assert rec["first_counterexample_index"] == expect.index
    assert rec["first_counterexample_bits"] == expect.counterexample.tolist()


@pytest.mark.parametrize("fmt", ["npy", "txt", "json", "json-object"])
def test_check_against_truth_table_files(capsys, ip3_file, tmp_path, fmt):
    table = circuits.inner_product_mod2(3)
    if fmt == "npy":
        path = tmp_path / "t.npy"
        np.save(path, table)
    elif fmt == "txt":
        path = tmp_path / "t.txt"
        path.write_text("".join(map(str, table.tolist())) + "\n")
    else:
        path = tmp_path / "t.json"
        doc = table.tolist() if fmt == "json" else {"truth_table": table.tolist()}
        path.write_text(json.dumps(doc))
    rc, _, _ = run(capsys, "check", ip3_file, "--target", str(path))
    assert rc == 0
    flipped = table.copy()
    flipped[5] ^= 1
    np.save(tmp_path / "f.npy", flipped)
    rc, out, _ = run(capsys, "check", ip3_file, "--target", str(tmp_path / "f.npy"), "--json")
    assert rc == 1 and json.loads(out)["first_counterexample_index"] == 5


@pytest.mark.parametrize(
    "content, match",
    [
        ("0120", "only the characters 0 and 1"),
        ("011", "power-of-two"),
    ],
)
def test_check_bad_truth_table_file(capsys, ip3_file, tmp_path, content, match):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    rc, out, err = run(capsys, "check", ip3_file, "--target", str(path))
    assert rc == 1 and out == "" and match in err and "bad.txt" in err


def test_check_wrong_size_and_missing_files(capsys, ip3_file, tmp_path):
    np.save(tmp_path / "t4.npy", circuits.inner_product_mod2(2))
    rc, _, err = run(capsys, "check", ip3_file, "--target", str(tmp_path / "t4.npy"))
    assert rc == 1 and "inputs" in err
    rc, _, err = run(capsys, "check", str(tmp_path / "nope.json"), "--target", "ip")
    assert rc == 1 and "nope.json" in err
    rc, _, err = run(capsys, "check", ip3_file)  # --target is required
    assert rc == 2


def test_spectrum_of_ip_is_bent(capsys, ip3_file):
    rc, out, _ = run(capsys, "spectrum", ip3_file, "--json", "--top", "3")
    assert rc == 0
    rec = json.loads(out)
    assert rec["bent"] is True and rec["abs_walsh_histogram"] == {"8": 64}
    assert rec["degree"] == 6 and len(rec["top"]) == 3


def test_spectrum_of_truth_table_and_negative_control(capsys, tmp_path):
    np.save(tmp_path / "maj.npy", circuits.majority(3))
    rc, out, _ = run(capsys, "spectrum", str(tmp_path / "maj.npy"), "--json")
    rec = json.loads(out)
    assert rc == 0 and rec["bent"] is False and rec["degree"] == 3
    assert rec["abs_walsh_histogram"] == {"0": 4, "4": 4}  # MAJ_3: |W| = 4 on odd levels
    rc, out, _ = run(capsys, "spectrum", str(tmp_path / "maj.npy"))
    assert "degree 3" in out


def test_info_circuit_network_and_weights(capsys, ip3_file, tmp_path):
    rc, out, _ = run(capsys, "info", ip3_file, "--json")
    rec = json.loads(out)
    assert rc == 0 and rec["kind"] == "layered" and rec["depth"] == 3
    assert rec["hidden_gates"] == 6 and rec["gates_with_output"] == 7
    from networks import SigmaNetwork

    net = SigmaNetwork.random([4, 5, 1], "tanh", seed=0)
    net.save(tmp_path / "net.json")
    rc, out, _ = run(capsys, "info", str(tmp_path / "net.json"), "--json")
    rec = json.loads(out)
    assert rc == 0 and rec["dims"] == [4, 5, 1] and rec["activation"] == "tanh"
    from networks.interop import save_state_dict

    save_state_dict(net, tmp_path / "w.npz")
    rc, out, _ = run(capsys, "info", str(tmp_path / "w.npz"), "--activation", "tanh", "--json")
    assert rc == 0 and json.loads(out)["n_params"] == net.n_params
    (tmp_path / "other.json").write_text('{"format": "something-else"}')
    rc, _, err = run(capsys, "info", str(tmp_path / "other.json"))
    assert rc == 2 and "something-else" in err


# ---------------------------------------------------------------------------- subprocess
def test_module_entry_point_help_from_elsewhere(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "reduce" in proc.stdout and "theory-table" in proc.stdout
    # --help does not import the numerical stack
    probe = "import sys; from experiments.cli import main; main(['--help']); print('numpy' in sys.modules)"
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.strip().splitlines()[-1] == "False"


def test_check_unknown_target_lists_the_targets(capsys, ip3_file):
    # issue 24: "--target xor" used to say "no such file: xor"
    rc, _, err = run(capsys, "check", ip3_file, "--target", "xor")
    assert rc != 0 and "'xor'" in err
    assert all(t in err for t in ("ip", "parity", "majority", "and", "or", "truth-table file"))


def test_json_without_out_says_the_files_are_removed(capsys):
    # issue 24: --json without --out logged file paths that no longer exist afterwards
    rc, out, err = run(capsys, "--json", "ip-demo", "--n-max", "2", "--depth2-n-max", "1")
    assert rc == 0 and json.loads(out)["out"] is None
    assert "temporary directory that is removed" in err and "--out DIR" in err


def test_messages_print_numbers_plainly():
    # issue 24: messages printed np.float64(0.5) instead of 0.5
    from circuits.utils.validation import check_real

    with pytest.raises(ValueError) as info:
        check_real(np.float64(-0.5), name="eps", minimum=0)
    assert "got -0.5" in str(info.value) and "np." not in str(info.value)
    with pytest.raises(ValueError) as info:
        check_real(np.float32("nan"), name="eps", minimum=0)
    assert "np." not in str(info.value)
