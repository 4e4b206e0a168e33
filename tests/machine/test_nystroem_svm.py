"""NystroemKPM(formulation='svm', loss='hinge'): the soft-margin SVM on the Nyström
eigenfunctions, along D (the squared hinge's solver: tests/hinge/test_squared_hinge.py)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from helpers import svm_dual_reference, svm_toy_problem
from kpm import KernelProjectionMachine, NystroemKPM
from kpm.hinge.svm_path import BIAS_SCALE, svm_c_path, svm_path
from kpm.kernels import make_kernel
from kpm.machine import TWO_STAGE_MAX_SWEEPS
from kpm.machine import nystroem_eigenfunctions

C = 1.0
WIDE_C = [0.01, 0.1, 1.0, 10.0, 100.0]


@pytest.fixture(scope="module")
def problem():
    return svm_toy_problem()


def _all_landmarks(X, **kw):
    """Every training point a landmark (the Nyström kernel is then K), every D on the grid."""
    n = len(X)
    return NystroemKPM(n, sigma=1.0, max_components=n, n_components_grid=np.arange(1, n + 1), random_state=0,
                       formulation="svm", loss="hinge", **kw)


def _svm_features(est, X, D=None):
    """The SVM's features of the fitted model: eigenfunctions scaled by sqrt(lambda_j / m)."""
    D = est.projection_.shape[1] if D is None else D
    return est.transform_eigenfunctions(X, D) * np.sqrt(est.eigenvalues_[:D] / len(est.landmarks_))


def _rank(X):
    return len(nystroem_eigenfunctions(make_kernel("rbf", sigma=1.0), X)[0])


@pytest.mark.parametrize("D", [8, "rank"])
def test_all_landmarks_is_the_svm_on_the_kernel_features(problem, D):
    """With every point a landmark the scaled eigenfunctions have the kernel matrix as their
    Gram matrix; the model is the SVM on them (the same path by the solver: to rounding; the
    exact dual: to the solver's tolerance) and, at D = rank, the kernel SVM with kernel k + 1."""
    X, y, Xt = problem
    kern = make_kernel("rbf", sigma=1.0)
    D = _rank(X) if D == "rank" else D
    m = _all_landmarks(X, C=C, selection=D).fit(X, y)
    assert m.n_components_ == D and m.C_ == C and m.coef_.shape == (D,)
    Phi, Phi_t = _svm_features(m, X, D), _svm_features(m, Xt, D)
    f = m.decision_function(Xt)
    # (the default c_selection='two-stage' allows its paths TWO_STAGE_MAX_SWEEPS per D)
    p = svm_path(Phi, np.ones(D), y.astype(float), C, m.n_components_grid_, max_sweeps=TWO_STAGE_MAX_SWEEPS)
    np.testing.assert_allclose(f, Phi_t @ p.coef[-1] + p.intercept[-1], rtol=1e-6, atol=1e-9)
    # the solver stops at LIBLINEAR's tolerance: within 0.1 of the exact solution (measured 0.02)
    exact = (Phi_t @ Phi.T + BIAS_SCALE**2) @ svm_dual_reference(Phi @ Phi.T, y, C, BIAS_SCALE)
    np.testing.assert_allclose(f, exact, atol=0.1)
    if D == _rank(X):
        K, Kt = kern(X), kern(Xt, X)
        np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-8)  # the Nyström kernel is K
        svc = SVC(C=C, kernel="precomputed").fit(K + BIAS_SCALE**2, y)
        # SVC leaves its own intercept free (ours is the constant feature's weight): measured 0.011
        np.testing.assert_allclose(f, svc.decision_function(Kt + BIAS_SCALE**2), atol=0.1)
        np.testing.assert_array_equal(m.predict(Xt), svc.predict(Kt + BIAS_SCALE**2))


@pytest.mark.parametrize("D", [8, "rank"])
def test_all_landmarks_equal_the_uncentred_exact_kpm(problem, D):
    """NystroemKPM's eigenfunctions are those of the *uncentred* landmark Gram matrix: with
    every point a landmark its SVM equals KernelProjectionMachine(formulation='svm',
    centered=False) on the same D grid (the SVM's Gram matrix is K_D in both); the centred
    KPM's subspaces are others."""
    X, y, Xt = problem
    D = _rank(X) if D == "rank" else D
    nys = _all_landmarks(X, C=C, selection=D).fit(X, y)
    kw = dict(sigma=1.0, formulation="svm", loss="hinge", C=C, n_components_grid=list(range(1, len(X) + 1)),
              eigen_solver="dense")
    exact = KernelProjectionMachine(selection=D, centered=False, **kw).fit(X, y)
    f = nys.decision_function(Xt)
    np.testing.assert_allclose(f, exact.decision_function(Xt), rtol=1e-6, atol=1e-6 * np.abs(f).max())
    if D == 8:
        centred = KernelProjectionMachine(selection=D, centered=True, **kw).fit(X, y)
        assert np.abs(centred.decision_function(Xt) - f).max() > 0.1  # measured 0.36


