"""
Walsh spectra: IP is bent, majority is not
==========================================

The exact Walsh spectrum W_F(u) = sum_z F(z) χ_u(z) of F = (-1)^f (THEORY §1.1), computed by
the integer fast Walsh-Hadamard transform.  IP_n is *bent*: every `|W(u)|` equals `2^n`, the
flattest spectrum a Boolean function on 2n bits can have, which is why no rectangle (and no
single threshold gate, THEORY §1.2) correlates well with it.  Majority is the contrast: its
weight sits on the low levels.
"""

import matplotlib.pyplot as plt
import numpy as np

import circuits as c
from circuits import analysis as A

n = 4
ip = A.walsh_spectrum(c.InnerProductMod2(n))
maj = A.walsh_spectrum(c.majority(2 * n + 1))
print("IP_4: distinct |W| values", sorted(set(np.abs(ip.walsh).tolist())), "degree", ip.degree)
print("MAJ_9: distinct |W| values", sorted(set(np.abs(maj.walsh).tolist()))[:6], "...", "degree", maj.degree)
# negative control: a circuit that is not IP must not be bent
s = A.walsh_spectrum(c.parity_depth2(2 * n))
print("PARITY_8 (negative control): nonzero coefficients", int(np.count_nonzero(s.walsh)))
assert len(set(np.abs(ip.walsh).tolist())) == 1 and int(np.count_nonzero(s.walsh)) == 1

# %%
# Level weights `W^k = \sum_{|u| = k} \hat F(u)^2` (they add up to 1).
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
for ax, spec, name in [(axes[0], ip, f"IP_{n} (N = {2 * n})"), (axes[1], maj, "MAJ_9")]:
    w = spec.level_weights
    ax.bar(np.arange(w.size), w, color="tab:blue")
    ax.set_xlabel("level k = |u|")
    ax.set_ylabel("W^k")
    ax.set_title(f"{name}: degree {spec.degree}")
fig.tight_layout()
