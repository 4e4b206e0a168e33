"""NystroemKPM's distributed mode: the features stay on the workers of a LocalCluster."""

import os
import pickle
import signal

import numpy as np
import pytest
from sklearn.model_selection import PredefinedSplit

import kpm.machine.nystroem as S
from kpm import NystroemKPM
from kpm.machine.dask_data import DaskRowSource, chunk_folds
from kpm.datasets import make_twonorm

N, D_MAX = 1200, 10


@pytest.fixture(scope="module", params=[(None, None), (0.9, None), (0.9, 30)], ids=["columns", "aggregated", "band"])
def data(request):
    X, y = make_twonorm(N, random_state=0)
    fold = np.random.default_rng(0).integers(0, 2, N)
    kw = dict(n_landmarks=60, sigma="median", max_components=D_MAX, n_components_grid=[1, 3, 10],
              memory_budget=100_000, cv=PredefinedSplit(fold), random_state=0,
              solver_options=dict(init_size=60, aggregate_below=request.param[0], band_size=request.param[1]))
    return X, y, kw


@pytest.fixture(scope="module")
def in_memory(data):
    X, y, kw = data
    return NystroemKPM(**kw).fit(X, y)


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    # 2 worker processes; each holds only its chunks of the features
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit="1GiB") as lc, Client(lc) as client:
        yield lc, client


@pytest.fixture
def small_chunks(monkeypatch):
    """Persisted chunks of 195 rows (3 row blocks of 65): 7 chunks of the 1200 points."""
    monkeypatch.setattr(S, "DASK_CHUNK_BYTES", 20_000)


