"""Leave-one-out errors of linear smoothers in one eigenbasis.

Kernel ridge regression and kernel principal component regression are linear smoothers of
the targets in the eigenbasis ``M = U diag(λ) U^T`` of a (weighted) kernel matrix
``M = W^{1/2} K W^{1/2}`` (Hastie, Tibshirani & Friedman 2009, Sec. 5.4.1 and 7.10): with
the filter factors ``g_k = λ_k / (λ_k + alpha)`` (ridge) or ``g_k = 1`` for ``k <= d``
(PCR), ``S = U diag(g) U^T``. Both are described here by the filter of the residual map
``I - S = U diag(f) U^T``, ``f = 1 - g`` (``alpha / (λ_k + alpha)`` for ridge, computed
so without cancellation where ``alpha`` is small). With an unpenalised intercept (the
constant ``e = W^{1/2} 1 / sqrt(N)``) the hat matrix of the penalised least squares
``min ||z - b e - f||^2 + alpha f^T M^+ f`` is

    H = S + q q^T / (e^T q),     q = (I - S) e,

(the unpenalised column added to a linear smoother). The leave-one-out residual of a sample
is ``r_i / (1 - H_ii)`` (Allen 1974; Golub, Heath & Wahba 1979 for the ridge: the model
refitted without the sample predicts it so; exact for both, since leaving a sample out of a
penalised least-squares fit is the fit with its target replaced by its own prediction), and
of a group ``g`` of identical inputs, left out together, ``(I - H_gg)^{-1} r_g``. All of
this costs ``O(n m)`` per filter once ``U`` is known, so a grid of ``alpha`` is cheap.

Used by kernel PCR's comparison with kernel ridge regression
(:mod:`kpm.relevance.reference`) and by the learned pre-image map's choice of its ridge
(:mod:`kpm.preimage.learned`).

References
----------
D. M. Allen, "The relationship between variable selection and data augmentation and a
method for prediction", Technometrics 16(1), 1974.

G. H. Golub, M. Heath, G. Wahba, "Generalized cross-validation as a method for choosing a
good ridge parameter", Technometrics 21(2), 1979.
"""

from __future__ import annotations

import numpy as np

__all__ = ["loo_residuals", "ridge_loo_errors"]

#: the intercept's term is left out where the constant lies in the span of the smoother
#: (``e^T q`` at or below this): there ``q = 0`` as well
_SPAN_ATOL = 1e-12


def loo_residuals(f, U, z, *, sqrt_weight=None, groups=None, intercept=False):
    """Leave-one-out residuals of the linear smoothers ``S = I - U diag(f) U^T``.

    Parameters
    ----------
    f : ndarray of shape (m,) or (k, m)
        Filter factors of the residual map ``I - S`` (``1 - g``), one smoother a row.
    U : ndarray of shape (n, n)
        The orthonormal eigenvectors of the (weighted) kernel matrix, all of them.
    z : ndarray of shape (n, c)
        The targets, times the square-root weights; with ``intercept``, centred by their
        weighted mean (the intercept part the smoother reproduces exactly).
    sqrt_weight : ndarray of shape (n,), optional
        Square roots of the sample weights (ones when None); the residuals are returned in
        units of the targets.
    groups : ndarray of shape (n,), optional
        Groups of identical inputs (numbered from 0), left out together.
    intercept : bool, default=False
        Whether the smoother has an unpenalised constant.

    Returns
    -------
    ndarray of shape (n, c) for ``f`` of shape (m,), else (k, n, c)
    """
    F = np.atleast_2d(np.asarray(f, dtype=float))  # (k, m)
    n, k, c = len(U), len(F), z.shape[1]
    sw = np.ones(n) if sqrt_weight is None else np.asarray(sqrt_weight, dtype=float)
    coef = F[:, :, None] * (U.T @ z)[None, :, :]  # (k, m, c)
    cols = [coef.transpose(1, 0, 2).reshape(U.shape[1], k * c)]
    Q = np.zeros((k, n))
    if intercept:
        a = U.T @ (sw / np.sqrt(float(sw @ sw)))  # the constant's coordinates
        cols.append((F * a).T)  # (m, k)
    P = U @ np.hstack(cols)  # one pass: the residuals and (I - S) e
    r = P[:, : k * c].reshape(n, k, c).transpose(1, 0, 2)  # (k, n, c): (I - S) z
    one_minus_h = (U * U) @ F.T  # (n, k)
    if intercept:
        denom = (F * a) @ a  # e^T (I - S) e
        live = denom > _SPAN_ATOL
        Q[live] = (P[:, k * c:][:, live] / np.sqrt(denom[live])).T
        r = r - Q[:, :, None] * (Q @ z)[:, None, :]
        one_minus_h = one_minus_h - (Q**2).T
    loo = r / np.maximum(one_minus_h.T, np.finfo(float).eps)[:, :, None]
    if groups is not None:
        sizes = np.bincount(groups)
        for grp in np.flatnonzero(sizes > 1):
            idx = np.flatnonzero(groups == grp)
            for j in range(k):
                # I - H_gg, with U_g U_g^T = I (the rows of an orthogonal matrix)
                A = (U[idx] * F[j]) @ U[idx].T - np.outer(Q[j, idx], Q[j, idx])
                try:
                    loo[j, idx] = np.linalg.solve(A, r[j, idx])
                except np.linalg.LinAlgError:
                    loo[j, idx] = np.linalg.lstsq(A, r[j, idx], rcond=None)[0]
    loo = loo / sw[None, :, None]
    return loo[0] if np.ndim(f) == 1 else loo


def ridge_loo_errors(eigenvalues, U, z, alphas, score, *, sqrt_weight=None, groups=None,
                     intercept=False, max_block=None):
    """The leave-one-out errors of kernel ridge regression at every ridge of ``alphas``.

    The smoother of ``alpha`` has the residual filter ``alpha / (λ_k + alpha)``
    (:func:`loo_residuals`, which also says what ``U``, ``z``, ``sqrt_weight``, ``groups`` and
    ``intercept`` are); ``score(residuals)`` turns the leave-one-out residuals (n, c) of one
    alpha into its error.

    Parameters
    ----------
    eigenvalues : ndarray of shape (n,)
        Eigenvalues of the kernel matrix (clipped at 0).
    alphas : ndarray of shape (k,)
        Ridge parameters.
    score : callable
        Residuals (n, c) -> error.
    max_block : int, optional
        At most this many alphas at once (the working memory is about ``3 * 8 n c`` bytes
        per alpha); all at once when None.

    Returns
    -------
    ndarray of shape (k,)
    """
    lam = np.maximum(np.asarray(eigenvalues, dtype=float), 0.0)
    alphas = np.asarray(alphas, dtype=float)
    step = len(alphas) if max_block is None else max(1, int(max_block))
    errors = np.empty(len(alphas))
    for b in range(0, len(alphas), step):
        block = alphas[b:b + step]
        F = block[:, None] / (lam[None, :] + block[:, None])
        res = loo_residuals(F, U, z, sqrt_weight=sqrt_weight, groups=groups, intercept=intercept)
        errors[b:b + step] = [score(r) for r in res]
    return errors
