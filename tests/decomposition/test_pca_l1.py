"""PCA-L1 and kernel PCA-L1 (Kwak 2008; Kwak 2013 Section IV-D)."""

import numpy as np
import pytest

from kpm.decomposition.pca_l1 import PCAL1, KernelPCAL1, l1_dispersion, pca_l1_component
from kpm.decomposition.projection import KernelProjection


def _angle_deg(u, v):
    c = abs(u @ v) / (np.linalg.norm(u) * np.linalg.norm(v))
    return float(np.degrees(np.arccos(min(1.0, c))))


@pytest.fixture(scope="module")
def X():
    rng = np.random.RandomState(0)
    return rng.randn(150, 5) * np.array([4.0, 2.0, 1.0, 0.7, 0.3]) + rng.randn(5)


def test_dispersion_never_decreases(X):
    est = PCAL1(4, init="random", random_state=1).fit(X)
    for h in est.dispersion_history_:
        assert len(h) >= 2
        assert np.all(np.diff(h) >= -1e-12 * h[-1])
    # the recorded final value is the dispersion of the returned component
    Xc = X - est.mean_
    assert np.isclose(est.dispersion_history_[0][-1], l1_dispersion(Xc, est.components_[0]))


def test_result_is_a_local_maximum(X):
    Xc = X - X.mean(axis=0)
    rng = np.random.RandomState(0)
    for seed in range(3):
        w, hist, n_iter, conv = pca_l1_component(Xc, init="random", random_state=seed)
        assert conv
        d0 = l1_dispersion(Xc, w)
        # fixed point of the polarity iteration: w = X^T p / ||X^T p||
        p = np.where(Xc @ w < 0, -1.0, 1.0)
        v = Xc.T @ p
        assert np.allclose(w, v / np.linalg.norm(v), atol=1e-12)
        # no single-sample sign flip improves the objective max_w p^T X w = ||X^T p||
        s = np.linalg.norm(v)
        for i in range(len(Xc)):
            q = p.copy()
            q[i] = -q[i]
            assert np.linalg.norm(Xc.T @ q) <= s * (1 + 1e-12)
        # no small rotation of w improves the dispersion
        for _ in range(50):
            d = rng.randn(Xc.shape[1])
            w2 = w + 1e-4 * d / np.linalg.norm(d)
            assert l1_dispersion(Xc, w2 / np.linalg.norm(w2)) <= d0 * (1 + 1e-12)


def test_zero_projection_perturbation_step():
    # From w0 = e1 the polarity iteration stops at w = e1 with two zero projections
    # (dispersion 2); Kwak's perturbation step moves it to the optimum (1,1)/sqrt 2 (2 sqrt 2).
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    w, hist, _, conv = pca_l1_component(X, init=np.array([1.0, 0.0]), flip_check=False,
                                        random_state=0)
    assert conv
    assert np.isclose(l1_dispersion(X, w), 2 * np.sqrt(2))
    assert np.allclose(np.abs(w), [1 / np.sqrt(2)] * 2)
    assert np.all(np.diff(hist) >= 0)


def test_components_orthonormal_and_transform(X):
    est = PCAL1(3, random_state=0).fit(X)
    W = est.components_
    assert np.allclose(W @ W.T, np.eye(3), atol=1e-10)
    Z = est.transform(X)
    assert np.allclose(Z, (X - X.mean(axis=0)) @ W.T)
    assert np.allclose(est.l1_dispersion(X), np.abs(Z).sum(axis=0))
    assert est.n_iter_ >= 1 and est.n_iter_per_component_.shape == (3,)


def test_deterministic_given_random_state(X):
    a = PCAL1(3, init="random", random_state=5).fit(X).components_
    b = PCAL1(3, init="random", random_state=5).fit(X).components_
    assert np.array_equal(a, b)


def test_kernel_pca_l1_with_linear_kernel_equals_pca_l1(X):
    Xt = np.random.RandomState(9).randn(20, 5)
    lin = PCAL1(3, random_state=0).fit(X)
    ker = KernelPCAL1(3, kernel="linear", random_state=0).fit(X)
    assert np.max(np.abs(ker.transform(Xt) - lin.transform(Xt))) < 1e-8 * np.abs(lin.transform(Xt)).max()
    for h1, h2 in zip(lin.dispersion_history_, ker.dispersion_history_):
        assert np.isclose(h1[-1], h2[-1], rtol=1e-10)


