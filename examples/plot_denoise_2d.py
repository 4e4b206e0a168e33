"""
Denoising a curve in the plane
==============================

The toy problem of Mika et al. (1999): noisy points on a half circle. Linear PCA can only
project onto a line; kernel PCA with a few components followed by the Gaussian fixed-point
pre-image pulls the points back towards the curve.
"""

import matplotlib.pyplot as plt
import numpy as np

from kpm import KernelPCADenoiser, LinearPCADenoiser

rng = np.random.default_rng(0)
t = rng.uniform(0, np.pi, 200)
clean = np.c_[np.cos(t), np.sin(t)]
X = clean + 0.1 * rng.standard_normal(clean.shape)

kernel = KernelPCADenoiser(n_components=4, gamma=1 / 0.5, random_state=0).fit(X)
linear = LinearPCADenoiser(n_components=1).fit(X)
fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
for ax, model, title in ((axes[0], linear, "linear PCA, 1 component"),
                         (axes[1], kernel, "kernel PCA, 4 components, c = 0.5")):
    Z = model.transform(X)
    ax.plot(*clean[np.argsort(t)].T, "k-", lw=1, label="true curve")
    ax.scatter(*X.T, s=8, c="0.6", label="noisy")
    ax.scatter(*Z.T, s=8, c="C3", label="denoised")
    ax.set_title(title)
    ax.set_aspect("equal")
axes[0].legend(loc="lower center", fontsize=8)
fig.tight_layout()
plt.show()
