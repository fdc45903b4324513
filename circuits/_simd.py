"""Eight-word vectors for the compiled bit-sliced kernels (private; see ``_bitsliced_codegen``).

numba has no vector type, so the generated kernels used to be written on scalar ``uint64``
words and vectorised by LLVM's loop vectoriser.  That works, but the full adder then costs what
LLVM's instruction selection finds for it: the carry (a majority of three planes) has no
formula of depth two, so it never became one AVX-512 ``vpternlogq`` and every full adder took
two to three vector operations.  Here a vector of eight ``uint64`` words is a numba type backed
by LLVM's ``<8 x i64>``, and the generated code calls the operations below on it: a full adder
is exactly two instructions where the CPU has AVX-512F: ``vpternlogq`` with truth table 0x96
(the sum s = x ^ y ^ z) and 0x8E (the carry from s, y and z: y where y = z, else x = not s),
so that no input outlives the adder and the register allocator needs no copies (with the
majority 0xE8 of x, y, z every adder also took a register move: W2, 369 moves per 8 words), and plain vector logic elsewhere (LLVM then splits the
vectors for AVX2 or SSE).  Every operation is bitwise and exact; ``vpop`` adds the population
counts of the eight words.

With ``NUMBA_DISABLE_JIT=1`` the same names are plain Python functions on numpy ``uint64``
arrays of eight words (the pure-Python twin the tests run).
"""

import numba
import numpy as np

__all__ = ["VW", "vload", "vsplat", "vxor", "vand", "vor", "vnot", "vsum3", "vcarry",
           "vpop", "HAS_TERNLOG"]

VW = 8      # words per vector


def _has_avx512f() -> bool:
    try:
        from numba.core.registry import cpu_target
        return "+avx512f" in cpu_target.target_context.codegen()._tm_features.split(",")
    except Exception:                    # an unknown numba layout: the portable code
        return False


HAS_TERNLOG = (not numba.config.DISABLE_JIT) and _has_avx512f()

if numba.config.DISABLE_JIT:
    _M64 = np.uint64(0xFFFFFFFFFFFFFFFF)

    def vload(arr, i):
        """Words i .. i + 7 of ``arr``."""
        return np.array(arr[int(i):int(i) + VW], dtype=np.uint64)

    def vsplat(x):
        return np.full(VW, x, dtype=np.uint64)

    def vxor(a, b):
        return a ^ b

    def vand(a, b):
        return a & b

    def vor(a, b):
        return a | b

    def vnot(a):
        return a ^ _M64

    def vsum3(a, b, c):
        return a ^ b ^ c

    def vcarry(s, b, c):
        t = b ^ c
        return (t & (s ^ _M64)) | ((t ^ _M64) & b)

    def vpop(a):
        return np.int64(sum(bin(int(w)).count("1") for w in a))

else:
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.core.datamodel import models, register_default
    from numba.core.extending import intrinsic

    class _U64x8(types.Type):
        def __init__(self):
            super().__init__(name="u64x8")

    u64x8 = _U64x8()
    _VEC = ir.VectorType(ir.IntType(64), VW)

    @register_default(_U64x8)
    class _U64x8Model(models.PrimitiveModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, _VEC)

    def _ternlog(builder, a, b, c, imm):
        mod = builder.module
        fn = cgutils.get_or_insert_function(
            mod, ir.FunctionType(_VEC, [_VEC, _VEC, _VEC, ir.IntType(32)]),
            "llvm.x86.avx512.pternlog.q.512")
        return builder.call(fn, [a, b, c, ir.Constant(ir.IntType(32), imm)])

    @intrinsic
    def vload(typingctx, arr, i):
        """Words i .. i + 7 of a C-contiguous uint64 array (unchecked, like the scalar loads
        of the kernels: callers index inside the array)."""
        if not (isinstance(arr, types.Array) and arr.dtype == types.uint64 and arr.ndim == 1
                and isinstance(i, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            ptr = builder.gep(ary.data, [args[1]])
            vptr = builder.bitcast(ptr, _VEC.as_pointer())
            return builder.load(vptr, align=8)
        return u64x8(arr, i), codegen

    @intrinsic
    def vsplat(typingctx, x):
        """Eight copies of a uint64."""
        if x != types.uint64:
            return None

        def codegen(context, builder, sig, args):
            v = ir.Constant(_VEC, ir.Undefined)
            for k in range(VW):
                v = builder.insert_element(v, args[0], ir.Constant(ir.IntType(32), k))
            return v
        return u64x8(x), codegen

    def _binary(op):
        @intrinsic
        def fn(typingctx, a, b):
            if a != u64x8 or b != u64x8:
                return None

            def codegen(context, builder, sig, args):
                return getattr(builder, op)(args[0], args[1])
            return u64x8(a, b), codegen
        return fn

    vxor = _binary("xor")
    vand = _binary("and_")
    vor = _binary("or_")

    @intrinsic
    def vnot(typingctx, a):
        if a != u64x8:
            return None

        def codegen(context, builder, sig, args):
            return builder.not_(args[0])
        return u64x8(a), codegen

    def _ternary(imm, portable):
        @intrinsic
        def fn(typingctx, a, b, c):
            if a != u64x8 or b != u64x8 or c != u64x8:
                return None

            def codegen(context, builder, sig, args):
                if HAS_TERNLOG:
                    return _ternlog(builder, *args, imm)
                return portable(builder, *args)
            return u64x8(a, b, c), codegen
        return fn

    # truth tables of vpternlogq: bit (4a + 2b + c) of imm is f(a, b, c)
    vsum3 = _ternary(0x96, lambda bd, a, b, c: bd.xor(bd.xor(a, b), c))
    # the carry of a full adder from its sum s = a ^ b ^ c and b, c (a is then free to be
    # overwritten): b where b = c, else a = not s.  Truth table 0x8E.
    vcarry = _ternary(0x8E, lambda bd, s, b, c: bd.or_(bd.and_(bd.xor(b, c), bd.not_(s)),
                                                      bd.and_(bd.not_(bd.xor(b, c)), b)))

    @intrinsic
    def vpop(typingctx, a):
        """Number of set bits of the eight words (int64)."""
        if a != u64x8:
            return None

        def codegen(context, builder, sig, args):
            mod = builder.module
            ctpop = cgutils.get_or_insert_function(mod, ir.FunctionType(_VEC, [_VEC]),
                                                   "llvm.ctpop.v8i64")
            red = cgutils.get_or_insert_function(
                mod, ir.FunctionType(ir.IntType(64), [_VEC]), "llvm.vector.reduce.add.v8i64")
            return builder.call(red, [builder.call(ctpop, [args[0]])])
        return types.int64(a), codegen
