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


def _experiment_imports(path):
    """The experiment modules ``path`` imports: ``experiments.<name>`` with a public name (the
    private helpers ``experiments._style``, ``experiments._cli_*`` are shared, not experiments)."""
    return {m for m in full_imports(path, pkg="experiments") if m == "experiments"
            or (m.startswith("experiments.") and not m.split(".")[1].startswith("_"))}


def test_no_experiment_imports_another():
    """Experiments are thin layers over the library: only the `depthsep` dispatcher (cli.py)
    reaches the other experiment modules, and it does so by name, lazily; the private helpers
    (the figure style, the command line's pieces) are shared."""
    scripts = [p for p in (ROOT / "experiments").glob("*.py") if p.name not in ("__init__.py", "cli.py")]
    assert len(scripts) >= 4
    for path in scripts:
        assert not _experiment_imports(path), f"{path} imports another experiment"


def test_negative_control_an_experiment_import_is_seen(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def main():\n    from experiments.reduction import run_one\n")
    assert "experiments" in set(top_level_imports(bad))
    assert any(m.startswith("experiments.reduction") for m in _experiment_imports(bad))
    ok = tmp_path / "ok.py"
    ok.write_text("def main():\n    from experiments._style import pyplot\n")
    assert not _experiment_imports(ok)


def full_imports(path, pkg=None):
    """Every module a file imports, absolute or relative (resolved against its package)."""
    pkg = pkg or ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg.split(".")[:len(pkg.split(".")) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            yield mod
            yield from (f"{mod}.{alias.name}" for alias in node.names)


def _reaches_up(name: str) -> bool:
    return name.startswith(("networks.train", "networks.separation"))


def test_the_reduction_package_only_reduces():
    """networks.reduction never trains and never runs experiments: the whole-run orchestration
    (train, then reduce) lives above it, in networks.separation.reduction_run (issue 20)."""
    files = list((ROOT / "networks" / "reduction").rglob("*.py"))
    assert len(files) >= 10
    for path in files:
        bad = [m for m in full_imports(path) if _reaches_up(m)]
        assert not bad, f"{path} imports {bad}"


def test_negative_control_a_reduction_module_reaching_the_trainer_is_seen(tmp_path):
    fake = tmp_path / "probe.py"
    for text in ("from networks.train_product import train_product\n",
                 "def f():\n    from ..separation import reduction_run\n",
                 "from .. import train\n", "import networks.train\n"):
        fake.write_text(text)
        assert any(_reaches_up(m) for m in full_imports(fake, "networks.reduction")), text
    fake.write_text("from . import fwht\nfrom ..sigma import SigmaNetwork\n")
    assert not any(_reaches_up(m) for m in full_imports(fake, "networks.reduction"))