def _hand_fold_errors(est, X, y, folds, Cs):
    """The pooled CV errors per (C, D) recomputed on the fitted features: the SVM path of
    every training fold (same rows, same grid), counted on its validation rows."""
    Phi = _svm_features(est, X)
    grid = est.n_components_grid_
    wrong = np.zeros((len(Cs), len(grid)))
    for tr, va in folds.split(X, y):
        for i, c in enumerate(Cs):
            p = svm_path(Phi[tr], np.ones(Phi.shape[1]), y[tr].astype(float), c, grid)
            F = p.decision_values(Phi[va])  # (n_va, n_grid)
            wrong[i] += (np.where(np.round(F, 9) > 0, 1, -1) != y[va][:, None]).sum(axis=0)
    return wrong / len(y)


KW = dict(sigma=1.0, max_components=20, formulation="svm", loss="hinge", early_stopping=False, random_state=3)


def test_joint_cv_picks_the_first_minimum_over_d_and_c(problem):
    X, y, _ = problem
    folds = StratifiedKFold(5, shuffle=True, random_state=3)
    Cs = [10.0, 0.1, 1.0]
    m = NystroemKPM(30, C=Cs, c_selection="joint", cv=folds, keep_paths=True, **KW).fit(X, y)
    curve = m.selection_curve_
    assert list(np.unique(curve["C"])) == sorted(Cs) and np.all(curve["kernel"] == 0)
    np.testing.assert_allclose(curve["cv_error"], _hand_fold_errors(m, X, y, folds, sorted(Cs)).ravel())
    # the engine's CV rule (kpm.machine.selection.select_cv): ties -> the smaller D, then the earlier
    # model, i.e. the smaller C (these data have a tie, (C, D) = (1, 14) and (10, 4))
    best = np.flatnonzero(curve["cv_error"] == curve["cv_error"].min())
    i = best[np.lexsort((curve["C"][best], curve["D"][best]))[0]]
    assert len(best) > 1 and (curve["C"][i], curve["D"][i]) == (m.C_, m.n_components_)
    np.testing.assert_allclose(m.cv_error_, curve["cv_error"][curve["C"] == m.C_])
    assert m.c_selection_curve_ is None
    choice = m.select_dim("cv")
    assert (choice.n_components, sorted(Cs)[choice.kernel_index]) == (m.n_components_, m.C_)


def test_two_stage_picks_c_by_the_cv_error_at_the_largest_d(problem):
    X, y, _ = problem
    folds = StratifiedKFold(5, shuffle=True, random_state=3)
    m = NystroemKPM(30, C=WIDE_C, c_selection="two-stage", cv=folds, keep_paths=True, **KW).fit(X, y)
    Phi = _svm_features(m, X)
    wrong = np.zeros(len(WIDE_C))
    for tr, va in folds.split(X, y):
        W, b = svm_c_path(Phi[tr], y[tr].astype(float), WIDE_C, max_sweeps=TWO_STAGE_MAX_SWEEPS)
        wrong += (np.where(Phi[va] @ W.T + b > 0, 1, -1) != y[va][:, None]).sum(axis=0)
    cc = m.c_selection_curve_
    np.testing.assert_allclose(cc["cv_error"], wrong / len(y))
    np.testing.assert_array_equal(cc["C"], WIDE_C)
    assert m.C_ == WIDE_C[int(np.argmin(cc["cv_error"]))]
    curve = m.selection_curve_
    assert set(curve["C"]) == {m.C_}  # stage two: the chosen C's models only
    e = curve["cv_error"].min()  # D: the largest within one standard error of the minimum
    assert m.n_components_ == curve["D"][curve["cv_error"] <= e + np.sqrt(e * (1 - e) / len(y)) + 1e-12].max()


