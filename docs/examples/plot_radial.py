"""
What is separated (2): radial targets need no depth
===================================================

Experiment E22 (THEORY §5) at a tiny size, run when the documentation is built.  For the
1-Lipschitz radial target hat(x) = max(0, 1 - ‖x‖) on the unit ball B_d, the smallest depth-2
ReLU ridge network whose sup error is at most ε is found by doubling the number of directions;
the sup error is *measured* (a dense sample plus adversarial local maximisation), not certified.
The depth-3 composition of THEORY §3.6 has a certified bound.  Widths grow polynomially in d and
1/ε (Safran–Eldan–Shamir 2019).  The full-size run is ``depthsep radial`` (README).
"""

# %%
# The run (d = 2, 3, 4; ε = 0.2, 0.1; no trained nets, no T4 contrast)
import json
import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from experiments.cli import main

out = Path(tempfile.mkdtemp(prefix="depthsep-radial-"))
status = main(
    [
        "radial",
        "--dims",
        "2,3,4",
        "--eps",
        "0.2,0.1",
        "--targets",
        "hat",
        "--t4-dims",
        "",
        "--train-dims",
        "",
        "--no-progress",
        "--out",
        str(out),
    ]
)
print("exit status", status)
rows = json.loads((out / "radial.json").read_text())["rows"]

# %%
# One line per (method, d, ε): width reached and the measured sup error
for r in rows:
    err = r.get("sup")
    print(
        f"{r['method']:<7} depth={r['depth']} d={r['d']} eps={r['eps']:<4} width={r['width']} "
        f"sup_error={'-' if err is None else format(err, '.4f')}"
    )

# %%
# The figure the run wrote: width against d (left) and against 1/ε (right), log axes
img = mpimg.imread(out / "radial.png")
fig, ax = plt.subplots(figsize=(12, 4.6))
ax.imshow(img)
ax.set_axis_off()
fig.tight_layout()
