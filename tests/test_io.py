"""Circuit JSON files: round trips, validation with named locations, fuzzed documents."""
import copy
import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from circuits import (DagCircuit, DagGate, InvalidCircuitError, ThresholdCircuit, circuit_from_dict, circuit_to_dict, ip_depth2, ip_depth3, load_circuit,
                      parity_depth2, save_circuit, truth_table)
from circuits.io import CIRCUIT_FORMAT, CIRCUIT_VERSION

from tests.test_graph import build, random_dag, random_layered


def xor_dag():
    return DagCircuit(3, [DagGate("p", "XOR", [("x", 0), ("x", 1)]),
                          DagGate("t", "THR", ["p", ("x", 2)], [2, -1], 1),
                          DagGate("out", "MAJ", ["p", "t", ("x", 2)])])


def layered_doc():
    return circuit_to_dict(ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1))


# ----------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("c", [parity_depth2(4), ip_depth3(2), ip_depth2(2), xor_dag()],
                         ids=["parity", "ip3", "ip2", "dag"])
def test_file_round_trip(tmp_path, c):
    path = save_circuit(c, tmp_path / "sub" / "c.json")
    back = load_circuit(path)
    assert type(back) is type(c) and back.equals(c)
    assert np.array_equal(truth_table(back), truth_table(c))
    doc = json.loads(path.read_text())
    assert doc["format"] == CIRCUIT_FORMAT and doc["version"] == CIRCUIT_VERSION
    assert [p.name for p in path.parent.iterdir()] == ["c.json"]          # no temp files left


def test_huge_weights_are_exact(tmp_path):
    big = 2**61 + 12345                     # beyond 2^53: a float would lose the low bits
    c = ThresholdCircuit.single_gate([big, -big + 1, 3], big - 7)
    back = load_circuit(save_circuit(c, tmp_path / "big.json"))
    assert back.equals(c) and back.layers[0].weights.tolist()[0][0] == big
    assert str(big) in (tmp_path / "big.json").read_text()


def test_overwrite_is_atomic(tmp_path):
    path = tmp_path / "c.json"
    save_circuit(parity_depth2(3), path)
    save_circuit(xor_dag(), path)
    assert load_circuit(path).equals(xor_dag())
    assert sorted(os.listdir(tmp_path)) == ["c.json"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.lists(st.integers(1, 5), max_size=3))
def test_random_layered_round_trip(seed, n, widths):
    c = random_layered(np.random.default_rng(seed), n, widths)
    doc = json.loads(json.dumps(circuit_to_dict(c)))
    assert circuit_from_dict(doc).equals(c)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 8))
def test_random_dag_round_trip(seed, n, n_gates):
    c = build(n, random_dag(np.random.default_rng(seed), n, n_gates))
    doc = json.loads(json.dumps(circuit_to_dict(c)))
    back = circuit_from_dict(doc)
    assert isinstance(back, DagCircuit) and back.equals(c)


def test_to_dict_refuses_other_objects():
    with pytest.raises(TypeError):
        circuit_to_dict({"layers": []})


# ----------------------------------------------------------------------------- bad documents
def mutated(change):
    doc = layered_doc()
    change(doc)
    return doc


