"""NystroemKPM: correctness, exactness of its LPs, memory budget, Dask and bad input."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kpm.hinge.constraint_generation import ConstraintGenerationHingeLP
from kpm.datasets import bayes_error, make_twonorm
import warnings

from sklearn.exceptions import ConvergenceWarning

import kpm.hinge.constraint_generation as cgmod
from kpm import LPSolverError
from kpm import KernelProjectionMachine
from kpm.kernels import make_kernel
from sklearn.model_selection import KFold, StratifiedKFold
from kpm.machine import DaskClientError, nystroem_eigenfunctions
from kpm import NystroemKPM
from kpm.spectral import select_landmarks
from kpm.machine.selection import select_cv
from helpers import two_gaussians_in_500_dimensions

SMALL = dict(n_landmarks=10, cv=2, max_components=6, solver_options={"init_size": 20}, random_state=0)


def _expected_failures(est):
    if est.n_landmarks == SMALL["n_landmarks"]:  # 10 landmarks of the check's samples
        return {"check_sample_weight_equivalence_on_dense_data":
                "the landmarks are drawn from the samples without regard to their weights, and the "
                "cross-validation folds of repeated samples differ from those of weighted ones: the "
                "weighted and the repeated fits have different bases (equivalence with every sample a "
                "landmark: test_weights.py)"}
    return {"check_class_weight_classifiers": (
            "at class weights 1000 : 1e-4 on 50 noisy 3-class training points, the weighted CV picks "
            "D=5 (every class-0 validation point right at D=1..5, fewer of the light points wrong at "
            "D=5), whose LP solution misclassifies 4 of the 15 class-0 test points: 78 % of the test "
            "points predicted 0 where the check asks 87 % (D=1..4: 100 %)")}


@parametrize_with_checks([NystroemKPM(**SMALL), NystroemKPM()], expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def twonorm():
    X, y = make_twonorm(3000, random_state=0)
    Xt, yt = make_twonorm(20000, random_state=1)
    return X, y, Xt, yt


KW = dict(n_landmarks=200, sigma="median", max_components=30, random_state=0)


@pytest.fixture(scope="module")
def fitted(twonorm):
    X, y, _, _ = twonorm
    return NystroemKPM(**KW, memory_budget=2_000_000).fit(X, y)


def test_twonorm_error_close_to_bayes(fitted, twonorm):
    _, _, Xt, yt = twonorm
    err = np.mean(fitted.predict(Xt) != yt)
    # 3000 training points, 200 landmarks: within 1.5 points of the Bayes error (2.28 %)
    assert err < bayes_error("twonorm") + 0.015
    assert 1 <= fitted.n_components_ <= 30
    assert fitted.cv_error_.shape == fitted.n_components_grid_.shape
    grid = fitted.n_components_grid_
    assert fitted.n_components_ == grid[select_cv(grid, fitted.cv_error_)]


def test_final_model_is_the_exact_hinge_erm(fitted, twonorm):
    """The final (β, b) solves the full LP over all n points on the first D eigenfunctions."""
    X, y, _, _ = twonorm
    from helpers import hinge_lp_reference

    F = fitted.transform_eigenfunctions(X)
    ypm = np.where(y == fitted.classes_[1], 1.0, -1.0)
    n, D = F.shape
    ref = hinge_lp_reference(F, ypm, D).fun
    assert abs(fitted.train_risk_[-1] * n - ref) <= 1e-7 * ref
    # decision_function is the landmark expansion of the same function
    f = F @ fitted.coef_ + fitted.intercept_
    np.testing.assert_allclose(fitted.decision_function(X), f, atol=1e-8)


def test_features_do_not_depend_on_the_memory_budget(fitted, twonorm):
    X, y, Xt, _ = twonorm
    other = NystroemKPM(**KW, memory_budget=200_000_000).fit(X, y)
    assert other.block_rows_ > fitted.block_rows_
    assert other.n_components_ == fitted.n_components_
    np.testing.assert_allclose(other.decision_function(Xt), fitted.decision_function(Xt), atol=1e-7)


def test_memory_budget_bounds_the_blocks(twonorm):
    X, y, _, _ = twonorm
    est = NystroemKPM(**KW, memory_budget=1_000_000).fit(X[:1000], y[:1000])
    assert est.block_rows_ * 8 * (3 * 200 + 30) <= 1_000_000


def test_bad_input(twonorm):
    X, y, _, _ = twonorm
    with pytest.raises(ValueError, match="too small for one block"):
        NystroemKPM(**KW, memory_budget=1000).fit(X, y)
    with pytest.raises(ValueError, match="landmark Gram"):
        NystroemKPM(**KW, memory_budget=100_000).fit(X, y)
    with pytest.raises(ValueError, match="larger than the number of samples"):
        select_landmarks(X, 5000)
    # a class of a single sample is kept in every training part (with a warning) when cv is an
    # int; a user's splitter is used as it is, and a fold without a class is an error
    y3 = np.r_[np.zeros(298), 1, 2].astype(int)
    with pytest.raises(ValueError, match="only 1 of the 3 classes"):
        NystroemKPM(n_landmarks=20, cv=KFold(3)).fit(X[:300], y3)
    every, none = np.arange(300), np.array([], dtype=int)
    with pytest.raises(ValueError, match="fold 1 has an empty validation set"):
        NystroemKPM(n_landmarks=20, cv=[(every[:150], every[150:]), (every, none)]).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="selection must be one of"):
        NystroemKPM(n_landmarks=20, selection="aic").fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="penalty must be >= 0, got -1"):
        NystroemKPM(n_landmarks=20, selection="penalty", penalty=-1).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="slope_factor"):
        NystroemKPM(n_landmarks=20, selection="slope", slope_factor=0).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="a fixed D"):
        NystroemKPM(n_landmarks=20, max_components=5, selection=6).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="landmarks must be"):
        NystroemKPM(n_landmarks=20, landmarks="random").fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="memory_budget"):
        NystroemKPM(n_landmarks=20, memory_budget=-5).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="it needs aggregate_below"):
        NystroemKPM(n_landmarks=20, solver_options={"band_size": 100}).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="band_size must be >= 1"):
        NystroemKPM(n_landmarks=20, solver_options={"aggregate_below": 0.9, "band_size": 0}).fit(X[:300], y[:300])
    with pytest.raises(ValueError, match=r"unknown constraint-generation options \['init_working_set'\]"):
        NystroemKPM(n_landmarks=20, solver_options={"init_working_set": 5}).fit(X[:300], y[:300])
    Xn = X[:300].copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        NystroemKPM(n_landmarks=20).fit(Xn, y[:300])
    with pytest.raises(ValueError, match="client"):
        NystroemKPM(n_landmarks=20, client="tcp://127.0.0.1:1").fit(X[:300], y[:300])


def test_kmeanspp_landmarks_are_deterministic(twonorm):
    X, y, _, _ = twonorm
    a = select_landmarks(X, 50, "kmeans++", random_state=3)
    b = select_landmarks(X, 50, "kmeans++", random_state=3)
    assert np.array_equal(a, b) and len(np.unique(a)) == 50
    est = NystroemKPM(n_landmarks=100, landmarks="kmeans++", sigma="median", max_components=20,
                      random_state=0).fit(X[:1500], y[:1500])
    assert np.mean(est.predict(X[1500:]) != y[1500:]) < 0.06


def test_dask_array_equals_numpy(fitted, twonorm):
    da = pytest.importorskip("dask.array")
    X, y, Xt, _ = twonorm
    est = NystroemKPM(**KW, memory_budget=2_000_000).fit(da.from_array(X, chunks=700), y)
    assert est.n_components_ == fitted.n_components_
    np.testing.assert_array_equal(est.cv_errors_, fitted.cv_errors_)
    np.testing.assert_allclose(est.decision_function(da.from_array(Xt, chunks=5000)),
                               fitted.decision_function(Xt), atol=1e-10)


@pytest.mark.slow
def test_lost_cluster_leaves_the_estimator_unfitted(twonorm, monkeypatch):
    """The cluster goes away mid-run (after the features were persisted on its workers)."""
    from distributed import Client, LocalCluster

    import kpm.machine.dask_data as R

    X, y, _, _ = twonorm
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None, processes=True) as cluster, Client(cluster) as client:
        init = R.DaskRows.__init__

        def persist_then_disconnect(self, *args, **kwargs):
            init(self, *args, **kwargs)
            cluster.close()

        monkeypatch.setattr(R.DaskRows, "__init__", persist_then_disconnect)
        broken = NystroemKPM(n_landmarks=50, sigma="median", max_components=10, random_state=0,
                             memory_budget=2_000_000, client=client)
        with pytest.raises(DaskClientError, match="no model was fitted"):
            broken.fit(X[:1000], y[:1000])
        assert not hasattr(broken, "coef_") and not hasattr(broken, "classes_")


@pytest.mark.slow
def test_cli_reproduce_scale_smoke(tmp_path):
    """`kpm reproduce scale` on a tiny setting writes the table, the JSON and the plot."""
    from typer.testing import CliRunner

    from kpm_reproduce.cli import app

    r = CliRunner().invoke(app, ["reproduce", "scale", "--out", str(tmp_path), "--sizes", "600",
                                 "--methods", "kpm,nys_linsvc", "--landmarks", "40", "--n-test", "500"])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "scale.md").read_text()
    assert "NystroemKPM" in md and "| 600 |" in md and "m = 40 landmarks, 500 test points" in md
    assert (tmp_path / "scale_time_vs_n.png").stat().st_size > 0
    import json

    res = json.loads((tmp_path / "scale.json").read_text())["results"]
    assert res["kpm_600"]["test_error"] < 0.1 and res["kpm_600"]["m"] == 40


# ------------------------------------------------------------------ robustness
@pytest.mark.slow
def test_one_feature_twonorm_fits_for_every_seed():
    """1-D twonorm, 50 landmarks, 30 components: HiGHS failed the working-set LP on 10 of
    20 seeds (RuntimeError; hinge-optimal coefficients up to 1e13). Every fit now solves
    every dimension (cold HiGHS runs, then the exact KPM's path solver)."""
    X, y = make_twonorm(200, n_features=1, random_state=0)
    Xt, yt = make_twonorm(2000, n_features=1, random_state=1)
    for seed in range(20):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            est = NystroemKPM(50, sigma="median", max_components=30, random_state=seed).fit(X, y)
        assert est.lp_failures_ == [] and np.all(np.isfinite(est.cv_errors_)), seed
        assert np.mean(est.predict(Xt) != yt) < 0.05  # Bayes error 2.3 %


def test_highs_failing_everywhere_leaves_the_exact_solver(monkeypatch):
    """Every HiGHS run fails: each working-set LP is solved by the KPM's path solver,
    and the path (objectives, certificates) is that of the HiGHS path."""
    F, y = make_twonorm(500, random_state=3)
    F = np.asfortranarray(F)
    y = np.where(y == 1, 1.0, -1.0)
    ref = ConstraintGenerationHingeLP(F, y, init_size=80, random_state=0).path([1, 2, 5, 12, 20])
    cg = ConstraintGenerationHingeLP(F, y, init_size=80, random_state=0)
    run = type(cg._h).run

    def failing_run(self):
        out = run(self)
        self.clearSolver()  # model status 'Not Set'
        return out

    monkeypatch.setattr(type(cg._h), "run", failing_run)
    got = cg.path([1, 2, 5, 12, 20])
    assert cg.exact_solves >= 5
    for a, b in zip(ref, got):
        assert b.objective == pytest.approx(a.objective, rel=1e-9, abs=1e-9)
        assert b.lower_bound == pytest.approx(a.lower_bound, rel=1e-9, abs=1e-9)


def test_every_solver_failing_ends_the_paths_loudly(monkeypatch):
    """From D = 4 on no LP solver succeeds: the CV paths and the final path end at
    D = 3, fit warns naming D = 4, and lp_failures_ records every path."""
    orig = cgmod.ConstraintGenerationHingeLP._run

    def fail_from_4(self):
        if self._D >= 4:
            raise LPSolverError(f"simulated failure at D={self._D}")
        return orig(self)

    monkeypatch.setattr(cgmod.ConstraintGenerationHingeLP, "_run", fail_from_4)
    X, y = make_twonorm(400, random_state=0)
    with pytest.warns(ConvergenceWarning, match=r"at D=4 .*simulated failure"):
        est = NystroemKPM(60, sigma="median", max_components=10, cv=3, random_state=0).fit(X, y)
    assert est.n_components_ <= 3
    assert {f["path"] for f in est.lp_failures_} == {"fold 0", "fold 1", "fold 2"}
    assert all(f["dim"] == 4 for f in est.lp_failures_)
    assert np.all(np.isnan(est.cv_errors_[:, 3:])) and np.all(np.isfinite(est.cv_errors_[:, :3]))


def test_failed_warm_run_is_solved_by_the_exact_solver_with_the_same_result(monkeypatch):
    """A warm HiGHS run that ends without an optimal status is solved again by the
    KPM's path solver: the path is the same as without the failure."""
    F, y = make_twonorm(600, random_state=2)
    F = np.asfortranarray(F)
    y = np.where(y == 1, 1.0, -1.0)
    ref = ConstraintGenerationHingeLP(F, y, init_size=100, random_state=0).path([1, 3, 6, 10])
    cg = ConstraintGenerationHingeLP(F, y, init_size=100, random_state=0)
    h = cg._h
    calls = {"n": 0}
    run = type(h).run

    def flaky_run(self):
        calls["n"] += 1
        out = run(self)
        if calls["n"] == 3:  # pretend this warm run ended in numerical trouble
            self.clearSolver()
        return out

    monkeypatch.setattr(type(h), "run", flaky_run)
    got = cg.path([1, 3, 6, 10])
    assert cg.exact_solves == 1
    for a, b in zip(ref, got):
        assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(a.coef, b.coef, rtol=1e-6, atol=1e-8)


def test_default_landmarks_are_capped_at_n():
    X, y = make_twonorm(120, random_state=0)
    est = NystroemKPM(random_state=0).fit(X, y)
    assert est.landmarks_.shape == (120, 20) and len(np.unique(est.landmark_indices_)) == 120


def test_public_helpers_validate_their_input():
    X, _ = make_twonorm(50, random_state=0)
    idx = select_landmarks(X.tolist(), 10, random_state=0)  # a list, as any array-like
    np.testing.assert_array_equal(idx, select_landmarks(X, 10, random_state=0))
    kern = make_kernel("rbf", sigma=3.0)
    for bad in (-1, 0, 1, np.nan, "x"):
        with pytest.raises(ValueError, match="rank_tol"):
            nystroem_eigenfunctions(kern, X[:10], rank_tol=bad)
    with pytest.raises(ValueError, match="max_components"):
        nystroem_eigenfunctions(kern, X[:10], max_components=0)
    with pytest.raises(ValueError, match="kpm.kernels.Kernel"):
        nystroem_eigenfunctions("rbf", X[:10])
    with pytest.raises(ValueError, match="landmarks must be one of"):
        select_landmarks(X, 10, method="random")
    with pytest.raises(ValueError, match="n_landmarks must be an integer"):
        select_landmarks(X, 2.5)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        select_landmarks(Xn, 10)


def test_degenerate_width_and_one_class_model_warn():
    from kpm import DegenerateKernelWarning, DegenerateModelWarning

    X, y = make_twonorm(200, random_state=0)
    with pytest.warns(DegenerateKernelWarning, match="numerically the identity"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateModelWarning)
            NystroemKPM(40, sigma=1e-3, max_components=10, random_state=0).fit(X, y)
    yy = np.where(np.arange(200) < 190, 0, 1)  # 5 % minority: the constant classifier wins
    with pytest.warns(DegenerateModelWarning, match="single class 0"):
        NystroemKPM(40, sigma=1e3, max_components=2, random_state=0).fit(X, yy)


def test_overflowing_kernel_is_a_clear_error():
    X, y = make_twonorm(100, random_state=0)
    with pytest.raises(ValueError, match="overflowed"):
        NystroemKPM(20, kernel="poly", degree=400, gamma=10.0, random_state=0).fit(X, y)


def test_layouts_and_containers_give_the_same_model():
    pd = pytest.importorskip("pandas")
    X, y = make_twonorm(300, random_state=0)
    ref = NystroemKPM(40, sigma="median", max_components=10, cv=3, random_state=0).fit(X, y)
    Xt, _ = make_twonorm(200, random_state=1)
    for Xv in (np.asfortranarray(X), X.tolist(), pd.DataFrame(X), np.repeat(X, 2, axis=1)[:, ::2]):
        est = NystroemKPM(40, sigma="median", max_components=10, cv=3, random_state=0).fit(Xv, y)
        np.testing.assert_array_equal(est.cv_errors_, ref.cv_errors_)
        np.testing.assert_array_equal(est.decision_function(Xt), ref.decision_function(Xt))


def test_callable_kernel_landmark_matrix_is_checked():
    """An asymmetric or indefinite callable kernel was accepted silently (the exact KPM
    checks its kernel matrix): the landmark matrix gets the same check."""
    X, y = make_twonorm(60, random_state=0)
    rbf = make_kernel("rbf", sigma=1.0)
    with pytest.raises(ValueError, match="landmark kernel matrix .* not symmetric"):
        NystroemKPM(8, kernel=lambda A, B: rbf(A, B) + 0.1 * np.arange(len(B))[None, :],
                    max_components=5, cv=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="landmark kernel matrix .* not positive semi-definite"):
        NystroemKPM(8, kernel=lambda A, B: -rbf(A, B), max_components=5, cv=3, random_state=0).fit(X, y)


# ------------------------------------------------------------------ the exact KPM's engine
@pytest.fixture(scope="module")
def small_problems():
    """240 twonorm points, two and three classes (string labels), and test points."""
    X, y = make_twonorm(240, random_state=0)
    Xt, _ = make_twonorm(500, random_state=1)
    y3 = np.array(["a", "b", "c"])[(X[:, 0] > 0.3).astype(int) + (X[:, 1] > 0).astype(int)]
    return X, {"binary": y, "3-class": y3}, Xt


def _all_landmarks(X, **kw):
    """NystroemKPM with every training point a landmark on the exact KPM's D grid 1..25."""
    return NystroemKPM(len(X), sigma=4.0, max_components=25, n_components_grid=np.arange(1, 26),
                       random_state=0, **kw)


@pytest.mark.parametrize("problem", ["binary", "3-class"])
@pytest.mark.parametrize("selection, penalty", [("penalty", 0.002), ("penalty", 0.0004), ("slope", "cv"), (6, "cv")])
def test_landmarks_at_all_points_give_the_exact_kpm(small_problems, problem, selection, penalty):
    """With landmarks = all n training points the Nyström features are ``sqrt(n) V`` (V the
    eigenvectors of the uncentred kernel matrix): the exact KPM's basis with its columns
    scaled by sqrt(n), and the hinge LP's optimal functions do not depend on the scale of
    the columns. The full-data paths -- all the rules without CV read -- are the same."""
    X, ys, Xt = small_problems
    y = ys[problem]
    exact = KernelProjectionMachine(sigma=4.0, selection=selection, penalty=penalty, max_components=25, formulation="paper").fit(X, y)
    nys = _all_landmarks(X, selection=selection, penalty=penalty).fit(X, y)
    assert nys.n_components_ == exact.n_components_
    assert nys.penalty_ == pytest.approx(exact.penalty_, rel=1e-9) if exact.penalty_ is not None else nys.penalty_ is None
    np.testing.assert_array_equal(nys.classes_, exact.classes_)
    np.testing.assert_allclose(nys.selection_curve_["clipped_risk"], exact.selection_curve_["clipped_risk"],
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(nys.decision_function(Xt), exact.decision_function(Xt), atol=1e-4)
    np.testing.assert_array_equal(nys.predict(Xt), exact.predict(Xt))


def _reference_fold_curves(est, X, y, splits):
    """The folds' curves on the fitted Nyström features by the exact KPM's path solver
    (``hinge_lp_path``, one-vs-rest), independent of the constraint generation."""
    from kpm.hinge.lp_path import hinge_lp_path

    F = est.transform_eigenfunctions(X, est.projection_.shape[1])
    codes = np.searchsorted(est.classes_, y)
    C = len(est.classes_)
    Y = np.where(codes == 1, 1.0, -1.0)[:, None] if C == 2 else np.where(codes[:, None] == np.arange(C), 1.0, -1.0)
    grid = est.n_components_grid_
    errors, clipped = [], []
    for tr, va in splits:
        paths = [hinge_lp_path(F[tr], Y[tr, c], dims=grid, solver="highs") for c in range(Y.shape[1])]
        Fv = np.stack([p.decision_values(F[va]) for p in paths], axis=2)
        Ft = np.stack([p.decision_values(F[tr]) for p in paths], axis=2)
        pred = (np.round(Fv[..., 0], 9) > 0).astype(int) if C == 2 else np.argmax(np.round(Fv, 9), axis=2)
        errors.append((pred != codes[va][:, None]).sum(axis=0))
        clipped.append(np.maximum(0, 1 - Y[tr][:, None, :] * np.clip(Ft, -1, 1)).mean(axis=(0, 2)))
    return np.array(errors), np.array(clipped)


@pytest.mark.parametrize("problem", ["binary", "3-class"])
def test_cv_rules_read_the_same_fold_curves_as_the_exact_solver(small_problems, problem):
    """The CV rules (selection='cv', penalty='cv') on the Nyström basis: the folds' paths by
    constraint generation give the curves of the exact KPM's solver on the same features.

    (The exact ``KernelProjectionMachine`` is no reference for the CV curves: it takes the
    eigenvectors of each training fold's own kernel matrix, while NystroemKPM keeps the
    landmark eigenfunctions -- here built on all points -- for every fold.)"""
    from kpm.machine.rules import CV, ModelCurves, Penalty

    X, ys, _ = small_problems
    # labels with 20 % noise: no fold's training hinge risk reaches 0 within D <= 25, where
    # the LP has many optimal solutions and two exact solvers may return different ones
    flip = np.random.default_rng(0).random(len(X)) < 0.2
    y = np.where(flip, np.roll(ys[problem], 7), ys[problem])
    splits = list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))
    est = _all_landmarks(X, selection="penalty", penalty="cv", cv=splits, keep_paths=True).fit(X, y)
    errors, clipped = _reference_fold_curves(est, X, y, splits)
    m = len(est.selection_curve_["D"])
    np.testing.assert_array_equal(np.rint(est.cv_errors_ * np.array([len(va) for _, va in splits])[:, None]),
                                  errors[:, : len(est.n_components_grid_)])
    curves = ModelCurves(est.selection_curve_["D"], np.zeros(m, int), errors[:, :m].sum(axis=0) / len(y),
                         est.selection_curve_["hinge_risk"], est.selection_curve_["clipped_risk"],
                         errors[:, :m], clipped[:, :m], len(y))
    ref = Penalty("cv").select(curves)
    assert est.n_components_ == ref.n_components and est.penalty_ == pytest.approx(ref.penalty, rel=1e-6)
    assert est.select_dim(CV()).n_components == CV().select(curves).n_components
    cv_fit = _all_landmarks(X, cv=splits).fit(X, y)
    assert cv_fit.n_components_ == CV().select(curves).n_components


