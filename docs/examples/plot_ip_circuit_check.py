"""
IP mod 2 circuits, checked on every input
=========================================

Two threshold circuits for inner product mod 2, IP_n(x, y) = x·y mod 2 on N = 2n bits
(THEORY §1.4): a depth-3 circuit with 2n hidden gates (plus the output gate) and a depth-2
MAJ∘MAJ circuit with n·2^(n-1) hidden gates.  Each is compared with IP on all 4^n inputs by the
exact numba kernels, and a negative control -- the same circuit with one threshold changed --
must fail the check.
"""

# %%
# Build and check
# ---------------
# ``count_disagreements`` returns the exact number of inputs where the circuit differs from the
# target, and the first counterexample (in cube order: bit i of point k is ``(k >> i) & 1``;
# x is the low n bits, y the high n bits).
import matplotlib.pyplot as plt

import circuits as c
from circuits.hypercube import as_matrix

n = 5
for name, circ in [("ip_depth3", c.ip_depth3(n)), ("ip_depth2", c.ip_depth2(n))]:
    res = c.count_disagreements(circ, "ip")
    print(
        f"{name}: depth {circ.depth}, {circ.size} hidden gates (+1 output), "
        f"max|w| = {circ.max_abs_weight}, disagreements with IP on {res.n_points} inputs: "
        f"{res.count}"
    )

# %%
# Negative control
# ----------------
# Raise the threshold of the first AND gate h_0 = [x_0 + y_0 >= 2] to 3: the gate never fires,
# so the circuit computes IP of the other n - 1 coordinates.  The check must find the
# disagreements (exactly the inputs with x_0 = y_0 = 1, a quarter of the cube) and name one.
good = c.ip_depth3(n)
layers = list(good.layers)
t = layers[0].thresholds.copy()
t[0] = 3
layers[0] = c.ThresholdLayer(layers[0].weights, t)
broken = c.ThresholdCircuit(tuple(layers))
res = c.count_disagreements(broken, "ip")
print(
    f"broken circuit: {res.count} of {res.n_points} inputs differ "
    f"(expected 4^n / 4 = {4**n // 4}); first counterexample k = {res.index}, "
    f"bits {res.counterexample.tolist()}"
)
assert res.count == 4**n // 4

# %%
# The communication matrix
# ------------------------
# Rows are Alice's x, columns Bob's y (``as_matrix`` gives [x, y]); IP's ±1 matrix is the
# Sylvester-Hadamard matrix.  The right panel marks where the broken circuit errs: exactly the
# rows and columns with x_0 = y_0 = 1.
good_tt = as_matrix(c.truth_table(good), n)
diff = as_matrix(c.truth_table(broken) ^ c.truth_table(good), n)
fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
axes[0].imshow(1 - 2 * good_tt.astype(int), cmap="gray", interpolation="nearest")
axes[0].set_title(f"(-1)^IP(x, y), n = {n}: the ip_depth3 circuit's table")
axes[1].imshow(diff, cmap="Reds", interpolation="nearest")
axes[1].set_title(f"negative control: {int(diff.sum())} inputs differ")
for ax in axes:
    ax.set_xlabel("y (Bob)")
    ax.set_ylabel("x (Alice)")
fig.tight_layout()