BAD_DOCS = [
    ("not a dict", [1, 2], "JSON object"),
    ("format", mutated(lambda d: d.update(format="other")), "'format'"),
    ("version", mutated(lambda d: d.update(version=2)), "unsupported version 2"),
    ("version type", mutated(lambda d: d.update(version="1")), "'version' must be an integer"),
    ("kind", mutated(lambda d: d.update(kind="tree")), "'kind'"),
    ("missing", mutated(lambda d: d.pop("layers")), "missing the field 'layers'"),
    ("unknown field", mutated(lambda d: d.update(extra=1)), "unknown field"),
    ("n_inputs", mutated(lambda d: d.update(n_inputs=0)), "'n_inputs' must be between"),
    ("n_inputs bool", mutated(lambda d: d.update(n_inputs=True)), "'n_inputs' must be a JSON integer"),
    ("float weight", mutated(lambda d: d["layers"][0]["weights"][1].__setitem__(0, 1.0)),
     r"layers\[0\].weights\[1\]\[0\] must be a JSON integer"),
    ("bool weight", mutated(lambda d: d["layers"][1]["weights"][0].__setitem__(1, False)),
     r"layers\[1\].weights\[0\]\[1\]"),
    ("beyond int64", mutated(lambda d: d["layers"][0]["thresholds"].__setitem__(0, 2**63)),
     r"layers\[0\].thresholds\[0\] .* beyond int64"),
    ("overflow bound", mutated(lambda d: d["layers"][0]["weights"].__setitem__(0, [2**62, 2**62])),
     r"layers\[0\]: pre-activation bound"),
    ("row length", mutated(lambda d: d["layers"][0]["weights"][0].append(1)),
     r"layers\[0\].weights\[0\] must have exactly 2 entries, got 3"),
    ("chaining", mutated(lambda d: d["layers"][1]["weights"][0].pop()),
     r"layers\[1\].weights\[0\] must have exactly 2 entries, got 1"),
    ("thresholds", mutated(lambda d: d["layers"][0]["thresholds"].pop()),
     r"layers\[0\].thresholds must have exactly 2 entries, got 1"),
    ("output layer", mutated(lambda d: d["layers"].pop()), "exactly one gate"),
    ("no layers", mutated(lambda d: d.update(layers=[])), "at least 1"),
    ("layer not object", mutated(lambda d: d["layers"].__setitem__(0, [1])), r"layers\[0\] must be a JSON object"),
    ("weights not list", mutated(lambda d: d["layers"][0].update(weights="1,1")), r"layers\[0\].weights must be a JSON array"),
]


@pytest.mark.parametrize("name,doc,match", BAD_DOCS, ids=[b[0] for b in BAD_DOCS])
def test_bad_layered_documents(name, doc, match):
    with pytest.raises(InvalidCircuitError, match=match):
        circuit_from_dict(doc)


def dag_mutated(change):
    doc = circuit_to_dict(xor_dag())
    change(doc)
    return doc


BAD_DAGS = [
    ("unknown type", dag_mutated(lambda d: d["gates"][0].update(type="NAND")), r"gates\[0\]: .*unknown gate type"),
    ("bad ref", dag_mutated(lambda d: d["gates"][1]["inputs"].__setitem__(0, 5)), r"gates\[1\].inputs\[0\]"),
    ("input range", dag_mutated(lambda d: d["gates"][0]["inputs"].__setitem__(0, ["x", 3])),
     r"gates\[0\].inputs\[0\] reads input 3"),
    ("unknown gate", dag_mutated(lambda d: d["gates"][2]["inputs"].__setitem__(0, "zz")), "not a gate"),
    ("cycle", dag_mutated(lambda d: d["gates"][0]["inputs"].__setitem__(0, "t")), "cycle"),
    ("output", dag_mutated(lambda d: d.update(output="nope")), "output 'nope'"),
    ("output type", dag_mutated(lambda d: d.update(output=3)), "'output' must be a gate name"),
    ("thr without weights", dag_mutated(lambda d: d["gates"][1].pop("weights")),
     r"gates\[1\] is missing the field 'weights'"),
    ("weights on AND", dag_mutated(lambda d: d["gates"][2].update(weights=[1, 1, 1])),
     r"gates\[2\] has unknown field"),
    ("float threshold", dag_mutated(lambda d: d["gates"][1].update(threshold=0.5)),
     r"gates\[1\].threshold must be a JSON integer"),
    ("name", dag_mutated(lambda d: d["gates"][0].update(name="")), r"gates\[0\].name"),
    ("dangling", dag_mutated(lambda d: d.update(output="t")), "dangling"),
]


