"""Per-circuit compiled bit-sliced kernels (private; ``kernel="fused"``).

The interpreted kernel (``circuits._kernels_bitsliced._bs_block``) runs a circuit's adder program
op by op over whole 64-word planes: every compressor loads its inputs from, and stores its sums
and carries to, a scratch buffer.  Here the same circuit (the same ``_bitsliced_plan.netlist``)
becomes straight-line Python source, one statement per bitwise operation on a vector of eight
words (``circuits._simd``: LLVM ``<8 x i64>``, one AVX-512 register), inside one loop over the
eight vectors of a plane, ending in a popcount of the lanes where the output differs from the
target.  numba compiles it once per circuit (``plane``, with the fixed signature
``_kernels_fused.PLANE_SIG``); the carry-save sums stay in vector registers and each layer-1
plane word is loaded once.  Per 4096 points the work is one full or half adder per input plane (P input
planes reduce to K bits with at most P adders), a full adder is two ``vpternlogq``
(``_simd.vsum3``, ``_simd.vcarry``), and there is no buffer traffic.  The driver
``_kernels_fused._fused_block`` (compiled once, cached) receives ``plane`` as a first-class
function.
Measured (benchmarks/bench_fused.py, final run in BENCHMARKS.md, one and two threads): 1.9-2.4x
less time than the interpreted program on W1-W3, 5.5-5.7x on IP_16's depth-3 circuit.

Masks of fewer lanes: with 4096-lane masks W2's table is 6.4 MiB and its loads wait on L3 (all
mask words pinned to one plane: 55 -> 30 ms on one thread).  ``source(circuit, mask_bits)``
with mask_bits < LB reads, for each vector, the offset of its sub-plane's mask (``moffs`` has
one row per sub-plane, ``_kernels_fused._fused_block``), so the table shrinks by 2^(LB - mask_bits)
(W2 at 10 bits: 1.3 MiB; 36 vs 47-50 ms on one thread) for the cost of one offset load per
mask vector, which the 4096-lane kernel also pays (its 256 hoisted addresses do not fit in
registers) and of computing the sub-plane offsets (a vectorised loop; as a scalar loop it ate
the gain).  ``circuits.dispatch`` picks the lane count from the table size.

History of the word loop (same-process A/B, median of 7-9, benchmark machine): the version
that LLVM vectorised from scalar ``uint64`` code ran with run-time bounds and a signed index
(numba's negative-index wraparound), so LLVM gathered ``tv`` and kept sums on the stack (W2:
70 vector spills per 8 words); with a constant trip count and an unsigned index (public call,
one thread) W2 went 58 -> 52 ms and W3 13 -> 10 ms.  Scalar code then left full adders at two
to three operations each (a majority has no depth-two formula, so LLVM never made it one
``vpternlogq``); explicit vectors with the copy-free carry (``_simd`` module docstring) cut
W2's vector operations per 8 words from 948 to 747 and its cold compile from 5.4 to 3.9 s,
for 4-8 % on W1 and W2 and no change on W3 and IP_16 (the loop is then bound by loads and
address arithmetic rather than by the vector ALU).

How the adders are ordered: the planes arrive input by input (low bit first) into streaming
carry-save counters, at most two pending planes per column, a third triggering a full adder
whose sum stays and whose carry moves up.  This keeps few values live (no register spills for
W1 or W2); a breadth-first (Wallace) order spilled on W2 (96 vs 59 ms, measured in one
process with the scalar code).

Exactness is the interpreted kernel's argument (``_kernels_bitsliced`` module docstring, items
1-3) with a different order of the same kind of adders: each full adder maps three planes of
weight 2^b to a sum plane of weight 2^b and a carry plane of weight 2^(b+1) with
x + y + z = s + 2c in every lane (a half adder x + y = s + 2c likewise), so the weighted sum of
the pending planes is invariant and equals S'.  Column b is finished after all inputs and all
carries into it have been reduced to at most one plane, which is then bit b of S' (none: 0),
because columns are finished from b = 0 upwards and later steps only add weight >= 2^(b+1).
Carries into columns >= K are zero (S' < 2^K) and are dropped.  The comparison S' >= T' is the
interpreted kernel's bitwise one, with constant bits folded by the generator (Python ints).
The first counterexample of a plane is found by re-running ``plane`` with the lane mask ``rm``
restricted to halves of the plane (bisection, 12 calls; exact).

The cache of generated kernels on disk, and their loading into a process, are
``circuits._bitsliced_cache``.
"""

