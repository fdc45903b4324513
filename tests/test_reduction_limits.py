"""Estimate-and-refuse for the self-reduction's shift stream (issue 24: --k 1e11 ran silently
for minutes)."""

import time

import pytest

from circuits.utils.errors import RunTooLongError
from networks.reduction import ip_signs, self_reduce


def test_a_huge_k_is_refused_after_a_short_calibration():
    t0 = time.perf_counter()
    with pytest.raises(RunTooLongError, match=r"would stream 100,000,000,000 shifts.*--k") as exc:
        self_reduce(0.5 * ip_signs(3), k=10 ** 11, seed=0, max_seconds=60)
    assert time.perf_counter() - t0 < 30                  # refused, not run
    err = exc.value
    assert err.n_items == 10 ** 11 and err.max_seconds == 60 and err.estimate_seconds > 60


def test_the_limit_can_be_lifted_and_small_k_is_never_calibrated():
    red = self_reduce(0.5 * ip_signs(3), k=5, seed=0, max_seconds=1e-9)   # 256 shifts streamed
    assert red.sign_agrees_everywhere and red.k == 5


def test_the_environment_variable_sets_the_limit(monkeypatch):
    monkeypatch.setenv("DEPTHSEP_MAX_SECONDS", "0.001")
    with pytest.raises(RunTooLongError, match="max_seconds=0.001"):
        self_reduce(0.5 * ip_signs(2), k=10 ** 9, seed=0)
