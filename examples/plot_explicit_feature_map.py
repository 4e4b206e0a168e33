"""
The explicit feature map: a linear SVM on kernel coordinates
============================================================

Kwak (2013, Algorithm 1 and Theorem 2) maps every point to explicit coordinates
``y(x) = Λ^{-1/2} Uᵀ k̃(x)`` in the span of the training data in feature space; the training
points map to ``Y = Λ^{1/2} Uᵀ`` with ``YᵀY = K̃`` (Corollary 3). Any linear method on Y is
then its kernel version: a linear SVM on Y has the same decision values as an RBF SVM on X.
"""

import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from kpm import KernelProjection

X, y = load_breast_cancer(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
gamma = 1.0 / X.shape[1]
rbf = make_pipeline(StandardScaler(), SVC(kernel="rbf", gamma=gamma)).fit(X_tr, y_tr)
lin = make_pipeline(StandardScaler(), KernelProjection(gamma=gamma),
                    SVC(kernel="linear")).fit(X_tr, y_tr)
d_rbf, d_lin = rbf.decision_function(X_te), lin.decision_function(X_te)
print(f"explicit dimension: {lin[1].n_components_}; max |difference| of the decision "
      f"values: {abs(d_rbf - d_lin).max():.1e}")

fig, ax = plt.subplots(figsize=(5, 4.5))
ax.scatter(d_rbf, d_lin, c=y_te, cmap="coolwarm", s=12)
ax.plot([-4, 4], [-4, 4], "k:", lw=1)
ax.set_xlabel("SVC(kernel='rbf') on X")
ax.set_ylabel("SVC(kernel='linear') on KernelProjection(X)")
ax.set_title("decision values on the test set")
fig.tight_layout()
plt.show()
