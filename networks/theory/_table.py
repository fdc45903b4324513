"""The row registry, the shared run context and the runner of the THEORY table."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable, NamedTuple

__all__ = ["Row", "ROWS", "Context", "row", "run_rows", "select_rows", "ratio"]


class Row(NamedTuple):
    """One THEORY §5 row: what is checked, what THEORY expects, and the check itself.

    ``check(ctx)`` returns a dict with ``measured`` (str), ``ok`` (bool), optionally ``note``,
    ``worst_ratio`` and ``expected_value``.
    """

    object: str
    expected: str
    check: Callable


#: id -> Row, in THEORY's order once every row module is imported (networks.theory does that).
ROWS: dict = {}


def row(id_: str, obj: str, expected: str):
    """Register ``check`` as row ``id_`` (decorator)."""
    def deco(check):
        ROWS[id_] = Row(obj, expected, check)
        return check
    return deco


def ratio(lhs, rhs) -> float:
    """lhs / rhs for "worst ratio <= 1" verdicts (0/0 = 0, x/0 = inf)."""
    lhs, rhs = float(lhs), float(rhs)
    if rhs == 0:
        return 0.0 if lhs == 0 else math.inf
    return lhs / rhs


class Context:
    """What the rows share: sizes (quick or full), the seed, a scratch directory and the trained
    reduction runs (E8–E11 use the same runs; each is trained once).

    Parameters
    ----------
    full : bool
        THEORY's sizes instead of the quick ones.
    seed : int
        Seed of every random draw.
    tmp : Path, optional
        Scratch directory for rows that write files.
    """

    def __init__(self, full: bool = False, seed: int = 0, tmp: "Path | None" = None):
        self.full, self.seed, self.tmp = bool(full), int(seed), tmp
        self._runs: dict = {}

    def size(self, quick, full):
        """``full`` in full mode, else ``quick``."""
        return full if self.full else quick

    def reduction_run(self, n: int, width: int, activation: str):
        """:func:`networks.separation.reduction_run.reduction_run` with the table's settings; cached."""
        key = (n, width, activation)
        if key not in self._runs:
            from networks.separation.reduction_run import reduction_run
            self._runs[key] = reduction_run(n, width, activation, seed=self.seed,
                                            ball_points=self.size(2000, 1_000_000))
        return self._runs[key]

    def trained_runs(self):
        """``(activation, run)`` for relu, sigmoid, tanh and threshold at the table's n, width."""
        n, w = self.size(6, 8), self.size(32, 64)
        return [(a, self.reduction_run(n, w, a)) for a in ("relu", "sigmoid", "tanh", "threshold")]


def select_rows(only: "str | None", rows: "dict | None" = None) -> list:
    """Row ids from a comma-separated ``only`` (all rows when empty); ``ValueError`` names the
    unknown ids and the known ones."""
    rows = ROWS if rows is None else rows
    if not only:
        return list(rows)
    ids = [s.strip().upper() for s in only.split(",") if s.strip()]
    unknown = [i for i in ids if i not in rows]
    if unknown:
        raise ValueError(f"unknown row id(s) {unknown}; known: {list(rows)}")
    return ids


def run_rows(ids, ctx: Context, *, rows: "dict | None" = None,
             log: "Callable[[str], None] | None" = None, into: "list | None" = None) -> list:
    """Run the rows ``ids`` and return one record per row: id, object, expected, measured,
    verdict ("ok" / "FAIL"), seconds, note (and worst_ratio, expected_value, error if present).

    A row that raises is a failing row (its error is recorded), never a crash of the table.
    ``log`` receives one line before and after each row.  With ``into`` the records are
    appended to that list as each row finishes, so a caller keeps the finished rows when the run
    is interrupted (KeyboardInterrupt is not caught here).
    """
    rows = ROWS if rows is None else rows
    out = [] if into is None else into
    for id_ in ids:
        obj, expected, check = rows[id_]
        if log:
            log(f"[{id_}] {obj} ...")
        t0 = time.perf_counter()
        try:
            r = check(ctx)
            err = None
        except Exception as exc:  # noqa: BLE001 -- a crashing row is a failing row
            r = {"measured": f"error: {type(exc).__name__}: {exc}", "ok": False, "note": ""}
            err = repr(exc)
        if log:
            log(f"[{id_}] done in {time.perf_counter() - t0:.1f} s")
        rec = {"id": id_, "object": obj, "expected": expected,
               "measured": r["measured"], "verdict": "ok" if r["ok"] else "FAIL",
               "seconds": round(time.perf_counter() - t0, 3), "note": r.get("note", "")}
        for k in ("worst_ratio", "expected_value"):
            if k in r:
                rec[k] = r[k]
        if err:
            rec["error"] = err
        out.append(rec)
    return out
