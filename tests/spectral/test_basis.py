"""The spectral-basis layer (kpm.spectral): one eigendecomposition pipeline, one rank cut."""

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA

from kpm import (
    config_context,
    KernelPCADenoiser,
    KernelPCRClassifier,
    KernelPCRRegressor,
    KernelProjection,
    KernelProjectionMachine,
    RelevantDimension,
    pairwise_kernel,
)
from kpm.spectral.basis import (
    EIGEN_SOLVERS,
    EIGENSOLVERS,
    RANK_RTOL,
    EigenBasis,
    dense_matrix_fits,
    eigen_basis,
    numerical_rank,
    nystroem_basis,
    operator_basis,
    resolve_solver,
    rounding_level,
)


def _data(n=120, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((15, d))


def _rbf(A, B=None, sigma=1.5):
    return pairwise_kernel(A, B, kernel="rbf", sigma=sigma)


def _align(A, B):
    """B with its columns' signs flipped to match A's."""
    s = np.sign(np.sum(A * B, axis=0))
    s[s == 0] = 1.0
    return B * s


@pytest.mark.parametrize("center", [False, True])
def test_basis_matches_numpy_eigh(center):
    X, Xt = _data()
    K = _rbf(X)
    n = len(K)
    H = np.eye(n) - 1.0 / n
    A = H @ K @ H if center else K
    w_ref, U_ref = np.linalg.eigh(A)
    w_ref, U_ref = w_ref[::-1], U_ref[:, ::-1]
    b = eigen_basis(K, center=center)
    assert b.complete and b.eigenvectors.shape == (n, n)
    np.testing.assert_allclose(b.eigenvalues, w_ref, atol=1e-10 * w_ref[0])
    r = b.rank
    assert r == int(np.sum(w_ref > max(RANK_RTOL * w_ref[0], rounding_level(n, np.abs(K).max()))))
    # the leading, well separated directions agree up to sign
    np.testing.assert_allclose(_align(U_ref[:, :10], b.eigenvectors[:, :10]), U_ref[:, :10], atol=1e-8)
    # coordinates reproduce the decomposed matrix; features of the training points are them
    Y = b.coordinates()
    np.testing.assert_allclose(Y @ Y.T, A, atol=1e-8)
    np.testing.assert_allclose(b.features(K), Y, atol=1e-6)
    np.testing.assert_allclose(b.features(K, 5, whiten=True), b.eigenvectors[:, :5], atol=1e-9)
    assert (b.col_means is not None) == center


def test_features_match_scikit_learn_kernel_pca():
    X, Xt = _data()
    K, Kt = _rbf(X), _rbf(Xt, X)
    b = eigen_basis(K, center=True)
    kp = KernelPCA(8, kernel="precomputed", eigen_solver="dense").fit(K)
    ours = b.features(Kt, 8)
    ref = kp.transform(Kt)
    np.testing.assert_allclose(_align(ref, ours), ref, atol=1e-9)
    np.testing.assert_allclose(b.eigenvalues[:8], kp.eigenvalues_, rtol=1e-10)
    np.testing.assert_allclose(_align(kp.transform(K), b.coordinates(8)), kp.transform(K), atol=1e-9)


def test_uncentred_features_are_the_projections_on_the_eigenvectors():
    X, Xt = _data()
    K, Kt = _rbf(X), _rbf(Xt, X)
    w, U = np.linalg.eigh(K)
    w, U = w[::-1][:6], U[:, ::-1][:, :6]
    b = eigen_basis(K, 6)
    assert not b.complete and b.col_means is None
    U = _align(b.eigenvectors, U)
    np.testing.assert_allclose(b.features(Kt), Kt @ U / np.sqrt(w), atol=1e-8)
    np.testing.assert_allclose(b.features(Kt, whiten=True), Kt @ U / w, atol=1e-7)


@pytest.mark.parametrize("center", [False, True])
def test_rank_cut_of_a_rank_deficient_kernel(center):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 3))
    X = np.vstack([X, X[:10]])  # duplicates do not add rank
    K = X @ X.T  # linear kernel: rank 3 (centred: 3 as well, generic data)
    b = eigen_basis(K, center=center)
    assert b.rank == 3
    assert b.eigenvalues[3] <= RANK_RTOL * b.eigenvalues[0]
    # the features never divide by the null eigenvalues
    assert np.all(np.isfinite(b.features(K)))
    assert b.features(K).shape == (70, 3)
    with pytest.raises(ValueError, match="n_components"):
        b.features(K, 4)
    # a truncated basis keeps the leading pairs only
    t = b.truncate()
    assert t.eigenvalues.shape == (3,) and t.eigenvectors.shape == (70, 3) and t.rank == 3