def test_kernel_pca_l1_dual_coefficients(X):
    ker = KernelPCAL1(2, kernel="rbf", sigma=3.0, random_state=0).fit(X)
    Xt = np.random.RandomState(1).randn(10, 5)
    proj = ker.projection_
    from kpm.kernels import make_kernel
    from kpm.spectral.eigensolvers import center_cross_gram

    Kt = make_kernel("rbf", sigma=3.0)(Xt, X)
    kt = center_cross_gram(Kt, proj.kernel_col_means_, proj.kernel_mean_)
    assert np.allclose(kt @ ker.dual_coef_, ker.transform(Xt), atol=1e-8)
    # L1 dispersion in feature space is that of the coordinates
    Y = proj.transform(X)
    assert np.isclose(np.abs(Y @ ker.components_[0]).sum(), ker.dispersion_history_[0][-1])


def _outlier_data(seed):
    rng = np.random.RandomState(seed)
    d = 10
    u = np.zeros(d)
    u[0] = 1.0  # inlier principal direction
    inl = rng.randn(200, d) * 0.5
    inl[:, 0] *= 6.0  # std 3 along e1, 0.5 elsewhere
    out = np.zeros((10, d))
    out[:, 1] = rng.choice([-1.0, 1.0], 10) * 15.0  # 10 gross outliers (5 %) along e2
    out[:, 2] = rng.randn(10) * 2.0
    return np.vstack([inl, out]), u


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_l1_components_resist_outliers(seed):
    from sklearn.decomposition import PCA

    X, u = _outlier_data(seed)
    w_l2 = PCA(1).fit(X).components_[0]
    w_l1 = PCAL1(1, random_state=0).fit(X).components_[0]
    a2, a1 = _angle_deg(w_l2, u), _angle_deg(w_l1, u)
    # L2 PCA is pulled to the outliers' direction (measured: 86-90 degrees from the inlier
    # axis); PCA-L1 is tilted much less (measured: 17-20 degrees)
    assert a2 > 60.0
    assert a1 < 25.0


def test_kernel_pca_l1_resists_outliers_in_feature_space():
    """Inlier directions in feature space: kernel PCA of the inliers alone, computed in the
    same (isometric) coordinates Y of all points; angles are feature-space angles."""
    rng = np.random.RandomState(0)
    inl = rng.randn(200, 10) * 0.5
    inl[:, 0] *= 6.0
    out = rng.randn(20, 10) * 0.5
    out[:, 1] += 25.0  # a cluster of 20 outliers (9 %) far away
    X = np.vstack([inl, out])
    n_in = 200
    proj = KernelProjection(kernel="rbf", sigma=6.0)
    Y = proj.fit_transform(X)
    Yin = Y[:n_in] - Y[:n_in].mean(axis=0)
    u = np.linalg.svd(Yin, full_matrices=False)[2][0]  # inlier kernel PC 1
    w_l2 = np.linalg.svd(Y, full_matrices=False)[2][0]  # kernel PCA on all points
    w_l1 = PCAL1(1, centered=False, random_state=0).fit(Y).components_[0]
    a2, a1 = _angle_deg(w_l2, u), _angle_deg(w_l1, u)
    # measured: kernel PCA's first axis is the outlier cluster (~90 degrees from the inlier
    # axis), kernel PCA-L1's stays within ~22 degrees
    assert a2 > 60.0
    assert a1 < 30.0


# ------------------------------------------------------------------ bad input
def test_bad_input(X):
    with pytest.raises(ValueError, match="n_components"):
        PCAL1(0).fit(X)
    with pytest.raises(ValueError, match="n_components=9 is larger"):
        PCAL1(9).fit(X)
    with pytest.raises(ValueError, match="rank 2"):
        PCAL1(3).fit(np.column_stack([X[:, :2], X[:, 0] + X[:, 1]]))
    with pytest.raises(ValueError, match="init"):
        PCAL1(2, init="bogus").fit(X)
    with pytest.raises(ValueError, match="max_iter"):
        PCAL1(2, max_iter=0).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        PCAL1(2).fit(np.where(X > 3, np.nan, X))
    with pytest.raises(ValueError, match="2D array"):
        PCAL1(1).fit(X[:, 0])
    with pytest.raises(ValueError, match="features"):
        PCAL1(2).fit(X).transform(X[:, :3])
    with pytest.raises(ValueError, match="rank of the centred kernel"):
        KernelPCAL1(8, kernel="linear").fit(X)
    with pytest.raises(ValueError, match="eigen_solver"):
        KernelPCAL1(2, eigen_solver="arpack").fit(X)
    with pytest.raises(ValueError, match="sigma"):
        KernelPCAL1(2, sigma=-1.0).fit(X)
    with pytest.raises(ValueError, match="rank 0"):
        PCAL1(1).fit(np.ones((5, 3)))


