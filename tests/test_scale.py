"""NystroemKPM: correctness, exactness of its LPs, memory budget, Dask and bad input."""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kpm._constraint_generation import ConstraintGenerationHingeLP
from kpm.datasets import bayes_error, make_twonorm
from kpm.scale import DaskClientError, NystroemKPM, _select_cv, select_landmarks

SMALL = dict(n_landmarks=10, cv=2, max_components=6, init_working_set=20, random_state=0)


@parametrize_with_checks([NystroemKPM(**SMALL)])
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
    assert fitted.n_components_ == _select_cv(fitted.n_components_grid_, fitted.cv_error_)


def test_final_model_is_the_exact_hinge_erm(fitted, twonorm):
    """The final (β, b) solves the full LP over all n points on the first D eigenfunctions."""
    X, y, _, _ = twonorm
    from scipy.optimize import linprog
    import scipy.sparse as sp

    F = fitted.transform_eigenfunctions(X)
    ypm = np.where(y == fitted.classes_[1], 1.0, -1.0)
    n, D = F.shape
    A = sp.hstack([sp.csr_matrix(-ypm[:, None]), sp.csr_matrix(-ypm[:, None] * F), -sp.identity(n)])
    c = np.r_[np.zeros(D + 1), np.ones(n)]
    ref = linprog(c, A_ub=A.tocsr(), b_ub=-np.ones(n), bounds=[(None, None)] * (D + 1) + [(0, None)] * n,
                  method="highs").fun
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
        NystroemKPM(n_landmarks=5000).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        NystroemKPM(n_landmarks=20).fit(X[:300], np.arange(300) % 3)
    with pytest.raises(ValueError, match="landmarks must be"):
        NystroemKPM(n_landmarks=20, landmarks="random").fit(X[:300], y[:300])
    with pytest.raises(ValueError, match="memory_budget"):
        NystroemKPM(n_landmarks=20, memory_budget=-5).fit(X[:300], y[:300])
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


def test_cv_rule_ties_go_to_the_smaller_dimension():
    assert _select_cv(np.array([1, 2, 5, 9]), np.array([0.3, 0.1, 0.1, 0.2])) == 2


def test_dask_array_equals_numpy(fitted, twonorm):
    da = pytest.importorskip("dask.array")
    X, y, Xt, _ = twonorm
    est = NystroemKPM(**KW, memory_budget=2_000_000).fit(da.from_array(X, chunks=700), y)
    assert est.n_components_ == fitted.n_components_
    np.testing.assert_array_equal(est.cv_errors_, fitted.cv_errors_)
    np.testing.assert_allclose(est.decision_function(da.from_array(Xt, chunks=5000)),
                               fitted.decision_function(Xt), atol=1e-10)


def test_local_cluster_equals_local_run(fitted, twonorm, monkeypatch):
    """Features and CV folds as Dask tasks on a 2-worker LocalCluster (127.0.0.1)."""
    from distributed import Client, LocalCluster

    X, y, Xt, _ = twonorm
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None, processes=True) as cluster, Client(cluster) as client:
        est = NystroemKPM(**KW, memory_budget=2_000_000, client=client).fit(X, y)
        assert est.n_components_ == fitted.n_components_
        np.testing.assert_array_equal(est.cv_errors_, fitted.cv_errors_)
        np.testing.assert_allclose(est.decision_function(Xt), fitted.decision_function(Xt), atol=1e-10)
        np.testing.assert_array_equal(est.predict(Xt), fitted.predict(Xt))

        # the cluster goes away mid-run (after the features, before the folds)
        import kpm.scale as S

        orig = S.NystroemKPM._features

        def features_then_disconnect(self, *args):
            F = orig(self, *args)
            cluster.close()
            return F

        monkeypatch.setattr(S.NystroemKPM, "_features", features_then_disconnect)
        broken = NystroemKPM(**KW, memory_budget=2_000_000, client=client)
        with pytest.raises(DaskClientError, match="no model was fitted"):
            broken.fit(X, y)
        assert not hasattr(broken, "coef_") and not hasattr(broken, "classes_")


def test_cli_reproduce_scale_smoke(tmp_path):
    """`kpm reproduce scale` on a tiny setting writes the table, the JSON and the plot."""
    from typer.testing import CliRunner

    from kpm.cli import app

    r = CliRunner().invoke(app, ["reproduce", "scale", "--out", str(tmp_path), "--sizes", "600",
                                 "--methods", "kpm,nys_linsvc", "--landmarks", "40", "--n-test", "500"])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "scale.md").read_text()
    assert "NystroemKPM" in md and "| 600 |" in md and "m = 40 landmarks, 500 test points" in md
    assert (tmp_path / "scale_time_vs_n.png").stat().st_size > 0
    import json

    res = json.loads((tmp_path / "scale.json").read_text())["results"]
    assert res["kpm_600"]["test_error"] < 0.1 and res["kpm_600"]["m"] == 40
