"""The float32-lane depth-2 training kernel moved to :mod:`networks.product._kernels_train32`;
re-exported here for existing callers."""

from networks.product._kernels_train32 import (CHUNK, FLUSH, LANES, ROWS,  # noqa: F401
                                               SLICE_SCALE, TILE_FLOATS, _backward, _forward,
                                               _train_pass_relu32)
