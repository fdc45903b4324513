"""DAG circuits, their layering, and the networkx views (round trips and bad graphs)."""
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from circuits import (DagCircuit, DagGate, InvalidCircuitError, ThresholdCircuit, ThresholdLayer,
                      count_disagreements, count_ones, evaluate, from_networkx, ip_depth3, parity,
                      parity_depth2, points, to_networkx, truth_table)
from circuits.constructions import ip_depth2, majority_gate
from circuits.graph import GATE_TYPES

from tests import naive_threshold as nt


def random_dag(rng, n_inputs, n_gates, *, types=GATE_TYPES):
    """Random DAG; a final THR gate reads every gate nobody else reads, so nothing dangles."""
    specs, names = [], []
    for g in range(n_gates):
        pool = [("x", i) for i in range(n_inputs)] + names
        typ = str(rng.choice(list(types)))
        k = 1 if typ == "NOT" else int(rng.integers(1, min(len(pool), 5) + 1))
        picks = rng.choice(len(pool), size=k, replace=False)
        ins = [pool[j] for j in picks]
        w = t = None
        if typ == "THR":
            w = [int(v) for v in rng.choice([-3, -2, -1, 1, 2, 3], size=k)]
            t = int(rng.integers(-3, 4))
        name = f"g{g}"
        specs.append((name, typ, ins, w, t))
        names.append(name)
    used = {r for s in specs for r in s[2] if isinstance(r, str)}
    sinks = [s for s in names if s not in used]
    specs.append(("out", "THR", sinks, [1] * len(sinks), int(rng.integers(1, len(sinks) + 1))))
    return specs


def build(n_inputs, specs):
    return DagCircuit(n_inputs, [DagGate(*s) for s in specs], specs[-1][0])


def random_layered(rng, n_inputs, widths, *, zeros=True):
    layers, n_in = [], n_inputs
    for w in list(widths) + [1]:
        W = rng.integers(-3, 4, size=(w, n_in))
        if not zeros:
            W[W == 0] = 1
        layers.append(ThresholdLayer(W, rng.integers(-2, 3, size=w)))
        n_in = w
    return ThresholdCircuit(tuple(layers))


# ----------------------------------------------------------------------------- gates
def test_gate_threshold_forms():
    ins = [("x", 0), ("x", 1), ("x", 2)]
    assert DagGate("a", "AND", ins).threshold_form() == ((1, 1, 1), 3)
    assert DagGate("a", "or", ins).threshold_form() == ((1, 1, 1), 1)
    assert DagGate("a", "NOT", [("x", 0)]).threshold_form() == ((-1,), 0)
    assert DagGate("a", "MAJ", ins).threshold_form() == ((1, 1, 1), 2)
    assert DagGate("a", "MAJ", ins[:2]).threshold_form() == ((1, 1), 1)     # even: tie gives 1
    assert DagGate("a", "THR", ins, [2, -1, 1], 1).threshold_form() == ((2, -1, 1), 1)
    assert DagGate("a", "XOR", ins).threshold_form() is None
    assert DagGate("a", "AND", [["x", 1], "b"]).inputs == (("x", 1), "b")   # JSON-style refs


@pytest.mark.parametrize("kwargs,match", [
    (dict(name="", type="AND", inputs=[("x", 0)]), "non-empty str"),
    (dict(name="g", type="NAND", inputs=[("x", 0)]), "unknown gate type"),
    (dict(name="g", type="AND", inputs=[]), "no inputs"),
    (dict(name="g", type="AND", inputs=[("x", 0), ("x", 0)]), "twice"),
    (dict(name="g", type="NOT", inputs=[("x", 0), ("x", 1)]), "exactly one"),
    (dict(name="g", type="THR", inputs=[("x", 0)]), "needs weights"),
    (dict(name="g", type="THR", inputs=[("x", 0)], weights=[0], threshold=0), "zero weight"),
    (dict(name="g", type="THR", inputs=[("x", 0)], weights=[1.5], threshold=0), "integers"),
    (dict(name="g", type="THR", inputs=[("x", 0)], weights=[1, 2], threshold=0), "one weight per"),
    (dict(name="g", type="THR", inputs=[("x", 0)], weights=[1], threshold=0.5), "threshold"),
    (dict(name="g", type="THR", inputs=[("x", 0)], weights=[2**62], threshold=2**62), "int64"),
    (dict(name="g", type="AND", inputs=[("x", 0)], weights=[1]), "implied"),
    (dict(name="g", type="AND", inputs=[("x", -1)]), "i >= 0"),
    (dict(name="g", type="AND", inputs=[3]), "non-empty str"),
    (dict(name="g", type="AND", inputs=["g"]), "itself"),
    (dict(name="g", type="AND", inputs="x0"), "sequence"),
])
def test_gate_errors(kwargs, match):
    with pytest.raises(InvalidCircuitError, match=match):
        DagGate(**kwargs)


