"""The closed-form leave-one-out errors of linear smoothers (kpm.spectral.smoothers) and their
two users: kernel PCR's kernel ridge reference and the learned pre-image map's ridge."""

import numpy as np
import pytest

from kpm.kernels import make_kernel
from kpm.preimage.learned import LEARNED_ALPHA_GRID, fit_learned_preimage
from kpm.relevance.pcr import KernelPCRRegressor
from kpm.relevance.reference import RIDGE_ALPHAS
from kpm.spectral.smoothers import loo_residuals, ridge_loo_errors


def _eigen(K, w):
    sw = np.sqrt(w)
    lam, U = np.linalg.eigh(sw[:, None] * K * sw[None, :])
    return np.maximum(lam[::-1], 0.0), U[:, ::-1], sw


def _refitted_ridge(K, y, w, alpha, intercept, groups):
    """Leave-(group-)out residuals of weighted kernel ridge regression, refitted for each
    group: min sum_i w_i (y_i - b - f_i)^2 + alpha f^T K^-1 f, i.e. on z = W^1/2 y with the
    matrix W^1/2 K W^1/2 and the constant W^1/2 1 (unpenalised)."""
    out = np.empty_like(y)
    for g in np.unique(groups):
        va, tr = groups == g, groups != g
        sw = np.sqrt(w[tr])
        M = sw[:, None] * K[np.ix_(tr, tr)] * sw[None, :]
        A = np.linalg.inv(M + alpha * np.eye(len(M)))
        z = sw[:, None] * y[tr]
        b = np.zeros(y.shape[1])
        if intercept:
            R = np.eye(len(M)) - M @ A
            b = (sw @ R @ z) / (sw @ R @ sw)
        beta = sw[:, None] * (A @ (z - sw[:, None] * b))  # f(x) = k(x)^T beta + b
        out[va] = y[va] - (b + K[np.ix_(va, tr)] @ beta)
    return out


@pytest.mark.parametrize("intercept", [True, False])
def test_ridge_leave_one_out_is_the_refitted_one_with_weights_and_copies(intercept):
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, (25, 2))
    y = np.c_[np.sin(X[:, 0]) + 0.3 * rng.standard_normal(25), X[:, 1] ** 2]
    X, y = np.vstack([X, X[:4]]), np.vstack([y, y[:4] + 0.2])  # copies, other targets
    w = rng.integers(1, 4, len(X)).astype(float)
    groups = np.unique(X, axis=0, return_inverse=True)[1].ravel()
    K = make_kernel("rbf", sigma=1.0)(X)
    lam, U, sw = _eigen(K, w)
    mean = w @ y / w.sum() if intercept else np.zeros(2)
    z = sw[:, None] * (y - mean)
    alphas = np.array([1e-4, 0.05, 2.0])
    res = loo_residuals(alphas[:, None] / (lam[None, :] + alphas[:, None]), U, z,
                        sqrt_weight=sw, groups=groups, intercept=intercept)
    for alpha, r in zip(alphas, res):
        np.testing.assert_allclose(r, _refitted_ridge(K, y, w, alpha, intercept, groups), rtol=1e-6, atol=1e-9)
    # the errors of a grid, in blocks or all at once
    score = lambda r: float(np.mean(r**2))  # noqa: E731
    kw = dict(sqrt_weight=sw, groups=groups, intercept=intercept)
    errors = ridge_loo_errors(lam, U, z, alphas, score, **kw)
    np.testing.assert_allclose(errors, [score(r) for r in res], rtol=1e-12)
    np.testing.assert_allclose(ridge_loo_errors(lam, U, z, alphas, score, max_block=2, **kw), errors, rtol=1e-12)


def test_both_users_get_the_numbers_of_the_one_implementation():
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, (60, 2))
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.standard_normal(60)
    # kernel PCR's ridge reference: the smallest error over its grid, on the same basis
    m = KernelPCRRegressor(sigma=1.0).fit(X, y)
    K = make_kernel("rbf", sigma=1.0)(X)
    lam, U, sw = _eigen(K, np.ones(60))
    z = (y - y.mean())[:, None]
    errors = ridge_loo_errors(lam, U, z, lam[0] * RIDGE_ALPHAS, lambda r: float(np.mean(r**2)),
                              groups=np.arange(60), intercept=True)
    assert m.reference_loo_error_ == pytest.approx(errors.min(), rel=1e-9)
    assert m.reference_alpha_ == pytest.approx(lam[0] * RIDGE_ALPHAS[np.argmin(errors)], rel=1e-12)
    # the learned pre-image map: its error at its alpha, on the centred inputs without an
    # intercept (the centring of all the points kept), and the refit
    Y = rng.normal(size=(40, 3))
    Z = np.tanh(Y @ rng.normal(size=(3, 5)))
    Z = Z - Z.mean(axis=0)  # the map regresses the centred inputs
    kern = make_kernel("rbf", gamma=0.5)
    fit = fit_learned_preimage(Y, Z, kern)
    lamY, UY, _ = _eigen(kern(Y), np.ones(40))
    grid = ridge_loo_errors(lamY, UY, Z, LEARNED_ALPHA_GRID, lambda r: float(np.mean(r**2)))
    assert fit.alpha == LEARNED_ALPHA_GRID[np.flatnonzero(grid <= grid.min() * (1 + 1e-9))[-1]]
    assert fit.loo_error == pytest.approx(grid.min(), rel=1e-9)
    refit = _refitted_ridge(kern(Y), Z, np.ones(40), fit.alpha, False, np.arange(40))
    assert fit.loo_error == pytest.approx(np.mean(refit**2), rel=1e-7)
