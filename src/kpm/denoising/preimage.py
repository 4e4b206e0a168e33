"""Approximate pre-images of feature-space expansions (Schölkopf et al. 1999, §IV).

Given targets ``Psi_j = sum_i coefs[j, i] phi(points[i])`` (one per row of
``coefs``), find input points ``z_j`` whose images are closest to them:

    minimise  rho_j(z) = ||phi(z) - Psi_j||^2
                       = k(z, z) - 2 sum_i coefs[j, i] k(z, points[i]) + coefs[j] K coefs[j]^T

Everything is computed from kernel values: the constant ``c^T K c`` is either
passed by the caller (``ctc``) or computed blockwise.

Two solvers:

* :func:`gaussian_fixed_point` — the fixed-point iteration of Schölkopf et
  al. (1999), eq. for the Gaussian kernel ``k(x, y) = exp(-gamma ||x - y||^2)``
  (the paper's ``exp(-||x-y||^2/c)`` is ``gamma = 1/c``)::

      z <- sum_i c_i k(z, x_i) x_i / sum_i c_i k(z, x_i)

  vectorised over all targets at once (one kernel block per iteration), with
  restarts when the denominator vanishes, a step tolerance, an iteration cap and
  an optional monotonicity safeguard.
* :func:`gradient_preimage` — L-BFGS (scipy) on ``rho`` with analytic gradients,
  for any differentiable kernel: ``'rbf'``, ``'poly'``, ``'sigmoid'``, ``'imq'``
  and ``'linear'``.

Both return ``(Z, info)`` with per-target diagnostics: ``n_iter``,
``converged`` (never set for a target that hit the iteration cap or ran out of
restarts) and ``objective`` (``rho_j`` at the returned point, from kernels).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from kpm.kernels import Kernel, make_kernel
from kpm.kernels import squared_distances as _sq_dists
from kpm.validation import InstanceOf, Options, check_bool, check_int, check_param, check_real, check_samples

__all__ = ["gaussian_fixed_point", "gradient_preimage", "preimage_objective"]

#: Names of the kernels with analytic input gradients (the gradient pre-image needs one).
DIFFERENTIABLE_KERNELS = ("rbf", "poly", "sigmoid", "imq", "linear")


# --------------------------------------------------------------------------- validation
def _check_matrix(name, A, *, ndim=2):
    """Finite float64 in C order (:func:`kpm.validation.check_samples`: results do not
    depend on the caller's memory layout or container); complex and sparse input rejected."""
    A = check_samples(A, name, min_samples=0, ensure_2d=False)
    if A.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {A.shape}")
    return A


def _check_inputs(coefs, points, z0):
    """Validate shapes; 1-D ``coefs`` and ``z0`` mean a single target."""
    coefs = check_samples(coefs, "coefs", min_samples=0, ensure_2d=False)
    single = coefs.ndim == 1
    if single:
        coefs = coefs[None, :]
        z0 = _check_matrix("z0", z0, ndim=1)[None, :]
    coefs = _check_matrix("coefs", coefs)
    points = _check_matrix("points", points)
    z0 = _check_matrix("z0", z0)
    m, n = coefs.shape
    if points.shape[0] != n:
        raise ValueError(
            f"coefs has {n} columns but there are {points.shape[0]} points: each row of coefs "
            "must hold one coefficient per point"
        )
    if n == 0 or m == 0:
        raise ValueError(f"need at least one target and one point, got coefs of shape {coefs.shape}")
    if z0.shape != (m, points.shape[1]):
        raise ValueError(
            f"z0 must have shape (n_targets, n_features) = ({m}, {points.shape[1]}), got {z0.shape}"
        )
    return coefs, points, z0, single


def _ctc(kernel: Kernel, coefs, points, ctc):
    """``c_j^T K c_j`` for every row j (computed blockwise unless given)."""
    m = coefs.shape[0]
    if ctc is not None:
        ctc = np.asarray(ctc, dtype=float).reshape(-1)
        if ctc.shape != (m,):
            raise ValueError(f"ctc must hold one value per target ({m}), got shape {ctc.shape}")
        if not np.all(np.isfinite(ctc)):
            raise ValueError("ctc contains NaN or infinite values")
        return ctc
    KC = kernel.matvec(points, coefs.T)  # (n, m)
    return np.einsum("ij,ji->i", coefs, KC)


def preimage_objective(Z, coefs, points, kernel, *, ctc=None):
    """``||phi(z_j) - sum_i coefs[j, i] phi(points[i])||^2`` for every row j, from kernels.

    Parameters
    ----------
    Z : array-like of shape (m, d)
        Candidate pre-images.
    coefs : array-like of shape (m, n)
        Expansion coefficients of the targets.
    points : array-like of shape (n, d)
        Expansion points.
    kernel : Kernel or str
        A :class:`~kpm.kernels.Kernel` (or a name understood by
        :func:`~kpm.kernels.make_kernel` with its default parameters).
    ctc : array-like of shape (m,), optional
        ``coefs[j] @ K @ coefs[j]``; computed when omitted.

    Returns
    -------
    objective : ndarray of shape (m,)
    """
    coefs, points, Z, single = _check_inputs(coefs, points, Z)
    kernel = make_kernel(kernel)
    ctc = _ctc(kernel, coefs, points, ctc)
    obj = kernel.diag(Z) - 2.0 * np.einsum("ij,ij->i", kernel(Z, points), coefs) + ctc
    return obj[0] if single else obj


# --------------------------------------------------------------------- fixed point
def _restart_candidates(kind, rows, z_start, points, coefs, gamma, scaled, count):
    """Start points for the ``count[r]``-th restart of each row r in ``rows``."""
    if kind == "nearest":
        D = _sq_dists(z_start[rows], points)
        order = np.argsort(D, axis=1, kind="stable")
    else:  # 'best': training points with the best single-point objective
        K = np.exp(-gamma * _sq_dists(points, points))
        score = coefs[rows] @ K  # <phi(x_j), Psi_row>
        if scaled:
            score = np.abs(score)
        order = np.argsort(-score, axis=1, kind="stable")
    pick = order[np.arange(len(rows)), np.minimum(count, points.shape[0] - 1)]
    return points[pick].copy()


def gaussian_fixed_point(
    coefs,
    points,
    gamma,
    z0,
    *,
    max_iter=500,
    tol=1e-6,
    restart="nearest",
    max_restarts=5,
    ctc=None,
    scaled=False,
    safeguard=True,
    denominator_tol=1e-10,
    history=False,
    return_info=True,
):
    """Pre-images for the Gaussian kernel by the fixed-point iteration, all targets at once.

    Each row j of ``coefs`` defines ``Psi_j = sum_i coefs[j, i] phi(points[i])`` for
    ``k(x, y) = exp(-gamma ||x - y||^2)``. Starting from ``z0[j]``, iterate
    (Schölkopf et al. 1999, §IV-A)::

        z <- sum_i c_i k(z, x_i) x_i / sum_i c_i k(z, x_i)

    for every unfinished row simultaneously (one ``(m_active, n)`` kernel block per
    iteration, no loop over points). For the Gaussian kernel the denominator is
    ``f(z) = <phi(z), Psi>``, so the update moves uphill on ``f`` exactly when
    ``f(z) > 0``; ``rho(z) = 1 - 2 f(z) + c^T K c``.

    Parameters
    ----------
    coefs : array-like of shape (m, n) or (n,)
        Expansion coefficients, one target per row (1-D: a single target).
    points : array-like of shape (n, d)
        Expansion points ``x_i``.
    gamma : float
        Kernel width, ``k(x, y) = exp(-gamma ||x - y||^2)`` (Schölkopf's ``c`` is ``1/gamma``).
    z0 : array-like of shape (m, d) or (d,)
        Starting points (e.g. the noisy inputs for denoising).
    max_iter : int, default=500
        Iteration cap per row (restarts included). Rows stopped by the cap are
        reported as not converged.
    tol : float, default=1e-6
        Stop a row when its step is below ``tol`` kernel widths:
        ``sqrt(gamma) * ||z_new - z|| <= tol``.
    restart : {'nearest', 'best'} or array-like of shape (m, d), default='nearest'
        Where to restart a row whose denominator vanishes. ``'nearest'``: the r-th
        restart starts from the r-th nearest point to ``z0[j]``; ``'best'``: from the
        point ``x_i`` with the r-th largest ``<phi(x_i), Psi_j>`` (``|.|`` when
        ``scaled``; needs the ``n x n`` kernel matrix of ``points``). An array gives
        each row its first restart point; later restarts use ``'nearest'``.
    max_restarts : int, default=5
        Restarts allowed per row; a row that runs out is reported as not converged.
    ctc : array-like of shape (m,), optional
        ``coefs[j] @ K @ coefs[j]`` (the squared norm of each target), used only for
        the reported objective; computed blockwise when omitted.
    scaled : bool, default=False
        If False, minimise ``||phi(z) - Psi||^2`` (denoising): a denominator
        ``f(z) <= denominator_tol * sum_i |c_i| k(z, x_i)`` counts as vanishing
        (a non-positive ``f`` would drive the iterate away from the minimum).
        If True, minimise ``min_beta ||beta phi(z) - Psi||^2 = c^T K c - f(z)^2``
        (the reduced-set problem, any sign of ``beta = f(z)``): only ``|f|``
        vanishing triggers a restart.
    safeguard : bool, default=True
        With mixed-sign coefficients the plain iteration is not guaranteed to
        decrease the objective. If True, a step that increases it is halved until it
        does not (at most 30 halvings, then the row stops as not converged), so the
        iterates' objective never increases. False gives the paper's plain iteration.
    denominator_tol : float, default=1e-10
        Relative threshold for a vanishing denominator (see ``scaled``).
    history : bool, default=False
        If True, ``info['history']`` is an ``(n_loops, m)`` array with the objective
        of each row's accepted iterate at every loop (NaN once a row has stopped).
        A restart begins a new sequence (its start may be worse than the abandoned one).
    return_info : bool, default=True
        Return ``(Z, info)`` rather than ``Z`` alone.

    Returns
    -------
    Z : ndarray of shape (m, d) (or (d,) for a single target)
        The pre-images: for each row, the iterate with the smallest objective seen.
    info : dict
        ``n_iter`` (int array, iterations per row), ``converged`` (bool array: the step
        tolerance was met), ``objective`` (``||phi(z) - Psi||^2`` at Z, or
        ``c^T K c - f(z)^2`` when ``scaled``), ``denominator`` (``f(z)`` at Z),
        ``n_restarts``, ``n_backtracks`` and optionally ``history``.

    Notes
    -----
    The numerator and denominator are evaluated with the kernel row rescaled by
    ``exp(gamma min_i ||z - x_i||^2)`` (their ratio is unchanged), so a start far
    from all points does not underflow to ``0/0``.
    """
    coefs, points, z0, single = _check_inputs(coefs, points, z0)
    gamma = check_real(gamma, "gamma", low=0.0, low_open=True)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    max_restarts = check_int(max_restarts, "max_restarts", minimum=0)
    tol = check_real(tol, "tol", low=0.0, low_open=True)
    denominator_tol = check_real(denominator_tol, "denominator_tol", low=0.0, high=1.0, high_open=True)
    scaled = check_bool(scaled, "scaled")
    safeguard = check_bool(safeguard, "safeguard")
    history = check_bool(history, "history")
    return_info = check_bool(return_info, "return_info")
    m, n = coefs.shape
    restart_points = None
    if isinstance(restart, str):
        # a string names a rule (an array of start points is checked below)
        kind = check_param(restart, "restart",
                           [Options("nearest", "best"), InstanceOf(np.ndarray, "an array of start points")])
    else:
        restart_points = _check_matrix("restart", restart)
        if restart_points.shape != z0.shape:
            raise ValueError(f"restart points must have the shape of z0 {z0.shape}, got {restart_points.shape}")
        kind = "nearest"
    kernel = make_kernel("rbf", gamma=gamma)
    ctc = _ctc(kernel, coefs, points, ctc)

    X_sq = np.einsum("ij,ij->i", points, points)
    Z = z0.copy()
    Z_prev = z0.copy()
    crit_prev = np.full(m, -np.inf)  # criterion to maximise: f (or f^2 if scaled)
    best_Z = z0.copy()
    best_crit = np.full(m, -np.inf)
    best_f = np.full(m, np.nan)
    n_iter = np.zeros(m, dtype=int)
    n_restarts = np.zeros(m, dtype=int)
    n_back = np.zeros(m, dtype=int)
    back_run = np.zeros(m, dtype=int)
    converged = np.zeros(m, dtype=bool)
    done = np.zeros(m, dtype=bool)
    hist = [] if history else None
    sqrt_gamma = np.sqrt(gamma)

    for _ in range(max_iter + 1):
        A = np.flatnonzero(~done)
        if A.size == 0:
            break
        D = _sq_dists(Z[A], points, None, X_sq)
        dmin = D.min(axis=1)
        D -= dmin[:, None]
        D *= -gamma
        Ks = np.exp(D, out=D)  # k(z, x_i) * exp(gamma dmin)
        W = coefs[A] * Ks
        fs = W.sum(axis=1)
        abs_s = np.abs(W).sum(axis=1)
        f = fs * np.exp(-gamma * dmin)
        crit = f**2 if scaled else f
        # safeguard: reject steps that increased the objective (halve them)
        worse = np.zeros(A.size, dtype=bool)
        if safeguard:
            scale_c = np.maximum(np.abs(crit_prev[A]), 1e-300)
            worse = crit < crit_prev[A] - 1e-12 * scale_c
        if hist is not None:  # objective of the accepted iterate of every running row
            acc = np.where(worse, crit_prev[A], crit)
            row = np.full(m, np.nan)
            row[A] = (ctc[A] - acc) if scaled else (1.0 - 2.0 * acc + ctc[A])
            hist.append(row)
        # record the best iterate
        better = crit > best_crit[A]
        if better.any():
            idx = A[better]
            best_crit[idx] = crit[better]
            best_Z[idx] = Z[idx]
            best_f[idx] = f[better]

        if worse.any():
            idx = A[worse]
            back_run[idx] += 1
            n_back[idx] += 1
            give_up = back_run[idx] > 30
            done[idx[give_up]] = True  # stuck: stop, not converged
            keep = idx[~give_up]
            Z[keep] = 0.5 * (Z_prev[keep] + Z[keep])
            n_iter[keep] += 1
        ok = ~worse
        back_run[A[ok]] = 0

        # vanishing denominators -> restart
        vanish = ok & ((np.abs(fs) if scaled else fs) <= denominator_tol * abs_s)
        if vanish.any():
            idx = A[vanish]
            can = n_restarts[idx] < max_restarts
            done[idx[~can]] = True
            idx = idx[can]
            if idx.size:
                if restart_points is not None:
                    first = idx[n_restarts[idx] == 0]
                    later = idx[n_restarts[idx] > 0]
                    Z[first] = restart_points[first]
                else:
                    later = idx
                if later.size:
                    r = n_restarts[later] - (0 if restart_points is None else 1)
                    Z[later] = _restart_candidates(kind, later, z0, points, coefs, gamma, scaled, r)
                n_restarts[idx] += 1
                n_iter[idx] += 1
                crit_prev[idx] = -np.inf
                Z_prev[idx] = Z[idx]
        step_rows = ok & ~vanish
        if not step_rows.any():
            continue
        idx = A[step_rows]
        capped = n_iter[idx] >= max_iter
        done[idx[capped]] = True
        sel = ~capped
        idx = idx[sel]
        if idx.size == 0:
            continue
        Wr = W[step_rows][sel]
        Z_new = (Wr @ points) / fs[step_rows][sel][:, None]
        step = sqrt_gamma * np.sqrt(np.einsum("ij,ij->i", Z_new - Z[idx], Z_new - Z[idx]))
        Z_prev[idx] = Z[idx]
        crit_prev[idx] = crit[step_rows][sel]
        Z[idx] = Z_new
        n_iter[idx] += 1
        conv = step <= tol
        converged[idx[conv]] = True
        # the converged iterate is evaluated once more (to score it), then stops
        done_next = idx[conv]
        # mark: evaluate once more next loop, then finish
        if done_next.size:
            _finalise_rows(done_next, Z, points, X_sq, coefs, gamma, scaled,
                           best_Z, best_crit, best_f)
            done[done_next] = True

    # rows still running at the loop end hit the cap
    A = np.flatnonzero(~done)
    if A.size:
        _finalise_rows(A, Z, points, X_sq, coefs, gamma, scaled, best_Z, best_crit, best_f)
    if hist is not None:
        # drop trailing all-NaN rows
        H = np.vstack(hist) if hist else np.empty((0, m))
    f = best_f
    objective = (ctc - f**2) if scaled else (1.0 - 2.0 * f + ctc)
    objective = np.maximum(objective, 0.0)
    if not return_info:
        return best_Z[0] if single else best_Z
    info = {
        "n_iter": n_iter,
        "converged": converged,
        "objective": objective,
        "denominator": f,
        "n_restarts": n_restarts,
        "n_backtracks": n_back,
    }
    if hist is not None:
        info["history"] = H
    if single:
        info = {k: (v[0] if k != "history" else v[:, 0]) for k, v in info.items()}
        return best_Z[0], info
    return best_Z, info


def _finalise_rows(rows, Z, points, X_sq, coefs, gamma, scaled, best_Z, best_crit, best_f):
    """Score the current iterate of ``rows`` and keep it if it is the best seen."""
    D = _sq_dists(Z[rows], points, None, X_sq)
    f = np.einsum("ij,ij->i", coefs[rows], np.exp(-gamma * D))
    crit = f**2 if scaled else f
    better = crit >= best_crit[rows]
    idx = rows[better]
    best_Z[idx] = Z[idx]
    best_crit[idx] = crit[better]
    best_f[idx] = f[better]


# ------------------------------------------------------------------------- gradient
def _value_grad(kernel: Kernel, Z, points, X_sq, coefs):
    """Per-row objective (without the constant c^T K c) and its gradient in Z."""
    name = kernel.name
    if name == "rbf":
        D = _sq_dists(Z, points, None, X_sq)
        K = np.exp(-kernel.gamma * D)
        W = coefs * K  # (m, n)
        f = W.sum(axis=1)
        # d/dz k(z, x) = -2 gamma (z - x) k
        grad_f = -2.0 * kernel.gamma * (W.sum(axis=1)[:, None] * Z - W @ points)
        return 1.0 - 2.0 * f, -2.0 * grad_f
    if name == "imq":
        D = _sq_dists(Z, points, None, X_sq) + kernel.c**2
        K = 1.0 / np.sqrt(D)
        W = coefs * K
        f = W.sum(axis=1)
        W3 = coefs * K**3  # d/dz (d+c^2)^(-1/2) = -(z - x) (d+c^2)^(-3/2)
        grad_f = -(W3.sum(axis=1)[:, None] * Z - W3 @ points)
        return 1.0 / abs(kernel.c) - 2.0 * f, -2.0 * grad_f
    G = Z @ points.T
    zz = np.einsum("ij,ij->i", Z, Z)
    if name == "linear":
        f = np.einsum("ij,ij->i", coefs, G)
        grad_f = coefs @ points
        return zz - 2.0 * f, 2.0 * Z - 2.0 * grad_f
    g, c0 = kernel.gamma, kernel.coef0
    if name == "poly":
        p = kernel.degree
        B = g * G + c0
        f = np.einsum("ij,ij->i", coefs, B**p)
        grad_f = (coefs * (p * g * B ** (p - 1))) @ points
        bz = g * zz + c0
        kzz = bz**p
        grad_kzz = (2.0 * p * g * bz ** (p - 1))[:, None] * Z
        return kzz - 2.0 * f, grad_kzz - 2.0 * grad_f
    if name == "sigmoid":
        T = np.tanh(g * G + c0)
        f = np.einsum("ij,ij->i", coefs, T)
        grad_f = (coefs * (g * (1.0 - T**2))) @ points
        tz = np.tanh(g * zz + c0)
        grad_kzz = (2.0 * g * (1.0 - tz**2))[:, None] * Z
        return tz - 2.0 * f, grad_kzz - 2.0 * grad_f
    raise ValueError(
        f"the gradient pre-image needs a differentiable kernel {DIFFERENTIABLE_KERNELS}, got {name!r}"
    )


def gradient_preimage(
    coefs,
    points,
    kernel,
    z0,
    *,
    max_iter=500,
    tol=1e-6,
    ctc=None,
    history=False,
    return_info=True,
):
    """Pre-images for any differentiable kernel by L-BFGS with analytic gradients.

    Minimises, for each row j independently, ``rho_j(z) = k(z, z) - 2 sum_i
    coefs[j, i] k(z, x_i) + c_j^T K c_j`` with :func:`scipy.optimize.minimize`
    (``method='L-BFGS-B'``), started at ``z0[j]``. Each function evaluation is one
    vectorised kernel row; the rows are solved one after another, so the result
    for a row does not depend on the other rows.

    Parameters
    ----------
    coefs : array-like of shape (m, n) or (n,)
        Expansion coefficients, one target per row (1-D: a single target).
    points : array-like of shape (n, d)
        Expansion points.
    kernel : Kernel or str
        A :class:`~kpm.kernels.Kernel` from :func:`~kpm.kernels.make_kernel`
        (``'rbf'``, ``'poly'``, ``'sigmoid'``, ``'imq'`` or ``'linear'``), or one of
        those names with default parameters.
    z0 : array-like of shape (m, d) or (d,)
        Starting points.
    max_iter : int, default=500
        L-BFGS iteration cap per row.
    tol : float, default=1e-6
        L-BFGS stops when the infinity norm of the gradient has dropped to ``tol``
        times its value at ``z0``, or when the relative decrease of the objective
        per step falls below ``1e-13``.
    ctc : array-like of shape (m,), optional
        ``coefs[j] @ K @ coefs[j]``; computed blockwise when omitted.
    history : bool, default=False
        If True, ``info['history']`` holds, per row, the list of objective values
        after each L-BFGS iteration.
    return_info : bool, default=True
        Return ``(Z, info)`` rather than ``Z`` alone.

    Returns
    -------
    Z : ndarray of shape (m, d) (or (d,) for a single target)
    info : dict
        ``n_iter`` (L-BFGS iterations per row), ``converged`` (scipy reported
        convergence — gradient or objective-decrease criterion — and not the
        iteration cap), ``objective`` (``||phi(z) - Psi||^2`` from kernels),
        ``grad_norm`` (final infinity norm of each row's gradient) and optionally
        ``history``.
    """
    coefs, points, z0, single = _check_inputs(coefs, points, z0)
    kernel = make_kernel(kernel)
    if kernel.name not in DIFFERENTIABLE_KERNELS:
        raise ValueError(
            f"the gradient pre-image needs a differentiable kernel {DIFFERENTIABLE_KERNELS}, got {kernel.name!r}"
        )
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    tol = check_real(tol, "tol", low=0.0, low_open=True)
    history = check_bool(history, "history")
    return_info = check_bool(return_info, "return_info")
    ctc = _ctc(kernel, coefs, points, ctc)
    m, d = z0.shape
    X_sq = np.einsum("ij,ij->i", points, points)
    Z = z0.copy()
    n_iter = np.zeros(m, dtype=int)
    converged = np.zeros(m, dtype=bool)
    _, g0 = _value_grad(kernel, z0, points, X_sq, coefs)
    g0n = np.abs(g0).max(axis=1)
    hist = []
    # one small kernel row per evaluation: multi-threaded BLAS only adds contention
    with threadpool_limits(limits=1, user_api="blas"):
        _solve_rows(kernel, coefs, points, X_sq, z0, g0n, tol, max_iter, history, Z, n_iter, converged, hist)

    val, grad = _value_grad(kernel, Z, points, X_sq, coefs)
    gnorm = np.abs(grad).max(axis=1)
    converged |= gnorm <= tol * g0n
    objective = val + ctc
    if not return_info:
        return Z[0] if single else Z
    info = {"n_iter": n_iter, "converged": converged, "objective": objective, "grad_norm": gnorm}
    if history:
        info["history"] = hist
    if single:
        info = {k: (v[0] if k != "history" else v[0]) for k, v in info.items()}
        return Z[0], info
    return Z, info


def _solve_rows(kernel, coefs, points, X_sq, z0, g0n, tol, max_iter, history, Z, n_iter, converged, hist):
    """Per-row L-BFGS for :func:`gradient_preimage` (fills Z, n_iter, converged, hist).

    L-BFGS runs on ``u = z / s`` with ``s`` the Gaussian kernel's width (1 for other
    kernels): its steps are then the same for data of any scale, whereas in the units of
    z the first step (of the size of the gradient, ``1/s``) is far off for widths far from 1.
    """
    s = kernel.sigma if kernel.name == "rbf" else 1.0
    for j in range(z0.shape[0]):
        C = coefs[j : j + 1]

        def fun(u, C=C):
            val, grad = _value_grad(kernel, (s * u)[None, :], points, X_sq, C)
            return float(val[0]), s * grad[0]

        if g0n[j] == 0.0:  # already stationary
            converged[j] = True
            hist.append([])
            continue
        trace = []
        res = minimize(
            fun,
            z0[j] / s,
            jac=True,
            method="L-BFGS-B",
            callback=(lambda xk, trace=trace: trace.append(fun(xk)[0])) if history else None,
            options={"maxiter": max_iter, "gtol": tol * g0n[j] * s, "ftol": 1e-13,
                     "maxfun": max(15000, 3 * max_iter), "maxcor": 20},
        )
        Z[j] = s * res.x
        n_iter[j] = res.nit
        converged[j] = bool(res.success) and res.nit < max_iter
        hist.append(trace)
