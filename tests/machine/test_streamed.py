"""NystroemKPM's SVM beyond the memory of its features: C and D chosen on a subsample, the final
squared-hinge SVM fitted on every point by streamed Newton steps (kpm.machine.streamed)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from kpm import NystroemKPM
from kpm.machine import streamed

KW = dict(n_landmarks=150, sigma="median", formulation="svm", cv="auto", loss="squared_hinge", max_components=None,
          random_state=0)
N_TRAIN = 2400


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(N_TRAIN + 1500, 10, n_informative=6, flip_y=0.02, random_state=0)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


@pytest.fixture(scope="module")
def in_memory(data):
    X, y, _, _ = data
    return NystroemKPM(**KW).fit(X, y)


def _streamed(monkeypatch, rows, X, y, **kw):
    """A fit streamed with C and D chosen on ``rows(n)`` points."""
    monkeypatch.setattr(streamed, "selection_rows", lambda n, cols: rows(n))
    return NystroemKPM(**{**KW, **kw}).fit(X, y)


def test_the_rule_streams_beyond_the_selection_bytes():
    rows = streamed.SELECTION_BYTES // (streamed.FEATURE_COPIES * 8 * 1000)
    assert rows == 44739
    assert streamed.selection_rows(rows, 1000) is None
    assert streamed.selection_rows(rows + 1, 1000) == rows
    assert streamed.selection_rows(10**6, 1000) == rows


def test_in_memory_fit_records_no_streaming(in_memory):
    assert in_memory.n_selection_samples_ == N_TRAIN and in_memory.streamed_steps_ is None
    assert "streamed_fit" not in in_memory.timings_


def test_every_point_in_the_subsample_is_the_in_memory_fit(data, in_memory, monkeypatch):
    X, y, Xt, _ = data
    est = _streamed(monkeypatch, lambda n: n, X, y)
    assert est.n_selection_samples_ == N_TRAIN and est.streamed_steps_ == 0  # the warm start is the solution
    assert (est.n_components_, est.C_) == (in_memory.n_components_, in_memory.C_)
    np.testing.assert_allclose(est.decision_function(Xt), in_memory.decision_function(Xt), atol=1e-6)


@pytest.fixture(scope="module")
def third(data):
    """C and D chosen on a third of the points, the final fit streamed over all of them."""
    X, y, _, _ = data
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(streamed, "selection_rows", lambda n, cols: n // 3)
        return NystroemKPM(**KW).fit(X, y)


def test_the_streamed_final_fit_is_the_svm_of_every_point(data, third):
    """The streamed Newton steps reach the in-memory SVM of all the points at the chosen (D, C)."""
    X, y, Xt, _ = data
    assert third.n_selection_samples_ == N_TRAIN // 3 and third.streamed_steps_ > 0
    assert "streamed_fit" in third.timings_
    fixed = NystroemKPM(**{**KW, "selection": third.n_components_, "C": third.C_}).fit(X, y)
    np.testing.assert_array_equal(fixed.landmarks_, third.landmarks_)
    ft = fixed.decision_function(Xt)
    np.testing.assert_allclose(third.decision_function(Xt), ft, atol=1e-6 * (1 + np.abs(ft).max()))


def test_the_streamed_fit_is_as_accurate_as_the_in_memory_fit(data, in_memory, third):
    """On 1,500 fresh points: the final fit on every point at (D, C) of a third of them."""
    _, _, Xt, yt = data
    err_memory, err_streamed = 1 - in_memory.score(Xt, yt), 1 - third.score(Xt, yt)
    assert err_streamed <= err_memory + 0.01


def test_multiclass_and_weights_streamed_equal_the_svm_of_every_point(monkeypatch):
    X, y = make_classification(2600, 8, n_informative=5, n_classes=3, n_clusters_per_class=1, random_state=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 1500)
    X, y, Xt = X[:1500], y[:1500], X[1500:]
    est = _streamed(monkeypatch, lambda n: n // 2, X, y, n_landmarks=100)
    fit_w = NystroemKPM(**{**KW, "n_landmarks": 100})
    monkeypatch.setattr(streamed, "selection_rows", lambda n, cols: n // 2)
    est_w = fit_w.fit(X, y, sample_weight=w)
    monkeypatch.undo()
    for model, weights in ((est, None), (est_w, w)):
        assert model.streamed_steps_ > 0 and model.dual_coef_.shape == (3, 100)
        fixed = NystroemKPM(**{**KW, "n_landmarks": 100, "selection": model.n_components_, "C": model.C_})
        ft = fixed.fit(X, y, sample_weight=weights).decision_function(Xt)
        np.testing.assert_allclose(model.decision_function(Xt), ft, atol=1e-6 * (1 + np.abs(ft).max()))


@pytest.mark.parametrize("as_dask", [True, False], ids=["dask-X", "numpy-X"])
def test_dask_client_equals_the_in_memory_streamed_fit(data, third, as_dask):
    """The fit with client= (C and D on the same subsample, the Newton passes over the workers'
    chunks) equals the in-memory streamed fit; a numpy X with client= is persisted on the
    workers in row chunks."""
    pytest.importorskip("distributed")
    import dask.array as da
    from distributed import Client

    X, y, Xt, _ = data
    with pytest.MonkeyPatch.context() as mp, Client(processes=False, n_workers=2 if as_dask else 1,
                                                    threads_per_worker=1, dashboard_address=":0") as client:
        mp.setattr(streamed, "selection_rows", lambda n, cols: n // 3)
        fit_X, fit_y = (da.from_array(X, chunks=500), da.from_array(y, chunks=500)) if as_dask else (X, y)
        est = NystroemKPM(**KW, client=client).fit(fit_X, fit_y)
    assert (est.n_components_, est.C_, est.n_selection_samples_, est.streamed_steps_) == (
        third.n_components_, third.C_, third.n_selection_samples_, third.streamed_steps_)
    np.testing.assert_allclose(est.decision_function(Xt), third.decision_function(Xt), atol=1e-8)


def test_dask_client_below_the_bytes_chooses_on_every_point(data, in_memory):
    """With client= the final fit is always streamed; its subsample is then every point."""
    pytest.importorskip("distributed")
    import dask.array as da
    from distributed import Client

    X, y, Xt, _ = data
    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0") as client:
        est = NystroemKPM(**KW, client=client).fit(da.from_array(X, chunks=700), y)
    assert est.n_selection_samples_ == N_TRAIN and est.streamed_steps_ == 0
    np.testing.assert_allclose(est.decision_function(Xt), in_memory.decision_function(Xt), atol=1e-6)


def test_chunk_sums_are_the_weighted_gram_and_gradient_sums():
    """Blockwise over rows, only the rows of positive weight: the sums of a_i a_i^T and r_i a_i."""
    from kpm.kernels import make_kernel

    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 5))
    w = rng.uniform(0.5, 2.0, (500, 2))
    w[::3, 0] = 0.0
    w[1::2, 1] = 0.0
    r = rng.standard_normal((500, 2))
    Z, M, kernel = X[:40], rng.standard_normal((40, 30)), make_kernel("rbf", sigma=2.0)
    G, g = streamed.chunk_sums(X, w, r, Z, kernel, M, 0.5, 128)
    A = np.hstack([kernel(X, Z) @ M, np.full((500, 1), 0.5)])
    for c in range(2):
        np.testing.assert_allclose(G[c], (A * w[:, c:c + 1]).T @ A, rtol=1e-12, atol=1e-12 * np.abs(G[c]).max())
        np.testing.assert_allclose(g[c], A.T @ np.where(w[:, c] > 0, r[:, c], 0.0), rtol=1e-12, atol=1e-10)
