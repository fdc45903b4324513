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


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(12345)