# ----------------------------------------------------------------------------- circuits
def test_dag_validation_errors():
    a = DagGate("a", "AND", [("x", 0), ("x", 1)])
    with pytest.raises(InvalidCircuitError, match="used twice"):
        DagCircuit(2, [a, a])
    with pytest.raises(InvalidCircuitError, match="not a gate"):
        DagCircuit(2, [DagGate("b", "OR", ["zz"])])
    with pytest.raises(InvalidCircuitError, match="n_inputs=2"):
        DagCircuit(2, [DagGate("b", "OR", [("x", 2)])])
    with pytest.raises(InvalidCircuitError, match="cycle"):
        DagCircuit(2, [DagGate("p", "OR", ["q", ("x", 0)]), DagGate("q", "AND", ["p", ("x", 1)])])
    with pytest.raises(InvalidCircuitError, match="dangling"):
        DagCircuit(2, [a, DagGate("b", "OR", [("x", 0)])])
    with pytest.raises(InvalidCircuitError, match="not the name"):
        DagCircuit(2, [a], "nope")
    with pytest.raises(InvalidCircuitError, match="n_inputs"):
        DagCircuit(0, [a])
    with pytest.raises(InvalidCircuitError, match="at least one gate"):
        DagCircuit(2, [])
    with pytest.raises(TypeError, match="DagGate"):
        DagCircuit(2, [("a", "AND", [("x", 0)])])


def test_gates_in_any_order_are_sorted_topologically():
    c = DagCircuit(2, [DagGate("out", "OR", ["a", ("x", 1)]), DagGate("a", "NOT", [("x", 0)])], "out")
    assert [g.name for g in c.gates] == ["a", "out"]
    assert c.evaluate(points(2)).tolist() == [1, 0, 1, 1]


def test_dag_is_immutable():
    c = DagCircuit(1, [DagGate("a", "NOT", [("x", 0)])])
    with pytest.raises(AttributeError):
        c.output = "b"
    with pytest.raises(AttributeError):
        c.gates[0].type = "AND"


@pytest.mark.parametrize("seed", range(12))
def test_random_dags_against_naive_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    specs = random_dag(rng, n, int(rng.integers(1, 9)))
    c = build(n, specs)
    expected = nt.dag_table(n, specs, "out")
    assert c.evaluate(points(n)).tolist() == expected
    layered = c.to_threshold_circuit()
    assert nt.layered_table(layered) == expected
    assert truth_table(c).tolist() == expected                         # simulate accepts a DAG
    assert evaluate(c, points(n)).tolist() == expected
    assert count_ones(c) == sum(expected)
    assert count_disagreements(c, np.array(expected, dtype=np.uint8)).count == 0
    assert layered.depth == c.threshold_form().depth
    assert c.size == len(specs) - 1 and c.n_wires == sum(len(s[2]) for s in specs)


@pytest.mark.parametrize("k", range(1, 8))
def test_xor_expansion(k):
    c = DagCircuit(k, [DagGate("p", "XOR", [("x", i) for i in range(k)])])
    tf = c.threshold_form()
    assert tf.n_gates == k // 2 + 1 and all(g.type == "THR" for g in tf.gates)
    assert c.evaluate(points(k)).tolist() == parity(k).tolist()
    assert truth_table(c).tolist() == parity(k).tolist()
    assert c.depth == 1 and tf.depth == (2 if k >= 2 else 1)


