"""
Pre-images of kernel PCA: denoising USPS digits on every basis
==============================================================

:meth:`kpm.KernelProjection.inverse_transform` maps kernel PCA coordinates back to input
space: the coordinates ``y`` are the feature-space point ``φ̄ + Σ_k y_k V^k``, and its
pre-image is an input ``z`` whose image ``φ(z)`` is closest to it. Projecting noisy digits
onto the 64 leading components and mapping them back denoises them (Schölkopf et al. 1999;
Mika et al. 1999). Here on 1,000 USPS training digits (100 per digit, pixels in [-1, 1]) and
one noisy test image per digit (Gaussian noise of standard deviation 0.5), with the Gaussian
kernel of width ``c = 2 × mean pixel variance × 256``:

* the fixed-point pre-image on the exact basis, on a Nyström basis of 500 landmarks (the
  pre-image is then an expansion on the landmarks) and on the matrix-free basis;
* the non-iterative MDS pre-image of Kwok & Tsang (2004), which also starts the fixed point;
* scikit-learn's learned inverse, ``KernelPCA(fit_inverse_transform=True)``, at its default
  ridge ``alpha=1`` and at ``alpha=1e-6``, near its best on this setting
  (``docs/results/preimage_usps.md`` has the full comparison on 200 test images).

Falls back to scikit-learn's 8×8 digits where the USPS data are not installed.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import KernelPCA

from kpm import KernelProjection

try:
    from kpm_reproduce.datasets import load_usps

    X_all, y_all, T_all, t_all = load_usps()
    X_all, T_all = 2.0 * X_all - 1.0, 2.0 * T_all - 1.0  # pixels in [-1, 1]
    side, per_digit, data = 16, 100, "USPS"
except (ImportError, FileNotFoundError):
    from sklearn.datasets import load_digits

    digits = load_digits()
    X_all = T_all = digits.data / 8.0 - 1.0
    y_all = t_all = digits.target
    side, per_digit, data = 8, 60, "scikit-learn's digits"

rng = np.random.default_rng(0)
train = np.concatenate([rng.choice(np.flatnonzero(y_all == d), per_digit, replace=False)
                        for d in range(10)])
test = [int(rng.choice(np.setdiff1d(np.flatnonzero(t_all == d), train if T_all is X_all else [])))
        for d in range(10)]
X, T = X_all[train], T_all[test]
noisy = T + 0.5 * rng.standard_normal(T.shape)
c = 2.0 * X.var(axis=0).mean() * X.shape[1]  # the width rule of Schölkopf et al.
print(f"{data}: {len(X)} training images, c = {c:.1f}")

rows = {"clean": T, "noisy": noisy}
bases = {"exact": {}, "Nyström (500)": dict(n_landmarks=500, random_state=0),
         "matrix-free": dict(eigen_solver="matrix-free", random_state=0)}
for name, params in bases.items():
    kp = KernelProjection(64, kernel_params={"c": c}, **params).fit(X)
    rows[f"fixed point,\n{name}"] = kp.inverse_transform(kp.transform(noisy))
mds = KernelProjection(64, kernel_params={"c": c}, preimage="mds").fit(X)
rows["MDS\n(Kwok & Tsang)"] = mds.inverse_transform(mds.transform(noisy))
for alpha in (1.0, 1e-6):
    sk = KernelPCA(64, kernel="rbf", gamma=1.0 / c, fit_inverse_transform=True, alpha=alpha).fit(X)
    rows[f"scikit-learn,\nalpha={alpha:g}"] = sk.inverse_transform(sk.transform(noisy))

for name, Z in rows.items():
    label = name.replace("\n", " ")
    print(f"{label:32s} MSE {np.mean((Z - T) ** 2):.4f}")

fig, axes = plt.subplots(len(rows), 10, figsize=(8, 1.0 * len(rows) + 0.4))
for r, (name, imgs) in enumerate(rows.items()):
    for j in range(10):
        axes[r, j].imshow(imgs[j].reshape(side, side), cmap="gray_r", vmin=-1, vmax=1)
        axes[r, j].set_xticks([])
        axes[r, j].set_yticks([])
    mse = np.mean((imgs - T) ** 2)
    axes[r, 0].set_ylabel(name + ("" if name == "clean" else f"\nMSE {mse:.3f}"), rotation=0,
                          ha="right", va="center", fontsize=7)
fig.suptitle(f"Pre-images of 64 kernel principal components ({data})", fontsize=9)
fig.tight_layout()

# %%
# Choosing the number of components
# ---------------------------------
# ``explained_variance_ratio_`` holds each component's share of the centred kernel matrix's
# trace (the total variance in feature space); a fraction as ``n_components`` keeps the
# fewest leading components that reach it.

full = KernelProjection(kernel_params={"c": c}).fit(X)
kp90 = KernelProjection(0.9, kernel_params={"c": c}).fit(X)
print(f"n_components=0.9 keeps {kp90.n_components_} of {full.n_components_} components")
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(np.arange(1, full.n_components_ + 1), np.cumsum(full.explained_variance_ratio_))
ax.axhline(0.9, color="0.6", lw=0.8)
ax.axvline(kp90.n_components_, color="C3", lw=0.8, label=f"n_components=0.9: D = {kp90.n_components_}")
ax.axvline(64, color="C2", lw=0.8, ls="--", label="D = 64 (above)")
ax.set_xscale("log")
ax.set_xlabel("number of components D")
ax.set_ylabel("cumulative explained variance")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
