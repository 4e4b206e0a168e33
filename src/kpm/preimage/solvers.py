"""Approximate pre-images of feature-space expansions (Schölkopf et al. 1999, §IV).

Given targets ``Psi_j = sum_i coefs[j, i] phi(points[i])`` (one per row of
``coefs``), find input points ``z_j`` whose images are closest to them:

    minimise  rho_j(z) = ||phi(z) - Psi_j||^2
                       = k(z, z) - 2 sum_i coefs[j, i] k(z, points[i]) + coefs[j] K coefs[j]^T

Everything is computed from kernel values: the constant ``c^T K c`` is either
passed by the caller (``ctc``) or computed blockwise.

The solvers:

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
* :func:`mds_preimage` — the non-iterative pre-image of Kwok & Tsang (2004): the
  feature-space distances of the target to its nearest expansion points are turned into
  input-space distances through the kernel, and the point with those distances is placed
  by multidimensional scaling in the span of the neighbours. It is also the default start
  of the two iterative solvers in :func:`solve_preimages`.
* :func:`kpm.preimage.learned.fit_learned_preimage` — the learned pre-image map of Bakır, Weston & Schölkopf
  (2004): a kernel ridge regression from feature-space coordinates back to the inputs
  with an unpenalised intercept (scikit-learn's ``KernelPCA(fit_inverse_transform=True)``
  fits the same map without it).

:func:`solve_preimages` runs one of the expansion solvers in blocks of targets and returns
the per-target diagnostics as a :class:`PreimageInfo`; :meth:`kpm.KernelProjection.inverse_transform`
and :class:`kpm.KernelPCADenoiser` call it. The solvers return ``(Z, info)`` with per-target
diagnostics: ``n_iter``, ``converged`` (never set for a target that hit the iteration cap or
ran out of restarts) and ``objective`` (``rho_j`` at the returned point, from kernels).

References
----------
B. Schölkopf, S. Mika, C. J. C. Burges, P. Knirsch, K.-R. Müller, G. Rätsch, A. J. Smola,
"Input space versus feature space in kernel-based methods", IEEE TNN 10(5), 1999.

J. T. Kwok, I. W. Tsang, "The pre-image problem in kernel methods", IEEE TNN 15(6), 2004.

G. H. Bakır, J. Weston, B. Schölkopf, "Learning to find pre-images", NIPS 16, 2004.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from kpm.config import get_config
from kpm.kernels import Kernel, make_kernel
from kpm.kernels import squared_distances as _sq_dists
from kpm.validation import (
    InstanceOf,
    Options,
    check_bool,
    check_int,
    check_option,
    check_param,
    check_real,
    check_samples,
)

__all__ = [
    "PREIMAGE_METHODS",
    "DIFFERENTIABLE_KERNELS",
    "PreimageInfo",
    "default_preimage",
    "gaussian_fixed_point",
    "gradient_preimage",
    "mds_preimage",
    "solve_preimages",
    "preimage_objective",
]

#: Names of the kernels with analytic input gradients (the gradient pre-image needs one).
#: Their values also convert to input-space distances, as the MDS pre-image needs.
DIFFERENTIABLE_KERNELS = ("rbf", "poly", "sigmoid", "imq", "linear")

#: The pre-image methods: the three solvers of an expansion (:func:`solve_preimages`) and
#: the learned map (:func:`kpm.preimage.learned.fit_learned_preimage`).
PREIMAGE_METHODS = ("fixed-point", "gradient", "mds", "learned")


@dataclass(frozen=True)
class PreimageInfo:
    r"""Diagnostics of a batch of pre-images (one entry per target).

    Attributes
    ----------
    n_iter : ndarray of int (n_samples,)
        Iterations spent on each pre-image (0 for the MDS pre-image and the learned map).
    converged : ndarray of bool (n_samples,)
        Whether each pre-image met the tolerance within the iteration cap (always True for
        the non-iterative methods).
    objective : ndarray (n_samples,)
        :math:`\|\phi(z) - P\phi(x)\|^2` at each pre-image, from kernels (can be negative for
        the sigmoid kernel, which is not positive definite).
    """

    n_iter: np.ndarray
    converged: np.ndarray
    objective: np.ndarray


def default_preimage(kernel):
    """The pre-image method that works for ``kernel``: ``'fixed-point'`` for the Gaussian
    kernel (Schölkopf et al. 1999), ``'gradient'`` for the other kernels of
    :data:`DIFFERENTIABLE_KERNELS`, None for the others (only the learned map, fitted on
    request, applies to them)."""
    name = getattr(kernel, "name", None)
    if name == "rbf":
        return "fixed-point"
    if name in DIFFERENTIABLE_KERNELS:
        return "gradient"
    return None


# --------------------------------------------------------------------------- validation
def check_matrix(name, A, *, ndim=2):
    """Finite float64 in C order (:func:`kpm.validation.check_samples`: results do not
    depend on the caller's memory layout or container); complex and sparse input rejected."""
    A = check_samples(A, name, min_samples=0, ensure_2d=False)
    if A.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {A.shape}")
    return A


def _check_targets(coefs, points):
    """Validated ``coefs`` (m, n) and ``points`` (n, d); 1-D ``coefs``: a single target."""
    coefs = check_samples(coefs, "coefs", min_samples=0, ensure_2d=False)
    single = coefs.ndim == 1
    coefs = check_matrix("coefs", coefs[None, :] if single else coefs)
    points = check_matrix("points", points)
    m, n = coefs.shape
    if points.shape[0] != n:
        raise ValueError(
            f"coefs has {n} columns but there are {points.shape[0]} points: each row of coefs "
            "must hold one coefficient per point"
        )
    if n == 0 or m == 0:
        raise ValueError(f"need at least one target and one point, got coefs of shape {coefs.shape}")
    return coefs, points, single


def _check_inputs(coefs, points, z0):
    """Validate shapes; 1-D ``coefs`` and ``z0`` mean a single target."""
    coefs, points, single = _check_targets(coefs, points)
    z0 = check_matrix("z0", z0, ndim=1)[None, :] if single else check_matrix("z0", z0)
    if z0.shape != (coefs.shape[0], points.shape[1]):
        raise ValueError(
            f"z0 must have shape (n_targets, n_features) = ({coefs.shape[0]}, {points.shape[1]}), got {z0.shape}"
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
    r""":math:`\|\phi(z_j) - \sum_i c_{ji}\, \phi(p_i)\|^2` for every row j (:math:`c` = ``coefs``, :math:`p` = ``points``), from kernels.

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
    r"""Pre-images for the Gaussian kernel by the fixed-point iteration, all targets at once.

    Each row j of ``coefs`` defines :math:`\Psi_j = \sum_i c_{ji}\, \phi(x_i)` (:math:`x_i`
    the ``points``) for :math:`k(x, y) = \exp(-\gamma \|x - y\|^2)`. Starting from
    ``z0[j]``, iterate (Schölkopf et al. 1999, §IV-A)

    .. math::

        z \leftarrow \frac{\sum_i c_i\, k(z, x_i)\, x_i}{\sum_i c_i\, k(z, x_i)}

    for every unfinished row simultaneously (one ``(m_active, n)`` kernel block per
    iteration, no loop over points). For the Gaussian kernel the denominator is
    :math:`f(z) = \langle \phi(z), \Psi \rangle`, so the update moves uphill on :math:`f`
    exactly when :math:`f(z) > 0`; :math:`\rho(z) = 1 - 2 f(z) + c^\top K c`.

    Parameters
    ----------
    coefs : array-like of shape (m, n) or (n,)
        Expansion coefficients, one target per row (1-D: a single target).
    points : array-like of shape (n, d)
        Expansion points ``x_i``.
    gamma : float
        Kernel width, :math:`k(x, y) = \exp(-\gamma \|x - y\|^2)` (Schölkopf's :math:`c` is :math:`1/\gamma`).
    z0 : array-like of shape (m, d) or (d,)
        Starting points (e.g. the noisy inputs for denoising).
    max_iter : int, default=500
        Iteration cap per row (restarts included). Rows stopped by the cap are
        reported as not converged.
    tol : float, default=1e-6
        Stop a row when its step is below ``tol`` kernel widths:
        :math:`\sqrt\gamma\, \|z_{\text{new}} - z\| \le` ``tol``.
    restart : {'nearest', 'best'} or array-like of shape (m, d), default='nearest'
        Where to restart a row whose denominator vanishes. ``'nearest'``: the r-th
        restart starts from the r-th nearest point to ``z0[j]``; ``'best'``: from the
        point :math:`x_i` with the r-th largest :math:`\langle \phi(x_i), \Psi_j \rangle` (its absolute value when
        ``scaled``; needs the ``n x n`` kernel matrix of ``points``). An array gives
        each row its first restart point; later restarts use ``'nearest'``.
    max_restarts : int, default=5
        Restarts allowed per row; a row that runs out is reported as not converged.
    ctc : array-like of shape (m,), optional
        ``coefs[j] @ K @ coefs[j]`` (the squared norm of each target), used only for
        the reported objective; computed blockwise when omitted.
    scaled : bool, default=False
        If False, minimise :math:`\|\phi(z) - \Psi\|^2` (denoising): a denominator
        :math:`f(z) \le \tau \sum_i |c_i|\, k(z, x_i)` (:math:`\tau` = ``denominator_tol``) counts as vanishing
        (a non-positive ``f`` would drive the iterate away from the minimum).
        If True, minimise :math:`\min_\beta \|\beta \phi(z) - \Psi\|^2 = c^\top K c - f(z)^2`
        (the reduced-set problem, any sign of :math:`\beta = f(z)`): only :math:`|f|`
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
        tolerance was met), ``objective`` (:math:`\|\phi(z) - \Psi\|^2` at Z, or
        :math:`c^\top K c - f(z)^2` when ``scaled``), ``denominator`` (:math:`f(z)` at Z),
        ``n_restarts``, ``n_backtracks`` and optionally ``history``.

    Notes
    -----
    The numerator and denominator are evaluated with the kernel row rescaled by
    :math:`\exp(\gamma \min_i \|z - x_i\|^2)` (their ratio is unchanged), so a start far
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
        restart_points = check_matrix("restart", restart)
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
    r"""Pre-images for any differentiable kernel by L-BFGS with analytic gradients.

    Minimises, for each row j independently,
    :math:`\rho_j(z) = k(z, z) - 2 \sum_i c_{ji}\, k(z, x_i) + c_j^\top K c_j` (:math:`c` =
    ``coefs``) with :func:`scipy.optimize.minimize`
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
        iteration cap), ``objective`` (:math:`\|\phi(z) - \Psi\|^2` from kernels),
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


# ------------------------------------------------------------------------------ MDS
def _dots(kernel, coefs, points, dots):
    """``<Psi_j, phi(points[i])> = (K c_j)_i`` for every target j (rows), computed blockwise
    unless given."""
    m, n = coefs.shape
    if dots is None:
        return kernel.matvec(points, coefs.T).T
    dots = np.asarray(dots, dtype=float)
    if dots.shape != (m, n):
        raise ValueError(f"dots must have shape (n_targets, n_points) = ({m}, {n}), got {dots.shape}")
    if not np.all(np.isfinite(dots)):
        raise ValueError("dots contains NaN or infinite values")
    return dots


def _inner_product_inverse(kernel, v):
    """``t`` with ``kappa(t) = v`` for an inner-product kernel ``k(x, y) = kappa(<x, y>)``
    (values outside the range of kappa are clipped to it)."""
    name = kernel.name
    if name == "linear":
        return v
    g, c0 = kernel.gamma, kernel.coef0
    if name == "poly":
        p = kernel.degree
        if int(p) % 2:  # odd degree: kappa is onto, the real root
            root = np.sign(v) * np.abs(v) ** (1.0 / p)
        else:
            root = np.maximum(v, 0.0) ** (1.0 / p)
        return (root - c0) / g
    # sigmoid: tanh(g t + c0) = v
    return (np.arctanh(np.clip(v, -1.0 + 1e-15, 1.0 - 1e-15)) - c0) / g


def _input_sq_distances(kernel, dots, ctc, points):
    """Squared input-space distances from each target's pre-image to every point, from the
    feature-space quantities (Kwok & Tsang 2004, Section III-A).

    A stationary kernel ``k(x, y) = kappa(||x - y||^2)`` with ``k(x, x) = k0``: the
    feature-space distance ``||Psi - phi(x_i)||^2 = ||Psi||^2 + k0 - 2 <Psi, phi(x_i)>``
    is taken for ``||phi(z) - phi(x_i)||^2 = 2 k0 - 2 kappa(d_i^2)``, and inverted. An
    inner-product kernel ``kappa(<x, y>)``: ``<z, x_i> = kappa^{-1}(<Psi, phi(x_i)>)`` and
    ``||z||^2 = kappa^{-1}(||Psi||^2)``, so ``d_i^2 = ||z||^2 + ||x_i||^2 - 2 <z, x_i>``.
    """
    tiny = np.finfo(float).tiny
    name = kernel.name
    if name == "rbf":
        kval = np.clip(dots + 0.5 * (1.0 - ctc)[:, None], tiny, 1.0)
        return -np.log(kval) / kernel.gamma
    if name == "imq":
        c = abs(float(kernel.c))
        k0 = 1.0 / c
        kval = np.clip(dots + 0.5 * (k0 - ctc)[:, None], tiny, k0)
        return np.maximum(1.0 / kval**2 - c**2, 0.0)
    t = _inner_product_inverse(kernel, dots)
    zz = _inner_product_inverse(kernel, ctc)
    xx = np.einsum("ij,ij->i", points, points)
    return np.maximum(zz[:, None] + xx[None, :] - 2.0 * t, 0.0)


#: The neighbours' directions kept by the MDS pre-image: spread (singular value of the
#: centred neighbours) above this fraction of the largest.
MDS_RELATIVE_SPREAD = 1e-3


def _mds_point(points, d2, n_neighbors):
    """The point whose squared distances to its ``n_neighbors`` nearest points are closest
    to ``d2`` (Kwok & Tsang 2004, Section III-B), in the affine span of those neighbours."""
    k = min(n_neighbors, points.shape[0])
    nb = np.argpartition(d2, k - 1)[:k] if k < len(d2) else np.arange(len(d2))
    nb = nb[np.argsort(d2[nb], kind="stable")]
    Xn = points[nb]
    mean = Xn.mean(axis=0)
    # X_N H = U Lambda V^T: the neighbours' coordinates Z = Lambda V^T in the local frame U
    U, s, Vt = linalg.svd((Xn - mean).T, full_matrices=False, check_finite=False)
    if s.size == 0 or s[0] == 0.0:
        return mean  # the neighbours coincide
    # the squared distances d2 are those of a projection, read through the kernel: their
    # error is far above rounding, and a coordinate along a direction of spread s_j gets that
    # error divided by s_j. Directions below MDS_RELATIVE_SPREAD of the neighbourhood's scale
    # (its largest spread, or the largest distance d from the target, whichever is larger)
    # are left out -- neighbours in a subspace up to noise, copies of one point: that costs
    # at most their spread, where keeping them put pre-images 1e3 to 1e11 away from the data
    scale = max(float(s[0]), float(np.sqrt(max(float(d2[nb].max()), 0.0))))
    q = int(np.count_nonzero(s > MDS_RELATIVE_SPREAD * scale))
    if q == 0:
        return mean  # the neighbours coincide at the scale of the distances
    s, Vt, U = s[:q], Vt[:q], U[:, :q]
    d0 = np.sum((s[:, None] * Vt) ** 2, axis=0)  # squared norms of the neighbours' coordinates
    z = -0.5 * (Vt @ (d2[nb] - d0)) / s
    return U @ z + mean


def mds_preimage(coefs, points, kernel, *, n_neighbors=10, ctc=None, dots=None, return_info=True):
    r"""Non-iterative pre-images by multidimensional scaling (Kwok & Tsang 2004).

    For each target :math:`\Psi_j = \sum_i c_{ji}\, \phi(x_i)` (:math:`c` = ``coefs``,
    :math:`x_i` the ``points``): the feature-space distances :math:`\|\Psi_j - \phi(x_i)\|^2`
    are converted to input-space distances :math:`d_i`
    through the kernel (stationary kernels: ``rbf``, ``imq``; inner-product kernels:
    ``poly``, ``sigmoid``, ``linear``), and the pre-image is the point of the affine span of
    the ``n_neighbors`` nearest points whose distances to them best match the :math:`d_i`:
    with the centred neighbours :math:`X_N H = U \Lambda V^\top` and their coordinates
    :math:`\Lambda V^\top` of squared norms :math:`d_0`,

    .. math::

        z = U \big(-\tfrac12 \Lambda^{-1} V^\top (d^2 - d_0)\big) + \bar x_N.

    No iteration, no local minima; a good start for :func:`gaussian_fixed_point` and
    :func:`gradient_preimage` (Kwok & Tsang, Section IV).

    Parameters
    ----------
    coefs : array-like of shape (m, n) or (n,)
        Expansion coefficients, one target per row (1-D: a single target).
    points : array-like of shape (n, d)
        Expansion points.
    kernel : Kernel or str
        One of :data:`DIFFERENTIABLE_KERNELS` (a :class:`~kpm.kernels.Kernel` or a name).
    n_neighbors : int, default=10
        Nearest expansion points (in feature space) the pre-image is placed among (at most n).
    ctc : array-like of shape (m,), optional
        :math:`\|\Psi_j\|^2 = c_j^\top K c_j`; computed blockwise when omitted.
    dots : array-like of shape (m, n), optional
        :math:`\langle \Psi_j, \phi(x_i) \rangle = (K c_j)_i`; computed blockwise when omitted.
    return_info : bool, default=True
        Return ``(Z, info)`` rather than ``Z`` alone.

    Returns
    -------
    Z : ndarray of shape (m, d) (or (d,) for a single target)
    info : dict
        ``n_iter`` (zeros), ``converged`` (all True), ``objective``
        (:math:`\|\phi(z) - \Psi\|^2` from kernels).

    References
    ----------
    J. T. Kwok, I. W. Tsang, "The pre-image problem in kernel methods", IEEE TNN 15(6), 2004.
    """
    coefs, points, single = _check_targets(coefs, points)
    kernel = make_kernel(kernel)
    if kernel.name not in DIFFERENTIABLE_KERNELS:
        raise ValueError(
            f"the MDS pre-image converts kernel values to distances, which needs one of the kernels "
            f"{DIFFERENTIABLE_KERNELS}; got {kernel.name!r}"
        )
    n_neighbors = check_int(n_neighbors, "n_neighbors", minimum=1)
    return_info = check_bool(return_info, "return_info")
    ctc = _ctc(kernel, coefs, points, ctc)
    dots = _dots(kernel, coefs, points, dots)
    D2 = _input_sq_distances(kernel, dots, ctc, points)
    Z = np.vstack([_mds_point(points, D2[j], n_neighbors) for j in range(coefs.shape[0])])
    if not return_info:
        return Z[0] if single else Z
    m = coefs.shape[0]
    obj = kernel.diag(Z) - 2.0 * np.einsum("ij,ij->i", kernel(Z, points), coefs) + ctc
    info = {"n_iter": np.zeros(m, dtype=int), "converged": np.ones(m, dtype=bool), "objective": obj}
    if single:
        return Z[0], {k: v[0] for k, v in info.items()}
    return Z, info


# ----------------------------------------------------------------------- dispatcher
def solve_preimages(coefs, points, kernel, *, method, init=None, ctc=None, dots=None, n_neighbors=10,
                    max_iter=500, tol=1e-6, restart="nearest"):
    r"""Pre-images of expansions :math:`\Psi_j = \sum_i c_{ji}\, \phi(p_i)` (``coefs``, ``points``) by one method.

    The targets are solved in blocks whose ``(block, n)`` kernel arrays fit
    ``kpm.get_config()['block_bytes']``.

    Parameters
    ----------
    coefs : array-like of shape (m, n)
    points : array-like of shape (n, d)
    kernel : Kernel or str
    method : {'fixed-point', 'gradient', 'mds'}
        :func:`gaussian_fixed_point` (Gaussian kernel only), :func:`gradient_preimage` or
        :func:`mds_preimage`.
    init : array-like of shape (m, d), optional
        Starting points of the iterative methods; default: the MDS pre-images (Kwok & Tsang
        2004). Not used by ``'mds'`` (an error if given).
    ctc : array-like of shape (m,), optional
        :math:`\|\Psi_j\|^2`; computed blockwise when omitted.
    dots : array-like of shape (m, n), optional
        :math:`\langle \Psi_j, \phi(p_i) \rangle` for the MDS pre-images; computed blockwise when omitted.
    n_neighbors : int, default=10
        Neighbours of the MDS pre-image.
    max_iter, tol : int, float
        Iteration cap and tolerance of the iterative methods.
    restart : {'nearest', 'best'}, default='nearest'
        Restart rule of the fixed-point iteration (:func:`gaussian_fixed_point`).

    Returns
    -------
    Z : ndarray of shape (m, d)
    info : PreimageInfo
    """
    method = check_option(method, "method", PREIMAGE_METHODS[:3])
    coefs, points, _ = _check_targets(coefs, points)
    if coefs.ndim != 2:
        raise ValueError(f"coefs must be 2-D (one target per row), got shape {coefs.shape}")
    kernel = _check_preimage_kernel(make_kernel(kernel), method)
    m, n = coefs.shape
    d = points.shape[1]
    if init is not None:
        if method == "mds":
            raise ValueError("init is the start of the iterative pre-images; the MDS pre-image has none")
        init = check_matrix("init", init)
        if init.shape != (m, d):
            raise ValueError(f"init must have shape (n_targets, n_features) = ({m}, {d}), got {init.shape}")
    ctc = _ctc(kernel, coefs, points, ctc)
    if dots is not None:
        dots = _dots(kernel, coefs, points, dots)
    # a few (block, n) float64 arrays per block of targets
    step = max(1, int(get_config()["block_bytes"] // (8 * 4 * max(n, d))))
    Z = np.empty((m, d))
    info = PreimageInfo(n_iter=np.zeros(m, dtype=int), converged=np.ones(m, dtype=bool), objective=np.empty(m))
    for a in range(0, m, step):
        rows = slice(a, min(a + step, m))
        Z[rows], block = _preimage_block(
            method, coefs[rows], points, kernel, ctc[rows], None if init is None else init[rows],
            None if dots is None else dots[rows], n_neighbors=n_neighbors, max_iter=max_iter, tol=tol,
            restart=restart)
        info.n_iter[rows], info.converged[rows], info.objective[rows] = (
            block["n_iter"], block["converged"], block["objective"])
    return Z, info


def _check_preimage_kernel(kernel, method):
    """``kernel``, if ``method`` can find its pre-images."""
    if method == "fixed-point" and kernel.name != "rbf":
        raise ValueError(
            f"the fixed-point pre-image is the Gaussian kernel's iteration; kernel {kernel.name!r} "
            "needs method 'gradient' or 'mds'"
        )
    if kernel.name not in DIFFERENTIABLE_KERNELS:
        raise ValueError(
            f"the {method} pre-image needs one of the kernels {DIFFERENTIABLE_KERNELS}, got {kernel.name!r}"
        )
    return kernel


def _preimage_block(method, C, points, kernel, c2, init, dots, *, n_neighbors, max_iter, tol, restart):
    """One block of targets of :func:`solve_preimages`: the MDS pre-images (the start of the
    iterative methods when ``init`` is None), then the iteration; ``(Z, info dict)``."""
    if method == "mds" or init is None:
        z0, info = mds_preimage(C, points, kernel, n_neighbors=n_neighbors, ctc=c2, dots=dots)
    else:
        z0 = init
    if method == "fixed-point":
        return gaussian_fixed_point(C, points, kernel.gamma, z0, max_iter=max_iter, tol=tol, restart=restart, ctc=c2)
    if method == "gradient":
        return gradient_preimage(C, points, kernel, z0, max_iter=max_iter, tol=tol, ctc=c2)
    return z0, info
