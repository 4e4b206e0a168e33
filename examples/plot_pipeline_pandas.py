"""
kpm in a scikit-learn pipeline, with pandas output
==================================================

Every kpm estimator follows scikit-learn's conventions: it goes into a ``Pipeline``, is tuned
by ``GridSearchCV``, and its transformers name their output columns, so that
``set_output(transform="pandas")`` gives data frames. Here the explicit kernel map feeds a
logistic regression; the grid search tunes the kernel width and the number of components.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from kpm import KernelProjection

data = load_breast_cancer(as_frame=True)
X, y = data.data, data.target
pipe = make_pipeline(StandardScaler(), KernelProjection(), LogisticRegression(max_iter=1000))
grid = GridSearchCV(pipe, {"kernelprojection__sigma": [2.0, 4.0, 8.0],
                           "kernelprojection__n_components": [2, 5, 10, 20, 40]}, cv=3)
grid.fit(X, y)
print("best:", grid.best_params_, f"CV accuracy {grid.best_score_:.3f}")

features = grid.best_estimator_[:-1].set_output(transform="pandas").transform(X)
print(features.iloc[:3, :4])

scores = pd.DataFrame(grid.cv_results_["params"]).assign(score=grid.cv_results_["mean_test_score"])
fig, ax = plt.subplots(figsize=(6.5, 4))
for sigma, g in scores.groupby("kernelprojection__sigma"):
    ax.plot(g["kernelprojection__n_components"], 100 * (1 - g["score"]), "o-", label=f"σ = {sigma}")
ax.set_xscale("log")
ax.set_xlabel("explicit kernel PCA components")
ax.set_ylabel("3-fold CV error (%)")
ax.set_xticks([2, 5, 10, 20, 40], labels=["2", "5", "10", "20", "40"])
ax.legend()
ax.set_title("breast cancer: KernelProjection + LogisticRegression")
fig.tight_layout()
plt.show()
