"""KernelProjection (Kwak's nonlinear projection trick) and the eigensolvers."""

import numpy as np
import pytest
from scipy import linalg
from sklearn.utils.estimator_checks import parametrize_with_checks

from helpers import rel_error as _rel
from kpm import DegenerateKernelWarning
from kpm.spectral.eigensolvers import block_krylov_eigh, center_gram, top_eigh
from kpm.kernels import make_kernel
from kpm.decomposition.pca_l1 import PCAL1, KernelPCAL1
from kpm.decomposition.projection import KernelProjection


def _sin_angle(U, V):
    """Sine of the largest principal angle between the column spans of U and V."""
    Qu = linalg.orth(U)
    Qv = linalg.orth(V)
    return float(linalg.norm(Qv - Qu @ (Qu.T @ Qv), 2))


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(120, 4)
    X[:, 0] *= 2.0
    Xt = rng.randn(25, 4)
    return X, Xt


KERNELS = [
    dict(kernel="rbf", sigma=1.5),
    dict(kernel="poly", degree=2, gamma=0.5, coef0=1.0),
    dict(kernel="imq", kernel_params={"c": 1.0}),
    dict(kernel=lambda A, B: (A @ B.T + 1.0) ** 2),
]


@pytest.mark.parametrize("kw", KERNELS, ids=["rbf", "poly", "imq", "callable"])
def test_gram_reproduced_and_centred(data, kw):
    X, _ = data
    proj = KernelProjection(**kw)
    Y = proj.fit_transform(X)  # rows are y_i, i.e. Y^T in Kwak's notation
    K = make_kernel(**kw, X=X)(X)
    Kc = center_gram(K)[0]
    assert _rel(Y @ Y.T, Kc) < 1e-8  # Y^T Y = K~ (Corollary 3)
    assert np.max(np.abs(Y.mean(axis=0))) < 1e-8 * np.sqrt(np.max(np.abs(Kc)))  # Lemma 4
    assert _rel(proj.transform(X), Y) < 1e-8  # training points map to Y (Theorem 2)
    assert proj.n_components_ == proj.rank_ == Y.shape[1]
    assert np.all(np.diff(proj.eigenvalues_) <= 0)


def test_uncentred_map(data):
    X, Xt = data
    proj = KernelProjection(kernel="rbf", gamma=0.3, centered=False)
    Y = proj.fit_transform(X)
    K = make_kernel("rbf", gamma=0.3)(X)
    assert _rel(Y @ Y.T, K) < 1e-8
    # for new points: y(x)^T y_i = k(x, x_i) restricted to the span = exact on training
    Kt = make_kernel("rbf", gamma=0.3)(Xt, X)
    Yt = proj.transform(Xt)
    # projection onto the span: <phi_P(x), phi(x_i)> = <phi(x), phi(x_i)> for x_i in the span
    assert _rel(Yt @ Y.T, Kt) < 1e-6


def test_truncation_is_kernel_pca_prefix(data):
    X, Xt = data
    full = KernelProjection(kernel="rbf", sigma=2.0).fit(X)
    part = KernelProjection(5, kernel="rbf", sigma=2.0, eigen_solver="dense").fit(X)
    assert _rel(part.transform(Xt), full.transform(Xt)[:, :5]) < 1e-8
    assert _rel(part.eigenvalues_, full.eigenvalues_[:5]) < 1e-10


@pytest.mark.parametrize("solver", ["arpack", "randomized"])
def test_partial_solvers_agree_with_dense(data, solver):
    X, Xt = data
    dense = KernelProjection(8, kernel="rbf", sigma=2.0, eigen_solver="dense").fit(X)
    other = KernelProjection(8, kernel="rbf", sigma=2.0, eigen_solver=solver, random_state=1).fit(X)
    assert _rel(other.eigenvalues_, dense.eigenvalues_) < 1e-10
    # same deterministic sign convention -> same coordinates
    assert _rel(other.transform(Xt), dense.transform(Xt)) < 1e-7
    assert _sin_angle(other.eigenvectors_, dense.eigenvectors_) < 1e-8


