"""Reduced-set selection: which expansion vectors to keep (Schölkopf et al. 1999, §V-C).

:func:`select_path` removes vectors one at a time with optimal readjustment of the others
(the cheapest removal costs ``beta_n^2 / G_nn`` with ``G`` the inverse Gram matrix of the
current set, downdated by rank-one steps); :func:`select_l1_single` and
:func:`select_l1_shared` select by shrinkage, ``min_beta (alpha-beta)'K(alpha-beta) + lambda
sum_i c_i |beta_i|`` (the LARS-lasso path on the Gram form; a multi-task lasso when the
machines share their vectors). All work on the Gram matrix ``K`` of the support vectors.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg

__all__ = ["select_l1_shared", "select_l1_single", "select_path"]


def select_path(K, alpha, m, *, eps_rel=1e-10, refresh=1e8):
    """One-at-a-time removal with optimal readjustment down to ``m`` vectors.

    ``alpha`` is one machine's coefficients ``(n,)`` or several machines' ``(M, n)``
    sharing the patterns: removing pattern n then costs the sum over the machines,
    ``sum_p beta_pn^2 / G_nn`` (the machines share ``G``). Returns the kept indices
    (sorted) and the optimal coefficients on them (``(m,)`` or ``(M, m)``).
    """
    A = np.atleast_2d(alpha)
    n = A.shape[1]
    c = K @ A.T  # right-hand sides K_{T,S} alpha of the optimal coefficients, (n, M)
    eps = eps_rel * max(float(np.max(np.diag(K))), 1e-300)
    idx = np.arange(n)

    def factor(sub):
        Ks = K[np.ix_(sub, sub)] + eps * np.eye(len(sub))
        cf = linalg.cho_factor(Ks, lower=True, check_finite=False)
        G = linalg.cho_solve(cf, np.eye(len(sub)), check_finite=False)
        return G, G @ c[sub]

    G, beta = factor(idx)
    while len(idx) > m:
        d = np.diag(G)
        j = int(np.argmin(np.sum(beta**2, axis=1) / d))
        degenerate = d[j] * K[idx[j], idx[j]] > refresh
        keep = np.ones(len(idx), dtype=bool)
        keep[j] = False
        u = G[keep, j]
        bj = beta[j]
        idx = idx[keep]
        if degenerate:
            G, beta = factor(idx)
        else:
            G = G[np.ix_(keep, keep)]
            G -= np.outer(u, u) / d[j]
            # optimal coefficients of the others after the removal (rank-one update)
            beta = beta[keep] - np.outer(u, bj) / d[j]
    beta = G @ c[idx]
    return idx, (beta[:, 0] if np.ndim(alpha) == 1 else beta.T)


def _l1_weights(A, weights):
    if weights == "uniform":
        return np.ones(A.shape[1])
    a = np.max(np.abs(A), axis=0)
    return a.mean() / a


def select_l1_single(K, alpha, m, weights):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import lars_path_gram

    n = len(alpha)
    w = 1.0 / _l1_weights(alpha[None, :], weights)  # column scaling D = diag(1/c)
    Gram = K * np.outer(w, w)
    Xy = w * (K @ alpha)
    with warnings.catch_warnings():
        # LARS reports (and handles) near-collinear regressors: expected for Gaussian Gram
        # matrices of close patterns and for duplicates
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, _, coefs = lars_path_gram(
            Xy, Gram, n_samples=n, method="lasso", max_iter=max(4 * m, m + 50)
        )
    nnz = np.count_nonzero(coefs, axis=0)
    ok = np.flatnonzero(nnz <= m)
    best = ok[np.argmax(nnz[ok] + 1e-9 * ok)]  # largest support <= m, latest knot on ties
    sel = np.flatnonzero(coefs[:, best])
    if len(sel) == 0:
        sel = np.array([int(np.argmax(np.abs(Xy)))])
    return sel


def select_l1_shared(K, A, m, weights, *, max_iter=1000, tol=1e-4):
    """Shared-vector selection over all machines: multi-task lasso on the Cholesky factor."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import lasso_path

    n = K.shape[0]
    eps = 1e-10 * float(np.max(np.diag(K)))
    L = linalg.cholesky(K + eps * np.eye(n), lower=True, check_finite=False)
    w = 1.0 / _l1_weights(A, weights)
    Xd = L.T * w[None, :]  # design L' D
    Y = L.T @ A.T  # (n, n_machines)
    alpha_max = np.sqrt(np.sum((Xd.T @ Y) ** 2, axis=1)).max() / n
    grid = alpha_max * np.logspace(0, -6, 31)[1:]  # 0.2-decade steps, then bisection
    coef = None
    best_sel = None

    def fit(a, init):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            _, cs, *_ = lasso_path(
                Xd, Y, alphas=[a], coef_init=init, max_iter=max_iter, tol=tol
            )
        return cs[:, :, 0]  # (n_machines, n)

    # at alpha_max no pattern is used: the lower end of the first bracket
    lo, hi, lo_coef = alpha_max, None, np.zeros((A.shape[0], n))
    for a in grid:  # decreasing alpha: the support grows (roughly)
        coef = fit(a, coef)
        k = int(np.count_nonzero(np.any(coef != 0, axis=0)))
        if k <= m:
            lo, best_sel = a, np.flatnonzero(np.any(coef != 0, axis=0))
            lo_coef = coef.copy()
            if k == m:
                return best_sel
        else:
            hi = a
            break
    if hi is not None and lo is not None:  # bisect between the bracketing alphas
        coef = lo_coef
        for _ in range(10):
            a = np.sqrt(lo * hi)
            c_try = fit(a, coef)
            k = int(np.count_nonzero(np.any(c_try != 0, axis=0)))
            if k <= m:
                lo, best_sel, coef = a, np.flatnonzero(np.any(c_try != 0, axis=0)), c_try
                if k == m:
                    break
            else:
                hi = a
    if best_sel is None or len(best_sel) == 0:
        best_sel = np.array([int(np.argmax(np.abs(A).max(axis=0)))])
    return best_sel
