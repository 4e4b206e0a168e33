"""
The KPM's selection curve: choosing the dimension D
===================================================

The Kernel Projection Machine fits a hinge-loss linear classifier on the first D kernel
principal directions, for every D (Blanchard et al. 2004, eq. (10)-(11)), and then picks D.
This example draws the three curves it can pick from: the 5-fold cross-validation error,
the empirical (clipped) hinge risk and, for reference, the test error it cannot see.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import make_moons

from kpm import KernelProjectionMachine
from kpm.plotting import plot_selection_curve as selection_curve

X, y = make_moons(300, noise=0.3, random_state=0)
X_test, y_test = make_moons(2000, noise=0.3, random_state=1)

# keep_paths=True keeps the path of every D, which the test-error curve reads
kpm = KernelProjectionMachine(sigma=0.5, selection="cv", max_components=60, random_state=0, formulation="paper",
                              keep_paths=True).fit(X, y)
print(f"D chosen by 5-fold CV: {kpm.n_components_}, test error {1 - kpm.score(X_test, y_test):.3f}")

fig, ax = plt.subplots(figsize=(7, 4.2))
selection_curve(kpm, ax, X_test=X_test, y_test=y_test,
                title=f"two moons: D = {kpm.n_components_} by 5-fold CV")
fig.tight_layout()
plt.show()
