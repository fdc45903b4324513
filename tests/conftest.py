import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run tests marked slow (large exhaustive cases)")


def pytest_collection_modifyitems(config, items):
    for item in items:                      # slow cases get a longer per-test timeout
        if "slow" in item.keywords and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(3600))
    if config.getoption("--runslow") or os.environ.get("DEPTHSEP_RUNSLOW"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True, scope="session")
def _kernel_budget_per_test_process():
    """The suite compiles many distinct circuit kernels in one process; ``kernel="auto"``'s
    per-process budget would make later tests' plans depend on earlier tests.  It is lifted for
    the suite and tested on its own (monkeypatched where a test needs it)."""
    from circuits import _bitsliced_cache as kc

    shipped = kc.MAX_PROCESS_KERNELS
    kc.SHIPPED_MAX_PROCESS_KERNELS = shipped       # what tests/test_memory_caps.py checks
    kc.MAX_PROCESS_KERNELS = 1 << 20
    yield
    kc.MAX_PROCESS_KERNELS = shipped


@pytest.fixture(autouse=True, scope="session")
def _no_background_compiles():
    """``kernel="auto"`` compiles a repeatedly counted circuit's kernel in a child process
    (``circuits._background``); in the suite that would make later plans depend on how fast
    a child finished.  Off for the suite and the processes it starts (the environment switch),
    on in the tests of it (monkeypatched)."""
    from circuits import _background, dispatch

    shipped = dispatch._BACKGROUND
    env = os.environ.get("DEPTHSEP_BACKGROUND_COMPILE")
    dispatch._BACKGROUND = False
    os.environ["DEPTHSEP_BACKGROUND_COMPILE"] = "0"
    yield
    dispatch._BACKGROUND = shipped
    if env is None:
        os.environ.pop("DEPTHSEP_BACKGROUND_COMPILE", None)
    else:
        os.environ["DEPTHSEP_BACKGROUND_COMPILE"] = env
    _background.stop_all()


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(12345)
