"""Landmark rules (kpm.spectral.landmarks): randomly pivoted Cholesky, the trace error, bad input."""

import numpy as np
import pytest

from kpm import KernelProjection
from kpm.datasets import make_twonorm
from kpm.kernels import make_kernel
from kpm.spectral.landmarks import nystroem_trace_error, rpcholesky, select_landmarks
from kpm import NystroemKPM


def _clustered(seed=0):
    """One tight cluster of 2800 points and 40 far-away clusters of 5 points each."""
    rng = np.random.default_rng(seed)
    big = 0.1 * rng.normal(size=(2800, 5))
    centres = rng.normal(scale=10.0, size=(40, 5))
    small = np.repeat(centres, 5, axis=0) + 0.1 * rng.normal(size=(200, 5))
    return np.vstack([big, small])


def test_rpcholesky_recovers_a_rank_r_kernel_with_r_landmarks():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    kern = make_kernel("poly", degree=2, gamma=1.0, coef0=1.0)  # rank 15 = C(4 + 2, 2)
    K = kern(X)
    pivots, F, res = rpcholesky(kern, X, 15, random_state=0)
    assert len(np.unique(pivots)) == 15 and F.shape == (300, 15)
    np.testing.assert_allclose(F @ F.T, K, atol=1e-9 * np.abs(K).max())
    assert res.max() <= 1e-9 * K.diagonal().max()
    # the Nyström approximation from those landmarks is exact too
    idx = select_landmarks(X, 15, "rpcholesky", random_state=0, kernel=kern)
    np.testing.assert_array_equal(idx, np.sort(pivots))
    assert nystroem_trace_error(kern, X, idx) < 1e-10
    # precomputed: the same pivots from the matrix itself
    p2, _, _ = rpcholesky(make_kernel("precomputed"), K, 15, random_state=0)
    np.testing.assert_array_equal(p2, pivots)


def test_rpcholesky_warns_and_fills_when_the_rank_is_below_m():
    X = np.random.default_rng(1).normal(size=(50, 3))
    with pytest.warns(UserWarning, match="numerical rank 3 < n_landmarks=6"):
        pivots, F, _ = rpcholesky(make_kernel("linear"), X, 6, random_state=0)
    assert F.shape == (50, 3) and len(np.unique(pivots)) == 6


def test_landmark_rules_are_deterministic():
    X = _clustered()
    kern = make_kernel("rbf", sigma=1.0)
    for method in ("uniform", "kmeans++", "rpcholesky"):
        a = select_landmarks(X, 30, method, random_state=7, kernel=kern)
        b = select_landmarks(X, 30, method, random_state=7, kernel=kern)
        c = select_landmarks(X, 30, method, random_state=8, kernel=kern)
        np.testing.assert_array_equal(a, b)
        assert len(np.unique(a)) == 30 and not np.array_equal(a, c)


def test_rpcholesky_beats_uniform_on_clustered_data():
    # uniform landmarks miss most of the 40 small clusters (each one carries 5/3000 of
    # the trace); RPCholesky's residual-diagonal sampling visits them
    X = _clustered()
    kern = make_kernel("rbf", sigma=1.0)
    err = {m: [nystroem_trace_error(kern, X, select_landmarks(X, 60, m, s, kernel=kern))
               for s in range(3)] for m in ("uniform", "rpcholesky")}
    assert max(err["rpcholesky"]) < 0.25 * min(err["uniform"])
    assert min(err["uniform"]) > 0.04  # the data set is hard for uniform landmarks


def test_estimators_take_rpcholesky_landmarks():
    X, y = make_twonorm(600, random_state=0)
    kp = KernelProjection(5, sigma=4.0, n_landmarks=40, landmarks="rpcholesky", random_state=0).fit(X)
    kern = make_kernel("rbf", sigma=4.0)
    np.testing.assert_array_equal(
        kp.landmark_indices_,
        select_landmarks(X, 40, "rpcholesky", np.random.RandomState(0), kernel=kern),
    )
    est = NystroemKPM(n_landmarks=60, landmarks="rpcholesky", sigma=4.0, max_components=10,
                      cv=2, random_state=0).fit(X[:400], y[:400])
    again = NystroemKPM(n_landmarks=60, landmarks="rpcholesky", sigma=4.0, max_components=10,
                        cv=2, random_state=0).fit(X[:400], y[:400])
    np.testing.assert_array_equal(est.landmark_indices_, again.landmark_indices_)
    assert np.mean(est.predict(X[400:]) != y[400:]) < 0.08


def test_clear_errors():
    X = np.random.default_rng(0).normal(size=(40, 3))
    kern = make_kernel("rbf", sigma=1.0)
    with pytest.raises(ValueError, match="pass kernel="):
        select_landmarks(X, 5, "rpcholesky")
    with pytest.raises(ValueError, match="kpm.kernels.Kernel"):
        select_landmarks(X, 5, "rpcholesky", kernel="rbf")
    with pytest.raises(ValueError, match="larger than the number of samples"):
        rpcholesky(kern, X, 41)
    with pytest.raises(ValueError, match="n_landmarks must be"):
        rpcholesky(kern, X, 0)
    with pytest.raises(ValueError, match="random_state must be None, an integer >= 0, a numpy Generator or a RandomState, got 'x'"):
        select_landmarks(X, 5, "rpcholesky", random_state="x", kernel=kern)
    with pytest.raises(ValueError, match="random_state must be >= 0, got -1"):
        select_landmarks(X, 5, random_state=-1)
    with pytest.raises(ValueError, match="square"):
        rpcholesky(make_kernel("precomputed"), X, 3)
    with pytest.raises(ValueError, match="needs numeric feature vectors"):
        select_landmarks(kern(X), 5, "kmeans++", kernel=make_kernel("precomputed"))
    with pytest.raises(ValueError, match="row indices"):
        nystroem_trace_error(kern, X, [0, 50])
    with pytest.raises(ValueError, match="Nyström variant only"):
        KernelProjection(3, landmarks="rpcholesky").fit(X)
    with pytest.raises(ValueError, match="landmarks must be one of"):
        KernelProjection(3, n_landmarks=5, landmarks="random").fit(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        rpcholesky(kern, Xn, 3)
