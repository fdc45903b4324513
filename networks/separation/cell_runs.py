"""Cells run against a resume file: the E23 and E25 tables (:mod:`networks.separation.separate`,
:mod:`networks.separation.curriculum`) compute their cells here, one per task, each row appended
to a JSON-lines resume file as it finishes and skipped on the next call with the same file.

:func:`run_cells` takes the function that computes one cell, so each table passes its own; every
resume row is checked against its key before it is trusted (:func:`_check_row`: the same cell,
plain data only).
"""

from __future__ import annotations

import json

import numpy as np

__all__ = ["run_cells"]


class _CellRunner:
    """Picklable chunk function for :func:`circuits.utils.parallel.run_chunks`: cells [start,
    stop) of a fixed list, each computed by ``run(cell, base_seed=...)`` (a module-level
    function, so that the runner pickles)."""

    def __init__(self, cells, base_seed, run):
        self.cells, self.base_seed, self.run = list(cells), base_seed, run

    def __call__(self, start, stop):
        return [(self.cells[i].key, self.run(self.cells[i], base_seed=self.base_seed))
                for i in range(start, stop)]


def _check_row(key: str, row: dict) -> "str | None":
    """Why the resume row ``row`` cannot be the cell ``key`` (``None``: it can).  The row must
    name the same cell as its key and hold only the plain values a computed row holds."""
    try:
        kind, target, n, rule, seed = json.loads(key)[:5]
    except (ValueError, TypeError):
        return "the key is not a cell key"
    if [row.get(f) for f in ("kind", "target", "n", "rule", "seed")] != [kind, target, n, rule,
                                                                        seed]:
        return f"the row names another cell than its key {key[:80]}"
    for f in ("rho", "seconds"):
        if isinstance(row.get(f), bool) or not isinstance(row.get(f), (int, float)):
            return f"row field {f!r} must be a number"
    widths = row.get("widths")
    if not isinstance(widths, list) or not all(type(w) is int for w in widths):
        return "row field 'widths' must be a list of integers"
    for f, v in row.items():
        if not _plain(v):
            return (f"row field {f!r} holds a {type(v).__name__} that is not plain data (numbers, "
                    f"text, and lists or objects of them, at most {_PLAIN_DEPTH} deep)")
    return None


_PLAIN_DEPTH = 3


def _plain(v, depth: int = 0) -> bool:
    """Whether ``v`` is plain row data: None, a bool, number or text, or (at most
    :data:`_PLAIN_DEPTH` levels of) lists and text-keyed objects of them -- what a computed row
    holds (a curriculum row keeps its stages as a list of objects)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    if depth >= _PLAIN_DEPTH:
        return False
    if isinstance(v, list):
        return all(_plain(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x, depth + 1) for k, x in v.items())
    return False


def _load_resume(path) -> dict:
    """Finished cells of the resume file (:func:`circuits.utils.resume.load_jsonl`: regular
    file, size cap, every row checked against its key and checksum; a bad file moved aside)."""
    from circuits.utils.resume import load_jsonl

    return load_jsonl(path, check_row=_check_row)


def _append_resume(path, key, row) -> None:
    from circuits.utils.resume import append_jsonl

    append_jsonl(path, key, row)


def run_cells(cells, *, run, base_seed=0, resume=None, executor=None, client=None,
              progress=False, desc="cells"):
    """(rows in the order of ``cells``, how many came from ``resume``): the cells not in the
    resume file run (one per task, ``run(cell, base_seed=base_seed)`` computes the row), each
    appended to it as it finishes."""
    from circuits.utils.parallel import run_chunks

    done = _load_resume(resume)
    resumed = sum(1 for c in cells if c.key in done)
    todo = [c for c in cells if c.key not in done]
    todo.sort(key=lambda c: (c["n"], int(np.prod(c["widths"]))))

    def combine(acc, part):
        # a monoid on lists of (key, row); the runner may fold slices before folding chunks, so
        # the resume file is written once per key, when the key is first seen
        for key, row in part:
            if key not in done:
                if resume is not None:
                    _append_resume(resume, key, row)
                done[key] = row
        return acc + list(part)

    if todo:
        run_chunks(_CellRunner(todo, base_seed, run), len(todo), combine=combine, initial=[],
                   executor=executor, client=client, chunk_size=1, progress=progress,
                   desc=desc, max_seconds=None, timeout=None)
    return [done[c.key] for c in cells], resumed