def test_xor_helper_names_avoid_collisions():
    g = [DagGate("p#ge2", "AND", [("x", 0), ("x", 1)]),
         DagGate("p", "XOR", ["p#ge2", ("x", 2), ("x", 3)])]
    c = DagCircuit(4, g)
    names = [x.name for x in c.threshold_form().gates]
    assert len(set(names)) == len(names) and "p##ge2" in names
    assert c.evaluate(points(4)).tolist() == nt.dag_table(
        4, [("p#ge2", "AND", [("x", 0), ("x", 1)], None, None),
            ("p", "XOR", ["p#ge2", ("x", 2), ("x", 3)], None, None)], "p")


def test_skip_wires_become_copy_gates():
    # out reads x0 directly (skip over two layers) and a depth-2 chain
    c = DagCircuit(2, [DagGate("a", "AND", [("x", 0), ("x", 1)]), DagGate("b", "NOT", ["a"]),
                       DagGate("out", "OR", ["b", ("x", 0)])])
    L = c.to_threshold_circuit()
    assert [layer.n_gates for layer in L.layers] == [2, 2, 1]      # x0 copied in layers 1 and 2
    assert L.layers[0].weights.tolist() == [[1, 1], [1, 0]]
    assert L.layers[1].weights.tolist() == [[-1, 0], [0, 1]]
    assert nt.layered_table(L) == c.evaluate(points(2)).tolist()


def test_from_threshold_circuit_is_equivalent():
    rng = np.random.default_rng(3)
    circuits = [parity_depth2(4), ip_depth3(2), ip_depth2(2), majority_gate(5)]
    circuits += [random_layered(rng, int(rng.integers(1, 6)), rng.integers(1, 4, size=rng.integers(0, 3)))
                 for _ in range(15)]
    for c in circuits:
        try:
            d = DagCircuit.from_threshold_circuit(c)
        except InvalidCircuitError as exc:
            assert "constant" in str(exc)
            assert len(set(nt.layered_table(c))) == 1
            continue
        assert d.evaluate(points(c.n_inputs)).tolist() == nt.layered_table(c)
        assert all(g.type == "THR" for g in d.gates)
    with pytest.raises(TypeError):
        DagCircuit.from_threshold_circuit("circuit")


# ----------------------------------------------------------------------------- networkx views
def check_view(c):
    G = to_networkx(c)
    assert G.number_of_edges() == c.n_wires
    assert nx.dag_longest_path_length(G, weight=None) == c.depth      # weight=None: count edges
    assert from_networkx(G).equals(c)
    assert all(isinstance(d["weight"], int) for _, _, d in G.edges(data=True))
    return G


def test_layered_views_round_trip():
    for c in (parity_depth2(5), ip_depth3(3), ip_depth2(2), majority_gate(4)):
        G = check_view(c)
        assert G.graph["kind"] == "layered"
        assert sum(1 for _, d in G.nodes(data=True) if d.get("output")) == 1


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.lists(st.integers(1, 4), max_size=3))
def test_random_layered_round_trip(seed, n, widths):
    rng = np.random.default_rng(seed)
    c = random_layered(rng, n, widths, zeros=True)
    G = to_networkx(c)
    assert G.number_of_edges() == c.n_wires
    assert from_networkx(G).equals(c)                        # zero rows/columns survive
    c = random_layered(rng, n, widths, zeros=False)
    check_view(c)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 8))
def test_random_dag_round_trip(seed, n, n_gates):
    c = build(n, random_dag(np.random.default_rng(seed), n, n_gates))
    G = check_view(c)
    assert G.graph["kind"] == "dag" and G.graph["output"] == "out"
    G.graph.pop("kind")
    G.graph.pop("output")
    assert from_networkx(G).equals(c)                        # inferred kind and unique sink


