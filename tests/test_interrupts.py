"""Ctrl-C: the first keeps the finished work and skips the figure, the second exits at once; the
suite itself runs under a per-test timeout (no test can hang silently)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import sys, time
from circuits.utils.interrupts import second_interrupt_exits
with second_interrupt_exits():
    try:
        print("ready", flush=True)
        time.sleep(60)
    except KeyboardInterrupt:
        print("first", flush=True)
        time.sleep(60)          # the slow part after the first Ctrl-C (a figure under load)
        print("finished the slow part", flush=True)
"""


def test_second_ctrl_c_exits_at_once():
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CHILD)], cwd=str(ROOT),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        assert proc.stdout.readline().strip() == "first"
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.perf_counter() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130 and "finished" not in out, (out, err)
    assert took < 5.0 and "exiting now" in err


def test_the_guard_leaves_an_ignored_or_foreign_handler_alone():
    from circuits.utils.interrupts import second_interrupt_exits

    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with second_interrupt_exits():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with second_interrupt_exits():
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, old)


def test_first_ctrl_c_in_sampled_keeps_the_cells_and_skips_the_figure(tmp_path, monkeypatch):
    from experiments import sampled as E
    from networks.separation import sampled as S

    real, calls = S.estimate, []

    def interrupted_second_time(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(S, "estimate", interrupted_second_time)
    argv = ["--n", "6", "--steps", "20", "--grid", "8", "--pairs", "4000", "--penalties",
            "0,0.01", "--targets", "majand", "--out", str(tmp_path), "--no-progress",
            "--tries", "1"]
    assert E.main(argv) == 130
    doc = json.loads((tmp_path / "sampled.json").read_text())
    assert len(doc["rows"]) == 1 and doc["interrupted"]
    assert not (tmp_path / "sampled.png").exists()


def test_the_suite_has_a_per_test_timeout(request):
    assert request.config.pluginmanager.hasplugin("timeout"), "pytest-timeout is not installed"
    assert float(request.config.getini("timeout")) == 600
    assert request.config.getini("timeout_method") == "thread"
    text = (ROOT / "pyproject.toml").read_text()
    extra = text.split("[project.optional-dependencies]", 1)[1].split("\ntest = ", 1)[1]
    assert "pytest-timeout" in extra.split("]", 1)[0]


@pytest.mark.slow
def test_slow_tests_get_a_longer_timeout(request):
    marker = request.node.get_closest_marker("timeout")
    assert marker is not None and marker.args[0] == 3600
