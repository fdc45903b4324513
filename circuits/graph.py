"""General DAG threshold circuits: gates may read any earlier gate or input.

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

One gate (:class:`~circuits.graph_gate.DagGate`, re-exported here) is :mod:`circuits.graph_gate`;
the networkx view of every circuit is :mod:`circuits.graph_view`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.utils.errors import InvalidCircuitError
from circuits.hypercube import as_bit_rows
from circuits.threshold import ThresholdCircuit, ThresholdLayer
# one gate, its type and threshold form (re-exported here, where they were defined before)
from circuits.graph_gate import GATE_TYPES, DagGate, _is_int

__all__ = ["GATE_TYPES", "DagGate", "DagCircuit"]


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
        """Number of gates, the output gate included."""
        return len(self.gates)

    @property
    def n_wires(self) -> int:
        """Number of wires (each is a nonzero weight)."""
        return sum(len(g.inputs) for g in self.gates)

    def gate(self, name: str) -> DagGate:
        """The gate with the given name.

        Parameters
        ----------
        name : str
            Gate name.

        """
        for g in self.gates:
            if g.name == name:
                return g
        raise KeyError(name)

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, bits) -> np.ndarray:
        """Outputs (uint8) on a batch of 0/1 rows of shape (n_points, N), gate by gate (exact).

        Parameters
        ----------
        bits : array_like
            0/1 rows of shape (n_points, N) (a single row is accepted).

        """
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
        """uint8 table on all 2^N points (through :meth:`to_threshold_circuit` and the kernels).

        Parameters
        ----------
        allow_large : bool
            Allow materialising more than 2^24 values (default False: refuse, with a message
            giving the memory estimate).

        """
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

        Parameters
        ----------
        circuit : ThresholdCircuit
            The layered circuit.
        prefix : str
            Prefix of the gate names.

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
        """The JSON-ready description used by :func:`circuits.io.circuit_to_dict`."""
        return {"n_inputs": self.n_inputs, "output": self.output,
                "gates": [g.to_dict() for g in self.gates]}

    def equals(self, other) -> bool:
        """Same inputs, output and gates (compared by name, independent of gate order).

        Parameters
        ----------
        other : object
            The circuit to compare with.

        """
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
