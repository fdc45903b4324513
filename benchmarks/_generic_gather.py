"""Lever tried on the generic depth-2 kernel and not kept: each chunk's distinct layer-1 planes
gathered once into a small buffer (L1-resident), the column walk reading the buffer.

The variant is built from the library's own ``circuits/_kernels_generic.py`` by textual
replacement (so the rest of the kernel is exactly the library's), written to a temporary file
and imported; the replacements are checked, so a changed kernel fails loudly instead of
measuring something else.  Used by ``benchmarks/bench_generic.py --kernels ...,gather``.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

_PRE = '''
from llvmlite import ir  # noqa: F401
from numba.core.extending import intrinsic
from circuits._simd import _VEC


@intrinsic
def vstore(typingctx, arr, i, x):
    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        builder.store(args[2], builder.bitcast(ptr, _VEC.as_pointer()), align=8)
        return context.get_dummy_value()
    return types.none(arr, i, x), codegen


@njit(nogil=True, inline="always")
def _ldb(buf, slot, i, row, w):
    return vload(buf, np.uint64(slot[i]))

'''

_EDITS = [
    ("def _plane(masks, offs, tv, rm, cstart, spec, mw):",
     "def _plane(masks, offs, tv, rm, cstart, spec, mw, slot, buf, n_u):"),
    ("""        row = np.uint64((q // mw) * n_in)
        w = np.uint64(q % mw)
""", """        row = np.uint64((q // mw) * n_u)
        w = np.uint64(q % mw)
        for u in range(n_u):
            vstore(buf, np.uint64((u + 1) * VW),
                   vload(masks, np.uint64(offs[row + np.uint64(u)]) + w))
"""),
    ("    n_in = cstart[K]\n", ""),
    ("def _generic_block(masks, l1, WhT, sub, geom, params, table, inp, cstart, spec, h_lo, h_hi):",
     "def _generic_block(masks, l1, WhT, sub, geom, params, table, inp, cstart, spec, uq, slot, "
     "h_lo, h_hi):"),
    ("""    n_in = inp.shape[0]
    offs = np.empty(n_sub * n_in, dtype=np.int64)""", """    n_in = uq.shape[0]
    offs = np.empty(n_sub * n_in, dtype=np.int64)
    buf = np.zeros((n_in + 1) * VW, dtype=np.uint64)"""),
    ("out[i] = row[inp[i]]", "out[i] = row[uq[i]]"),
    ("_plane(masks, offs, tv, rm, cstart, spec, mw)",
     "_plane(masks, offs, tv, rm, cstart, spec, mw, slot, buf, n_in)"),
    ("_ld(masks, offs,", "_ldb(buf, slot,"),
]


def load():
    """The variant module (its ``_generic_block`` takes two more arrays: :func:`extra`)."""
    src = (ROOT / "circuits" / "_kernels_generic.py").read_text()
    for old, new in _EDITS:
        if old not in src:
            raise RuntimeError(f"the generic kernel changed; update the gather variant: {old!r}")
        src = src.replace(old, new)
    src = src.replace("def _ldb(buf, slot, i, row, w):", "def _ld(masks, offs, i, row, w):")
    src = src.replace("@njit(cache=True", "@njit(cache=False")
    at = src.index("@njit(cache=False, nogil=True, inline=\"always\")\ndef _csa")
    src = src[:at] + _PRE + src[at:]
    path = Path(tempfile.mkdtemp(prefix="depthsep-gather-")) / "_generic_gather_variant.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("_generic_gather_variant", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def extra(inp, g1):
    """``(uq, slot)``: the distinct layer-1 planes of the adder inputs (the zero plane ``g1``
    excluded) and, per input, the word offset of its plane in the buffer (slot 0: the zero
    plane, never written)."""
    from circuits._simd import VW
    uq = sorted({int(x) for x in inp if int(x) != g1})
    pos = {p: k for k, p in enumerate(uq)}
    slot = np.array([0 if int(x) == g1 else (pos[int(x)] + 1) * VW for x in inp], dtype=np.int64)
    return np.array(uq, dtype=np.int64), slot


def runner(circuit, target):
    """A function running the gather variant on the whole cube through the library's
    ``dispatch._bits_run`` (the generic kernel's plan, driver swapped): ``(count, first)``."""
    from circuits import _kernels_generic, dispatch
    from circuits.functions import as_boolean_function
    mod = load()
    plan = dispatch._plan_of(circuit, "generic")[1]
    spec = as_boolean_function(target, circuit.n_inputs)._spec()
    base = plan.generic
    gen = tuple(base) + extra(base[0], plan.n_l1)

    def run():
        orig = _kernels_generic.generic_block
        plan.generic = gen
        _kernels_generic.generic_block = lambda: mod._generic_block
        try:
            return dispatch._bits_run(plan, spec, 0, 1 << circuit.n_inputs, None)
        finally:
            plan.generic = base
            _kernels_generic.generic_block = orig
    return run
