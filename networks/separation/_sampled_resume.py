"""``sampled.json`` as a resume file (``depthsep separate-sampled``): read with every check, written
with a checksum per row (:mod:`circuits.utils.resume`).

A rerun in the same ``--out`` continues from the rows already there.  Every cell depends on every
recorded setting (steps, grid, lr, pairs, delta, seed, tries), so a rerun with other settings is
refused with the differences named (``--fresh`` moves the old file aside and starts over): the
old cells are never dropped silently.  A file that cannot be used (not a regular file, too large,
not JSON, another format) or that holds rows failing their checks is moved aside with a message;
the verified rows are kept.
"""

from __future__ import annotations

import sys
from pathlib import Path

from circuits.utils.errors import DepthsepError

#: The row fields that name its cell (they must agree with the row's key).
_KEY_FIELDS = ("n", "target", "width_rule", "penalty", "seed")


def _row_problem(key, row, make_key) -> "str | None":
    if not isinstance(row, dict):
        return f"row {str(key)[:60]} is not an object"
    missing = [f for f in (*_KEY_FIELDS, "estimate", "verdict") if f not in row]
    if missing:
        return f"row {str(key)[:60]} lacks the field(s) {missing}"
    n, target, rule, lam, seed = (row[f] for f in _KEY_FIELDS)
    if (type(n) is not int or type(seed) is not int or not isinstance(target, str)
            or not isinstance(rule, str) or isinstance(lam, bool)
            or not isinstance(lam, (int, float))):
        return f"row {str(key)[:60]} has a key field of the wrong type"
    if make_key(n, target, rule, lam, seed) != key:
        return f"row {str(key)[:60]} names another cell than its key"
    if not isinstance(row["estimate"], dict) or not isinstance(row["verdict"], dict):
        return f"row {str(key)[:60]}: 'estimate' and 'verdict' must be objects"
    return None


def _differences(old, new) -> str:
    if not isinstance(old, dict):
        return f"settings {str(old)[:60]} (not an object)"
    keys = sorted(set(old) | set(new), key=str)
    return ", ".join(f"{k} {old.get(k, '(none)')!r} -> {new.get(k, '(none)')!r}" for k in keys
                     if old.get(k) != new.get(k))


def read_sampled(path, doc: dict, settings: dict, *, seed: int, fresh: bool, key, migrate) -> None:
    """Fill ``doc["rows"]`` and ``doc["depth3"]`` from the resume file ``path`` (if any).

    Raises :class:`DepthsepError` (before any work) when the file was written with other
    settings and ``fresh`` is false.  ``key(n, target, rule, lam, seed)`` names a cell;
    ``migrate(rows, seed)`` reads version-1 rows.
    """
    from circuits.utils.documents import parse_document
    from circuits.utils.resume import (UnusableResumeFile, move_aside, read_resume_file,
                                       row_checksum)

    path = Path(path)
    try:
        raw = read_resume_file(path)
        if raw is None:
            return
        old = parse_document(raw, where=f"{path}: ", error=UnusableResumeFile, max_depth=12)
        if not isinstance(old, dict) or old.get("format") != doc["format"] or old.get(
                "version") not in (1, doc["version"]):
            raise UnusableResumeFile(f"{path}: not a sampled.json of this depthsep (format "
                                     f"{doc['format']!r}, version 1 or {doc['version']})")
    except UnusableResumeFile as exc:
        move_aside(path, str(exc).removeprefix(f"{path}: "))
        return
    if fresh:
        move_aside(path, "--fresh: starting over")
        return
    if old.get("settings") != settings:
        raise DepthsepError(
            f"{path}: the finished cells there were computed with other settings "
            f"({_differences(old.get('settings'), settings)}); every cell depends on them, so "
            f"none can be reused.  Rerun with the recorded settings to continue, give another "
            f"--out, or add --fresh to move the file aside and start over")
    rows, depth3, sums = old.get("rows"), old.get("depth3", {}), old.get("checksums")
    problems = []
    if not isinstance(rows, dict) or not isinstance(depth3, dict):
        problems.append("'rows' and 'depth3' must be objects")
        rows, depth3 = {}, {}
    legacy = sums is None
    if not legacy and not isinstance(sums, dict):
        problems.append("'checksums' must be an object")
        sums = {}
    if old["version"] == 1:
        bad = [r for r in rows.values() if not isinstance(r, dict)
               or _row_problem(None, {"seed": seed, **r}, lambda *a: None)]
        if bad:
            problems.append("a version-1 row fails its checks")
            rows = {}
        else:
            rows = migrate(rows, seed)
    for k, r in rows.items():
        why = _row_problem(k, r, key)
        if why is None and not legacy and sums.get(k) != row_checksum(k, r, settings):
            why = f"row {k[:60]}: checksum mismatch (changed, or moved from another key)"
        if why is None:
            doc["rows"][k] = r
        else:
            problems.append(why)
    for n, d in depth3.items():
        ok = isinstance(d, dict) and (legacy or sums.get(f"depth3:{n}") ==
                                      row_checksum(f"depth3:{n}", d, settings))
        if ok and str(n).isdigit():
            doc["depth3"][n] = d
        else:
            problems.append(f"depth3[{str(n)[:20]}] fails its checks")
    if problems:
        move_aside(path, f"{len(problems)} problem(s) ({problems[0]}"
                         f"{'; ...' if len(problems) > 1 else ''})")
        print(f"  kept the {len(doc['rows'])} verified row(s); the others are recomputed",
              file=sys.stderr, flush=True)
    if legacy and doc["rows"]:
        print(f"note: {path} was written without row checksums (an earlier depthsep): its "
              f"rows were checked against their keys only", file=sys.stderr, flush=True)
    if doc["rows"]:
        print(f"resuming: {len(doc['rows'])} finished cells in {path}")


def write_sampled(path, doc: dict) -> None:
    """Write ``doc`` atomically with ``"checksums"``: one per row and per depth-3 entry, over
    the key, the settings and the row (:func:`circuits.utils.resume.row_checksum`)."""
    from circuits.utils.files import write_json_atomic
    from circuits.utils.resume import row_checksum

    settings = doc["settings"]
    sums = {k: row_checksum(k, r, settings) for k, r in doc["rows"].items()}
    sums.update({f"depth3:{n}": row_checksum(f"depth3:{n}", d, settings)
                 for n, d in doc["depth3"].items()})
    doc["checksums"] = sums
    write_json_atomic(path, doc)
