"""Reduced-set construction: new expansion vectors (Schölkopf et al. 1999, §V-B; Burges 1996).

For the Gaussian kernel each new vector ``z`` is the pre-image of the current residual
``Psi - Psi'``: by the fixed-point iteration (:func:`construct_single` for one machine,
:func:`joint_fixed_point` inside :func:`construct_shared` for machines sharing their
vectors) or by Burges' (1996) quasi-Newton descent from random starts
(:func:`burges_one_term`); all coefficients are recomputed optimally after each new vector,
and :func:`joint_gradient` is the optional joint descent over ``(z, beta)`` of all machines
(Burges' second phase). For the linear kernel :func:`construct_linear` is exact.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from kpm.kernels import Kernel
from kpm.reduced_set.expansion import expansion_error, optimal_coefficients, solve_psd
from kpm.spectral.basis import RANK_RTOL

__all__ = [
    "LOG_TINY",
    "burges_one_term",
    "construct_linear",
    "construct_shared",
    "construct_single",
    "joint_fixed_point",
    "joint_gradient",
    "joint_objective",
]


def construct_single(kernel, Xs, alpha, m, *, max_iter, tol, n_restarts, rng):
    """Iterated one-term pre-images of the residual, optimal ``beta`` after each step."""
    from kpm.preimage.solvers import gaussian_fixed_point

    gamma = kernel.gamma
    K_ss = kernel(Xs)
    Ka = K_ss @ alpha  # <Psi, phi(x_i)>
    norm2 = float(alpha @ Ka)
    d = Xs.shape[1]
    Z = np.empty((0, d))
    if not norm2 > 0:  # Psi = 0 (support vectors that cancel): nothing to approximate
        return Z, np.empty(0)
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
        beta = solve_psd(Kzz, c)
        err = norm2 - 2 * beta @ c + beta @ Kzz @ beta
        if err <= 1e-12 * norm2:
            break
    return Z, optimal_coefficients(Z, Xs, alpha, kernel)


def joint_objective(params, Xs, alpha, gamma, m, d, const):
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


def joint_gradient(kernel, Xs, alpha, Z, beta, maxiter):
    """Joint L-BFGS descent over ``(Z, beta)`` of all machines, then optimal ``beta``;
    the starting point is kept when the descent does not lower the total error."""
    from scipy.optimize import minimize

    if not len(Z):  # Psi = 0: nothing to move
        return Z, beta

    m, d = Z.shape
    A = np.atleast_2d(alpha)
    const = float(np.einsum("pi,ij,pj->", A, kernel(Xs), A))
    x0 = np.concatenate([Z.ravel(), np.ravel(beta)])
    res = minimize(
        joint_objective,
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


def construct_linear(exp, targets, shared, m_shared):
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


def joint_fixed_point(P, C, gamma, Z0, *, max_iter, tol):
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


LOG_TINY = float(np.log(np.finfo(float).tiny))


def burges_one_term(P, C, gamma, Z0, *, maxiter):
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


def construct_shared(kernel, Xs, A, m, *, solver, max_iter, tol, n_restarts, rng):
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
            Zc, logF = burges_one_term(P, C, gamma, starts, maxiter=max_iter)
            if not np.max(logF) > LOG_TINY:  # every random start too far: the kernel underflows
                Zc, logF = burges_one_term(P, C, gamma, Xs[[first]], maxiter=max_iter)
        else:
            idx = [first]
            if n_restarts > 1:
                pool = np.setdiff1d(np.arange(n), idx)
                idx += [int(s) for s in rng.choice(pool, size=min(n_restarts - 1, len(pool)), replace=False)]
            Zc, logF = joint_fixed_point(P, C, gamma, Xs[idx], max_iter=max_iter, tol=tol)
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
        B = solve_psd(Kzz, rhs).T
        err = norm2 - 2 * np.sum(B.T * rhs) + np.sum(B.T * (Kzz @ B.T))
        if err <= 1e-12 * norm2:
            break
    if not len(Z):  # Psi = 0 for every machine: nothing to approximate
        return Z, np.zeros((M, 0))
    return Z, np.atleast_2d(optimal_coefficients(Z, Xs, A, kernel))
