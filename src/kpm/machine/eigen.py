"""The exact KPM's basis: the eigenvectors of the kernel matrix, of the training set and of
each cross-validation fold.

:class:`EigenSubspace` is the :class:`kpm.spectral.EigenBasis` of one training kernel
matrix, cut at its rank, with the KPM's post-processing of the eigenvectors (below);
:class:`EigenFolds` is the fold source of the exact KPM's cross-validation
(:mod:`kpm.machine.folds`): each fold's training kernel matrix is decomposed anew, and
:func:`cv_lockstep` advances the folds' LP paths together (early stopping).

Choices where the papers leave room:

* Identical training inputs get exactly equal eigenvector rows (their mean), so that the
  unregularised LP cannot fit rounding noise between them; in the LP they are one row
  weighted by their number (per label).
* HiGHS ignores matrix entries below ``1e-9``; such entries of the eigenvectors are zeroed,
  so that the LP it solves is exactly the one whose solution is evaluated.

Sample weights ``w``: the basis is that of the training set with each sample repeated ``w_i``
times. The eigenvectors of the repeated set's kernel matrix are, on the repeated rows, those
of ``W^{1/2} K W^{1/2}`` divided by ``sqrt(w_i)``, with the same eigenvalues; the features of
new points are ``V^T W k(x) / lambda``. The fold sources then hold that weighted matrix
``W^{1/2} K W^{1/2}`` (``K`` below) and the weights, and the LPs and SVMs weigh each sample.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import linalg

from kpm.blas_threads import small_blas
from kpm.hinge.lp_path import HingeLP, PathGrower, hinge_lp_path
from kpm.machine.engine import (
    FoldCurves,
    FullPath,
    clipped_risk,
    decisions,
    misclassified,
    pad,
    path_width,
    predict_codes,
)
from kpm.machine.folds import Fold
from kpm.machine.progress import Progress
from kpm.machine.weights import lp_weights
from kpm.spectral import eigen_basis, numerical_rank, rounding_level
from kpm.machine.grids import auto_dim_grid
from kpm.validation import duplicate_groups

__all__ = [
    "EigenSubspace",
    "EigenFolds",
    "RitzFolds",
    "duplicate_groups",
    "lp_paths",
    "eigen_full_path",
    "cv_lockstep",
    "auto_dim_grid",
]

#: Eigenvector entries at or below this are zeroed (HiGHS's ``small_matrix_value``).
SMALL_ENTRY = 1e-9


def tie_duplicates(V, groups):
    """Make the eigenvector rows of identical samples exactly equal (their mean).

    For ``lambda_j > 0`` the rows are equal in exact arithmetic (identical kernel rows); the
    rounding noise between them (about 1e-13) would otherwise let the hinge LP "separate"
    duplicated points of opposite labels with coefficients of 1e9 and more, which ruins the
    decision function and HiGHS's numerics.
    """
    _, g = np.unique(groups, return_inverse=True)
    counts = np.bincount(g)
    if counts.max() == 1:
        return V
    sums = np.zeros((len(counts), V.shape[1]))
    np.add.at(sums, g, V)
    return sums[g] / counts[g][:, None]


class EigenSubspace:
    """The KPM's basis of one training kernel matrix: its :class:`kpm.spectral.EigenBasis`
    cut at the rank, the eigenvector rows of identical samples tied (:func:`tie_duplicates`)
    and entries at or below :data:`SMALL_ENTRY` zeroed.

    Attributes: ``V`` (the eigenvectors, the whitened coordinates of the training points),
    ``eigenvalues``, ``rank``, ``groups`` (duplicated samples, merged in the LPs),
    ``col_means`` (for centring), ``sample_weight``; :meth:`features` gives the whitened
    features of new points.

    With ``sample_weight`` (positive; uncentred only), ``K`` is the weighted matrix
    ``W^{1/2} K W^{1/2}`` and ``V`` its eigenvectors divided row by row by ``sqrt(w_i)``:
    the basis of the training set with each sample repeated ``w_i`` times (the module
    docstring).
    """

    def __init__(self, K, centered, n_components=None, random_state=None, groups=None, eigen_solver="auto",
                 eigen_tol=0.0, sample_weight=None):
        if groups is not None and n_components is not None:
            # identical samples: the rank is at most the number of distinct ones
            distinct = len(np.unique(groups))
            n_components = None if n_components >= distinct - 1 else n_components
        try:
            basis = eigen_basis(K, n_components, center=centered, solver=eigen_solver,
                                random_state=random_state, eigen_tol=eigen_tol).truncate()
        except RuntimeError:
            # an iterative solver asked for pairs past the numerical rank does not converge
            # (e.g. many near-duplicates): the whole spectrum by LAPACK instead
            basis = eigen_basis(K, None, center=centered, solver="dense").truncate()
            basis = basis.truncate(min(n_components, basis.rank))
        V = basis.eigenvectors
        self.groups = groups
        self.sample_weight = sample_weight
        if sample_weight is not None:
            V = V / np.sqrt(sample_weight)[:, None]
        if groups is not None:
            V = tie_duplicates(V, groups)
        # with the huge coefficients of near-separable paths such entries are not negligible
        V = np.where(np.abs(V) <= SMALL_ENTRY, 0.0, V)
        self.basis = replace(basis, eigenvectors=V)
        self.rank = basis.rank
        self.eigenvalues = basis.eigenvalues
        self.col_means = basis.col_means
        self.V = V

    def features(self, K_new, m):
        """Features ``V_j^T k(x) / lambda_j`` (j <= m) of new points from their kernel rows
        (``V_j^T W k(x) / lambda_j`` with sample weights)."""
        if self.sample_weight is not None:
            K_new = np.asarray(K_new, dtype=float) * self.sample_weight[None, :]
        return self.basis.features(K_new, m, whiten=True)

    @property
    def svm_scale(self):
        """``sqrt(lambda_j)``: the columns of ``V`` scaled by it are the kernel-PCA features."""
        return np.sqrt(self.eigenvalues)


def lp_paths(Z, Y, grid, solver="auto", groups=None, sample_weight=None):
    """One LP path per column of Y (one-vs-rest; binary: one column), solved on ``grid``; a
    path on which no solver solves some grid dimension ends before it (its ``failure`` says
    why). ``sample_weight`` weighs the slacks (:func:`lp_weights`)."""
    w = lp_weights(sample_weight)
    return [
        hinge_lp_path(Z, Y[:, c], int(grid[-1]), dims=grid, solver=solver, groups=groups, on_failure="stop",
                      sample_weight=w)
        for c in range(Y.shape[1])
    ]


@dataclass
class EigenFullPath:
    """The full-data LP paths on an :class:`EigenSubspace`: a ``(grid, Y) -> FullPath`` solver."""

    basis: EigenSubspace
    solver: str = "auto"

    def __call__(self, grid, Y):
        w = self.basis.sample_weight
        paths = lp_paths(self.basis.V[:, : int(grid[-1])], Y, grid, self.solver, self.basis.groups, w)
        return FullPath.from_paths(paths, self.basis.V, grid, Y, weights=w)


def eigen_full_path(basis, solver="auto"):
    """The full-data LP path solver of ``basis`` (:class:`EigenFullPath`)."""
    return EigenFullPath(basis, solver)


def fold_grid(grid, m):
    """The grid of a fold whose basis holds ``m`` columns: the grid's D <= m, then m."""
    g = grid[grid <= m]
    return g if len(g) and g[-1] == m else np.append(g, m)


