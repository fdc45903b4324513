"""The command-line options that ``depthsep separate`` (E23) and ``depthsep separate --curriculum``
(E25) share, declared and checked once: the base seed, Adam's step, convergence-based stopping,
where the cells run, the resume file and the outputs.  Each command keeps its own options whose
meaning differs (``--n``, ``--depth3``, ``--seeds``, ``--epochs`` and their defaults)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_training_options(p: argparse.ArgumentParser, *, lr: float, stall_tol: float, unit: str,
                         window_note: str = "", window_default: str = "") -> None:
    """``--lr`` (default ``lr``), ``--seed``, ``--stall-window`` and ``--stall-tol`` (default
    ``stall_tol``).  ``unit`` names what stops ("trained cell", "stage"); ``window_note`` follows the
    stall rule in ``--stall-window``'s help and ``window_default`` its default ("off (patience
    rule)")."""
    p.add_argument("--lr", type=float, default=lr, help=f"Adam step size; default {lr:g}")
    p.add_argument("--seed", type=int, default=0, help="base seed (code, labels, inits); >= 0")
    p.add_argument("--stall-window", type=int, default=None,
                   help=f"convergence-based stopping: a {unit} stops when its best loss fell by "
                        f"less than --stall-tol (relative) over this many epochs{window_note}; "
                        f"default: off (patience rule){window_default}")
    p.add_argument("--stall-tol", type=float, default=stall_tol,
                   help=f"relative improvement below which a {unit} has stalled; default "
                        f"{stall_tol:g}")


def add_executor_option(p: argparse.ArgumentParser) -> None:
    """``--executor``: none (this thread), threads or processes (:mod:`experiments._executor`)."""
    p.add_argument("--executor", choices=("none", "threads", "processes"), default="none",
                   help="where cells run: this thread (default), a thread pool or a process pool "
                        "(one cell per task; rows are the same bit for bit)")


def add_output_options(p: argparse.ArgumentParser, *, resume: str, out: str, plots: str) -> None:
    """``--fresh`` (ignore ``<out>/resume``), ``--out`` (default ``out``), ``--no-progress`` and
    ``--no-plot`` (skip ``plots``)."""
    p.add_argument("--fresh", action="store_true",
                   help=f"ignore <out>/{resume} and recompute every cell")
    p.add_argument("--out", type=Path, default=Path(out), help=f"output directory; default {out}")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-plot", action="store_true", help=f"skip {plots}")


def check_training_args(p: argparse.ArgumentParser, args, counts=("seeds", "epochs")) -> None:
    """Refuse (``p.error``) counts below 1, a step ``--lr`` that is not positive, a stall window
    below 1, a stall tolerance outside [0, 1) and a negative base seed."""
    for name in counts:
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not args.lr > 0:
        p.error(f"--lr must be > 0, got {args.lr}")
    if args.stall_window is not None and args.stall_window < 1:
        p.error(f"--stall-window must be >= 1, got {args.stall_window}")
    if not 0 <= args.stall_tol < 1:
        p.error(f"--stall-tol must lie in [0, 1), got {args.stall_tol}")
    if args.seed < 0:
        p.error(f"--seed must be >= 0, got {args.seed}")
