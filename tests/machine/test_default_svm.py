"""The default KernelProjectionMachine: the squared-hinge SVM in S_D, each fold's basis by
Rayleigh-Ritz in the training set's, C and D by cross-validation with early stopping."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_moons
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from kpm import KernelProjectionMachine, make_kernel, median_sigma
from kpm.machine.eigen import EigenFolds, EigenSubspace, RitzFolds
from kpm.machine.engine import ovr_targets
from kpm.machine.folds import svm_d_path
from kpm.machine.formulation import plan_fit


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(160, noise=0.25, random_state=0)
    return X, y


def _decisions(fold, C=10.0):
    """The squared-hinge SVM of a fold at its largest D: decision values on its validation points."""
    from kpm.hinge.squared_hinge import SquaredHingeSVM

    Z, Y = fold.train
    Z_va = fold.val[0]
    w, b = SquaredHingeSVM(Z * fold.scale, Y[:, 0], C).solve(Z.shape[1])
    return (Z_va * fold.scale) @ w + b


def test_ritz_folds_with_the_whole_spectrum_are_the_folds_eigenvectors(moons):
    """With the training set's whole basis the span of a fold's rows is all of R^n_tr: its
    Ritz pairs are the eigenpairs of the fold's kernel matrix, so the fold's SVM is the one on
    its own eigenvectors (EigenFolds)."""
    X, y = moons
    K = make_kernel("rbf", sigma=0.5)(X)
    basis = EigenSubspace(K, False, eigen_solver="dense")
    codes = y
    Y = ovr_targets(codes, 2)
    splits = list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))
    grid = np.arange(1, basis.rank + 1)
    ritz = RitzFolds(K, basis.V, Y, codes, splits, grid)
    exact = EigenFolds(K, Y, codes, splits, grid)
    for k in range(4):
        a, b = ritz.fold(k), exact.fold(k)
        m = min(len(a.scale), len(b.scale))
        np.testing.assert_allclose(a.scale[:m] ** 2, b.scale[:m] ** 2, rtol=1e-8, atol=1e-10 * b.scale[0] ** 2)
        np.testing.assert_allclose(_decisions(a), _decisions(b), atol=1e-6)


def test_early_stopping_ends_the_d_path_after_twice_the_best_d_plus_20(moons):
    X, y = moons
    est = KernelProjectionMachine(sigma=0.5, C=1.0, random_state=0)
    plan = plan_fit(est)
    K = make_kernel("rbf", sigma=0.5)(X)
    basis = EigenSubspace(K, False, eigen_solver="dense")
    Y = ovr_targets(y, 2)
    splits = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    grid = np.arange(1, basis.rank + 1)
    folds = [RitzFolds(K, basis.V, Y, y, splits, grid).fold(k) for k in range(5)]
    full = svm_d_path(folds, 1.0, grid, plan)
    early = svm_d_path(folds, 1.0, grid, plan, early_stopping=True)
    pooled = sum(f.errors for f in full)
    n_used = early[0].n_used
    best = int(np.argmin(pooled[:n_used]))
    assert grid[n_used - 1] > 2 * grid[best] + 20 and n_used < len(grid)
    assert all(grid[j] <= 2 * grid[int(np.argmin(pooled[: j + 1]))] + 20 for j in range(n_used - 1))
    np.testing.assert_array_equal(sum(f.errors for f in early)[:n_used], pooled[:n_used])


def test_a_d_chosen_at_the_end_of_a_capped_grid_warns(moons):
    X, y = moons
    with pytest.warns(UserWarning, match="the selected D = 3 is the largest D considered"):
        KernelProjectionMachine(sigma=0.5, max_components=3, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = KernelProjectionMachine(sigma=0.5, random_state=0).fit(X, y)
    assert m.n_components_ < m.selection_curve_["D"].max()


def test_default_is_as_accurate_as_the_tuned_svc():
    """Against GridSearchCV(SVC) over the same 11 C values at the same width, on five splits of
    scikit-learn's breast cancer data: the mean test error within 1.5 points (measured: 1.05;
    the panel benchmark, docs/results/kpm_panel.md, compares on more data sets)."""
    X, y = load_breast_cancer(return_X_y=True)
    gaps = []
    for seed in range(5):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
        sc = StandardScaler().fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
        s = median_sigma(Xtr)
        svc = GridSearchCV(SVC(gamma=1 / (2 * s * s)), {"C": np.logspace(-2, 3, 11)}, cv=5).fit(Xtr, ytr)
        kpm = KernelProjectionMachine(sigma=s, random_state=0).fit(Xtr, ytr)
        gaps.append(np.mean(kpm.predict(Xte) != yte) - np.mean(svc.predict(Xte) != yte))
    assert 100 * np.mean(gaps) <= 1.5, gaps


def test_the_default_is_the_squared_hinge_svm_on_ritz_folds(moons):
    X, y = moons
    m = KernelProjectionMachine(sigma=0.5, random_state=0).fit(X, y)
    explicit = KernelProjectionMachine(sigma=0.5, formulation="svm", loss="squared_hinge", cv_basis="ritz",
                                       early_stopping=True, random_state=0).fit(X, y)
    assert m.formulation_ == "svm" and (m.n_components_, m.C_) == (explicit.n_components_, explicit.C_)
    np.testing.assert_array_equal(m.decision_function(X), explicit.decision_function(X))
    assert set(m.timings_) == {"data", "cv", "final_fit", "total"}
    with pytest.raises(ValueError, match="cv_basis='ritz' is an option of the SVM formulation"):
        KernelProjectionMachine(formulation="paper", cv_basis="ritz").fit(X, y)