@dataclass
class EigenFolds:
    """The exact KPM's cross-validation: a fold source (:mod:`kpm.machine.folds`) whose
    fold ``k`` decomposes the fold's training kernel matrix anew.

    Attributes
    ----------
    K : ndarray (n, n)
        The training kernel matrix.
    Y, codes : ndarray
        One-vs-rest targets (n, n_problems) and class codes (n,).
    splits : list of (train, val)
    grid : ndarray
        The estimator's D grid.
    centered : bool
        Eigenvectors of the centred kernel matrix.
    partial : bool
        Decompose the folds' kernel matrices up to the grid's end only (the largest D is
        known in advance), not the whole spectrum.
    groups : ndarray or None
        Duplicated samples' groups (:func:`duplicate_groups`).
    random_state, eigen_solver, lp_solver
        As the estimator's.
    sample_weight : ndarray or None
        The samples' weights; ``K`` is then the weighted matrix ``W^{1/2} K W^{1/2}``.
    """

    K: np.ndarray
    Y: np.ndarray
    codes: np.ndarray
    splits: list
    grid: np.ndarray
    centered: bool = False
    partial: bool = False
    groups: np.ndarray | None = None
    random_state: object = None
    eigen_solver: str = "auto"
    lp_solver: str = "auto"
    sample_weight: np.ndarray | None = None

    @property
    def n_folds(self):
        return len(self.splits)

    def subspace(self, k, partial=False):
        """Fold ``k``'s :class:`EigenSubspace` and the columns used, ``m`` (at most the
        grid's end and the fold's rank); ``partial``: only the eigenvectors up to the grid's
        end (when :attr:`partial` and that is below the fold's size)."""
        tr = self.splits[k][0]
        n_components = int(self.grid[-1]) if partial and self.partial else None
        if n_components is not None and n_components >= len(tr) - 1:
            n_components = None
        sub = EigenSubspace(
            self.K[np.ix_(tr, tr)], self.centered, n_components, random_state=self.random_state,
            groups=None if self.groups is None else self.groups[tr], eigen_solver=self.eigen_solver,
            sample_weight=self._weights(tr),
        )
        m = min(int(self.grid[-1]), sub.rank)
        if m < 1:
            raise ValueError("a cross-validation training fold has a kernel matrix of rank 0")
        return sub, m

    def _weights(self, rows):
        return None if self.sample_weight is None else self.sample_weight[rows]

    def val_kernel(self, va, tr):
        """The kernel rows of the validation points against the fold's training points
        (unweighted)."""
        K = self.K[np.ix_(va, tr)]
        if self.sample_weight is not None:
            s = np.sqrt(self.sample_weight)
            K = K / np.outer(s[va], s[tr])
        return K

    def fold(self, k):
        """Fold ``k``'s :class:`~kpm.machine.folds.Fold` on its eigenvectors (dimensions
        beyond the fold's rank: its grid ends at its rank)."""
        tr, va = self.splits[k]
        sub, m = self.subspace(k, partial=True)
        val = (sub.features(self.val_kernel(va, tr), m), self.Y[va], self.codes[va])
        weights = None if self.sample_weight is None else (self.sample_weight[tr], self.sample_weight[va])
        return Fold((sub.V[:, :m], self.Y[tr]), val, sub.svm_scale[:m], fold_grid(self.grid, m), f"fold {k}",
                    weights=weights)

    def lp_curves(self, k):
        """Fold ``k``'s :class:`~kpm.machine.engine.FoldCurves` of the papers' LP paths."""
        tr, va = self.splits[k]
        sub, m = self.subspace(k, partial=True)
        paths = lp_paths(sub.V[:, :m], self.Y[tr], fold_grid(self.grid, m), self.lp_solver, sub.groups,
                         self._weights(tr))
        w = path_width(paths)
        F_va = decisions(paths, sub.features(self.val_kernel(va, tr), w))  # (n_va, n_g, C)
        F_tr = decisions(paths, sub.V[:, :w])
        wrong = predict_codes(F_va) != self.codes[va][:, None]
        errors = misclassified(wrong, self._weights(va))
        return FoldCurves.from_paths(paths, errors, clipped_risk(F_tr, self.Y[tr], self._weights(tr)),
                                     len(self.grid), f"fold {k}")


