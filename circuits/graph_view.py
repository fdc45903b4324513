"""networkx views of every circuit (layered :class:`~circuits.threshold.ThresholdCircuit` and
:class:`~circuits.graph.DagCircuit`), and their inverse.

The graph is only a view (STYLE.md principle 10): arrays and gate tuples are the truth.
:func:`to_networkx` gives a ``networkx.DiGraph`` with input nodes ``("x", i)``, gate nodes
``(layer, j)`` (layer 1 reads the inputs) for a :class:`ThresholdCircuit` or the gate names for
a :class:`DagCircuit`, edge attribute ``"weight"`` and node attributes ``"type"``,
``"threshold"`` and ``"output"``.  **Only nonzero weights become edges**, so
``G.number_of_edges() == circuit.n_wires``; :func:`from_networkx` inverts the view.
networkx's path functions read the ``"weight"`` attribute by default, so the depth is
``nx.dag_longest_path_length(G, weight=None)`` (unweighted: one edge per gate on the path).
"""

from __future__ import annotations


from circuits.graph import GATE_TYPES, DagCircuit, DagGate, _is_int
from circuits.threshold import ThresholdCircuit, ThresholdLayer
from circuits.utils.errors import InvalidCircuitError

__all__ = ["to_networkx", "from_networkx"]


def to_networkx(circuit):
    """The circuit as a ``networkx.DiGraph`` (a view; see the module docstring).

    Input nodes ``("x", i)`` (``type="input"``); gate nodes ``(l, j)`` for a ThresholdCircuit
    (layer l = 1..depth) or gate names for a DagCircuit, with ``type``, ``threshold`` (None for
    XOR) and ``output``; one edge per *nonzero* weight, attribute ``weight`` (a Python int).
    ``G.graph`` holds ``kind`` ("layered" / "dag"), ``n_inputs`` (and ``output`` for a DAG).

    Parameters
    ----------
    circuit : DagCircuit or ThresholdCircuit
        The circuit to view as a graph.

    Examples
    --------
    >>> import networkx as nx
    >>> c = ThresholdCircuit.depth2([[1, 1], [1, 1]], [1, 2], [1, -1], 1)     # XOR
    >>> G = to_networkx(c)
    >>> G.number_of_edges() == c.n_wires, nx.dag_longest_path_length(G, weight=None) == c.depth
    (True, True)
    >>> G.edges[(1, 1), (2, 0)]["weight"], G.nodes[(1, 1)]["threshold"]
    (-1, 2)
    >>> from_networkx(G).equals(c)
    True
    """
    import networkx as nx

    if isinstance(circuit, ThresholdCircuit):
        G = nx.DiGraph(kind="layered", n_inputs=circuit.n_inputs)
        for i in range(circuit.n_inputs):
            G.add_node(("x", i), type="input", layer=0)
        prev = [("x", i) for i in range(circuit.n_inputs)]
        for lev, layer in enumerate(circuit.layers, start=1):
            here = [(lev, j) for j in range(layer.n_gates)]
            last = lev == circuit.depth
            for node, row, t in zip(here, layer.weights.tolist(), layer.thresholds.tolist()):
                G.add_node(node, type="THR", threshold=int(t), layer=lev, output=last)
                for src, w in zip(prev, row):
                    if w:
                        G.add_edge(src, node, weight=int(w))
            prev = here
        return G
    if isinstance(circuit, DagCircuit):
        G = nx.DiGraph(kind="dag", n_inputs=circuit.n_inputs, output=circuit.output)
        for i in range(circuit.n_inputs):
            G.add_node(("x", i), type="input", layer=0)
        for g in circuit.gates:
            form = g.threshold_form()
            G.add_node(g.name, type=g.type, threshold=None if form is None else form[1],
                       layer=circuit._levels[g.name], output=g.name == circuit.output)
            weights = (1,) * len(g.inputs) if form is None else form[0]
            for r, w in zip(g.inputs, weights):
                G.add_edge(r, g.name, weight=int(w))
        return G
    raise TypeError(f"circuit must be a ThresholdCircuit or a DagCircuit, got {type(circuit).__name__}")


def _attr_int(value, what: str):
    if not _is_int(value):
        raise InvalidCircuitError(f"{what} must be an integer, got {value!r}")
    return int(value)


