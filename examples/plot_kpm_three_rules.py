"""
Three ways to choose D: cross-validation, penalty and slope heuristic
=====================================================================

Zwald & Blanchard (2005) select D by minimising the penalised empirical risk
``R_n(clip f_D) + λ·D`` (their criterion (3)), with λ either chosen by cross-validation or
by the slope heuristic: sweeping λ from +∞ to 0, the selected dimension jumps once more than
anywhere else, and twice that λ is used. This example compares the three rules with a
cross-validated SVC on the same RBF kernel, on three draws of a noisy two-moons problem.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from kpm import KernelProjectionMachine

sigma = 0.5
rules = {"KPM / CV": dict(selection="cv"),
         "KPM / penalty (λ by CV)": dict(selection="penalty", penalty="cv"),
         "KPM / slope": dict(selection="slope")}
errors = {name: [] for name in [*rules, "SVC (C by CV)"]}
dims = {name: [] for name in rules}
for seed in range(3):
    X, y = make_moons(200, noise=0.35, random_state=seed)
    Xt, yt = make_moons(2000, noise=0.35, random_state=100 + seed)
    for name, kw in rules.items():
        m = KernelProjectionMachine(sigma=sigma, max_components=40, random_state=seed, **kw, formulation="paper").fit(X, y)
        errors[name].append(1 - m.score(Xt, yt))
        dims[name].append(m.n_components_)
    svc = GridSearchCV(SVC(gamma=1 / (2 * sigma**2)), {"C": np.logspace(-1, 3, 9)}).fit(X, y)
    errors["SVC (C by CV)"].append(1 - svc.score(Xt, yt))

for name in rules:
    print(f"{name:25s} D = {dims[name]}")
fig, ax = plt.subplots(figsize=(7, 3.8))
names = list(errors)
ax.boxplot([100 * np.array(errors[n]) for n in names], vert=False)
ax.set_yticks(range(1, len(names) + 1), names)
ax.set_xlabel("test error (%), 3 draws")
ax.set_title("two moons, RBF σ = 0.5")
fig.tight_layout()
plt.show()
