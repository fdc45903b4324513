"""
What is separated (1): the correlation ceiling on the hard instance
===================================================================

Experiment E21 (THEORY §5) at a tiny size, run when the documentation is built.  Depth-2 ReLU
networks are trained on all 4^n support points of μ₀ against the IP labels and, as a control,
against a fixed random permutation of the same labels.  ρ = E_μ₀[(1 - 2y)(1 - 2N)] is exact (the
product-form value table, THEORY §4.8).  The §4.7 ceiling is computed from each network's own
weight bound B, sup S_σ and total variation TV_σ.

Read the table for what it measures: at these sizes trained depth-2 nets reach about the same ρ
on IP as on random labels, and the §4.7 ceiling is far above 1 (vacuous).  The exact depth-3
construction reaches ρ = 1 at width n + 1.  The full-size run is ``depthsep ceiling`` (README).
"""

# %%
# The run (n = 3, 4; widths n and 16n; one seed)
import json
import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from experiments.cli import main

out = Path(tempfile.mkdtemp(prefix="depthsep-ceiling-"))
status = main(
    [
        "ceiling",
        "--n",
        "3,4",
        "--widths",
        "4,48",
        "--epochs",
        "150",
        "--heldout-points",
        "512",
        "--no-progress",
        "--out",
        str(out),
    ]
)
print("exit status", status)
rows = json.loads((out / "ceiling.json").read_text())["rows"]

# %%
# IP against random labels, row by row
for r in rows:
    bound = "-" if r.get("bound") is None else f"{r['bound']:.3g}"
    print(
        f"n={r['n']} depth={r['depth']} width={r['width']:>3} labels={r['labels']:<6} "
        f"rho={r['rho']:.3f} ceiling={bound} heldout_mse={r['heldout_mse']:.3f}"
    )

# %%
# The figure the run wrote: ρ against n, dashed = random-label control, dotted = ceilings
img = mpimg.imread(out / "ceiling.png")
fig, ax = plt.subplots(figsize=(9, 5.6))
ax.imshow(img)
ax.set_axis_off()
fig.tight_layout()