def test_multiclass_follows_scikit_learn(small_problems):
    X, ys, Xt = small_problems
    y = ys["3-class"]
    est = NystroemKPM(60, sigma=4.0, max_components=15, cv=3, random_state=0).fit(X, y)
    D = est.n_components_
    assert est.decision_function(Xt).shape == (len(Xt), 3)
    assert est.coef_.shape == (3, D) and est.intercept_.shape == (3,) and est.dual_coef_.shape == (3, 60)
    np.testing.assert_array_equal(est.classes_, ["a", "b", "c"])
    F = est.decision_function(Xt)
    np.testing.assert_array_equal(est.predict(Xt), est.classes_[np.argmax(np.round(F, 9), axis=1)])
    f = est.transform_eigenfunctions(Xt) @ est.coef_.T + est.intercept_
    np.testing.assert_allclose(F, f, atol=1e-8)
    # one-vs-rest: each column is the binary machine of that class against the others
    for c, label in enumerate(est.classes_):
        kw = dict(sigma=4.0, max_components=15, selection=D, random_state=0)
        binary = NystroemKPM(60, **kw).fit(X, y == label)
        np.testing.assert_allclose(binary.decision_function(Xt), F[:, c], atol=1e-7)


def test_select_dim_answers_other_rules_as_fresh_fits(small_problems):
    from kpm.machine.rules import CV, FixedD, Penalty, Slope

    X, ys, _ = small_problems
    # noisy labels: no fold reaches zero training risk, so the CV sweep covers every D
    # (a fit with CV holds the models up to the end of its sweep only)
    y = np.where(np.random.default_rng(0).random(len(X)) < 0.2, -ys["binary"], ys["binary"])
    kw = dict(n_landmarks=80, sigma=4.0, max_components=20, cv=3, random_state=0)
    full = NystroemKPM(**kw, selection="penalty", penalty="cv", keep_paths=True).fit(X, y)
    for rule, sel, pen in [(CV(), "cv", "cv"), (Penalty(0.003), "penalty", 0.003), (Slope(2.0), "slope", "cv"),
                           (FixedD(4), 4, "cv")]:
        assert full.select_dim(rule).n_components == NystroemKPM(**kw, selection=sel, penalty=pen).fit(X, y).n_components_
    cv_only = NystroemKPM(**kw, keep_paths=True).fit(X, y)
    with pytest.raises(ValueError, match="training risk of every model"):
        cv_only.select_dim(Slope())
    with pytest.raises(ValueError, match="cross-validation curves"):
        NystroemKPM(**kw, selection="slope", keep_paths=True).fit(X, y).select_dim(CV())


