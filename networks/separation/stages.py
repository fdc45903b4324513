"""The AND stage of E25, shared by its in-sample and held-out cells: MAJ∘AND first, then the
cell's target on the same net (private to :mod:`networks.separation`; re-exported by
:mod:`networks.separation.curriculum`)."""

from __future__ import annotations

__all__ = ["run_and_stage"]


def run_and_stage(net, cell, Ym, Y, *, train, measure):
    """The AND stage's two stages on ``net``: MAJ∘AND (labels ``Ym``; its first layer must carry
    the AND count), then the cell's target (``Y``) with depth 3's first layer frozen (depth 2:
    every layer trains).  ``train(net, labels, freeze)`` trains one stage and
    ``measure(net, labels)`` gives its metrics, on whatever pairs the caller trains and measures
    (all of them, or the held-out quadrants).  Returns ``(net, last result, stage records)``."""
    frozen = len(cell["widths"]) == 2
    stages, res = [], None
    for j, (labels, name, freeze) in enumerate(((Ym, "majand", False),
                                                (Y, cell["target"], frozen))):
        res = train(net, labels, freeze)
        net = res.network
        stages.append({"j": j + 1, "labels": name, "first_layer_frozen": freeze,
                       "epochs": res.history["epochs"], "reason": res.history["reason"],
                       **measure(net, labels)})
    return net, res, stages