@pytest.mark.parametrize("name,doc,match", BAD_DAGS, ids=[b[0] for b in BAD_DAGS])
def test_bad_dag_documents(name, doc, match):
    with pytest.raises(InvalidCircuitError, match=match):
        circuit_from_dict(doc)


def test_size_limits():
    doc = circuit_to_dict(parity_depth2(6))
    with pytest.raises(InvalidCircuitError, match="max_gates"):
        circuit_from_dict(doc, max_gates=5)
    with pytest.raises(InvalidCircuitError, match="max_weights"):
        circuit_from_dict(doc, max_weights=20)
    with pytest.raises(InvalidCircuitError, match="between 1 and 4"):
        circuit_from_dict(doc, max_inputs=4)
    hostile = {"format": CIRCUIT_FORMAT, "version": 1, "kind": "layered", "n_inputs": 60000,
               "layers": [{"weights": [[0]] * 5000, "thresholds": [0] * 5000}]}
    with pytest.raises(InvalidCircuitError, match="max_weights"):
        circuit_from_dict(hostile, max_weights=10**6)     # refused before any row is read
    assert circuit_from_dict(doc, max_gates=7, max_weights=42).equals(parity_depth2(6))


@pytest.mark.parametrize("content,match", [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b'{"format": "depthsep.circuit", "version": NaN}', "NaN"),
    (b"[" * 100000 + b"]" * 100000, "JSON"),
    (b'{"format": "depthsep.circuit", "version": 1, "kind": "layered", "n_inputs": 1e400}', "1e400 overflows"),
    (b'{"format": "depthsep.circuit", "version": ' + b"9" * 5000 + b"}", "JSON"),
])
def test_bad_files(tmp_path, content, match):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(InvalidCircuitError, match=match) as info:
        load_circuit(path)
    assert str(path) in str(info.value)


def test_file_limits(tmp_path):
    path = save_circuit(parity_depth2(5), tmp_path / "p.json")
    with pytest.raises(InvalidCircuitError, match="max_bytes"):
        load_circuit(path, max_bytes=10)
    with pytest.raises(InvalidCircuitError, match="max_gates"):
        load_circuit(path, max_gates=2)
    with pytest.raises(FileNotFoundError):
        load_circuit(tmp_path / "missing.json")


# ----------------------------------------------------------------------------- fuzzing
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=6) | st.sampled_from(["x", "THR", "AND", "XOR", "p", "t", "out", "layered", "dag"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)


def mutate(doc, data):
    """Replace, delete or insert at a random place of a JSON document (returns a new document)."""
    doc = copy.deepcopy(doc)
    node = doc
    while True:
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, (dict, list)) and child and data.draw(st.booleans()):
            node = child
            continue
        action = data.draw(st.sampled_from(["replace", "delete", "insert"]))
        if action == "replace":
            node[key] = data.draw(json_values)
        elif action == "delete":
            del node[key]
        elif isinstance(node, dict):
            node[data.draw(st.text(max_size=8))] = data.draw(json_values)
        else:
            node.insert(key, data.draw(json_values))
        break
    return doc


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(["layered", "dag"]), st.integers(1, 4))
def test_fuzzed_documents_raise_our_error(data, kind, n_mutations):
    doc = layered_doc() if kind == "layered" else circuit_to_dict(xor_dag())
    for _ in range(n_mutations):
        doc = mutate(doc, data)
    try:
        c = circuit_from_dict(doc)
    except InvalidCircuitError:
        return
    assert isinstance(c, (ThresholdCircuit, DagCircuit))


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_arbitrary_json_raises_our_error(value):
    with pytest.raises(InvalidCircuitError):
        circuit_from_dict(value)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_arbitrary_bytes_raise_our_error(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("fuzz") / "c.json"
    path.write_bytes(content)
    with pytest.raises(InvalidCircuitError):
        load_circuit(path)
