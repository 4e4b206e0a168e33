"""
Relevant dimensions: how much of the label lives in the leading kernel PCs
==========================================================================

Braun, Buhmann & Müller (2008) look at the contributions ``s_i = u_iᵀ y`` of the label
vector on the eigenvectors ``u_i`` of the kernel matrix (decreasing eigenvalues). For a
well-chosen kernel they are large for the first few i and then fall to a noise level. A
two-component model -- variance σ₁² for i ≤ d, σ₂² beyond -- picks the relevant dimension
``d̂ = argmin_d (d/n) log σ₁² + ((n-d)/n) log σ₂²``.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from kpm import RelevantDimension
from kpm.plotting import plot_relevance

X, y = make_moons(400, noise=0.25, random_state=0)
y = np.where(y == 1, 1.0, -1.0)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
for ax, sigma in zip(axes, (0.05, 0.4, 5.0)):
    model = RelevantDimension(sigma=sigma).fit(X, y)
    plot_relevance(model, ax=ax)
    ax.set_title(f"σ = {sigma}: d̂ = {model.n_components_}, "
                 f"-log ℓ = {model.min_neg_log_likelihood_:.2f}")
fig.tight_layout()
plt.show()
