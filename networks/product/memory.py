"""The memory a product-form training run needs, estimated before it starts, and the refusal of
a run that would not fit (:func:`networks.product.train_product` calls both)."""

from __future__ import annotations

from circuits.hypercube import available_memory_bytes


def training_memory_bytes(sup, dims, batch_size=None) -> float:
    """Estimated peak bytes of :func:`train_product` (float64 unless stated): the parameters
    with their Adam moments, gradient and temporaries (about 8 copies), the product-form tables
    (α, β, their float32 copies, Qa, the per-thread Qb partials: about (8 + threads) × 2^n × w1),
    the target table (4^n, full batch), and per tile / batch the activations (depth 3: about
    10 arrays of a tile, threads + 1 tiles in flight; mini-batches: about 6 arrays of batch × width)."""
    import numba

    d, *widths = dims[:-1]
    w1 = widths[0]
    n_params = sum(a * b + a for a, b in zip(list(dims[1:]), list(dims[:-1])))
    size = sup.size
    need = 8.0 * 8 * n_params
    need += 8.0 * (8 + numba.get_num_threads()) * size * w1
    if batch_size is None:
        need += 8.0 * size * size
        if len(widths) == 2:
            from networks.product.depth3 import DEPTH3_TILE_ELEMENTS
            need += ((numba.get_num_threads() + 1) * 10 * 8.0
                     * max(DEPTH3_TILE_ELEMENTS, size * max(widths)))
    else:
        need += 6 * 8.0 * min(batch_size, size * size) * max(widths) + 8.0 * size * size
    return need


def check_training_memory(sup, dims, batch_size=None) -> None:
    """Refuse (DimensionError, with the estimate and the ways forward) a training run whose
    :func:`training_memory_bytes` exceed 80% of the available memory."""
    from circuits.utils.errors import DimensionError

    need = training_memory_bytes(sup, dims, batch_size)
    avail = available_memory_bytes()
    if need > 0.8 * avail:
        raise DimensionError(
            f"training a network of dims {list(dims)} on the 4^{sup.n} support pairs needs about "
            f"{need / 2 ** 30:.2f} GiB but {avail / 2 ** 30:.2f} GiB are available; use a "
            f"smaller width or n, or a machine with more memory")
