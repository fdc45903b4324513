"""The file commands of ``depthsep``: ``check``, ``spectrum`` and ``info``.

A circuit that records its support (``depthsep reduce`` writes one; :mod:`experiments._cli_support`)
is checked and analysed on that support: the circuit as a function of the 2n message bits
(a, b), index k = a + 2^n b.  Every refusal (unknown target, a cube too large for the time
limit, a table of the wrong length) comes before any evaluation.
"""

from __future__ import annotations

import time
from pathlib import Path

from experiments._cli_common import FILE_COMMANDS, _emit, _err, _UsageError
from experiments._cli_support import _support_bits, _support_name, _support_of

#: The named targets of ``depthsep check --target``.
_CHECK_TARGETS = ("ip", "parity", "majority", "and", "or")

#: No exhaustive kernel here evaluates more gate-inputs per second than this (the measured
#: best is about 10^10 on two cores): a whole-cube check whose work at this rate already exceeds
#: the time limit is refused before the circuit is built.
MAX_GATE_INPUT_RATE = 1e11


# --------------------------------------------------------------------------------- parsers
def _file_parser(command: str):
    import argparse

    p = argparse.ArgumentParser(
        prog=f"depthsep {command}", description=FILE_COMMANDS[command], allow_abbrev=False
    )
    p.add_argument(
        "file",
        help="a circuit JSON file (circuits.save_circuit, or circuit.json of depthsep reduce)"
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
            "list, or text of 0/1 characters), in cube order (on a support: 4^n entries, "
            "k = a + 2^n b)",
        )
        p.add_argument(
            "--whole-cube",
            action="store_true",
            help="check all 2^N inputs even when the file records a support",
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
        # decide from the bytes before parsing anything.  A plain truth table goes straight to
        # its numpy reader (a generic parse first cost ~60 bytes per byte); a larger document of
        # another shape can only be a circuit; a small one is looked at.
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


def _check_target(name: str):
    """The target of ``check`` named or read before any circuit work: ("name", str) or
    ("table", uint8 array)."""
    import circuits

    if name.lower() in _CHECK_TARGETS:
        return "name", name.lower()
    if not Path(name).exists() and not Path(name).suffix:
        raise _UsageError(
            f"depthsep check: --target {name!r} is neither a known target nor a file; "
            f"the targets are {', '.join(_CHECK_TARGETS)}, or a truth-table file (.npy, .json "
            f"list, or text of 0/1 characters) in cube order"
        )
    kind, target = _load_function_file(name)
    return "table", circuits.truth_table(target) if kind == "circuit" else target


def _refuse_whole_cube(doc, where: str) -> None:
    """Refuse, from the header alone, a whole-cube check that cannot finish in the time limit."""
    from circuits.utils.errors import RunTooLongError
    from circuits.utils.slicing import DEFAULT, resolve_max_seconds

    limit = resolve_max_seconds(DEFAULT)
    N = doc.get("n_inputs") if isinstance(doc, dict) else None
    layers = doc.get("layers") if isinstance(doc, dict) else None
    if limit is None or type(N) is not int or not isinstance(layers, list):
        return
    gate_inputs, fan_in = 0, N
    for layer in layers:
        rows = layer.get("weights") if isinstance(layer, dict) else None
        if isinstance(rows, list):
            gate_inputs += len(rows) * fan_in
            fan_in = len(rows)
    floor = float(2**N) * gate_inputs / MAX_GATE_INPUT_RATE
    if floor > limit:
        raise RunTooLongError(
            f"{where}checking all 2^{N} inputs of a circuit with {gate_inputs} gate inputs would "
            f"take at least {floor:.3g} s (at {MAX_GATE_INPUT_RATE:.0e} gate inputs per "
            f"second), over the limit of {limit:g} s; raise it with DEPTHSEP_MAX_SECONDS, or "
            f"check a circuit that records its support (depthsep reduce writes one)"
        )


# ------------------------------------------------------------------------------- commands
def _cmd_check(args) -> tuple:
    import numpy as np

    import circuits
    from circuits.io import circuit_from_dict, read_circuit_document

    target_kind, target = _check_target(args.target)  # refusals first
    where = f"{args.file}: "
    doc = read_circuit_document(args.file)
    support = None if args.whole_cube else _support_of(doc, where)
    if support is None:
        _refuse_whole_cube(doc, where)
    elif target_kind == "table" and np.asarray(target).size != 1 << 2 * support[0]:
        raise _UsageError(
            f"depthsep check: {args.target} has {np.asarray(target).size} entries; on "
            f"{_support_name(support[0], support[1], support[3])} it needs 4^n = "
            f"{1 << 2 * support[0]} (k = a + 2^n b), or pass --whole-cube for 2^N entries"
        )
    circuit = circuit_from_dict(doc, where=where)
    t0 = time.perf_counter()
    if support is None:
        res = circuits.count_disagreements(circuit, target, progress=args.progress)
        count, n_points, index = res.count, res.n_points, res.index
        cex = res.counterexample.tolist() if res.counterexample is not None else None
        on = "inputs"
    else:
        from circuits.functions import as_boolean_function

        n, m, words, inst = support
        got = _support_bits(circuit, n, m, words)
        want = (
            as_boolean_function(target, 2 * n).truth_table()
            if target_kind == "name"
            else np.asarray(target, dtype=np.uint8).ravel()
        )
        bad = np.flatnonzero(got != want)
        count, n_points = int(bad.size), int(got.size)
        index = int(bad[0]) if bad.size else -1
        cex = [(index >> i) & 1 for i in range(2 * n)] if bad.size else None
        on = _support_name(n, m, inst)
    seconds = time.perf_counter() - t0
    record = {
        "file": args.file,
        "target": args.target,
        "n_inputs": circuit.n_inputs,
        "domain": "cube" if support is None else "support",
        "n_points": n_points,
        "disagreements": count,
        "agrees": count == 0,
        "first_counterexample_index": index if count else None,
        "first_counterexample_bits": cex,
        "seconds": seconds,
    }
    if support is None:
        text = f"{args.file}: {count} of {n_points} inputs differ from {args.target} ({seconds:.3f} s)"
    else:
        text = (
            f"{args.file}: {count} of {n_points} points differ from {args.target} on {on} ({seconds:.3f} s)"
        )
    if count:
        text += f"\nfirst counterexample: k = {index}, bits (bit i = (k >> i) & 1) = {cex}" + (
            "" if support is None else f" (a = {index % (1 << support[0])}, b = {index >> support[0]})"
        )
    else:
        text += "\nthe circuit computes the target on every " + (
            "input" if support is None else "support point"
        )
    return record, text, 0 if count == 0 else 1


def _cmd_spectrum(args) -> tuple:
    import numpy as np

    from circuits.analysis import walsh_spectrum
    from circuits.hypercube import MAX_EXHAUSTIVE_BITS

    if args.top < 0:
        raise _UsageError(f"depthsep spectrum: --top must be >= 0, got {args.top}")
    kind, obj, on = None, None, ""
    p = Path(args.file)
    if p.suffix.lower() == ".json" and p.exists():
        from circuits.io import circuit_from_dict, read_circuit_document
        from circuits.utils.documents import read_regular_file
        from circuits.io import MAX_FILE_BYTES, json_table_shape
        from circuits.utils.errors import InvalidCircuitError

        raw = read_regular_file(p, error=InvalidCircuitError, max_bytes=MAX_FILE_BYTES)
        if not json_table_shape(raw):
            del raw
            doc = read_circuit_document(p)
            if isinstance(doc, dict) and doc.get("format") == "depthsep.circuit":
                where = f"{args.file}: "
                support = _support_of(doc, where)
                N = doc.get("n_inputs")
                if support is None and isinstance(N, int) and N > MAX_EXHAUSTIVE_BITS:
                    raise _UsageError(
                        f"depthsep spectrum: {args.file} has N = {N} inputs; the exact spectrum "
                        f"holds 2^{N} values and this command computes N <= "
                        f"{MAX_EXHAUSTIVE_BITS} (a circuit that records its support, as "
                        f"depthsep reduce writes, is taken on its 4^n support points)"
                    )
                circuit = circuit_from_dict(doc, where=where)
                if support is None:
                    kind, obj = "circuit", circuit
                else:
                    n, m, words, inst = support
                    kind, obj = "circuit on its support", _support_bits(circuit, n, m, words)
                    on = f" (as a function of (a, b) on {_support_name(n, m, inst)})"
    if obj is None:
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
        f"{args.file}: {kind}{on}, N = {N}, degree {s.degree}, Fourier L1 norm "
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
    from circuits.io import read_circuit_document

    doc = read_circuit_document(p) if p.stat().st_size > 1 << 20 else read_json(p)
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt == "depthsep.circuit":
        from circuits.io import circuit_from_dict

        where = f"{args.file}: "
        record, text, rc = _circuit_info(args.file, circuit_from_dict(doc, where=where))
        support = _support_of(doc, where)
        if support is not None:
            record["support"] = {"n": support[0], "m": support[1], "instance": support[3]}
            text += (
                f"\nmeant for {_support_name(support[0], support[1], support[3])} (inputs C(a) ‖ "
                f"C(b)); depthsep check / spectrum work there"
            )
        return record, text, rc
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
