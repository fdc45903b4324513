"""Circuits over a hard instance's code bits and the support they are meant for.

A circuit written by ``depthsep reduce`` is a function of the 2m code bits that is meant to
agree with IP only on the 4^n support points (a, b) -> C(a) ‖ C(b) of its hard instance, not on
all 2^{2m} inputs.  Its document records that support in ``metadata.support`` (n, m, the 2^n
codewords and the instance's parameters: :func:`support_metadata`), so ``depthsep check`` and
``depthsep spectrum`` can work there.
"""

from __future__ import annotations

#: The ``kind`` of a support recorded in a circuit document.
SUPPORT_KIND = "pair-code"


def support_metadata(instance, **extra) -> dict:
    """The ``metadata`` of a circuit over a hard instance's code bits: which instance, and its
    support (the 2^n codewords; input bits 0..m-1 are C(a), m..2m-1 are C(b)).

    Parameters
    ----------
    instance : embeddings.HardInstance
        The instance whose support the circuit is meant for.
    **extra
        Further JSON fields (e.g. ``target="ip"``, ``made_by="depthsep reduce"``).

    Returns
    -------
    dict
        ``{"support": {...}, **extra}``.
    """
    words = [int(w) for w in instance.embedding.codewords()]
    return {
        "support": {
            "kind": SUPPORT_KIND,
            "n": int(instance.n),
            "m": int(instance.m),
            "codewords": words,
            "instance": {
                "class": "HardInstance",
                "n": int(instance.n),
                "m": int(instance.m),
                "tau": float(instance.tau),
                "seed": extra.pop("seed", None),
            },
            "layout": "inputs 0..m-1 = C(a), m..2m-1 = C(b); point k = a + 2^n b",
        },
        **extra,
    }


def _support_of(doc, where: str):
    """(n, m, codewords int64 array, instance dict) from a circuit document's metadata, or
    None when it records no support; a malformed record is an InvalidCircuitError."""
    import numpy as np

    from circuits.utils.errors import InvalidCircuitError

    meta = doc.get("metadata") if isinstance(doc, dict) else None
    sup = meta.get("support") if isinstance(meta, dict) else None
    if sup is None:
        return None

    def bad(msg):
        raise InvalidCircuitError(f"{where}metadata.support: {msg}")

    if not isinstance(sup, dict) or sup.get("kind") != SUPPORT_KIND:
        bad(f"expected an object of kind {SUPPORT_KIND!r}")
    n, m = sup.get("n"), sup.get("m")
    if type(n) is not int or not 1 <= n <= 12 or type(m) is not int or not 1 <= m <= 62:
        bad(f"n must be an integer in 1..12 and m in 1..62, got n = {n!r}, m = {m!r}")
    if doc.get("n_inputs") != 2 * m:
        bad(f"the circuit has {doc.get('n_inputs')!r} inputs, the support 2m = {2 * m} code bits")
    words = sup.get("codewords")
    if (
        not isinstance(words, list)
        or len(words) != 1 << n
        or set(map(type, words)) != {int}
        or min(words) < 0
        or max(words) >> m
    ):
        bad(f"codewords must be 2^n = {1 << n} integers in [0, 2^m)")
    arr = np.array(words, dtype=np.int64)
    if np.unique(arr).size != arr.size:
        bad("codewords must be distinct")
    inst = sup.get("instance") if isinstance(sup.get("instance"), dict) else {}
    return n, m, arr, inst


def _support_name(n, m, inst) -> str:
    seed = inst.get("seed")
    return (
        f"the 4^{n} = {1 << 2 * n} support points of HardInstance(n = {n}, m = {m}"
        + (f", seed = {seed}" if seed is not None else "")
        + ")"
    )


#: Up to this many (pair, gate) terms a depth-2 circuit is evaluated on the support by numpy
#: (exact int64, no kernel to load: the n = 6 circuit of ``depthsep reduce`` in well under a
#: second); beyond, neuron-wise by the product-form kernels.
NUMPY_TERMS = 1 << 31


def _support_bits(circuit, n, m, words):
    """The circuit's output (uint8, index k = a + 2^n b) on every support pair.  A layered
    depth-2 circuit: by numpy (:func:`circuits._product_eval.depth2_product_bits`) up to
    :data:`NUMPY_TERMS`, else
    neuron-wise (:func:`networks.reduction.circuit.circuit_bits`, exact int64) with 64 random
    pairs re-evaluated by the generic kernel; any other circuit: the generic kernel."""
    import numpy as np

    from circuits import simulate
    from circuits.threshold import ThresholdCircuit

    # row b, column a: raveled, point k = a + 2^n b
    cube_k = (words[None, :] | (words[:, None] << m)).ravel() if 2 * m <= 62 else None

    def generic(sel):
        if cube_k is not None:
            return simulate.evaluate_indices(circuit, cube_k[sel])
        bits = ((words[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(np.uint8)
        aa, bb = sel % (1 << n), sel >> n
        return simulate.evaluate(circuit, np.concatenate([bits[aa], bits[bb]], axis=1))

    if (
        isinstance(circuit, ThresholdCircuit)
        and circuit.depth == 2
        and (1 << 2 * n) * circuit.layers[0].n_gates <= NUMPY_TERMS
    ):
        bits = ((words[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(np.uint8)
        from circuits._product_eval import depth2_product_bits

        return np.ascontiguousarray(depth2_product_bits(circuit, bits, bits).T).ravel()  # k = a + 2^n b
    if isinstance(circuit, ThresholdCircuit) and circuit.depth == 2:
        from networks.reduction.circuit import circuit_bits
        from networks.reduction.product import ProductSupport

        bits = ((words[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(np.uint8)
        X = np.where(bits == 1, 1.0, -1.0) / np.sqrt(2 * m)
        sup = ProductSupport(n=n, m=m, XA=X, XB=X, code_bits=bits)
        table = circuit_bits(circuit, sup)  # [a, b]
        out = np.ascontiguousarray(table.T).ravel()  # k = a + 2^n b
        sel = np.random.default_rng(0).choice(out.size, min(64, out.size), replace=False)
        if (generic(sel) != out[sel]).any():
            raise RuntimeError(
                "neuron-wise and generic circuit evaluation disagree on the support (this is a bug)"
            )
        return out
    return generic(np.arange(1 << 2 * n))
