"""A small CNF builder for bit-blasted integer arithmetic (the second solver's encoding).

Integers are fixed-width two's-complement bit vectors (least significant bit first) of literals;
sums are ripple-carry adders (full adders as clauses), comparisons read the sign bit of a
difference taken one bit wider (never wraps).  The width is chosen by the caller from a bound on
every sum, so no sum wraps around either (:func:`width_for`).  Constants fold: a literal equal to the builder's
``true`` / ``-true`` produces no clauses.
"""

from __future__ import annotations

__all__: "list[str]" = []


def width_for(bound: int) -> int:
    """Bits of a two's-complement vector holding every integer in ``[-bound, bound]``."""
    return int(bound).bit_length() + 1


class CNF:
    """Clauses over integer literals (DIMACS convention), with gates and bit-vector arithmetic."""

    def __init__(self) -> None:
        self.nv = 1
        self.clauses: "list[list[int]]" = [[1]]
        self.true = 1                       # variable 1 is forced true

    def new(self) -> int:
        self.nv += 1
        return self.nv

    def add(self, clause) -> None:
        self.clauses.append(list(clause))

    def const(self, lit: int) -> "bool | None":
        if lit == self.true:
            return True
        if lit == -self.true:
            return False
        return None

    # ---------------------------------------------------------------- gates (constants fold)
    def and2(self, a: int, b: int) -> int:
        ca, cb = self.const(a), self.const(b)
        if ca is False or cb is False:
            return -self.true
        if ca is True:
            return b
        if cb is True or a == b:
            return a
        if a == -b:
            return -self.true
        y = self.new()
        self.add([-y, a])
        self.add([-y, b])
        self.add([y, -a, -b])
        return y

    def xor2(self, a: int, b: int) -> int:
        ca, cb = self.const(a), self.const(b)
        if ca is not None:
            return -b if ca else b
        if cb is not None:
            return -a if cb else a
        if a == b:
            return -self.true
        if a == -b:
            return self.true
        y = self.new()
        self.add([-y, a, b])
        self.add([-y, -a, -b])
        self.add([y, -a, b])
        self.add([y, a, -b])
        return y

    def maj3(self, a: int, b: int, c: int) -> int:
        """Carry of a full adder: at least two of a, b, c."""
        for x, y, z in ((a, b, c), (b, c, a), (c, a, b)):
            cx = self.const(x)
            if cx is True:
                return self.or2(y, z)
            if cx is False:
                return self.and2(y, z)
        y = self.new()
        for p, q in ((a, b), (b, c), (a, c)):
            self.add([y, -p, -q])
            self.add([-y, p, q])
        return y

    def or2(self, a: int, b: int) -> int:
        return -self.and2(-a, -b)

    # ---------------------------------------------------------------- bit vectors
    def constant(self, value: int, width: int) -> "list[int]":
        return [self.true if (value >> i) & 1 else -self.true for i in range(width)]

    def variable(self, lo: int, hi: int, width: int) -> "list[int]":
        """A fresh integer in ``[lo, hi]`` (both ends constrained by comparators)."""
        x = [self.new() for _ in range(width)]
        self.force(self.geq(x, self.constant(lo, width)))
        self.force(self.geq(self.constant(hi, width), x))
        return x

    def force(self, lit: int) -> None:
        self.add([lit])

    def plus(self, x: "list[int]", y: "list[int]", carry: "int | None" = None) -> "list[int]":
        c = -self.true if carry is None else carry
        out = []
        for a, b in zip(x, y):
            out.append(self.xor2(self.xor2(a, b), c))
            c = self.maj3(a, b, c)
        return out

    def minus(self, x: "list[int]", y: "list[int]") -> "list[int]":
        return self.plus(x, [-b for b in y], self.true)

    def geq(self, x: "list[int]", y: "list[int]") -> int:
        """Literal of ``x >= y``: the sign bit of x - y, computed one bit wider than x and y
        (sign-extended), so it is right for every value of the two vectors."""
        return -self.minus(x + x[-1:], y + y[-1:])[-1]

    def mask(self, x: "list[int]", lit: int) -> "list[int]":
        """``x`` if ``lit`` else 0."""
        return [self.and2(b, lit) for b in x]

    def value(self, bits: "list[int]", model: "set[int]") -> int:
        """Decode a two's-complement vector from a solver model (set of true literals)."""
        v = 0
        for i, b in enumerate(bits):
            on = (b in model) if b > 0 else (-b not in model)
            v |= int(on) << i
        return v - (1 << len(bits)) if bits and v >> (len(bits) - 1) else v
