"""depthsep.experiments: the runnable experiments, one module each with ``main(argv=None)``.

Run them with the ``depthsep`` command (``depthsep reduce``, ``depthsep theory-table``, ...; see
:mod:`experiments.cli`) or as modules (``python -m experiments.reduction``).  Each module is a thin
argparse/printing/plotting layer over the library packages.
"""

__all__ = ["__version__"]


def __getattr__(name):
    # lazy, so that `depthsep --help` does not import numpy/numba through circuits
    if name == "__version__":
        from circuits._version import __version__

        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
