"""Reference solvers and small utilities shared by several test files.

Import as ``from helpers import ...`` (``tests/`` is on ``pythonpath`` in pyproject.toml).
Only what at least two test files use lives here; a helper of one file stays in that file.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog, minimize


def hinge_lp_reference(Z, y, D):
    """The hinge LP on the first ``D`` columns of ``Z``, solved from scratch (scipy's HiGHS).

    min sum_i xi_i  s.t.  y_i (z_i[:D] . beta + b) >= 1 - xi_i,  xi_i >= 0,

    the linear programme of the Kernel Projection Machine (Blanchard, Massart, Vert & Zwald,
    NIPS 2004), with sparse constraints so that n in the thousands is cheap. Asserts that HiGHS
    reports an optimum and returns scipy's result: ``fun`` the optimal hinge loss (a sum, not
    a mean), ``x`` = (beta_1..beta_D, b, xi_1..xi_n).
    """
    y = np.asarray(y, dtype=float)
    n = len(y)
    A = sp.hstack([sp.csr_matrix(-y[:, None] * Z[:, :D]), sp.csr_matrix(-y[:, None]),
                   -sp.identity(n, format="csr")]).tocsr()
    c = np.concatenate([np.zeros(D + 1), np.ones(n)])
    bounds = [(None, None)] * (D + 1) + [(0, None)] * n
    res = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return res


def hinge_loss_sum(Z, y, beta, b):
    """The hinge loss sum_i max(0, 1 - y_i (z_i[:D] . beta + b)), D = len(beta)."""
    D = len(beta)
    return float(np.maximum(0.0, 1.0 - y * (Z[:, :D] @ beta + b)).sum())


def assert_same_hinge_path(Z, y, max_dim=None, stop_at_zero=False):
    """The hinge LP path of the specialised simplex against that of HiGHS: objectives equal to
    1e-9 at every D, and each returned solution attains its objective. Returns both paths."""
    from kpm.hinge.lp_path import hinge_lp_path

    fast = hinge_lp_path(Z, y, max_dim, solver="simplex", stop_at_zero=stop_at_zero)
    ref = hinge_lp_path(Z, y, max_dim, solver="highs", stop_at_zero=stop_at_zero)
    assert fast.fallbacks == 0
    k = min(fast.n_solved, ref.n_solved)
    np.testing.assert_allclose(fast.objective[:k], ref.objective[:k], rtol=1e-9, atol=1e-9)
    for i in range(fast.n_solved):
        D = int(fast.dims[i])
        beta, b = fast.coef_at(D)
        assert hinge_loss_sum(Z, y, beta, b) == pytest.approx(fast.objective[i], rel=1e-9, abs=1e-8)
    return fast, ref


def rel_error(a, b):
    """Largest absolute difference of ``a`` from ``b``, relative to the largest entry of ``b``."""
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


def random_dna(n, length, seed, alphabet="ACGT"):
    """``n`` random strings of ``length`` letters of ``alphabet`` (numpy array of str)."""
    rng = np.random.default_rng(seed)
    return np.array(["".join(rng.choice(list(alphabet), length)) for _ in range(n)])


def svm_dual_reference(K, y, C, B=1.0):
    """``alpha * y`` of the SVM with the kernel matrix ``K + B^2`` and no separate intercept
    (the intercept the weight of a constant feature of value B), by L-BFGS-B on its
    box-constrained dual ``max_{0 <= alpha <= C} sum(alpha) - 1/2 alpha^T Q alpha``: an
    independent solver of the problem of the KPM's ``formulation='svm'``."""
    Q = (y[:, None] * y[None, :]) * (K + B**2)
    res = minimize(lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1.0), np.zeros(len(y)), jac=True,
                   method="L-BFGS-B", bounds=[(0.0, C)] * len(y),
                   options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
    return res.x * y


def svm_toy_problem():
    """60 training points in 2-D with noisy labels ``sign(x_0 + noise)`` and 200 test points:
    ``(X, y, Xt)``, for the tests of the SVM formulation."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, -1)
    Xt = rng.normal(size=(200, 2))
    return X, y, Xt


def denoising_family(name, n_train, n_test=1000, seed=0):
    """Noisy data of a named family for the denoising sweeps: ``(clean, noisy, n_train)``,
    the first ``n_train`` rows for training, the next ``n_test`` fresh points for testing.

    ``'subspace'``: a 3-D subspace of R^10, noise 0.02; ``'clusters'``: five tight clusters in
    R^10, noise 0.02; ``'duplicated'``: the clusters with every training row repeated three
    times (exact duplicates); ``'tiny'``: 12 training points in a 2-D subspace of R^6, noise
    0.05; ``'wide'``: 50 training points in a 2-D subspace of R^200, noise 0.1; ``'full'``:
    15 training points of a Gaussian filling R^4, noise 0.1 (no noise level is identifiable
    from such data).
    """
    rng = np.random.RandomState(seed)
    n = n_train + n_test
    if name == "subspace":
        basis = np.linalg.qr(rng.randn(10, 3))[0]
        clean, noise = rng.randn(n, 3) * 2 @ basis.T, 0.02
    elif name in ("clusters", "duplicated"):
        centres = rng.randn(5, 10) * 3
        clean, noise = centres[rng.randint(0, 5, n)], 0.02
    elif name == "tiny":
        basis = np.linalg.qr(rng.randn(6, 2))[0]
        clean, noise = rng.randn(n, 2) @ basis.T, 0.05
    elif name == "wide":
        clean, noise = rng.randn(n, 2) @ rng.randn(2, 200), 0.1
    elif name == "full":
        clean, noise = rng.randn(n, 4) @ rng.randn(4, 4), 0.1
    else:
        raise ValueError(name)
    noisy = clean + noise * rng.randn(*clean.shape)
    if name == "duplicated":
        keep = np.r_[np.repeat(np.arange(n_train // 3), 3), np.arange(n_train, n)]
        clean, noisy = clean[keep], noisy[keep]
        n_train = 3 * (n_train // 3)
    return clean, noisy, n_train


def two_gaussians_in_500_dimensions(rng, n):
    """Two equal classes apart by 3 along 5 of 500 standard normal features (wide data, on
    which every point is far from the others in an RBF feature space)."""
    y = np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]
    rng.shuffle(y)
    X = rng.normal(size=(n, 500))
    X[:, :5] += 1.5 * np.where(y == 1, 1.0, -1.0)[:, None]
    return X, y