@dataclass
class RitzFolds:
    """Cross-validation with each fold's basis found by Rayleigh-Ritz in the span of the
    training set's basis: a fold source (:mod:`kpm.machine.folds`) for the SVM formulation.

    Fold ``k``'s basis is made from its training points only, as the exact KPM's is, but
    without a new eigendecomposition: ``Q`` orthonormalises the fold's training rows of the
    training set's eigenvectors ``V`` (``m`` columns), and the eigenpairs of ``Q^T K_tr Q``
    give ``V_k = Q W`` and its eigenvalues -- the best approximation of the fold kernel
    matrix's leading eigenpairs within that span (Rayleigh-Ritz). One product ``K Q`` per
    fold instead of an eigendecomposition; the validation points are out of the fold's
    basis and get its Nyström features ``K_va,tr V_k / lambda_k``, as new points do.

    Attributes
    ----------
    K : ndarray (n, n)
        The training kernel matrix (with sample weights: ``W^{1/2} K W^{1/2}``).
    V : ndarray (n, m)
        The training set's eigenvectors (its basis).
    Y, codes, splits, grid, sample_weight
        As :class:`EigenFolds`. With weights the Rayleigh-Ritz runs on the weighted matrix
        in the span of ``W^{1/2} V`` (what the repeated samples give), and the fold's
        eigenvectors are divided by ``sqrt(w_i)`` as the training set's are.
    """

    K: np.ndarray
    V: np.ndarray
    Y: np.ndarray
    codes: np.ndarray
    splits: list
    grid: np.ndarray
    sample_weight: np.ndarray | None = None

    @property
    def n_folds(self):
        return len(self.splits)

    def fold(self, k):
        """Fold ``k``'s :class:`~kpm.machine.folds.Fold` on its Ritz basis (cut at its rank)."""
        tr, va = self.splits[k]
        m = min(int(self.grid[-1]), self.V.shape[1])
        s = None if self.sample_weight is None else np.sqrt(self.sample_weight)
        U = self.V[tr, :m] if s is None else self.V[tr, :m] * s[tr, None]
        q = linalg.qr(U, mode="economic", check_finite=False)[0]  # (n_tr, min(n_tr, m))
        Q = np.zeros((len(self.K), q.shape[1]))
        Q[tr] = q
        P = self.K @ Q  # rows tr: K_tr Q; rows va: K_va,tr Q
        lam, W = linalg.eigh(Q[tr].T @ P[tr], check_finite=False)
        lam, W = lam[::-1], W[:, ::-1]
        r = numerical_rank(lam, floor=rounding_level(len(tr), np.abs(self.K).max()))
        if r < 1:
            raise ValueError("a cross-validation training fold has a kernel matrix of rank 0")
        lam, W = lam[:r], W[:, :r]
        if s is None:
            val = ((P[va] @ W) / lam, self.Y[va], self.codes[va])
            return Fold((Q[tr] @ W, self.Y[tr]), val, np.sqrt(lam), fold_grid(self.grid, r), f"fold {k}")
        # K_va,tr W_tr V_k / lambda = (W^{1/2} K W^{1/2})_va,tr Q W / (sqrt(w_va) lambda)
        val = ((P[va] @ W) / s[va, None] / lam, self.Y[va], self.codes[va])
        return Fold(((Q[tr] @ W) / s[tr, None], self.Y[tr]), val, np.sqrt(lam), fold_grid(self.grid, r),
                    f"fold {k}", weights=(self.sample_weight[tr], self.sample_weight[va]))