from __future__ import annotations

from circuits import _bitsliced_plan as _bplan, _kernels_planes as _planes, _simd

MAX_INPUTS = 20_000         # adder inputs; beyond, the interpreted program runs (compile time)




class _Emitter:
    """Straight-line code for one vector of eight words of the output plane (statements on
    ``circuits._simd`` vectors: ``vload``, ``vsum3`` / ``vcarry`` (full adder), ``vxor`` /
    ``vand`` (half adder), ``vor``, ``vnot``)."""

    def __init__(self, address="o{p} + v"):
        self.lines = []
        self.n = 0
        self.loaded = set()
        self.address = address           # word index of plane p's vector in ``masks``

    def fresh(self):
        self.n += 1
        return f"t{self.n}"

    def load(self, plane):
        """The variable of layer-1 plane ``plane``, loaded just before its first use."""
        name = f"m{plane}"
        if plane not in self.loaded:
            self.loaded.add(plane)
            self.lines.append(f"{name} = vload(masks, {self.address.format(p=plane)})")
        return name

    def full_adder(self, x, y, z):
        s, c = self.fresh(), self.fresh()
        self.lines.append(f"{s} = vsum3({x}, {y}, {z})")
        self.lines.append(f"{c} = vcarry({s}, {y}, {z})")     # = majority(x, y, z)
        return s, c

    def half_adder(self, x, y):
        s, c = self.fresh(), self.fresh()
        self.lines.append(f"{s} = vxor({x}, {y})")
        self.lines.append(f"{c} = vand({x}, {y})")
        return s, c


def _sum_bits(em, entries, K):
    """Bits of S' = sum of 2^b * plane over ``entries`` [(b, variable-producing thunk)] in
    arrival order, by streaming carry-save counters: at most two pending planes per column, a
    third triggers a full adder (sum stays, carry moves up).  Returns K names (None: bit 0)."""
    pend = [[] for _ in range(K)]

    def add(b, x):
        if b >= K:                       # S' < 2^K: a carry into column K is zero
            return
        pend[b].append(x)
        if len(pend[b]) == 3:
            s, c = em.full_adder(*pend[b])
            pend[b] = [s]
            add(b + 1, c)

    for b, thunk in entries:
        add(b, thunk())
    bits = []
    for b in range(K):
        if len(pend[b]) == 2:
            s, c = em.half_adder(*pend[b])
            pend[b] = [s]
            add(b + 1, c)
        bits.append(pend[b][0] if pend[b] else None)
    return bits


def _compare(em, bits, K, tp):
    """Name of the plane [S' >= tp] (tp = 0: constant 1, -1: constant 0); constants folded."""
    if tp == 0:
        return "ONES"
    if tp < 0:
        return "ZERO"
    r = "ONES"
    for b in range(K):
        x = bits[b]
        if (tp >> b) & 1:                # r_b = S'_b & r_{b-1}
            if x is None or r == "ZERO":
                r = "ZERO"
            elif r == "ONES":
                r = x
            else:
                r2 = em.fresh()
                em.lines.append(f"{r2} = vand({x}, {r})")
                r = r2
        else:                            # r_b = S'_b | r_{b-1}
            if x is None or r == "ONES":
                continue
            if r == "ZERO":
                r = x
            else:
                r2 = em.fresh()
                em.lines.append(f"{r2} = vor({x}, {r})")
                r = r2
    return r


def _plane_code(l1, jobs, out_ref, address="o{p} + v"):
    """(statements of the word loop, layer-1 planes read, name of the output word)."""
    em = _Emitter(address)
    if out_ref is not None:
        return em.lines, [out_ref[1]], em.load(out_ref[1])
    prev = {}                            # (gate, complement) -> name, previous layer
    for layer_jobs in jobs:
        new = {}
        for members, K, cols, tps in layer_jobs:
            entries = []
            for b, col in enumerate(cols):
                for x in col:
                    if x[0] == "m":
                        entries.append((x[2], b, lambda p=x[1]: em.load(p)))
                    else:
                        entries.append((x[1], b, lambda g=x[1], neg=x[2]: _gate(em, prev, g, neg)))
            entries.sort(key=lambda e: (e[0], e[1]))    # input by input, low bit first
            bits = _sum_bits(em, [(b, th) for _, b, th in entries], K)
            for g, tp in zip(members, tps):
                new[(g, False)] = _compare(em, bits, K, tp)
        prev = new
    return em.lines, sorted(em.loaded), prev[(0, False)]


