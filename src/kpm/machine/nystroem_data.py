"""The Nyström KPM's basis and its training data in memory.

* :func:`nystroem_eigenfunctions` -- the Nyström extension (Williams & Seeger 2001) of the
  eigenvectors of the landmark Gram matrix ``K(Z, Z) = U Λ Uᵀ`` (uncentred, as in the KPM
  of Blanchard, Massart, Vert & Zwald 2004): ``φ_j(x) = sqrt(m) / λ_j Σ_l U_lj k(z_l, x)``,
  normalised to unit mean square on the landmarks; ``φ_j`` converges to the eigenfunction
  of the kernel integral operator of which the exact KPM's Gram eigenvectors are the n-point
  version. The features of the training points are ``F = K(X, Z) P`` with ``P = sqrt(m)
  U_D Λ_D^{-1}``, computed block by block (:func:`feature_block`).
* :func:`landmark_residual` -- the share of the data's variance in feature space that the
  landmarks' span leaves out (what no D of the Nyström basis can use).
* :class:`NystroemBasis` -- landmarks, kernel, eigenfunctions and the D grid.
* :class:`InMemoryData` -- the features, targets, class codes and CV folds in memory: the
  fold source of the Nyström KPM's cross-validation (:mod:`kpm.machine.folds`) and the
  row source of its constraint generation; :class:`kpm.machine.dask_data.DaskRows` has the
  same methods for features on Dask workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from kpm.hinge.constraint_generation import ConstraintGenerationPath
from kpm.hinge.lp_path import grow_path
from kpm.exceptions import LPSolverError
from kpm.config import get_config
from kpm.kernels import make_kernel
from kpm.machine.dask_data import is_dask_array
from kpm.machine.engine import FoldCurves, FullPath, curve_sums
from kpm.machine.folds import Fold
from kpm.machine.grids import dim_grid
from kpm.machine.weights import default_gamma, lp_weights
from kpm.spectral import RANK_RTOL, eigen_basis, select_landmarks
from kpm.validation import (
    Real,
    check_int,
    check_kernel_matrix,
    check_param,
    check_sample_weight,
    check_samples,
    warn_if_degenerate_kernel,
)

__all__ = [
    "nystroem_eigenfunctions",
    "feature_block",
    "landmark_residual",
    "NystroemBasis",
    "InMemoryData",
    "ConstraintGenerationFullPath",
    "ROW_BLOCK",
    "RESIDUAL_ROWS",
    "nystroem_basis",
    "expansion_scores",
    "block_rows",
]

#: Rows of decision values evaluated at once (all D of the grid); 8192 raised the peak memory
#: of a fit with n = 3e5 by 0.3 GiB (blocks of MBs allocated in the fold threads).
ROW_BLOCK = 1024

#: Training rows (a uniform draw) on which ``landmark_residual_`` is estimated.
RESIDUAL_ROWS = 1000


def nystroem_eigenfunctions(kernel, Z, *, max_components=None, rank_tol=None, sample_weight=None):
    r"""Approximate eigenfunctions from the landmark Gram matrix.

    The Nyström extension (Williams & Seeger 2001) of the eigenvectors of ``K(Z, Z)``,
    from its :class:`kpm.spectral.EigenBasis` (uncentred, cut at the package's rank
    tolerance),

    .. math::

        \phi_j(x) = \frac{\sqrt m}{\lambda_j} \sum_l U_{lj}\, k(z_l, x),

    normalised to unit mean square on the landmarks.

    With ``sample_weight`` (the landmarks' weights ``w``, positive) the eigenfunctions are those
    of the weighted landmark Gram matrix :math:`W^{1/2} K(Z, Z) W^{1/2} = U \Lambda U^\top`:
    :math:`\phi_j(x) = \frac{\sqrt{\sum_l w_l}}{\lambda_j} \sum_l \sqrt{w_l}\, U_{lj}\, k(z_l, x)`, normalised to unit
    weighted mean square on the landmarks -- exactly the eigenfunctions of the landmark set
    with each landmark repeated ``w_l`` times, for integer weights.

    Parameters
    ----------
    kernel : kpm.kernels.Kernel
        A kernel on feature vectors (not ``'precomputed'``).
    Z : array-like (m, n_features)
        The landmarks.
    max_components : int, optional
        Most eigenfunctions returned (default: all up to the rank).
    rank_tol : float in (0, 1), optional
        Relative rank tolerance replacing :data:`kpm.spectral.RANK_RTOL` (the default):
        eigenvalues at or below ``rank_tol * λ_1``, or at the rounding level
        ``m eps max|K(Z, Z)|``, are dropped.
    sample_weight : array-like (m,), optional
        Positive weights of the landmarks (default: all 1).

    Returns
    -------
    eigenvalues : ndarray (r,)
        Eigenvalues of ``K(Z, Z)`` above the rank cut (decreasing), at most
        ``max_components`` of them.
    projection : ndarray (m, r)
        :math:`P = \sqrt m\, U \Lambda^{-1}` (with weights
        :math:`\sqrt{\textstyle\sum_l w_l}\, W^{1/2} U \Lambda^{-1}`): the features
        of x are ``K(x, Z) @ P``.

    Warns
    -----
    DegenerateKernelWarning
        When ``K(Z, Z)`` is numerically the identity or constant (a kernel width far
        from the scale of the data).
    """
    from kpm.kernels import Kernel

    if not isinstance(kernel, Kernel) or kernel.is_precomputed:
        raise ValueError(
            "kernel must be a kpm.kernels.Kernel on feature vectors (see kpm.make_kernel), got "
            f"{kernel!r}"
        )
    rank_tol = check_param(rank_tol, "rank_tol", [Real(0, 1, "neither"), None])
    Z = check_samples(Z, "Z")
    m = len(Z)
    k = m if max_components is None else min(m, check_int(max_components, "max_components"))
    Wm = kernel(Z, Z)
    if kernel.user_defined:  # the built-in kernels are symmetric by construction
        Wm = check_kernel_matrix(Wm, f"the landmark kernel matrix K(Z, Z) of the {kernel.name} kernel")
    warn_if_degenerate_kernel(Wm, "NystroemKPM: the landmark kernel matrix K(Z, Z)")
    s = None
    if sample_weight is not None:
        w = check_sample_weight(sample_weight, m, who="nystroem_eigenfunctions")
        if np.any(w == 0):
            raise ValueError("nystroem_eigenfunctions: sample_weight must be positive (one weight per landmark): "
                             "leave a landmark of weight 0 out")
        s = np.sqrt(w)
        Wm = Wm * np.outer(s, s)
    # only the top k (LAPACK subset eigh)
    basis = eigen_basis(Wm, None if k == m else k, solver="dense", rtol=RANK_RTOL if rank_tol is None else rank_tol)
    if not basis.eigenvalues[0] > 0:
        raise ValueError("the landmark kernel matrix K(Z, Z) has no positive eigenvalue")
    basis = basis.truncate()
    lam = basis.eigenvalues
    if s is None:
        return lam, basis.eigenvectors * (np.sqrt(m) / lam)[None, :]
    return lam, basis.eigenvectors * s[:, None] * (np.sqrt(float(np.sum(w))) / lam)[None, :]


def feature_block(Xb, Z, P, kernel):
    """``K(Xb, Z) @ P`` (kernel values checked: overflow is a clear error)."""
    return kernel.matvec(Xb, P, Z)


def feature_block_f(Xb, Z, P, kernel):
    """:func:`feature_block` in Fortran order (the constraint generation slices columns)."""
    return np.asfortranarray(feature_block(Xb, Z, P, kernel))


def landmark_residual(kernel, Z, X, rank_tol=None):
    """Share of the variance of the rows of ``X`` in feature space outside the span of the
    landmarks' features ``φ(z_1..z_m)``, the most any Nyström basis on ``Z`` can use:

    ``Σ_i (k(x_i, x_i) - k_Z(x_i)ᵀ K(Z, Z)⁺ k_Z(x_i)) / Σ_i (k(x_i, x_i) - ||μ||²)``,

    the numerator the squared distances of the ``φ(x_i)`` to that span (the Nyström
    approximation error of the kernel's diagonal), the denominator their squared distances
    to their mean ``μ`` (``||μ||²`` by the mean of the off-diagonal ``k(x_i, x_j)``). Clipped
    to [0, 1]; 0 where the rows have no variance. ``K(Z, Z)⁺`` is applied through a Cholesky
    factor of ``K(Z, Z)`` plus ``rank_tol`` (default :data:`kpm.spectral.RANK_RTOL`) times its
    trace on the diagonal, which can only enlarge the residual by that relative amount.
    Returns None where that factor does not exist (a kernel that is not positive
    semi-definite on ``Z``).
    """
    Kzz = kernel(Z)
    jitter = (RANK_RTOL if rank_tol is None else rank_tol) * max(float(np.trace(Kzz)), np.finfo(float).tiny)
    try:
        L = scipy.linalg.cholesky(Kzz + jitter * np.eye(len(Z)), lower=True)
    except np.linalg.LinAlgError:
        return None
    diag = kernel.diag(X)
    A = scipy.linalg.solve_triangular(L, kernel(X, Z).T, lower=True, check_finite=False)
    residual = np.maximum(diag - np.einsum("ij,ij->j", A, A), 0.0)
    s = len(X)
    Kxx = kernel(X)
    mean_sq = (Kxx.sum() - np.trace(Kxx)) / (s * (s - 1)) if s > 1 else float(diag[0])
    total = float(diag.mean() - mean_sq)
    if not total > 1e-12 * max(float(np.abs(diag).mean()), np.finfo(float).tiny):
        return 0.0
    return float(np.clip(residual.mean() / total, 0.0, 1.0))


@dataclass
class NystroemBasis:
    """Landmarks, kernel and Nyström eigenfunctions (``K(x, Z) @ projection``) with the D grid;
    ``mass``: the landmarks' number (the sum of their weights with sample weights);
    ``capped``: the grid ends below the rank of the landmark Gram matrix; ``residual``: the
    :func:`landmark_residual` of the training data (None where it was not computed)."""

    indices: np.ndarray
    landmarks: np.ndarray
    kernel: object
    eigenvalues: np.ndarray
    projection: np.ndarray
    grid: np.ndarray
    mass: float | None = None
    capped: bool = False
    residual: float | None = 0.0

    @property
    def svm_scale(self):
        """``sqrt(lambda_j / m)``: the eigenfunction columns scaled by it have the Nyström
        kernel ``K(x, Z) U Λ^{-1} U^T K(Z, x')`` as their inner product (``formulation='svm'``;
        ``m`` the landmarks' total weight with sample weights)."""
        mass = len(self.indices) if self.mass is None else self.mass
        return np.sqrt(self.eigenvalues[: self.projection.shape[1]] / mass)

    def features(self, X, rows, order="F"):
        """``K(X, Z) P`` in memory, blockwise in blocks of ``rows`` rows (Fortran order, as the
        constraint generation slices columns; ``order='C'`` for the SVM's row-wise solvers)."""
        n = X.shape[0]
        F = np.empty((n, self.projection.shape[1]), order=order)
        for start in range(0, n, rows):
            sl = slice(start, min(start + rows, n))
            F[sl] = feature_block(X[sl], self.landmarks, self.projection, self.kernel)
        return F


def nystroem_basis(est, X, seeds, plan, weights=None):
    """The Nyström basis of an estimator's parameters (``n_landmarks``, ``landmarks``, the
    kernel's, ``max_components``, ``rank_tol``, ``n_components_grid``): landmarks drawn with
    ``seeds[0]`` from the training points ``X`` (numpy or Dask), kernel (data-dependent widths
    from a uniform subsample of at most 10,000 rows, ``seeds[1]``), eigenfunctions and the D
    grid of the fit's ``plan`` (:class:`NystroemBasis`; with ``weights`` the landmarks carry
    theirs)."""
    n = X.shape[0]
    dask_X = is_dask_array(X)
    m = min(est.n_landmarks, n)
    sub = np.arange(n)
    if n > m:  # data-dependent widths from a uniform subsample
        sub = np.sort(np.random.default_rng(int(seeds[1])).choice(n, min(n, 10000), replace=False))
    Xs = X[sub]
    if dask_X:
        Xs = check_samples(Xs.compute())
    if weights is None:
        kernel = est._make_kernel(Xs)
    else:
        kernel = make_kernel(est.kernel, sigma=est.sigma, degree=est.degree, coef0=est.coef0,
                             gamma=default_gamma(est, est.kernel, Xs, weights[sub]),
                             kernel_params=est.kernel_params, X=Xs)
    if kernel.is_precomputed:
        raise ValueError("NystroemKPM needs feature vectors: kernel='precomputed' is not supported")
    idx = select_landmarks(X, m, est.landmarks, int(seeds[0]), kernel=kernel)
    Z = X[idx]
    if dask_X:
        Z = check_samples(Z.compute())
    # one eigenpair more than max_components (where there is one) tells whether the rank passes it
    largest = m if est.max_components is None else est.max_components
    k = largest + 1 if largest < m else largest
    lam, P = nystroem_eigenfunctions(kernel, Z, max_components=k, rank_tol=est.rank_tol,
                                     sample_weight=None if weights is None else weights[idx])
    capped = len(lam) > largest
    lam, P = lam[:largest], P[:, :largest]
    rule = plan.rule
    grid = (_fixed_grid(est, rule.fixed_dim, len(lam), plan.formulation) if rule.fixed_dim is not None
            else _grid(est, len(lam), plan.formulation))
    mass = None if weights is None else float(weights[idx].sum())
    residual = 0.0  # every training point a landmark: the span holds the data
    if n > m:
        pick = np.random.default_rng([int(seeds[1]), 1]).choice(len(Xs), min(len(Xs), RESIDUAL_ROWS), replace=False)
        residual = landmark_residual(kernel, np.asarray(Z, dtype=float), Xs[np.sort(pick)], est.rank_tol)
    return NystroemBasis(idx, np.asarray(Z, dtype=float), kernel, lam, P[:, : grid[-1]], grid, mass,
                         capped and rule.fixed_dim is None and grid[-1] == len(lam), residual)

def _grid(est, r, formulation):
    return dim_grid(est.n_components_grid, r, formulation, every_lp_dim=False,
                    what=f"every value of n_components_grid exceeds the rank {r} of the landmark Gram matrix")

def _fixed_grid(est, d, r, formulation):
    """The grid of a fixed D: the grid's dimensions below it, then D."""
    if d > r:
        raise ValueError(
            f"selection={est.selection} (a fixed D) is larger than the {r} eigenfunctions kept "
            f"(max_components={est.max_components}, eigenvalues above rank_tol * lambda_1 of the "
            "landmark Gram matrix)"
        )
    grid = _grid(est, r, formulation)
    grid = grid[grid < d]
    return np.append(grid, d).astype(int)


def expansion_scores(X, landmarks, A, kernel, rows):
    """``K(X, Z) @ A`` for the kernel expansion ``A`` (m, n_problems) on the landmarks ``Z``,
    computed in blocks of ``rows`` rows of kernel values."""
    F = np.empty((len(X), A.shape[1]))
    for start in range(0, len(X), rows):
        sl = slice(start, min(start + rows, len(X)))
        F[sl] = feature_block(X[sl], landmarks, A, kernel)
    return F


def block_rows(memory_budget, m, D):
    """Rows of kernel values against ``m`` landmarks (with ``D`` features) computed at once within
    ``memory_budget`` bytes (None: ``kpm.get_config()['block_bytes']``), which must also hold
    the ``m x m`` landmark Gram matrix and its eigenvectors."""
    budget = int(get_config()["block_bytes"]) if memory_budget is None else memory_budget
    per_row = 8 * (3 * m + D)  # distances/kernel block (+ temporaries) and the feature row
    rows = budget // per_row
    if rows < 1:
        raise ValueError(
            f"memory_budget={budget} bytes is too small for one block: one row of {m} kernel "
            f"values needs {per_row} bytes; raise memory_budget or lower n_landmarks"
        )
    if 8 * 2 * m * m > budget:
        raise ValueError(
            f"memory_budget={budget} bytes is too small for the {m} x {m} landmark Gram matrix "
            f"and its eigenvectors ({16 * m * m} bytes); raise memory_budget or lower n_landmarks"
        )
    return int(rows)


def grow_paths(solvers, columns, grid):
    """One path per solver (one-vs-rest problem) on the grid, grown by the KPM's path loop
    (:func:`kpm.hinge.lp_path.grow_path`)."""
    return [grow_path(s, columns, grid, n_samples=s.n_samples) for s in solvers]


@dataclass
class InMemoryData:
    """The training features ``F``, one-vs-rest targets ``Y``, class codes and CV splits in
    memory, with the D grid, the SVM's feature scale, the constraint generation's
    settings (``cg_options``, keyword arguments of
    :class:`kpm.hinge.constraint_generation.ConstraintGenerationHingeLP`), the samples'
    weights (None: unweighted), the basis, the pooled CV error's denominator (``cv_total``,
    None: the points), ``loo``: D and C by the leave-one-out error, which leaves the
    copies of a sample (``loo_groups``, None: one point at a time) out together, and the
    seconds of the data's phases (:class:`kpm.machine.family.FitData`); ``stream``: all the
    training points where these are the subsample of a streamed fit
    (:class:`kpm.machine.streamed.StreamedFit`)."""

    F: np.ndarray
    Y: np.ndarray
    codes: np.ndarray
    splits: list | None
    grid: np.ndarray
    scale: np.ndarray
    cg_options: dict = field(default_factory=dict)
    weights: np.ndarray | None = None
    basis: NystroemBasis | None = None
    cv_total: float | None = None
    loo: bool = False
    loo_groups: np.ndarray | None = None
    phases: dict = field(default_factory=dict)
    stream: object = None

    @property
    def n(self):
        return self.F.shape[0]

    @property
    def columns(self):
        return self.F

    @property
    def n_problems(self):
        return self.Y.shape[1]

    @property
    def n_folds(self):
        return 0 if self.splits is None else len(self.splits)

    def _total(self, rows):
        return len(rows) if self.weights is None else float(self.weights[rows].sum())

    def val_sizes(self):
        """Each fold's validation points (their weight with sample weights); the leave-one-out
        error's one "fold" validates every point."""
        if self.loo:
            return [self._total(np.arange(self.n))]
        return None if self.splits is None else [self._total(va) for _, va in self.splits]

    def solvers(self, fold=None):
        """Constraint-generation path solvers of every problem (a fold's training points)."""
        rows = None if fold is None else self.splits[fold][0]
        return [ConstraintGenerationPath(self.F, self.Y[:, c], rows=rows, sample_weight=lp_weights(self.weights),
                                         **self.cg_options)
                for c in range(self.n_problems)]

    def fold_sizes(self, fold):
        """Training and validation points of a fold (their weights with sample weights)."""
        return self._total(self.splits[fold][0]), self._total(self.splits[fold][1])

    def fold_curve_sums(self, paths, fold):
        """Misclassified validation points and ``n_train *`` the clipped training risk of a
        fold's paths on their grid (weighted with sample weights)."""
        train, val = self.splits[fold]
        errors, _ = curve_sums(paths, self.F, self.Y, self.codes, val, ROW_BLOCK, self.weights)
        _, clipped = curve_sums(paths, self.F, self.Y, None, train, ROW_BLOCK, self.weights)
        return errors, clipped

    def full_path(self, paths, grid, Y):
        return FullPath.from_paths(paths, self.F, grid, Y, row_block=ROW_BLOCK, weights=self.weights)

    def fold(self, k):
        """Fold ``k``'s :class:`~kpm.machine.folds.Fold`: its training and validation rows of
        the features (the landmarks' eigenfunctions, not re-decomposed)."""
        tr, va = self.splits[k]
        weights = None if self.weights is None else (self.weights[tr], self.weights[va])
        return Fold((self.F[tr], self.Y[tr]), (self.F[va], self.Y[va], self.codes[va]), self.scale, self.grid,
                    f"fold {k}", ROW_BLOCK, weights)

    def lp_curves(self, k):
        """Fold ``k``'s curves of the papers' LP by constraint generation (:func:`lp_fold_curves`)."""
        return lp_fold_curves(self, k)


def lp_fold_curves(data, k):
    """The papers' LP paths of fold ``k`` on its training points, by constraint generation,
    and their curves: the validation errors and the clipped training risks on the grid
    (``data``: :class:`InMemoryData` or :class:`kpm.machine.dask_data.DaskRows`). The paths
    end where no LP solver solves a dimension (the curves say where, ``failures`` why)."""
    grid = data.grid
    solvers = data.solvers(k)
    try:
        paths = grow_paths(solvers, data.columns, grid)
    except LPSolverError as exc:
        raise LPSolverError(
            f"NystroemKPM: no LP solver solved the smallest dimension D={grid[0]} of "
            f"cross-validation fold {k}: {exc}"
        ) from exc
    errors, clipped = data.fold_curve_sums(paths, k)
    curves = FoldCurves.from_paths(paths, errors, clipped / data.fold_sizes(k)[0], len(grid), f"fold {k}")
    curves.working_set = sum(len(s.cg.working_set) for s in solvers)
    return curves


@dataclass
class ConstraintGenerationFullPath:
    """The full-data LP paths by constraint generation on the training data (in memory or on
    Dask workers): a ``(grid, Y) -> FullPath`` solver for
    :class:`kpm.machine.engine.KernelPaths`; keeps the last solvers (their statistics become
    ``lp_stats_``)."""

    data: object
    solvers: list = field(default_factory=list)

    def __call__(self, grid, Y):
        self.solvers = self.data.solvers()
        paths = grow_paths(self.solvers, self.data.columns, grid)
        return self.data.full_path(paths, grid, Y)


def lp_stats(solvers, folds):
    """``lp_stats_`` of the papers' LP: working sets, rounds, certificate gaps and iterations
    of the full-data path (lists over its dimensions; one list per one-vs-rest problem with
    several classes), and the folds' seconds and working-set sizes."""
    keys = ("n_working", "n_aggregated", "n_rounds", "gap", "simplex_iterations")
    per_problem = {key: [[getattr(r, key) for r in s.results] for s in solvers] for key in keys}
    stats = {key: v[0] if len(v) == 1 else v for key, v in per_problem.items()}
    stats["cv_fold_seconds"] = [f.seconds for f in folds or []]
    stats["cv_fold_working_set"] = [f.working_set for f in folds or []]
    return stats


def svm_stats(paths, folds):
    """``lp_stats_`` of ``formulation='svm'``: the dual coordinate descent's sweeps over the
    points at each D of the full-data path (one list per one-vs-rest problem with several
    classes), and the folds' seconds."""
    sweeps = [p.iterations.tolist() for p in paths]
    return {"sweeps": sweeps[0] if len(sweeps) == 1 else sweeps,
            "cv_fold_seconds": [f.seconds for f in folds or []]}


def cv_error_table(kp, val_sizes, n):
    """``(cv_errors_, cv_error_)``: each fold's validation error rate and the pooled CV error
    on the grid, NaN from the first dimension a fold's paths did not reach; None without CV."""
    if kp.folds is None:
        return None, None
    n_grid = len(kp.grid)
    per_fold = np.vstack([
        np.where(np.arange(n_grid) < f.n_valid, f.errors / nv, np.nan) for f, nv in zip(kp.folds, val_sizes)
    ])
    ok = np.arange(n_grid) < min(f.n_valid for f in kp.folds)
    return per_fold, np.where(ok, sum(f.errors for f in kp.folds) / n, np.nan)
