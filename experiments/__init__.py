"""depthsep.experiments: the runnable experiments, one module each with ``main(argv=None)``.

Run them with the ``depthsep`` command (``depthsep reduce``, ``depthsep theory-table``, ...; see
:mod:`experiments.cli`) or as modules (``python -m experiments.reduction``).  Each module is a thin
argparse/printing/plotting layer over the library packages.
"""

from circuits._version import __version__

__all__ = ["__version__"]