def _gate(em, prev, g, neg):
    """A previous-layer plane, complemented (``~``) when read with a negative weight."""
    if not neg:
        return prev[(g, False)]
    if (g, True) not in prev:
        x = prev[(g, False)]
        if x in ("ONES", "ZERO"):
            prev[(g, True)] = "ZERO" if x == "ONES" else "ONES"
        else:
            name = em.fresh()
            em.lines.append(f"{name} = vnot({x})")
            prev[(g, True)] = name
    return prev[(g, True)]


_HEADER = '''\
"""Generated by circuits._bitsliced_codegen for one circuit (do not edit; safe to delete)."""
import numpy as np

from circuits._jit import njit
from circuits._kernels_fused import PLANE_SIG
from circuits._simd import vand, vcarry, vload, vnot, vor, vpop, vsplat, vsum3, vxor


@njit(PLANE_SIG, cache=True, nogil=True)
def plane(masks, moffs, tv, rm):
    """Lanes of the plane where the output differs from tv, restricted to rm."""
    ONES = vsplat(np.uint64(0xFFFFFFFFFFFFFFFF))
    ZERO = vsplat(np.uint64(0))
'''


def source(circuit, mask_bits=None):
    """Python source of the compiled kernel of ``circuit`` for layer-1 masks of ``mask_bits``
    lane bits (default LB: one mask per plane, its offsets loaded once; 9 .. LB - 1: the plane's
    2^(LB - mask_bits) sub-planes, ``moffs`` holding one row of offsets per sub-plane, read
    where the vector loads them).  Raises :class:`_bplan.NotApplicable` like
    :func:`_bplan.build`."""
    mb = _planes.LB if mask_bits is None else mask_bits
    vw = _simd.VW
    mw = 1 << (mb - 6)
    if mw % vw or mb > _planes.LB:
        raise ValueError(f"mask_bits must be in [9, {_planes.LB}], got {mb}")
    l1, jobs, out_ref = _bplan.netlist(circuit)
    if mb == _planes.LB:
        lines, planes, out = _plane_code(l1, jobs, out_ref)
        body = [f"    o{p} = np.uint64(moffs[{p}])" for p in planes]
        body.append("    d = np.int64(0)")
        body.append(f"    for q in range(0, {_planes.NW}, {vw}):")
        body.append("        v = np.uint64(q)")
    else:
        g = len(l1.gates) + 1
        lines, planes, out = _plane_code(l1, jobs, out_ref, "np.uint64(moffs[b + {p}]) + w")
        body = ["    d = np.int64(0)"]
        body.append(f"    for q in range(0, {_planes.NW}, {vw}):")
        body.append(f"        b = (q // {mw}) * {g}")
        body.append(f"        w = np.uint64(q % {mw})")
        body.append("        v = np.uint64(q)")
    body += ["        " + line for line in lines]
    body.append(f"        d += vpop(vand(vxor({out}, vload(tv, v)), vload(rm, v)))")
    body.append("    return d")
    return _HEADER + "\n".join(body) + "\n"


#: Seconds to load a compiled kernel from the cache into a process that has run a kernel (numba's
#: cache; the kernel 6-15 ms and the driver ``_fused_block`` 8 ms for W1-W3, idle 2-core
#: machine; numba's one-off start-up, about 0.3 s, is paid by whichever kernel a process loads
#: first, interpreted or compiled).
LOAD_SECONDS = 0.02


def compile_seconds_estimate(n_inputs: int) -> float:
    """Cold compile time (code generation, numba typing, LLVM) of a kernel with ``n_inputs``
    adder inputs on the benchmark machine: about 0.5 s + 11 ms per input (first calls measured
    by benchmarks/bench_fused.py, eight-word vector code: IP_16, 32 inputs, 0.81 s; W1, 95,
    1.36 s; W3, 1.13 s; W2, 391, 4.73 s)."""
    return 0.5 + 0.011 * n_inputs




def input_planes(circuit) -> int:
    """Adder inputs of the compiled kernel (sum of popcount |v| over the distinct weight rows of
    layers >= 2): its size in full adders, known without generating it."""
    total = 0
    for layer in circuit.layers[1:]:
        rows = {tuple(int(v) for v in row) for row in layer.weights.tolist()}
        total += sum(bin(abs(v)).count("1") for row in rows for v in row)
    return total
