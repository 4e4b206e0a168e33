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
    """Leave-one-out residuals (in units of the targets) of the smoothers with filter factors
    ``g`` (m,) -- shape (n, c) -- or ``g`` (k, m), one smoother a row -- shape (k, n, c) --
    on the unit eigenvectors ``U`` (n, m).

    ``a = U^T e`` (the constant's coordinates), ``zc = W^{1/2} (Y - mean_w(Y))`` (the
    weighted, centred targets, whose intercept part the smoother reproduces exactly), ``sw``
    the square-root weights, ``groups`` the groups of identical inputs (numbered from 0),
    left out together. Two passes over ``U`` for all the smoothers together.
    """
    G = np.atleast_2d(np.asarray(g, dtype=float))  # (k, m)
    k, c = len(G), zc.shape[1]
    s = U.T @ zc  # (m, c)
    coef = G[:, :, None] * s[None, :, :]  # (k, m, c)
    cols = [coef.transpose(1, 0, 2).reshape(len(s), k * c)]
    if intercept:
        cols.append((G * a).T)  # (m, k)
    P = U @ np.hstack(cols)  # one pass: the fits and the smoothed constants
    fitted = P[:, : k * c].reshape(len(U), k, c).transpose(1, 0, 2)  # (k, n, c)
    h = (U * U) @ G.T  # (n, k)
    Q = np.zeros((k, len(U)))
    if intercept:
        e = sw / np.sqrt(float(sw @ sw))
        q = e[:, None] - P[:, k * c:]  # (n, k): (I - S) e
        denom = e @ q
        live = denom > _SPAN_ATOL
        Q[live] = (q[:, live] / np.sqrt(denom[live])).T
        fitted = fitted + Q[:, :, None] * (Q @ zc)[:, None, :]
        h = h + (Q**2).T
    r = zc[None] - fitted
    loo = r / np.maximum(1.0 - h.T, np.finfo(float).eps)[:, :, None]
    if groups is not None:
        sizes = np.bincount(groups)
        for grp in np.flatnonzero(sizes > 1):
            idx = np.flatnonzero(groups == grp)
            for j in range(k):
                A = np.eye(len(idx)) - (U[idx] * G[j]) @ U[idx].T - np.outer(Q[j, idx], Q[j, idx])
                try:
                    loo[j, idx] = np.linalg.solve(A, r[j, idx])
                except np.linalg.LinAlgError:
                    loo[j, idx] = np.linalg.lstsq(A, r[j, idx], rcond=None)[0]
    loo = loo / sw[None, :, None]
    return loo[0] if np.ndim(g) == 1 else loo


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
    res = loo_residuals(lam[None, :] / (lam[None, :] + alphas[:, None]), U, a, zc, sw, groups, intercept)
    errors = np.array([score(r) for r in res])
    best = len(alphas) - 1 - int(np.argmin(errors[::-1]))  # ties: the larger alpha
    return RidgeReference(float(alphas[best]), res[best], alphas, errors)