class _LockstepFold:
    """One CV fold advanced together with the others: its basis, one :class:`PathGrower`
    per one-vs-rest problem, the decision values of the last solutions and the curves."""

    def __init__(self, folds, k):
        sub, self.m = folds.subspace(k)
        self.tr, self.va = folds.splits[k]
        self.V = sub.V[:, : self.m]
        self.Z_va = sub.features(folds.val_kernel(self.va, self.tr), self.m)
        Y = folds.Y
        w = folds.sample_weight
        self.w_tr = None if w is None else w[self.tr]
        self.w_va = None if w is None else w[self.va]
        lw = lp_weights(self.w_tr)
        n_samples = None if lw is None else float(lw.sum())
        self.growers = [PathGrower(HingeLP(Y[self.tr, c], solver=folds.lp_solver, groups=sub.groups, sample_weight=lw),
                                   self.V, n_samples=n_samples)
                        for c in range(Y.shape[1])]
        self.F_va = np.zeros((len(self.va), Y.shape[1]))
        self.F_tr = np.zeros((len(self.tr), Y.shape[1]))
        self.errors, self.clipped = [], []

    def advance(self, D, where):
        """Solve every unfrozen path at D (capped by the fold's rank); the failures."""
        D = min(int(D), self.m)
        failures = []
        for c, g in enumerate(self.growers):
            if g.at_floor or g.lp.n_cols >= D:
                continue
            if not g.step(D):
                failures.append({"path": where, "problem": c, "dim": D, "error": g.error})
                continue
            beta, b = g.last
            self.F_va[:, c] = self.Z_va[:, :D] @ beta + b
            self.F_tr[:, c] = self.V[:, :D] @ beta + b
        return failures

    def record(self, Y, codes):
        """Append this grid point's validation errors and clipped training risk; the errors."""
        err = misclassified(predict_codes(self.F_va) != codes[self.va], self.w_va)
        self.errors.append(err)
        self.clipped.append(float(clipped_risk(self.F_tr[:, None, :], Y[self.tr], self.w_tr)[0]))
        return err

    @property
    def frozen(self):
        """Every path at its floor or at the fold's rank: no later D changes the fold."""
        return all(g.at_floor or g.lp.n_cols >= self.m for g in self.growers)

    def curves(self, n_grid, n_used, failures):
        return FoldCurves(
            errors=pad(np.asarray(self.errors, dtype=float), n_grid),
            clipped=pad(np.asarray(self.clipped), n_grid),
            n_used=n_used,
            n_valid=n_used,
            fallbacks=sum(g.lp.fallbacks for g in self.growers),
            failures=failures,
        )


