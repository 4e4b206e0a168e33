"""Kernel PCR against kernel ridge regression from one eigendecomposition.

Kernel PCR (:mod:`kpm.relevance.pcr`) truncates the kernel PCA directions; kernel ridge
regression shrinks every one of them (Hastie, Tibshirani & Friedman 2009, Sec. 3.4.1 and
5.8). Both are linear smoothers in the eigenbasis of the (weighted) kernel matrix, whose
closed-form leave-one-out residuals (:mod:`kpm.spectral.smoothers`, with an unpenalised
intercept and the copies of a row left out together) cost ``O(n m)`` per smoother once the
eigenvectors are known, so a grid of ``alpha`` is cheap: :func:`ridge_reference` is the
ridge of smallest leave-one-out error over :data:`RIDGE_ALPHAS`, and
:func:`ridge_predictions` the predictions at new points of the ridge fitted on one
eigendecomposition (kernel PCR's held-out folds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.relevance.dimension import INTERCEPT_ATOL
from kpm.spectral.smoothers import loo_residuals, ridge_loo_errors

__all__ = ["RidgeReference", "ridge_predictions", "ridge_reference", "RIDGE_ALPHAS"]

#: the ridge parameters tried, relative to the largest eigenvalue of the kernel matrix
RIDGE_ALPHAS = np.logspace(-10, 1, 34)


@dataclass(frozen=True)
class RidgeReference:
    """The kernel ridge regression of the best leave-one-out error over :data:`RIDGE_ALPHAS`
    (times ``λ_1``): ``alpha``, its per-sample leave-one-out residuals ``residuals`` (n, c)
    and every alpha's error (``alphas``, ``errors``, as the caller scores them)."""

    alpha: float
    residuals: np.ndarray
    alphas: np.ndarray
    errors: np.ndarray


def ridge_reference(lam, U, zc, sw, groups, intercept, score):
    """The :class:`RidgeReference` over ``alpha = λ_1 * RIDGE_ALPHAS``
    (:func:`kpm.spectral.smoothers.ridge_loo_errors` on the eigenvalues ``lam`` and all
    eigenvectors ``U`` of the weighted kernel matrix, the weighted centred targets ``zc``, the
    square-root weights ``sw``); ``score(residuals)`` gives the error of leave-one-out
    residuals (the smallest wins; ties: the larger alpha)."""
    lam = np.maximum(np.asarray(lam, dtype=float), 0.0)
    alphas = float(lam[0]) * RIDGE_ALPHAS
    kw = dict(sqrt_weight=sw, groups=groups, intercept=intercept)
    errors = ridge_loo_errors(lam, U, zc, alphas, score, **kw)
    best = len(alphas) - 1 - int(np.argmin(errors[::-1]))  # ties: the larger alpha
    residuals = loo_residuals(alphas[best] / (lam + alphas[best]), U, zc, **kw)
    return RidgeReference(float(alphas[best]), residuals, alphas, errors)


def ridge_predictions(K_new, Y, lam, U, sw, alpha, intercept):
    """Kernel ridge regression's predictions at new points from the eigendecomposition of the
    training points' weighted kernel matrix ``M = W^{1/2} K W^{1/2} = U diag(lam) U^T``.

    With the targets ``Y`` (n, c), their weighted mean ``m``, ``z = W^{1/2} (Y - m)`` and the
    constant ``e = W^{1/2} 1 / sqrt(N)`` (``N`` the sum of the weights): the penalised least
    squares ``min ||z - b e - f||^2 + alpha f^T M^+ f`` (the intercept ``b`` unpenalised,
    with ``intercept``; else ``b = 0``) has ``b = q^T z / q^T e`` with ``q = e - S e``,
    ``S = U diag(lam / (lam + alpha)) U^T``, and ``f = M c`` with
    ``c = U diag(1 / (lam + alpha)) U^T (z - b e)``, so that a new point's prediction is
    ``m + b / sqrt(N) + k(x)^T W^{1/2} c``: the bordered system
    ``[[0, 1^T], [1, K + alpha W^{-1}]] [beta; a] = [0; Y]`` of kernel ridge with a bias.

    Parameters
    ----------
    K_new : ndarray (n_new, n)
        The kernel between the new points and the training points.
    Y : ndarray (n, c)
    lam, U : ndarray (m,), (n, m)
        Eigenvalues and eigenvectors of ``M`` (those of positive eigenvalue suffice).
    sw : ndarray (n,)
        The square roots of the sample weights.
    alpha : float
    intercept : bool

    Returns
    -------
    ndarray (n_new, c)
    """
    N = float(sw @ sw)
    mean = (sw**2) @ Y / N if intercept else np.zeros(Y.shape[1])
    z = sw[:, None] * (Y - mean)
    b = np.zeros(Y.shape[1])
    if intercept:
        e = sw / np.sqrt(N)
        q = e - U @ ((lam / (lam + alpha)) * (U.T @ e))
        qe = float(q @ e)
        if qe > INTERCEPT_ATOL:
            b = (q @ z) / qe
            z = z - e[:, None] * b[None, :]
    c = U @ ((U.T @ z) / (lam + alpha)[:, None])
    return mean + b / np.sqrt(N) + K_new @ (sw[:, None] * c)
