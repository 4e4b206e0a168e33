"""
Decision boundaries: KPM versus SVM
===================================

Both use the same Gaussian kernel. The SVM regularises by the RKHS norm (Blanchard et al.
2004, eq. (2)); the KPM instead restricts the function to the span of the first D kernel
principal directions and minimises the plain hinge loss there (eq. (3)-(4)). With D chosen
by cross-validation the two boundaries are close; the KPM's is a finite expansion on D
eigenvectors.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_circles
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from kpm import KernelProjectionMachine

X, y = make_circles(300, noise=0.15, factor=0.5, random_state=0)
sigma = 0.5
kpm = KernelProjectionMachine(sigma=sigma, random_state=0, formulation="paper").fit(X, y)
svc = GridSearchCV(SVC(gamma=1 / (2 * sigma**2)), {"C": np.logspace(-1, 3, 9)}).fit(X, y)

xx, yy = np.meshgrid(np.linspace(-1.6, 1.6, 200), np.linspace(-1.6, 1.6, 200))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), sharey=True)
for ax, model, title in ((axes[0], kpm, f"KPM, D = {kpm.dim_} by CV"),
                         (axes[1], svc, f"SVC, C = {svc.best_params_['C']:.3g} by CV")):
    f = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, f, levels=20, cmap="RdBu", alpha=0.6)
    ax.contour(xx, yy, f, levels=[0], colors="k")
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu", edgecolor="k", s=15)
    ax.set_title(title)
fig.tight_layout()
plt.show()
