"""networks.product is the product form as one package, below the reduction: it never imports
networks.reduction or networks.separation; the old import paths stay the same objects."""

from __future__ import annotations

import importlib
from pathlib import Path

from test_layering import full_imports

ROOT = Path(__file__).resolve().parents[1]


def _reaches_reduction(name: str) -> bool:
    return name.startswith(("networks.reduction", "networks.separation", "experiments"))


def test_the_product_package_sits_below_the_reduction():
    files = sorted((ROOT / "networks" / "product").glob("*.py"))
    assert len(files) >= 10
    for path in files:
        bad = [m for m in full_imports(path, "networks.product") if _reaches_reduction(m)]
        assert not bad, f"{path} imports {bad}"
        assert len(path.read_text().splitlines()) < 500, path


def test_negative_control_an_upward_import_is_seen(tmp_path):
    fake = tmp_path / "probe.py"
    for text in ("from networks.reduction import fwht\n", "from ..reduction._common import frozen\n",
                 "def f():\n    import networks.separation.separate\n"):
        fake.write_text(text)
        assert any(_reaches_reduction(m) for m in full_imports(fake, "networks.product")), text
    fake.write_text("from . import support\nfrom ..sigma import SigmaNetwork\n")
    assert not any(_reaches_reduction(m) for m in full_imports(fake, "networks.product"))


def test_old_import_paths_are_the_same_objects(monkeypatch):
    tp = importlib.import_module("networks.train_product")
    train = importlib.import_module("networks.product.train")
    assert tp.train_product is train.train_product and tp.SLICE_TERMS == train.SLICE_TERMS
    # a patch through the old path reaches the trainer (tests and users patch it there) and is undone
    before = train.SLICE_TERMS
    monkeypatch.setattr(tp, "SLICE_TERMS", 12345)
    assert train.SLICE_TERMS == 12345 and tp.SLICE_TERMS == 12345
    monkeypatch.undo()
    assert train.SLICE_TERMS == before
    assert "train_product" not in vars(tp)               # forwarded, not copied
    for name in ("train_product", "product_loss_and_gradient", "refit_output_layer",
                 "training_memory_bytes", "check_training_memory", "PRECISIONS",
                 "DIVERGED_FACTOR", "_gradient", "_gradient3", "_full_pass", "_targets",
                 "_Adam", "_params3", "_n_blocks", "blas_threads", "_numba_threads",
                 "product_support", "_activation_code"):
        assert hasattr(tp, name), name
    red = importlib.import_module("networks.reduction.product")
    prod = importlib.import_module("networks.product")
    for name in ("ProductSupport", "product_support", "ip_signs", "value_table",
                 "support_metrics", "check_table_memory", "Depth3Parts", "depth3_parts",
                 "depth3_pass"):
        assert getattr(red, name) is getattr(prod, name), name
    k_old = importlib.import_module("networks.reduction._kernels_train32")
    k_new = importlib.import_module("networks.product._kernels_train32")
    assert k_old._train_pass_relu32 is k_new._train_pass_relu32
    common = importlib.import_module("networks.reduction._common")
    parts = importlib.import_module("networks.product.parts")
    assert common.depth2_parts is parts.depth2_parts and common.frozen is parts.frozen
    import networks
    assert networks.train_product is prod.train_product


def test_fwht_and_selfreduce_form_no_circle():
    """fwht's least-k search and selfreduce share the twisted sums from networks.reduction.twisted;
    fwht never imports selfreduce (not even inside a function)."""
    red = ROOT / "networks" / "reduction"
    fwht = set(full_imports(red / "fwht.py", "networks.reduction"))
    twisted = set(full_imports(red / "twisted.py", "networks.reduction"))
    assert not any(m.startswith("networks.reduction.selfreduce") for m in fwht | twisted)
    assert "networks.reduction.twisted" in fwht
    sr = importlib.import_module("networks.reduction.selfreduce")
    tw = importlib.import_module("networks.reduction.twisted")
    assert sr.twisted_sums is tw.twisted_sums and sr._Chunk is tw._Chunk
