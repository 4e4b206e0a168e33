"""KernelProjectionMachine: scikit-learn conformance, accuracy, selection rules, bad input."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_moons
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from kpm import KernelProjectionMachine
from kpm.machine.selection import select_cv, select_penalty, slope_heuristic
from helpers import two_gaussians_in_500_dimensions


@parametrize_with_checks(
    [
        KernelProjectionMachine(random_state=0),  # the default: the SVM in S_D, C and D by leave-one-out
        KernelProjectionMachine(cv=5, random_state=0),  # the same SVM, C and D by 5 Rayleigh-Ritz folds
        KernelProjectionMachine(max_components=6, cv=3, random_state=0, formulation="paper"),
        KernelProjectionMachine(selection="slope", random_state=0, formulation="paper"),
        # a cap that binds: the checks' data have kernel matrices of rank 4 (16 samples, 4
        # distinct), where max_components=5 stops at the rank
        KernelProjectionMachine(max_components=5, random_state=0),
    ],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(400, noise=0.3, random_state=0)
    Xt, yt = make_moons(2000, noise=0.3, random_state=1)
    return X, y, Xt, yt


@pytest.fixture(scope="module")
def moons_cv(moons):
    X, y, _, _ = moons
    return KernelProjectionMachine(sigma=0.5, max_components=60, random_state=0, formulation="paper",
                                   keep_paths=True).fit(X, y)


def test_moons_close_to_cv_tuned_svc(moons, moons_cv):
    X, y, Xt, yt = moons
    kpm_err = np.mean(moons_cv.predict(Xt) != yt)
    svc = GridSearchCV(SVC(gamma=1 / (2 * 0.5**2)), {"C": np.logspace(-2, 3, 30)}, cv=5).fit(X, y)
    svc_err = np.mean(svc.predict(Xt) != yt)
    assert kpm_err <= svc_err + 0.015, (kpm_err, svc_err)


def test_learned_attributes_and_expansion(moons, moons_cv):
    X, y, Xt, _ = moons
    m = moons_cv
    curve = m.selection_curve_
    assert set(curve) >= {"D", "cv_error", "hinge_risk", "clipped_risk", "criterion"}
    assert m.n_components_ == curve["D"][select_cv(curve["D"], curve["cv_error"])]
    # the full-data path is solved up to the selected D for the cv rule
    solved = np.isfinite(curve["hinge_risk"])
    assert solved.sum() == len(m.path_dims_) == m.n_components_
    assert np.all(np.diff(curve["hinge_risk"][solved]) <= 1e-12)
    assert np.all(curve["clipped_risk"][solved] <= curve["hinge_risk"][solved] + 1e-12)
    assert m.dual_coef_.shape == (len(X),)
    assert m.eigenvalues_[0] >= m.eigenvalues_[-1] > 0
    # the kernel expansion equals the eigen-feature form of the selected D
    F = m.decision_function_path(Xt[:50])
    np.testing.assert_allclose(m.decision_function(Xt[:50]), F[:, m.n_components_ - 1], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(m.predict(Xt[:50]), m.predict_path(Xt[:50])[:, m.n_components_ - 1])
    # fixed D = the same function as the path's D
    fixed = KernelProjectionMachine(sigma=0.5, selection=m.n_components_, formulation="paper").fit(X, y)
    np.testing.assert_allclose(fixed.decision_function(Xt[:50]), F[:, m.n_components_ - 1], rtol=1e-6, atol=1e-6)


def test_penalty_and_slope_rules(moons):
    X, y, Xt, yt = moons
    slope = KernelProjectionMachine(sigma=0.5, selection="slope", max_components=60, formulation="paper").fit(X, y)
    c = slope.selection_curve_
    idx, lam_jump, _ = slope_heuristic(c["D"], c["clipped_risk"], 2.0)
    assert slope.slope_lambda_ == pytest.approx(lam_jump)
    assert slope.penalty_ == pytest.approx(2 * lam_jump)
    assert slope.n_components_ == c["D"][idx]
    fixed = KernelProjectionMachine(sigma=0.5, selection="penalty", penalty=0.01, max_components=60, formulation="paper").fit(X, y)
    c = fixed.selection_curve_
    assert fixed.n_components_ == c["D"][select_penalty(c["D"], c["clipped_risk"], 0.01)]
    np.testing.assert_allclose(c["criterion"], c["clipped_risk"] + 0.01 * c["D"])
    pcv = KernelProjectionMachine(sigma=0.5, selection="penalty", max_components=60, random_state=0, formulation="paper").fit(X, y)
    assert pcv.penalty_ > 0
    assert np.mean(pcv.predict(Xt) != yt) < 0.13
    assert np.mean(slope.predict(Xt) != yt) < 0.13


def test_early_stopping_lockstep_matches_per_fold_paths(moons, moons_cv):
    X, y, _, _ = moons
    m = KernelProjectionMachine(sigma=0.5, max_components=60, early_stopping=True, random_state=0, formulation="paper").fit(X, y)
    a, b = moons_cv.selection_curve_["cv_error"], m.selection_curve_["cv_error"]
    n = min(len(a), len(b))
    np.testing.assert_array_equal(a[:n], b[:n])  # the same folds, the same paths
    assert len(b) <= 2 * m.n_components_ + 21
    assert m.n_components_ == moons_cv.n_components_


@pytest.mark.slow
def test_lp_solvers_give_the_same_model(moons, moons_cv):
    # the specialised simplex (default) and HiGHS solve the same LPs. Below zero training
    # risk the LP solutions on these folds are unique, so the CV curves agree there; the
    # folds reach zero risk at D = 46..55, where the LP has many optimal solutions (with
    # huge coefficients) and the two solvers return different ones
    X, y, Xt, _ = moons
    highs = KernelProjectionMachine(sigma=0.5, max_components=60, random_state=0, lp_solver="highs", formulation="paper").fit(X, y)
    assert moons_cv.lp_fallbacks_ == 0 and highs.lp_fallbacks_ == 0
    a, b = moons_cv.selection_curve_["cv_error"], highs.selection_curve_["cv_error"]
    np.testing.assert_array_equal(a[:45], b[:45])
    np.testing.assert_allclose(moons_cv.selection_curve_["hinge_risk"], highs.selection_curve_["hinge_risk"],
                               rtol=1e-9, atol=1e-12)
    assert moons_cv.n_components_ == highs.n_components_
    np.testing.assert_allclose(moons_cv.decision_function(Xt), highs.decision_function(Xt), atol=1e-6)
    with pytest.raises(ValueError, match="lp_solver"):
        KernelProjectionMachine(selection=3, lp_solver="glpk", formulation="paper").fit(X, y)


def test_dim_grid(moons):
    X, y, Xt, yt = moons
    m = KernelProjectionMachine(sigma=0.5, n_components_grid=[2, 4, 8, 16, 32], random_state=0, formulation="paper").fit(X, y)
    assert set(m.selection_curve_["D"]) <= {2, 4, 8, 16, 32}
    assert m.n_components_ in (2, 4, 8, 16, 32)
    full = KernelProjectionMachine(sigma=0.5, selection=m.n_components_, formulation="paper").fit(X, y)
    np.testing.assert_allclose(m.decision_function(Xt[:30]), full.decision_function(Xt[:30]), atol=1e-6)
    auto = KernelProjectionMachine(sigma=0.5, n_components_grid="auto", selection="slope", formulation="paper").fit(X, y)
    D = auto.selection_curve_["D"]
    assert np.all(D[:20] == np.arange(1, 21)) and np.all(np.diff(D) >= 1)
    with pytest.raises(ValueError, match="n_components_grid"):
        KernelProjectionMachine(n_components_grid="fine", selection=3, formulation="paper").fit(X, y)


def test_multiclass_and_kernel_list():
    X, y = load_iris(return_X_y=True)
    m = KernelProjectionMachine(sigma=1.0, max_components=30, random_state=0, formulation="paper").fit(X, y)
    assert m.dual_coef_.shape == (3, len(X))
    assert m.decision_function(X).shape == (len(X), 3)
    assert m.score(X, y) > 0.9
    # kernel list: an absurdly narrow width cannot win against a sensible one
    mk = KernelProjectionMachine(
        kernel=[{"kernel": "rbf", "sigma": 0.01}, {"kernel": "rbf", "sigma": 1.0}],
        max_components=30,
        random_state=0, formulation="paper",
    ).fit(X, y)
    assert mk.kernel_index_ == 1
    assert mk.kernel_.sigma == pytest.approx(1.0)
    assert set(np.unique(mk.selection_curve_["kernel"])) == {0, 1}


def test_centered_and_precomputed(moons):
    X, y, Xt, _ = moons
    m = KernelProjectionMachine(sigma=0.5, centered=True, selection=8, formulation="paper", keep_paths=True).fit(X, y)
    F = m.decision_function_path(Xt[:40])
    np.testing.assert_allclose(m.decision_function(Xt[:40]), F[:, 7], rtol=1e-6, atol=1e-6)
    from kpm.kernels import make_kernel

    k = make_kernel("rbf", sigma=0.5)
    a = KernelProjectionMachine(sigma=0.5, selection=8, formulation="paper").fit(X, y)
    p = KernelProjectionMachine(kernel="precomputed", selection=8, formulation="paper").fit(k(X), y)
    np.testing.assert_allclose(a.decision_function(Xt[:40]), p.decision_function(k(Xt[:40], X)), atol=1e-8)


def test_bad_input(moons):
    X, y, _, _ = moons
    with pytest.raises(ValueError, match="one class"):
        KernelProjectionMachine(selection=3, formulation="paper").fit(X, np.ones(len(y)))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelProjectionMachine(selection=3, formulation="paper").fit(Xn, y)
    # max_components above the rank stops at the rank (test_max_components_above_the_rank...)
    assert KernelProjectionMachine(kernel="linear", max_components=5, formulation="paper").fit(X, y).n_components_ <= 2
    with pytest.raises(ValueError, match="larger than"):
        KernelProjectionMachine(kernel="linear", selection=4, formulation="paper").fit(X, y)
    with pytest.raises(ValueError, match="selection"):
        KernelProjectionMachine(selection="aic", formulation="paper").fit(X, y)
    with pytest.raises(ValueError, match="penalty"):
        KernelProjectionMachine(selection="penalty", penalty=-1.0, formulation="paper").fit(X, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        KernelProjectionMachine(selection=3, formulation="paper").fit(X, np.linspace(0, 1, len(y)))
    # an unstratified splitter on sorted labels leaves a fold with one class
    order = np.argsort(y)
    with pytest.raises(ValueError, match="fold"):
        KernelProjectionMachine(sigma=0.5, cv=KFold(2), max_components=5, formulation="paper").fit(X[order], y[order])


@pytest.mark.slow
def test_extend_path_and_figure(moons, tmp_path):
    import matplotlib.pyplot as plt

    from kpm.plotting import plot_selection_curve as selection_curve

    X, y, Xt, yt = moons
    m = KernelProjectionMachine(sigma=0.5, max_components=40, random_state=0, formulation="paper",
                                keep_paths=True).fit(X, y)
    alpha = m.dual_coef_.copy()
    n_before = len(m.path_dims_)
    m.extend_path()
    assert len(m.path_dims_) >= n_before
    assert np.all(np.isfinite(m.selection_curve_["hinge_risk"][: len(m.path_dims_)]))
    np.testing.assert_array_equal(m.dual_coef_, alpha)
    F = m.decision_function_path(Xt[:20])
    np.testing.assert_allclose(F[:, m.n_components_ - 1], m.decision_function(Xt[:20]), atol=1e-6)
    ax = selection_curve(m, X_test=Xt, y_test=yt)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "test error" in labels and "CV error" in labels
    ax.figure.savefig(tmp_path / "curve.png")
    plt.close(ax.figure)
    assert (tmp_path / "curve.png").stat().st_size > 0
    with pytest.raises(ValueError, match="both"):
        selection_curve(m, X_test=Xt)


def test_duplicated_samples_get_identical_eigen_rows(moons):
    from kpm.machine.eigen import EigenSubspace, duplicate_groups
    from kpm.kernels import make_kernel

    X, y, Xt, yt = moons
    Xd = np.vstack([X, X[:40]])
    yd = np.concatenate([y, y[:40]])
    groups = duplicate_groups(Xd)
    assert groups is not None and len(np.unique(groups)) == len(X)
    assert duplicate_groups(X) is None
    sub = EigenSubspace(make_kernel("rbf", sigma=0.5)(Xd), False, groups=groups)
    np.testing.assert_array_equal(sub.V[:40], sub.V[len(X) :])
    m = KernelProjectionMachine(sigma=0.5, max_components=40, random_state=0, formulation="paper").fit(Xd, yd)
    assert np.mean(m.predict(Xt) != yt) < 0.13


def test_a_capped_d_no_better_than_the_majority_class_warns():
    """XOR in 5 dimensions needs more than 5 directions of the Gaussian basis: at
    max_components=5 every D's leave-one-out error is the majority class's, and the one
    chosen, the cap, is no better than it -- said, naming the cap (test error 0.49 on 1,500
    fresh points, the default KPM 0.13)."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (1700, 5))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    with pytest.warns(UserWarning, match=r"the selected D = 5 is the largest D considered \(max_components=5\)"):
        capped = KernelProjectionMachine(max_components=5, random_state=0).fit(X[:200], y[:200])
    assert np.mean(capped.predict(X[200:]) != y[200:]) > 0.4
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        default = KernelProjectionMachine(random_state=0).fit(X[:200], y[:200])
    assert np.mean(default.predict(X[200:]) != y[200:]) < 0.2


