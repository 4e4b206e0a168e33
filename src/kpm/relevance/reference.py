"""Leave-one-out errors of kernel PCR and of kernel ridge regression from one eigendecomposition.

Kernel PCR (:mod:`kpm.relevance.pcr`) truncates the kernel PCA directions; kernel ridge
regression shrinks every one of them. Both are linear smoothers of the targets in the
eigenbasis ``M = V diag(λ) V^T`` of the (weighted) kernel matrix ``M = W^{1/2} K W^{1/2}``
(Hastie, Tibshirani & Friedman 2009, Sec. 5.4.1 and 7.10): with the filter factors
``g_k = 1`` for ``k <= d`` (PCR) or ``g_k = λ_k / (λ_k + alpha)`` (ridge),
``S = V diag(g) V^T``, and with an unpenalised intercept (the constant ``e = W^{1/2} 1 /
sqrt(N)``, as kernel PCR fits it) the hat matrix of the penalised least squares
``min ||z - b e - f||^2 + alpha f^T M^+ f`` is

    H = S + q q^T / (e^T q),     q = (I - S) e,

(the unpenalised column added to a linear smoother; for PCR ``e^T q = c_d^2``, the part of
the constant outside the first d directions). The leave-one-out residual of a sample is
``r_i / (1 - H_ii)`` (the model refitted without it predicts it so; exact for both, since
leaving a sample out of a penalised least-squares fit is the fit with its target replaced
by its own prediction), and of a group ``g`` of identical inputs, left out together as the
cross-validation of kernel PCR leaves them, ``(I - H_gg)^{-1} r_g``. All of this costs
``O(n m)`` per filter once ``V`` is known, so a grid of ``alpha`` is cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RidgeReference", "loo_residuals", "ridge_reference", "RIDGE_ALPHAS"]

#: the ridge parameters tried, relative to the largest eigenvalue of the kernel matrix
RIDGE_ALPHAS = np.logspace(-10, 1, 34)

#: the intercept's term is left out where the constant lies in the span of the smoother
#: (``e^T q`` at or below this): there ``q = 0`` as well
_SPAN_ATOL = 1e-12


def loo_residuals(g, U, a, zc, sw, groups, intercept):
    """Leave-one-out residuals (in units of the targets, shape (n, c)) of the smoother with
    filter factors ``g`` (m,) on the unit eigenvectors ``U`` (n, m).

    ``a = U^T e`` (the constant's coordinates), ``zc = W^{1/2} (Y - mean_w(Y))`` (the
    weighted, centred targets, whose intercept part the smoother reproduces exactly), ``sw``
    the square-root weights, ``groups`` the groups of identical inputs (numbered from 0),
    left out together.
    """
    s = U.T @ zc  # (m, c)
    fitted = U @ (g[:, None] * s)
    Ug = U * np.sqrt(np.maximum(g, 0.0))
    h = np.einsum("ij,ij->i", Ug, Ug)
    q = None
    if intercept:
        N2 = float(sw @ sw)
        e = sw / np.sqrt(N2)
        q = e - U @ (g * a)
        denom = float(e @ q)
        if denom > _SPAN_ATOL:
            q = q / np.sqrt(denom)
            fitted += q[:, None] * (q @ zc)[None, :]
            h = h + q**2
        else:
            q = None
    r = zc - fitted
    loo = r / np.maximum(1.0 - h, np.finfo(float).eps)[:, None]
    if groups is not None:
        sizes = np.bincount(groups)
        for grp in np.flatnonzero(sizes > 1):
            idx = np.flatnonzero(groups == grp)
            Hgg = Ug[idx] @ Ug[idx].T
            if q is not None:
                Hgg += np.outer(q[idx], q[idx])
            A = np.eye(len(idx)) - Hgg
            try:
                loo[idx] = np.linalg.solve(A, r[idx])
            except np.linalg.LinAlgError:
                loo[idx] = np.linalg.lstsq(A, r[idx], rcond=None)[0]
    return loo / sw[:, None]


@dataclass(frozen=True)
class RidgeReference:
    """The kernel ridge regression of the best leave-one-out error over :data:`RIDGE_ALPHAS`
    (times ``λ_1``): ``alpha``, its per-sample leave-one-out residuals ``residuals`` (n, c)
    and every alpha's error (``alphas``, ``errors``, as the caller scores them)."""

    alpha: float
    residuals: np.ndarray
    alphas: np.ndarray
    errors: np.ndarray


def ridge_reference(lam, U, a, zc, sw, groups, intercept, score):
    """The :class:`RidgeReference` over ``alpha = λ_1 * RIDGE_ALPHAS``; ``score(residuals)``
    gives the error of leave-one-out residuals (the smallest wins; ties: the larger alpha)."""
    lam = np.maximum(np.asarray(lam, dtype=float), 0.0)
    alphas = float(lam[0]) * RIDGE_ALPHAS
    errors = np.empty(len(alphas))
    best = None
    for k in range(len(alphas) - 1, -1, -1):  # from the largest alpha: ties keep it
        res = loo_residuals(lam / (lam + alphas[k]), U, a, zc, sw, groups, intercept)
        errors[k] = score(res)
        if best is None or errors[k] < errors[best[0]]:
            best = (k, res)
    return RidgeReference(float(alphas[best[0]]), best[1], alphas, errors)