def test_view_of_unknown_object():
    with pytest.raises(TypeError):
        to_networkx("not a circuit")
    with pytest.raises(TypeError):
        from_networkx(nx.MultiDiGraph())


def dag_graph():
    c = DagCircuit(2, [DagGate("a", "AND", [("x", 0), ("x", 1)]), DagGate("out", "NOT", ["a"])])
    return to_networkx(c)


def test_from_networkx_errors():
    G = dag_graph()
    G.add_edge("out", "a", weight=1)
    with pytest.raises(InvalidCircuitError, match="cycle"):
        from_networkx(G)

    G = dag_graph()
    G.add_node("b", type="NOT", threshold=0)
    G.add_edge(("x", 1), "b", weight=-1)
    G.add_edge("b", ("x", 0), weight=1)
    with pytest.raises(InvalidCircuitError, match=r"input node \('x', 0\) has an incoming edge"):
        from_networkx(G)

    G = dag_graph()
    G.add_edge(("x", 5), "a", weight=1)
    with pytest.raises(InvalidCircuitError, match="dangling input"):
        from_networkx(G)

    G = dag_graph()
    G.add_node("lonely", type="OR")
    G.add_edge("lonely", "out", weight=1)
    G.nodes["out"]["type"] = "OR"
    G.nodes["out"]["threshold"] = 1
    G.edges["a", "out"]["weight"] = 1
    with pytest.raises(InvalidCircuitError, match="'lonely' has no inputs"):
        from_networkx(G)

    G = dag_graph()
    G.nodes["a"]["type"] = "NAND"
    with pytest.raises(InvalidCircuitError, match="node 'a': unknown gate type"):
        from_networkx(G)

    G = dag_graph()
    del G.edges[("x", 0), "a"]["weight"]
    with pytest.raises(InvalidCircuitError, match="no 'weight'"):
        from_networkx(G)

    G = dag_graph()
    G.edges[("x", 0), "a"]["weight"] = 2
    with pytest.raises(InvalidCircuitError, match="implies weights"):
        from_networkx(G)

    G = dag_graph()
    G.nodes["a"]["type"] = "THR"
    G.nodes["a"]["threshold"] = 1.5
    with pytest.raises(InvalidCircuitError, match="threshold of node 'a' must be an integer"):
        from_networkx(G)

    G = dag_graph()
    G.add_node("extra", type="OR")
    G.add_edge(("x", 0), "extra", weight=1)
    G.graph.pop("output")
    with pytest.raises(InvalidCircuitError, match="dangling"):
        from_networkx(G)

    G = dag_graph()
    G = nx.relabel_nodes(G, {"a": 7})
    with pytest.raises(InvalidCircuitError, match="node 7"):
        from_networkx(G)

    with pytest.raises(InvalidCircuitError, match="empty"):
        from_networkx(nx.DiGraph())


def test_from_networkx_layered_errors():
    G = to_networkx(parity_depth2(3))
    G.add_edge(("x", 0), (2, 0), weight=1)
    with pytest.raises(InvalidCircuitError, match="skip wires"):
        from_networkx(G)

    G = to_networkx(parity_depth2(3))
    G.remove_node((1, 1))
    with pytest.raises(InvalidCircuitError, match=r"\(1, 1\) is missing"):
        from_networkx(G)

    G = to_networkx(parity_depth2(3))
    G.add_node((2, 1), type="THR", threshold=0)
    with pytest.raises(InvalidCircuitError, match="exactly one gate"):
        from_networkx(G)

    G = to_networkx(parity_depth2(3))
    del G.nodes[(1, 0)]["threshold"]
    with pytest.raises(InvalidCircuitError, match="no 'threshold'"):
        from_networkx(G)

    G = to_networkx(parity_depth2(3))
    G.nodes[(1, 0)]["type"] = "AND"
    with pytest.raises(InvalidCircuitError, match="THR gates only"):
        from_networkx(G)

    G = to_networkx(parity_depth2(3))
    G.graph["kind"] = "tree"
    with pytest.raises(InvalidCircuitError, match="kind"):
        from_networkx(G)
