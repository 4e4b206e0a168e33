"""Matrix-free kernel PCA: the blockwise kernel operator and the certified subspace iteration."""

import numpy as np
import pytest

from kpm import config_context
from kpm.spectral.eigensolvers import EIGENSOLVERS, center_gram, subspace_eigh
from kpm.exceptions import KernelMemoryError
from kpm.spectral.operator import KernelOperator, matrix_free_basis
from kpm.kernels import make_kernel
from kpm.decomposition.projection import KernelProjection
from kpm.spectral.basis import eigen_basis


def _data(n=300, d=5, seed=0):
    rs = np.random.RandomState(seed)
    X = rs.standard_normal((n, d)) + 3.0  # off the origin: the RBF operator centres it
    return X, rs.standard_normal((40, d)) + 3.0


KERNELS = [
    ("rbf", {"sigma": 2.0}),
    ("poly", {"gamma": 0.1, "degree": 2}),
    ("imq", {"kernel_params": {"c": 2.0}}),
    ("linear", {}),
]


def _reference(kernel, X, k, center):
    K = kernel(X)
    return K, eigen_basis(K, k, center=center, solver="dense")


@pytest.mark.parametrize("name, params", KERNELS)
@pytest.mark.parametrize("center", [True, False])
def test_matrix_free_matches_dense(name, params, center):
    X, Xt = _data()
    k = 4 if name == "linear" else 12
    kw = dict(kernel=name, centered=center, **params)
    mf = KernelProjection(k, eigen_solver="matrix-free", random_state=0, **kw).fit(X)
    dense = KernelProjection(k, eigen_solver="dense", **kw).fit(X)
    np.testing.assert_allclose(mf.eigenvalues_, dense.eigenvalues_, rtol=1e-9)
    np.testing.assert_allclose(np.abs(np.sum(mf.eigenvectors_ * dense.eigenvectors_, axis=0)), 1.0,
                               atol=1e-8)
    # the same sign convention, so the features agree too
    np.testing.assert_allclose(mf.transform(Xt), dense.transform(Xt), atol=1e-7)
    np.testing.assert_allclose(mf.fit_transform(X), dense.fit_transform(X), atol=1e-7)
    np.testing.assert_allclose(mf.kernel_col_means_, dense.kernel_col_means_, atol=1e-13)
    assert mf.ritz_residuals_.shape == (k,) and dense.ritz_residuals_ is None


def test_certificate_is_the_explicit_residual():
    X, _ = _data()
    kp = KernelProjection(10, sigma=2.0, eigen_solver="matrix-free", eigen_tol=1e-8,
                          random_state=0).fit(X)
    Kc = center_gram(make_kernel("rbf", sigma=2.0)(X))[0]
    U, w = kp.eigenvectors_, kp.eigenvalues_
    explicit = np.linalg.norm(Kc @ U - U * w, axis=0) / w[0]
    assert np.all(kp.ritz_residuals_ <= 1e-8)
    np.testing.assert_allclose(kp.ritz_residuals_, explicit, rtol=1e-3, atol=1e-15)


def test_float32_iterations_are_certified_in_float64():
    """A fast product far less accurate than the tolerance: the exact products take over."""
    X, _ = _data(250)
    K = center_gram(make_kernel("rbf", sigma=2.0)(X))[0]
    rs = np.random.RandomState(1)
    E = rs.standard_normal(K.shape) * 1e-4 * np.abs(K).max()
    E = (E + E.T) / 2

    def fast(V):
        return (K + E) @ V

    w, V, info = subspace_eigh(lambda V: K @ V, len(K), 8, fast_matmat=fast, rtol=1e-11,
                               random_state=0)
    ref = eigen_basis(K, 8, solver="dense")
    np.testing.assert_allclose(w, ref.eigenvalues, rtol=1e-10)
    assert info["n_fast"] >= 1 and info["n_exact"] >= 2  # the certificate failed once at least
    assert info["history"][-1][0] == "exact"
    assert np.max(np.linalg.norm(K @ V - V * w, axis=0)) <= 1e-11 * w[0]


