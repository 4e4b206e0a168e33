"""The KPM's ``formulation='svm'``: the soft-margin SVM restricted to S_D, along D."""

import numpy as np
import pytest
from sklearn.svm import SVC

from helpers import svm_dual_reference, svm_toy_problem
from kpm import KernelProjectionMachine
from kpm.hinge.svm_path import BIAS_SCALE, svm_path
from kpm.kernels import make_kernel
from kpm.spectral.basis import eigen_basis

#: This module tests the hinge formulation with a basis per fold (the previous default); the
#: default squared hinge on the training set's basis: tests/machine/test_default_svm.py.
HINGE = dict(loss="hinge", cv_basis="fold", early_stopping=False)
C = 1.0


@pytest.fixture(scope="module")
def problem():
    X, y, Xt = svm_toy_problem()
    kern = make_kernel("rbf", sigma=1.0)
    return X, y, Xt, kern(X), kern(Xt, X)


def _features(K):
    b = eigen_basis(K).truncate()
    sqrt_lam = np.sqrt(b.eigenvalues)
    return b, b.eigenvectors * sqrt_lam, sqrt_lam


def test_path_at_the_rank_is_the_kernel_svm(problem):
    X, y, Xt, K, Kt = problem
    ay = svm_dual_reference(K, y, C, BIAS_SCALE)
    b, Phi, sl = _features(K)
    p = svm_path(Phi, sl, y.astype(float), C, np.array([b.rank]), tol=1e-9, max_sweeps=100000)
    F = p.decision_values(b.features(Kt, b.rank, whiten=True))[:, 0]
    np.testing.assert_allclose(F, (Kt + BIAS_SCALE**2) @ ay, atol=1e-4)


def test_warm_started_path_equals_cold_solves(problem):
    _, y, _, K, _ = problem
    b, Phi, sl = _features(K)
    grid = np.array([2, 5, 10, 20])
    warm = svm_path(Phi, sl, y.astype(float), C, grid, tol=1e-9, max_sweeps=100000)
    for k, D in enumerate(grid):
        cold = svm_path(Phi, sl, y.astype(float), C, np.array([D]), tol=1e-9, max_sweeps=100000)
        np.testing.assert_allclose(warm.coef[k, :D], cold.coef[0, :D], atol=1e-6)
        assert warm.intercept[k] == pytest.approx(cold.intercept[0], abs=1e-6)


def test_estimator_at_the_rank_agrees_with_svc(problem):
    X, y, Xt, K, Kt = problem
    rank = eigen_basis(K).truncate().rank
    m = KernelProjectionMachine(sigma=1.0, formulation="svm", C=C, selection=rank, **HINGE).fit(X, y)
    assert m.n_components_ == rank and m.C_ == C
    # the estimator stops at LIBLINEAR's tolerance: close to the exact dual solution
    exact = (Kt + BIAS_SCALE**2) @ svm_dual_reference(K, y, C, BIAS_SCALE)
    np.testing.assert_allclose(m.decision_function(Xt), exact, atol=0.1)
    svc = SVC(C=C, kernel="precomputed").fit(K, y)
    np.testing.assert_array_equal(m.predict(Xt), svc.predict(Kt))


def test_cv_picks_the_first_minimum_of_the_d_c_grid(problem):
    X, y, *_ = problem
    kw = dict(sigma=1.0, formulation="svm", C=[10.0, 0.1, 1.0], c_selection="joint", random_state=3, **HINGE)
    m = KernelProjectionMachine(**kw).fit(X, y)
    m2 = KernelProjectionMachine(**kw).fit(X, y)
    assert (m.n_components_, m.C_) == (m2.n_components_, m2.C_)
    curve = m.selection_curve_
    assert sorted(set(curve["C"])) == [0.1, 1.0, 10.0]
    # kpm.machine.selection.select_cv: ties -> the smaller D, then the earlier model (the smaller C)
    best = np.flatnonzero(curve["cv_error"] == curve["cv_error"].min())
    i = best[np.lexsort((curve["C"][best], curve["D"][best]))[0]]
    assert (curve["C"][i], curve["D"][i]) == (m.C_, m.n_components_)
    np.testing.assert_array_equal(m.decision_function(X), m2.decision_function(X))


