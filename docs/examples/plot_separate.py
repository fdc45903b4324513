"""
What is separated (0): depth 2 vs depth 3 on IP, with an easy control of the same shape
=======================================================================================

Experiment E23 (THEORY §5) at a tiny size, run when the documentation is built.  Depth-2 ReLU
networks of width n and n² are trained on all 4^n pairs of μ₀ against IP, against MAJ∘AND (the
same AND layer with a threshold on top: a control that *can* separate, since depth 2 computes it
with n + 1 units) and against random labels (hard for every depth: a control that cannot
separate).  Next to them: the exact depth-3 construction (R² = 1) and the explicit depth-2 IP_j
net whose correlation with IP is exactly 2^{j−n} (the floor).  The prediction is stated before
the run; the verdict says which clauses hold, fail or cannot be decided at these sizes.  The
default-size run is ``depthsep separate`` (README, "Depth 2 vs depth 3").
"""

# %%
# The run (n = 3, 4, 5; one seed; a short budget)
import json
import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from experiments.cli import main

out = Path(tempfile.mkdtemp(prefix="depthsep-separate-"))
status = main(
    [
        "separate",
        "--n",
        "3,4,5",
        "--seeds",
        "1",
        "--epochs",
        "300",
        "--heldout-n",
        "4",
        "--no-progress",
        "--out",
        str(out),
    ]
)
print("exit status", status)
record = json.loads((out / "separate.json").read_text())

# %%
# R² per target and width, and the verdict with its numbers
for s in record["summary"]:
    if s["kind"] in ("depth2", "exact3"):
        print(f"n={s['n']} {s['kind']:>6} {s['target']:>7} width {s['rule']:>14}: R² {s['r2_best']:.3f}")
for name, clause in record["verdict"]["clauses"].items():
    print(name, clause["status"])

# %%
# The figure the run wrote: R² against n, one panel per width rule
img = mpimg.imread(out / "separate.png")
fig, ax = plt.subplots(figsize=(10, 3.6))
ax.imshow(img)
ax.set_axis_off()
fig.tight_layout()
