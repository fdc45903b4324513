"""Plans of the bit-sliced kernels (plain Python; private).

:func:`build` turns a layered threshold circuit into the flat integer arrays the kernels of
``circuits._kernels_bitsliced`` loop over (the interpreted adder program), and :func:`netlist`
is the circuit as layer-1 planes and adder jobs, shared by that program and by the compiled
kernels of ``circuits._bitsliced_codegen``.  All exactness bookkeeping is in Python ints; the
argument is the ``_kernels_bitsliced`` module docstring (items 0-3).  :func:`finish` builds the
layer-1 mask table (a numba kernel), the costly part, once a plan is chosen.
"""

import numpy as np

from circuits._kernels_bitsliced import (MAX_K, N_COLS, OP_C73_BUF, OP_C73_MASK, OP_C154_BUF,
                                         OP_C154_MASK, OP_CMP, OP_MASK, OP_NOT)
from circuits._kernels_planes import LANES, LB, NW, _layer1_masks

__all__ = ["NotApplicable", "Plan", "netlist", "build", "finish", "mask_table_bytes", "LANES"]



class NotApplicable(ValueError):
    """The bit-sliced kernel does not apply to this circuit (the message says why)."""


class Plan:
    """Flat arrays for :func:`_bs_block` (picklable, no numba objects)."""

    __slots__ = ("masks", "l1", "WhT", "sub", "mask_bits", "ops", "sidx", "prog", "n_inputs",
                 "mask_bytes", "n_ops", "n_l1", "pending", "code", "interp", "generic")

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():      # read-only again, so workers reuse the compiled kernel
            setattr(self, k, _readonly(v) if isinstance(v, np.ndarray) else v)

    def args(self):
        """Arguments of the interpreted kernel (``_bs_block``), which needs mask_bits = LB."""
        if self.mask_bits != LB:
            raise ValueError("a plan with mask_bits < LB runs on the compiled kernel only")
        return self.masks, self.l1, self.WhT, self.ops, self.sidx, self.prog

    def with_code(self, code):
        """The same plan run by a compiled kernel (``code``: its generated source; None: the
        interpreted program).  Arrays are shared, not copied."""
        other = Plan()
        for k in self.__slots__:
            setattr(other, k, getattr(self, k))
        other.code = code
        other.generic = None
        return other

    def with_generic(self, data):
        """The same plan run by the generic depth-2 kernel (``circuits._kernels_generic``;
        ``data`` = its ``(inp, cstart, spec)``).  Arrays are shared, not copied."""
        other = self.with_code(None)
        other.generic = data
        return other


