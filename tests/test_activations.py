"""The activation registry: every entry's constants are checked numerically on a fine grid.

Tests are parametrised over the registry at collection time, so a new built-in entry (or a
user entry registered before collection) is tested automatically.
"""

import math

import numpy as np
import pytest

import networks
from circuits.utils.errors import InvalidArgumentError
from circuits.utils.errors import DepthsepError, InvalidCircuitError
from networks.activations import (_BUILTIN_NAMES, ACTIVATIONS, Activation, activation_names,
                                  get_activation, register_activation, unregister_activation)
from circuits.utils.errors import InvalidNetworkError

from tests import naive_networks as naive

NAMES = sorted(ACTIVATIONS)
RADII = [0.3, 1.0, 2.5, 7.0]


def _grid(R, act, n=200_001):
    t = np.linspace(-R, R, n)
    extra = [j for j in act.jumps if -R <= j <= R]
    # make every jump visible: the grid holds the jump point and a point just left of it
    extra += [j - 1e-12 for j in extra]
    return np.unique(np.concatenate([t, extra]))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("R", RADII)
def test_sup_abs_on_grid(name, R):
    act = get_activation(name)
    t = _grid(R, act)
    assert np.abs(act(t)).max() == pytest.approx(act.sup_abs(R), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("R", RADII)
def test_total_variation_on_grid(name, R):
    act = get_activation(name)
    t = _grid(R, act)
    tv = np.abs(np.diff(act(t))).sum()
    assert tv == pytest.approx(act.total_variation(R), rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("R", RADII)
def test_lipschitz_on_grid(name, R):
    act = get_activation(name)
    t = np.linspace(-R, R, 100_001)
    v = act(t)
    slopes = np.abs(np.diff(v)) / np.diff(t)
    straddles = np.zeros(slopes.shape, dtype=bool)
    for j in act.jumps:
        straddles |= (t[:-1] < j) & (t[1:] >= j)
    smooth = slopes[~straddles]
    L = act.lipschitz(R)
    assert smooth.max() <= L * (1 + 1e-9) + 1e-12          # a valid constant ...
    assert smooth.max() >= L * (1 - 1e-3) - 1e-12          # ... and the best one


@pytest.mark.parametrize("name", NAMES)
def test_jumps_are_real_and_complete(name):
    act = get_activation(name)
    t = np.linspace(-10, 10, 200_001)
    big = np.abs(np.diff(act(t))) > 1e-3
    near = np.zeros(big.shape, dtype=bool)
    for j in act.jumps:
        near |= (t[:-1] < j + 1e-9) & (t[1:] > j - 1e-9)
        assert abs(float(act(j)) - float(act(j - 1e-9))) > 0.5, f"{name}: no jump at {j}"
    assert not (big & ~near).any(), f"{name}: discontinuity not listed in jumps"


@pytest.mark.parametrize("name", NAMES)
def test_range_and_monotone(name):
    act = get_activation(name)
    t = np.linspace(-40, 40, 40_001)
    v = act(t)
    lo, hi = act.value_range
    assert (v >= lo).all() and (v <= hi).all()
    if act.monotone:
        assert (np.diff(v) >= 0).all()
    assert v.min() == pytest.approx(lo, abs=1e-12) or lo == -math.inf
    assert v.max() == pytest.approx(hi, abs=1e-12) or hi == math.inf


@pytest.mark.parametrize("name", NAMES)
def test_derivative_matches_finite_differences(name, rng):
    act = get_activation(name)
    t = rng.uniform(-6, 6, size=2000)
    h = 1e-6
    second = np.abs(act(t + h) - 2 * act(t) + act(t - h))
    smooth = second < 1e-9                                 # skip points within h of a kink/jump
    assert smooth.mean() > 0.99
    fd = (act(t + h) - act(t - h)) / (2 * h)
    np.testing.assert_allclose(act.derivative(t)[smooth], fd[smooth], atol=2e-6)


@pytest.mark.parametrize("name", NAMES)
def test_matches_naive_scalar_twin(name):
    if name not in naive.SCALAR:
        # only a user entry may lack a twin; a built-in without one is a gap in the tests
        assert name not in _BUILTIN_NAMES, f"built-in activation {name!r} has no naive scalar twin"
        pytest.skip("user entry without a scalar twin")
    act = get_activation(name)
    t = np.concatenate([np.linspace(-30, 30, 6001), [0.0, -0.0, 1.0, -1.0, 1e-300, -1e-300]])
    expect = [naive.SCALAR[name](float(v)) for v in t]
    np.testing.assert_allclose(act(t), expect, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_dtype(name):
    act = get_activation(name)
    for t in (0.5, [0.5, -1.0], np.zeros((3, 2), dtype=np.float32), np.arange(4)):
        out = act(t)
        d = act.derivative(t)
        assert out.dtype == np.float64 and d.dtype == np.float64
        assert out.shape == np.shape(t) and d.shape == np.shape(t)


def test_gate_convention_at_zero():
    assert get_activation("heaviside")(0.0) == 1.0
    assert get_activation("threshold") is get_activation("heaviside")
    assert get_activation("sign")([0.0, -0.0]).tolist() == [1.0, 1.0]
    assert get_activation("relu").derivative(0.0) == 0.0
    assert get_activation("heaviside").derivative([-1.0, 0.0, 1.0]).tolist() == [0.0, 0.0, 0.0]


def test_theory_table_values():
    # THEORY.md §3.1 table (exact sup values are <= the table's bounds)
    R = 3.0
    assert get_activation("relu").total_variation(R) == R
    assert get_activation("heaviside").total_variation(R) == 1.0
    assert get_activation("sigmoid").total_variation(R) == pytest.approx(math.tanh(R / 2))
    assert get_activation("tanh").total_variation(R) == pytest.approx(2 * math.tanh(R))
    assert get_activation("sigmoid").lipschitz(R) == 0.25
    assert get_activation("sigmoid").sup_abs(R) <= 1.0
    assert get_activation("heaviside").jumps == (0.0,) and get_activation("relu").jumps == ()
    assert get_activation("tanh").sup_abs(math.inf) == 1.0


def test_unknown_name_lists_choices():
    with pytest.raises(InvalidNetworkError, match="choose one of") as info:
        get_activation("swish")
    for name in activation_names():
        assert name in str(info.value)
    assert isinstance(info.value, (ValueError, DepthsepError, InvalidCircuitError))
    with pytest.raises(TypeError):
        get_activation(3)


@pytest.mark.parametrize("R", [0, -1.0, float("nan")])
def test_bad_radius(R):
    with pytest.raises(InvalidArgumentError, match="R must be"):
        get_activation("relu").lipschitz(R)
    with pytest.raises(TypeError):
        get_activation("relu").sup_abs("big")


def _leaky(name="leaky_test"):
    return Activation(name, lambda t: np.where(t >= 0, t, 0.1 * t), lambda t: np.where(t > 0, 1.0, 0.1),
                      lipschitz_function=lambda R: 1.0, sup_abs_function=lambda R: R,
                      total_variation_function=lambda R: 1.1 * R)


def test_register_and_use_user_activation():
    act = register_activation(_leaky(), aliases=["lrelu_test"])
    try:
        assert get_activation("lrelu_test") is act
        net = networks.SigmaNetwork([([[1.0]], [0.0]), ([[2.0]], [0.0])], activation="leaky_test")
        assert net(np.array([[-1.0], [1.0]])).tolist() == pytest.approx([-0.2, 2.0])
        with pytest.raises(InvalidNetworkError, match="already registered"):
            register_activation(_leaky())
        register_activation(_leaky(), replace=True)
    finally:
        unregister_activation("leaky_test")
    assert "leaky_test" not in ACTIVATIONS
    with pytest.raises(InvalidNetworkError):
        get_activation("lrelu_test")


def test_registry_protects_builtins():
    with pytest.raises(InvalidNetworkError, match="built-in"):
        register_activation(_leaky("relu"), replace=True)
    with pytest.raises(InvalidNetworkError, match="built-in"):
        register_activation(_leaky("leaky_x"), aliases=["threshold"])
    with pytest.raises(InvalidNetworkError, match="built-in"):
        unregister_activation("tanh")
    with pytest.raises(InvalidNetworkError, match="not registered"):
        unregister_activation("nothing_here")
    with pytest.raises(TypeError):
        register_activation("relu")


def test_activation_validation():
    with pytest.raises(InvalidNetworkError, match="lower-case"):
        _leaky("Bad Name")
    with pytest.raises(TypeError, match="callable"):
        Activation("x_test", np.tanh, 3.0, lipschitz_function=lambda R: 1.0,
                   sup_abs_function=lambda R: 1.0, total_variation_function=lambda R: 1.0)
    with pytest.raises(InvalidNetworkError, match="range"):
        Activation("x_test", np.tanh, np.tanh, lipschitz_function=lambda R: 1.0,
                   sup_abs_function=lambda R: 1.0, total_variation_function=lambda R: 1.0,
                   value_range=(1.0, -1.0))
    with pytest.raises(InvalidNetworkError, match="jumps"):
        Activation("x_test", np.tanh, np.tanh, lipschitz_function=lambda R: 1.0,
                   sup_abs_function=lambda R: 1.0, total_variation_function=lambda R: 1.0,
                   jumps=(float("inf"),))


def test_image_non_monotone_uses_sup():
    bump = Activation("bump_test", lambda t: np.exp(-t * t), lambda t: -2 * t * np.exp(-t * t),
                      lipschitz_function=lambda R: math.sqrt(2 / math.e),
                      sup_abs_function=lambda R: 1.0, total_variation_function=lambda R: 2 - 2 * math.exp(-R * R),
                      value_range=(0.0, 1.0), monotone=False)
    lo, hi = bump.image([-1.0, 2.0], [1.0, 3.0])
    assert lo.tolist() == [-1.0, -1.0] and hi.tolist() == [1.0, 1.0]
    lo, hi = get_activation("sign").image([-1.0], [1.0])
    assert lo.tolist() == [-1.0] and hi.tolist() == [1.0]
