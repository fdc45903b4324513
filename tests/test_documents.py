"""The shared document loader and both loaders under fuzzing (issue 14, items 4 and 5).

Every mutated file must either load or raise the loader's own error class: never TypeError,
KeyError, RecursionError, MemoryError or anything else.  The default run fuzzes 1,500 cases
per loader; ``--runslow`` runs 10,000 per loader (the figure recorded in
benchmarks/results_reliability.md).
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import circuits as c
from circuits.io import load_circuit
from circuits.utils.documents import check_header, parse_document, read_document
from circuits.utils.errors import DepthsepError, InvalidCircuitError, InvalidNetworkError
from networks.sigma import SigmaNetwork

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ the shared loader

@pytest.mark.parametrize("raw, match", [
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[" * 5000 + b"]" * 5000, "nested 5000 deep"),
    (b'{"a": "' + b"[" * 5000 + b'"}', None),            # brackets inside a string do not nest
    (b'{"a": "\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', None),
    (b'{"a": NaN}', "NaN"),
    (b'{"a": 1e999}', "overflows"),
    (b'{"a": 1', "not valid JSON"),
    (b'{"a": ' + b"9" * 5000 + b"}", "not valid JSON"),
])
def test_parse_document(raw, match):
    if match is None:
        assert isinstance(parse_document(raw), dict)
    else:
        with pytest.raises(DepthsepError, match=match):
            parse_document(raw)


def test_value_count_is_bounded_before_parsing():
    raw = b"[" + b"0," * 100_000 + b"0]"
    assert len(parse_document(raw, max_values=100_002)) == 100_001
    with pytest.raises(DepthsepError, match="100,002 JSON values"):
        parse_document(raw, max_values=100_001)


@pytest.mark.parametrize("doc, match", [
    ([], "must be a JSON object"),
    ({"format": "x"}, "'version' must be an integer"),
    ({"format": "x", "version": True}, "'version' must be an integer"),
    ({"format": "x", "version": 1.0}, "'version' must be an integer"),
    ({"format": "x", "version": 2}, "unsupported version 2"),
    ({"format": "y", "version": 1}, "'format' must be 'x'"),
    ({"format": ["x"], "version": 1}, "'format' must be 'x'"),
    ({"format": "x", "version": 1}, "missing the field 'a'"),
    ({"format": "x", "version": 1, "a": 0, "b": 0}, r"unknown field\(s\) \['b'\]"),
])
def test_check_header(doc, match):
    with pytest.raises(DepthsepError, match=match):
        check_header(doc, format="x", version=1, required=("a",))


def test_read_document_refuses_by_size_before_reading(tmp_path):
    p = tmp_path / "big.json"
    with open(p, "wb") as fh:
        fh.truncate(1 << 30)                # sparse 1 GiB: reading it would take seconds
    with pytest.raises(InvalidCircuitError, match="max_bytes"):
        read_document(p, error=InvalidCircuitError, max_bytes=1 << 20)
    with pytest.raises(InvalidCircuitError, match="directory"):
        read_document(tmp_path, error=InvalidCircuitError)
    with pytest.raises(FileNotFoundError):
        read_document(tmp_path / "missing.json")


def test_read_is_capped_even_when_stat_lies(tmp_path):
    # /dev/zero reports size 0 but never ends: refused as a device before any byte is read
    with pytest.raises(DepthsepError, match="not a regular file"):
        read_document("/dev/zero", max_bytes=1 << 16)


_RSS = """
    import resource, sys, time
    from circuits.io import load_circuit
    from circuits.utils.errors import InvalidCircuitError
    t = time.perf_counter()
    try:
        load_circuit(sys.argv[1])
    except InvalidCircuitError as exc:
        print("refused", f"{time.perf_counter() - t:.3f}",
              resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, str(exc)[-80:])