@pytest.mark.parametrize("center", [True, False])
def test_operator_products(center):
    X, _ = _data(200)
    kernel = make_kernel("rbf", sigma=1.5)
    K = kernel(X)
    A = center_gram(K)[0] if center else K
    V = np.random.RandomState(0).standard_normal((200, 3))
    with config_context(block_bytes=200 * 8 * 2 * 2 * 7):  # 7 rows per block and thread
        op = KernelOperator(kernel, X, center=center, n_jobs=2)
        assert op.block_rows() == 7
        np.testing.assert_allclose(op(V), A @ V, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(op.fast_matmat(V), A @ V, rtol=0, atol=1e-5 * np.abs(A @ V).max())
        np.testing.assert_allclose(op.col_sums, K.sum(axis=1), rtol=1e-12)
    assert op.timings["passes_float64"] >= 1 and op.timings["passes_float32"] == 1


@pytest.mark.parametrize("budget", [30_000, 1_000_000, 64 * 2**20])
@pytest.mark.parametrize("n_jobs", [1, 3])
def test_blocks_respect_the_budget(budget, n_jobs):
    X, _ = _data(500)
    op = KernelOperator(make_kernel("rbf", sigma=2.0), X, n_jobs=n_jobs)
    with config_context(block_bytes=budget):
        for itemsize, temporaries in ((8, 2), (4, 1)):
            rows = op.block_rows(itemsize)
            assert 1 <= rows <= 500
            assert rows * 500 * itemsize * temporaries * n_jobs <= budget
            # as large as the budget allows
            assert rows == 500 or (rows + 1) * 500 * itemsize * temporaries * n_jobs > budget


def test_too_small_budget_is_a_clear_error():
    X, _ = _data(500)
    op = KernelOperator(make_kernel("rbf", sigma=2.0), X, n_jobs=2)
    with config_context(block_bytes=1000):
        with pytest.raises(KernelMemoryError, match="block_bytes"):
            op(np.ones((500, 1)))


def test_deterministic_with_random_state():
    X, Xt = _data()
    fits = [KernelProjection(8, sigma=2.0, eigen_solver="matrix-free", random_state=3).fit(X)
            for _ in range(2)]
    np.testing.assert_array_equal(fits[0].eigenvectors_, fits[1].eigenvectors_)
    np.testing.assert_array_equal(fits[0].transform(Xt), fits[1].transform(Xt))


def test_basis_reports_solver_and_timings():
    X, _ = _data()
    basis, info = matrix_free_basis(make_kernel("rbf", sigma=2.0), X, 6, eigen_tol=1e-9,
                                    random_state=0)
    assert basis.col_means.shape == (300,) and not basis.complete
    assert 6 + 8 <= info["block_size"] <= 36
    assert info["n_exact"] >= 1 and np.all(info["residuals"] <= 1e-9)
    t = info["timings"]
    assert t["passes_float32"] == info["n_fast"] and t["passes_float64"] == info["n_exact"]
    assert t["kernel_s_float32"] > 0 and t["product_s_float64"] > 0


def test_registered_eigensolver():
    assert "matrix-free" in EIGENSOLVERS


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_components=None), "integer or float n_components"),
        (dict(n_components=3, kernel="precomputed"), "precomputed"),
        (dict(n_components=3, kernel=lambda A, B: A @ B.T), "callable kernel"),
        (dict(n_components=3, kernel="sigmoid"), "positive semi-definite"),
    ],
)
def test_invalid_uses_are_clear_errors(kwargs, match):
    X, _ = _data(60)
    if kwargs.get("kernel") == "precomputed":
        X = X @ X.T
    with pytest.raises(ValueError, match=match):
        KernelProjection(eigen_solver="matrix-free", **kwargs).fit(X)


def test_eigen_tol_is_the_tolerance_of_the_iterative_solvers():
    X, _ = _data(60)
    with pytest.raises(ValueError, match="eigen_tol"):
        KernelProjection(3, eigen_solver="dense", eigen_tol=1e-6).fit(X)
    with pytest.raises(ValueError, match="eigen_tol"):
        KernelProjection(3, eigen_solver="matrix-free", eigen_tol=0.0).fit(X)


@pytest.mark.parametrize("eigen_tol", [None, 1e-4, 1e-14])
def test_arpack_residuals_meet_eigen_tol(eigen_tol):
    """ARPACK's certificate is relative to each eigenvalue: ||K~ u - lambda u|| <= tol * lambda
    (the default 1e-10); the eigenvalues are exact to about tol**2."""
    X, _ = _data(400)
    kp = KernelProjection(30, sigma=2.0, eigen_solver="arpack", eigen_tol=eigen_tol, random_state=0).fit(X)
    K = make_kernel("rbf", sigma=2.0)(X)
    Kc = K - K.mean(0) - K.mean(1)[:, None] + K.mean()
    w, U = kp.eigenvalues_, kp.eigenvectors_
    res = np.linalg.norm(Kc @ U - U * w, axis=0)
    tol = 1e-10 if eigen_tol is None else eigen_tol
    assert np.all(res <= tol * w * (1 + 1e-6) + 1e-13 * w[0])
    exact = np.linalg.eigvalsh(Kc)[::-1][:30]
    assert np.max(np.abs(w - exact)) <= max(10 * tol**2, 1e-13) * w[0]
    if eigen_tol == 1e-4:  # a loose tolerance is visible in the residuals (the test can fail)
        assert res.max() > 1e-12 * w[0]


def test_matrix_free_trace_and_fraction_of_it():
    X, _ = _data(300)
    kernel = make_kernel("rbf", sigma=2.0)
    basis, _ = matrix_free_basis(kernel, X, 4, random_state=0)
    K = kernel(X)
    assert basis.trace == pytest.approx(np.trace(center_gram(K)[0]), rel=1e-10)
    dense = KernelProjection(0.8, sigma=2.0, eigen_solver="dense").fit(X)
    free = KernelProjection(0.8, sigma=2.0, eigen_solver="matrix-free", random_state=0).fit(X)
    assert free.n_components_ == dense.n_components_
    np.testing.assert_allclose(free.explained_variance_ratio_, dense.explained_variance_ratio_, rtol=1e-8)


def test_start_block_landmarks_fit_the_memory_budget():
    X, _ = _data(300)
    op = KernelOperator(make_kernel("rbf", sigma=2.0), X, center=True)
    with config_context(max_kernel_bytes=8 * 100 * 100):
        start = op.start_block(4, random_state=0)  # 100 landmarks instead of 300
    assert start.shape[0] == 300 and np.linalg.matrix_rank(start) == start.shape[1]
