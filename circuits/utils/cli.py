"""Command-line plumbing shared by the experiment scripts (argparse conventions, safe output).

Every experiment validates every option *before* it starts working, the argparse way: a
one-line message naming the option and exit status 2 (``parser.error``).  The pieces:

* :func:`int_in_range`, :func:`positive_int`, :func:`real_in_range` -- argparse ``type=``
  callables with a range, so ``--n -1`` or ``--lr nan`` never reach the science;
* :func:`id_list` -- a ``type=`` for comma-separated ids from a fixed set (``--only E1,E5``);
* :func:`check_output_dir` -- before the work: create the output directory and prove it is
  writable by writing and removing a probe file; otherwise ``parser.error`` naming the option;
* :func:`save_or_report` -- after the work: write the result files; if that fails anyway (disk
  full, directory removed), say what could not be written where, keep going, and let the script
  exit with :data:`EXIT_NOT_SAVED` -- the table has already been printed, so nothing computed
  is lost.

Exit statuses: 0 success, :data:`EXIT_FAILED` (1) a check of the experiment failed,
:data:`EXIT_USAGE` (2) a bad option, :data:`EXIT_NOT_SAVED` (3) results printed but not saved.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["int_in_range", "int_list", "positive_int", "real_in_range", "id_list", "check_output_dir",
           "output_dir_problem", "save_or_report", "EXIT_FAILED", "EXIT_USAGE", "EXIT_NOT_SAVED"]

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_SAVED = 3


def int_in_range(lo: "int | None" = None, hi: "int | None" = None, *, what: str = ""):
    """An argparse ``type=``: an integer in ``[lo, hi]`` (either bound may be ``None``).

    >>> parse = int_in_range(1, 31, what="bits per party")
    >>> parse("8")
    8
    >>> parse("40")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 40 is not between 1 and 31 (bits per party)
    """
    about = f" ({what})" if what else ""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer{about}") from None
        if lo is not None and hi is not None and not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value} is not between {lo} and {hi}{about}")
        if lo is not None and value < lo:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {lo}{about}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"{value} is above the maximum {hi}{about}")
        return value

    parse.__name__ = "integer"   # argparse names the type in its own messages
    return parse


def int_list(text: str, name: str, parser: argparse.ArgumentParser, *,
             ranges: bool = False, step: int = 1) -> list:
    """Sorted distinct integers from ``"4,6,8"`` (and, with ``ranges``, ``"4..9"``, every
    ``step``-th integer from the first); otherwise ``parser.error`` naming the option ``name``
    (exit status 2)."""
    vals = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            if ranges and ".." in part:
                lo, hi = (int(v) for v in part.split(".."))
                vals += list(range(lo, hi + 1, step))
            else:
                vals.append(int(part))
        except ValueError:
            parser.error(f"{name} must be comma-separated integers like 4,6,8"
                         + (" or a range 4..9" if ranges else "")
                         + (f" (step {step})" if ranges and step != 1 else "")
                         + f", got {text!r}")
    if not vals:
        parser.error(f"{name} must list at least one integer, got {text!r}")
    return sorted(set(vals))


def positive_int(text: str) -> int:
    """An argparse ``type=`` for integers >= 1.

    >>> positive_int("3")
    3
    """
    return int_in_range(1)(text)


def real_in_range(lo: "float | None" = None, hi: "float | None" = None, *, strict: bool = True,
                  what: str = ""):
    """An argparse ``type=``: a finite real number above ``lo`` (``>`` if ``strict``, else
    ``>=``) and at most ``hi``.

    >>> real_in_range(0)("1e-3")
    0.001
    >>> real_in_range(0)("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: -1 is not > 0
    """
    about = f" ({what})" if what else ""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number{about}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text} is not a finite number{about}")
        if lo is not None and (value <= lo if strict else value < lo):
            raise argparse.ArgumentTypeError(f"{text} is not {'>' if strict else '>='} "
                                             f"{lo:g}{about}")
        if hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"{text} is above the maximum {hi:g}{about}")
        return value

    parse.__name__ = "number"
    return parse


def id_list(choices):
    """An argparse ``type=``: comma-separated ids out of ``choices`` (case-insensitive).

    >>> id_list(["E1", "E2"])("e2, E1")
    ['E2', 'E1']
    """
    known = {str(c).upper(): str(c) for c in choices}

    def parse(text: str) -> list:
        ids = [s.strip().upper() for s in str(text).split(",") if s.strip()]
        if not ids:
            raise argparse.ArgumentTypeError(f"{text!r} names no id; choose from {list(known.values())}")
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown id(s) {unknown}; choose from "
                                             f"{list(known.values())}")
        return [known[i] for i in ids]

    parse.__name__ = "id list"
    return parse


def output_dir_problem(path) -> "str | None":
    """Create ``path`` (with parents) and write/remove a probe file there; ``None`` if that
    worked, else the reason (a short phrase) it cannot hold results."""
    if str(path).strip() == "":
        return "an empty path would write into the current directory; pass --out . to mean that"
    path = Path(path)
    try:
        if path.exists() and not path.is_dir():
            return "it exists and is not a directory"
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", suffix=".tmp", dir=path)
        try:
            os.write(fd, b"probe")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def check_output_dir(parser: argparse.ArgumentParser, path, *, option: str = "--out") -> Path:
    """Before any work: make sure results can be written under ``path``, else
    ``parser.error`` (exit status 2) naming ``option``.  Returns ``Path(path)``.

    The directory is created if needed (the run would create it anyway).
    """
    problem = output_dir_problem(path)
    if problem is not None:
        parser.error(f"{option} {path}: cannot write results there ({problem}); choose a "
                     f"writable directory")
    return Path(path)


def save_or_report(write, *, what: str, where, stream=None) -> bool:
    """Call ``write()`` (which writes ``what`` to ``where``); on ``OSError`` report it on
    ``stream`` (stderr) and return ``False`` instead of raising.

    Print the results *before* calling this, so a failed write loses nothing; exit with
    :data:`EXIT_NOT_SAVED` when it returns ``False``.
    """
    stream = sys.stderr if stream is None else stream
    try:
        write()
    except OSError as exc:
        print(f"error: could not write {what} to {where} ({exc.strerror or exc}); the results "
              f"are printed above", file=stream, flush=True)
        return False
    return True
