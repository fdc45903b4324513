"""Per-circuit compiled bit-sliced kernels (private; ``kernel="fused"``).

The interpreted kernel (``circuits._kernels_bitsliced._bs_block``) runs a circuit's adder program
op by op over whole 64-word planes: every compressor loads its inputs from, and stores its sums
and carries to, a scratch buffer.  Here the same circuit (the same ``_bitsliced_plan.netlist``)
becomes straight-line Python source, one statement per bitwise operation on a vector of eight
words (``circuits._simd``: LLVM ``<8 x i64>``, one AVX-512 register), inside one loop over the
eight vectors of a plane, ending in a popcount of the lanes where the output differs from the
target.  numba compiles it once per circuit (``plane``, with the fixed signature
``_bits.PLANE_SIG``); the carry-save sums stay in vector registers and each layer-1 plane word
is loaded once.  Per 4096 points the work is one full or half adder per input plane (P input
planes reduce to K bits with at most P adders), a full adder is two ``vpternlogq``
(``_simd.vsum3``, ``_simd.vcarry``), and there is no buffer traffic.  The driver
``_bits._fused_block`` (compiled once, cached) receives ``plane`` as a first-class function.
Measured (benchmarks/bench_fused.py, final run in BENCHMARKS.md, one and two threads): 1.9-2.4x
less time than the interpreted program on W1-W3, 5.5-5.7x on IP_16's depth-3 circuit.

Masks of fewer lanes: with 4096-lane masks W2's table is 6.4 MiB and its loads wait on L3 (all
mask words pinned to one plane: 55 -> 30 ms on one thread).  ``source(circuit, mask_bits)``
with mask_bits < LB reads, for each vector, the offset of its sub-plane's mask (``moffs`` has
one row per sub-plane, ``_bits._fused_block``), so the table shrinks by 2^(LB - mask_bits)
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

Kernels are cached: sources live in ``$DEPTHSEP_CACHE_DIR``, else ``$XDG_CACHE_HOME/depthsep``
or ``~/.cache/depthsep`` (subdirectory ``kernels``), named by a hash of the circuit's weights and
thresholds and of the code that generates and runs them (this module, ``_kernels_bitsliced.py``,
``_bitsliced_plan.py``, the numba version), written atomically, at most ``MAX_FILES`` kept (least recently used
removed, with their numba cache files); numba's own cache (``circuits._jit``: under the same
root, or ``$NUMBA_CACHE_DIR``) then lets a later process load the machine code instead of
compiling it (see :func:`compile_seconds_estimate` and ``LOAD_SECONDS``).  A cache directory
that cannot be written, or is not this user's or is writable by others, is replaced by a private
temporary one (a warning says why); a damaged or foreign source file is written again; sources
are run without ``.pyc`` files.  At most ``MAX_LOADED`` compiled kernels stay loaded in one
process (least recently used dropped: about 1.7 MiB each).  Compilation runs in a daemon thread with a large stack (numba and
LLVM recurse over long straight-line code; the default 8 MiB overflowed on W1) and before any
Ctrl-C-deferring slice, so a Ctrl-C during a compile interrupts at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
from collections import OrderedDict
from pathlib import Path

import numba
import numpy as np

from circuits import _bitsliced_plan as _bplan, _jit, _kernels_bitsliced as _bits, _simd

MAX_INPUTS = 20_000         # adder inputs; beyond, the interpreted program runs (compile time)
MAX_FILES = 256             # generated kernels kept in the cache directory
_STACK_BYTES = 512 << 20    # stack of the compiling thread (virtual; pages used on demand)

MAX_LOADED = 64             # compiled kernels kept loaded in one process (least recently used out)
MAX_PROCESS_KERNELS = 24    # distinct kernels "auto" compiles or loads in one process (memory:
                            # 1.5-2.1 MiB each, never freed: at most ~50 MiB per process)

_LOADED: OrderedDict = OrderedDict()   # key -> compiled plane function (this process), LRU order
_LOCK = threading.Lock()
_EVER_LOADED: set = set()   # keys of every kernel loaded in this process (machine code is immortal)
_TEMP_DIR: list = []        # the private temporary cache directory, once one is needed


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
from circuits._kernels_bitsliced import PLANE_SIG
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
    mb = _bits.LB if mask_bits is None else mask_bits
    vw = _simd.VW
    mw = 1 << (mb - 6)
    if mw % vw or mb > _bits.LB:
        raise ValueError(f"mask_bits must be in [9, {_bits.LB}], got {mb}")
    l1, jobs, out_ref = _bplan.netlist(circuit)
    if mb == _bits.LB:
        lines, planes, out = _plane_code(l1, jobs, out_ref)
        body = [f"    o{p} = np.uint64(moffs[{p}])" for p in planes]
        body.append("    d = np.int64(0)")
        body.append(f"    for q in range(0, {_bits.NW}, {vw}):")
        body.append("        v = np.uint64(q)")
    else:
        g = len(l1.gates) + 1
        lines, planes, out = _plane_code(l1, jobs, out_ref, "np.uint64(moffs[b + {p}]) + w")
        body = ["    d = np.int64(0)"]
        body.append(f"    for q in range(0, {_bits.NW}, {vw}):")
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


def cache_dir() -> Path:
    """Directory of the generated kernel sources (see the module docstring)."""
    return _jit.cache_root() / "kernels"


def circuit_key(circuit, mask_bits=None) -> str:
    """Identity of a circuit's compiled kernel: a hash of its weights and thresholds, of
    ``_kernels_bitsliced.py`` and this module (the code they generate and call), and of the
    numba version.  The generated file is ``_depthsep_fused_<key>.py``."""
    h = hashlib.sha256()
    for layer in circuit.layers:
        for a in (layer.weights, layer.thresholds):
            a = np.ascontiguousarray(a, dtype=np.int64)
            h.update(repr(a.shape).encode())
            h.update(a.tobytes())
    h.update(_code_version().encode())
    h.update(f"mask_bits={_bits.LB if mask_bits is None else mask_bits}".encode())
    return h.hexdigest()[:24]


_CODE_VERSION: list = []


def _code_version() -> str:
    """Hash of the code a generated kernel depends on (read once per process)."""
    if not _CODE_VERSION:
        h = hashlib.sha256(Path(_bits.__file__).read_bytes())
        h.update(Path(_bplan.__file__).read_bytes())
        h.update(Path(_simd.__file__).read_bytes())
        h.update(Path(__file__).read_bytes())
        h.update(f"{_bits.LB} {numba.__version__}".encode())
        _CODE_VERSION.append(h.hexdigest())
    return _CODE_VERSION[0]


def input_planes(circuit) -> int:
    """Adder inputs of the compiled kernel (sum of popcount |v| over the distinct weight rows of
    layers >= 2): its size in full adders, known without generating it."""
    total = 0
    for layer in circuit.layers[1:]:
        rows = {tuple(int(v) for v in row) for row in layer.weights.tolist()}
        total += sum(bin(abs(v)).count("1") for row in rows for v in row)
    return total


def state(key: str) -> str:
    """"loaded" (compiled in this process), "cached" (its source is in the cache directory and
    numba's index of its machine code beside it: a load, not a compile) or "absent".  A source
    without the index is "absent": a compile still running elsewhere (a child process of
    ``circuits._background``), or machine code numba cannot use."""
    if key in _LOADED:
        return "loaded"
    if not (cache_dir() / f"_depthsep_fused_{key}.py").exists():
        return "absent"
    return "cached" if indexed(key) else "absent"


def indexed(key: str) -> bool:
    """Whether numba's cache index of the kernel ``key`` is in the kernel cache (numba writes the
    machine code first and the index last, each atomically)."""
    name = f"_depthsep_fused_{key}."
    return any(p.name.startswith(name) and p.name.endswith(".nbi")
               for p in _numba_files(cache_dir()))


def _remove(path) -> None:
    """Remove a file, or a directory found where a file should be; errors are ignored."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        pass


