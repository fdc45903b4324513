"""The single entry point for randomness: every random routine takes ``seed``.

:func:`as_rng` turns a ``seed`` into a generator; :func:`uniform_sphere` and
:func:`uniform_ball` are the project's one sampler of the unit sphere and ball (used by the
hard instance, the constructions' tests and the staircase checks).
"""

from __future__ import annotations

import numpy as np

from circuits.utils.validation import check_int, check_real

__all__ = ["as_rng", "uniform_sphere", "uniform_ball"]


def as_rng(seed: "int | np.random.Generator | None" = None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``seed`` without touching global state.

    Examples
    --------
    >>> g = as_rng(0)
    >>> as_rng(g) is g
    True
    >>> int(as_rng(1).integers(10)) == int(as_rng(1).integers(10))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    from circuits.utils.errors import ArgumentTypeError, InvalidArgumentError

    if isinstance(seed, (bool, np.bool_)) or (
            seed is not None and not isinstance(seed, (int, np.integer, np.random.SeedSequence))):
        raise ArgumentTypeError(f"seed must be an int, a numpy Generator or None, got "
                                f"{type(seed).__name__}")
    if isinstance(seed, (int, np.integer)) and seed < 0:
        raise InvalidArgumentError(f"seed must be a non-negative integer (numpy's generators "
                                   f"take seeds >= 0), got {int(seed)}; use abs(seed) or any "
                                   f"seed >= 0")
    return np.random.default_rng(seed)


def uniform_sphere(n_points: int, dim: int, *, seed=0) -> np.ndarray:
    """``n_points`` uniform points on the unit sphere S^{dim-1} (normalised Gaussians), float64.

    ``seed`` is anything :func:`as_rng` accepts; a Generator is advanced (one
    ``standard_normal((n_points, dim))`` draw).

    Examples
    --------
    >>> bool(np.allclose(np.linalg.norm(uniform_sphere(5, 4, seed=1), axis=1), 1))
    True
    """
    n_points = check_int(n_points, name="n_points", minimum=0, what="number of points")
    dim = check_int(dim, name="dim", minimum=1, what="dimension")
    g = as_rng(seed).standard_normal((n_points, dim))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def uniform_ball(n_points: int, dim: int, *, seed=0, radius: float = 1.0) -> np.ndarray:
    """``n_points`` uniform points in the ball of radius ``radius`` in R^dim, float64.

    A uniform direction (:func:`uniform_sphere`) times ``radius * U^(1/dim)``; both draws come
    from one generator, in that order.

    Examples
    --------
    >>> x = uniform_ball(1000, 5, seed=0)
    >>> x.shape, bool((np.linalg.norm(x, axis=1) <= 1).all())
    ((1000, 5), True)
    """
    rng = as_rng(seed)
    radius = check_real(radius, minimum=0, name="radius", what="radius of the ball")
    u = uniform_sphere(n_points, dim, seed=rng)
    r = rng.random(u.shape[0])[:, None] ** (1.0 / u.shape[1])
    return u * r if radius == 1.0 else u * (radius * r)