def cv_lockstep(folds, early_stopping=True, progress=None):
    """All folds' LP paths advanced together along the grid, with optional early stopping.

    Returns the folds' :class:`FoldCurves` (padded to the grid) and the number of grid
    points used. The sweep ends when every fold's paths are frozen (training hinge risk at
    its floor -- zero, or the loss forced by duplicated samples with both labels -- or the
    fold's rank: the CV curve is flat beyond, so no later D can win the tie-broken argmin)
    or, with ``early_stopping``, at the first grid D > 2 D_best + 20 (D_best the CV
    minimiser so far; a heuristic), or before a grid D that no solver solved on some fold
    (its ``failures``).
    """
    grid, Y, codes = folds.grid, folds.Y, folds.codes
    progress = progress or Progress()
    progress(f"cross-validation: the bases of {folds.n_folds} folds")
    steps = [_LockstepFold(folds, k) for k in range(folds.n_folds)]
    progress(f"cross-validation: the {folds.n_folds} folds' LP paths along D, together")
    best, best_D, n_used, failures = np.inf, None, len(grid), []
    with small_blas(int(grid[-1]) + 1):  # the simplex's (D + 1) x (D + 1) bases
        for gi, D in enumerate(grid):
            for k, fold in enumerate(steps):
                failures += fold.advance(D, f"fold {k}")
            if failures:  # the CV curve is defined on the solved grid points only
                n_used = gi
                break
            total = sum(fold.record(Y, codes) for fold in steps)
            progress(f"D={int(D)}: pooled CV errors {total:g}", level=2)
            if total < best:
                best, best_D = total, int(D)
            if all(fold.frozen for fold in steps) or (early_stopping and D > 2 * best_D + 20):
                n_used = gi + 1
                break
    curves = [
        fold.curves(len(grid), n_used, [f for f in failures if f["path"] == f"fold {k}"])
        for k, fold in enumerate(steps)
    ]
    return curves, n_used