def test_numerical_rank_is_the_one_rule():
    w = np.array([1.0, 1e-3, 2e-10, 5e-11, 0.0, -1e-15])
    assert numerical_rank(w) == 3
    assert numerical_rank(w, rtol=1e-3) == 1  # strictly above rtol * lambda_1
    assert numerical_rank(w, floor=1e-2) == 1
    assert numerical_rank(w, floor=2.0) == 0  # lambda_1 at the rounding level: rank 0
    assert numerical_rank(np.zeros(3)) == 0
    assert numerical_rank([]) == 0
    assert rounding_level(100, 2.0) == pytest.approx(200 * np.finfo(float).eps)


def test_centred_identical_samples_have_rank_zero():
    K = np.full((20, 20), 0.7)
    assert eigen_basis(K, center=True).rank == 0
    assert eigen_basis(K).rank == 1


def test_dense_partial_spectrum_of_a_nearly_identity_centred_matrix():
    # LAPACK's subset drivers (syevr, then syevx) both return no eigenpairs for this matrix:
    # a Gaussian kernel matrix of points far apart, centred (spectrum 1 + 1e-4, 1 repeated)
    K = np.eye(60)
    K[0, 1] = K[1, 0] = 1e-4
    basis = eigen_basis(K, 3, center=True, solver="dense")
    Kc = K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()
    np.testing.assert_allclose(basis.eigenvalues, np.linalg.eigvalsh(Kc)[::-1][:3], rtol=1e-12)
    assert basis.rank == 3


def test_the_whole_spectrum_of_a_matrix_of_many_duplicates_is_exact(monkeypatch):
    """The whole spectrum above order 300 comes from divide and conquer (MRRR slows down on
    the clusters of eigenvalues that duplicated samples make): eigenpairs to rounding."""
    from scipy import linalg

    from kpm.spectral.eigensolvers import top_eigh

    drivers, eigh = [], linalg.eigh
    monkeypatch.setattr(linalg, "eigh", lambda *a, **k: drivers.append(k.get("driver")) or eigh(*a, **k))

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))[rng.integers(0, 80, 400)]  # 400 samples, at most 80 distinct
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2.0)
    w, U = top_eigh(K, 400, solver="dense")  # decreasing order
    np.testing.assert_allclose(w, np.linalg.eigvalsh(K)[::-1], atol=1e-11)
    np.testing.assert_allclose(K @ U, U * w, atol=1e-11)
    np.testing.assert_allclose(U.T @ U, np.eye(400), atol=1e-12)
    assert drivers == ["evd"]


def test_nystroem_basis_with_every_point_a_landmark_is_the_exact_basis():
    X, Xt = _data(80)
    K, Kt = _rbf(X), _rbf(Xt, X)
    for center in (True, False):
        ex = eigen_basis(K, center=center)
        ny = nystroem_basis(K, K, center=center, landmark_indices=np.arange(len(K)))
        m = 12
        np.testing.assert_allclose(ny.eigenvalues[:m], ex.eigenvalues[:m], rtol=1e-8)
        np.testing.assert_allclose(ny.eigenvectors[:, :m], ex.eigenvectors[:, :m], atol=1e-7)
        np.testing.assert_allclose(ny.features(Kt, m), ex.features(Kt, m), atol=1e-7)
        np.testing.assert_allclose(ny.features(Kt, m, whiten=True), ex.features(Kt, m, whiten=True),
                                   atol=1e-6)
        np.testing.assert_allclose(ny.coordinates(m), ex.coordinates(m), atol=1e-7)


def test_nystroem_basis_with_fewer_landmarks_is_an_approximation():
    X, Xt = _data(150)
    K = _rbf(X)
    idx = np.arange(0, 150, 3)
    ny = nystroem_basis(K[np.ix_(idx, idx)], K[:, idx], landmark_indices=idx)
    ex = eigen_basis(K, center=True)
    assert ny.rank <= len(idx)
    assert ny.nystroem.landmark_indices is idx
    # the leading eigenvalue of the approximate kernel is close, but not equal
    assert 0 < abs(ny.eigenvalues[0] - ex.eigenvalues[0]) < 0.05 * ex.eigenvalues[0]
    with pytest.raises(ValueError, match="landmarks"):
        ny.features(K)  # rows against the training points, not the landmarks


