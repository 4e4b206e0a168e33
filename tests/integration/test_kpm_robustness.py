"""KernelProjectionMachine on data nobody prepared: no crash, no silent degenerate model.

Each test reproduces a failure seen on ordinary data (unscaled features, a width far
from the data's scale, duplicated samples, memory layouts, bad precomputed kernels).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, make_moons
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedGroupKFold, train_test_split

import kpm
from kpm import DegenerateKernelWarning, DegenerateModelWarning, KernelProjectionMachine, LPSolverError
from kpm.kernels import median_sigma


#: The papers' LP and the default (with D by CV: the SVM restricted to S_D).
FORMULATIONS = ["paper", "auto"]


@pytest.fixture(scope="module")
def breast_cancer_split():
    X, y = load_breast_cancer(return_X_y=True)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["auto", "simplex", "highs"])
def test_unscaled_breast_cancer_fits_and_says_why(breast_cancer_split, solver):
    # sigma = 3 on unscaled features (median distance ~460): the kernel matrix is nearly
    # the identity and the exact LP path needs coefficients up to 1e30, which every
    # solver failed on with HiGHS 1.15 (LPSolverError at D = 13..100); HiGHS 1.16 solves
    # some of them. Either way the fit succeeds, names the degenerate kernel, and any
    # dimension where no solver succeeded is reported, not raised.
    Xtr, Xte, ytr, yte = breast_cancer_split
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = KernelProjectionMachine(sigma=3.0, random_state=0, lp_solver=solver, formulation="paper").fit(Xtr, ytr)
    kinds = {w.category for w in caught}
    assert DegenerateKernelWarning in kinds
    assert np.all(np.isfinite(m.decision_function(Xte)))
    assert (ConvergenceWarning in kinds) == bool(m.lp_failures_)
    if m.lp_failures_:
        _assert_failures_reported(m, caught)


def _assert_failures_reported(m, caught):
    first = min(f["dim"] for f in m.lp_failures_)
    assert all(f["dim"] > m.n_components_ for f in m.lp_failures_)
    assert m.selection_curve_["D"].max() < first
    message = next(str(w.message) for w in caught if w.category is ConvergenceWarning)
    assert f"D={first}" in message


@pytest.mark.parametrize("solver", ["auto", "simplex", "highs"])
def test_solver_failure_ends_the_path_loudly(monkeypatch, solver):
    # the safety net, made deterministic: every solver fails from D = 6 on
    from kpm.hinge import lp_path as _lp_path

    original = _lp_path.HingeLP.solve

    def failing(self):
        if self.n_cols >= 6:
            raise LPSolverError(f"simulated failure at D={self.n_cols}")
        return original(self)

    monkeypatch.setattr(_lp_path.HingeLP, "solve", failing)
    X, y = make_moons(120, noise=0.3, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = KernelProjectionMachine(sigma=0.5, random_state=0, lp_solver=solver, early_stopping=False, formulation="paper").fit(X, y)
    assert m.lp_failures_ and min(f["dim"] for f in m.lp_failures_) == 6
    assert all("simulated failure" in f["error"] for f in m.lp_failures_)
    _assert_failures_reported(m, caught)
    assert m.n_components_ <= 5 and np.all(np.isfinite(m.decision_function(X)))


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_one_class_model_warns(breast_cancer_split, formulation):
    Xtr, _, ytr, _ = breast_cancer_split
    with pytest.warns(DegenerateModelWarning, match="predicts the single class"):
        m = KernelProjectionMachine(sigma=3.0, random_state=0, lp_solver="simplex", formulation=formulation).fit(Xtr, ytr)
    assert len(np.unique(m.predict(Xtr))) == 1


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.slow
@pytest.mark.parametrize("repeat", range(3))
def test_unseeded_fits_never_raise(breast_cancer_split, repeat, formulation):
    # sigma = 2, random_state=None failed one run in three (the CV folds decide)
    Xtr, _, ytr, _ = breast_cancer_split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        KernelProjectionMachine(sigma=2.0, formulation=formulation).fit(Xtr, ytr)


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.slow
def test_grid_search_scores_are_finite(breast_cancer_split, formulation):
    Xtr, _, ytr, _ = breast_cancer_split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(
            KernelProjectionMachine(random_state=0, formulation=formulation), {"sigma": [2.0, 3.0, 300.0]}, cv=3, error_score="raise"
        ).fit(Xtr, ytr)
    assert np.all(np.isfinite(gs.cv_results_["mean_test_score"]))
    assert gs.best_params_["sigma"] == 300.0


def test_every_solver_failing_ends_the_path_loudly(monkeypatch):
    X, y = make_moons(120, noise=0.3, random_state=0)
    real_solve = kpm.hinge.lp_path.HingeLP.solve

    def failing_solve(self):
        if self.n_cols >= 5:
            raise LPSolverError("simulated failure of every solver")
        return real_solve(self)

    monkeypatch.setattr(kpm.hinge.lp_path.HingeLP, "solve", failing_solve)
    for selection in ("cv", "penalty", "slope", 8):
        with pytest.warns(ConvergenceWarning, match="D=5"):
            m = KernelProjectionMachine(sigma=0.5, selection=selection, random_state=0, formulation="paper").fit(X, y)
        assert m.n_components_ <= 4
        assert m.selection_curve_["D"].max() == 4
        assert {f["dim"] for f in m.lp_failures_} == {5}
        assert m.lp_failures_[0]["error"].startswith("simulated failure of every solver [the largest coefficient")
    with pytest.warns(ConvergenceWarning):
        m = KernelProjectionMachine(sigma=0.5, early_stopping=True, random_state=0, formulation="paper").fit(X, y)
    assert m.n_components_ <= 4


def test_no_failures_recorded_on_ordinary_data():
    X, y = make_moons(200, noise=0.3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = KernelProjectionMachine(sigma=0.5, random_state=0, formulation="paper").fit(X, y)
    assert m.lp_failures_ == []


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("make", ["fortran", "list", "dataframe", "strided"])
def test_memory_layout_and_container_give_identical_models(make, formulation):
    X, y = load_breast_cancer(return_X_y=True)
    X = (X[:200] - X[:200].mean(axis=0)) / X[:200].std(axis=0)
    y = y[:200]
    if make == "fortran":
        other = np.asfortranarray(X)
    elif make == "list":
        other = X.tolist()
    elif make == "strided":
        other = np.repeat(X, 2, axis=1)[:, ::2]
    else:
        pd = pytest.importorskip("pandas")
        other = pd.DataFrame({f"f{j}": X[:, j] for j in range(X.shape[1])})
    sigma = median_sigma(X)
    a = KernelProjectionMachine(sigma=sigma, random_state=0, formulation=formulation).fit(X, y)
    b = KernelProjectionMachine(sigma=sigma, random_state=0, formulation=formulation).fit(other, y)
    assert a.n_components_ == b.n_components_
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.intercept_ == b.intercept_
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(other))


def _copies(seed):
    X, y = make_moons(200, noise=0.3, random_state=seed)
    Xt, yt = make_moons(2000, noise=0.3, random_state=100 + seed)
    return X, y, np.repeat(X, 10, axis=0), np.repeat(y, 10), Xt, yt


@pytest.mark.parametrize("formulation, cv", [("paper", "auto"), ("auto", 5)])
def test_duplicated_samples_warn_by_default_with_k_folds(formulation, cv):
    _, _, Xd, yd, _, _ = _copies(0)
    with pytest.warns(UserWarning, match="cv_duplicates='group'"):
        KernelProjectionMachine(sigma=0.5, max_components=20, random_state=0, formulation=formulation, cv=cv).fit(Xd[:300], yd[:300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelProjectionMachine(sigma=0.5, max_components=20, random_state=0, cv_duplicates="split", formulation=formulation, cv=cv).fit(Xd[:300], yd[:300])


def test_the_leave_one_out_default_leaves_copies_out_together_without_a_warning():
    _, _, Xd, yd, _, _ = _copies(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        default = KernelProjectionMachine(sigma=0.5, max_components=20, random_state=0).fit(Xd[:300], yd[:300])
    group = KernelProjectionMachine(sigma=0.5, max_components=20, random_state=0, cv_duplicates="group").fit(Xd[:300], yd[:300])
    split = KernelProjectionMachine(sigma=0.5, max_components=20, random_state=0, cv_duplicates="split").fit(Xd[:300], yd[:300])
    np.testing.assert_array_equal(default.selection_curve_["cv_error"], group.selection_curve_["cv_error"])
    assert not np.array_equal(default.selection_curve_["cv_error"], split.selection_curve_["cv_error"])


@pytest.mark.slow
def test_grouped_folds_undo_the_bias_of_copies():
    # 200 distinct points x 10 copies: copies on both sides of a fold make CV pick D ~ 30
    # (test accuracy 0.86 against 0.91 on the distinct points); grouped folds do not
    X, y, Xd, yd, Xt, yt = _copies(0)
    distinct = KernelProjectionMachine(sigma=0.5, random_state=0, formulation="paper").fit(X, y).score(Xt, yt)
    split = KernelProjectionMachine(sigma=0.5, random_state=0, cv_duplicates="split", formulation="paper").fit(Xd, yd)
    group = KernelProjectionMachine(sigma=0.5, random_state=0, cv_duplicates="group", formulation="paper").fit(Xd, yd)
    assert group.score(Xt, yt) >= distinct - 0.01
    assert group.score(Xt, yt) >= split.score(Xt, yt) + 0.02
    assert group.n_components_ < split.n_components_


def test_grouped_folds_receive_the_duplicate_groups():
    _, _, Xd, yd, _, _ = _copies(1)
    Xd, yd = Xd[:400], yd[:400]  # 40 distinct points, 10 copies each
    seen = []

    class Recording(StratifiedGroupKFold):
        def split(self, X, y=None, groups=None):
            seen.append(groups)
            return super().split(X, y, groups)

    KernelProjectionMachine(sigma=0.5, max_components=10, cv=Recording(4), cv_duplicates="group", formulation="paper").fit(Xd, yd)
    groups = seen[0]
    assert len(np.unique(groups)) == 40
    for tr, va in Recording(4).split(Xd, yd, groups):
        assert not set(groups[tr]) & set(groups[va])


def test_bad_cv_duplicates_option():
    X, y = make_moons(40, random_state=0)
    with pytest.raises(ValueError, match="cv_duplicates must be one of"):
        KernelProjectionMachine(cv_duplicates="yes", formulation="paper").fit(X, y)


def _gram(n=30, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return X @ X.T + 1.0, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize(
    "corrupt, match",
    [
        (lambda K: K + np.triu(np.full_like(K, 0.5), 1), "not symmetric"),
        (lambda K: K - 20.0 * np.eye(len(K)), "not positive semi-definite"),
        (lambda K: -K - np.eye(len(K)), "largest eigenvalue"),
        (lambda K: np.zeros_like(K), "is zero"),
        (lambda K: K[:, :-1], "square"),
        (lambda K: np.where(np.eye(len(K)) > 0, np.nan, K), "NaN"),
    ],
)
def test_bad_precomputed_kernels_are_rejected(corrupt, match, formulation):
    K, y = _gram()
    with pytest.raises(ValueError, match=match):
        KernelProjectionMachine(kernel="precomputed", max_components=3, formulation=formulation).fit(corrupt(K), y)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_precomputed_kernel_at_predict_is_checked(formulation):
    K, y = _gram()
    m = KernelProjectionMachine(kernel="precomputed", max_components=3, cv=3, random_state=0, formulation=formulation).fit(K, y)
    with pytest.raises(ValueError, match="columns|features"):
        m.predict(K[:, :-2])
    with pytest.raises(ValueError, match="NaN"):
        m.predict(np.where(K > 5, np.nan, K))


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("scale", [2.0**-300, 2.0**300])
def test_tiny_and_huge_magnitudes_give_the_same_model(scale, formulation):
    # powers of two: the scaled arithmetic is exact, so the model must be the same
    X, y = make_moons(80, noise=0.2, random_state=0)
    ref = KernelProjectionMachine(sigma="median", max_components=10, random_state=0, formulation=formulation).fit(X, y)
    for params in ({"sigma": "median"}, {}):
        m = KernelProjectionMachine(max_components=10, random_state=0, **params, formulation=formulation).fit(X * scale, y)
        ref = KernelProjectionMachine(max_components=10, random_state=0, **params, formulation=formulation).fit(X, y)
        assert m.n_components_ == ref.n_components_
        np.testing.assert_array_equal(m.decision_function(X * scale), ref.decision_function(X))


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.parametrize("scale", [1e-160, 1e160])
@pytest.mark.parametrize("params", [{"sigma": "median"}, {}])
def test_unrepresentable_widths_fail_clearly(scale, params, formulation):
    # widths of ~1e+-160 give gamma = 1/(2 sigma^2) outside float64
    X, y = make_moons(80, noise=0.2, random_state=0)
    with pytest.raises(ValueError, match="float64"):
        KernelProjectionMachine(max_components=10, **params, formulation=formulation).fit(X * scale, y)


@pytest.mark.parametrize("formulation", FORMULATIONS)
def test_callable_kernel_matrices_are_checked_like_precomputed_ones(formulation):
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)

    def not_psd(A, B):
        return np.cos(3 * (A[:, :1] - B[:, :1].T)) - 0.9 * np.sign(A[:, :1] @ B[:, :1].T)

    with pytest.raises(ValueError, match="callable kernel is not positive semi-definite"):
        KernelProjectionMachine(kernel=not_psd, max_components=5, formulation=formulation).fit(X, y)
    with pytest.raises(ValueError, match="not symmetric"):
        KernelProjectionMachine(kernel=lambda A, B: A @ B.T + A[:, :1] - 0 * B[:, :1].T, max_components=5, formulation=formulation).fit(X, y)


@pytest.mark.parametrize("param, value", [("centered", "no"), ("early_stopping", None), ("n_jobs", 1.5), ("n_jobs", 0)])
def test_flags_and_n_jobs_are_validated(param, value):
    X, y = make_moons(40, random_state=0)
    with pytest.raises(ValueError, match=param):
        KernelProjectionMachine(max_components=5, **{param: value}, formulation="paper").fit(X, y)
