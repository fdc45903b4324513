"""Saved σ-networks always load (issue 25 item 3)."""

import numpy as np
from networks import sigma
from networks.sigma import SigmaNetwork


def _net(dims, seed=0):
    rng = np.random.default_rng(seed)
    layers = [(rng.standard_normal((b, a)) * 1e-300 if i == 0 else rng.standard_normal((b, a)),
               -rng.standard_normal(b) * 1e-300) for i, (a, b) in enumerate(zip(dims, dims[1:]))]
    return SigmaNetwork(layers)


def test_a_network_above_two_million_parameters_saves_and_loads(tmp_path):
    # 2.4 M parameters of the longest float reprs (negative, 17 digits, 3-digit exponent): the
    # old indented file took ~100 MB and load refused it (max_bytes = 64 MiB)
    net = _net([2400, 1000, 1])
    assert net.n_params > 2_200_000
    path = net.save(tmp_path / "big.json")
    assert SigmaNetwork.load(path).equals(net)


def test_the_default_byte_limit_covers_every_network_within_max_params():
    # the longest JSON float is 24 characters; with ", " and row brackets <= 30 bytes/parameter
    assert sigma.MAX_NETWORK_BYTES >= 30 * sigma.MAX_NETWORK_PARAMS + (1 << 16)


def test_a_network_of_many_one_input_rows_saves_and_loads_at_its_exact_size(tmp_path):
    net = _net([1, 3000, 1])                       # as many row brackets as weights
    path = net.save(tmp_path / "rows.json")
    assert SigmaNetwork.load(path).equals(net)