@pytest.mark.parametrize("whiten", [True, False])
def test_features_equal_kernel_projection(whiten):
    X, Xt = _data()
    kp = KernelProjection(10, kernel="rbf", sigma=1.5, whiten=whiten, eigen_solver="dense").fit(X)
    b = eigen_basis(_rbf(X), center=True)
    np.testing.assert_allclose(kp.transform(Xt), b.features(_rbf(Xt, X), 10, whiten=whiten), atol=1e-10)
    np.testing.assert_allclose(kp.fit_transform(X), b.coordinates(10, whiten=whiten), atol=1e-10)


@pytest.mark.parametrize("solver", sorted(EIGENSOLVERS))
@pytest.mark.parametrize("center", [False, True])
def test_every_registered_solver_agrees_with_dense(solver, center):
    X, _ = _data(400, 4)
    K = _rbf(X, sigma=1.0)
    ref = eigen_basis(K, 10, center=center, solver="dense")
    b = eigen_basis(K, 10, center=center, solver=solver, random_state=0)
    np.testing.assert_allclose(b.eigenvalues, ref.eigenvalues, rtol=1e-9)
    np.testing.assert_allclose(np.abs(np.sum(b.eigenvectors * ref.eigenvectors, axis=0)), 1.0, atol=1e-7)
    if solver != "dense":
        op = operator_basis(lambda V: K @ V, len(K), 10, center=center, solver=solver, random_state=0)
        np.testing.assert_allclose(op.eigenvalues, ref.eigenvalues, rtol=1e-9)
        if center:
            np.testing.assert_allclose(op.col_means, K.mean(axis=0), rtol=1e-12)


def test_auto_follows_the_measured_crossovers():
    assert set(EIGEN_SOLVERS) == {"auto", *EIGENSOLVERS}
    assert resolve_solver("auto", 1000, None) == "dense"
    assert resolve_solver("auto", 200, 5) == "dense"
    assert resolve_solver("auto", 1000, 20) == "arpack"
    assert resolve_solver("auto", 5000, 20) == "arpack"  # dsymv products: faster at every n measured
    assert resolve_solver("auto", 5000, 150) == "randomized"
    assert resolve_solver("auto", 1000, 300) == "dense"  # more than n/5 pairs
    assert resolve_solver("auto", 5000, None, grow=True) == "randomized"
    assert resolve_solver("arpack", 1000, None) == "dense"  # the whole spectrum


