"""
Decision boundaries: the papers' KPM, the default KPM and the SVM
=================================================================

All three use the same Gaussian kernel. The SVM regularises by the RKHS norm (Blanchard et
al. 2004, eq. (2)); the papers' KPM (``formulation='paper'``) instead restricts the function
to the span of the first D kernel principal directions and minimises the plain hinge loss
there (eq. (3)-(4)). The estimator's default with D chosen by cross-validation goes beyond
the papers: the soft-margin SVM inside those D directions, C and D both by cross-validation
(user guide, "Beyond the papers"). On these data the three boundaries are close; both KPMs
are finite expansions on D eigenvectors.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_circles
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from kpm import KernelProjectionMachine

X, y = make_circles(300, noise=0.15, factor=0.5, random_state=0)
X_test, y_test = make_circles(2000, noise=0.15, factor=0.5, random_state=1)
sigma = 0.5
paper = KernelProjectionMachine(sigma=sigma, random_state=0, formulation="paper").fit(X, y)
default = KernelProjectionMachine(sigma=sigma, random_state=0).fit(X, y)
svc = GridSearchCV(SVC(gamma=1 / (2 * sigma**2)), {"C": np.logspace(-1, 3, 9)}).fit(X, y)

xx, yy = np.meshgrid(np.linspace(-1.6, 1.6, 200), np.linspace(-1.6, 1.6, 200))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), sharey=True)
panels = (
    (paper, f"papers' KPM: D = {paper.n_components_}"),
    (default, f"default KPM: D = {default.n_components_}, C = {default.C_:.3g}"),
    (svc, f"SVC: C = {svc.best_params_['C']:.3g}"),
)
for ax, (model, title) in zip(axes, panels):
    f = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, f, levels=20, cmap="RdBu", alpha=0.6)
    ax.contour(xx, yy, f, levels=[0], colors="k")
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu", edgecolor="k", s=15)
    ax.set_title(f"{title}\ntest error {100 * (1 - model.score(X_test, y_test)):.1f} %")
fig.tight_layout()
plt.show()