def test_one_c_answers_the_other_rules(problem):
    X, y, *_ = problem
    m = KernelProjectionMachine(sigma=1.0, formulation="svm", C=1.0, selection="penalty",
                                random_state=0, keep_paths=True).fit(X, y)
    assert m.select_dim("slope").n_components in m.selection_curve_["D"]
    assert np.all(np.isfinite(m.selection_curve_["clipped_risk"]))


def test_multiclass_one_vs_rest():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    m = KernelProjectionMachine(formulation="svm", C=1.0, cv_duplicates="split", random_state=0).fit(X, y)
    assert m.dual_coef_.shape == (3, len(y)) and m.score(X, y) > 0.9


@pytest.mark.parametrize("params, match", [
    (dict(formulation="l2"), "formulation must be one of"),
    (dict(formulation="svm", C=0.0), "C must be > 0"),
    (dict(formulation="svm", C=[]), "C must be a positive number"),
    (dict(formulation="svm", selection="penalty"), "selection must be 'cv'"),
    (dict(formulation="paper", cv_basis="ritz"), "cv_basis='ritz' is an option of the SVM formulation"),
    (dict(loss="l1"), "loss must be one of"),
    (dict(cv_basis="rows"), "cv_basis must be one of"),
])
def test_bad_parameters_are_refused(problem, params, match):
    X, y, *_ = problem
    with pytest.raises(ValueError, match=match):
        KernelProjectionMachine(**params).fit(X, y)


WIDE_C = [0.01, 0.1, 1.0, 10.0, 100.0]


def test_c_path_warm_start_equals_cold_solves(problem):
    from kpm.hinge.svm_path import svm_c_path

    _, y, _, K, _ = problem
    b, Phi, sl = _features(K)
    W, icpt = svm_c_path(Phi[:, :10], y.astype(float), WIDE_C, tol=1e-9, max_sweeps=100000)
    for k, C in enumerate(WIDE_C):
        cold = svm_path(Phi[:, :10], sl[:10], y.astype(float), C, np.array([10]), tol=1e-9, max_sweeps=100000)
        np.testing.assert_allclose(sl[:10] * W[k], cold.coef[0], atol=1e-5)
        assert icpt[k] == pytest.approx(cold.intercept[0], abs=1e-5)


def test_two_stage_choice_is_the_cv_argmin_by_hand(problem):
    """Stage one's curve and choice recomputed from scratch: the SVM on each fold's kernel
    features at the fold's largest D, then D by the CV curve of that C alone."""
    from sklearn.model_selection import StratifiedKFold

    from kpm.hinge.svm_path import svm_c_path

    X, y, *_ = problem
    folds = StratifiedKFold(5, shuffle=True, random_state=3)
    m = KernelProjectionMachine(sigma=1.0, formulation="svm", C=WIDE_C, c_selection="two-stage",
                                cv=folds, random_state=3, **HINGE).fit(X, y)
    kern = make_kernel("rbf", sigma=1.0)
    K = kern(X)
    grid_end = eigen_basis(K).truncate().rank
    wrong = np.zeros(len(WIDE_C))
    for tr, va in folds.split(X, y):
        b, Phi, sl = _features(K[np.ix_(tr, tr)])
        mm = min(grid_end, b.rank)
        Z = b.features(K[np.ix_(va, tr)], mm, whiten=True)
        # the solver at its default tolerance, as the estimator (its accuracy: the test above)
        W, icpt = svm_c_path(Phi[:, :mm], y[tr].astype(float), WIDE_C)
        F = (Z * sl[:mm]) @ W.T + icpt
        wrong += np.sum(np.where(F > 0, 1, -1) != y[va][:, None], axis=0)
    np.testing.assert_allclose(m.c_selection_curve_["cv_error"], wrong / len(y))
    assert m.C_ == WIDE_C[int(np.argmin(wrong))]
    curve = m.selection_curve_
    assert set(curve["C"]) == {m.C_}  # stage two: the chosen C's models only
    # the rule of the two-stage C selection: the largest D within one standard error of the
    # smallest CV error (a smaller D must beat the kernel SVM clearly)
    e = curve["cv_error"].min()
    within = curve["cv_error"] <= e + np.sqrt(e * (1 - e) / len(y)) + 1e-12
    assert m.n_components_ == curve["D"][within].max()