def from_networkx(G):
    """Rebuild a circuit from a graph in the format of :func:`to_networkx`.

    ``G.graph["kind"]`` selects the result ("layered" -> ThresholdCircuit, "dag" ->
    DagCircuit); without it, a graph whose gate nodes are all ``(layer, j)`` int pairs is
    layered.  In a layered graph a missing edge is a zero weight, so a gate node without
    incoming edges is a constant gate; in a DAG every gate needs an input.

    Parameters
    ----------
    G : networkx.DiGraph
        A graph with nodes ("x", i) for inputs and gate names, in the format of to_networkx.

    Raises
    ------
    InvalidCircuitError
        Naming the node or edge: a cycle, a node without inputs (DAG), an unknown gate type,
        a dangling input (an ``("x", i)`` node with incoming edges, ``i`` not a non-negative
        int or ``i >= n_inputs``), a gate whose output is never used (several sinks), edges
        that skip layers in a layered graph, missing or non-integer weights/thresholds, or
        implied weights (AND, OR, NOT, MAJ, XOR) that do not match the type.
    TypeError
        If ``G`` is not a ``networkx.DiGraph`` (multigraphs are refused).
    """
    import networkx as nx

    if not isinstance(G, nx.DiGraph) or G.is_multigraph():
        raise TypeError(f"G must be a networkx.DiGraph, got {type(G).__name__}")
    if G.number_of_nodes() == 0:
        raise InvalidCircuitError("the graph is empty; a circuit needs inputs and gates")
    try:
        cycle = nx.find_cycle(G)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle:
        path = " -> ".join(repr(u) for u, _ in cycle) + f" -> {cycle[0][0]!r}"
        raise InvalidCircuitError(f"the graph has a cycle through node {cycle[0][0]!r}: {path}; "
                                  f"circuits are acyclic")
    inputs, gates = [], []
    for v, data in G.nodes(data=True):
        inp = v if isinstance(v, tuple) and len(v) == 2 and v[0] == "x" else None
        if inp is None and data.get("type") == "input":
            raise InvalidCircuitError(f"node {v!r} has type 'input' but input nodes must be ('x', i)")
        if inp is None:
            gates.append(v)
            continue
        if not _is_int(v[1]) or v[1] < 0:
            raise InvalidCircuitError(f"input node {v!r}: the index must be an int >= 0")
        if G.in_degree(v):
            src = next(iter(G.predecessors(v)))
            raise InvalidCircuitError(f"input node {v!r} has an incoming edge from {src!r}; inputs "
                                      f"cannot read anything (dangling input)")
        inputs.append(v)
    if not gates:
        raise InvalidCircuitError("the graph has no gate nodes")
    max_in = max((v[1] for v in inputs), default=-1)
    n_inputs = G.graph.get("n_inputs", max_in + 1)
    n_inputs = _attr_int(n_inputs, "G.graph['n_inputs']")
    if n_inputs < 1:
        raise InvalidCircuitError(f"G.graph['n_inputs'] must be >= 1, got {n_inputs}")
    if max_in >= n_inputs:
        raise InvalidCircuitError(f"input node ('x', {max_in}) is beyond n_inputs={n_inputs} "
                                  f"(dangling input)")
    for v in gates:
        t = G.nodes[v].get("type", "THR")
        if not isinstance(t, str) or t.upper() not in GATE_TYPES:
            raise InvalidCircuitError(f"node {v!r}: unknown gate type {t!r}; choose one of "
                                      f"{list(GATE_TYPES)}")
    kind = G.graph.get("kind")
    if kind is None:
        layered = all(isinstance(v, tuple) and len(v) == 2 and all(_is_int(a) for a in v)
                      for v in gates)
        kind = "layered" if layered else "dag"
    if kind == "layered":
        return _layered_from_graph(G, gates, n_inputs)
    if kind == "dag":
        return _dag_from_graph(G, gates, n_inputs)
    raise InvalidCircuitError(f"G.graph['kind'] must be 'layered' or 'dag', got {kind!r}")


def _edge_weight(G, u, v) -> int:
    if "weight" not in G.edges[u, v]:
        raise InvalidCircuitError(f"edge {u!r} -> {v!r} has no 'weight' attribute")
    return _attr_int(G.edges[u, v]["weight"], f"weight of edge {u!r} -> {v!r}")