# ------------------------------------------------ robustness (regression tests)
def test_pca_l1_component_validates_its_input(X):
    # NaN gave a NaN vector, init='foo' and max_iter=-5 were accepted, 1-D X an einsum error
    with pytest.raises(ValueError, match="NaN"):
        pca_l1_component(np.full((5, 2), np.nan))
    with pytest.raises(ValueError, match=r"init must be one of \('max_norm', 'pca', 'random'\), got 'foo'"):
        pca_l1_component(X, init="foo")
    with pytest.raises(ValueError, match="max_iter must be >= 1, got -5"):
        pca_l1_component(X, max_iter=-5)
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        pca_l1_component(X[:, 0])
    with pytest.raises(ValueError, match="init must be a real vector of length 5"):
        pca_l1_component(X, init=np.ones(3))
    with pytest.raises(ValueError, match="init contains NaN"):
        pca_l1_component(X, init=np.full(5, np.nan))
    with pytest.raises(ValueError, match="non-zero"):
        pca_l1_component(X, init=np.zeros(5))
    with pytest.raises(ValueError, match="flip_check must be True or False"):
        pca_l1_component(X, flip_check="no")
    with pytest.raises(ValueError, match="w must be a real vector of length 5"):
        l1_dispersion(X, np.ones(4))
    with pytest.raises(ValueError, match="NaN"):
        l1_dispersion(np.where(X > 3, np.nan, X), np.ones(5))


def test_scale_invariance_at_any_magnitude(X):
    # the iteration runs on X rescaled exactly by a power of 2: same components, and the
    # dispersion scales with the data (no overflow to inf, no underflow to 0)
    ref = PCAL1(3, random_state=0).fit(X)
    for scale in (2.0**-900, 2.0**900):
        est = PCAL1(3, random_state=0).fit(X * scale)
        np.testing.assert_array_equal(est.components_, ref.components_)
        for h, h_ref in zip(est.dispersion_history_, ref.dispersion_history_):
            np.testing.assert_array_equal(h, h_ref * scale)
    w_ref = pca_l1_component(X, random_state=0)[0]
    w, hist, _, _ = pca_l1_component(X * 1e300, random_state=0)
    np.testing.assert_allclose(w, w_ref, rtol=1e-12)
    assert np.all(np.isfinite(hist))
    with pytest.raises(ValueError, match="overflows float64"):
        pca_l1_component(np.full((4, 2), 1.7e308) * np.array([1.0, -1.0]))


def test_estimator_parameters_named(X):
    with pytest.raises(ValueError, match="centered must be True or False"):
        PCAL1(centered=1).fit(X)
    with pytest.raises(ValueError, match=r"random_state must be None, an integer in \[0, 2\*\*32 - 1\]"):
        PCAL1(random_state="seed").fit(X)
    with pytest.raises(ValueError, match=r"eigen_solver must be one of \('auto', 'dense', 'nystroem'\), got 'arpack'"):
        KernelPCAL1(2, eigen_solver="arpack").fit(X)
    with pytest.raises(ValueError, match="rank_tol must be >= 0, got -1e-10"):
        KernelPCAL1(rank_tol=-1e-10).fit(X)
    with pytest.raises(ValueError, match="n_landmarks must be an integer >= 1 or None, got 2.5"):
        KernelPCAL1(n_landmarks=2.5).fit(X)
    with pytest.raises(ValueError, match="max_iter must be >= 1, got 0"):
        KernelPCAL1(max_iter=0).fit(X)
    with pytest.raises(ValueError, match="flip_check must be True or False"):
        PCAL1(flip_check=None).fit(X)
    with pytest.raises(ValueError, match="n_components must be an integer"):
        PCAL1(2.0).fit(X)
    with pytest.raises(ValueError, match="init must be one of"):
        PCAL1(init=np.ones(5)).fit(X)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        KernelPCAL1(kernel="precomputed").fit(-np.eye(6) - 1.0)
    with pytest.raises(ValueError, match="identical in feature space"):
        with pytest.warns(UserWarning):
            KernelPCAL1().fit(np.ones((6, 2)))
