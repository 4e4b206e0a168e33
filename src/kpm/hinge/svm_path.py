"""The soft-margin SVM restricted to the KPM's subspaces, solved along D (the KPM's 'svm' formulation).

This goes beyond the KPM papers (Blanchard, Massart, Vert & Zwald 2004; Zwald &
Blanchard 2005), which minimise the unregularised hinge risk over ``S_D``. Here, with
``Phi_D = [sqrt(lambda_1) V_1, ..., sqrt(lambda_D) V_D]`` the kernel-PCA features of
the training points (``K = sum_j lambda_j V_j V_j^T``, so ``Phi_r Phi_r^T = K`` at the
rank r), each D solves

    min_{w, b}  1/2 (|w|^2 + b^2 / B^2) + C sum_i max(0, 1 - y_i (w . Phi_D(x_i) + b)),

the intercept being the weight of a constant feature of value ``B`` (LIBLINEAR's
convention; ``B = 1``): at D = r this is the kernel SVM with the kernel ``k + B^2``
and no separate intercept. Its dual is a box-constrained QP,

    max_{0 <= alpha <= C}  sum_i alpha_i - 1/2 |sum_i alpha_i y_i [Phi_D(x_i), B]|^2,

solved by dual coordinate descent (Hsieh, Chang, Lin, Keerthi & Sundararajan, ICML
2008, Algorithm 1 with their shrinking), O(n D) per sweep over the points. Adding a
feature column leaves every ``alpha`` feasible, so the path along D is warm-started:
``w`` is recomputed from ``alpha`` for the new columns and the descent resumes.

The solutions are returned as :class:`kpm.hinge.lp_path.HingePath` objects in the KPM's
whitened coordinates: ``f(x) = sum_j beta_j Z_j(x) + b`` with ``Z_j = V_j^T k(x) /
lambda_j`` and ``beta_j = sqrt(lambda_j) w_j``, so the engine's curves and the
estimator's expansion ``alpha = V (beta / lambda)`` apply unchanged.

:func:`svm_paths` takes any feature columns ``Z`` and a ``scale`` per column such that
``Z * scale`` are the SVM's features, and returns the solutions in the coordinates of
``Z``: the KPM's eigenvectors with ``scale = sqrt(lambda)``, or
:class:`kpm.NystroemKPM`'s eigenfunctions ``F = K(x, Z) sqrt(m) U Lambda^{-1}`` with
``scale = sqrt(lambda / m)``, whose features have the Nyström approximation
``K(x, Z) U Lambda^{-1} U^T K(Z, x')`` of the kernel as their Gram matrix.

Sample weights (``sample_weight``) give each point its own ``C w_i`` (the dual's box
``0 <= alpha_i <= C w_i``), scikit-learn's convention: an integer weight is the same problem as
that many copies of the point. The objective reported in a path (``HingePath.objective``) is
then the weighted hinge sum and ``n_samples`` the sum of the weights.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kpm.blas_threads import small_blas
from kpm.hinge.lp_path import HingePath
from kpm.hinge.squared_hinge import SquaredHingeSVM

__all__ = ["BIAS_SCALE", "TOL", "MAX_SWEEPS", "C_PATH_MAX_SWEEPS", "LOSSES", "SVMPathSolver", "svm_solver",
           "svm_path", "solved_path", "svm_c_path", "svm_paths"]

#: The SVM's losses: the hinge (dual coordinate descent, :class:`SVMPathSolver`) and the
#: squared hinge (a finite Newton method, :class:`kpm.hinge.squared_hinge.SquaredHingeSVM`).
LOSSES = ("hinge", "squared_hinge")

#: ``B``: the value of the constant feature whose weight is the intercept.
BIAS_SCALE = 1.0
#: Stopping tolerance on the span of the dual's projected gradients (LIBLINEAR's default).
TOL = 0.1
#: Sweeps over the points per grid dimension at most: a dimension not converged by then
#: hands its iterate on as the warm start of the next (the path's last D keeps descending).
MAX_SWEEPS = 20
#: Sweeps at most per C of :func:`svm_c_path` (one dimension per C: no later grid point
#: resumes the descent, so it is given the sweeps a path spends on several dimensions).
C_PATH_MAX_SWEEPS = 200


@njit(cache=True)
def _dual_cd(Z, d, y, alpha, w, C, B, tol, max_sweeps, seed):
    """Dual coordinate descent with shrinking on the first ``d`` columns of ``Z``.

    ``w`` (length >= d + 1) holds ``sum_i alpha_i y_i Z_i[:d]`` in ``w[:d]`` and
    ``B sum_i alpha_i y_i`` in ``w[d]``; updated in place with ``alpha``. ``C`` holds each
    point's upper bound (``C w_i``). Stops when the projected gradients span less than
    ``tol``; returns the sweeps done.
    """
    n = Z.shape[0]
    np.random.seed(seed)
    qd = np.empty(n)
    for i in range(n):
        s = B * B
        for j in range(d):
            s += Z[i, j] * Z[i, j]
        qd[i] = s
    index = np.arange(n)
    active = n
    pg_max_old = np.inf
    pg_min_old = -np.inf
    sweeps = 0
    while sweeps < max_sweeps:
        pg_max = -np.inf
        pg_min = np.inf
        for s in range(active):
            t = s + np.random.randint(active - s)
            index[s], index[t] = index[t], index[s]
        s = 0
        while s < active:
            i = index[s]
            g = B * w[d]
            for j in range(d):
                g += Z[i, j] * w[j]
            g = y[i] * g - 1.0
            pg = 0.0
            if alpha[i] == 0.0:
                if g > pg_max_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if g < 0.0:
                    pg = g
            elif alpha[i] == C[i]:
                if g < pg_min_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if g > 0.0:
                    pg = g
            else:
                pg = g
            pg_max = max(pg_max, pg)
            pg_min = min(pg_min, pg)
            if abs(pg) > 1e-12:
                a = min(max(alpha[i] - g / qd[i], 0.0), C[i])
                delta = (a - alpha[i]) * y[i]
                alpha[i] = a
                for j in range(d):
                    w[j] += delta * Z[i, j]
                w[d] += delta * B
            s += 1
        sweeps += 1
        if pg_max - pg_min <= tol:
            if active == n:
                break
            active = n
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
        pg_min_old = pg_min if pg_min < 0.0 else -np.inf
    return sweeps


class SVMPathSolver:
    """The SVM of one problem along growing feature columns, warm-started.

    Parameters
    ----------
    Phi : ndarray (n, m)
        The features ``sqrt(lambda_j) V_j`` of the training points, columns in order.
    y : ndarray (n,)
        Labels in {-1, +1}.
    C : float
        The weight of the hinge loss.
    tol : float
        Stop when the projected gradients of the dual span less than this.
    max_sweeps : int
        Sweeps over the points per dimension at most.
    seed : int
        Seeds the order of the coordinates (the result is deterministic).
    sample_weight : ndarray (n,) of positive floats, optional
        Each point's weight: its box is ``0 <= alpha_i <= C w_i`` (default 1).
    """

    def __init__(self, Phi, y, C, *, tol=TOL, max_sweeps=MAX_SWEEPS, seed=0, sample_weight=None):
        self.Phi = np.ascontiguousarray(Phi, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.sample_weight = np.ones(len(self.y)) if sample_weight is None else np.asarray(sample_weight, float)
        self.C = float(C)
        self.tol, self.max_sweeps, self.seed = float(tol), int(max_sweeps), int(seed)
        self.alpha = np.zeros(len(self.y))
        self.sweeps = 0

    @property
    def work(self):
        """Sweeps over the points so far."""
        return self.sweeps

    def set_C(self, C):
        """Change C, scaling ``alpha`` by the ratio of the C values (feasible for the new box:
        the usual warm start along C of the dual)."""
        self.alpha *= float(C) / self.C
        self.C = float(C)

    def solve(self, d):
        """The solution on the first ``d`` columns: ``(w, b)`` with ``b = B w_bias``."""
        B = BIAS_SCALE
        ay = self.alpha * self.y
        w = np.empty(d + 1)
        w[:d] = ay @ self.Phi[:, :d]
        w[d] = B * ay.sum()
        self.sweeps += _dual_cd(self.Phi, d, self.y, self.alpha, w, self.C * self.sample_weight, B, self.tol,
                                self.max_sweeps, self.seed + d)
        return w[:d], B * w[d]


def svm_solver(Phi, y, C, *, loss="hinge", tol=TOL, max_sweeps=MAX_SWEEPS, seed=0, sample_weight=None):
    """The solver of one problem for a loss: :class:`SVMPathSolver` (``'hinge'``) or
    :class:`~kpm.hinge.squared_hinge.SquaredHingeSVM` (``'squared_hinge'``); both have
    ``solve(d)``, ``set_C(C)`` and ``work`` (sweeps, or Newton steps); ``tol`` and
    ``max_sweeps`` are the dual coordinate descent's; ``sample_weight`` gives each point's
    ``C w_i``."""
    if loss == "hinge":
        return SVMPathSolver(Phi, y, C, tol=tol, max_sweeps=max_sweeps, seed=seed, sample_weight=sample_weight)
    return SquaredHingeSVM(Phi, y, C, B=BIAS_SCALE, sample_weight=sample_weight)


def svm_path(Phi, sqrt_lam, y, C, grid, *, loss="hinge", tol=TOL, max_sweeps=MAX_SWEEPS, seed=0,
             sample_weight=None):
    """The SVM on ``Phi[:, :D]`` at every D of ``grid``, as a :class:`HingePath` in whitened coordinates.

    One solver (:func:`svm_solver`) along the grid, each D warm-started from the previous
    one; ``beta = sqrt_lam[:D] * w`` (see the module docstring); ``objective`` is the sum of
    the hinge losses (for either loss; weighted by ``sample_weight``), ``iterations`` the
    solver's work per D.
    """
    solver = svm_solver(Phi, y, C, loss=loss, tol=tol, max_sweeps=max_sweeps, seed=seed,
                        sample_weight=sample_weight)
    solutions, work = [], []
    with small_blas(int(grid[-1]) + 1):  # the solver's (D + 1) x (D + 1) systems
        for D in grid:
            before = solver.work
            solutions.append(solver.solve(int(D)))
            work.append(solver.work - before)
    return solved_path(solver, sqrt_lam, grid, solutions, work, sample_weight)


def solved_path(solver, sqrt_lam, grid, solutions, work, sample_weight=None):
    """The :class:`HingePath` of a solver's solutions ``(w, b)`` at the dimensions of
    ``grid``, as :func:`svm_path` returns it (``work``: the solver's work per D; the
    objective from the solver's features and labels, weighted by ``sample_weight``)."""
    m = int(grid[-1])
    coef = np.zeros((len(grid), m))
    intercept = np.zeros(len(grid))
    objective = np.zeros(len(grid))
    with small_blas(m + 1):  # one matrix-vector product per D
        for k, (D, (w, b)) in enumerate(zip(grid, solutions)):
            D = int(D)
            coef[k, :D] = sqrt_lam[:D] * w
            intercept[k] = b
            hinge = np.maximum(0.0, 1.0 - solver.y * (solver.Phi[:, :D] @ w + b))
            objective[k] = hinge.sum() if sample_weight is None else hinge @ sample_weight
    n_samples = len(solver.y) if sample_weight is None else float(np.sum(sample_weight))
    return HingePath(dims=np.asarray(grid), coef=coef, intercept=intercept, objective=objective,
                     n_samples=n_samples, iterations=np.asarray(work, dtype=np.int64))


def svm_c_path(Phi, y, Cs, *, loss="hinge", tol=TOL, max_sweeps=C_PATH_MAX_SWEEPS, seed=0, sample_weight=None):
    """The SVM on all columns of ``Phi`` for every C of the increasing ``Cs``: ``(W, b)``.

    ``W`` (len(Cs), m) and ``b`` (len(Cs),) are the weights of the features ``Phi`` and the
    intercepts. Each C starts from the previous C's solution (:meth:`SVMPathSolver.set_C`).
    ``sample_weight``: each point's ``C w_i``.
    """
    Cs = np.asarray(Cs, dtype=float)
    solver = svm_solver(Phi, y, Cs[0], loss=loss, tol=tol, max_sweeps=max_sweeps, seed=seed,
                        sample_weight=sample_weight)
    m = solver.Phi.shape[1]
    W, b = np.zeros((len(Cs), m)), np.zeros(len(Cs))
    with small_blas(m + 1):  # the solver's (m + 1) x (m + 1) systems
        for k, C in enumerate(Cs):
            solver.set_C(C)
            W[k], b[k] = solver.solve(m)
    return W, b


def svm_paths(Z, scale, Y, C, grid, *, loss="hinge", max_sweeps=MAX_SWEEPS, sample_weight=None):
    """One :func:`svm_path` per one-vs-rest problem (column of ``Y``) on the features
    ``Z[:, :D] * scale[:D]``, the coefficients in the coordinates of ``Z``."""
    m = int(grid[-1])
    s = np.asarray(scale[:m], dtype=float)
    Phi = Z[:, :m] * s
    return [svm_path(Phi, s, Y[:, c], C, grid, loss=loss, max_sweeps=max_sweeps, sample_weight=sample_weight)
            for c in range(Y.shape[1])]
