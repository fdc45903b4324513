"""Shared pieces of the ``depthsep`` command line: the command registry, the usage error, the
version, and the stdout/stderr helpers (:mod:`experiments.cli` assembles the command)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: subcommand -> (module, one-line description).  Each module defines ``main(argv=None) -> int``.
EXPERIMENTS = {
    "reduce": (
        "experiments.reduction",
        "train a depth-2 net on the hard instance and reduce it to a threshold circuit (THEORY §4)",
    ),
    "ceiling": (
        "experiments.ceiling",
        "E21: correlation ceiling of depth-2 nets on IP vs a label-permutation control",
    ),
    "separate": (
        "experiments.separate",
        "E23: depth 2 vs depth 3 at polynomial width on IP, with MAJ∘AND as the easy control",
    ),
    "radial": ("experiments.radial", "E22: radial targets (Safran-Eldan-Shamir 2019)"),
    "theory-table": (
        "experiments.theory_table",
        "every row of the THEORY §5 experiment table: expected vs measured",
    ),
    "ip-demo": ("experiments.ip_demo", "IP_n circuits (depth 3 and 2) checked on all 4^n inputs"),
    "separate-sampled": (
        "experiments.sampled",
        "E24: sampled mode to n = 24, depth-2 Cov/P vs the proven centred IP ceiling, and the depth axis",
    ),
    "separate-curriculum": (
        "experiments.curriculum",
        "E25: the ip_j curriculum, depth 3 vs depth 2 at equal parameter count, and the "
        "gradient signal at initialisation (also `depthsep separate --curriculum`)",
    ),
    "least-circuit": (
        "experiments.least_circuit",
        "least THR o THR circuit of a small function, proved by CP-SAT",
    ),
    "separation-table": (
        "experiments.separation_table",
        "lower bound <= exact least THR o THR size <= construction, for IP and controls",
    ),
}

#: file subcommands -> one-line description
FILE_COMMANDS = {
    "check": "count the inputs where a circuit file differs from a target (ip, parity, ..., "
    "or a truth-table file); a circuit from `depthsep reduce` on its instance's support",
    "spectrum": "exact Walsh spectrum of a circuit or truth-table file",
    "info": "describe a circuit, network (JSON) or weights (.npz/.safetensors) file",
}


class _UsageError(Exception):
    """A command-line mistake: message to stderr, exit status 2."""


def _version() -> str:
    """depthsep's version without importing the packages (``depthsep --help`` stays fast)."""
    import importlib.util
    import runpy

    spec = importlib.util.find_spec("circuits")
    if spec is None or spec.origin is None:
        return "unknown"
    return str(runpy.run_path(str(Path(spec.origin).with_name("_version.py")))["__version__"])


def _emit(obj) -> None:
    from circuits.utils.files import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)
