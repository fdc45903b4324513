"""Which device trained which rows of an E23 record (private helper of
:mod:`experiments.separate`): each trained row names its device under "device"."""

from __future__ import annotations

import textwrap

__all__ = ["trained_on", "trained_on_lines", "DEFAULT_DEVICE"]

#: The device label of rows trained on the default path (numba on the CPU).
DEFAULT_DEVICE = "cpu (numba)"


def trained_on(rows) -> dict:
    """``{kind: {device: trained cells}}`` over the trained rows (rows resumed from a file
    written before rows named their device count as "unrecorded")."""
    out: dict = {}
    for r in rows:
        if r.get("trained"):
            kind = out.setdefault(r["kind"], {})
            dev = r.get("device") or "unrecorded"
            kind[dev] = kind.get(dev, 0) + 1
    return out


def trained_on_lines(record, width: int = 130) -> list:
    """The figure's device lines: "trained on: depth2 cells: cpu (numba) 12; depth3 cells: ...",
    wrapped at ``width``; none when the record has no trained rows, or when every row that names
    its device names the default one (the numba CPU path: the record's ``trained_on`` still
    counts them, unrecorded rows included)."""
    devices = record.get("trained_on") or trained_on(record.get("rows", []))
    named = {d for devs in devices.values() for d in devs} - {"unrecorded"}
    if not devices or named <= {DEFAULT_DEVICE}:
        return []
    return textwrap.wrap("trained on: " + "; ".join(
        f"{kind} cells: " + ", ".join(f"{d} {k}" for d, k in devs.items())
        for kind, devs in devices.items()), width)
