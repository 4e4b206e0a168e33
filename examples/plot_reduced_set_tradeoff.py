"""
Reduced-set SVMs: fewer vectors, faster predictions
===================================================

An SVM's decision function ``Ψ = Σ_i α_i φ(x_i)`` runs over all its support vectors.
Schölkopf et al. (1999, Section V) approximate it by ``Ψ' = Σ_j β_j φ(z_j)`` with far fewer
terms: by selecting a subset of the support vectors (with the optimal coefficients
``β = (K^z)⁻¹ K^{zx} α``) or by constructing new vectors as pre-images. The error
``‖Ψ - Ψ'‖²`` is computable from kernel values alone. This example trades vectors for test
error and prediction time on scikit-learn's digits. The multi-class ``SVC`` is 45 one-vs-one
machines over one pool of support vectors; by default its reduced set is one pool too (a
fraction of the distinct support vectors, shared by the 45 machines, each with its own
optimal coefficients), so the fraction is the fraction of kernel evaluations kept.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from kpm import ReducedSetSVC

X, y = load_digits(return_X_y=True)
X = X / 16.0
X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=600, random_state=0)
svc = SVC(kernel="rbf", gamma=0.05, C=10).fit(X_tr, y_tr)


def predict_time(model):
    t = time.perf_counter()
    for _ in range(5):
        model.decision_function(X_te)
    return (time.perf_counter() - t) / 5


base_err, base_t = 1 - svc.score(X_te, y_te), predict_time(svc)
fractions = [0.05, 0.1, 0.25]
rows = []
for method in ("select", "construct"):
    for f in fractions:
        rs = ReducedSetSVC(svc, n_vectors=f, method=method, prefit=True,
                           random_state=0).fit(X_tr, y_tr)
        rows.append((method, f, 1 - rs.score(X_te, y_te), base_t / predict_time(rs)))
        print(f"{method:9s} {f:4.0%} of the SVs: error {rows[-1][2]:.3f}, "
              f"speed-up {rows[-1][3]:.1f}x")

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
for method, mk in (("select", "o-"), ("construct", "s-")):
    r = [row for row in rows if row[0] == method]
    axes[0].plot([100 * f for _, f, _, _ in r], [100 * e for _, _, e, _ in r], mk, label=method)
    axes[1].plot([s for *_, s in r], [100 * e for _, _, e, _ in r], mk, label=method)
for ax in axes:
    ax.axhline(100 * base_err, color="k", ls=":", label="full SVC")
    ax.set_ylabel("test error (%)")
    ax.legend()
axes[0].set_xlabel("distinct vectors kept (% of the SVC's support vectors)")
axes[1].set_xlabel("decision_function speed-up over SVC (this machine)")
fig.tight_layout()
plt.show()