def test_multiclass_one_vs_rest_and_select_dim(problem):
    X, _, Xt = problem
    y3 = np.array(["a", "b", "c"])[(X[:, 0] > 0.3).astype(int) + (X[:, 1] > 0).astype(int)]
    m = NystroemKPM(30, C=C, selection="penalty", penalty=0.002, keep_paths=True, **KW).fit(X, y3)
    D = m.n_components_
    assert m.coef_.shape == (3, D) and m.intercept_.shape == (3,) and m.dual_coef_.shape == (3, 30)
    F = m.decision_function(Xt)
    assert F.shape == (len(Xt), 3)
    np.testing.assert_array_equal(m.predict(Xt), m.classes_[np.argmax(np.round(F, 9), axis=1)])
    np.testing.assert_allclose(F, m.transform_eigenfunctions(Xt) @ m.coef_.T + m.intercept_, atol=1e-9)
    assert len(m.train_risk_) == int(np.searchsorted(m.n_components_grid_, D)) + 1
    assert np.all(np.isfinite(m.selection_curve_["clipped_risk"]))
    assert len(m.lp_stats_["sweeps"]) == 3
    assert m.select_dim("penalty").n_components == D
    assert m.select_dim("slope").n_components in m.selection_curve_["D"]
    with pytest.raises(ValueError, match="needs the cross-validation curves"):
        m.select_dim("cv")


def test_paper_formulation_has_no_c(problem):
    X, y, _ = problem
    m = NystroemKPM(30, sigma=1.0, max_components=10, selection=4, random_state=0).fit(X, y)
    assert m.C_ is None and m.c_selection_curve_ is None and "C" not in m.selection_curve_


def test_dask_array_without_client_equals_numpy(problem):
    import dask.array as da

    X, y, Xt = problem
    kw = dict(C=[0.1, 1.0], cv=3, **KW)
    a = NystroemKPM(30, **kw).fit(X, y)
    b = NystroemKPM(30, **kw).fit(da.from_array(X, chunks=(25, 2)), y)
    assert (a.C_, a.n_components_) == (b.C_, b.n_components_)
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("params, match", [
    (dict(formulation="l2"), "formulation must be one of"),
    (dict(formulation="svm", C=0.0), "C must be > 0"),
    (dict(formulation="svm", C=[]), "C must be a positive number"),
    (dict(formulation="svm", C=[0.1, 1.0], selection="penalty"), "selection must be 'cv'"),
    (dict(formulation="svm", C=[0.1, 1.0], selection=3), "selection must be 'cv'"),
    (dict(formulation="svm", c_selection="one-se"), "c_selection must be one of"),
])
def test_bad_parameters_are_refused(problem, params, match):
    X, y, _ = problem
    with pytest.raises(ValueError, match=match):
        NystroemKPM(30, max_components=10, **params).fit(X, y)


def test_hinge_svm_with_a_dask_client_is_refused(problem):
    """With client= the SVM's final fit is streamed by Newton steps: the squared hinge only
    (the squared hinge's streamed fit: tests/machine/test_streamed.py)."""
    from distributed import Client

    X, y, _ = problem
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        with pytest.raises(ValueError, match="formulation='svm' with client= fits the squared hinge"):
            NystroemKPM(30, max_components=10, formulation="svm", loss="hinge", C=1.0, client=client).fit(X, y)


def test_clone_and_get_params_carry_the_svm_parameters():
    est = NystroemKPM(30, formulation="svm", C=[0.5, 2.0], c_selection="two-stage")
    params = clone(est).get_params()
    assert (params["formulation"], params["C"], params["c_selection"]) == ("svm", [0.5, 2.0], "two-stage")
    default, kpm_default = NystroemKPM().get_params(), KernelProjectionMachine().get_params()
    assert (default["formulation"], default["C"], default["c_selection"]) == ("paper", None, "two-stage")
    assert (kpm_default["C"], kpm_default["c_selection"]) == (None, "two-stage")


def test_auto_formulation_and_the_default_c_grid(problem):
    X, y, _ = problem
    kw = dict(sigma=1.0, max_components=20, random_state=3)
    auto = NystroemKPM(30, formulation="auto", **kw).fit(X, y)
    svm = NystroemKPM(30, formulation="svm", C=np.logspace(-2, 3, 11), **kw).fit(X, y)
    assert auto.formulation_ == "svm" and (auto.C_, auto.n_components_) == (svm.C_, svm.n_components_)
    # the grid, then the values above it, tried only where its largest C wins (not here)
    np.testing.assert_allclose(auto.c_selection_curve_["C"], np.logspace(-2, 6, 17))
    assert np.all(np.isnan(auto.c_selection_curve_["cv_error"][11:]))
    joint = NystroemKPM(30, formulation="svm", c_selection="joint", **kw).fit(X, y)
    assert sorted(set(joint.selection_curve_["C"])) == [0.1, 0.3, 1.0, 3.0, 10.0]
    slope = NystroemKPM(30, formulation="auto", selection="slope", **kw).fit(X, y)
    assert slope.formulation_ == "paper" and slope.C_ is None


@parametrize_with_checks(
    [NystroemKPM(10, cv=2, max_components=6, formulation="svm", C=[0.1, 1.0], random_state=0)],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data":
        "the landmarks are drawn without regard to the weights, and the CV folds of repeated and of "
        "weighted samples differ: the two fits have different bases"},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
