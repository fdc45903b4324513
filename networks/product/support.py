"""The support of μ₀ in product form (THEORY §4.8): x_{a,b} = (x^A(a), x^B(b)) for every pair of
messages, the IP sign matrix, and the memory check of the (2^n, 2^n) tables."""

from __future__ import annotations

import math
import os
import weakref
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from circuits.analysis import sign_matrix
from circuits.utils.errors import DimensionError, ReductionError
from embeddings import HardInstance
from networks.product import _kernels
from networks.product.parts import frozen

__all__ = ["ProductSupport", "product_support", "ip_signs", "check_table_memory", "MAX_TABLE_BITS"]

#: Largest n for which the (2^n, 2^n) tables are built (n = 13: 512 MiB per float64 table).
MAX_TABLE_BITS = 13


@lru_cache(maxsize=8)
def ip_signs(n: int) -> np.ndarray:
    """H[a, b] = (-1)^{IP(a, b)} as read-only int8 (2^n, 2^n), rows = Alice (computed once per n;
    :func:`circuits.sign_matrix` of "ip").

    >>> ip_signs(1).tolist()
    [[1, 1], [1, -1]]
    """
    H = sign_matrix("ip", int(n))
    H.setflags(write=False)
    return H


def check_table_memory(n: int, *, tables: float = 1.0, what: str = "value table") -> None:
    """Refuse (2^n, 2^n) float64 tables that would not fit in the available memory.

    ``tables`` is how many such tables the step holds at once.  The error gives the estimate and
    the ways forward (smaller n, a larger machine, or chunked/distributed work).
    """
    need = tables * 8.0 * 4.0 ** n
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):      # platform without sysconf: no check
        avail = math.inf
    if n > MAX_TABLE_BITS or need > 0.8 * avail:
        raise ReductionError(
            f"the {what} at n = {n} needs about {need / 2 ** 30:.2f} GiB ({tables:g} float64 "
            f"table(s) of 4^{n} entries) but {avail / 2 ** 30:.2f} GiB are available (limit "
            f"n <= {MAX_TABLE_BITS}); use a smaller n, a larger machine, or support_metrics(..., "
            f"store=False), which streams the rows without keeping the table")


@dataclass(frozen=True, eq=False)
class ProductSupport:
    """The support of μ₀ as a product set: Alice's and Bob's coordinates, the code bits.

    Attributes
    ----------
    n, m : int
        Bits per party and code length (d = 2m).
    XA, XB : float64 (2^n, m)
        x^A(a) and x^B(b): the support point x_{a,b} is (XA[a], XB[b]) (box centres for τ > 0).
    code_bits : uint8 (2^n, m)
        C(a): row a holds the code bits of message a (the integer circuit's inputs are
        (C(a), C(b))).
    """

    n: int
    m: int
    XA: np.ndarray = field(repr=False)
    XB: np.ndarray = field(repr=False)
    code_bits: np.ndarray = field(repr=False)

    @property
    def dim(self) -> int:
        return 2 * self.m

    @property
    def size(self) -> int:
        """2^n (messages per party)."""
        return 1 << self.n

    @property
    def H(self) -> np.ndarray:
        """int8 sign matrix of IP (shared, computed once per n)."""
        return ip_signs(self.n)


_SUPPORTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def product_support(instance) -> ProductSupport:
    """The :class:`ProductSupport` of an :class:`embeddings.HardInstance` (built once per instance
    and remembered); a ProductSupport passes through.

    Raises
    ------
    TypeError
        ``instance`` is neither a HardInstance nor a ProductSupport.
    """
    if isinstance(instance, ProductSupport):
        return instance
    if not isinstance(instance, HardInstance):
        raise TypeError(f"instance must be an embeddings.HardInstance (or a ProductSupport), got "
                        f"{type(instance).__name__}")
    cached = _SUPPORTS.get(instance)
    if cached is not None:
        return cached
    n, m = instance.n, instance.m
    if m > 62:
        raise DimensionError(f"code length m = {m} > 62 cannot be decoded into int64 bit rows")
    idx = np.arange(1 << n, dtype=np.int64)
    XA = instance.points_of(idx)[:, :m]                     # x_{a,0}: Alice part = x^A(a)
    XB = instance.points_of(idx << n)[:, m:]                # x_{0,b}: Bob part = x^B(b)
    words = np.asarray(instance.embedding.codewords(), dtype=np.int64)
    bits = ((words[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(np.uint8)
    sup = ProductSupport(n=n, m=m, XA=frozen(XA, np.float64), XB=frozen(XB, np.float64),
                         code_bits=frozen(bits, np.uint8))
    _SUPPORTS[instance] = sup
    return sup


def _activation_code(act) -> int:
    """The kernel code of a built-in activation, or -1 (numpy fallback)."""
    from networks.activations import ACTIVATIONS

    code = _kernels.ACT_CODES.get(act.name, -1)
    return code if code >= 0 and ACTIVATIONS.get(act.name) is act else -1