def _layered_from_graph(G, gates, n_inputs: int) -> ThresholdCircuit:
    widths = {}
    for v in gates:
        if not (isinstance(v, tuple) and len(v) == 2 and all(_is_int(a) for a in v)) or v[0] < 1 or v[1] < 0:
            raise InvalidCircuitError(f"node {v!r}: gates of a layered graph are (layer, j) with "
                                      f"layer >= 1 and j >= 0")
        if G.nodes[v].get("type", "THR").upper() != "THR":
            raise InvalidCircuitError(f"node {v!r}: layered graphs hold THR gates only, got type "
                                      f"{G.nodes[v]['type']!r}; use a DAG graph")
        widths.setdefault(int(v[0]), set()).add(int(v[1]))
    depth = max(widths)
    for lev in range(1, depth + 1):
        js = widths.get(lev, set())
        if not js:
            raise InvalidCircuitError(f"layer {lev} has no gates (layers must be 1..{depth})")
        missing = sorted(set(range(max(js) + 1)) - js)
        if missing:
            raise InvalidCircuitError(f"node {(lev, missing[0])!r} is missing; gates of layer {lev} "
                                      f"must be numbered 0..{max(js)}")
    if len(widths[depth]) != 1:
        raise InvalidCircuitError(f"the output layer {depth} must have exactly one gate, got "
                                  f"{len(widths[depth])}")
    layers = []
    for lev in range(1, depth + 1):
        n_in = n_inputs if lev == 1 else len(widths[lev - 1])
        W = [[0] * n_in for _ in range(len(widths[lev]))]
        T = []
        for j in range(len(widths[lev])):
            v = (lev, j)
            if "threshold" not in G.nodes[v]:
                raise InvalidCircuitError(f"node {v!r} has no 'threshold' attribute")
            T.append(_attr_int(G.nodes[v]["threshold"], f"threshold of node {v!r}"))
            for u in G.predecessors(v):
                expected = "an input ('x', i)" if lev == 1 else f"a gate of layer {lev - 1}"
                ok = (isinstance(u, tuple) and len(u) == 2
                      and ((lev == 1 and u[0] == "x") or (lev > 1 and u[0] == lev - 1)))
                if not ok:
                    raise InvalidCircuitError(f"edge {u!r} -> {v!r}: node {v!r} may only read {expected}"
                                              f" in a layered graph (skip wires need a DagCircuit)")
                W[j][int(u[1])] = _edge_weight(G, u, v)
        layers.append(ThresholdLayer(W, T))
    return ThresholdCircuit(tuple(layers))


def _dag_from_graph(G, gates, n_inputs: int) -> DagCircuit:
    out_gates = []
    for v in gates:
        if not isinstance(v, str):
            raise InvalidCircuitError(f"node {v!r}: DagCircuit gate names are str; relabel the graph, "
                                      f"e.g. nx.relabel_nodes(G, str)")
        data = G.nodes[v]
        preds = list(G.predecessors(v))
        if not preds:
            raise InvalidCircuitError(f"node {v!r} has no inputs; every gate reads at least one node")
        kind = data.get("type", "THR").upper()
        weights = [_edge_weight(G, u, v) for u in preds]
        thr = data.get("threshold")
        if kind == "THR":
            if thr is None:
                raise InvalidCircuitError(f"node {v!r}: a THR gate needs a 'threshold' attribute")
            gate = DagGate(v, "THR", preds, weights, _attr_int(thr, f"threshold of node {v!r}"))
        else:
            gate = DagGate(v, kind, preds)
            form = gate.threshold_form()
            want_w, want_t = ((1,) * len(preds), None) if form is None else form
            if tuple(weights) != tuple(want_w) or (thr is not None and thr != want_t):
                raise InvalidCircuitError(
                    f"node {v!r}: type {kind} implies weights {list(want_w)} and threshold "
                    f"{want_t}, the graph has {weights} and {thr}; use type 'THR'")
        out_gates.append(gate)
    output = G.graph.get("output")
    if output is None:
        sinks = [v for v in gates if G.out_degree(v) == 0]
        if len(sinks) != 1:
            raise InvalidCircuitError(f"cannot tell the output: gates {sinks[:5]} have no readers "
                                      f"(dangling); set G.graph['output'] or remove them")
        output = sinks[0]
    return DagCircuit(n_inputs, out_gates, output)
