"""Selection rules as objects (kpm.machine.rules), the path loop they select from, and a fitted
KernelProjectionMachine answering which model another rule picks."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons

from kpm import CV, FixedD, KernelProjectionMachine, Penalty, Slope
from kpm.hinge.lp_path import IncrementalHingeLP, PathGrower, hinge_lp_path
from kpm.machine.rules import ModelCurves, as_rule
from kpm.machine.selection import penalty_path, select_penalty, slope_heuristic

NAN = np.full(6, np.nan)


def _curves(**kw):
    base = dict(
        D=np.array([1, 2, 3, 4, 5, 6]),
        kernel=np.zeros(6, int),
        cv_error=NAN,
        hinge_risk=NAN,
        clipped_risk=NAN,
        n_samples=10,
    )
    base.update(kw)
    return ModelCurves(**base)


def test_cv_rule_takes_the_smallest_error_ties_to_the_smaller_D():
    c = _curves(cv_error=np.array([0.4, 0.2, 0.1, 0.1, 0.3, 0.1]))
    choice = CV().select(c)
    assert (choice.index, choice.n_components, choice.kernel_index) == (2, 3, 0)
    assert choice.penalty is None and choice.slope_lambda is None
    # a family over two kernels: the same D twice, the second kernel wins on error
    two = _curves(D=np.array([1, 2, 3, 1, 2, 3]), kernel=np.array([0, 0, 0, 1, 1, 1]),
                  cv_error=np.array([0.3, 0.2, 0.25, 0.3, 0.15, 0.2]))
    assert (CV().select(two).n_components, CV().select(two).kernel_index) == (2, 1)


def test_penalty_and_slope_rules_apply_the_functions_to_the_clipped_risk():
    risks = np.array([0.5, 0.3, 0.22, 0.2, 0.19, 0.185])
    c = _curves(clipped_risk=risks)
    for lam in (0.0, 0.015, 0.05, 1.0):
        choice = Penalty(lam).select(c)
        assert choice.index == select_penalty(c.D, risks, lam) and choice.penalty == lam
    assert Penalty(0.05).select(c).n_components == 3  # 0.22 + 0.15 beats 0.3 + 0.1 and 0.2 + 0.2
    idx, lam_jump, _ = slope_heuristic(c.D, risks, 3.0)
    choice = Slope(3.0).select(c)
    assert choice.index == idx
    assert choice.slope_lambda == lam_jump and choice.penalty == 3.0 * lam_jump


def test_penalty_cv_rule_picks_the_lam_of_the_smallest_pooled_fold_error():
    # two folds whose penalty paths jump 1 -> 3 at lam = 0.1 (fold 0) and 0.05 (fold 1);
    # the validation errors favour D = 3 in both folds: every lam below 0.05 wins, and
    # of those the largest candidate (ties -> the larger lam)
    D = np.array([1, 2, 3])
    clipped = np.array([[0.5, 0.45, 0.3], [0.4, 0.38, 0.3]])
    errors = np.array([[5, 4, 1], [6, 6, 2]])
    c = ModelCurves(D, np.zeros(3, int), np.full(3, np.nan), np.full(3, np.nan),
                    np.array([0.45, 0.4, 0.3]), errors, clipped, 20)
    assert [list(penalty_path(D, r).breakpoints) for r in clipped] == [[pytest.approx(0.1)], [pytest.approx(0.05)]]
    choice = Penalty("cv").select(c)
    lam = choice.penalty
    assert lam < 0.05 and lam == choice.penalty_cv_curve["penalty"][2]
    np.testing.assert_allclose(choice.penalty_cv_curve["cv_error"], [11 / 20, 7 / 20, 3 / 20, 3 / 20])
    assert choice.n_components == 3
    assert Penalty("cv").needs_cv and not Penalty(0.1).needs_cv and CV().needs_cv


def test_fixed_rule_takes_the_first_model_of_that_D():
    c = _curves(D=np.array([1, 2, 3, 1, 2, 3]), kernel=np.array([0, 0, 0, 1, 1, 1]))
    assert (FixedD(2).select(c).index, FixedD(2).select(c).kernel_index) == (1, 0)
    assert FixedD(2).fixed_dim == 2 and CV().fixed_dim is None
    # a path that ended before D (an LP failure): the largest D solved
    assert FixedD(9).select(c).n_components == 3


def test_rules_validate_their_parameters():
    for bad, match in ((lambda: Penalty(-1.0), "lam"), (lambda: Penalty("aic"), "lam"),
                       (lambda: Slope(0.0), "factor"), (lambda: Slope(np.inf), "factor"),
                       (lambda: FixedD(0), "FixedD: d must be >= 1, got 0"),
                       (lambda: FixedD(True), "FixedD: d must be an integer >= 1, got True"),
                       (lambda: FixedD(2.5), "FixedD: d must be an integer >= 1, got 2.5"),
                       (lambda: as_rule("aic"), r"selection must be one of \('cv', 'penalty', 'slope'\), an integer "
                                                r">= 1 or a SelectionRule, got 'aic'"),
                       (lambda: as_rule(0), "selection must be >= 1, got 0")):
        with pytest.raises(ValueError, match=match):
            bad()
    assert as_rule("penalty", penalty=0.2) == Penalty(0.2)
    assert as_rule("slope", slope_factor=3) == Slope(3.0)
    assert as_rule(np.int64(4)) == FixedD(4) and as_rule("cv") == CV()
    with pytest.raises(ValueError, match="selection"):
        KernelProjectionMachine(selection=CV, formulation="paper").fit(np.zeros((4, 2)), [0, 1, 0, 1])


def test_a_second_path_solver_plugs_into_the_path_loop():
    # the PathSolver protocol: HiGHS's incremental model, wrapped with the floor members
    class HighsPath(IncrementalHingeLP):
        floor, zero_level, fallbacks = 0.0, 0.0, 0

        def at_floor(self, objective, zero_tol=1e-9):
            return objective <= zero_tol * self.n

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((80, 12))
    y = np.where(Z[:, 0] + 0.8 * rng.standard_normal(80) > 0, 1.0, -1.0)
    grower = PathGrower(HighsPath(y), Z)
    for D in range(1, 13):
        if not grower.step(D) or grower.at_floor:
            break
    mine = grower.path(np.arange(1, 13))
    ref = hinge_lp_path(Z, y, 12, solver="highs")
    np.testing.assert_allclose(mine.objective, ref.objective, rtol=1e-9, atol=1e-9)
    assert mine.n_solved == ref.n_solved


@pytest.fixture(scope="module")
def small():
    X, y = make_moons(120, noise=0.3, random_state=3)
    return X, y


@pytest.fixture(scope="module")
def penalty_cv_fit(small):
    X, y = small
    return KernelProjectionMachine(sigma=0.5, selection="penalty", cv=3, max_components=15, random_state=0, formulation="paper",
                                   keep_paths=True).fit(X, y)


@pytest.mark.parametrize("rule", [CV(), Penalty(0.01), Penalty(0.002), Slope(2.0), Slope(4.0), FixedD(5)])
def test_fitted_model_answers_another_rule_as_a_fresh_fit(small, penalty_cv_fit, rule):
    X, y = small
    fresh = KernelProjectionMachine(sigma=0.5, selection=rule, cv=3, max_components=15, random_state=0, formulation="paper").fit(X, y)
    # the curves of both fits cover the same models (the CV sweep reached max_dim)
    np.testing.assert_array_equal(penalty_cv_fit.selection_curve_["D"], np.arange(1, 16))
    choice = penalty_cv_fit.select_dim(rule)
    assert choice.n_components == fresh.n_components_
    assert choice.penalty == fresh.penalty_ and choice.slope_lambda == fresh.slope_lambda_
    # the rule object and the string spelling fit the same model
    if not isinstance(rule, Penalty):
        legacy = {"CV": "cv", "Slope": "slope", "FixedD": getattr(rule, "d", None)}[type(rule).__name__]
        params = {"slope_factor": rule.factor} if isinstance(rule, Slope) else {}
        old = KernelProjectionMachine(sigma=0.5, selection=legacy, cv=3, max_components=15, random_state=0,
                                      **params, formulation="paper").fit(X, y)
        assert old.n_components_ == fresh.n_components_
        np.testing.assert_array_equal(old.dual_coef_, fresh.dual_coef_)


def test_fitted_model_answers_its_own_rule_and_a_kernel_list(small, penalty_cv_fit):
    X, y = small
    own = penalty_cv_fit.select_dim("penalty")
    assert own.n_components == penalty_cv_fit.n_components_ and own.penalty == penalty_cv_fit.penalty_
    np.testing.assert_array_equal(own.penalty_cv_curve["cv_error"], penalty_cv_fit.penalty_cv_curve_["cv_error"])
    kernels = [{"kernel": "rbf", "sigma": 0.2}, {"kernel": "rbf", "sigma": 1.0}]
    kw = dict(kernel=kernels, cv=3, max_components=12, random_state=1)
    both = KernelProjectionMachine(selection=Penalty("cv"), **kw, formulation="paper", keep_paths=True).fit(X, y)
    for rule in (CV(), Slope(2.0), FixedD(4)):
        fresh = KernelProjectionMachine(selection=rule, **kw, formulation="paper").fit(X, y)
        choice = both.select_dim(rule)
        assert (choice.n_components, choice.kernel_index) == (fresh.n_components_, fresh.kernel_index_), rule


def test_select_dim_says_what_a_fit_lacks(small):
    X, y = small
    slope = KernelProjectionMachine(sigma=0.5, selection="slope", max_components=15, formulation="paper",
                                    keep_paths=True).fit(X, y)
    with pytest.raises(ValueError, match="cross-validation"):
        slope.select_dim(CV())
    with pytest.raises(ValueError, match="cross-validation"):
        slope.select_dim(Penalty("cv"))
    with pytest.raises(ValueError, match="not one of"):
        slope.select_dim(FixedD(16))
    cv = KernelProjectionMachine(sigma=0.5, cv=3, max_components=15, random_state=0, formulation="paper",
                                 keep_paths=True).fit(X, y)
    assert cv.select_dim("cv").n_components == cv.n_components_
    if cv.n_components_ < 15:
        with pytest.raises(ValueError, match="extend_path"):
            cv.select_dim(Slope())
    cv.extend_path()
    pen = KernelProjectionMachine(sigma=0.5, selection="penalty", cv=3, max_components=15, random_state=0, formulation="paper",
                                  keep_paths=True).fit(X, y)
    assert cv.select_dim(Slope()).n_components == pen.select_dim(Slope()).n_components
    # the answer leaves the fitted model as it was
    assert clone(cv).get_params()["selection"] == "cv" and cv.n_components_ == pen.select_dim(CV()).n_components