"""


def test_load_circuit_refuses_an_oversized_file_in_bounded_memory(tmp_path):
    # issue 14 item 5: a 137 MiB file took 9.5 s and 928 MiB to refuse
    p = tmp_path / "huge.json"
    with open(p, "wb") as fh:
        fh.write(b'{"format": "depthsep.circuit", "version": 1, "kind": "layered", "n_inputs": 1, '
                 b'"layers": [{"weights": [')
        fh.write(b"[1]," * ((137 << 20) // 4))
        fh.write(b'[1]], "thresholds": [0]}]}')
    base = subprocess.run([sys.executable, "-c", "import circuits.io, resource; print(resource."
                           "getrusage(resource.RUSAGE_SELF).ru_maxrss)"], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(_RSS), str(p)], capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    words = out.stdout.split()
    assert words[0] == "refused", out.stderr[-2000:]
    seconds, rss_kib = float(words[1]), int(words[2])
    assert "max_bytes" in out.stdout
    assert seconds < 0.5
    assert rss_kib - int(base.stdout) < 16 * 1024      # < 16 MiB above a bare import


# ------------------------------------------------------------------ fuzzing both loaders

def _seed_documents():
    rng = np.random.default_rng(0)
    circuits = [c.parity_depth2(4), c.ip_depth3(2), c.ThresholdCircuit.single_gate([2, -1, 3], 1),
                c.ThresholdCircuit.depth2(rng.integers(-9, 10, (3, 5)), [1, 0, -2], [1, 1, 1], 2)]
    dag = c.DagCircuit(2, [c.DagGate("a", "AND", [("x", 0), ("x", 1)]),
                           c.DagGate("o", "THR", ["a", ("x", 0)], [2, -1], 1)], "o")
    circuits.append(dag)
    nets = [SigmaNetwork.random([3, 4, 1], seed=1), SigmaNetwork.random([2, 3, 2, 1], "tanh", seed=2)]
    return ([json.dumps(c.circuit_to_dict(x)).encode() for x in circuits],
            [json.dumps(n.to_dict()).encode() for n in nets])


_TOKENS = [b"[", b"]", b"{", b"}", b'"', b",", b":", b"true", b"false", b"null", b"1.0", b"-0",
           b"1e999", b"NaN", b"Infinity", b"\\u0000", b"\xff", b"\xc3", b"9" * 30, b'"x"',
           b"[" * 50, b"]" * 50, b'"version"', b'"format"', b'"layers"', b'"weights"', b'"dims"']


def _random_value(rng, depth=0):
    k = int(rng.integers(0, 12))
    if k == 0:
        return bool(rng.integers(0, 2))
    if k == 1:
        return None
    if k == 2:
        return float(rng.normal() * 10 ** int(rng.integers(0, 300)))
    if k == 3:
        return int(rng.integers(-(1 << 62), 1 << 62)) * (10 ** int(rng.integers(0, 30)))
    if k == 4:
        return "".join(chr(int(x)) for x in rng.integers(32, 0x2FF, size=int(rng.integers(0, 8))))
    if k == 5 and depth < 3:
        return [_random_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    if k == 6 and depth < 3:
        return {str(_random_value(rng, 3)): _random_value(rng, depth + 1)
                for _ in range(int(rng.integers(0, 3)))}
    if k == 7:
        nest = int(rng.integers(1, 3000))
        return json.loads("[" * nest + "]" * nest) if nest < 900 else "[" * nest
    if k == 8:
        return 1.0
    if k == 9:
        return True
    if k == 10:
        return []
    return int(rng.integers(-3, 4))


def _mutate_tree(doc, rng):
    """Replace, delete or add one node somewhere in the parsed document."""
    node, path = doc, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.75:
        key = (list(node)[int(rng.integers(0, len(node)))] if isinstance(node, dict)
               else int(rng.integers(0, len(node))))
        path.append((node, key))
        node = node[key]
    if not path:
        return _random_value(rng) if rng.random() < 0.3 else doc
    parent, key = path[-1]
    op = rng.random()
    if op < 0.6:
        parent[key] = _random_value(rng)
    elif op < 0.8:
        del parent[key]
    elif isinstance(parent, dict):
        parent["extra" + str(int(rng.integers(0, 9)))] = _random_value(rng)
    else:
        parent.insert(key, _random_value(rng))
    return doc


def _mutate_bytes(raw: bytes, rng) -> bytes:
    b = bytearray(raw)
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(0, 6))
        i = int(rng.integers(0, len(b) + 1))
        if op == 0 and b:
            b[min(i, len(b) - 1)] = int(rng.integers(0, 256))
        elif op == 1:
            j = min(len(b), i + int(rng.integers(1, 40)))
            del b[i:j]
        elif op == 2:
            b[i:i] = _TOKENS[int(rng.integers(0, len(_TOKENS)))]
        elif op == 3:
            j = min(len(b), i + int(rng.integers(1, 80)))
            b[i:i] = b[i:j]
        elif op == 4:
            b = b[:i]
        else:
            b[i:i] = bytes(rng.integers(0, 256, size=int(rng.integers(1, 6))).tolist())
    return bytes(b)


def _cases(seeds, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        raw = seeds[int(rng.integers(0, len(seeds)))]
        if rng.random() < 0.5:
            doc = json.loads(raw)
            for _ in range(int(rng.integers(1, 3))):
                doc = _mutate_tree(doc, rng)
            try:
                raw = json.dumps(doc).encode()
            except (ValueError, RecursionError):
                raw = _mutate_bytes(raw, rng)
        else:
            raw = _mutate_bytes(raw, rng)
        yield raw


def fuzz_loader(kind: str, n: int, directory: Path, seed: int = 14) -> dict:
    """Feed ``n`` mutated files to a loader; tally outcomes; raise on any foreign exception."""
    circuits_seeds, network_seeds = _seed_documents()
    seeds, load, error = ((circuits_seeds, load_circuit, InvalidCircuitError) if kind == "circuit"
                          else (network_seeds, SigmaNetwork.load, InvalidNetworkError))
    tally = {"cases": 0, "loaded": 0, "refused": 0}
    path = directory / f"fuzz-{kind}.json"
    for raw in _cases(seeds, n, seed):
        path.write_bytes(raw)
        tally["cases"] += 1
        try:
            load(path)
        except error:
            tally["refused"] += 1
        except Exception as exc:   # anything else is a bug: report the input that caused it
            raise AssertionError(f"{kind} loader raised {type(exc).__name__}: {exc} on "
                                 f"{raw[:300]!r}") from exc
        else:
            tally["loaded"] += 1
    return tally


@pytest.mark.parametrize("kind", ["circuit", "network"])
def test_fuzzed_files_raise_only_library_errors(tmp_path, kind):
    tally = fuzz_loader(kind, 1500, tmp_path)
    assert tally["cases"] == 1500 and tally["refused"] > 1000 and tally["loaded"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["circuit", "network"])
def test_fuzzed_files_raise_only_library_errors_10k(tmp_path, kind):
    tally = fuzz_loader(kind, 10_000, tmp_path, seed=2014)
    assert tally["cases"] == 10_000 and tally["refused"] > 7000


def test_read_json_goes_through_the_shared_loader(tmp_path):
    from circuits.utils.files import read_json
    p = tmp_path / "r.json"
    p.write_text('{"a": [1, 2]}')
    assert read_json(p) == {"a": [1, 2]}
    p.write_text("[" * 10_000 + "]" * 10_000)
    with pytest.raises(ValueError, match="nested 10000 deep"):
        read_json(p)
    with pytest.raises(ValueError, match="max_bytes"):
        read_json(p, max_bytes=100)
