"""Reduced-set approximations of SVM decision functions (Schölkopf et al. 1999, §V).

An SVM (or any kernel machine) decides with ``f(x) = sum_i alpha_i k(x_i, x) + b``, i.e.
``f(x) = <Psi, phi(x)> + b`` with ``Psi = sum_i alpha_i phi(x_i)``. Its cost is one kernel
evaluation per support vector. A *reduced set* replaces ``Psi`` by
``Psi' = sum_{j<=m} beta_j phi(z_j)`` with ``m`` much smaller than the number of support
vectors; the approximation error ``||Psi - Psi'||^2 = alpha'K alpha - 2 beta'K^{zx} alpha +
beta'K^z beta`` is computable from kernels alone (Schölkopf et al. 1999, §V).

Methods
-------
The derivations, the shared budget, the fit to the decision values and the threshold rules
are in :doc:`/user_guide/reduced_sets`.

``'select'``
    One-at-a-time removal of expansion vectors with optimal readjustment of the others
    (Schölkopf et al. 1999, §V-C): the cheapest removal costs ``beta_n^2 / G_nn`` with
    ``G`` the inverse Gram matrix of the current set, downdated by rank-one steps.
``'select-l1'``
    Shrinkage selection ``min_beta (alpha-beta)'K(alpha-beta) + lambda sum_i c_i |beta_i|``
    (the LARS-lasso path on the Gram form; a multi-task lasso when the machines share their
    vectors), then optimal coefficients on the selected patterns.
``'construct'``
    Reduced-set construction for the Gaussian kernel: each new ``z_j`` is the fixed-point
    pre-image (:func:`kpm.denoising.preimage.gaussian_fixed_point`) of the current residual,
    then all coefficients are recomputed optimally; optionally a joint L-BFGS descent over
    ``(z, beta)`` (``gradient_maxiter``).
``'burges'``
    Burges' (1996) method: each ``z_j`` by L-BFGS from random starts, optimal coefficients
    after each new vector, the joint descent as second phase.

For the linear kernel both constructions are exact with one vector per machine:
``Psi = sum_i alpha_i x_i`` is the weight vector ``w`` itself (Burges 1996); machines that
share a budget of m vectors get the best rank-m approximation of their weight vectors.

With ``shared_vectors`` the machines of a multi-class system share one budget of distinct
vectors (the cost per test point), each with its own optimal coefficients, and the
criterion is the total error ``sum_p ||Psi_p - Psi'_p||^2``. Beyond the paper,
``coef_fit='train'`` and ``data_fit_maxiter`` fit the original decision values on the
training set instead of ``Psi``. The offsets are re-estimated on the training set
(``threshold``: ``'mean'``, ``'error'`` or ``'keep'``). Sample weights weight every fit on
the training set; the default budget ``n_vectors='auto'`` grows until the reduced machine
is about as accurate on the training set as the SVC.

Inputs accepted
---------------
A fitted :class:`sklearn.svm.SVC` (binary; multi-class in its one-vs-one ``dual_coef_``
layout), a list of fitted binary ``SVC`` (one-vs-rest: machine k separates ``classes_[k]``,
its positive class ``svc.classes_[1]``, from the rest), or a kernel expansion
``(support_vectors, coef, intercept, kernel)`` (or a dict with these keys): ``coef`` of
shape ``(n_machines, n_vectors)``, one machine is binary, several are one-vs-rest.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg, sparse
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from kpm.kernels import Kernel, make_kernel
from kpm.spectral.basis import RANK_RTOL, numerical_rank, rounding_level
from kpm.validation import (
    Boolean,
    InstanceOf,
    Integer,
    Options,
    RandomState,
    Real,
    check_option,
    check_sample_weight,
    validate_params,
    warn_if_degenerate_kernel,
    warn_if_degenerate_model,
)

__all__ = [
    "ReducedSetSVC",
    "reduce_svc",
    "optimal_coefficients",
    "expansion_error",
    "METHODS",
]

#: The reduction methods.
METHODS = ("select", "select-l1", "construct", "burges")
_THRESHOLDS = ("auto", "mean", "error", "keep")
_COEF_FITS = ("feature-space", "train")
#: the budgets ``n_vectors='auto'`` tries, as fractions of the support vectors, smallest first
AUTO_FRACTIONS = (0.1, 0.2, 0.4, 0.8, 1.0)


def auto_tolerance(n):
    """How much lower than the SVC's a reduced machine's training accuracy may be for
    ``n_vectors='auto'`` to take it: 1 %, or one of the n training samples."""
    return max(0.01, 1.0 / n)


#: the share of the variation of the SVC's decision values on the training set that the
#: reduced machine must reproduce for ``n_vectors='auto'`` (R^2 of its decision values)
AUTO_MIN_R2 = 0.9
#: an explicit budget reproducing less than this share warns
WORSE_R2 = 0.5
#: a selection for a linear SVC leaving more than this share of ||Psi||^2 warns (its exact
#: reduction, ``method='construct'``, leaves none: rounding only)
LINEAR_EXACT_RTOL = 1e-8


def worse_tolerance(n):
    """The accuracy gap (training set of n samples) beyond which an explicit budget is
    clearly worse than the SVC and warns: 5 %, or two samples."""
    return max(0.05, 2.0 / n)


# --------------------------------------------------------------------------- numerics
def _solve_psd(K, rhs):
    """``K^{-1} rhs`` for a symmetric PSD ``K``; the pseudo-inverse cut at the numerical rank
    (:func:`kpm.spectral.numerical_rank`) when ``K`` is singular to the rank tolerance."""
    K = np.asarray(K, dtype=float)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", linalg.LinAlgWarning)
            c, low = linalg.cho_factor(K, lower=True, check_finite=False)
        # the squared pivots of the factor bound the spectrum: a ratio above the rank
        # tolerance leaves K nonsingular; below it (duplicates), the pseudo-inverse is the
        # paper's prescription
        d = np.abs(np.diag(c))
        if d.min() ** 2 > RANK_RTOL * d.max() ** 2:
            return linalg.cho_solve((c, low), rhs, check_finite=False)
    except (linalg.LinAlgError, linalg.LinAlgWarning):
        pass
    w, V = linalg.eigh(K, check_finite=False)
    w, V = w[::-1], V[:, ::-1]
    r = numerical_rank(w, floor=rounding_level(len(K), float(np.max(np.abs(K)))))
    U = V[:, :r]
    return U @ ((U.T @ rhs) / (w[:r][:, None] if np.ndim(rhs) == 2 else w[:r]))


def _unit_scale(K):
    """``K / max_i K_ii``: the selections and the optimal coefficients do not depend on the
    scale of the kernel matrix, while products of its entries underflow or overflow for
    data of extreme magnitude under a linear or polynomial kernel (1e-100 inputs: entries
    ~1e-200, their products 0)."""
    top = float(np.max(np.abs(np.diag(K)))) if len(K) else 0.0
    return K / top if top > 0 else K


def _validate_kernel(kernel):
    if isinstance(kernel, Kernel):
        k = kernel
    elif isinstance(kernel, dict):
        k = make_kernel(**kernel)
    else:
        k = make_kernel(kernel)
    if k.is_precomputed:
        raise ValueError("a reduced set needs a kernel it can evaluate on new vectors, not 'precomputed'")
    return k


def optimal_coefficients(Z, X, alpha, kernel):
    r"""Optimal coefficients :math:`\beta = (K^z)^{-1} K^{zx} \alpha` of an expansion over ``Z``.

    Minimises :math:`\|\sum_i \alpha_i \phi(x_i) - \sum_j \beta_j \phi(z_j)\|^2` over
    :math:`\beta` for fixed ``Z`` (Schölkopf et al. 1999, Proposition; pseudo-inverse when
    :math:`K^z` is singular).

    Parameters
    ----------
    Z : array-like of shape (m, n_features)
        Reduced-set vectors.
    X : array-like of shape (n, n_features)
        Expansion vectors of ``Psi``.
    alpha : array-like of shape (n,) or (n_machines, n)
        Coefficients of ``Psi`` (several machines: one row each).
    kernel : Kernel, str, callable or dict
        The kernel (anything :func:`kpm.kernels.make_kernel` accepts, or a dict of its
        arguments).

    Returns
    -------
    beta : ndarray of shape (m,) or (n_machines, m)
    """
    kernel = _validate_kernel(kernel)
    Z = check_array(Z, dtype=float)
    X = check_array(X, dtype=float)
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"Z has {Z.shape[1]} features but X has {X.shape[1]}")
    alpha = np.asarray(alpha, dtype=float)
    one = alpha.ndim == 1
    A = np.atleast_2d(alpha)
    if A.ndim != 2 or A.shape[1] != len(X):
        raise ValueError(f"alpha must have {len(X)} entries per machine, got shape {alpha.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("alpha contains NaN or infinite values")
    rhs = kernel(Z, X) @ A.T  # (m, n_machines)
    beta = _solve_psd(kernel(Z), rhs).T
    return beta[0] if one else beta


def expansion_error(X, alpha, Z, beta, kernel):
    r""":math:`\|\sum_i \alpha_i \phi(x_i) - \sum_j \beta_j \phi(z_j)\|^2` computed from kernels.

    ``alpha``/``beta`` may hold one machine per row; the result then has one entry per
    machine.
    """
    kernel = _validate_kernel(kernel)
    X = check_array(X, dtype=float)
    Z = check_array(Z, dtype=float, ensure_min_samples=0)
    A = check_array(np.atleast_2d(np.asarray(alpha, dtype=float)), input_name="alpha")
    B = check_array(np.atleast_2d(np.asarray(beta, dtype=float)), ensure_min_features=0, input_name="beta")
    if A.shape[1] != len(X) or B.shape[1] != len(Z) or len(A) != len(B):
        raise ValueError(
            f"shapes do not match: alpha {A.shape} for {len(X)} vectors, beta {B.shape} for {len(Z)}"
        )
    err = np.einsum("pi,ij,pj->p", A, kernel(X), A)
    if len(Z):
        err -= 2 * np.einsum("pj,ji,pi->p", B, kernel(Z, X), A)
        err += np.einsum("pj,jl,pl->p", B, kernel(Z), B)
    err = np.maximum(err, 0.0)
    return err[0] if np.ndim(alpha) == 1 else err


def _select_path(K, alpha, m, *, eps_rel=1e-10, refresh=1e8):
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


def _select_l1_single(K, alpha, m, weights):
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


def _select_l1_shared(K, A, m, weights, *, max_iter=1000, tol=1e-4):
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


def _construct_single(kernel, Xs, alpha, m, *, max_iter, tol, n_restarts, rng):
    """Iterated one-term pre-images of the residual, optimal ``beta`` after each step."""
    from kpm.denoising.preimage import gaussian_fixed_point

    gamma = kernel.gamma
    K_ss = kernel(Xs)
    Ka = K_ss @ alpha  # <Psi, phi(x_i)>
    norm2 = float(alpha @ Ka)
    d = Xs.shape[1]
    Z = np.empty((0, d))
    Kzs = np.empty((0, len(Xs)))  # k(z_j, x_i)
    Kzz = np.empty((0, 0))
    beta = np.empty(0)
    for _ in range(m):
        points = np.vstack([Xs, Z])
        coefs = np.concatenate([alpha, -beta])
        res_at_sv = Ka - Kzs.T @ beta  # <residual, phi(x_i)>
        starts = [int(np.argmax(np.abs(res_at_sv)))]
        if n_restarts > 1:
            pool = np.setdiff1d(np.arange(len(Xs)), starts)
            k = min(n_restarts - 1, len(pool))
            starts += [int(s) for s in rng.choice(pool, size=k, replace=False)]
        # all starts at once, one row each; scaled=True: the reduced-set criterion
        # min_beta ||beta phi(z) - residual||^2 = ||residual||^2 - <phi(z), residual>^2
        Zc, info = gaussian_fixed_point(
            np.tile(coefs, (len(starts), 1)),
            points,
            gamma,
            Xs[starts],
            max_iter=max_iter,
            tol=tol,
            scaled=True,
            return_info=True,
        )
        obj = np.where(np.all(np.isfinite(Zc), axis=1), info["objective"], np.inf)
        best = int(np.argmin(obj))
        z = Zc[best] if np.isfinite(obj[best]) else Xs[starts[0]]
        kzs = kernel(z[None, :], Xs)
        kzz = kernel(z[None, :], Z) if len(Z) else np.empty((1, 0))
        Z = np.vstack([Z, z])
        Kzs = np.vstack([Kzs, kzs])
        Kzz = np.block([[Kzz, kzz.T], [kzz, np.ones((1, 1))]])
        c = Kzs @ alpha
        beta = _solve_psd(Kzz, c)
        err = norm2 - 2 * beta @ c + beta @ Kzz @ beta
        if err <= 1e-12 * norm2:
            break
    return Z, optimal_coefficients(Z, Xs, alpha, kernel)


def _joint_objective(params, Xs, alpha, gamma, m, d, const):
    """``sum_p ||Psi_p - Psi'_p||^2`` and its gradient in ``(Z, B)`` (Gaussian kernel).

    ``params`` = ``Z.ravel()`` then ``B.ravel()`` with ``B`` of shape ``(M, m)`` (one row
    per machine, all sharing ``Z``); ``alpha`` is ``(n,)`` or ``(M, n)``; ``const`` is
    ``sum_p alpha_p' K alpha_p``. With ``dk(z, x)/dz = -2 gamma (z - x) k(z, x)``:
    ``d/dz_j = 4 gamma [z_j (sum_i W1_ji - sum_l W2_jl) - sum_i W1_ji x_i + sum_l W2_jl z_l]``
    with ``W1 = K^{zx} * (B'A)`` and ``W2 = K^z * (B'B)`` (Burges 1996).
    """
    A = np.atleast_2d(alpha)
    Z = params[: m * d].reshape(m, d)
    B = params[m * d :].reshape(len(A), m)
    kz = Kernel("rbf", gamma=gamma)
    Kzx = kz(Z, Xs)
    Kzz = kz(Z)
    KA = Kzx @ A.T  # (m, M)
    KB = Kzz @ B.T
    f = const - 2 * np.sum(B.T * KA) + np.sum(B.T * KB)
    g_B = (2 * (KB - KA)).T
    W1 = Kzx * (B.T @ A)
    W2 = Kzz * (B.T @ B)
    gZ = Z * (W1.sum(1) - W2.sum(1))[:, None] - W1 @ Xs + W2 @ Z
    gZ *= 4 * gamma
    return f, np.concatenate([gZ.ravel(), g_B.ravel()])


def _joint_gradient(kernel, Xs, alpha, Z, beta, maxiter):
    """Joint L-BFGS descent over ``(Z, beta)`` of all machines, then optimal ``beta``;
    the starting point is kept when the descent does not lower the total error."""
    from scipy.optimize import minimize

    m, d = Z.shape
    A = np.atleast_2d(alpha)
    const = float(np.einsum("pi,ij,pj->", A, kernel(Xs), A))
    x0 = np.concatenate([Z.ravel(), np.ravel(beta)])
    res = minimize(
        _joint_objective,
        x0,
        args=(Xs, A, kernel.gamma, m, d, const),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": int(maxiter)},
    )
    Z_new = res.x[: m * d].reshape(m, d)
    beta_new = optimal_coefficients(Z_new, Xs, alpha, kernel)
    old = np.sum(expansion_error(Xs, alpha, Z, beta, kernel))
    new = np.sum(expansion_error(Xs, alpha, Z_new, beta_new, kernel))
    return (Z_new, beta_new) if new <= old else (Z, beta)


def _data_objective(params, X, F, mask, gamma, m, d, scale, weight=None):
    """``sum_{x, p} w_x (F_p(x) - g_p(x) - b_p)^2 / scale`` and its gradient in ``(Z, B, b)``.

    ``g_p(x) = sum_j B_pj k(z_j, x)`` (Gaussian kernel); ``params`` = ``Z.ravel()``, then
    ``B.ravel()`` (``(M, m)``, entries outside ``mask`` held at 0), then ``b`` (``(M,)``);
    ``weight``: the sample weights ``w_x`` (default 1). With the residuals
    ``R = F - K^{xz} B' - b``, ``R_w = w R`` and ``W = (R_w B) * K^{xz}``:
    ``d/dB = -2 (R_w' K^{xz}) / scale``, ``d/db = -2 sum_x R_w / scale`` and
    ``d/dz_j = -4 gamma (sum_x W_xj (x - z_j)) / scale``.
    """
    M = len(mask)
    Z = params[: m * d].reshape(m, d)
    B = params[m * d : m * d + M * m].reshape(M, m) * mask
    b = params[m * d + M * m :]
    Kx = Kernel("rbf", gamma=gamma)(X, Z)
    R = F - Kx @ B.T - b
    Rw = R if weight is None else weight[:, None] * R
    f = float(np.sum(R * Rw)) / scale
    g_B = (-2.0 / scale) * (Rw.T @ Kx) * mask
    g_b = (-2.0 / scale) * Rw.sum(axis=0)
    W = (Rw @ B) * Kx
    g_Z = (-4.0 * gamma / scale) * (W.T @ X - W.sum(axis=0)[:, None] * Z)
    return f, np.concatenate([g_Z.ravel(), g_B.ravel(), g_b])


def _data_fit(exp, X, Z, B, *, maxiter, validation_fraction, rng, weight=None, check_every=10):
    """Joint L-BFGS descent over the vectors, coefficients and offsets of all machines
    on the training set: minimise the (weighted) squared difference between the original
    and the reduced decision values, ``sum_{x, p} w_x (f_p(x) - g_p(x) - b_p)^2`` (every
    machine keeps the vectors it uses: ``B``'s zero pattern is held). Beyond Schölkopf et
    al. (1999): it approximates ``f`` where the data are, their closing remark, instead of
    ``||Psi - Psi'||``. Early stopping: a random ``validation_fraction`` of ``X`` is held
    out and the iterate with the lowest held-out error (checked every ``check_every``
    iterations) is returned; ``validation_fraction=0`` returns the last iterate."""
    from scipy.optimize import minimize

    m, d = Z.shape
    M = len(B)
    w = np.ones(len(X)) if weight is None else np.asarray(weight, dtype=float)
    mask = (B != 0).astype(float)
    F = exp.kernel.matvec(X, exp.A.T, exp.V)  # original decision values without offsets
    perm = rng.permutation(len(X))
    n_val = min(int(round(validation_fraction * len(X))), len(X) - 1)  # >= 1 point to fit
    va, tr = perm[:n_val], perm[n_val:]
    if not w[tr].sum() > 0:  # the points fitted carry no weight: fit them all
        va, tr, n_val = va[:0], perm, 0
    b0 = w[tr] @ (F[tr] - exp.kernel.matvec(X[tr], B.T, Z)) / w[tr].sum()
    x0 = np.concatenate([Z.ravel(), (B * mask).ravel(), b0])
    scale = max(float(w[tr] @ np.sum(F[tr] ** 2, axis=1)), 1e-300)
    args = (X[tr], F[tr], mask, exp.kernel.gamma, m, d, scale, w[tr])
    best = {"x": x0, "val": np.inf}

    def held_out(x):
        return _data_objective(x, X[va], F[va], mask, exp.kernel.gamma, m, d, 1.0, w[va])[0]

    if n_val:
        best["val"] = held_out(x0)
    count = [0]

    def callback(xk):
        count[0] += 1
        if n_val and count[0] % check_every == 0:
            v = held_out(xk)
            if v < best["val"]:
                best.update(x=xk.copy(), val=v)

    res = minimize(_data_objective, x0, args=args, jac=True, method="L-BFGS-B",
                   callback=callback, options={"maxiter": int(maxiter)})
    x = res.x
    if n_val and held_out(x) > best["val"]:
        x = best["x"]
    return x[: m * d].reshape(m, d), x[m * d : m * d + M * m].reshape(M, m) * mask


def _construct_linear(exp, targets, shared, m_shared):
    """Reduced sets of a linear kernel: ``Psi_p = sum_i alpha_pi x_i = w_p`` is a vector of
    input space, so one vector ``z = w_p`` (coefficient 1) reproduces machine p exactly.
    Shared budget of m vectors: the best rank-m approximation of ``W = [w_1 .. w_M]``
    (its leading right singular vectors, coefficients ``U_m S_m``), which minimises the
    total error ``sum_p ||w_p - w'_p||^2`` and is exact once m reaches the rank of W."""
    W = exp.A @ exp.V  # (M, d)
    if shared:
        U, S, Vt = linalg.svd(W, full_matrices=False)
        r = int(np.sum(S > S[0] * RANK_RTOL)) if S[0] > 0 else 1
        r = max(1, min(m_shared, r))
        return Vt[:r], U[:, :r] * S[:r]
    keep = np.flatnonzero(targets >= 1)
    return W[keep], np.eye(len(W))[:, keep]


# ------------------------------------------------------- shared (multi-machine) construction
def _log_gain(Z, P, C, gamma):
    """``log sum_p <Psi_p, phi(z)>^2`` for each row z of ``Z``, where ``Psi_p = sum_i
    C[p, i] phi(P[i])`` (the Gaussian kernel, computed with the row's smallest distance
    factored out so that far points do not underflow); also the pieces of the gradient."""
    sq = np.maximum(
        np.sum(Z**2, 1)[:, None] - 2 * Z @ P.T + np.sum(P**2, 1)[None, :], 0.0
    )
    dmin = sq.min(axis=1)
    Ks = np.exp(-gamma * (sq - dmin[:, None]))  # k(z, x_i) * exp(gamma dmin)
    G = Ks @ C.T  # <Psi_p, phi(z)> * exp(gamma dmin), (S, M)
    g2 = np.sum(G**2, axis=1)
    with np.errstate(divide="ignore"):
        logF = np.log(g2) - 2 * gamma * dmin
    return logF, Ks, G, g2


def _joint_fixed_point(P, C, gamma, Z0, *, max_iter, tol):
    """Maximise ``F(z) = sum_p <Psi_p, phi(z)>^2`` over z, from every row of ``Z0``.

    ``F`` is the decrease of the total error ``sum_p ||Psi_p - beta_p phi(z)||^2`` when
    each machine adds ``phi(z)`` with its optimal coefficient ``beta_p = <Psi_p, phi(z)>``
    (Gaussian kernel: ``k(z, z) = 1``). Setting its gradient to zero gives the fixed
    point ``z = sum_i w_i k(z, x_i) x_i / sum_i w_i k(z, x_i)`` with ``w = sum_p
    <Psi_p, phi(z)> C[p]``: the one-machine iteration of Schölkopf et al. (1999, §IV-B)
    with the machines' expansions weighted by their current overlap with ``phi(z)``.
    Its denominator is ``F(z) >= 0``. The step ``z_new - z`` is an ascent direction
    (``grad F / (4 gamma F)``); it is halved until ``F`` does not decrease.

    Returns ``Z`` and ``log F`` at the end points.
    """
    Z = np.array(Z0, dtype=float, copy=True)
    width = 1.0 / np.sqrt(gamma)
    logF, Ks, G, g2 = _log_gain(Z, P, C, gamma)
    active = np.isfinite(logF)
    for _ in range(max_iter):
        if not active.any():
            break
        W = (G[active] @ C) * Ks[active]
        den = W.sum(axis=1)  # = g2 > 0 (scaled)
        step = (W @ P) / den[:, None] - Z[active]
        z_old, f_old = Z[active], logF[active]
        t = np.ones(len(z_old))
        for _half in range(30):
            cand = z_old + t[:, None] * step
            f_c, Ks_c, G_c, _ = _log_gain(cand, P, C, gamma)
            bad = ~(f_c >= f_old - 1e-12)
            if not bad.any():
                break
            t[bad] *= 0.5
        ok = f_c >= f_old - 1e-12
        rows = np.flatnonzero(active)
        upd = rows[ok]
        Z[upd], logF[upd] = cand[ok], f_c[ok]
        Ks[upd], G[upd] = Ks_c[ok], G_c[ok]
        moved = np.linalg.norm(t[:, None] * step, axis=1)
        done = ~ok | (moved <= tol * width)
        active[rows[done]] = False
    return Z, logF


_LOG_TINY = float(np.log(np.finfo(float).tiny))


def _burges_one_term(P, C, gamma, Z0, *, maxiter):
    """Burges (1996), first phase: maximise ``F(z) = sum_p <Psi_p, phi(z)>^2`` (the
    error decrease of one new term with optimal coefficients) by unconstrained
    quasi-Newton descent (L-BFGS) from each row of ``Z0``; returns the end points and
    ``log F`` there."""
    from scipy.optimize import minimize

    out = np.empty_like(Z0, dtype=float)
    logF = np.empty(len(Z0))
    for s, z0 in enumerate(np.asarray(Z0, dtype=float)):
        f0 = float(np.exp(_log_gain(z0[None], P, C, gamma)[0][0]))
        scale = 1.0 / f0 if np.isfinite(f0) and f0 > 0 else 1.0

        def fun(z):
            k = np.exp(-gamma * np.sum((P - z) ** 2, axis=1))
            g = C @ k
            w = (g @ C) * k
            F = float(g @ g)
            grad = -4 * gamma * (w.sum() * z - w @ P)  # dF/dz
            return -F * scale, -grad * scale

        res = minimize(fun, z0, jac=True, method="L-BFGS-B", options={"maxiter": int(maxiter)})
        out[s] = res.x
        logF[s] = _log_gain(res.x[None], P, C, gamma)[0][0]
    return out, logF


def _construct_shared(kernel, Xs, A, m, *, solver, max_iter, tol, n_restarts, rng):
    """Expansion vectors shared by all machines (rows of ``A``), built one at a time.

    Each new ``z`` maximises the total error decrease ``sum_p <R_p, phi(z)>^2`` over the
    machines' current residuals ``R_p = Psi_p - sum_l B_pl phi(z_l)`` (``solver``:
    ``'fixed-point'`` started at the support vector where this sum is largest plus
    random support vectors, or ``'burges'``: L-BFGS from random points drawn from a
    Gaussian fitted to the support vectors, Burges 1996); then every machine's
    coefficients are recomputed optimally over the shared set (Schölkopf et al. 1999,
    Proposition in §V-B). Works for one machine too (``A`` of shape ``(1, n)``).
    """
    gamma = kernel.gamma
    A = np.atleast_2d(A)
    M, n = A.shape
    d = Xs.shape[1]
    KA = kernel(Xs) @ A.T  # <Psi_p, phi(x_i)>, (n, M)
    norm2 = float(np.sum(A.T * KA))
    mu, sd = Xs.mean(axis=0), Xs.std(axis=0) + 1e-12
    Z = np.empty((0, d))
    Kzs = np.empty((0, n))
    Kzz = np.empty((0, 0))
    B = np.empty((M, 0))
    for _ in range(m):
        P = np.vstack([Xs, Z])
        C = np.hstack([A, -B])
        res = KA - Kzs.T @ B.T  # <R_p, phi(x_i)>
        first = int(np.argmax(np.sum(res**2, axis=1)))
        if solver == "burges":
            starts = mu + sd * rng.standard_normal((n_restarts, d))
            Zc, logF = _burges_one_term(P, C, gamma, starts, maxiter=max_iter)
            if not np.max(logF) > _LOG_TINY:  # every random start too far: the kernel underflows
                Zc, logF = _burges_one_term(P, C, gamma, Xs[[first]], maxiter=max_iter)
        else:
            idx = [first]
            if n_restarts > 1:
                pool = np.setdiff1d(np.arange(n), idx)
                idx += [int(s) for s in rng.choice(pool, size=min(n_restarts - 1, len(pool)), replace=False)]
            Zc, logF = _joint_fixed_point(P, C, gamma, Xs[idx], max_iter=max_iter, tol=tol)
        logF = np.where(np.all(np.isfinite(Zc), axis=1), logF, -np.inf)
        best = int(np.argmax(logF))
        if not np.isfinite(logF[best]):
            break  # nothing left to approximate
        z = Zc[best]
        kzz = kernel(z[None, :], Z) if len(Z) else np.empty((1, 0))
        Z = np.vstack([Z, z])
        Kzs = np.vstack([Kzs, kernel(z[None, :], Xs)])
        Kzz = np.block([[Kzz, kzz.T], [kzz, np.ones((1, 1))]])
        rhs = Kzs @ A.T  # (j, M)
        B = _solve_psd(Kzz, rhs).T
        err = norm2 - 2 * np.sum(B.T * rhs) + np.sum(B.T * (Kzz @ B.T))
        if err <= 1e-12 * norm2:
            break
    return Z, np.atleast_2d(optimal_coefficients(Z, Xs, A, kernel))


# ------------------------------------------------------------------- input expansion
class _Expansion:
    """Vectors ``V`` (N, d), coefficients ``A`` (M, N), offsets ``b`` (M,), machine layout."""

    def __init__(self, V, A, b, kernel, mode, classes, pairs=None, ovr_shape=True, break_ties=False):
        self.V, self.A, self.b, self.kernel = V, A, b, kernel
        self.mode, self.classes, self.pairs, self.ovr_shape = mode, classes, pairs, ovr_shape
        self.break_ties = break_ties


def _svc_kernel(svc):
    kern = svc.kernel
    if callable(kern) or kern == "precomputed":
        raise ValueError(
            f"the SVC uses kernel={kern!r}: a reduced set needs a named kernel it can evaluate "
            "on new vectors ('rbf', 'poly', 'sigmoid', 'linear'); pass a kernel expansion "
            "(support_vectors, coef, intercept, kernel) instead"
        )
    gamma = getattr(svc, "_gamma", svc.gamma)
    if kern == "rbf":
        return make_kernel("rbf", gamma=float(gamma))
    if kern == "linear":
        return make_kernel("linear")
    return make_kernel(kern, gamma=float(gamma), degree=svc.degree, coef0=svc.coef0)


def _check_fitted_svc(svc):
    if not hasattr(svc, "dual_coef_") and not hasattr(svc, "fit"):
        raise ValueError(f"expected a fitted SVC, got {type(svc).__name__}")
    if not hasattr(svc, "support_vectors_") and hasattr(svc, "coef_"):
        raise ValueError(f"{type(svc).__name__} is not a kernel SVM with support vectors")
    try:
        check_is_fitted(svc, ["support_vectors_", "dual_coef_", "intercept_"])
    except NotFittedError as exc:
        raise NotFittedError(
            f"the {type(svc).__name__} is not fitted: fit it first (or use "
            "ReducedSetSVC(prefit=False) to fit and reduce in one step)"
        ) from exc
    if sparse.issparse(svc.support_vectors_):
        raise ValueError("SVCs fitted on sparse input are not supported: fit on a dense array")


def _from_svc(svc):
    _check_fitted_svc(svc)
    if not hasattr(svc, "classes_"):
        raise ValueError(
            f"{type(svc).__name__} is not a classifier (no classes_): pass a kernel expansion "
            "(support_vectors, coef, intercept, kernel) to reduce other kernel machines"
        )
    kernel = _svc_kernel(svc)
    V = np.asarray(svc.support_vectors_, dtype=float)
    classes = np.asarray(svc.classes_)
    if len(classes) == 2:
        A = np.asarray(svc.dual_coef_, dtype=float).reshape(1, -1)
        return _Expansion(V, A, np.asarray(svc.intercept_, dtype=float).ravel(), kernel, "binary", classes)
    # one-vs-one: libsvm layout, support vectors grouped by class, pair (i, j) with i < j;
    # its decision value is positive for class i
    n_sup = np.asarray(svc.n_support_)
    start = np.concatenate([[0], np.cumsum(n_sup)])
    dual = np.asarray(svc.dual_coef_, dtype=float)
    n_cls = len(classes)
    pairs = [(i, j) for i in range(n_cls) for j in range(i + 1, n_cls)]
    A = np.zeros((len(pairs), len(V)))
    for p, (i, j) in enumerate(pairs):
        si = slice(start[i], start[i + 1])
        sj = slice(start[j], start[j + 1])
        A[p, si] = dual[j - 1, si]
        A[p, sj] = dual[i, sj]
    b = np.asarray(svc.intercept_, dtype=float).ravel()
    ovr = getattr(svc, "decision_function_shape", "ovr") == "ovr"
    ties = bool(getattr(svc, "break_ties", False))
    return _Expansion(V, A, b, kernel, "ovo", classes, pairs, ovr, ties)


def _union(Vs, coefs, n_machines):
    """Stack several machines' vectors, merging identical rows."""
    V_all = np.vstack(Vs)
    uniq, inv = np.unique(V_all, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    A = np.zeros((n_machines, len(uniq)))
    off = 0
    for p, c in enumerate(coefs):
        np.add.at(A[p], inv[off : off + len(c)], c)
        off += len(c)
    return uniq, A


def _from_svc_list(svcs):
    if len(svcs) == 0:
        raise ValueError("the list of SVCs is empty")
    kernels, Vs, coefs, bs = [], [], [], []
    for k, s in enumerate(svcs):
        _check_fitted_svc(s)
        if len(s.classes_) != 2:
            raise ValueError(
                f"SVC number {k} of the list has {len(s.classes_)} classes: a list must hold "
                "binary one-vs-rest machines"
            )
        kernels.append(_svc_kernel(s))
        Vs.append(np.asarray(s.support_vectors_, dtype=float))
        coefs.append(np.asarray(s.dual_coef_, dtype=float).ravel())
        bs.append(float(np.ravel(s.intercept_)[0]))
    if any(k != kernels[0] for k in kernels):
        raise ValueError("the SVCs of the list use different kernels; reduce them one at a time")
    if len({V.shape[1] for V in Vs}) != 1:
        raise ValueError("the SVCs of the list were fitted on different numbers of features")
    V, A = _union(Vs, coefs, len(svcs))
    mode = "binary" if len(svcs) == 1 else "ovr"
    return _Expansion(V, A, np.array(bs), kernels[0], mode, None)


def _from_tuple(exp):
    if isinstance(exp, dict):
        try:
            exp = (exp["support_vectors"], exp["coef"], exp["intercept"], exp["kernel"])
        except KeyError as exc:
            raise ValueError(
                f"a kernel expansion dict needs the keys support_vectors, coef, intercept, kernel; missing {exc}"
            ) from None
    if len(exp) != 4:
        raise ValueError(
            "a kernel expansion is (support_vectors, coef, intercept, kernel); got "
            f"{len(exp)} items"
        )
    V, A, b, kernel = exp
    V = check_array(V, dtype=float)
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if A.ndim != 2 or A.shape[1] != len(V):
        raise ValueError(
            f"coef must have shape (n_machines, {len(V)}) for {len(V)} support vectors, got {A.shape}"
        )
    b = np.atleast_1d(np.asarray(b, dtype=float)).ravel()
    if b.shape != (len(A),):
        raise ValueError(f"intercept must have one entry per machine ({len(A)}), got {b.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError("coef and intercept must be finite")
    kernel = _validate_kernel(kernel)
    return _Expansion(V, A, b, kernel, "binary" if len(A) == 1 else "ovr", None)


def _expansion(est):
    if isinstance(est, (tuple, dict)):
        return _from_tuple(est)
    if isinstance(est, list):
        return _from_svc_list(est)
    if hasattr(est, "dual_coef_") or hasattr(est, "fit"):
        return _from_svc(est)
    raise ValueError(
        "expected a fitted SVC, a list of fitted binary SVCs or a kernel expansion "
        f"(support_vectors, coef, intercept, kernel); got {type(est).__name__}"
    )


# ------------------------------------------------------------------------ estimator
class ReducedSetSVC(ClassifierMixin, BaseEstimator):
    r"""An SVM whose kernel expansion is replaced by a much shorter one (reduced set).

    An SVM decides with :math:`f(x) = \langle \Psi, \phi(x) \rangle + b`,
    :math:`\Psi = \sum_i \alpha_i \phi(x_i)` over its support vectors; a reduced set replaces
    :math:`\Psi` by :math:`\Psi' = \sum_{j \le m} \beta_j \phi(z_j)` with m much smaller,
    and the cost of a prediction by m kernel evaluations (Schölkopf et al. 1999, Section V).
    By default (``prefit=False``, ``estimator=None``) it fits ``SVC(kernel='rbf')`` on
    (X, y), then removes expansion vectors one at a time, readjusting the others optimally
    (``method='select'``; Schölkopf et al. 1999, Section V-C), with the budget
    ``n_vectors='auto'``: 10, 20, 40, 80 and 100 % of the support vectors in turn, until the
    reduced machine's training accuracy is within 1 % of the SVC's and its decision values
    reproduce 90 % of the variation of the SVC's. The coefficients minimise
    :math:`\|\Psi - \Psi'\|^2` (``coef_fit='feature-space'``) and each offset is refitted
    on the training set (``threshold='auto'``, the mean rule when training data are given).
    A one-vs-one ``SVC`` shares one budget of vectors among its machines.

    Parameters
    ----------
    estimator : SVC, list of SVC, tuple or dict, default=None
        With ``prefit=False``: an unfitted :class:`sklearn.svm.SVC` to fit on ``(X, y)``
        (``None``: ``SVC(kernel='rbf')``). With ``prefit=True``: a fitted ``SVC`` (binary,
        or multi-class in its one-vs-one layout), a list of fitted binary ``SVC`` (one-vs-
        rest) or a kernel expansion ``(support_vectors, coef, intercept, kernel)``.
    n_vectors : int, float or 'auto', default='auto'
        The budget. Per machine (``shared_vectors`` false): expansion vectors per machine,
        an int :math:`m \ge 1` or a float in ``(0, 1]``, the fraction of each machine's support
        vectors (rounded up). Shared (several machines, ``shared_vectors`` true): the
        number of *distinct* expansion vectors of the whole system, i.e. kernel
        evaluations per test point (a float: fraction of the distinct support vectors of
        all machines). A budget at least the number of support vectors keeps the original
        expansion, with a warning. ``'auto'``: the fractions 0.1, 0.2, 0.4, 0.8 and 1 in
        turn, until the reduced machine's (weighted) training accuracy is within 1 % (or one
        training sample) of the SVC's and its decision values on the training set reproduce
        90 % of the variation of the SVC's (``decision_r2_``); the whole expansion, with a
        warning, when none does. Without training data (``prefit=True``, no X) it is 0.1. An
        explicit budget whose training accuracy falls short of the SVC's by more than 5 % (or
        two samples), or whose decision values reproduce less than half of the SVC's
        variation, warns, naming the better choice. (The default was 0.1, which kept 1 vector of an SVC with
        10 support vectors and a test error of 42 % where the SVC had none.)
    method : {'select', 'select-l1', 'construct', 'burges'}, default='select'
        See the module docstring and :doc:`/user_guide/reduced_sets`. 'construct' and
        'burges' build vectors for the Gaussian kernel, and for the linear kernel, where
        one vector :math:`w = \sum_i \alpha_i x_i` per machine is exact (shared by several
        machines: the best rank-m approximation of their ``w``).
    prefit : bool, default=False
        Whether ``estimator`` is already fitted.
    class_weight : dict, 'balanced' or None, default=None
        Passed to the SVC it fits (``prefit=False``), and multiplied into the sample weights
        of the fits on the training set here (``'balanced'``: from the weighted class
        counts). None: the fitted SVC's own ``class_weight_``.
    threshold : {'auto', 'mean', 'error', 'keep'}, default='auto'
        How the offset of each reduced machine is recomputed on the training set
        (:doc:`/user_guide/reduced_sets`); ``'auto'`` is ``'mean'`` when training data are given, else ``'keep'``.
    shared_vectors : bool or 'auto', default='auto'
        Whether the machines of a multi-machine system (one-vs-one ``SVC``, list of one-vs-
        rest machines, expansion with several rows) share one budget of expansion vectors,
        each machine keeping its own optimal coefficients over the shared set. ``'auto'``:
        shared for a one-vs-one ``SVC`` (its machines already share one pool of support
        vectors), per machine otherwise. No effect on a binary machine.
    l1_weights : {'uniform', 'inverse'}, default='inverse'
        Weights :math:`c_i` of the shrinkage penalty (``'inverse'``:
        :math:`\overline{|\alpha|} / |\alpha_i|`).
    preimage_max_iter : int, default=300
        Iterations per pre-image: of the fixed-point iteration (``'construct'``) or of
        L-BFGS (``'burges'``).
    preimage_tol : float > 0, default=1e-6
        Step tolerance of the fixed-point pre-image iteration in kernel widths
        (``'construct'``, see :func:`kpm.denoising.preimage.gaussian_fixed_point`);
        construction stops early if :math:`\|\Psi - \Psi'\|^2 \le 10^{-12} \|\Psi\|^2`.
    n_restarts : int, default=3
        Fixed-point starts per constructed vector (``'construct'``).
    gradient_maxiter : int, default=0
        L-BFGS iterations of the final joint descent over ``(z, beta)`` of all machines
        (``'construct'`` and ``'burges'``, whose second phase it is; 0: none).
    data_fit_maxiter : int, default=0
        L-BFGS iterations of a final joint descent over the vectors, coefficients and
        offsets of all machines that fits the original decision values on the training
        set ``X`` by least squares (Gaussian kernel; needs ``X``; 0: none). Beyond
        Schölkopf et al. (1999), whose closing remark it follows: it approximates ``f``
        where the data are rather than ``Psi`` in feature space. Every machine keeps the
        vectors it uses. Early stopping on a held-out ``validation_fraction`` of ``X``.
    validation_fraction : float, default=0.2
        Fraction of ``X`` held out by ``data_fit_maxiter`` to choose the iterate (lowest
        held-out squared error, checked every 10 iterations); 0: the last iterate.
    coef_fit : {'feature-space', 'train'}, default='feature-space'
        How the final coefficients over the reduced vectors are chosen: ``'feature-space'``
        minimises :math:`\|\Psi - \Psi'\|^2` (the paper's Proposition); ``'train'`` fits, machine
        by machine over its own reduced vectors, the original decision values on the
        training set ``X`` by least squares (offset included), i.e. approximates ``f``
        where the data are (the closing remark of Schölkopf et al. 1999; not in their
        experiments). Needs ``X``.
    random_state : int, RandomState or None, default=None
        Seeds the extra fixed-point starts and Burges' random starts.

    Attributes
    ----------
    estimator_ : object
        The (fitted) input machine.
    classes_ : ndarray
        Class labels.
    kernel_ : kpm.kernels.Kernel
        The kernel of the expansion.
    reduced_vectors_ : ndarray of shape (n_expansion_vectors_, n_features)
        All expansion vectors (machines share those they have in common).
    reduced_coef_ : ndarray of shape (n_machines, n_expansion_vectors_)
        Coefficients ``beta`` (zero where a machine does not use a vector).
    intercept_ : ndarray of shape (n_machines,)
        Recomputed offsets.
    original_intercept_ : ndarray of shape (n_machines,)
    n_vectors_ : ndarray of int, shape (n_machines,)
        Expansion vectors per machine after reduction.
    original_n_vectors_ : ndarray of int, shape (n_machines,)
        Support vectors per machine before reduction.
    n_expansion_vectors_ : int
        Distinct vectors, i.e. kernel evaluations per test point.
    shared_vectors_ : bool
        Whether the budget was shared by the machines.
    approximation_error_ : ndarray of shape (n_machines,)
        :math:`\|\Psi - \Psi'\|^2` per machine, from kernels.
    original_norm_sq_ : ndarray of shape (n_machines,)
        :math:`\|\Psi\|^2` per machine (``approximation_error_ / original_norm_sq_`` is relative).
    original_accuracy_, reduced_accuracy_ : float or None
        (Weighted) training accuracy of the SVC and of the reduced machine (None without
        training data).
    decision_r2_ : float
        The share of the variation of the SVC's decision values on the training set that the
        reduced machine's reproduce (:math:`1 - \sum (f - g)^2 / \sum (f - \bar f)^2`, weighted,
        over all machines; with training data only).
    n_vectors_fraction_ : float or None
        The fraction ``n_vectors='auto'`` settled on (None for an explicit budget).
    n_features_in_ : int

    See Also
    --------
    reduce_svc : The same for an already fitted SVC, in one call.
    sklearn.svm.SVC : The machine whose expansion is shortened.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.svm import SVC
    >>> from kpm import ReducedSetSVC
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> svc = SVC(kernel="rbf", gamma=2.0).fit(X, y)
    >>> int(svc.n_support_.sum())
    50
    >>> small = ReducedSetSVC(svc, n_vectors=10, prefit=True).fit(X, y)
    >>> small.n_expansion_vectors_    # kernel evaluations per prediction
    10
    >>> X_test, y_test = make_moons(1000, noise=0.2, random_state=1)
    >>> print(f"{svc.score(X_test, y_test):.3f} {small.score(X_test, y_test):.3f}")
    0.960 0.957
    """

    _parameter_constraints = {
        "n_vectors": [Integer(1), Real(0, 1, "right"), Options("auto")],
        "method": [Options(*METHODS)],
        "prefit": [Boolean()],
        "threshold": [Options(*_THRESHOLDS)],
        "shared_vectors": [Boolean(), Options("auto")],
        "l1_weights": [Options("uniform", "inverse")],
        "preimage_max_iter": [Integer(1)],
        "preimage_tol": [Real(0, None, "neither")],
        "n_restarts": [Integer(1)],
        "gradient_maxiter": [Integer(0)],
        "data_fit_maxiter": [Integer(0)],
        "validation_fraction": [Real(0, 1, "left")],
        "coef_fit": [Options(*_COEF_FITS)],
        "class_weight": [Options("balanced"), InstanceOf(dict, "a dict {class: weight}"), None],
        "random_state": [RandomState()],
    }

    def __init__(
        self,
        estimator=None,
        n_vectors="auto",
        method="select",
        *,
        prefit=False,
        class_weight=None,
        threshold="auto",
        shared_vectors="auto",
        l1_weights="inverse",
        preimage_max_iter=300,
        preimage_tol=1e-6,
        n_restarts=3,
        gradient_maxiter=0,
        data_fit_maxiter=0,
        validation_fraction=0.2,
        coef_fit="feature-space",
        random_state=None,
    ):
        self.estimator = estimator
        self.n_vectors = n_vectors
        self.method = method
        self.prefit = prefit
        self.class_weight = class_weight
        self.threshold = threshold
        self.shared_vectors = shared_vectors
        self.l1_weights = l1_weights
        self.preimage_max_iter = preimage_max_iter
        self.preimage_tol = preimage_tol
        self.n_restarts = n_restarts
        self.gradient_maxiter = gradient_maxiter
        self.data_fit_maxiter = data_fit_maxiter
        self.validation_fraction = validation_fraction
        self.coef_fit = coef_fit
        self.random_state = random_state

    def _target(self, n_sv):
        """The budget of a machine with ``n_sv`` support vectors (``n_vectors`` validated)."""
        nv = self._n_vectors
        if isinstance(nv, int):
            return nv
        return max(1, int(np.ceil(nv * n_sv - 1e-9)))

    # ------------------------------------------------------------------- fit
    def fit(self, X=None, y=None, sample_weight=None):
        """Reduce the machine's expansion (fitting the SVC first unless ``prefit``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data: used to fit the SVC (``prefit=False``), to recompute the
            thresholds, and to compare the reduced machine with the SVC. May be omitted
            with ``prefit=True`` and ``threshold`` 'keep'/'auto'.
        y : array-like of shape (n_samples,)
            Labels.
        sample_weight : array-like of shape (n_samples,), optional
            Passed to the SVC's ``fit`` (``prefit=False``) and weighting every fit on the
            training set here: the thresholds, ``coef_fit='train'``, ``data_fit_maxiter``
            and the accuracies that ``n_vectors='auto'`` compares (times the class weights
            of the SVC, or ``class_weight``).

        Returns
        -------
        self
        """
        params = validate_params(self)
        n_vectors = params["n_vectors"]
        if self.prefit:
            if self.estimator is None:
                raise ValueError("prefit=True needs a fitted estimator (SVC, list of SVC or expansion)")
            est = self.estimator
            exp = _expansion(est)
            if X is not None:
                X = validate_data(self, X, dtype=float)
                if X.shape[1] != exp.V.shape[1]:
                    raise ValueError(
                        f"X has {X.shape[1]} features but the machine was fitted on {exp.V.shape[1]}"
                    )
                if y is None:
                    raise ValueError("y is required together with X (to recompute the thresholds)")
                y = np.asarray(y)
                if y.shape != (len(X),):
                    raise ValueError(f"y must have shape ({len(X)},), got {y.shape}")
                check_classification_targets(y)
            else:
                if sample_weight is not None:
                    raise ValueError("sample_weight weights the training set X, y: pass them too")
                self.n_features_in_ = exp.V.shape[1]
            weight = None if X is None else check_sample_weight(sample_weight, len(X), who=type(self).__name__)
        else:
            from sklearn.svm import SVC

            if X is None:
                raise ValueError("fit needs X and y (or prefit=True with a fitted machine)")
            if y is None:
                raise ValueError(
                    "ReducedSetSVC requires y to be passed, but the target y is None"
                )
            X, y = validate_data(self, X, y, dtype=float)
            check_classification_targets(y)
            if len(np.unique(y)) < 2:
                raise ValueError(
                    f"the training labels contain only one class ({np.unique(y)[0]!r}); an SVM "
                    "needs at least two classes"
                )
            weight = check_sample_weight(sample_weight, len(X), who=type(self).__name__)
            base = SVC(kernel="rbf") if self.estimator is None else self.estimator
            if not hasattr(base, "fit"):
                raise ValueError("with prefit=False, estimator must be an unfitted SVC (or None)")
            base = clone(base)
            if self.class_weight is not None and "class_weight" in base.get_params():
                base.set_params(class_weight=self.class_weight)
            est = base.fit(X, y) if sample_weight is None else base.fit(X, y, sample_weight=weight)
            exp = _expansion(est)
        self.estimator_ = est
        self._set_classes(exp, y)
        if weight is not None:
            weight = weight * self._class_weights(est, y, weight)

        threshold = self.threshold
        if threshold == "auto":
            threshold = "mean" if X is not None else "keep"
        if threshold != "keep" and X is None:
            raise ValueError(f"threshold={threshold!r} needs the training set X, y")
        if self.method in ("construct", "burges") and exp.kernel.name not in ("rbf", "linear"):
            raise ValueError(
                f"method={self.method!r} constructs new vectors for the Gaussian (RBF) kernel, and "
                f"exactly for the linear one; this machine's kernel is {exp.kernel.name!r}: use "
                "method='select' or 'select-l1'"
            )

        if self.coef_fit == "train" and X is None:
            raise ValueError("coef_fit='train' fits the coefficients on the training set X, y")
        if self.data_fit_maxiter > 0:
            if X is None:
                raise ValueError("data_fit_maxiter > 0 fits the decision values on the training set X, y")
            if exp.kernel.name != "rbf":
                raise ValueError(
                    f"data_fit_maxiter > 0 moves the vectors by the Gaussian kernel's gradient; this "
                    f"machine's kernel is {exp.kernel.name!r}"
                )
        K_sv = exp.kernel(exp.V)
        self.original_norm_sq_ = np.einsum("pi,ij,pj->p", exp.A, K_sv, exp.A)
        warn_if_degenerate_kernel(K_sv, "ReducedSetSVC: the kernel matrix of the support vectors")
        self._expansion = exp
        if X is None:
            self._n_vectors = AUTO_FRACTIONS[0] if n_vectors == "auto" else n_vectors
            self._fit_budget(exp, X, y, weight, threshold)
            self.original_accuracy_ = None
            self._warn_if_linear_selection(exp)
            return self
        self._original_raw = exp.kernel.matvec(X, exp.A.T, exp.V) + exp.b
        original = self._labels(self._original_raw)
        self.original_accuracy_ = float(weight @ (original == y) / weight.sum())
        if n_vectors == "auto":
            self._fit_auto(exp, X, y, weight, threshold)
        else:
            self._n_vectors = n_vectors
            self._fit_budget(exp, X, y, weight, threshold)
            self._warn_if_worse(X, y, weight)
        del self._original_raw
        self._warn_if_linear_selection(exp)
        warn_if_degenerate_model(self._labels(self._raw_validated(X)), y, self.classes_, "ReducedSetSVC")
        return self

    def _warn_if_linear_selection(self, exp):
        """Warn when vectors were selected for a linear SVC and do not reproduce it: its
        expansion is the weight vector itself, so ``method='construct'`` reduces it exactly,
        to one vector per machine -- fewer vectors and no error."""
        if exp.kernel.name != "linear" or self.method not in ("select", "select-l1"):
            return
        rel = float(np.max(self.approximation_error_ / np.maximum(self.original_norm_sq_, 1e-300)))
        if rel > LINEAR_EXACT_RTOL:
            warnings.warn(
                f"ReducedSetSVC with method={self.method!r} on a linear SVC keeps "
                f"{self.n_expansion_vectors_} of its vectors and loses {rel:.1%} of "
                "||Psi||^2 (the squared norm of its weight vector); a linear SVC reduces exactly "
                "to one vector per machine, its weight vector: use method='construct'",
                UserWarning,
                stacklevel=3,
            )

    def _class_weights(self, est, y, weight):
        """Per-sample class weights of the fits on the training set: ``class_weight`` when
        given, else the fitted SVC's ``class_weight_`` (ones for an expansion)."""
        if self.class_weight is not None:
            cw = self.class_weight
            if isinstance(cw, dict):
                unknown = [c for c in cw if c not in self.classes_]
                if unknown:
                    raise ValueError(
                        f"class_weight names class(es) {unknown} not among the classes "
                        f"{self.classes_.tolist()}"
                    )
            present = np.unique(y)
            per = compute_class_weight(cw, classes=present, y=y, sample_weight=weight)
            return per[np.searchsorted(present, y)]
        svc_cw = getattr(est, "class_weight_", None)
        if svc_cw is not None and len(svc_cw) == len(self.classes_):
            return np.asarray(svc_cw, dtype=float)[np.searchsorted(self.classes_, y)]
        return np.ones(len(y))

    def _fit_budget(self, exp, X, y, weight, threshold):
        """Reduce at the budget ``self._n_vectors``, then the data fits and the offsets."""
        V_red, B_red = self._reduce(exp)
        if self.data_fit_maxiter > 0:
            V_red, B_red = _data_fit(
                exp, X, V_red, B_red, maxiter=self.data_fit_maxiter,
                validation_fraction=self.validation_fraction,
                rng=check_random_state(self.random_state), weight=weight,
            )
        if self.coef_fit == "train":
            B_red = _fit_coef_on_data(exp, X, V_red, B_red, weight)
        self.kernel_ = exp.kernel
        self.reduced_vectors_ = V_red
        self.reduced_coef_ = B_red
        self.original_intercept_ = exp.b.copy()
        self.n_vectors_ = np.count_nonzero(B_red, axis=1)
        self.original_n_vectors_ = np.count_nonzero(exp.A, axis=1)
        self.n_expansion_vectors_ = int(len(V_red))
        self.shared_vectors_ = self._shared(exp)
        self.approximation_error_ = np.atleast_1d(
            expansion_error(exp.V, exp.A, V_red, B_red, exp.kernel)
        )
        self.intercept_ = self._thresholds(exp, X, y, threshold, weight)

    def _accuracy(self, X, y, weight):
        """The (weighted) training accuracy and the share of the variation of the SVC's
        decision values on the training set that the reduced machine reproduces (R^2)."""
        raw = self._raw_validated(X)
        acc = float(weight @ (self._labels(raw) == y) / weight.sum())
        f = self._original_raw
        spread = weight @ np.sum((f - weight @ f / weight.sum()) ** 2, axis=1)
        miss = weight @ np.sum((f - raw) ** 2, axis=1)
        r2 = 1.0 - float(miss / spread) if spread > 0 else (1.0 if miss == 0 else -np.inf)
        return acc, r2

    def _fit_auto(self, exp, X, y, weight, threshold):
        """``n_vectors='auto'``: the first budget of :data:`AUTO_FRACTIONS` whose training
        accuracy is within :func:`auto_tolerance` of the SVC's and whose decision values
        reproduce at least :data:`AUTO_MIN_R2` of the SVC's variation on the training set."""
        tol = auto_tolerance(len(y))
        last = None
        for fraction in AUTO_FRACTIONS:
            self._n_vectors = fraction
            sizes = self._budget_sizes(exp)
            if sizes == last:
                continue
            last = sizes
            with warnings.catch_warnings():  # the last budget keeps the whole expansion
                warnings.filterwarnings("ignore", message="n_vectors=.* is not smaller than")
                self._fit_budget(exp, X, y, weight, threshold)
            self.reduced_accuracy_, self.decision_r2_ = self._accuracy(X, y, weight)
            if self.reduced_accuracy_ >= self.original_accuracy_ - tol and self.decision_r2_ >= AUTO_MIN_R2:
                break
        self.n_vectors_fraction_ = self._n_vectors
        if np.all(self.n_vectors_ >= self.original_n_vectors_) and self.n_expansion_vectors_ > 1:
            warnings.warn(
                f"ReducedSetSVC(n_vectors='auto'): no budget below the {int(np.max(self.original_n_vectors_))} "
                f"support vectors matched the SVC on its training data (accuracy {self.original_accuracy_:.3f}, "
                f"{AUTO_MIN_R2:.0%} of the variation of its decision values); the original expansion is "
                "kept: use the SVC itself",
                UserWarning,
                stacklevel=3,
            )

    def _budget_sizes(self, exp):
        """The budgets ``self._n_vectors`` gives: per machine, or the shared one."""
        if self._shared(exp):
            return (self._target(int(np.count_nonzero(np.any(exp.A != 0, axis=0)))),)
        return tuple(int(self._target(n)) for n in np.count_nonzero(exp.A, axis=1))

    def _warn_if_worse(self, X, y, weight):
        """Warn when an explicit budget is clearly worse on the training set than the SVC it
        reduces -- less accurate by more than :func:`worse_tolerance`, or reproducing less than
        :data:`WORSE_R2` of the variation of its decision values -- naming the better choice."""
        self.reduced_accuracy_, self.decision_r2_ = self._accuracy(X, y, weight)
        self.n_vectors_fraction_ = None
        gap = self.original_accuracy_ - self.reduced_accuracy_
        if gap > worse_tolerance(len(y)) or self.decision_r2_ < WORSE_R2:
            what = (f"less accurate on its training data than the SVC it reduces "
                    f"({self.reduced_accuracy_:.3f} against {self.original_accuracy_:.3f}"
                    if gap > worse_tolerance(len(y)) else
                    f"far from the SVC it reduces on its training data (its decision values "
                    f"reproduce {max(self.decision_r2_, 0.0):.0%} of the SVC's variation")
            warnings.warn(
                f"ReducedSetSVC with n_vectors={self.n_vectors!r} ({self.n_expansion_vectors_} "
                f"expansion vector(s)) is clearly {what}, {int(np.max(self.original_n_vectors_))} "
                "support vectors): use a larger n_vectors (n_vectors='auto' takes the smallest budget "
                "that matches the SVC), or the SVC itself",
                UserWarning,
                stacklevel=3,
            )

    def refit_threshold(self, X, y, threshold="mean", sample_weight=None):
        """Recompute the offsets of the reduced machine(s) on ``(X, y)``, in place.

        Lets one compare threshold rules without repeating the reduction.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        threshold : {'mean', 'error', 'keep'}
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        check_is_fitted(self, "reduced_coef_")
        threshold = check_option(threshold, "threshold", ("mean", "error", "keep"))
        X = validate_data(self, X, dtype=float, reset=False)
        y = np.asarray(y)
        if y.shape != (len(X),):
            raise ValueError(f"y must have shape ({len(X)},), got {y.shape}")
        if not np.all(np.isin(y, self.classes_)):
            raise ValueError("y holds labels that are not among classes_")
        weight = None if sample_weight is None else check_sample_weight(sample_weight, len(X),
                                                                        who=type(self).__name__)
        self.intercept_ = self._thresholds(self._expansion, X, y, threshold, weight)
        return self

    def refit_coefficients(self, X, y, coef_fit="train", threshold="mean", sample_weight=None):
        """Recompute the coefficients over the reduced vectors, in place (see ``coef_fit``),
        then the offsets (``threshold``); the vectors are kept.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        coef_fit : {'feature-space', 'train'}
        threshold : {'mean', 'error', 'keep'}
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        check_is_fitted(self, "reduced_coef_")
        coef_fit = check_option(coef_fit, "coef_fit", _COEF_FITS)
        X = validate_data(self, X, dtype=float, reset=False)
        weight = None if sample_weight is None else check_sample_weight(sample_weight, len(X),
                                                                        who=type(self).__name__)
        exp, V, used = self._expansion, self.reduced_vectors_, self.reduced_coef_ != 0
        if coef_fit == "train":
            B = _fit_coef_on_data(exp, X, V, self.reduced_coef_, weight)
        else:
            B = np.zeros_like(self.reduced_coef_)
            for p in range(len(B)):
                cols = np.flatnonzero(used[p])
                B[p, cols] = optimal_coefficients(V[cols], exp.V, exp.A[p], exp.kernel)
        self.reduced_coef_ = B
        self.approximation_error_ = np.atleast_1d(expansion_error(exp.V, exp.A, V, B, exp.kernel))
        return self.refit_threshold(X, y, threshold, sample_weight)

    def _set_classes(self, exp, y):
        self._mode, self._pairs, self._ovr_shape = exp.mode, exp.pairs, exp.ovr_shape
        self._break_ties = exp.break_ties
        M = len(exp.A)
        if exp.classes is not None:
            self.classes_ = exp.classes
            if y is not None and not np.all(np.isin(np.unique(y), exp.classes)):
                raise ValueError(
                    f"y holds labels {np.setdiff1d(np.unique(y), exp.classes)} the SVC was not trained on"
                )
            return
        if y is not None:
            classes = np.unique(y)
            want = 2 if M == 1 else M
            if len(classes) != want:
                raise ValueError(
                    f"the expansion has {M} machine(s) ({'binary' if M == 1 else 'one-vs-rest'}), "
                    f"which needs {want} classes, but y has {len(classes)}"
                )
            self.classes_ = classes
        else:
            self.classes_ = np.array([-1, 1]) if M == 1 else np.arange(M)

    def _machine_targets(self, exp):
        """Vectors to keep per machine, validated against its number of support vectors."""
        n_sv = np.count_nonzero(exp.A, axis=1)
        targets = np.array([self._target(n) for n in n_sv])
        full = np.flatnonzero(targets >= n_sv)
        if len(full):
            warnings.warn(
                f"n_vectors={self.n_vectors} is not smaller than the number of support vectors "
                f"of machine(s) {full.tolist()} ({n_sv[full].tolist()}): their original "
                "expansion is kept",
                UserWarning,
                stacklevel=4,
            )
        return np.minimum(targets, n_sv)

    def _shared(self, exp):
        if len(exp.A) == 1:
            return False
        if self.shared_vectors == "auto":
            return exp.mode == "ovo"
        return bool(self.shared_vectors)

    def _reduce(self, exp):
        if self.method in ("construct", "burges") and exp.kernel.name == "linear":
            shared = self._shared(exp)
            m = self._target(int(np.count_nonzero(np.any(exp.A != 0, axis=0)))) if shared else 1
            return _construct_linear(exp, np.ones(len(exp.A), int), shared, m)
        if self._shared(exp):
            return self._reduce_shared(exp)
        return self._reduce_per_machine(exp)

    def _reduce_shared(self, exp):
        """One budget of distinct vectors for all machines, optimal coefficients each."""
        kernel = exp.kernel
        used = np.flatnonzero(np.any(exp.A != 0, axis=0))
        nv = self._n_vectors
        m = self._target(len(used))
        if m >= len(used):
            warnings.warn(
                f"n_vectors={nv} is not smaller than the {len(used)} distinct support "
                "vectors: the original expansion is kept",
                UserWarning,
                stacklevel=4,
            )
            return exp.V[used], exp.A[:, used]
        Xs, A = exp.V[used], exp.A[:, used]
        if self.method == "select":
            keep, _ = _select_path(_unit_scale(kernel(Xs)), A, m)
            Z = Xs[keep]
        elif self.method == "select-l1":
            Z = Xs[_select_l1_shared(_unit_scale(kernel(Xs)), A, m, self.l1_weights)]
        else:
            Z, B = _construct_shared(
                kernel, Xs, A, m, solver="burges" if self.method == "burges" else "fixed-point",
                max_iter=self.preimage_max_iter, tol=self.preimage_tol, n_restarts=self.n_restarts,
                rng=check_random_state(self.random_state),
            )
            if self.gradient_maxiter > 0:
                Z, B = _joint_gradient(kernel, Xs, A, Z, B, self.gradient_maxiter)
            return Z, np.atleast_2d(B)
        return Z, np.atleast_2d(optimal_coefficients(Z, Xs, A, kernel))

    def _reduce_per_machine(self, exp):
        M, N = exp.A.shape
        kernel = exp.kernel
        targets = self._machine_targets(exp)
        rng = check_random_state(self.random_state)
        if self.method in ("select", "select-l1"):
            K_all = _unit_scale(kernel(exp.V))
            B_full = np.zeros((M, N))
            for p in range(M):
                sup = np.flatnonzero(exp.A[p])
                alpha = exp.A[p, sup]
                m = targets[p]
                if m >= len(sup):
                    B_full[p, sup] = alpha
                    continue
                K = K_all[np.ix_(sup, sup)]
                if self.method == "select":
                    keep, beta = _select_path(K, alpha, m)
                else:
                    keep = _select_l1_single(K, alpha, m, self.l1_weights)
                    beta = _solve_psd(K[np.ix_(keep, keep)], K[keep] @ alpha)
                B_full[p, sup[keep]] = beta
            used = np.flatnonzero(np.any(B_full != 0, axis=0))
            return exp.V[used], B_full[:, used]

        # construct / burges: new vectors per machine
        Zs, Bs = [], []
        for p in range(M):
            sup = np.flatnonzero(exp.A[p])
            Xs, alpha = exp.V[sup], exp.A[p, sup]
            m = targets[p]
            if m >= len(sup):
                Z, beta = Xs, alpha
            else:
                if self.method == "burges":
                    Z, beta = _construct_shared(
                        kernel, Xs, alpha[None, :], m, solver="burges",
                        max_iter=self.preimage_max_iter, tol=self.preimage_tol,
                        n_restarts=self.n_restarts, rng=rng,
                    )
                    beta = beta[0]
                else:
                    Z, beta = _construct_single(
                        kernel, Xs, alpha, m, max_iter=self.preimage_max_iter, tol=self.preimage_tol,
                        n_restarts=self.n_restarts, rng=rng,
                    )
                if self.gradient_maxiter > 0:
                    Z, beta = _joint_gradient(kernel, Xs, alpha, Z, beta, self.gradient_maxiter)
            Zs.append(Z)
            Bs.append(beta)
        V = np.vstack(Zs)
        B = np.zeros((M, len(V)))
        off = 0
        for p, beta in enumerate(Bs):
            B[p, off : off + len(beta)] = beta
            off += len(beta)
        return V, B

    # -------------------------------------------------------------- thresholds
    def _machine_labels(self, y):
        """Per machine: (sample mask, +1/-1 labels of the masked samples)."""
        out = []
        if self._mode == "binary":
            out.append((np.ones(len(y), bool), np.where(y == self.classes_[1], 1, -1)))
        elif self._mode == "ovr":
            for c in self.classes_:
                out.append((np.ones(len(y), bool), np.where(y == c, 1, -1)))
        else:
            for i, j in self._pairs:
                mask = (y == self.classes_[i]) | (y == self.classes_[j])
                out.append((mask, np.where(y[mask] == self.classes_[i], 1, -1)))
        return out

    def _thresholds(self, exp, X, y, threshold, weight=None):
        if threshold == "keep":
            return exp.b.copy()
        w = np.ones(len(X)) if weight is None else weight
        f = exp.kernel.matvec(X, exp.A.T, exp.V) + exp.b  # original decision values
        g = self.kernel_.matvec(X, self.reduced_coef_.T, self.reduced_vectors_)
        b = np.empty(len(exp.b))
        for p, (mask, lab) in enumerate(self._machine_labels(np.asarray(y))):
            if not mask.any() or not w[mask].sum() > 0:
                b[p] = exp.b[p]
                continue
            fp, gp, wp = f[mask, p], g[mask, p], w[mask]
            b_mean = float(wp @ (fp - gp) / wp.sum())
            b[p] = b_mean if threshold == "mean" else _min_error_offset(gp, lab, b_mean, wp)
        return b

    # --------------------------------------------------------------- predict
    def _raw(self, X):
        check_is_fitted(self, "reduced_coef_")
        return self._raw_validated(validate_data(self, X, dtype=float, reset=False))

    def _raw_validated(self, X):
        """Raw decision values (n, n_machines) of an X already validated: the training set
        inside :meth:`fit`, which must not pass the public validation again (an ndarray
        there would be checked against the feature names of a DataFrame given to fit)."""
        return self.kernel_.matvec(X, self.reduced_coef_.T, self.reduced_vectors_) + self.intercept_

    def decision_function(self, X):
        """Decision values of the reduced machine(s).

        Returns
        -------
        ndarray of shape (n_samples,) for a binary machine, (n_samples, n_classes) for
        one-vs-rest (and for a one-vs-one SVC with ``decision_function_shape='ovr'``, with
        scikit-learn's vote-plus-confidence transform), else (n_samples, n_pairs).
        """
        D = self._raw(X)
        if self._mode == "binary":
            return D[:, 0]
        if self._mode == "ovo" and self._ovr_shape:
            return _ovo_to_ovr(D, len(self.classes_))
        return D

    def predict(self, X):
        """Class labels, by scikit-learn's rules for the input machine.

        One-vs-one machines vote like libsvm (a positive decision value is a vote for the
        first class of the pair; ties go to the class listed first in ``classes_``), or,
        for an ``SVC`` with ``break_ties=True`` and ``decision_function_shape='ovr'``,
        the argmax of :meth:`decision_function`; one-vs-rest: argmax of the decision
        values; binary: ``classes_[1]`` where the decision value is positive.
        """
        check_is_fitted(self, "reduced_coef_")
        return self._labels(self._raw(X))

    def _labels(self, D):
        """Class labels from raw decision values ``D`` (n, n_machines), by the rules of
        :meth:`predict` (also applied to the original expansion)."""
        if self._mode == "ovo" and self._break_ties and not self._ovr_shape:
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if self._mode == "ovo" and self._break_ties and self._ovr_shape:
            return self.classes_[np.argmax(_ovo_to_ovr(D, len(self.classes_)), axis=1)]
        if self._mode == "binary":
            return self.classes_[(D[:, 0] > 0).astype(int)]
        if self._mode == "ovr":
            return self.classes_[np.argmax(D, axis=1)]
        votes = np.zeros((len(D), len(self.classes_)), dtype=int)
        for p, (i, j) in enumerate(self._pairs):
            pos = D[:, p] > 0
            votes[pos, i] += 1
            votes[~pos, j] += 1
        return self.classes_[np.argmax(votes, axis=1)]


def _ovo_to_ovr(D, n_classes):
    """One-vs-one decision values ``D`` (columns: pairs ``(i, j)``, ``i < j``, in libsvm's
    order) to one column per class, by scikit-learn's rule for ``SVC`` with
    ``decision_function_shape='ovr'``: the votes of each class (pair ``(i, j)`` votes for
    ``i`` when its value is ``>= 0``, else for ``j``) plus its summed confidence ``s``
    (``+D`` for ``i``, ``-D`` for ``j``) squashed to ``s / (3 (|s| + 1))``, which lies in
    ``(-1/3, 1/3)`` and so only orders classes with equal votes."""
    votes = np.zeros((len(D), n_classes))
    conf = np.zeros((len(D), n_classes))
    p = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            first = D[:, p] >= 0
            votes[first, i] += 1
            votes[~first, j] += 1
            conf[:, i] += D[:, p]
            conf[:, j] -= D[:, p]
            p += 1
    return votes + conf / (3 * (np.abs(conf) + 1))


def _fit_coef_on_data(exp, X, V, B, weight=None):
    """(Weighted) least-squares fit of each machine's original decision values on ``X`` over
    the reduced vectors it uses (with a free offset); machines using the same vectors share
    one solve."""
    F = exp.kernel.matvec(X, exp.A.T, exp.V)  # (n, M), without offsets
    Kx = exp.kernel(X, V)
    sw = np.ones(len(X)) if weight is None else np.sqrt(np.asarray(weight, dtype=float))
    out = np.zeros_like(B)
    used = B != 0
    groups = {}
    for p in range(len(B)):
        groups.setdefault(used[p].tobytes(), []).append(p)
    for rows in groups.values():
        cols = np.flatnonzero(used[rows[0]])
        D = np.hstack([Kx[:, cols], np.ones((len(X), 1))]) * sw[:, None]
        W = linalg.lstsq(D, F[:, rows] * sw[:, None], check_finite=False)[0]
        out[np.ix_(rows, cols)] = W[:-1].T
    return out


def _min_error_offset(g, lab, b_ref, weight=None):
    """Offset b minimising the (weighted) errors of sign(g + b) against ``lab``; ties: closest
    to b_ref."""
    w = np.ones(len(g)) if weight is None else np.asarray(weight, dtype=float)
    order = np.argsort(g)
    gs, ls, ws = g[order], lab[order], w[order]
    # threshold t = -b between consecutive sorted values: predict +1 when g > t
    # errors(t) = weight of (positives with g <= t) + weight of (negatives with g > t)
    pos_le = np.concatenate([[0.0], np.cumsum(ws * (ls == 1))])
    neg_gt = np.concatenate([[0.0], np.cumsum((ws * (ls == -1))[::-1])])[::-1]
    errors = pos_le + neg_gt  # index k: t between gs[k-1] and gs[k]
    lo = np.concatenate([[-np.inf], gs])
    hi = np.concatenate([gs, [np.inf]])
    best = errors <= errors.min() + 1e-12 * max(float(w.sum()), 1.0)
    t_ref = -b_ref
    # distance of t_ref to each optimal interval [lo, hi)
    dist = np.where(t_ref < lo, lo - t_ref, np.where(t_ref >= hi, t_ref - hi, 0.0))
    dist[~best] = np.inf
    k = int(np.argmin(dist))
    if dist[k] == 0.0:
        return b_ref
    # inside the interval, half a gap away from its end nearer to t_ref (or its midpoint)
    if np.isfinite(lo[k]) and np.isfinite(hi[k]):
        t = 0.5 * (lo[k] + hi[k])
    elif np.isfinite(lo[k]):
        t = lo[k] + max(abs(t_ref - lo[k]), 1e-12)
    else:
        t = hi[k] - max(abs(hi[k] - t_ref), 1e-12)
    return -float(t)


def reduce_svc(svc, n_vectors, method="select", *, X=None, y=None, sample_weight=None, **params):
    """Reduced-set approximation of a fitted SVM.

    :class:`ReducedSetSVC` with ``prefit=True`` on the fitted ``svc``: by default
    (``method='select'``) its expansion vectors are removed one at a time, the others
    readjusted optimally (Schölkopf et al. 1999, Section V-C), down to ``n_vectors``; the
    offsets are refitted when ``X`` and ``y`` are given, else kept.

    Parameters
    ----------
    svc : SVC, list of SVC, tuple or dict
        A fitted :class:`sklearn.svm.SVC`, a list of fitted binary ``SVC`` (one-vs-rest) or
        a kernel expansion ``(support_vectors, coef, intercept, kernel)``.
    n_vectors : int, float or 'auto'
        Expansion vectors per machine (see :class:`ReducedSetSVC`).
    method : {'select', 'select-l1', 'construct', 'burges'}
    X, y : array-like, optional
        The training set, to recompute the thresholds (without it the original offsets
        are kept).
    sample_weight : array-like, optional
        Weights of the training set's samples (see :meth:`ReducedSetSVC.fit`).
    **params
        Further :class:`ReducedSetSVC` parameters.

    Returns
    -------
    ReducedSetSVC
        Fitted, with ``decision_function``, ``predict`` and ``score``.

    See Also
    --------
    ReducedSetSVC : The estimator it returns (also fits the SVC itself).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.svm import SVC
    >>> from kpm import reduce_svc
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> svc = SVC(kernel="rbf", gamma=2.0).fit(X, y)
    >>> small = reduce_svc(svc, 10, method="construct", X=X, y=y, random_state=0)
    >>> small.n_expansion_vectors_, int(svc.n_support_.sum())
    (10, 50)
    >>> rel = small.approximation_error_ / small.original_norm_sq_  # ||Psi - Psi'||^2 / ||Psi||^2
    >>> print(rel.round(3))
    [0.086]
    """
    if svc is None:
        raise ValueError("reduce_svc needs a fitted SVC, a list of SVCs or a kernel expansion")
    return ReducedSetSVC(svc, n_vectors=n_vectors, method=method, prefit=True, **params).fit(
        X, y, sample_weight=sample_weight)
