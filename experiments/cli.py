"""The ``depthsep`` command: every experiment and the everyday checks on circuit/network files.

Experiments (options are the experiment module's own; ``depthsep reduce --help`` lists them)::

    depthsep reduce --n 4                 # experiments.reduction: the reduction end to end
    depthsep ceiling ...                  # experiments.ceiling: E21, the correlation ceiling
    depthsep radial ...                   # experiments.radial: E22, radial targets
    depthsep theory-table --only E1,E5    # experiments.theory_table: THEORY rows E1-E22
    depthsep ip-demo --n-max 6            # experiments.ip_demo: IP_n circuits on all 4^n inputs
    depthsep separate-sampled --n 14..24  # experiments.sampled: E24, sampled mode (issue 22)
    depthsep least-circuit --function ip --n 3   # experiments.least_circuit: exact least THR o THR
    depthsep separation-table             # experiments.separation_table: bound <= truth <= construction

Checks on files::

    depthsep check circuit.json --target ip        # exact disagreement count on the whole cube
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

import contextlib
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main", "EXPERIMENTS", "FILE_COMMANDS"]

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
        "E24: sampled mode, depth-2 rho/P vs the proven IP ceiling to n = 24 (issue 22)",
    ),
    "separate-curriculum": (
        "experiments.curriculum",
        "E25: the ip_j curriculum, depth 3 vs depth 2 at equal parameter count, and the "
        "gradient signal at initialisation (also `depthsep separate --curriculum`)",
    ),
    "least-circuit": (
        "experiments.least_circuit",
        "least THR o THR circuit of a small function, proved by CP-SAT (issue 21)",
    ),
    "separation-table": (
        "experiments.separation_table",
        "lower bound <= exact least THR o THR size <= construction, for IP and controls",
    ),
}

#: file subcommands -> one-line description
FILE_COMMANDS = {
    "check": "count the inputs where a circuit file differs from a target (ip, parity, ..., "
    "or a truth-table file)",
    "spectrum": "exact Walsh spectrum of a circuit or truth-table file",
    "info": "describe a circuit, network (JSON) or weights (.npz/.safetensors) file",
}


# ----------------------------------------------------------------------------------- helpers
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


def _emit(obj) -> None:
    from circuits.utils.files import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


# ------------------------------------------------------------------------------ experiments
def _out_option(argv: list):
    """The value of ``--out DIR`` / ``--out=DIR`` in ``argv`` (None if absent)."""
    for i, a in enumerate(argv):
        if a == "--":
            break
        if a == "--out" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--out="):
            return a.split("=", 1)[1]
    return None


def _import_experiment(command: str):
    module_name = EXPERIMENTS[command][0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise _UsageError(
                f"depthsep {command}: this installation has no module {module_name} "
                f"(depthsep {_version()}); the {command!r} experiment is not part of this "
                f"version. Update depthsep (pip install -e . in a current checkout)."
            ) from None
        raise _UsageError(
            f"depthsep {command}: {module_name} needs the package {exc.name!r}, which is not "
            f"installed; install the extras with pip install -e '.[plot]' (or '.[all]')"
        ) from None


def _run_experiment(command: str, argv: list, as_json: bool) -> int:
    module = _import_experiment(command)
    entry = getattr(module, "main", None)
    if entry is None:
        raise _UsageError(f"depthsep {command}: {module.__name__} has no main(argv) function")
    if any(a in ("-h", "--help") for a in argv):
        if not as_json:
            return _call_main(entry, argv)
        with contextlib.redirect_stdout(sys.stderr):
            return _call_main(entry, argv)
    with _locked_out_dir(command, _out_option(argv)):
        if not as_json:
            return _call_main(entry, argv)
        return _run_experiment_json(command, module, entry, argv)


@contextlib.contextmanager
def _locked_out_dir(command: str, out):
    """Hold an exclusive ``flock`` on the ``--out`` directory for the whole run, so two runs on
    one directory cannot mix their files; the second is refused at once with a message.  The
    lock is on the directory itself (no lock file to go stale: the kernel drops it when the
    process ends, however it ends)."""
    if out is None:
        yield
        return
    import os

    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    from circuits.utils.errors import DepthsepError

    try:
        os.makedirs(out, exist_ok=True)
        fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield  # the experiment reports the unusable --out itself
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DepthsepError(
                f"--out {out}: another depthsep run is writing to this directory; "
                f"wait for it to finish or give another --out"
            ) from None
        yield
    finally:
        os.close(fd)


def _run_experiment_json(command: str, module, entry, argv: list) -> int:
    out = _out_option(argv)
    with contextlib.ExitStack() as stack:
        if out is None:
            out = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"depthsep-{command}-"))
            argv = [*argv, "--out", out]
            kept = False
            _err(
                f"depthsep {command} --json: no --out given, so the files go to a temporary "
                f"directory that is removed at exit (the paths logged below will not exist "
                f"afterwards; their JSON is in the output); pass --out DIR to keep them"
            )
        else:
            kept = True
        root = Path(out)
        before = _json_files(root)
        with contextlib.redirect_stdout(sys.stderr):
            rc = _call_main(entry, argv)
        files = {}
        for rel, ident in sorted(_json_files(root).items()):
            if before.get(rel) == ident:
                continue  # there before this run and unchanged: not ours
            files[rel] = _read_own_json(root / rel, ident)
        _emit(
            {
                "command": command,
                "module": module.__name__,
                "argv": argv,
                "exit_code": rc,
                "out": str(root) if kept else None,
                "files": files,
            }
        )
    return rc


def _json_files(root: Path) -> dict:
    """``{relative path: (device, inode, mtime_ns, size)}`` of the regular ``*.json`` files under
    ``root``; symlinks (to files or directories) are neither listed nor followed."""
    import os
    import stat as _stat

    found = {}
    if not root.is_dir():
        return found
    for dirpath, _dirnames, filenames in os.walk(root, followlinks=False):
        for name in filenames:
            if not name.endswith(".json"):
                continue
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except OSError:
                continue
            if _stat.S_ISREG(st.st_mode):
                found[str(p.relative_to(root))] = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    return found


def _read_own_json(path: Path, ident: tuple):
    """The JSON at ``path`` if it is still the regular file ``ident`` (opened without following
    a symlink put there in the meantime); else a note saying why not."""
    import os

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return {"unreadable": f"{exc.strerror or exc}"}
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != ident[:2]:
            return {"unreadable": "replaced while being read"}
        try:
            return json.loads(fh.read(st.st_size + 1).decode("utf-8"))
        except ValueError as exc:
            return {"unreadable": str(exc)}


def _call_main(entry, argv: list) -> int:
    try:
        rc = entry(list(argv))
    except SystemExit as exc:  # argparse: 0 after --help, 2 after a usage error
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        _err(str(code))
        return 1
    return 0 if rc is None else int(rc)


# ---------------------------------------------------------------------------- file commands
def _file_parser(command: str):
    import argparse

    p = argparse.ArgumentParser(
        allow_abbrev=False, prog=f"depthsep {command}", description=FILE_COMMANDS[command]
    )
    p.add_argument(
        "file",
        help="a circuit JSON file (circuits.save_circuit)"
        + (", a truth-table file" if command == "spectrum" else "")
        + (
            ", a network JSON file (SigmaNetwork.save) or a weights file (.npz, .safetensors)"
            if command == "info"
            else ""
        ),
    )
    if command == "check":
        p.add_argument(
            "--target",
            required=True,
            help="ip, parity, majority, and, or, or a truth-table file (.npy, .json "
            "list, or text of 0/1 characters), in cube order",
        )
        p.add_argument("--progress", action="store_true", help="progress bar on stderr")
    if command == "spectrum":
        p.add_argument(
            "--top", type=int, default=8, help="list the TOP largest |Walsh| coefficients; default 8"
        )
    if command == "info":
        p.add_argument(
            "--activation",
            default="relu",
            help="activation for a weights file (.npz/.safetensors); default relu",
        )
    return p


def _load_function_file(path: str):
    """A circuit (JSON document) or a truth table from ``path``."""
    from circuits.io import load_truth_table
    from circuits.utils.files import read_json

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    if p.suffix.lower() == ".json":
        # issue 25: decide from the bytes before parsing anything.  A plain truth table goes
        # straight to its numpy reader (a generic parse first cost ~60 bytes per byte); a
        # larger document of another shape can only be a circuit; a small one is looked at.
        from circuits.io import MAX_FILE_BYTES, json_table_shape, load_circuit
        from circuits.utils.documents import read_regular_file
        from circuits.utils.errors import InvalidCircuitError

        raw = read_regular_file(p, error=InvalidCircuitError, max_bytes=MAX_FILE_BYTES)
        table, size = json_table_shape(raw), len(raw)
        del raw  # the loaders read the file themselves
        if not table:
            if size > 1 << 20:
                return "circuit", load_circuit(p)
            doc = read_json(p)
            if isinstance(doc, dict) and doc.get("format") == "depthsep.circuit":
                return "circuit", load_circuit(p)
    return "truth_table", load_truth_table(p)


#: The named targets of ``depthsep check --target``.
_CHECK_TARGETS = ("ip", "parity", "majority", "and", "or")


def _cmd_check(args) -> tuple:
    import circuits
    from circuits.io import load_circuit

    circuit = load_circuit(args.file)
    target_name = args.target
    if target_name.lower() in _CHECK_TARGETS:
        target = target_name.lower()
    elif not Path(target_name).exists() and not Path(target_name).suffix:
        raise _UsageError(
            f"depthsep check: --target {target_name!r} is neither a known target nor a file; "
            f"the targets are {', '.join(_CHECK_TARGETS)}, or a truth-table file (.npy, .json "
            f"list, or text of 0/1 characters) in cube order"
        )
    else:
        kind, target = _load_function_file(target_name)
        if kind == "circuit":
            target = circuits.truth_table(target)
    t0 = time.perf_counter()
    res = circuits.count_disagreements(circuit, target, progress=args.progress)
    seconds = time.perf_counter() - t0
    record = {
        "file": args.file,
        "target": target_name,
        "n_inputs": circuit.n_inputs,
        "n_points": res.n_points,
        "disagreements": res.count,
        "agrees": res.count == 0,
        "first_counterexample_index": res.index if res.count else None,
        "first_counterexample_bits": (
            res.counterexample.tolist() if res.counterexample is not None else None
        ),
        "seconds": seconds,
    }
    text = f"{args.file}: {res.count} of {res.n_points} inputs differ from {target_name} ({seconds:.3f} s)"
    if res.count:
        text += (
            f"\nfirst counterexample: k = {res.index}, bits (bit i = (k >> i) & 1) = "
            f"{res.counterexample.tolist()}"
        )
    else:
        text += "\nthe circuit computes the target on every input"
    return record, text, 0 if res.count == 0 else 1


def _cmd_spectrum(args) -> tuple:
    import numpy as np

    from circuits.analysis import walsh_spectrum

    if args.top < 0:
        raise _UsageError(f"depthsep spectrum: --top must be >= 0, got {args.top}")
    kind, obj = _load_function_file(args.file)
    s = walsh_spectrum(obj)
    N = s.n_inputs
    absw = np.abs(s.walsh)
    values, counts = np.unique(absw, return_counts=True)
    order = np.lexsort((np.arange(absw.size), -absw))[: args.top]
    top = [
        {
            "u": int(u),
            "bits": [(int(u) >> i) & 1 for i in range(N)],
            "walsh": int(s.walsh[u]),
            "coefficient": float(s.walsh[u]) / (1 << N),
        }
        for u in order
    ]
    record = {
        "file": args.file,
        "kind": kind,
        "n_inputs": N,
        "degree": s.degree,
        "spectral_norm": s.spectral_norm,
        "nonzero": int(np.count_nonzero(s.walsh)),
        "level_weights": s.level_weights.tolist(),
        "abs_walsh_histogram": {str(int(v)): int(c) for v, c in zip(values, counts)},
        "bent": bool(N % 2 == 0 and values.size == 1 and values[0] == 1 << (N // 2)),
        "top": top,
    }
    lines = [
        f"{args.file}: {kind}, N = {N}, degree {s.degree}, Fourier L1 norm "
        f"{s.spectral_norm:g}, {record['nonzero']} nonzero of {1 << N} coefficients",
        "|W(u)| histogram: " + ", ".join(f"{v}: {c}" for v, c in record["abs_walsh_histogram"].items()),
        "level weights W^k: " + ", ".join(f"{w:.4g}" for w in record["level_weights"]),
    ]
    if record["bent"]:
        lines.append(f"bent: every |W(u)| = 2^(N/2) = {1 << (N // 2)} (like IP)")
    if top:
        lines.append("largest coefficients (u in cube order, F^(u) = W(u)/2^N):")
        lines += [f"  u = {t['u']:>6}  W = {t['walsh']:>8}  F^ = {t['coefficient']:+.6f}" for t in top]
    return record, "\n".join(lines), 0


def _cmd_info(args) -> tuple:
    from circuits.utils.files import read_json

    p = Path(args.file)
    if not p.exists():
        raise FileNotFoundError(f"no such file: {p}")
    if p.suffix.lower() in (".npz", ".safetensors"):
        from networks.interop import load_state_dict
        from networks.sigma import SigmaNetwork

        from circuits.utils.errors import DepthsepError

        state = load_state_dict(p)
        try:
            net = SigmaNetwork.from_state_dict(state, activation=args.activation)
        except DepthsepError as exc:  # name the file, as the loaders do
            raise type(exc)(f"{p}: {exc}") from None
        return _network_info(args.file, net, source="weights")
    doc = read_json(p)
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt == "depthsep.circuit":
        from circuits.io import load_circuit

        return _circuit_info(args.file, load_circuit(p))
    if fmt == "depthsep.SigmaNetwork":
        from networks.sigma import SigmaNetwork

        return _network_info(args.file, SigmaNetwork.load(p), source="network")
    raise _UsageError(
        f"depthsep info: {p} is neither a circuit document (format "
        f"'depthsep.circuit') nor a network file (format 'depthsep.SigmaNetwork'), "
        f"found format {fmt!r}; weights go in .npz or .safetensors files"
    )


def _circuit_info(path, circuit) -> tuple:
    from circuits.graph import DagCircuit

    record = {"file": str(path), "type": type(circuit).__name__, "n_inputs": circuit.n_inputs}
    if isinstance(circuit, DagCircuit):
        layered = circuit.to_threshold_circuit()
        record.update({"kind": "dag", "dag_gates": len(circuit.gates)})
    else:
        layered = circuit
        record["kind"] = "layered"
    record.update(
        {
            "depth": layered.depth,
            "hidden_gates": layered.size,
            "gates_with_output": layered.n_gates,
            "layer_widths": [layer.n_gates for layer in layered.layers],
            "wires": layered.n_wires,
            "max_abs_weight": int(layered.max_abs_weight),
            "preactivation_bound": int(layered.preactivation_bound),
        }
    )
    text = (
        f"{path}: {record['kind']} threshold circuit on N = {record['n_inputs']} inputs, "
        f"depth {record['depth']}, {record['hidden_gates']} hidden gates + 1 output gate, "
        f"layer widths {record['layer_widths']}, {record['wires']} wires, max|w| = "
        f"{record['max_abs_weight']}, |pre-activation| <= {record['preactivation_bound']}"
    )
    return record, text, 0


def _network_info(path, net, *, source: str) -> tuple:
    record = {
        "file": str(path),
        "kind": source,
        "dims": list(net.dims),
        "depth": net.depth,
        "widths": list(net.widths),
        "activation": net.activation.name,
        "n_params": net.n_params,
        "weight_bound": net.weight_bound,
        "max_preactivation_unit_ball": net.max_preactivation(1.0),
    }
    text = (
        f"{path}: σ-network, dims {record['dims']} (depth {net.depth}), activation "
        f"{net.activation.name}, {net.n_params} parameters, B(N) = max|weight| = "
        f"{net.weight_bound:.6g}, max |pre-activation| on the unit ball = "
        f"{record['max_preactivation_unit_ball']:.6g}"
    )
    return record, text, 0


_FILE_HANDLERS = {"check": _cmd_check, "spectrum": _cmd_spectrum, "info": _cmd_info}


def _run_file_command(command: str, argv: list, as_json: bool) -> int:
    parser = _file_parser(command)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code in (None, 0) else 2
    try:
        record, text, rc = _FILE_HANDLERS[command](args)
    except ValueError as exc:  # e.g. a malformed truth-table or JSON file
        _err(f"depthsep {command}: error: {exc}")
        return 1
    if as_json:
        _emit({"command": command, "exit_code": rc, **record})
    else:
        print(text)
    return rc


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