def test_max_components_above_the_rank_stops_at_the_rank():
    """As scikit-learn's KernelPCA caps its components: a linear kernel on 2 features has
    rank 2, and max_components=6 considers D = 1, 2; a fixed D above the rank is an error."""
    X, y = make_moons(200, noise=0.3, random_state=0)
    m = KernelProjectionMachine(kernel="linear", max_components=6, random_state=0).fit(X, y)
    assert m.n_components_ <= 2
    assert set(m.selection_curve_["D"]) <= {1, 2}


def test_fixed_D_below_max_dim(moons):
    # a fixed D decomposes the kernel matrix up to D only: max_dim beyond D was compared
    # with that partial rank and rejected ("max_components=15 is larger than the rank 5")
    X, y, Xt, _ = moons
    m = KernelProjectionMachine(sigma=0.5, selection=5, max_components=15, formulation="paper").fit(X, y)
    plain = KernelProjectionMachine(sigma=0.5, selection=5, formulation="paper").fit(X, y)
    assert m.n_components_ == 5
    np.testing.assert_array_equal(m.decision_function(Xt[:50]), plain.decision_function(Xt[:50]))
    with pytest.raises(ValueError, match="larger than the rank 2"):
        KernelProjectionMachine(kernel="linear", selection=4, max_components=6, formulation="paper").fit(X, y)


@pytest.mark.parametrize("params, seed, message", [
    # the slope heuristic reads the training error, which the self-similarity of 30 points in
    # R^500 makes 0 to 13 % where the model misclassifies half of the new points
    (dict(selection="slope"), 0, "far from each other in feature space"),
    (dict(formulation="paper"), 2, "far from each other in feature space"),
    # penalty='cv': its folds decompose anew, their error says the model is useless
    (dict(selection="penalty"), 2, "no better than predicting the majority class"),
])
def test_papers_rules_on_high_dimensional_data_warn_naming_the_default(params, seed, message):
    rng = np.random.default_rng(seed)
    X, y = two_gaussians_in_500_dimensions(rng, 30)
    X_test, y_test = two_gaussians_in_500_dimensions(rng, 1000)
    with pytest.warns(UserWarning, match=message + r".*The default KernelProjectionMachine\(\)"):
        clf = KernelProjectionMachine(random_state=0, **params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the default is not checked against itself
        default = KernelProjectionMachine(random_state=0).fit(X, y)
    assert np.mean(clf.predict(X_test) != y_test) > np.mean(default.predict(X_test) != y_test) + 0.3
