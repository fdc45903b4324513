"""General DAG threshold circuits and networkx views of every circuit.

:class:`DagCircuit` holds circuits that are not layered: gates may read any earlier gate or
input (skip wires).  Gate types are special threshold gates (gate rule ``w . z >= t`` of
:mod:`circuits.threshold`), with k = number of inputs:

=======  =====================================  ==========================================
type     meaning                                threshold form
=======  =====================================  ==========================================
``AND``  all inputs 1                           weights 1, t = k
``OR``   some input 1                           weights 1, t = 1
``NOT``  negation of its single input           weight -1, t = 0
``MAJ``  at least half of the inputs 1          weights 1, t = ceil(k / 2) (ties give 1,
                                                as MAJ_N of THEORY.md section 1.1)
``THR``  ``[w . z >= t]``, given integer w, t   itself (weights must be nonzero)
``XOR``  odd number of inputs 1                 *expanded*: floor(k/2) helper gates
                                                ``h_j = [sum z >= 2j]`` and
                                                ``[sum z - 2 sum_j h_j >= 1]`` (depth 2)
=======  =====================================  ==========================================

XOR is not a threshold function, so it is kept as a gate type of the DAG (it shows up as
such in the networkx view and in JSON) and expanded into threshold gates by
:meth:`DagCircuit.threshold_form` / :meth:`DagCircuit.to_threshold_circuit`; the expansion
uses skip wires so it costs floor(k/2) + 1 gates, and it is verified exhaustively in the tests.

:meth:`DagCircuit.to_threshold_circuit` layers the DAG by longest path from the inputs and
inserts identity gates ``[z >= 1]`` for wires that skip layers, so every routine of
:mod:`circuits.simulate` (``truth_table``, ``count_ones``, ``count_disagreements``) accepts a
``DagCircuit`` directly.

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

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from circuits.utils.errors import InvalidCircuitError
from circuits.hypercube import as_bit_rows
from circuits.threshold import INT64_MAX, ThresholdCircuit, ThresholdLayer

__all__ = ["GATE_TYPES", "DagGate", "DagCircuit", "to_networkx", "from_networkx"]

#: The gate types of a :class:`DagCircuit`.
GATE_TYPES = ("AND", "OR", "NOT", "MAJ", "THR", "XOR")


def _is_int(v) -> bool:
    return isinstance(v, Integral) and not isinstance(v, (bool, np.bool_))


def _input_ref(ref):
    """``("x", i)`` (or a list ``["x", i]``) -> ``("x", i)``; anything else -> None."""
    if isinstance(ref, (tuple, list)) and len(ref) == 2 and ref[0] == "x":
        return ("x", ref[1])
    return None


def _normalise_ref(ref, gate: str):
    inp = _input_ref(ref)
    if inp is not None:
        if not _is_int(inp[1]) or int(inp[1]) < 0:
            raise InvalidCircuitError(f"gate {gate!r}: input reference {ref!r} must be ('x', i) with "
                                      f"an int i >= 0")
        return ("x", int(inp[1]))
    if isinstance(ref, str) and ref:
        return ref
    raise InvalidCircuitError(f"gate {gate!r}: input {ref!r} must be ('x', i) for circuit input i or "
                              f"the name (a non-empty str) of another gate")


@dataclass(frozen=True, eq=False)
class DagGate:
    """One gate of a :class:`DagCircuit`.

    Parameters
    ----------
    name : str
        Unique, non-empty.
    type : {"AND", "OR", "NOT", "MAJ", "THR", "XOR"}
        Case-insensitive.
    inputs : sequence
        Each ``("x", i)`` (circuit input i) or the name of another gate; no repeats.
    weights : sequence of int, optional
        Only for ``THR`` (one nonzero integer per input); implied for the other types.
    threshold : int, optional
        Only for ``THR``.

    Examples
    --------
    >>> g = DagGate("g", "maj", [("x", 0), ("x", 1), "h"])
    >>> g.type, g.threshold_form()
    ('MAJ', ((1, 1, 1), 2))
    """

    name: str
    type: str
    inputs: tuple
    weights: "tuple | None" = None
    threshold: "int | None" = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise InvalidCircuitError(f"gate name must be a non-empty str, got {self.name!r}")
        name = self.name
        kind = self.type.upper() if isinstance(self.type, str) else self.type
        if kind not in GATE_TYPES:
            raise InvalidCircuitError(f"gate {name!r}: unknown gate type {self.type!r}; choose one of "
                                      f"{list(GATE_TYPES)}")
        if isinstance(self.inputs, (str, bytes)) or not hasattr(self.inputs, "__iter__"):
            raise InvalidCircuitError(f"gate {name!r}: inputs must be a sequence of references, got "
                                      f"{self.inputs!r}")
        inputs = tuple(_normalise_ref(r, name) for r in self.inputs)
        if not inputs:
            raise InvalidCircuitError(f"gate {name!r} has no inputs; every gate reads at least one "
                                      f"input or gate")
        if len(set(inputs)) != len(inputs):
            dup = next(r for r in inputs if inputs.count(r) > 1)
            raise InvalidCircuitError(f"gate {name!r} reads {dup!r} twice; use a THR gate with a "
                                      f"larger weight instead")
        if name in inputs:
            raise InvalidCircuitError(f"gate {name!r} reads itself (a cycle)")
        if kind == "NOT" and len(inputs) != 1:
            raise InvalidCircuitError(f"gate {name!r}: NOT takes exactly one input, got {len(inputs)}")
        weights, threshold = self.weights, self.threshold
        if kind == "THR":
            if weights is None or threshold is None:
                raise InvalidCircuitError(f"gate {name!r}: a THR gate needs weights and threshold")
            if isinstance(weights, (str, bytes)) or not hasattr(weights, "__iter__"):
                raise InvalidCircuitError(f"gate {name!r}: weights must be a sequence of ints")
            weights = tuple(weights)
            if len(weights) != len(inputs):
                raise InvalidCircuitError(f"gate {name!r}: {len(weights)} weights for {len(inputs)} "
                                          f"inputs; give one weight per input")
            for w in weights:
                if not _is_int(w):
                    raise InvalidCircuitError(f"gate {name!r}: weights must be integers, found {w!r}")
                if int(w) == 0:
                    raise InvalidCircuitError(f"gate {name!r}: zero weight; drop that input instead "
                                              f"(a DAG stores only wires that carry a signal)")
            if not _is_int(threshold):
                raise InvalidCircuitError(f"gate {name!r}: threshold must be an integer, got "
                                          f"{threshold!r}")
            weights = tuple(int(w) for w in weights)
            threshold = int(threshold)
            bound = sum(abs(w) for w in weights) + abs(threshold)
            if bound > INT64_MAX:
                raise InvalidCircuitError(f"gate {name!r}: pre-activation bound {bound} exceeds int64; "
                                          f"scale the weights down")
        elif weights is not None or threshold is not None:
            raise InvalidCircuitError(f"gate {name!r}: weights/threshold are implied by type {kind}; "
                                      f"use type 'THR' for custom weights")
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "threshold", threshold)

    def threshold_form(self):
        """``(weights, threshold)`` of this gate as one threshold gate, or None for XOR."""
        k = len(self.inputs)
        if self.type == "THR":
            return self.weights, self.threshold
        if self.type == "AND":
            return (1,) * k, k
        if self.type == "OR":
            return (1,) * k, 1
        if self.type == "NOT":
            return (-1,), 0
        if self.type == "MAJ":
            return (1,) * k, (k + 1) // 2
        return None

    def to_dict(self) -> dict:
        d = {"name": self.name, "type": self.type,
             "inputs": [list(r) if isinstance(r, tuple) else r for r in self.inputs]}
        if self.type == "THR":
            d["weights"] = list(self.weights)
            d["threshold"] = self.threshold
        return d

    def equals(self, other) -> bool:
        return (isinstance(other, DagGate) and self.name == other.name and self.type == other.type
                and self.inputs == other.inputs and self.weights == other.weights
                and self.threshold == other.threshold)


@dataclass(frozen=True, eq=False)
class DagCircuit:
    """An immutable, validated circuit on a DAG (skip wires allowed).

    Parameters
    ----------
    n_inputs : int
        N >= 1 circuit inputs, referenced as ``("x", i)``.
    gates : sequence of DagGate
        In any order; stored in a topological order (stable with respect to the given one).
    output : str, optional
        Name of the output gate; default the last gate given.  Every gate must feed the output.

    Examples
    --------
    >>> c = DagCircuit(3, [DagGate("a", "AND", [("x", 0), ("x", 1)]),
    ...                    DagGate("out", "OR", ["a", ("x", 2)])])          # skip wire from x2
    >>> c.depth, c.size, c.n_wires
    (2, 1, 4)
    >>> c.evaluate([[1, 1, 0], [1, 0, 0], [0, 0, 1]]).tolist()
    [1, 0, 1]
    >>> layered = c.to_threshold_circuit()                               # x2 copied to layer 1
    >>> [layer.n_gates for layer in layered.layers]
    [2, 1]
    """

    n_inputs: int
    gates: tuple
    output: "str | None" = None

    def __post_init__(self):
        import networkx as nx

        if not _is_int(self.n_inputs) or int(self.n_inputs) < 1:
            raise InvalidCircuitError(f"n_inputs must be an int >= 1, got {self.n_inputs!r}")
        n = int(self.n_inputs)
        if isinstance(self.gates, (str, bytes)) or not hasattr(self.gates, "__iter__"):
            raise TypeError(f"gates must be a sequence of DagGate, got {type(self.gates).__name__}")
        gates = tuple(self.gates)
        if not gates:
            raise InvalidCircuitError("gates: a circuit needs at least one gate")
        for i, g in enumerate(gates):
            if not isinstance(g, DagGate):
                raise TypeError(f"gates[{i}] must be a DagGate, got {type(g).__name__}")
        order = {}
        for i, g in enumerate(gates):
            if g.name in order:
                raise InvalidCircuitError(f"gate name {g.name!r} is used twice; names must be unique")
            order[g.name] = i
        output = gates[-1].name if self.output is None else self.output
        if not isinstance(output, str) or output not in order:
            raise InvalidCircuitError(f"output {output!r} is not the name of a gate; choose one of "
                                      f"{sorted(order)[:10]}")
        G = nx.DiGraph()
        G.add_nodes_from(order)
        for g in gates:
            for r in g.inputs:
                if isinstance(r, tuple):
                    if r[1] >= n:
                        raise InvalidCircuitError(
                            f"gate {g.name!r} reads input {r!r} but the circuit has n_inputs={n} "
                            f"(inputs ('x', 0) .. ('x', {n - 1}))")
                else:
                    if r not in order:
                        raise InvalidCircuitError(f"gate {g.name!r} reads {r!r}, which is not a gate")
                    G.add_edge(r, g.name)
        try:
            cycle = nx.find_cycle(G)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            raise InvalidCircuitError(f"the gates form a cycle: {' -> '.join(repr(u) for u, _ in cycle)}"
                                      f" -> {cycle[0][0]!r}; a circuit must be acyclic")
        feeding = nx.ancestors(G, output) | {output}
        dangling = [name for name in order if name not in feeding]
        if dangling:
            raise InvalidCircuitError(f"gate(s) {dangling[:5]} never reach the output {output!r} "
                                      f"(dangling); remove them or choose another output")
        topo = list(nx.lexicographical_topological_sort(G, key=lambda v: order[v]))
        object.__setattr__(self, "n_inputs", n)
        object.__setattr__(self, "gates", tuple(gates[order[v]] for v in topo))
        object.__setattr__(self, "output", output)
        levels = {}
        for g in self.gates:
            levels[g.name] = 1 + max(levels.get(r, 0) if isinstance(r, str) else 0 for r in g.inputs)
        object.__setattr__(self, "_levels", levels)

    # ------------------------------------------------------------------ properties
    @property
    def depth(self) -> int:
        """Gates on the longest input-to-output path (an XOR gate counts once)."""
        return self._levels[self.output]

    @property
    def size(self) -> int:
        """Hidden (non-output) gates, as :attr:`ThresholdCircuit.size`."""
        return len(self.gates) - 1

    @property
    def n_gates(self) -> int:
        return len(self.gates)

    @property
    def n_wires(self) -> int:
        """Number of wires (each is a nonzero weight)."""
        return sum(len(g.inputs) for g in self.gates)

    def gate(self, name: str) -> DagGate:
        for g in self.gates:
            if g.name == name:
                return g
        raise KeyError(name)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, bits) -> np.ndarray:
        """Outputs (uint8) on a batch of 0/1 rows of shape (n_points, N), gate by gate (exact)."""
        z = as_bit_rows(bits, self.n_inputs).astype(np.int64)
        vals = {}
        for g in self.gates:
            cols = [z[:, r[1]] if isinstance(r, tuple) else vals[r] for r in g.inputs]
            form = g.threshold_form()
            if form is None:                                   # XOR
                vals[g.name] = (np.sum(cols, axis=0) & 1).astype(np.int64)
            else:
                w, t = form
                acc = np.zeros(z.shape[0], dtype=np.int64)
                for wi, c in zip(w, cols):
                    acc += wi * c
                vals[g.name] = (acc >= t).astype(np.int64)
        return vals[self.output].astype(np.uint8)

    def truth_table(self, *, allow_large: bool = False) -> np.ndarray:
        """uint8 table on all 2^N points (through :meth:`to_threshold_circuit` and the kernels)."""
        from circuits.simulate import truth_table

        return truth_table(self.to_threshold_circuit(), allow_large=allow_large)

    # ------------------------------------------------------------------ conversions
    def threshold_form(self) -> "DagCircuit":
        """The same circuit with every gate of type THR (XOR expanded, see the module notes).

        Helper gates of an XOR gate ``p`` are named ``"p#ge2"``, ``"p#ge4"``, ... (``#`` is
        repeated if such a name is taken).
        """
        names = {g.name for g in self.gates}
        out = []
        for g in self.gates:
            form = g.threshold_form()
            if form is not None:
                out.append(DagGate(g.name, "THR", g.inputs, form[0], form[1]))
                continue
            k = len(g.inputs)
            sep = "#"
            while any(f"{g.name}{sep}ge{2 * j}" in names for j in range(1, k // 2 + 1)):
                sep += "#"
            helpers = [f"{g.name}{sep}ge{2 * j}" for j in range(1, k // 2 + 1)]
            for j, h in enumerate(helpers, start=1):
                out.append(DagGate(h, "THR", g.inputs, (1,) * k, 2 * j))
                names.add(h)
            out.append(DagGate(g.name, "THR", g.inputs + tuple(helpers),
                               (1,) * k + (-2,) * len(helpers), 1))
        return DagCircuit(self.n_inputs, out, self.output)

    def to_threshold_circuit(self) -> ThresholdCircuit:
        """A layered :class:`ThresholdCircuit` computing the same function.

        Gates go to layer = longest path from the inputs (XOR expanded first); a wire from a
        node at layer a to a gate at layer b > a + 1 is carried by identity gates ``[z >= 1]``
        in layers a + 1 .. b - 1 (one chain per source node, shared by all its readers).
        Within a layer, original gates come first (in topological order), then copies.
        """
        tf = self.threshold_form()
        level = dict(tf._levels)
        for i in range(self.n_inputs):
            level[("x", i)] = 0
        last_use = {}
        for g in tf.gates:
            for r in g.inputs:
                last_use[r] = max(last_use.get(r, 0), level[g.name])
        depth = level[tf.output]
        cols = [{("x", i): i for i in range(self.n_inputs)}]
        rows = []
        for lev in range(1, depth + 1):
            members = [("g", g) for g in tf.gates if level[g.name] == lev]
            sources = [("x", i) for i in range(self.n_inputs)] + [g.name for g in tf.gates]
            members += [("copy", v) for v in sources if v in last_use and level[v] < lev < last_use[v]]
            prev = cols[-1]
            W = np.zeros((len(members), len(prev)), dtype=np.int64)
            T = np.zeros(len(members), dtype=np.int64)
            here = {}
            for j, (kind, m) in enumerate(members):
                if kind == "g":
                    for r, w in zip(m.inputs, m.weights):
                        W[j, prev[r]] = w
                    T[j] = m.threshold
                    here[m.name] = j
                else:
                    W[j, prev[m]] = 1
                    T[j] = 1
                    here[m] = j
            cols.append(here)
            rows.append(ThresholdLayer(W, T))
        return ThresholdCircuit(tuple(rows))

    @classmethod
    def from_threshold_circuit(cls, circuit: ThresholdCircuit, *, prefix: str = "g") -> "DagCircuit":
        """The DAG of a layered circuit: gate ``(l, j)`` becomes THR gate ``f"{prefix}{l}_{j}"``.

        Zero weights are dropped; gates with no nonzero weight are constant and are folded
        into the thresholds of their readers; gates that no longer reach the output are
        removed.  The result computes the same function (checked in the tests).

        Raises
        ------
        InvalidCircuitError
            If the output itself is constant (a DAG gate needs at least one input).
        """
        if not isinstance(circuit, ThresholdCircuit):
            raise TypeError(f"circuit must be a ThresholdCircuit, got {type(circuit).__name__}")
        prev = [("x", i) for i in range(circuit.n_inputs)]     # ref or ("const", value)
        gates = []
        for lev, layer in enumerate(circuit.layers, start=1):
            here = []
            for j, (row, t) in enumerate(zip(layer.weights.tolist(), layer.thresholds.tolist())):
                refs, ws = [], []
                for src, w in zip(prev, row):
                    if w == 0:
                        continue
                    if isinstance(src, tuple) and src[0] == "const":
                        t -= w * src[1]
                    else:
                        refs.append(src)
                        ws.append(w)
                if not refs:
                    here.append(("const", int(0 >= t)))
                    continue
                name = f"{prefix}{lev}_{j}"
                gates.append(DagGate(name, "THR", refs, ws, t))
                here.append(name)
            prev = here
        out = prev[0]
        if isinstance(out, tuple):
            raise InvalidCircuitError(f"the circuit is constant (output {out[1]}); a DagCircuit needs "
                                      f"an output gate with at least one input")
        import networkx as nx

        G = nx.DiGraph()
        for g in gates:
            G.add_node(g.name)
            G.add_edges_from((r, g.name) for r in g.inputs if isinstance(r, str))
        keep = nx.ancestors(G, out) | {out}
        return cls(circuit.n_inputs, [g for g in gates if g.name in keep], out)

    def to_dict(self) -> dict:
        return {"n_inputs": self.n_inputs, "output": self.output,
                "gates": [g.to_dict() for g in self.gates]}

    def equals(self, other) -> bool:
        """Same inputs, output and gates (compared by name, independent of gate order)."""
        if not isinstance(other, DagCircuit) or other.n_inputs != self.n_inputs:
            return False
        if other.output != self.output or len(other.gates) != len(self.gates):
            return False
        mine = {g.name: g for g in self.gates}
        return all(g.name in mine and mine[g.name].equals(g) for g in other.gates)

    def __repr__(self) -> str:
        types = {}
        for g in self.gates:
            types[g.type] = types.get(g.type, 0) + 1
        return (f"DagCircuit(n_inputs={self.n_inputs}, gates={self.n_gates}, depth={self.depth}, "
                f"output={self.output!r}, types={types})")


# ---------------------------------------------------------------------- networkx views
def to_networkx(circuit):
    """The circuit as a ``networkx.DiGraph`` (a view; see the module docstring).

    Input nodes ``("x", i)`` (``type="input"``); gate nodes ``(l, j)`` for a ThresholdCircuit
    (layer l = 1..depth) or gate names for a DagCircuit, with ``type``, ``threshold`` (None for
    XOR) and ``output``; one edge per *nonzero* weight, attribute ``weight`` (a Python int).
    ``G.graph`` holds ``kind`` ("layered" / "dag"), ``n_inputs`` (and ``output`` for a DAG).

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
