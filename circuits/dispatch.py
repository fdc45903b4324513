"""Which exhaustive kernel evaluates a circuit, and the arguments each kernel takes.

Three exact kernels evaluate a layered threshold circuit on the whole cube (or a range of it):
the **low/high** kernel (``circuits._kernels``: integer partial sums over a low/high split of
the input bits, in the narrowest dtype the weight bound proves safe, any weights), the
interpreted **bit-sliced** kernel (``circuits._kernels_bitsliced``: 4096 points per pass as bit
planes, small weights) and the **fused** bit-sliced kernel (the circuit's adder tree compiled
by ``circuits._bitsliced_codegen``).  :func:`kernel_plan` says which one a circuit runs on and
why; ``circuits.simulate`` calls the private helpers here to build a kernel's arguments and to
run the bit-sliced kernels on a range.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from circuits import _background, _bitsliced_cache as _cache, _bitsliced_codegen as _codegen
from circuits import _bitsliced_plan as _bplan, _kernels_bitsliced as _bits, _kernels_fused as _fused
from circuits import _kernels_generic as _generic
from circuits.threshold import ThresholdCircuit
from circuits.utils.errors import InvalidCircuitError

__all__ = ["KERNELS", "KernelPlan", "kernel_plan", "work_dtype"]


def _as_circuit(circuit) -> ThresholdCircuit:
    if isinstance(circuit, ThresholdCircuit):
        return circuit
    to_layered = getattr(circuit, "to_threshold_circuit", None)
    if to_layered is not None:
        return to_layered()
    raise TypeError(f"circuit must be a ThresholdCircuit (or have .to_threshold_circuit()), got "
                    f"{type(circuit).__name__}")


# the low/high kernel's arguments (working dtype, low block) live in circuits._lowhigh_args
from circuits._lowhigh_args import (_LOW_TABLE_BYTES, _MAX_LOW_BITS, _MIN_LOW_BITS,  # noqa: E402,F401
                                    _TILE_BYTES, _WORK_DTYPES, _circuit_kernel_args, _low_bits,
                                    _readonly, _wire_slots, work_dtype)


# ---------------------------------------------------------------------------------------------
# Kernel choice: the bit-sliced kernel (circuits._kernels_bitsliced) or the low/high kernel.
# ---------------------------------------------------------------------------------------------

KERNELS = ("auto", "fused", "generic", "bitsliced", "lowhigh")
_MAX_MASK_BYTES = 1 << 23   # layer-1 mask table of the bit-sliced kernel: at most 8 MiB
# Bit-sliced slices below this many plane-op words (about 1-2 ms of one core) run serially.
# With a thread pool created per call the limit had to be 2^25 (W1 on 2 threads 6.4 -> 5.3 ms
# against 2^22); with one persistent pool (_helper_pool, the caller working too) the same-process
# A/B of the public call gave W1 (N = 24; 2^24.6 words) fused 4.22 -> 3.57 ms and interpreted
# 8.36 -> 5.37 ms on threads, while at N = 22 (2^22.6) serial stayed faster (1.11 vs 1.60 ms).
# Each slice is cut into _CHUNKS_PER_THREAD chunks per thread; every chunk is one kernel call
# (argument unboxing under the GIL, the block's start-up).  With the compiled kernels (same
# process, public call, 2 threads, median of 9, 8 -> 2 chunks per thread and 2^23 -> 2^22):
# W1 2.50 -> 2.17 ms, W1 at N = 22 1.22 -> 1.01 ms, W3 8.9 -> 8.6 ms, W2 25 ms either way
# (one chunk per thread was 3-7 % faster still, but leaves no slack for a busy second core).
_SERIAL_BITS_WORK = 1 << 22
_CHUNKS_PER_THREAD = 2


@dataclass(frozen=True)
class KernelPlan:
    """Which exhaustive kernel :func:`count_disagreements`, :func:`count_ones` and
    :func:`truth_table` use for a circuit, and why (see :func:`kernel_plan`).

    Attributes
    ----------
    kernel : str
        ``"fused"`` (bit-sliced, with the circuit's adder tree compiled into one loop),
        ``"generic"`` (bit-sliced, depth 2: one compiled kernel reading the circuit as data),
        ``"bitsliced"`` (4096 points per pass as bit planes, small weights; the adder program
        interpreted op by op) or ``"lowhigh"`` (integer partial sums over a low/high split of
        the bits, any weights).
    reason : str
        One sentence: the figures that decided.
    mask_bytes : int
        Size of the bit-sliced layer-1 mask table (0 if it was not computed); for ``"fused"``
        the compiled kernel's own table, whose masks may cover fewer than 4096 lanes so that
        it fits in L2 (the reason then says so).
    plane_ops : int
        Plane operations of the bit-sliced program per 4096 points, in 7:3-compressor units (a
        15:4 compressor counts 2; 0 if not applicable).
    adder_inputs : int
        Full-adder inputs of the compiled (``"fused"``) kernel per word (0 if not applicable).
    """

    kernel: str
    reason: str
    mask_bytes: int = 0
    plane_ops: int = 0
    adder_inputs: int = 0


# Cost model of the automatic choice, in single-core nanoseconds (constants fitted to one-thread
# timings of W1, W2, W3 and IP_16 by benchmarks/bench_fused.py and bench_bitsliced.py; a wrong
# guess costs time, never exactness).  Low/high kernel: per point and per work unit (layer-1
# gates plus the wires of layers >= 2).  Bit-sliced: building the mask table (per byte), then per
# plane of 4096 points the interpreted program's ops (7:3 units) or the compiled kernel's adder
# inputs, each slower once the mask table exceeds 2 MiB (W2: its loads wait on L3), plus the
# layer-1 look-ups.  The compiled kernel adds its one-off compile (or a load from the cache).
_NS_LOWHIGH_UNIT = 0.015
_NS_MASK_BYTE = 0.8
_NS_OP_L2, _NS_OP_L3 = 38.0, 53.0
_NS_FUSED_L2, _NS_FUSED_L3 = 4.0, 10.0
# generic depth-2 kernel (circuits._kernels_generic), per padded adder input: one offset load
# more per input than the compiled kernel and planes re-read per weight bit; the L2 figure
# refitted to one-thread kernel-only timings (benchmarks/bench_generic.py --threads 1, W1 W3 W2:
# generic / compiled 1.55, 1.91, 1.98 measured, 1.69, 1.86, 1.55 predicted; L3 not refitted)
_NS_GENERIC_L2, _NS_GENERIC_L3 = 7.5, 12.0
_NS_GATE_LOOKUP = 5.0
# masks of fewer lanes: the sub-plane offsets come from one vectorised loop per plane
# (_kernels_planes._bs_suboffsets), per gate and sub-plane; fitted so that W2 (9-bit masks, 245 layer-1
# planes) predicts the compiled kernel's measured one-thread time (35-37 ms) instead of 5x it
_NS_SUB_LOOKUP = 0.5
_L2_BYTES = 1 << 21
# Mask table of the compiled kernel: masks of the most lane bits (<= LB) whose table fits in
# one core's L2 (1 MiB on the benchmark machine), at least _MIN_FUSED_MASK_BITS (masks of 8
# words: one vector).  Same-process A/B, median of 5-7 (W2: 6.4 MiB with 4096-lane masks):
# W2 one thread 47-50 ms at 12 bits, 39 at 11 (2.9 MiB), 35-36 at 10 (1.3 MiB), 37 at 9
# (0.6 MiB); two threads 24-26, 21, 18-20, 19 ms; W1 and W3 (1.5-1.6 MiB at 12 bits) 3-8 %
# faster at 11 bits and slower at 10.  _FUSED_MASK_BITS forces a value (tests, benchmarks).
_FUSED_TABLE_BYTES = 1 << 20
_MIN_FUSED_MASK_BITS = 9
_FUSED_MASK_BITS = None

_PLANS = weakref.WeakKeyDictionary()   # circuit -> finished bit-sliced plan (circuits are immutable)
_FUSED = weakref.WeakKeyDictionary()   # circuit -> the same plan with its compiled kernel's source
_FACTS = weakref.WeakKeyDictionary()   # circuit -> (compiled kernel's key, its adder inputs, ...)
_GENERIC = weakref.WeakKeyDictionary()  # circuit -> its plan for the generic depth-2 kernel
_SUBPLANS = weakref.WeakKeyDictionary()  # circuit -> finished plan of masks of fewer lanes


def _estimates(c: ThresholdCircuit, plan) -> tuple:
    """(bit-sliced ns, low/high ns) predicted for one full-cube call on one core."""
    n_points = 1 << c.n_inputs
    n_planes = max(1, n_points >> _bits.LB)
    sizes = [c.n_inputs] + [layer.n_gates for layer in c.layers]
    low = _NS_LOWHIGH_UNIT * n_points * (sizes[1] + _wire_slots(sizes, 1))
    op = _NS_OP_L2 if plan.mask_bytes <= _L2_BYTES else _NS_OP_L3
    bits = (_NS_MASK_BYTE * plan.mask_bytes
            + n_planes * (plan.n_ops * op + _NS_GATE_LOOKUP * plan.n_l1))
    return bits, low


# Repeated calls.  A compile that does not pay for one call may pay over several: "auto"
# counts the counting calls per compiled-kernel key in this process.  With the kernel absent
# from the kernel cache a child process compiles it (circuits._background, whose docstring has
# the rule and the figures: the child starts once the predicted time saved by the calls so far
# covers the compile over the usable cores), and the first call after the child has finished
# loads the kernel and runs it.  Without a child (switched off, numba disabled, the child failed
# or could not start) the process compiles in the foreground once the time saved covers the
# whole setup (rent or buy: at most twice the better of the two choices made in hindsight).  A
# kernel in the on-disk cache costs its load only (LOAD_SECONDS), so it is used from the first
# call that saves more than that, or after a few calls.  _BACKGROUND: "off", "auto" or "eager"
# (DEPTHSEP_BACKGROUND_COMPILE, read at import).
_BACKGROUND = _background.mode_from_env()
_BACKGROUND_AFTER = 3          # not 2: count_ones then count_disagreements of one circuit is a
                               # common pair that is not a repeat
_BACKGROUND_YIELD = False   # True: calls made while a child compiles leave it one core
_USES: dict = {}              # compiled-kernel key -> counting calls in this process
_USES_LOCK = threading.Lock()


def _background_mode() -> str:
    """The child-process compile's mode (``_BACKGROUND``; see :func:`circuits._background.mode_of`)."""
    return _background.mode_of(_BACKGROUND)


def _repeat_choice(key, c, mb, state, gain_ns, setup_ns):
    """``(compile now, note for the reason)`` for a counting call that the single-call cost
    model leaves on a kernel without a per-circuit compile (see the comment above)."""
    with _USES_LOCK:
        uses = _USES[key] = _USES.get(key, 0) + 1
        if gain_ns <= 0:
            return False, ""
        if _cache.budget_left() <= 0:
            return False, (f"; not compiled: this process has loaded {_cache.MAX_PROCESS_KERNELS} "
                           f"compiled kernels (their memory is never freed)")
        mode = _background_mode()
        if mode != "off":
            st = _background.status(key)
            if st == "ready":
                return True, (f"; call {uses} of this circuit: its kernel, compiled by a child "
                              f"process, loaded from the kernel cache")
            if st == "running":
                return False, (f"; call {uses} of this circuit: its kernel is being compiled "
                               f"by a child process")
            if (st is None and state == "absent" and uses >= _BACKGROUND_AFTER
                    and _background.child_due(mode, uses, gain_ns, setup_ns)
                    and _background.start(key, _codegen.source(c, mb))):
                return False, (f"; call {uses} of this circuit: compiling its kernel in a "
                               f"child process")
    if uses * gain_ns >= setup_ns:
        return True, (f"; call {uses} of this circuit: the predicted time saved by the calls so "
                      f"far covers the setup")
    return False, ""


def _plan_of(c: ThresholdCircuit, kernel: str = "auto", *, finish: bool = True,
             counting: bool = False):
    """``(KernelPlan, kernel arguments)`` for a circuit; ``kernel`` forces a choice or ``"auto"``.

    ``finish=False`` skips building the bit-sliced mask table (enough to decide).
    ``counting=True`` (a counting call: :func:`count_disagreements`, :func:`count_ones`) counts
    the call for the repeated-call rule of ``"auto"``.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if kernel == "lowhigh":
        return (KernelPlan("lowhigh", "requested with kernel='lowhigh'"),
                _circuit_kernel_args(c))
    why_not = None
    plan = _PLANS.get(c)
    if plan is None:
        try:
            plan = _bplan.build(c)
        except _bplan.NotApplicable as exc:
            why_not = f"{exc}: too large for the bit-sliced kernel"
    if plan is not None and plan.mask_bytes > _MAX_MASK_BYTES:
        why_not = (f"the layer-1 mask table would take {plan.mask_bytes} bytes > "
                   f"{_MAX_MASK_BYTES} (partial sums over the low {min(c.n_inputs, _bits.LB)} "
                   f"bits take too many values: weights too large)")
    if why_not is not None:
        if kernel in ("bitsliced", "fused", "generic"):
            raise InvalidCircuitError(f"kernel={kernel!r} does not apply: {why_not}; use "
                                      f"kernel='auto' or 'lowhigh'")
        return (KernelPlan("lowhigh", why_not, plan.mask_bytes if plan else 0),
                _circuit_kernel_args(c))
    est_bits, est_low = _estimates(c, plan)
    if c not in _FACTS:                 # a hash of every weight: once per circuit object
        mb = _fused_mask_bits(c)
        gdata = _generic.generic_data(c, plan.n_l1)
        _FACTS[c] = (_cache.circuit_key(c, mb), _codegen.input_planes(c), mb,
                     _bplan.mask_table_bytes(c, mb), gdata)
    key, inputs, mb, fused_bytes, gdata = _FACTS[c]
    n_planes = max(1, (1 << c.n_inputs) >> _bits.LB)
    per_input = _NS_FUSED_L2 if fused_bytes <= _L2_BYTES else _NS_FUSED_L3
    n_sub = 1 << (_bits.LB - mb)
    lookups = n_planes * plan.n_l1 * (_NS_GATE_LOOKUP if n_sub == 1 else _NS_SUB_LOOKUP * n_sub)
    est_fused = _NS_MASK_BYTE * fused_bytes + n_planes * inputs * per_input + lookups
    generic_ok = not isinstance(gdata, str)
    if generic_ok:
        g_in = int(gdata[1][-1])
        per_g = _NS_GENERIC_L2 if fused_bytes <= _L2_BYTES else _NS_GENERIC_L3
        est_gen = _NS_MASK_BYTE * fused_bytes + n_planes * g_in * per_g + lookups
    else:
        est_gen = float("inf")
    state = _cache.state(key)
    setup = {"loaded": 0.0, "cached": _codegen.LOAD_SECONDS,
             "absent": _codegen.compile_seconds_estimate(inputs)}[state]
    setup_txt = {"loaded": "compiled in this process",
                 "cached": f"~{setup:.2g} s to load from the kernel cache",
                 "absent": f"~{setup:.2g} s to compile"}[state]
    if state == "cached" and generic_ok and not _generic.loaded():
        # a process that has not loaded the generic kernel pays a cache load either way: the
        # circuit's own (faster) kernel costs no more than the generic one
        setup = 0.0
        setup_txt = "its load from the kernel cache replaces the generic kernel's"
    compile_ns = setup * 1e9
    sub_txt = "" if mb == _bits.LB else f" (masks of {1 << mb} lanes: {fused_bytes} bytes)"
    gen_txt = (f"{est_gen / 1e6:.3g} ms generic depth-2" if generic_ok
               else f"no generic kernel ({gdata})")
    figures = (f"layer-1 mask table {plan.mask_bytes} bytes, {plan.n_ops} plane ops or "
               f"{inputs} compiled adder inputs{sub_txt} per {_bits.LANES} points; estimated "
               f"{est_bits / 1e6:.3g} ms bit-sliced, {gen_txt}, {est_fused / 1e6:.3g} ms "
               f"compiled ({setup_txt}), {est_low / 1e6:.3g} ms low/high on one core")
    fused = kernel == "fused"
    generic = kernel == "generic"
    if kernel == "generic" and not generic_ok:
        raise InvalidCircuitError(f"kernel='generic' does not apply: {gdata}; use "
                                  f"kernel='auto', 'fused' or 'bitsliced'")
    # the best kernel that needs no per-circuit compile: generic where it applies
    est_now = min(est_bits, est_gen)
    if kernel in ("bitsliced", "fused", "generic"):
        reason = f"requested with kernel={kernel!r}; " + figures
    elif min(est_now, est_fused + compile_ns) < est_low:
        fused = est_fused + compile_ns < est_now
        generic = not fused and est_gen <= est_bits
        reason = figures
        if fused and state != "loaded" and _cache.budget_left() <= 0:
            fused = False
            generic = est_gen <= est_bits
            reason += (f"; not compiled: this process has loaded {_cache.MAX_PROCESS_KERNELS} "
                       f"compiled kernels (their memory is never freed)")
        elif (not fused and counting and state != "loaded"
              and inputs <= _codegen.MAX_INPUTS and not numba_disabled()):
            fused, note = _repeat_choice(key, c, mb, state, est_now - est_fused, compile_ns)
            reason += note
            generic = generic and not fused
        elif not fused and state != "loaded" and _background_mode() != "off":
            st = _background.status(key)
            if st is not None:
                reason += f"; a child process compiling its kernel: {st}"
    else:
        return (KernelPlan("lowhigh", figures + " (the cube is too small to pay for the masks)",
                           plan.mask_bytes, plan.n_ops, inputs), _circuit_kernel_args(c))
    if fused and inputs > _codegen.MAX_INPUTS:
        if kernel == "fused":
            raise InvalidCircuitError(f"kernel='fused' does not apply: {inputs} adder inputs > "
                                      f"{_codegen.MAX_INPUTS} (compile time); use "
                                      f"kernel='bitsliced'")
        fused = False
        generic = generic_ok and est_gen <= est_bits
    if finish and plan.masks is None:
        plan = _bplan.finish(plan)
        _PLANS[c] = plan
    if fused:
        if finish:
            if c not in _FUSED:
                _FUSED[c] = _fused_plan(c, plan, key, mb)
            plan = _FUSED[c]
            _cache.load(*plan.code)   # compile here, not inside a Ctrl-C-deferring slice
        return KernelPlan("fused", reason, fused_bytes, plan.n_ops, inputs), plan
    if generic:
        if finish:
            if c not in _GENERIC:
                _GENERIC[c] = _sub_plan(c, plan, mb).with_generic(gdata)
                _GENERIC[c].interp = plan
            plan = _GENERIC[c]
        return KernelPlan("generic", reason, fused_bytes, plan.n_ops, inputs), plan
    return KernelPlan("bitsliced", reason, plan.mask_bytes, plan.n_ops, inputs), plan


def numba_disabled() -> bool:
    import numba
    return bool(numba.config.DISABLE_JIT)


def _fused_mask_bits(c: ThresholdCircuit) -> int:
    """Lane bits of the compiled kernel's masks: the most (<= LB) whose table fits in
    ``_FUSED_TABLE_BYTES``, at least ``_MIN_FUSED_MASK_BITS``."""
    if _FUSED_MASK_BITS is not None:
        return _FUSED_MASK_BITS
    mb = _bits.LB
    while mb > _MIN_FUSED_MASK_BITS and _bplan.mask_table_bytes(c, mb) > _FUSED_TABLE_BYTES:
        mb -= 1
    return mb


def _fused_plan(c: ThresholdCircuit, plan, key: str, mb: int):
    """The compiled kernel's plan: ``plan`` (finished, mask_bits = LB) with the kernel's source,
    or, for masks of ``mb`` < LB lane bits, a plan of its own whose ``interp`` is ``plan``
    (truth tables run the interpreted program)."""
    fplan = _sub_plan(c, plan, mb).with_code((key, _codegen.source(c, mb)))
    fplan.interp = plan
    return fplan


def _sub_plan(c: ThresholdCircuit, plan, mb: int):
    """``plan`` (finished, mask_bits = LB) when ``mb`` = LB, else the finished plan of masks of
    ``mb`` lane bits (built once per circuit, shared by the compiled and generic kernels)."""
    if mb == plan.mask_bits:
        return plan
    sub = _SUBPLANS.get(c)
    if sub is None or sub.mask_bits != mb:
        sub = _SUBPLANS[c] = _bplan.finish(_bplan.build(c, mb))
    return sub


def kernel_plan(circuit, kernel: str = "auto") -> KernelPlan:
    """Which exhaustive kernel a circuit runs on, and why.

    The choice is automatic and exact either way (every kernel gives identical counts, first
    counterexamples and truth tables).  The bit-sliced kernels apply when each layer-1 gate's
    partial sum over the low 12 input bits takes few enough values that its threshold masks fit
    in 8 MiB (together, over all layer-1 gates and their complements) and every gate has
    sum |w| < 2^61; otherwise (large weights) the low/high integer kernel runs.  Of the three
    bit-sliced kernels, ``"bitsliced"`` interprets the circuit's adder program plane by plane,
    ``"fused"`` compiles the circuit's adder tree into one loop (about 2x faster, after a
    one-off compile of one to a few seconds per circuit, kept in an on-disk cache: see
    ``circuits._bitsliced_codegen``), and ``"generic"`` (depth-2 circuits with one output gate
    whose column counts stay below 2^12) runs the output gate's sum as one register-resident
    counter with the circuit as data: no per-circuit compile, compiled once per machine like the
    other library kernels (``circuits._kernels_generic``).  A cost model (mask-table build,
    plane operations or adder inputs per 4096 points, the compile unless cached, against
    points times gates for
    the low/high kernel; constants measured by ``benchmarks/bench_bitsliced.py`` and
    ``benchmarks/bench_fused.py``) picks the fastest, so small cubes stay on the low/high
    kernel and a circuit is compiled only when its cube is large enough to repay it, its
    compiled kernel is already cached (a load of about 20 ms), or the same circuit is counted
    again in this process often enough to repay its compile (rent or buy): a child process (at
    most 8 per process) compiles the circuit's kernel into the kernel cache while the calling
    process keeps counting on the kernel that needs no compile, and the first call after the
    child has finished loads the compiled kernel and runs it (``circuits._background``).  The
    child starts once the time the compiled kernel would have saved covers the compile divided
    by the usable cores (what the child's core costs the calls meanwhile), from the third call;
    ``DEPTHSEP_BACKGROUND_COMPILE=eager`` starts it from the third call whatever the cost,
    ``=0`` switches it off.  Without a child, the process compiles in the foreground once the
    time saved covers the whole compile (``benchmarks/bench_public_path.py``).  A process compiles
    or loads at most ``circuits._bitsliced_cache.MAX_PROCESS_KERNELS`` circuit kernels this
    way (numba never frees machine code).  The mask table of a circuit object is built once and
    reused by later calls.  Truth tables always use the interpreted planes (a table is bound by
    writing its 2^N bytes).

    Parameters
    ----------
    circuit : ThresholdCircuit
    kernel : {"auto", "fused", "generic", "bitsliced", "lowhigh"}
        ``"auto"`` (the default) decides; the others force a kernel (``"fused"``,
        ``"generic"`` and ``"bitsliced"`` raise :class:`~circuits.utils.errors.InvalidCircuitError`
        where they do not apply).

    Returns
    -------
    KernelPlan
        ``.kernel`` and ``.reason`` (plus the mask-table size and operation counts).

    Examples
    --------
    >>> from circuits.constructions import ip_depth3
    >>> kernel_plan(ip_depth3(18)).kernel           # 2^36 points, weights 1: worth compiling
    'fused'
    >>> kernel_plan(ip_depth3(4)).kernel            # 256 points: not worth building masks
    'lowhigh'
    >>> from circuits.threshold import ThresholdCircuit
    >>> kernel_plan(ThresholdCircuit.single_gate([2**40] * 30, 1)).kernel   # large weights
    'lowhigh'
    """
    c = _as_circuit(circuit)
    return _plan_of(c, kernel, finish=False)[0]


# one persistent pool for every GIL-free kernel run on threads (circuits.utils._threads)
from circuits.utils._threads import helper_pool as _helper_pool  # noqa: E402


def _bits_threads(block, args, h_lo: int, h_hi: int):
    """``_bs_block`` over [h_lo, h_hi) on ``numba.get_num_threads()`` Python threads.

    The block kernel releases the GIL (``nogil``), so threads run it in parallel; they take
    chunks of high-block values from a shared list (dynamic scheduling).  The calling thread is
    one of them, the others come from one persistent pool (:func:`_helper_pool`).  Measured on the shared
    2-vCPU machines: numba's OpenMP ``prange`` ran the bit-sliced kernel 2.4x slower on two
    threads than on one under load 4, these threads never slower than one.  Counts add and the
    first index is the smallest over chunks, so the result does not depend on scheduling.
    """
    import numba
    threads = numba.get_num_threads()
    if _BACKGROUND_YIELD and threads > 1 and _background.busy():
        threads -= 1                     # a core for the compiling child
    threads = max(1, min(threads, h_hi - h_lo))
    n_chunks = min(h_hi - h_lo, _CHUNKS_PER_THREAD * threads)
    span = h_hi - h_lo
    bounds = iter([(h_lo + i * span // n_chunks, h_lo + (i + 1) * span // n_chunks)
                   for i in range(n_chunks)])
    lock = threading.Lock()

    def worker():
        count, first = 0, -1
        while True:
            with lock:
                b = next(bounds, None)
            if b is None:
                return count, first
            c, f = block(*args, b[0], b[1])
            count += int(c)
            if f >= 0 and (first < 0 or f < first):
                first = int(f)

    if threads == 1:
        return worker()
    futs = [_helper_pool(threads - 1).submit(worker) for _ in range(threads - 1)]
    parts = [worker()] + [fut.result() for fut in futs]     # the caller works too
    hits = [f for _, f in parts if f >= 0]
    return sum(c for c, _ in parts), (min(hits) if hits else -1)


def _bits_run(plan, spec, start: int, stop: int, out):
    """The bit-sliced kernel on [start, stop): serial for small jobs, else on threads."""
    kind, params, table = spec
    if stop <= start:
        return 0, -1
    params = _readonly(np.ascontiguousarray(params, dtype=np.int64))
    table = _readonly(np.ascontiguousarray(table, dtype=np.uint8))
    geom = np.array([start, stop, kind], dtype=np.int64)
    h_lo = start >> _bits.LB
    h_hi = ((stop - 1) >> _bits.LB) + 1
    work = (h_hi - h_lo) * (plan.n_l1 + plan.n_ops + 2) * _bits.NW
    if plan.generic is not None and kind >= 0:
        block = _generic.generic_block()
        args = (plan.masks, plan.l1, plan.WhT, plan.sub, geom, params, table) + plan.generic
    elif plan.code is None or kind < 0:    # truth tables: the interpreted program writes planes
        block = _bits._bs_block
        interp = plan if plan.mask_bits == _bits.LB else plan.interp
        args = interp.args() + (geom, params, table, out)
    else:
        block = _fused.fused_block()
        args = (_cache.load(*plan.code), plan.masks, plan.l1, plan.WhT, plan.sub, geom, params,
                table)
    if work < _SERIAL_BITS_WORK:
        count, first = block(*args, h_lo, h_hi)  # type: ignore[call-arg]
        return int(count), int(first)
    return _bits_threads(block, args, h_lo, h_hi)