def test_bad_input_gives_clear_errors():
    with pytest.raises(ValueError, match="square"):
        eigen_basis(np.ones((3, 4)))
    with pytest.raises(ValueError, match="square"):
        eigen_basis(np.ones(3))
    with pytest.raises(ValueError, match="NaN or infinite"):
        eigen_basis(np.array([[1.0, np.nan], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match="solver"):
        eigen_basis(np.eye(3), solver="lobpcg")
    with pytest.raises(ValueError, match="n_components"):
        eigen_basis(np.eye(3), 4)
    with pytest.raises(ValueError, match="rtol"):
        eigen_basis(np.eye(3), rtol=-1.0)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        eigen_basis(-np.eye(4) - 0.1, name="the precomputed kernel matrix")
    b = eigen_basis(np.eye(4) + 0.5)
    with pytest.raises(ValueError, match="training points"):
        b.features(np.ones((2, 3)))
    with pytest.raises(ValueError, match="partial solver"):
        operator_basis(lambda V: V, 5, 2, solver="dense")
    with pytest.raises(ValueError, match="callable"):
        operator_basis(np.eye(5), 5, 2)
    with pytest.raises(ValueError, match="K_xz"):
        nystroem_basis(np.eye(3), np.ones((4, 2)))
    with pytest.raises(ValueError, match="numerically zero"):
        nystroem_basis(np.zeros((3, 3)), np.zeros((4, 3)))
    assert isinstance(b, EigenBasis)


ESTIMATORS = [
    (KernelProjectionMachine, {"max_components": 5}),
    (KernelPCADenoiser, {"n_components": 3}),
    (RelevantDimension, {"max_components": 5}),
    (KernelPCRRegressor, {"max_components": 5, "n_components": 3}),
    (KernelPCRClassifier, {"max_components": 5, "n_components": 3}),
]


@pytest.mark.parametrize("cls,params", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_estimator_takes_an_eigen_solver(cls, params):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    y = (X[:, 0] > 0).astype(int)
    assert cls().get_params()["eigen_solver"] == "auto"
    with pytest.raises(ValueError, match="eigen_solver"):
        cls(eigen_solver="lobpcg", **params).fit(X, y)
    fits = [cls(eigen_solver=s, random_state=0, **params).fit(X, y) for s in ("dense", "arpack")]
    np.testing.assert_allclose(fits[0].eigenvalues_[:3], fits[1].eigenvalues_[:3], rtol=1e-9)


def test_every_estimator_cuts_at_the_same_rank():
    """A rank-3 kernel plus 1e-9 on the diagonal: the 57 tiny eigenvalues are above the KPM's
    former cut (n eps lambda_1 ~ 2e-12) but below the common one (1e-10 lambda_1 ~ 2e-8)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 3))
    K = X @ X.T + 1e-9 * np.eye(60)
    y = np.where(X[:, 0] > 0, 1, -1)
    assert eigen_basis(K).rank == 3
    kpm = KernelProjectionMachine(kernel="precomputed", selection="penalty", penalty=0.01, formulation="paper").fit(K, y)
    assert len(kpm.eigenvalues_) == 3 and kpm.selection_curve_["D"].max() == 3
    with pytest.raises(ValueError, match="larger than the rank 3 of the kernel matrix"):
        KernelProjectionMachine(kernel="precomputed", selection=4, formulation="paper").fit(K, y)
    assert KernelProjection(kernel="precomputed", centered=False).fit(K).rank_ == 3
    assert RelevantDimension(kernel="precomputed").fit(K, y.astype(float)).rank_ == 3
    assert KernelPCRRegressor(kernel="precomputed").fit(K, y.astype(float)).n_components_ <= 3


def test_arpack_products_read_one_triangle_and_match_dense():
    # ARPACK's matrix-vector products on the matrix itself are BLAS dsymv (one triangle):
    # the same eigenpairs as LAPACK for C- and Fortran-ordered matrices, and for a strided
    # view (which falls back to the products A @ v)
    from kpm.spectral.eigensolvers import top_eigh

    X = np.random.default_rng(3).normal(size=(1000, 6))
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    w_ref, U_ref = top_eigh(K, 8, solver="dense")
    big = np.zeros((1000, 2000))
    big[:, ::2] = K
    for A in (K, np.asfortranarray(K), big[:, ::2]):
        w, U = top_eigh(A, 8, solver="arpack", random_state=0)
        np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-12 * w_ref[0])
        np.testing.assert_allclose(np.abs(U.T @ U_ref), np.eye(8), atol=1e-8)
    # one triangle alone decides (the lower one of a Fortran-ordered matrix): garbage above
    # the diagonal does not matter
    L = np.tril(K) + np.triu(np.full_like(K, 7.0), 1)
    w, _ = top_eigh(np.asfortranarray(L), 8, solver="arpack", random_state=0)
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-12 * w_ref[0])


def test_auto_goes_matrix_free_when_the_dense_matrix_exceeds_the_budget():
    with config_context(max_kernel_bytes=8 * 1000 * 1000):
        assert dense_matrix_fits(1000) and not dense_matrix_fits(1001)
        assert resolve_solver("auto", 1000, 10, matrix_free=True) == "arpack"
        for k, grow in ((10, False), (None, False), (None, True)):
            assert resolve_solver("auto", 1001, k, grow=grow, matrix_free=True) == "matrix-free"
        # a caller that cannot evaluate its kernel blockwise keeps the crossovers
        assert resolve_solver("auto", 1001, 10) == "arpack"
        # an explicit solver is never overridden
        assert resolve_solver("randomized", 1001, 10, matrix_free=True) == "randomized"
    with pytest.raises(ValueError, match="matrix_free must be True or False"):
        resolve_solver("auto", 10, 2, matrix_free="yes")


@pytest.mark.parametrize("center", [False, True])
def test_basis_trace_is_the_decomposed_matrix_trace(center):
    X, _ = _data()
    K = _rbf(X)
    A = K - K.mean(0) - K.mean(1)[:, None] + K.mean() if center else K
    full = eigen_basis(K, center=center)
    assert full.trace == pytest.approx(np.trace(A), rel=1e-12)
    assert full.eigenvalues.sum() == pytest.approx(full.trace, rel=1e-10)
    part = eigen_basis(K, 5, center=center, solver="arpack", random_state=0)
    assert part.truncate(3).trace == pytest.approx(np.trace(A), rel=1e-12)
    idx = np.arange(0, 120, 3)
    ny = nystroem_basis(K[np.ix_(idx, idx)], K[:, idx], center=center)
    approx = K[:, idx] @ np.linalg.pinv(K[np.ix_(idx, idx)], rcond=1e-10) @ K[idx]
    A_ny = approx - approx.mean(0) - approx.mean(1)[:, None] + approx.mean() if center else approx
    assert ny.trace == pytest.approx(np.trace(A_ny), rel=1e-8)