def test_landmark_residual_is_the_share_of_the_variance_outside_the_landmarks_span():
    """Against the residuals computed from the landmark Gram matrix's pseudo-inverse: 0 with
    every point a landmark, the same share otherwise."""
    from kpm.machine.nystroem_data import landmark_residual

    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(300, 4)), rng.normal(size=(40, 4))
    k = make_kernel("rbf", sigma=1.5)
    Kxz = k(X, Z)
    dist = 1.0 - np.einsum("ij,jk,ik->i", Kxz, np.linalg.pinv(k(Z)), Kxz)  # to the span, squared
    K = k(X)
    spread = 1.0 - (K.sum() - np.trace(K)) / (300 * 299)  # to the mean, squared (k(x, x) = 1)
    assert landmark_residual(k, Z, X) == pytest.approx(dist.mean() / spread, rel=1e-6)
    assert 0.05 < dist.mean() / spread < 0.95  # neither end of the range
    assert landmark_residual(k, X, X) == pytest.approx(0.0, abs=1e-6)  # the jitter: 3e-8 of the trace
    assert landmark_residual(k, Z, np.ones((5, 4))) == 0.0  # no variance to leave out


def test_a_landmark_span_missing_most_of_the_data_warns():
    """8 landmarks of 30 points in 500 dimensions leave out most of the variance (and the
    model trails an SVC on the exact kernel); with every point a landmark, or on twonorm with
    200 landmarks, no warning."""
    rng = np.random.default_rng(3)
    y = np.r_[np.zeros(15, int), np.ones(15, int)]
    X = rng.normal(size=(30, 500))
    X[:, :5] += 1.5 * np.where(y == 1, 1.0, -1.0)[:, None]
    with pytest.warns(UserWarning, match=r"NystroemKPM: the span of the 8 landmarks leaves out \d+%") as rec:
        est = NystroemKPM(8, sigma="median", max_components=8, cv=3, random_state=0).fit(X, y)
    assert est.landmark_residual_ > 0.5
    assert rec[0].filename == __file__  # points at the caller
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        full = NystroemKPM(sigma="median", random_state=0).fit(X, y)
        X2, y2 = make_twonorm(2000, random_state=0)
        small = NystroemKPM(200, sigma="median", random_state=0).fit(X2, y2)
    assert full.landmark_residual_ == 0.0 and small.landmark_residual_ < 0.2  # twonorm: 0.10
    assert not any("landmarks leaves out" in str(w.message) for w in record)


