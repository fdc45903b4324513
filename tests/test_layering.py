"""Imports point downwards: circuits <- embeddings <- networks <- experiments, benchmarks, tests."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {"circuits": set(), "embeddings": {"circuits"}, "networks": {"circuits", "embeddings"}}
OURS = {"circuits", "embeddings", "networks", "experiments", "benchmarks", "tests"}


def top_level_imports(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


@pytest.mark.parametrize("pkg", sorted(ALLOWED))
def test_imports_point_downwards(pkg):
    files = list((ROOT / pkg).rglob("*.py"))
    assert files, f"package {pkg} has no modules"
    for path in files:
        for top in top_level_imports(path):
            assert top not in OURS - ALLOWED[pkg] - {pkg}, f"{path} imports {top}"


@pytest.mark.parametrize("pkg", sorted(ALLOWED))
def test_public_surface(pkg):
    mod = __import__(pkg)
    names = mod.__all__                  # a package without __all__ would check nothing here
    assert names, f"{pkg}.__all__ is empty"
    for name in names:
        assert not name.startswith("_"), name
        assert hasattr(mod, name), f"{pkg}.__all__ lists {name!r} which does not exist"


def test_negative_control_an_upward_import_is_flagged(tmp_path):
    """The check above must see every import form a module in circuits/ could use upwards."""
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy\nimport networks.sigma\nfrom embeddings.code import CodeEmbedding\n"
                   "def f():\n    from experiments import separation\n    from . import sibling\n")
    tops = set(top_level_imports(bad))
    assert tops == {"numpy", "networks", "embeddings", "experiments"}
    assert tops & (OURS - ALLOWED["circuits"] - {"circuits"}) == {"networks", "embeddings",
                                                                  "experiments"}


def test_no_experiment_imports_another():
    """Experiments are thin layers over the library: only the `depthsep` dispatcher (cli.py)
    reaches the other experiment modules, and it does so by name, lazily."""
    scripts = [p for p in (ROOT / "experiments").glob("*.py") if p.name not in ("__init__.py", "cli.py")]
    assert len(scripts) >= 4
    for path in scripts:
        assert "experiments" not in set(top_level_imports(path)), f"{path} imports another experiment"


def test_negative_control_an_experiment_import_is_seen(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def main():\n    from experiments.reduction import run_one\n")
    assert "experiments" in set(top_level_imports(bad))