def test_two_stage_is_deterministic_and_joint_keeps_every_c(problem):
    X, y, *_ = problem
    kw = dict(sigma=1.0, formulation="svm", C=WIDE_C, random_state=3, **HINGE)
    a = KernelProjectionMachine(c_selection="two-stage", **kw).fit(X, y)
    b = KernelProjectionMachine(c_selection="two-stage", **kw).fit(X, y)
    assert (a.C_, a.n_components_) == (b.C_, b.n_components_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    joint = KernelProjectionMachine(c_selection="joint", **kw).fit(X, y)
    assert joint.c_selection_curve_ is None and len(set(joint.selection_curve_["C"])) == len(WIDE_C)


@pytest.mark.parametrize("params, match", [
    (dict(formulation="svm", c_selection="one-se"), "c_selection must be one of"),
    (dict(formulation="svm", c_selection=None), "c_selection must be one of"),
    (dict(formulation="svm", c_selection="two-stage", C=WIDE_C, selection="slope"), "selection must be 'cv'"),
])
def test_bad_c_selection_is_refused(problem, params, match):
    X, y, *_ = problem
    with pytest.raises(ValueError, match=match):
        KernelProjectionMachine(**params).fit(X, y)


def test_auto_formulation_is_the_svm_with_cv_and_the_paper_otherwise(problem):
    X, y, *_ = problem
    default = KernelProjectionMachine(sigma=1.0, random_state=3).fit(X, y)
    explicit = KernelProjectionMachine(sigma=1.0, formulation="svm", C=np.logspace(-2, 3, 11),
                                       c_selection="two-stage", random_state=3).fit(X, y)
    assert default.formulation_ == "svm" and default.C_ in np.logspace(-2, 3, 11)
    assert (default.n_components_, default.C_) == (explicit.n_components_, explicit.C_)
    np.testing.assert_array_equal(default.decision_function(X), explicit.decision_function(X))
    # the grid, then the values above it, tried only where its largest C wins (not here)
    np.testing.assert_allclose(default.c_selection_curve_["C"], np.logspace(-2, 6, 17))
    assert np.all(np.isnan(default.c_selection_curve_["cv_error"][11:]))
    # every other rule fits the paper's hinge LP, which has no C
    for kw in (dict(selection="slope"), dict(selection="penalty", penalty=0.01), dict(selection=3)):
        m = KernelProjectionMachine(sigma=1.0, random_state=3, **kw).fit(X, y)
        paper = KernelProjectionMachine(sigma=1.0, random_state=3, formulation="paper", **kw).fit(X, y)
        assert m.formulation_ == "paper" and m.C_ is None and "C" not in m.selection_curve_
        np.testing.assert_array_equal(m.decision_function(X), paper.decision_function(X))


def test_default_c_grid_follows_the_c_rule(problem):
    X, y, *_ = problem
    joint = KernelProjectionMachine(sigma=1.0, c_selection="joint", random_state=3).fit(X, y)
    assert sorted(set(joint.selection_curve_["C"])) == [0.1, 0.3, 1.0, 3.0, 10.0]
    # the paper's KPM ignores C and c_selection
    a = KernelProjectionMachine(sigma=1.0, formulation="paper", C=5.0, c_selection="joint",
                                random_state=3).fit(X, y)
    b = KernelProjectionMachine(sigma=1.0, formulation="paper", random_state=3).fit(X, y)
    assert a.formulation_ == "paper" and (a.n_components_, a.C_) == (b.n_components_, None)