def test_a_polynomial_kernel_of_high_degree_fits_and_warns():
    """Was ``matmul: ... size 41 is different from 44``: after every LP solver failed at
    D = 44, a candidate point of the path replayed from D = 1 (41 coefficients) was scored
    on the 44 columns. Such candidates are padded with zeros (a point of the larger LP's
    feasible set); the kernel's degeneracy is warned."""
    from sklearn.datasets import make_classification

    from kpm import DegenerateKernelWarning

    X, y = make_classification(300, 10, random_state=0)
    with pytest.warns(DegenerateKernelWarning):
        m = NystroemKPM(kernel="poly", degree=30, random_state=0).fit(X[:200], y[:200])
    assert m.predict(X[200:]).shape == (100,)


def test_self_similarity_of_high_dimensional_data_warns_naming_the_exact_kpm():
    # 30 points in R^500: every point is far from the others, each training point's features
    # hold its similarity with itself (a landmark), which the 3 CV folds keep too: the papers'
    # LP had a CV error of 0 to 7 % and a test error near 50 %, the default
    # KernelProjectionMachine 2 %; the fit must say so and name it
    rng = np.random.default_rng(0)
    X, y = two_gaussians_in_500_dimensions(rng, 30)
    X_test, y_test = two_gaussians_in_500_dimensions(rng, 1000)
    with pytest.warns(UserWarning, match=r"far from each other in feature space.*KernelProjectionMachine\(\)"):
        clf = NystroemKPM(cv=3, random_state=0).fit(X, y)
    exact = KernelProjectionMachine(random_state=0).fit(X, y)
    assert np.mean(clf.predict(X_test) != y_test) > np.mean(exact.predict(X_test) != y_test) + 0.3


def test_self_similarity_check_is_silent_on_low_dimensional_data(twonorm):
    X, y = twonorm[0][:300], twonorm[1][:300]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        NystroemKPM(n_landmarks=300, max_components=30, random_state=0).fit(X, y)
