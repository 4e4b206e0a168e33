"""KernelProjectionMachine(basis=...): the exact basis while the kernel matrix fits the memory
budget, Nyström eigenfunctions beyond, with the same formulation and selection on both."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import kpm
from kpm import KernelProjectionMachine, NystroemKPM
from kpm.exceptions import KernelMemoryError


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(1300, 8, n_informative=5, random_state=3)
    return X[:300], y[:300], X[300:], y[300:], float(kpm.median_sigma(X[:300]))


def test_auto_takes_the_exact_basis_within_the_budget(data):
    X, y, Xt, _, s = data
    auto = KernelProjectionMachine(sigma=s, random_state=0).fit(X, y)
    exact = KernelProjectionMachine(sigma=s, random_state=0, basis="exact").fit(X, y)
    assert auto.basis_ == exact.basis_ == "exact"
    assert (auto.n_components_, auto.C_) == (exact.n_components_, exact.C_)
    np.testing.assert_array_equal(auto.decision_function(Xt), exact.decision_function(Xt))


def test_auto_takes_the_nystroem_basis_beyond_the_budget():
    X, y = make_classification(2050, 8, n_informative=5, random_state=3)
    X, y, Xt = X[:1050], y[:1050], X[1050:]
    s = kpm.median_sigma(X)
    with kpm.config_context(max_kernel_bytes=8 * 1049 * 1049):  # one sample too many for the exact basis
        with pytest.raises(KernelMemoryError):
            KernelProjectionMachine(sigma=s, random_state=0, basis="exact").fit(X, y)
        auto = KernelProjectionMachine(sigma=s, random_state=0, n_landmarks=100).fit(X, y)
    assert auto.basis_ == "nystroem"
    nys = KernelProjectionMachine(sigma=s, random_state=0, n_landmarks=100, basis="nystroem").fit(X, y)
    same = NystroemKPM(100, sigma=s, random_state=0, formulation="auto", cv="auto", max_components=None).fit(X, y)
    assert auto.formulation_ == same.formulation_ == "svm"
    assert (auto.n_components_, auto.C_) == (nys.n_components_, nys.C_) == (same.n_components_, same.C_)
    assert auto.X_fit_.shape == (100, X.shape[1])  # the kernel expansion on the landmarks
    np.testing.assert_array_equal(auto.decision_function(Xt), same.decision_function(Xt))
    np.testing.assert_array_equal(auto.predict(Xt), same.predict(Xt))


def test_every_point_a_landmark_is_the_exact_basis_leave_one_out_fit(data):
    """With every training point a landmark the Nyström SVM features are the exact basis's
    (``sqrt(lambda_j) V_j`` up to signs): the same closed-form leave-one-out curves, the same D
    and C, the same function."""
    X, y, Xt, _, s = data
    exact = KernelProjectionMachine(sigma=s, random_state=0, basis="exact").fit(X, y)
    nys = KernelProjectionMachine(sigma=s, random_state=0, basis="nystroem", n_landmarks=len(X)).fit(X, y)
    assert nys.basis_ == "nystroem" and exact.basis_ == "exact"
    np.testing.assert_array_equal(nys.selection_curve_["D"], exact.selection_curve_["D"])
    np.testing.assert_allclose(nys.selection_curve_["cv_error"], exact.selection_curve_["cv_error"], atol=1e-12)
    np.testing.assert_allclose(nys.c_selection_curve_["cv_error"], exact.c_selection_curve_["cv_error"],
                               atol=1e-12)
    assert (nys.n_components_, nys.C_) == (exact.n_components_, exact.C_)
    np.testing.assert_allclose(nys.decision_function(Xt), exact.decision_function(Xt), atol=1e-6)


def test_nystroem_basis_accuracy_near_the_exact_basis():
    """2,000 training and 2,000 fresh test points: 400 landmarks lose at most one point of
    test accuracy against the exact basis."""
    X, y = make_classification(4000, 10, n_informative=6, random_state=1)
    X_tr, y_tr, X_te, y_te = X[:2000], y[:2000], X[2000:], y[2000:]
    s = kpm.median_sigma(X_tr)
    exact = KernelProjectionMachine(sigma=s, random_state=0, basis="exact").fit(X_tr, y_tr)
    nys = KernelProjectionMachine(sigma=s, random_state=0, basis="nystroem", n_landmarks=400).fit(X_tr, y_tr)
    assert nys.score(X_te, y_te) >= exact.score(X_te, y_te) - 0.01


def test_paper_formulation_on_the_nystroem_basis_is_the_nystroem_lp(data):
    X, y, Xt, _, s = data
    clf = KernelProjectionMachine(sigma=s, random_state=0, basis="nystroem", n_landmarks=60, max_components=20,
                                  formulation="paper").fit(X, y)
    ref = NystroemKPM(60, sigma=s, random_state=0, max_components=20, formulation="paper").fit(X, y)
    assert clf.formulation_ == "paper" and clf.C_ is None
    assert clf.n_components_ == ref.n_components_
    np.testing.assert_array_equal(clf.decision_function(Xt), ref.decision_function(Xt))


def test_path_methods_on_the_nystroem_basis(data):
    X, y, Xt, _, s = data
    clf = KernelProjectionMachine(sigma=s, random_state=0, basis="nystroem", n_landmarks=50,
                                  keep_paths=True).fit(X, y)
    assert clf.select_dim("cv").n_components in set(clf.selection_curve_["D"])
    with pytest.raises(AttributeError, match="exact basis"):
        clf.decision_function_path(Xt)
    lean = KernelProjectionMachine(sigma=s, random_state=0, basis="nystroem", n_landmarks=50).fit(X, y)
    with pytest.raises(AttributeError, match="keep_paths=True"):
        lean.select_dim("cv")


@pytest.mark.parametrize("params, what", [
    ({"kernel": "precomputed"}, "precomputed"),
    ({"kernel": ["rbf", "linear"]}, "list of kernels"),
    ({"centered": True}, "centered"),
])
def test_nystroem_basis_refuses_what_it_cannot_fit(data, params, what):
    X, y, _, _, s = data
    Xin = X @ X.T if params.get("kernel") == "precomputed" else X
    with pytest.raises(ValueError, match=what):
        KernelProjectionMachine(basis="nystroem", **params).fit(Xin, y)


def test_auto_keeps_the_exact_basis_where_nystroem_cannot_fit(data):
    """A precomputed kernel over the budget: the exact basis's memory error, not a Nyström fit."""
    X, y, _, _, _ = data
    with kpm.config_context(max_kernel_bytes=8 * 100 * 100):
        clf = KernelProjectionMachine(kernel="linear", centered=True)
        with pytest.raises(KernelMemoryError):
            clf.fit(X, y)


def test_nystroem_loo_needs_the_squared_hinge_svm(data):
    X, y, _, _, s = data
    with pytest.raises(ValueError, match="cv='loo'.*needs formulation='svm'"):
        NystroemKPM(50, sigma=s, cv="loo", formulation="paper").fit(X, y)