def test_nystroem_with_all_landmarks_is_exact(data):
    X, Xt = data
    dense = KernelProjection(6, kernel="rbf", sigma=2.0, eigen_solver="dense").fit(X)
    ny = KernelProjection(6, kernel="rbf", sigma=2.0, n_landmarks=len(X), random_state=0)
    Y = ny.fit_transform(X)
    assert ny.landmark_indices_.shape == (len(X),)
    assert _rel(ny.eigenvalues_, dense.eigenvalues_) < 1e-8
    assert _rel(np.abs(Y), np.abs(dense.transform(X))) < 1e-6
    assert _rel(np.abs(ny.transform(Xt)), np.abs(dense.transform(Xt))) < 1e-6
    assert _rel(ny.transform(X), Y) < 1e-8


def test_nystroem_subset_approximates_leading_subspace():
    rng = np.random.RandomState(3)
    X = rng.randn(600, 2)
    dense = KernelProjection(3, kernel="rbf", sigma=3.0, eigen_solver="dense").fit(X)
    ny = KernelProjection(3, kernel="rbf", sigma=3.0, eigen_solver="nystroem", n_landmarks=150,
                          random_state=0).fit(X)
    # smooth kernel, fast spectral decay: the 150-landmark map is close to the exact one
    assert _sin_angle(ny.eigenvectors_, dense.eigenvectors_) < 1e-3
    assert _rel(ny.eigenvalues_, dense.eigenvalues_) < 1e-3


def test_float_n_components_fraction_of_mass(data):
    X, _ = data
    full = KernelProjection(kernel="rbf", sigma=1.0).fit(X)
    K = make_kernel("rbf", sigma=1.0)(X)
    mass = np.trace(center_gram(K)[0])
    proj = KernelProjection(0.9, kernel="rbf", sigma=1.0).fit(X)
    k = proj.n_components_
    assert full.eigenvalues_[:k].sum() >= 0.9 * mass
    assert full.eigenvalues_[: k - 1].sum() < 0.9 * mass
    part = KernelProjection(0.9, kernel="rbf", sigma=1.0, eigen_solver="randomized",
                            random_state=0).fit(X)
    assert part.n_components_ == k


def test_residual_coordinate(data):
    X, Xt = data
    kw = dict(kernel="rbf", sigma=1.0)
    proj = KernelProjection(residual=True, **kw).fit(X)
    Z = proj.transform(Xt)
    Y = Z[:, :-1]
    # ||y||^2 + residual^2 = k~(x, x) (Lemma 5)
    k = make_kernel(**kw)
    kt = k(Xt, X)
    ktilde_xx = 1.0 - 2 * kt.mean(axis=1) + k(X).mean()
    assert _rel(np.sum(Y**2, axis=1) + Z[:, -1] ** 2, ktilde_xx) < 1e-8
    assert np.all(Z[:, -1] > 1e-3)  # new points lie outside the span
    # training points: the residual is (numerically) zero for the full-rank map
    assert np.max(proj.fit_transform(X)[:, -1]) < 1e-6
    # truncated map: residual = distance to the D-dim subspace, for training points too
    p5 = KernelProjection(5, residual=True, eigen_solver="dense", **kw)
    Z5 = p5.fit_transform(X)
    Kc = center_gram(k(X))[0]
    assert _rel(np.sum(Z5**2, axis=1), np.diag(Kc)) < 1e-8
    assert _rel(p5.transform(X), Z5) < 1e-6


def test_whitening(data):
    X, Xt = data
    proj = KernelProjection(7, kernel="rbf", sigma=1.0, whiten=True, eigen_solver="dense")
    Yw = proj.fit_transform(X)
    assert _rel(Yw.T @ Yw, np.eye(7)) < 1e-8
    plain = KernelProjection(7, kernel="rbf", sigma=1.0, eigen_solver="dense").fit(X)
    assert _rel(proj.transform(Xt), plain.transform(Xt) / np.sqrt(plain.eigenvalues_)) < 1e-10


def test_precomputed_matches_feature_kernel(data):
    X, Xt = data
    k = make_kernel("rbf", sigma=1.0)
    a = KernelProjection(kernel="rbf", sigma=1.0).fit(X)
    b = KernelProjection(kernel="precomputed").fit(k(X))
    assert b.X_fit_ is None
    assert _rel(b.transform(k(Xt, X)), a.transform(Xt)) < 1e-8
    c = KernelProjection(4, kernel="precomputed", eigen_solver="randomized", random_state=0)
    c.fit(k(X))
    assert _rel(c.transform(k(Xt, X)), a.transform(Xt)[:, :4]) < 1e-7


