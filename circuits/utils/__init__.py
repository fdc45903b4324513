"""circuits.utils: the plumbing every depthsep package shares, written once.

- :mod:`~circuits.utils.errors` — the one error family (:class:`DepthsepError` and its subclasses);
- :mod:`~circuits.utils.validation` — argument checks (same mistake, same error class everywhere);
- :mod:`~circuits.utils.rng` — the seed convention (:func:`as_rng`);
- :mod:`~circuits.utils.progress` — progress bars that can be switched off;
- :mod:`~circuits.utils.parallel` — the chunk runner (serial, any Executor, or a Dask client);
- :mod:`~circuits.utils.files` — atomic JSON/PNG writers (never pickle).
"""

from circuits.utils.errors import (DepthsepError, DimensionError, InvalidCircuitError,
                                   InvalidNetworkError, MissingDependencyError, ReductionError)
from circuits.utils.validation import check_int, check_real
from circuits.utils.rng import as_rng
from circuits.utils.progress import progress_bar
from circuits.utils.files import (read_json, savefig_atomic, to_jsonable, write_bytes_atomic,
                                  write_json_atomic)

__all__ = [
    "DepthsepError", "DimensionError", "InvalidCircuitError", "InvalidNetworkError",
    "MissingDependencyError", "ReductionError",
    "check_int", "check_real", "as_rng", "progress_bar",
    "read_json", "savefig_atomic", "to_jsonable", "write_bytes_atomic", "write_json_atomic",
]