def _numba_files(directory: Path) -> list:
    """numba's cache files of the generated kernels of ``directory`` (index and data)."""
    try:
        return [Path(e.path) for e in os.scandir(_jit.cache_path_of(directory / "x.py"))
                if e.name.startswith("_depthsep_fused_")]
    except OSError:
        return []


def _prune(directory: Path) -> None:
    """Keep the ``MAX_FILES`` most recently used generated sources, and numba's cache files
    only for the sources kept (also those left behind by a source removed otherwise)."""
    def mtime(p):
        try:
            return p.stat().st_mtime
        except OSError:
            return 0.0
    files = sorted(directory.glob("_depthsep_fused_*.py"), key=mtime)
    for p in files[:max(0, len(files) - MAX_FILES)]:
        _remove(p)
    kept = {p.stem for p in files[max(0, len(files) - MAX_FILES):]}
    for p in _numba_files(directory):
        if p.name.split(".", 1)[0] not in kept:
            _remove(p)


def _write(directory: Path, name: str, src: str) -> Path:
    """The generated source at ``directory/name.py``: kept if it is ours, whole and current,
    else (absent, damaged, foreign, not a regular file) written again atomically."""
    from circuits.utils.files import write_bytes_atomic
    why = _jit.safe_directory(directory)
    if why is not None:
        raise _jit._UnsafeCache(why)
    path = directory / f"{name}.py"
    data = src.encode()
    try:
        current = path.read_bytes() if _jit.safe_file(path) is None else None
    except OSError:                      # absent, a directory, unreadable
        current = None
    if current != data:
        if os.path.lexists(path):
            _remove(path)
        write_bytes_atomic(path, data)
        _prune(directory)
    else:
        os.utime(path)                   # recently used: pruned last
    return path


