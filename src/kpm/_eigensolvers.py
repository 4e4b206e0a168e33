"""Eigendecompositions of symmetric PSD kernel matrices: dense, partial and centring helpers.

All functions return eigenvalues in *decreasing* order with the matching unit
eigenvectors as columns, and a deterministic sign convention (the entry of
largest magnitude of each eigenvector is positive).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import eigsh
from sklearn.utils import check_random_state

__all__ = ["center_gram", "center_cross_gram", "top_eigh", "fix_signs"]


def center_gram(K):
    """Double-centre a Gram matrix: ``H K H`` with ``H = I - 11^T/n``.

    Returns
    -------
    Kc : ndarray (n, n)
    col_means : ndarray (n,)
        ``K 1 / n`` (needed to centre kernel vectors of new points).
    total_mean : float
        ``1^T K 1 / n^2``.
    """
    K = np.asarray(K, dtype=float)
    col_means = K.mean(axis=0)
    total_mean = float(col_means.mean())
    Kc = K - col_means[None, :] - col_means[:, None] + total_mean
    return Kc, col_means, total_mean


def center_cross_gram(K_new, col_means, total_mean):
    """Centre kernel rows of new points: row i is ``H (kappa(x_i) - K1/n)``.

    ``K_new`` has shape (n_new, n_train).
    """
    K_new = np.asarray(K_new, dtype=float)
    return K_new - K_new.mean(axis=1, keepdims=True) - col_means[None, :] + total_mean


def fix_signs(V):
    """Flip columns so that each column's largest-magnitude entry is positive."""
    if V.size == 0:
        return V
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def _choose_solver(n, k):
    if k is None or k >= n - 1:
        return "dense"
    if n <= 500 or k > n // 4:
        return "dense"
    return "arpack"


def top_eigh(K, n_components=None, *, solver="auto", random_state=None, tol=0.0):
    """Top eigenpairs of a symmetric matrix.

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric matrix (a kernel matrix).
    n_components : int or None
        Number of leading eigenpairs; ``None`` for all.
    solver : {'auto', 'dense', 'arpack', 'randomized'}
        ``'auto'`` picks a partial solver when ``n_components`` is much smaller than n.
    random_state : int, RandomState or None
        Seeds the partial solvers' starting vectors.
    tol : float
        Convergence tolerance of the partial solvers (0 = machine precision).

    Returns
    -------
    eigenvalues : ndarray (k,), decreasing
    eigenvectors : ndarray (n, k)
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    k = n if n_components is None else int(n_components)
    if not 1 <= k <= n:
        raise ValueError(f"n_components must be in [1, {n}], got {n_components}")
    if solver == "auto":
        solver = _choose_solver(n, None if n_components is None else k)
    if solver == "dense" or k >= n - 1:
        if k == n:
            w, V = linalg.eigh(K, check_finite=False)
        else:
            w, V = linalg.eigh(K, subset_by_index=(n - k, n - 1), check_finite=False)
    elif solver == "arpack":
        rs = check_random_state(random_state)
        v0 = rs.uniform(-1, 1, n)
        w, V = eigsh(K, k=k, which="LA", v0=v0, tol=tol)
    elif solver == "randomized":
        w, V = _randomized_eigh(K, k, check_random_state(random_state))
    else:
        raise ValueError(f"unknown eigensolver {solver!r}; expected 'auto', 'dense', 'arpack' or 'randomized'")
    order = np.argsort(w)[::-1]
    return w[order], fix_signs(V[:, order])


def _randomized_eigh(K, k, rs, n_oversamples=None, n_iter=None):
    """Randomized subspace iteration followed by Rayleigh-Ritz."""
    n = K.shape[0]
    p = n_oversamples if n_oversamples is not None else max(10, k // 2)
    q = n_iter if n_iter is not None else 7
    Q = rs.standard_normal((n, min(n, k + p)))
    Q, _ = linalg.qr(K @ Q, mode="economic", check_finite=False)
    for _ in range(q):
        Q, _ = linalg.qr(K @ Q, mode="economic", check_finite=False)
    B = Q.T @ K @ Q
    w, U = linalg.eigh((B + B.T) / 2, check_finite=False)
    w, U = w[::-1][:k], U[:, ::-1][:, :k]
    return w, Q @ U
