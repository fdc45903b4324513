"""The ``depthsep`` command: every experiment and the everyday checks on circuit/network files.

Experiments (options are the experiment module's own; ``depthsep reduce --help`` lists them)::

    depthsep reduce --n 4                 # experiments.reduction: the reduction end to end
    depthsep ceiling ...                  # experiments.ceiling: E21, the correlation ceiling
    depthsep radial ...                   # experiments.radial: E22, radial targets
    depthsep separate ...                 # experiments.separate: E23, depth 2 vs depth 3 on IP
    depthsep theory-table --only E1,E5    # experiments.theory_table: THEORY rows E1-E22
    depthsep ip-demo --n-max 6            # experiments.ip_demo: IP_n circuits on all 4^n inputs
    depthsep separate-sampled --n 14..24  # experiments.sampled: E24, sampled mode
    depthsep least-circuit --function ip --n 3   # experiments.least_circuit: exact least THR o THR
    depthsep separation-table             # experiments.separation_table: bound <= truth <= construction

Checks on files::

    depthsep check circuit.json --target ip        # exact disagreement count on the whole cube,
                                                   # or on the support the file records
    depthsep check circuit.json --target table.npy # ... against a truth table file
    depthsep spectrum circuit.json                 # exact Walsh spectrum summary
    depthsep info circuit.json                     # what a circuit / network / weights file holds

``--json`` (anywhere on the line) prints one JSON object on stdout and sends everything else
(tables, progress, logs) to stderr.  For an experiment the object holds the JSON files it wrote
(into ``--out``, or a temporary directory when ``--out`` is not given).  Exit status: 0 on
success, 1 when a check or an experiment fails (a disagreement, a failed inequality, an error
in the input), 2 for a usage error (unknown command, bad option, missing module).
"""

from __future__ import annotations

import sys

from experiments._cli_common import EXPERIMENTS, FILE_COMMANDS, _err, _UsageError, _version
from experiments._cli_common import _emit  # noqa: F401
from experiments._cli_files import _FILE_HANDLERS, _run_file_command  # noqa: F401
from experiments._cli_run import _run_experiment
from experiments._cli_support import support_metadata  # noqa: F401

# The pieces: _cli_common (the registry and helpers), _cli_run (running an experiment),
# _cli_files (check, spectrum, info), _cli_support (circuits that record their support).
__all__ = ["main", "EXPERIMENTS", "FILE_COMMANDS"]


def _top_help() -> str:
    width = max(len(k) for k in (*EXPERIMENTS, *FILE_COMMANDS))
    lines = [
        "usage: depthsep [--version] [--help] <command> [options] [--json]",
        "",
        "Exact, fast, testable depth separation (depthsep " + _version() + ").",
        "",
        "experiments (options as in `depthsep <command> --help`):",
    ]
    lines += [f"  {name:<{width}}  {desc}" for name, (_, desc) in EXPERIMENTS.items()]
    lines += ["", "checks on files:"]
    lines += [f"  {name:<{width}}  {desc}" for name, desc in FILE_COMMANDS.items()]
    lines += [
        "",
        "--json prints one JSON object on stdout (tables and logs go to stderr).",
        "Exit status: 0 success, 1 failed check/experiment or bad input, 2 usage error.",
    ]
    return "\n".join(lines)


def _split_json_flag(argv: list) -> tuple:
    """Remove ``--json`` (before a ``--`` separator) and say whether it was there."""
    if "--" in argv:
        cut = argv.index("--")
        head, tail = argv[:cut], argv[cut:]
    else:
        head, tail = argv, []
    return [a for a in head if a != "--json"] + tail, "--json" in head


# ------------------------------------------------------------------------------------- main
def main(argv=None) -> int:
    """Run the ``depthsep`` command line; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 on success, 1 for a failed check or experiment or bad input, 2 for a usage error.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        _err("depthsep: interrupted")
        return 130
    except Exception as exc:  # last resort: one line, never a traceback
        _err(
            f"depthsep: internal error: {type(exc).__name__}: {_one_line(exc)} (this is a bug; "
            f"please report it with the command line)"
        )
        return 1


def _one_line(exc) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _main(argv: list) -> int:
    argv, as_json = _split_json_flag(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        stream = sys.stdout if argv else sys.stderr
        print(_top_help(), file=stream)
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"depthsep {_version()}")
        return 0
    command, rest = argv[0], argv[1:]
    if command == "separate" and "--sampled" in rest:
        # `depthsep separate --sampled ...` is the sampled mode (E24) of the same experiment
        command, rest = "separate-sampled", [a for a in rest if a != "--sampled"]
    if command == "separate" and "--curriculum" in rest:
        # `depthsep separate --curriculum ...` is E25, the learnability control of E23
        command, rest = "separate-curriculum", [a for a in rest if a != "--curriculum"]
    from circuits.utils.errors import DepthsepError

    try:
        if command in EXPERIMENTS:
            return _run_experiment(command, rest, as_json)
        if command in FILE_COMMANDS:
            return _run_file_command(command, rest, as_json)
        import difflib

        close = difflib.get_close_matches(command, [*EXPERIMENTS, *FILE_COMMANDS], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise _UsageError(f"depthsep: unknown command {command!r}{hint} (see depthsep --help)")
    except _UsageError as exc:
        _err(str(exc))
        return 2
    except (DepthsepError, OSError) as exc:
        # bad input (depthsep's own error family) and unreadable files: a message, not a
        # traceback; anything else is a bug and keeps its traceback
        _err(f"depthsep {command}: error: {exc}")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
