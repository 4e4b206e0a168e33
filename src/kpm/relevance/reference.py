"""Kernel PCR against kernel ridge regression from one eigendecomposition.

Kernel PCR (:mod:`kpm.relevance.pcr`) truncates the kernel PCA directions; kernel ridge
regression shrinks every one of them (Hastie, Tibshirani & Friedman 2009, Sec. 3.4.1 and
5.8). Both are linear smoothers in the eigenbasis of the (weighted) kernel matrix, whose
closed-form leave-one-out residuals (:mod:`kpm.spectral.smoothers`, with an unpenalised
intercept and the copies of a row left out together) cost ``O(n m)`` per smoother once the
eigenvectors are known, so a grid of ``alpha`` is cheap: :func:`ridge_reference` is the
ridge of smallest leave-one-out error over :data:`RIDGE_ALPHAS`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.spectral.smoothers import loo_residuals, ridge_loo_errors

__all__ = ["RidgeReference", "ridge_reference", "RIDGE_ALPHAS"]

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