def _readonly(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _normalised(row, t):
    """min(max(t, M), P + 1) for weights ``row`` (module docstring, item 0); Python ints."""
    pos = sum(v for v in row if v > 0)
    neg = sum(v for v in row if v < 0)
    return min(max(int(t), neg), pos + 1)


class _Layer1:
    """Layer-1 gates the program reads: gate j as is (j, False) or complemented (j, True)."""

    def __init__(self, rows, thresholds):
        self.rows = rows
        self.thresholds = thresholds
        self.index = {}
        self.gates = []     # (weights row, threshold) as Python ints

    def plane(self, j, complement):
        key = (j, complement)
        if key not in self.index:
            row, t = self.rows[j], self.thresholds[j]
            if complement:
                row, t = [-v for v in row], 1 - t
            self.index[key] = len(self.gates)
            self.gates.append((row, _normalised(row, t)))
        return self.index[key]


class _Program:
    """Emits ops and allocates buffer words (plane 0 is the all-zero plane, never written).

    Compressor blocks (3 or 4 planes) are recycled once all their planes have been read, so the
    scratch buffer stays small (cache-resident); an op's output block is allocated before its
    inputs are released, so no op writes a plane it reads.
    """

    def __init__(self):
        self.ops = []
        self.sidx = []
        self.words = NW
        self.free = {3: [], 4: []}
        self.live = {}      # block offset -> set of its unread plane offsets
        self.block_of = {}  # plane offset -> block offset

    def alloc(self, planes):
        if planes in self.free and self.free[planes]:
            o = self.free[planes].pop()
        else:
            o = self.words
            self.words += planes * NW
        if planes in self.free:
            self.live[o] = (planes, {o + k * NW for k in range(planes)})
            for k in range(planes):
                self.block_of[o + k * NW] = o
        return o

    def release(self, plane):
        """Plane ``plane`` has been read for the last time (non-block planes are ignored)."""
        blk = self.block_of.get(plane)
        if blk is None:
            return
        size, left = self.live[blk]
        left.discard(plane)
        if not left:
            del self.live[blk]
            self.free[size].append(blk)

    def emit(self, *row):
        row = list(row) + [0] * (N_COLS - len(row))
        self.ops.append(row)


C154_MIN = 10       # a column group of >= this many planes takes a 15:4 compressor (else 7:3)


def _sum_columns(prog, inputs, K, zero_mask):
    """Emit the compressors for S' = sum_b 2^b (planes of column b); returns the K offsets
    of the bit planes of S' (0 = zero plane), which the caller releases after reading them.
    ``inputs[b]`` is a list of ("m", gate) or ("b", word offset) planes.  Groups of at least
    ``C154_MIN`` planes of one kind go through 15:4 compressors (fewer loads and stores per
    plane than 7:3), the rest through 7:3."""
    cols = [list(inputs[b]) if b < len(inputs) else [] for b in range(K + 3)]
    bits = []
    for b in range(K):
        acc = 0                                   # the zero plane, or a carry of this
        for i, (k, x) in enumerate(cols[b]):      # column (one adder input less)
            if k == "b":
                acc = x
                del cols[b][i]
                break
        for kind in ("m", "b"):
            while True:
                group = [x for k, x in cols[b] if k == kind]
                if not group:
                    break
                n_in = 14 if len(group) >= C154_MIN else 6
                take, rest = group[:n_in], group[n_in:]
                cols[b] = [(k, x) for k, x in cols[b] if k != kind] + [(kind, x) for x in rest]
                pad = zero_mask if kind == "m" else 0
                take = take + [pad] * (n_in - len(take))
                n_out = 4 if n_in == 14 else 3
                dst = prog.alloc(n_out)
                if n_in == 14:
                    prog.emit(OP_C154_MASK if kind == "m" else OP_C154_BUF, dst, acc, *take)
                else:
                    prog.emit(OP_C73_MASK if kind == "m" else OP_C73_BUF, dst, acc, *take)
                prog.release(acc)
                if kind == "b":
                    for x in take:
                        prog.release(x)
                acc = dst
                for k in range(1, n_out):
                    cols[b + k].append(("b", dst + k * NW))
        bits.append(acc)
    for b in range(K, K + 3):                     # carries into columns >= K: zero, dropped
        for _, x in cols[b]:
            prog.release(x)
    return bits


def netlist(circuit):
    """The circuit as layer-1 planes and adder jobs, shared by the interpreted program
    (:func:`build`) and the compiled one (``circuits._bitsliced_codegen``).

    Returns ``(l1, layers, out)``: ``l1`` the :class:`_Layer1` planes (gates and complements
    the next layer reads); ``layers[i]`` the jobs of layer i + 2, each ``(members, K, cols,
    tps)``: the gates ``members`` share one weight row, S' = sum_b 2^b (planes of ``cols[b]``)
    < 2^K, and gate ``members[m]`` is [S' >= tps[m]] (``tps[m]`` = 0: constant 1, -1: constant
    0; module docstring, item 2).  A plane is ("m", layer-1 plane, gate) in layer 2 and ("g",
    gate, complement) of the previous layer above (``gate``: the input's index in the row).  ``out`` is the output plane of a depth-1 circuit
    (("m", plane)) and None otherwise (the output is gate 0 of the last layer).  Raises
    :class:`NotApplicable` when a sum reaches 2^MAX_K.
    """
    layers = circuit.layers
    first = layers[0]
    l1 = _Layer1(first.weights.tolist(), [int(t) for t in first.thresholds.tolist()])
    if len(layers) == 1:
        return l1, [], ("m", l1.plane(0, False))
    jobs = []
    for li in range(1, len(layers)):
        layer = layers[li]
        rows = [[int(v) for v in row] for row in layer.weights.tolist()]
        thr = [int(t) for t in layer.thresholds.tolist()]
        groups = {}
        for g, row in enumerate(rows):
            groups.setdefault(tuple(row), []).append(g)
        layer_jobs = []
        for row, members in groups.items():
            tot = sum(abs(v) for v in row)
            neg = sum(-v for v in row if v < 0)
            K = max(1, tot.bit_length())
            if K > MAX_K:
                raise NotApplicable(f"layer {li + 1} has a gate with sum |w| = {tot} >= "
                                    f"2^{MAX_K}")
            cols = [[] for _ in range(K)]
            for i, v in enumerate(row):
                m, b = abs(v), 0
                while m:
                    if m & 1:
                        cols[b].append(("m", l1.plane(i, v < 0), i) if li == 1
                                       else ("g", i, v < 0))
                    m >>= 1
                    b += 1
            tps = []
            for g in members:
                tp = thr[g] + neg
                tps.append(0 if tp <= 0 else -1 if tp >= (1 << K) else tp)
            layer_jobs.append((members, K, cols, tps))
        jobs.append(layer_jobs)
    return l1, jobs, None


def mask_table_bytes(circuit, mask_bits=LB):
    """Bytes of the layer-1 mask table of :func:`build` (without building anything)."""
    l1, _, _ = netlist(circuit)
    L1 = min(circuit.n_inputs, mask_bits)
    n_masks = sum(sum(abs(v) for v in row[:L1]) + 2 for row, _ in l1.gates) + 1
    return n_masks * (1 << mask_bits) // 8


def build(circuit, mask_bits=LB):
    """The :class:`Plan` of a layered circuit, without its mask table (see :func:`finish`).

    ``mask_bits`` (6 .. LB) is the number of low lane bits the layer-1 masks cover: LB for the
    interpreted kernel; fewer (a smaller table, read by the compiled kernel sub-plane by
    sub-plane: ``_kernels_fused._fused_block``) only for the compiled kernel.  ``sub[s, j]``
    is gate j's partial sum over lane bits mask_bits .. LB - 1 set as in s.

    Raises :class:`NotApplicable` (with the reason) when a bound of the module docstring fails;
    the caller then uses the low/high kernel.
    """
    if not 6 <= mask_bits <= LB:
        raise ValueError(f"mask_bits must be in [6, {LB}], got {mask_bits}")
    N = circuit.n_inputs
    L1 = min(N, LB)
    Lm = min(N, mask_bits)
    mw = 1 << (mask_bits - 6)
    n_sub = 1 << (LB - mask_bits)
    l1, jobs, out_ref = netlist(circuit)
    prog = _Program()
    if out_ref is not None:
        out = prog.alloc(1)
        prog.emit(OP_MASK, out, out_ref[1])
    else:
        planes = None       # planes of the previous layer (layers >= 3): {(gate, complement): off}
        for layer_jobs in jobs:
            if planes is not None:      # NOT planes for inputs read with a negative weight
                used_neg = sorted({x[1] for _, _, cols, _ in layer_jobs for col in cols
                                   for x in col if x[2]})
                for i in used_neg:
                    o = prog.alloc(1)
                    prog.emit(OP_NOT, o, planes[(i, False)])
                    planes[(i, True)] = o
            new = {}
            for members, K, cols, tps in layer_jobs:
                refs = [[("m", x[1]) if x[0] == "m" else ("b", planes[(x[1], x[2])])
                         for x in col] for col in cols]
                # the zero mask plane is referenced as gate index -1 and fixed below
                bits = _sum_columns(prog, refs, K, -1)
                s0 = len(prog.sidx)
                prog.sidx.extend(bits)
                for g, tp in zip(members, tps):
                    o = prog.alloc(1)
                    prog.emit(OP_CMP, o, tp, K, s0)
                    new[(g, False)] = o
                for x in bits:
                    prog.release(x)
            planes = new
        out = planes[(0, False)]
    # layer-1 mask table
    g1 = len(l1.gates)
    lo, mlen, cbase, WhT = [], [], [], np.zeros((max(N - LB, 0), g1), dtype=np.int64)
    W1 = np.zeros((g1, N), dtype=np.int64)
    sub = np.zeros((n_sub, g1), dtype=np.int64)
    for j, (row, t) in enumerate(l1.gates):
        tot = sum(abs(v) for v in row)
        if (2 * tot + 2).bit_length() > MAX_K:
            raise NotApplicable(f"a layer-1 gate has sum |w| = {tot}, too large for int64 "
                                f"index arithmetic")
        lo_j = sum(v for v in row[:Lm] if v < 0)
        hi_j = sum(v for v in row[:Lm] if v > 0)
        lo.append(lo_j)
        mlen.append(hi_j - lo_j + 2)
        cbase.append(t - lo_j)
        W1[j] = row
        if N > LB:
            WhT[:, j] = row[LB:]
        for sv in range(n_sub):
            sub[sv, j] = sum(row[i] for i in range(Lm, L1) if (sv >> (i - mask_bits)) & 1)
    n_masks = sum(mlen) + 1
    # the mask offsets (and the table's length in words) are int64 array entries: decide from the
    # exact Python-int total, before filling any array, that they fit below 2^MAX_K
    if ((n_masks * mw) * 8).bit_length() > MAX_K:
        raise NotApplicable(f"the layer-1 mask table would hold {n_masks * mw} words, too large "
                            f"for int64 index arithmetic")
    plan = Plan()
    plan.code = None
    plan.interp = None
    plan.generic = None
    plan.mask_bits = mask_bits
    plan.sub = _readonly(sub)
    plan.mask_bytes = n_masks * mw * 8
    plan.n_l1 = g1
    moff = np.zeros(g1, dtype=np.int64)
    acc = 0
    for j in range(g1):
        moff[j] = acc
        acc += mlen[j] * mw
    plan.n_inputs = N
    # plane ops in 7:3 units (the cost model's unit): a 15:4 step reads 15 planes and writes 4,
    # measured 2.1x a 7:3 step (70 vs 33 ns on L1-resident planes, benchmarks/ machine)
    plan.n_ops = sum(2 if row[0] in (OP_C154_MASK, OP_C154_BUF) else 1 for row in prog.ops)
    ops = np.array(prog.ops, dtype=np.int64).reshape(-1, N_COLS)
    for code, width in ((OP_C73_MASK, 6), (OP_C154_MASK, 14)):
        m = ops[:, 0] == code
        srcs = ops[m, 3:3 + width]
        srcs[srcs < 0] = g1                # the zero mask plane: the extra row of l1
        ops[m, 3:3 + width] = srcs
    plan.ops = _readonly(ops)
    plan.sidx = _readonly(np.array(prog.sidx + [0], dtype=np.int64))
    plan.prog = _readonly(np.array([prog.words, out], dtype=np.int64))
    plan.WhT = _readonly(WhT)
    l1_arr = np.zeros((g1 + 1, 3), dtype=np.int64)
    l1_arr[:g1, 0] = moff
    l1_arr[:g1, 1] = mlen
    l1_arr[:g1, 2] = cbase
    l1_arr[g1, 0] = acc                    # zero plane after the last gate's masks
    l1_arr[g1, 1] = 1
    plan.l1 = _readonly(l1_arr)
    plan.masks = None
    plan.pending = (W1, np.array(lo, dtype=np.int64), np.array(mlen, dtype=np.int64), moff, Lm,
                    acc + mw, mw)
    return plan


def finish(plan):
    """Fill in the mask table (the costly part of a plan, done once the plan is chosen)."""
    if plan.masks is None:
        W1, lo, mlen, moff, L1, total, mw = plan.pending
        plan.masks = _readonly(_layer1_masks(W1, lo, mlen, moff, L1, total, mw))
        plan.pending = None
    return plan