def _import(path: Path, name: str):
    """Run the generated module from its source (no ``.pyc`` is written or read: a damaged
    bytecode file cannot break later runs); numba's cache is keyed on the source."""
    import types
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    code = compile(path.read_bytes(), str(path), "exec")
    sys.modules[name] = mod              # numba's cache rebuilds the function by module name
    try:
        exec(code, mod.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return mod


def _in_big_stack(fn):
    """Run ``fn()`` in a thread with a ``_STACK_BYTES`` stack and return (or raise) its result."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:     # re-raised in the caller
            box["error"] = exc

    with _LOCK:
        old = threading.stack_size()
        threading.stack_size(_STACK_BYTES)
        try:
            # daemon: a Ctrl-C in the waiting caller (join is interruptible) ends the process
            # without waiting for LLVM
            t = threading.Thread(target=run, name="depthsep-compile", daemon=True)
            t.start()
        finally:
            threading.stack_size(old)
    t.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _private_temporary_directory() -> Path:
    if not _TEMP_DIR:
        import tempfile
        _TEMP_DIR.append(Path(tempfile.mkdtemp(prefix="depthsep-kernels-")))   # mode 0700
    return _TEMP_DIR[0]


def load(key: str, src: str):
    """The compiled ``plane`` function of a generated source (written, then imported in a
    big-stack thread: its explicit signature compiles it at import, or loads numba's cache).

    At most ``MAX_LOADED`` kernels stay loaded in a process (least recently used dropped with
    their module).  A cache directory that cannot be written or is not safe (not ours, or
    writable by others: :func:`circuits._jit.safe_directory`) is replaced by a private
    temporary directory for this process (warned once)."""
    with _LOCK:
        fn = _LOADED.get(key)
        if fn is not None:
            _LOADED.move_to_end(key)
            return fn
    name = f"_depthsep_fused_{key}"
    try:
        path = _write(cache_dir(), name, src)
    except (OSError, _jit._UnsafeCache) as exc:   # read-only or foreign: a private directory
        _jit._warn_once(("fused", str(cache_dir())),
                        f"depthsep: compiled circuit kernels are not cached in {cache_dir()} "
                        f"({exc}); using a private temporary directory for this process")
        path = _write(_private_temporary_directory(), name, src)
    fn = _in_big_stack(lambda: _import(path, name).plane)
    if not numba.config.DISABLE_JIT:
        fn = _PlaneFunction(fn)
    with _LOCK:
        _LOADED[key] = fn
        _LOADED.move_to_end(key)
        _EVER_LOADED.add(key)
        while len(_LOADED) > MAX_LOADED:
            old, _ = _LOADED.popitem(last=False)
            sys.modules.pop(f"_depthsep_fused_{old}", None)
    return fn


def budget_left() -> int:
    """Compiled kernels this process may still load before ``kernel="auto"`` stops choosing the
    compiled kernel for new circuits (``MAX_PROCESS_KERNELS`` minus the distinct kernels loaded so
    far).  numba never frees machine code (LLVM MCJIT; numba issues #5976, #7831): each kernel
    keeps about 1.3-1.5 MiB for the life of the process, evicted from ``_LOADED`` or not
    (BENCHMARKS.md, "Kernel caches")."""
    return MAX_PROCESS_KERNELS - len(_EVER_LOADED)


class _PlaneFunction:
    """A compiled ``plane`` as numba's first-class function value, its address looked up once.

    Passing the dispatcher itself makes numba look the compiled wrapper up on every call of the
    driver (about 30 us, with the GIL held, per slice and per thread chunk); this object
    implements numba's wrapper-address protocol (``_numba_type_`` and
    ``__wrapper_address__``) with the address computed here.  ``dispatcher`` keeps the code
    alive."""

    def __init__(self, dispatcher):
        cres = dispatcher.get_compile_result(_bits.PLANE_SIG)
        self.dispatcher = dispatcher
        self._address = cres.library.get_pointer_to_function(cres.fndesc.llvm_cfunc_wrapper_name)
        self._numba_type_ = numba.types.FunctionType(_bits.PLANE_SIG)

    def __wrapper_address__(self) -> int:
        return self._address