def assert_same_model(a, b):
    assert a.n_components_ == b.n_components_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    np.testing.assert_array_equal(a.cv_errors_, b.cv_errors_)
    assert a.lp_stats_["n_working"] == b.lp_stats_["n_working"]
    assert a.lp_stats_["n_aggregated"] == b.lp_stats_["n_aggregated"]
    # the hinge sums are summed chunk by chunk on the workers: equal up to rounding
    np.testing.assert_allclose(a.train_risk_, b.train_risk_, rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_distributed_fit_equals_in_memory_fit_and_features_never_gather(data, in_memory, cluster, small_chunks):
    X, y, kw = data
    _, client = cluster
    received = []
    gather = client._gather

    async def recording_gather(futures, *args, **kwargs):  # every result the client receives
        out = await gather(futures, *args, **kwargs)
        received.append(len(pickle.dumps(out, protocol=5)))
        return out

    client._gather = recording_gather
    try:
        est = NystroemKPM(**kw, client=client).fit(X, y)
    finally:
        del client._gather
    assert_same_model(est, in_memory)
    if kw["solver_options"]["aggregate_below"] is not None:  # the aggregated term was used
        assert max(est.lp_stats_["n_aggregated"]) > 0
    full_features = N * D_MAX * 8
    assert max(received) < full_features / 4, (max(received), full_features)

    import dask.array as da

    Xd = da.from_array(X, chunks=300)
    pred = est.predict(Xd)
    assert isinstance(pred, da.Array)  # lazy
    np.testing.assert_array_equal(pred.compute(), in_memory.predict(X))
    assert est.score(Xd, y) == in_memory.score(X, y)


@pytest.mark.slow
def test_a_killed_worker_does_not_change_the_fit(data, in_memory, cluster, small_chunks, monkeypatch):
    """A worker process is killed (SIGKILL) after the third violation search: the scheduler
    recomputes its chunks of the features from the graph and the fit is the same."""
    X, y, kw = data
    _, client = cluster
    victim, pid = sorted(client.run(os.getpid).items())[0]
    calls = []
    search = DaskRowSource.search

    def search_then_kill(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            os.kill(pid, signal.SIGKILL)
        return search(self, *args, **kwargs)

    monkeypatch.setattr(DaskRowSource, "search", search_then_kill)
    est = NystroemKPM(**kw, client=client).fit(X, y)
    assert len(calls) > 3
    assert victim not in client.scheduler_info()["workers"]  # it died (its nanny started a new one)
    assert_same_model(est, in_memory)


def test_chunk_folds_are_deterministic_and_stratified():
    codes = np.repeat([0, 1, 2], [50, 31, 7])
    a = chunk_folds(codes, 5, seed=3, chunk=2)
    assert np.array_equal(a, chunk_folds(codes, 5, seed=3, chunk=2))
    assert not np.array_equal(a, chunk_folds(codes, 5, seed=3, chunk=1))
    for c in range(3):
        counts = np.bincount(a[codes == c], minlength=5)
        assert counts.max() - counts.min() <= 1  # each class dealt evenly to the folds
    assert set(a) == set(range(5))


@pytest.mark.slow
def test_row_source_on_the_workers_answers_as_in_memory(cluster):
    """Searches (some chunks sending the rows of their violated points, others too many to
    send them) and the one-feature passes of the D = 1 line search give the in-memory answers."""
    import dask.array as da

    from kpm.hinge.rows import InMemoryRows
    from kpm.hinge.aggregation import Reference
    from kpm.machine.dask_data import DaskRows

    _, client = cluster
    rng = np.random.default_rng(0)
    F = np.asfortranarray(rng.standard_normal((900, 4)) + [1.0, 0, 0, 0])
    codes = (F[:, 1] + 0.5 * rng.standard_normal(900) > 0).astype(np.int64)
    y = np.where(codes == 1, 1.0, -1.0)
    mem = InMemoryRows(F, y)
    dist = DaskRows(client, da.from_array(F, chunks=(150, 4)), da.from_array(codes, chunks=150), 2).source(0)
    working = np.arange(0, 900, 7)
    coef, b = np.array([0.3, 1.2, -0.4]), 0.1
    ref = Reference(np.array([0.2, 1.0]), 0.05, 0.9)
    for max_add, r in ((None, None), (40, None), (40, ref), (450, None), (450, ref), (600, ref)):
        a = mem.search(coef, b, working, 1e-9, max_add, ref=r)
        d = dist.search(coef, b, working, 1e-9, max_add, ref=r)
        np.testing.assert_array_equal(d.index, a.index)
        np.testing.assert_array_equal(d.features, a.features)
        np.testing.assert_allclose(d.viol, a.viol, rtol=1e-13, atol=1e-15)  # the chunks' products may round differently
        np.testing.assert_array_equal(d.aggregated, a.aggregated)
        assert d.n_violated == a.n_violated and np.isclose(d.objective, a.objective, rtol=1e-13)
    slopes, lo, width = np.array([-1.0, 0.5, 2.0]), np.array([-4.0, -3.0, -5.0]), np.array([0.2, 0.1, 0.3])
    np.testing.assert_array_equal(dist.column_range(), mem.column_range())
    np.testing.assert_array_equal(dist.line_derivatives(slopes, lo, width, 32), mem.line_derivatives(slopes, lo, width, 32))
    hinge_d, hinge_m = dist.line_hinge(slopes, [0.1, -0.2, 0.3]), mem.line_hinge(slopes, [0.1, -0.2, 0.3])
    np.testing.assert_array_equal(hinge_d[0] + hinge_d[1], hinge_m[0] + hinge_m[1])
    widths = np.array([0.01, 0.1, 0.3, 1.0])
    np.testing.assert_array_equal(dist.margin_counts(coef, b, widths), mem.margin_counts(coef, b, widths))


@pytest.mark.slow
def test_client_defaults_to_the_aggregated_constraint_generation(cluster, small_chunks):
    """With client= and solver_options=None the fit is the memory-bounded constraint
    generation (CLIENT_SOLVER_OPTIONS: the points of clear hinge loss aggregated, a band of at
    most 5000 points): the same
    model as the in-memory fit with those options, with points aggregated."""
    assert S.CLIENT_SOLVER_OPTIONS == {"aggregate_below": 0.9, "band_size": 5000}
    _, client = cluster
    X, y = make_twonorm(N, random_state=1)
    fold = np.random.default_rng(1).integers(0, 2, N)
    kw = dict(n_landmarks=60, sigma="median", max_components=D_MAX, n_components_grid=[1, 3, 10],
              memory_budget=100_000, cv=PredefinedSplit(fold), random_state=0)
    est = NystroemKPM(**kw, client=client).fit(X, y)
    ref = NystroemKPM(**kw, solver_options=dict(S.CLIENT_SOLVER_OPTIONS)).fit(X, y)
    assert max(est.lp_stats_["n_aggregated"]) > 0
    assert_same_model(est, ref)
    # in memory, solver_options=None stays the plain constraint generation
    plain = NystroemKPM(**kw).fit(X, y)
    assert max(plain.lp_stats_["n_aggregated"]) == 0