def test_duplicates_give_finite_coordinates():
    rng = np.random.RandomState(1)
    base = rng.randn(15, 3)
    X = np.vstack([base, base, base[:5]])
    proj = KernelProjection(kernel="rbf", sigma=1.0)
    Y = proj.fit_transform(X)
    assert proj.rank_ <= 14
    assert np.all(np.isfinite(Y))
    assert np.all(np.isfinite(proj.transform(rng.randn(4, 3))))
    Kc = center_gram(make_kernel("rbf", sigma=1.0)(X))[0]
    assert _rel(Y @ Y.T, Kc) < 1e-8
    # duplicated points get identical coordinates
    assert np.max(np.abs(Y[:15] - Y[15:30])) < 1e-8


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]]), "NaN"),
        (np.array([[0.0, 1.0], [np.inf, 2.0], [1.0, 1.0]]), "infinity"),
        (np.empty((0, 3)), "0 sample"),
        (np.arange(5.0), "2D array"),
        (np.array([[1.0, 2.0]]), r"1 sample\(s\)"),
    ],
)
def test_bad_X(X, match):
    with pytest.raises(ValueError, match=match):
        KernelProjection().fit(X)


def test_bad_parameters(data):
    X, _ = data
    with pytest.raises(ValueError, match="n_components"):
        KernelProjection(0).fit(X)
    with pytest.raises(ValueError, match="n_components"):
        KernelProjection(-2).fit(X)
    with pytest.raises(ValueError, match="n_components=500"):
        KernelProjection(500).fit(X)
    with pytest.raises(ValueError, match="n_components=6 is larger than the rank 4"):
        KernelProjection(6, kernel="linear").fit(X)  # 4 features -> rank 4
    with pytest.raises(ValueError, match="n_components=6 is larger than the rank"):
        KernelProjection(6, kernel="linear", eigen_solver="randomized").fit(X)
    with pytest.raises(ValueError, match="n_components must be < 1, got 1.5"):
        KernelProjection(1.5).fit(X)
    with pytest.raises(ValueError, match="sigma"):
        KernelProjection(kernel="rbf", sigma=-1.0).fit(X)
    with pytest.raises(ValueError, match="gamma"):
        KernelProjection(kernel="rbf", gamma=-1.0).fit(X)
    with pytest.raises(ValueError, match="eigen_solver"):
        KernelProjection(3, eigen_solver="magic").fit(X)
    with pytest.raises(ValueError, match="n_landmarks"):
        KernelProjection(3, eigen_solver="arpack", n_landmarks=10).fit(X)
    with pytest.raises(ValueError, match="n_landmarks"):
        KernelProjection(3, n_landmarks=0).fit(X)
    with pytest.raises(ValueError, match="integer or float n_components"):
        KernelProjection(None, eigen_solver="arpack").fit(X)
    with pytest.raises(ValueError, match="rank_tol must be >= 0, got -1.0"):
        KernelProjection(rank_tol=-1.0).fit(X)
    with pytest.raises(ValueError, match="unknown kernel"):
        KernelProjection(kernel="nope").fit(X)
    for name in ("centered", "residual", "whiten"):
        with pytest.raises(ValueError, match=f"{name} must be True or False"):
            KernelProjection(**{name: 1}).fit(X)
    with pytest.raises(ValueError, match="n_landmarks must be an integer"):
        KernelProjection(3, n_landmarks=10.0).fit(X)
    with pytest.raises(ValueError, match=r"n_components must be an integer >= 1, a real number in \(0, 1\), 'rde' or None, got '3'"):
        KernelProjection("3").fit(X)
    with pytest.raises(ValueError, match="n_components must be > 0, got 0.0"):
        KernelProjection(0.0).fit(X)
    with pytest.raises(ValueError, match="rank_tol must be finite"):
        KernelProjection(rank_tol=np.nan).fit(X)
    with pytest.raises(ValueError, match=r"rank_tol must be < 1, got 1.0"):
        KernelProjection(rank_tol=1.0).fit(X)
    with pytest.raises(ValueError, match=r"landmarks must be one of \('uniform', 'kmeans\+\+', 'rpcholesky'\)"):
        KernelProjection(landmarks="grid").fit(X)
    with pytest.raises(ValueError, match=r"random_state must be None, an integer in \[0, 2\*\*32 - 1\]"):
        KernelProjection(random_state=-1).fit(X)
    with pytest.raises(ValueError, match="eigen_tol must be < 1, got 2.0"):
        KernelProjection(3, eigen_solver="arpack", eigen_tol=2.0).fit(X)
    with pytest.raises(ValueError, match="kernel_params must be a dict"):
        KernelProjection(kernel_params=3).fit(X)


