"""The network class sits above its document and interop modules: neither imports
networks.sigma (no import circle), and both still build SigmaNetwork objects."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set:
    """Every module imported anywhere in ``path`` (top level or inside functions), except
    imports guarded by ``if TYPE_CHECKING:`` (type hints only, never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_documents_and_interop_do_not_import_the_network_class():
    for name in ("_document.py", "interop.py", "interop_torch.py"):
        mods = _imports(ROOT / "networks" / name)
        assert not any(m == "networks.sigma" or m.startswith("networks.sigma.") for m in mods), \
            (name, sorted(m for m in mods if "sigma" in m))
    # ...while the class module may import both (downward)
    assert "networks._document" in _imports(ROOT / "networks" / "sigma.py")


def test_both_still_build_networks():
    from networks import interop
    from networks._document import network_classes
    from networks.sigma import DenseLayer, SigmaNetwork

    assert network_classes() == (SigmaNetwork, DenseLayer)
    net = SigmaNetwork.random([5, 4, 1], "tanh", seed=2, bias_scale=0.3)
    again = interop.from_state_dict(interop.to_state_dict(net), "tanh")
    assert isinstance(again, SigmaNetwork) and again.equals(net)
    assert SigmaNetwork.from_dict(net.to_dict()).equals(net)
    assert np.allclose(again(np.eye(5)), net(np.eye(5)))
