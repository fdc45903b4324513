"""The exact IP nets of THEORY §3.2 (E6): exact on the whole support, from an instance, in
chunks, on random points of the boxes and their corners, and on the R-cube (the other
constructions: tests/test_constructions.py)."""

import math

import numpy as np
import pytest

from embeddings import HardInstance
from networks import constructions as cs
from tests import naive_constructions as naive


def _tol(c):
    """Pitfall 2: exact (0) when sqrt(m/2), 1/sqrt(2m) are exact binary floats, else 1e-9."""
    return 0.0 if c.params["exact_in_floats"] else 1e-9


# ============================================================================ §3.2 exact nets (E6)
@pytest.mark.parametrize("n", range(1, 9))
def test_ip_depth3_exact_on_whole_support(n):
    inst = HardInstance(n)
    c = cs.ip_depth3_relu(n, inst.m)
    assert c.widths == c.width_formula == (n, n + 1)
    assert c.params["max_abs_weight_no_bias"] == max(math.sqrt(inst.m / 2), 2.0)
    assert c.max_weight <= c.weight_formula
    sup = inst.support()
    out = c.network(sup.points)
    assert np.max(np.abs(out - sup.labels)) <= _tol(c)
    assert np.array_equal(c.target(sup.points), sup.labels.astype(float))
    if n in (2, 8):
        assert c.params["exact_in_floats"] and np.array_equal(out, sup.labels.astype(float))


def test_ip_depth3_from_instance():
    inst = HardInstance(3, tau=0.1)
    c = cs.ip_depth3_relu(inst)
    assert c.params["m"] == inst.m and c.params["tau"] == 0.1 and c.widths == (6, 4)
    s = inst.sample(2000, seed=1)
    assert c.measured_error(s.points, s.labels) <= 1e-9
    with pytest.raises(TypeError, match="not both"):
        cs.ip_depth3_relu(inst, tau=0.1)


def test_ip_depth3_theory_n8():
    c = cs.ip_depth3_relu(8)
    assert c.widths == (8, 9) and c.params["max_abs_weight_no_bias"] == 4.0   # THEORY §3.2


@pytest.mark.slow
@pytest.mark.parametrize("n", range(9, 13))
def test_ip_depth3_exact_large_chunked(n):
    inst = HardInstance(n)
    c = cs.ip_depth3_relu(n, inst.m)
    worst = c.max_error_over(inst.iter_support(chunk=1 << 18))
    assert worst <= _tol(c)


def test_ip_depth3_matches_naive_formula_everywhere(rng):
    n, m = 3, 7
    c = cs.ip_depth3_relu(n, m)
    X = rng.normal(size=(200, 2 * m)) / 2
    ref = np.array([naive.ip_depth3_eval(x, n, m) for x in X])
    assert np.max(np.abs(c.network(X) - ref)) < 1e-12
    cb = cs.ip_depth3_relu(n, m, tau=0.1)
    ref = np.array([naive.ip_depth3_box_eval(x, n, m, 0.1) for x in X])
    assert np.max(np.abs(cb.network(X) - ref)) < 1e-12


@pytest.mark.parametrize("n,tau", [(4, 0.15), (6, 0.15), (6, 0.05)])
def test_ip_depth3_boxes_random_points(n, tau):
    inst = HardInstance(n, tau=tau)
    c = cs.ip_depth3_relu(n, inst.m, tau=tau)
    assert c.widths == c.width_formula == (2 * n, n + 1)
    s = inst.sample(20_000, seed=7)
    assert c.measured_error(s.points, s.labels) <= 1e-9


@pytest.mark.slow
def test_ip_depth3_boxes_1e5_points():
    inst = HardInstance(6, tau=0.15)
    c = cs.ip_depth3_relu(6, inst.m, tau=0.15)
    s = inst.sample(100_000, seed=11)
    assert c.measured_error(s.points, s.labels) <= 1e-9


@pytest.mark.parametrize("n,tau", [(5, 0.15), (6, 0.1)])
def test_ip_depth3_boxes_adversarial_corners(n, tau):
    """Push every pair (x_i, x_{m+i}) to the box corner closest to the decision thresholds."""
    inst = HardInstance(n, tau=tau)
    m = inst.m
    c = cs.ip_depth3_relu(n, m, tau=tau)
    sup = inst.support()                                   # box centres Phi/(1+tau)
    h = tau / (math.sqrt(2 * m) * (1 + tau))
    a, b = sup.bits[:, :n].astype(int), sup.bits[:, n:].astype(int)
    s = a + b - 1                                          # -1, 0, 1
    push = np.where(s == 1, -h, h)
    X = sup.points.copy()
    X[:, :n] += push
    X[:, m:m + n] += push
    assert np.all(np.abs(X - sup.points) <= h + 1e-15)
    assert c.measured_error(X, sup.labels) <= 1e-9


def _rcube_points(bits, rng, n):
    lo = np.where(bits == 1, 0.75, 0.0)
    return lo + rng.uniform(0.0, 0.25, size=bits.shape)


@pytest.mark.parametrize("n", [1, 3, 6, 8])
def test_ip_depth3_rcube(n, rng):
    c = cs.ip_depth3_relu_rcube(n)
    assert c.widths == c.width_formula == (2 * n, n + 1)
    from circuits.hypercube import points
    bits = points(2 * n)                                   # all 4^n cells, cube order
    labels = np.array([naive.ip_of_bits(r[:n], r[n:]) for r in bits[:512]])
    worst_corner = np.where(bits == 1, 0.75, 0.25)          # closest to the thresholds
    far_corner = np.where(bits == 1, 1.0, 0.0)
    assert c.measured_error(worst_corner) <= 1e-12
    assert c.measured_error(far_corner) <= 1e-12
    assert np.array_equal(c.target(worst_corner[:512]), labels.astype(float))
    X = _rcube_points(bits, rng, n)
    assert c.measured_error(X) <= 1e-12
    ref = np.array([naive.ip_rcube_eval(x, n) for x in X[:200]])
    assert np.max(np.abs(c.network(X[:200]) - ref)) < 1e-12
