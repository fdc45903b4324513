import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run tests marked slow (large exhaustive cases)")


def pytest_collection_modifyitems(config, items):
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