def test_bad_transform_input(data):
    X, Xt = data
    proj = KernelProjection(3, eigen_solver="dense").fit(X)
    with pytest.raises(ValueError, match="features"):
        proj.transform(Xt[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        proj.transform(np.full((2, 4), np.nan))
    pre = KernelProjection(kernel="precomputed").fit(make_kernel("rbf", sigma=1.0)(X))
    with pytest.raises(ValueError, match="features"):
        pre.transform(np.ones((3, 7)))


@pytest.mark.parametrize(
    "kw",
    [
        dict(),
        dict(n_components=3, eigen_solver="arpack", random_state=0),
        dict(n_components=3, eigen_solver="randomized", random_state=0),
        dict(n_components=0.5),
        dict(n_components=3, eigen_solver="nystroem", n_landmarks=20, random_state=0),
    ],
    ids=["dense", "arpack", "randomized", "fraction", "nystroem"],
)
def test_identical_samples_are_a_clear_error_with_every_solver(kw):
    # was ArpackError -9 "Starting vector is zero" with eigen_solver='arpack'
    X = np.full((400, 2), 3.0)
    with pytest.warns(DegenerateKernelWarning, match="numerically constant"):
        with pytest.raises(ValueError, match="rank 0.*identical in feature space"):
            KernelProjection(**kw).fit(X)
    # numerically identical for this width (kernel values equal to rounding): the same
    X = 1.0 + 1e-12 * np.random.RandomState(0).randn(400, 2)
    with pytest.warns(DegenerateKernelWarning):
        with pytest.raises(ValueError, match="identical in feature space"):
            KernelProjection(sigma=1.0, **kw).fit(X)


@pytest.mark.parametrize("solver", ["arpack", "randomized"])
@pytest.mark.parametrize("center", [False, True])
def test_top_eigh_on_numerically_zero_matrices(solver, center, capfd):
    n, k = 500, 4
    noise = 1e-17 * np.random.RandomState(1).randn(n, n)
    for K in (np.zeros((n, n)), np.full((n, n), 2.5) if center else np.zeros((n, n)), noise + noise.T):
        w, V = top_eigh(K, k, solver=solver, center=center, random_state=0)
        assert w.shape == (k,) and np.all(np.abs(w) <= 1e-13)
        assert np.allclose(V.T @ V, np.eye(k), atol=1e-12)
        A = center_gram(K)[0] if center else K
        assert np.linalg.norm(A @ V - V * w) <= 1e-12
    assert capfd.readouterr().err == ""


def test_top_eigh_zero_probe_leaves_results_unchanged():
    # the probe has its own seed: a nonzero matrix gets the solvers' usual answer
    K = _rbf_matrix(400)
    w1, V1 = top_eigh(K, 5, solver="arpack", random_state=3, center=True)
    from scipy.sparse.linalg import eigsh

    v0 = np.random.RandomState(3).uniform(-1, 1, 400)
    Kc = center_gram(K)[0]
    w2 = np.sort(eigsh(Kc, k=5, which="LA", v0=v0)[0])[::-1]
    assert np.allclose(w1, w2, rtol=1e-10)


def test_overflowing_kernel_is_a_clear_error(data, capfd):
    X, _ = data
    for kw in (dict(kernel="linear"), dict(kernel="poly", degree=3), dict(kernel="linear", n_components=3,
                                                                          eigen_solver="arpack")):
        with pytest.raises(ValueError, match="overflowed float64"):
            KernelProjection(**kw).fit(X * 1e200)
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("solver, nc", [("dense", None), ("dense", 3), ("randomized", 3)])
def test_non_psd_precomputed_rejected(solver, nc):
    rng = np.random.RandomState(0)
    A = rng.randn(40, 40)
    S = (A + A.T) / 2  # symmetric indefinite
    with pytest.raises(ValueError, match="not positive semi-definite"):
        KernelProjection(nc, kernel="precomputed", eigen_solver=solver, random_state=0).fit(S)


@pytest.mark.parametrize("solver, nc", [("dense", None), ("dense", 3), ("randomized", 3)])
def test_negative_definite_precomputed_named(solver, nc):
    # a negated kernel matrix: an error that says so (was "rank 0")
    rng = np.random.RandomState(1)
    K = make_kernel("rbf", sigma=1.0)(rng.randn(40, 3))
    with pytest.raises(ValueError, match="not positive semi-definite.*negated or a distance"):
        KernelProjection(nc, kernel="precomputed", eigen_solver=solver, random_state=0).fit(-K)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        KernelPCAL1(kernel="precomputed").fit(-K)


def test_callable_kernel_matrix_is_checked_like_a_precomputed_one(data):
    X, _ = data
    with pytest.raises(ValueError, match="kernel matrix of the callable kernel is not positive"):
        KernelProjection(kernel=lambda A, B: -(A @ B.T) ** 2).fit(X)
    with pytest.raises(ValueError, match="kernel matrix of the callable kernel is not symmetric"):
        KernelProjection(kernel=lambda A, B: A @ B.T + A[:, :1]).fit(X)
    with pytest.raises(ValueError, match="callable kernel is not positive"):
        KernelProjection(2, kernel=lambda A, B: -(A @ B.T) ** 2, eigen_solver="arpack").fit(X)


def test_conditionally_positive_definite_precomputed_is_accepted_when_centred(data):
    # -D^2/2 is not PSD but its centred version is the Gram matrix of the centred points
    # (classical scaling): centred kernel PCA accepts it, the uncentred map does not
    X, _ = data
    D2 = ((X[:, None, :] - X[None]) ** 2).sum(-1)
    proj = KernelProjection(kernel="precomputed").fit(-D2 / 2)
    assert proj.rank_ == X.shape[1]
    lin = KernelProjection(kernel="linear").fit(X)
    assert np.allclose(proj.eigenvalues_, lin.eigenvalues_, rtol=1e-8)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        KernelProjection(kernel="precomputed", centered=False).fit(-D2 / 2)


def test_degenerate_kernel_warns_with_the_fix(data):
    X, _ = data
    with pytest.warns(DegenerateKernelWarning, match="KernelProjection: the kernel matrix is numerically the identity.*sigma='median'"):
        KernelProjection(kernel="rbf", sigma=1e-4).fit(X)
    with pytest.warns(DegenerateKernelWarning, match="KernelPCAL1: the kernel matrix is numerically constant"):
        KernelPCAL1(kernel="rbf", sigma=1e7).fit(X)
    with pytest.warns(DegenerateKernelWarning, match=r"\(landmark kernel matrix\)"):
        KernelProjection(3, kernel="rbf", sigma=1e-4, n_landmarks=30, random_state=0).fit(X)


def test_precomputed_must_be_square_symmetric():
    with pytest.raises(ValueError, match="square"):
        KernelProjection(kernel="precomputed").fit(np.ones((4, 3)))
    M = np.eye(4)
    M[0, 1] = 0.5
    with pytest.raises(ValueError, match="symmetric"):
        KernelProjection(kernel="precomputed").fit(M)
    with pytest.raises(ValueError, match="residual"):
        KernelProjection(kernel="precomputed", residual=True).fit(np.eye(4))


# -------------------------------------------------------------- eigensolvers
def _rbf_matrix(n, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, 6)
    return make_kernel("rbf", gamma=1 / 6)(X)


def test_block_krylov_residuals_and_angles():
    K = _rbf_matrix(700)
    Kc = center_gram(K)[0]
    w_ref, V_ref = linalg.eigh(Kc)
    w_ref, V_ref = w_ref[::-1][:20], V_ref[:, ::-1][:, :20]
    matmat = lambda V: Kc @ V  # noqa: E731
    w, V, info = block_krylov_eigh(matmat, 700, 20, rtol=1e-10, random_state=0)
    R = Kc @ V - V * w
    assert np.max(np.linalg.norm(R, axis=0)) <= 1e-10 * w[0] * 1.001
    assert np.allclose(info["residuals"], np.linalg.norm(R, axis=0) / w[0], atol=1e-13)
    assert _rel(w, w_ref) < 1e-12
    assert _sin_angle(V, V_ref) < 1e-6
    assert np.allclose(V.T @ V, np.eye(20), atol=1e-12)


def test_block_krylov_with_restarts_and_small_blocks():
    K = _rbf_matrix(500, seed=2)
    w_ref = linalg.eigvalsh(K)[::-1][:30]
    w, V, info = block_krylov_eigh(lambda V: K @ V, 500, 30, block_size=8, max_basis=64,
                                   random_state=0)
    assert info["n_restarts"] > 0
    assert _rel(w, w_ref) < 1e-10
    assert np.max(np.linalg.norm(K @ V - V * w, axis=0)) <= 1e-10 * w[0] * 1.001


def test_block_krylov_repeated_eigenvalues():
    rng = np.random.RandomState(0)
    Q = linalg.qr(rng.randn(300, 300))[0]
    lam = np.concatenate([[5.0] * 4, [3.0] * 3, np.linspace(1.0, 0.0, 293)])
    A = (Q * lam) @ Q.T
    w, V, _ = block_krylov_eigh(lambda V: A @ V, 300, 7, random_state=0)
    assert np.allclose(w, [5] * 4 + [3] * 3, atol=1e-9)
    assert _sin_angle(V, Q[:, :7]) < 1e-6


def test_top_eigh_implicit_centring_matches_explicit():
    K = _rbf_matrix(400, seed=4)
    Kc = center_gram(K)[0]
    K_before = K.copy()
    for solver in ("arpack", "randomized", "dense"):
        w1, V1 = top_eigh(K, 10, solver=solver, random_state=0, center=True)
        w2, V2 = top_eigh(Kc, 10, solver="dense")
        assert _rel(w1, w2) < 1e-10
        assert _rel(V1, V2) < 1e-6
    assert np.array_equal(K, K_before)  # never modified


def test_center_gram_in_place():
    K = _rbf_matrix(50)
    ref = center_gram(K)[0]
    K2 = K.copy()
    out = center_gram(K2, copy=False)[0]
    assert out is K2
    assert np.allclose(out, ref, atol=1e-14)


def test_top_eigh_bad_input():
    with pytest.raises(ValueError, match="square"):
        top_eigh(np.ones((3, 4)), 1)
    with pytest.raises(ValueError, match="square"):
        top_eigh(np.ones((0, 0)), None)
    with pytest.raises(ValueError, match="n_components"):
        top_eigh(np.eye(3), 5)
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match="n_components"):
            top_eigh(np.eye(3), bad)
    with pytest.raises(ValueError, match="solver must be one of"):
        top_eigh(np.eye(3), 1, solver="foo")
    with pytest.raises(ValueError, match="finite"):
        top_eigh(np.array([[1.0, np.nan], [np.nan, 1.0]]), 1)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        top_eigh(np.eye(3), 1, tol=-1.0)
    with pytest.raises(ValueError, match="center must be True or False"):
        top_eigh(np.eye(3), 1, center="yes")
    with pytest.raises(ValueError, match="k must be <= 4"):
        block_krylov_eigh(lambda V: V, 4, 5)
    with pytest.raises(ValueError, match="rtol must be > 0"):
        block_krylov_eigh(lambda V: V, 4, 2, rtol=0.0)


# ---------------------------------------------------------- estimator checks
@parametrize_with_checks(
    [
        KernelProjection(),
        KernelProjection(2, eigen_solver="randomized", random_state=0),
        KernelProjection(2, eigen_solver="nystroem", n_landmarks=15, random_state=0),
        KernelProjection(2, eigen_solver="matrix-free", random_state=0),
        KernelProjection(2, preimage="learned", preimage_alpha=0.1),
        KernelProjection(0.8, eigen_solver="matrix-free", preimage="mds", random_state=0),
        PCAL1(random_state=0),
        PCAL1(),
        KernelPCAL1(2, random_state=0),
        KernelPCAL1(),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_blocked_rbf_gram_matches_reference_and_respects_budget():
    from kpm import config_context
    from kpm.kernels import KernelMemoryError

    rng = np.random.RandomState(0)
    X, Z = rng.randn(300, 3), rng.randn(70, 3)
    k = make_kernel("rbf", gamma=0.7)
    ref = np.exp(-0.7 * ((X[:, None, :] - X[None]) ** 2).sum(-1))
    ref_zx = np.exp(-0.7 * ((Z[:, None, :] - X[None]) ** 2).sum(-1))
    with config_context(block_bytes=8 * 300 * 2 * 40):  # force many blocks
        G = k(X)
        B = np.vstack([blk.copy() for _, blk in k.blocks(Z, X)])
    assert np.allclose(G, ref, atol=1e-13, rtol=0)
    assert np.allclose(G, G.T, atol=1e-13, rtol=0)
    assert np.allclose(B, ref_zx, atol=1e-13, rtol=0)
    with config_context(max_kernel_bytes=8 * 100 * 100):
        with pytest.raises(KernelMemoryError):
            KernelProjection(kernel="rbf").fit(X)
        # the Nystroem variant works within the budget
        ny = KernelProjection(5, kernel="rbf", n_landmarks=50, random_state=0).fit(X)
        assert ny.transform(Z).shape == (70, 5)


@pytest.mark.parametrize("solver", ["arpack", "randomized", "nystroem"])
def test_duplicates_with_partial_solvers(solver):
    rng = np.random.RandomState(1)
    X = np.vstack([rng.randn(15, 3)] * 20)  # 300 points, rank 14 after centring
    kw = dict(n_landmarks=100) if solver == "nystroem" else {}
    proj = KernelProjection(5, kernel="rbf", sigma=1.0, eigen_solver=solver, random_state=0, **kw)
    Y = proj.fit_transform(X)
    ref = KernelProjection(5, kernel="rbf", sigma=1.0, eigen_solver="dense").fit(X)
    assert np.all(np.isfinite(Y)) and np.all(np.isfinite(proj.transform(rng.randn(4, 3))))
    assert _rel(proj.eigenvalues_, ref.eigenvalues_) < 1e-8
    with pytest.raises(ValueError, match="n_components=20 is larger than the rank 14"):
        KernelProjection(20, kernel="rbf", sigma=1.0, eigen_solver="randomized",
                         random_state=0).fit(X)


def test_top_eigh_dense_subset_with_repeated_eigenvalues():
    # LAPACK's syevr fails on the centred identity (eigenvalue 1, n - 1 times): scipy raised
    # "Internal Error" or returned no eigenpairs, and KernelPCADenoiser then an IndexError
    n = 50
    Kc = center_gram(np.eye(n))[0]
    w, V = top_eigh(Kc, 3, solver="dense")
    np.testing.assert_allclose(w, 1.0, atol=1e-12)
    np.testing.assert_allclose(Kc @ V, V * w, atol=1e-12)


def test_top_eigh_trace_proves_a_matrix_nonzero_without_the_probe(monkeypatch):
    # an explicit matrix with |trace| / n above the rounding level skips the zero-operator
    # probe (its random block); the eigenpairs are ARPACK's as before
    import kpm.spectral.eigensolvers as eig

    def no_probe(*args, **kwargs):
        raise AssertionError("the zero-operator probe ran")

    Kc = center_gram(_rbf_matrix(400))[0]
    monkeypatch.setattr(eig, "_random_orthonormal", no_probe)
    w, V = top_eigh(Kc, 5, solver="arpack", random_state=3)
    from scipy.sparse.linalg import eigsh

    w2 = np.sort(eigsh(Kc, k=5, which="LA", v0=np.random.RandomState(3).uniform(-1, 1, 400))[0])[::-1]
    assert np.allclose(w, w2, rtol=1e-10)
    assert np.linalg.norm(Kc @ V - V * w) <= 1e-12 * w[0]
    with pytest.raises(AssertionError, match="probe ran"):  # a zero trace: the probe decides
        top_eigh(np.zeros((400, 400)), 5, solver="arpack")


def test_top_eigh_check_finite():
    K = _rbf_matrix(50)
    K[3, 4] = K[4, 3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        top_eigh(K, 5, solver="arpack")
    with pytest.raises(ValueError, match="check_finite"):
        top_eigh(_rbf_matrix(50), 5, check_finite="no")


def test_fit_leaves_a_precomputed_kernel_matrix_unchanged():
    # the estimator centres its own copy in place, never the caller's matrix
    K = _rbf_matrix(300)
    K_before = K.copy()
    for solver in ("auto", "dense", "arpack"):
        # (the iterative solvers at machine precision, so that the check below is the centring's)
        tight = {} if solver == "dense" else {"eigen_tol": 1e-15}
        kp = KernelProjection(10, kernel="precomputed", eigen_solver=solver, random_state=0, **tight).fit(K)
        assert np.array_equal(K, K_before)
        Kc = center_gram(K)[0]
        U, w = kp.eigenvectors_, kp.eigenvalues_
        assert np.linalg.norm(Kc @ U - U * w) <= 1e-12 * w[0]
