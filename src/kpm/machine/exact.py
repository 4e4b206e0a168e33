"""The Kernel Projection Machine (Blanchard, Massart, Vert & Zwald, NIPS 2004).

Hinge-loss empirical risk minimisation over the nested subspaces
``S_D = span{1, V_1, ..., V_D}`` spanned by the leading eigenvectors of the
kernel matrix, with the dimension D chosen by cross-validation, by a penalty
``lam * D`` on the clipped hinge risk (Zwald & Blanchard 2005) or by the slope
heuristic. See :mod:`kpm.hinge.lp_path` (the LP path), :mod:`kpm.machine.rules` (the rules) and
:mod:`kpm.machine.selection` (the functions they apply).

A fit is basis x paths x rule (the engine, :mod:`kpm.machine.engine`, is shared with
:class:`kpm.NystroemKPM`): for each kernel the eigenvector basis of the kernel
matrix (:class:`_Subspace`) and the CV folds' paths (:class:`FoldCurves`), then the
full-data paths the rule needs (:class:`FullPath`), then the rule, applied to the
family's curves (:class:`kpm.machine.rules.ModelCurves`), then the chosen model's coefficients.

Choices where the papers leave room (all documented on the class):

* For D beyond the first dimension D0 at which the training hinge risk reaches its
  floor (zero, or the loss forced by duplicated inputs with both labels: no
  function does better) the LP has many optimal solutions; the path keeps the D0
  one (an optimal solution for every D >= D0), so the CV curve is flat beyond the
  largest fold D0 and, ties going to the smaller D, the sweep stops there without
  changing the selection.
* The CV error is pooled (misclassified validation points of all folds / n), so
  ties are exact; ties go to the smaller D.
* The penalty and slope rules use the clipped hinge risk ``R_n(clip f_D)`` of
  Zwald & Blanchard's eq. (3) (the algorithm summary of that paper writes the
  unclipped ``R_n(f_D)``; eq. (3) is the one followed). With several
  classes the risks are averaged over the one-vs-rest problems.
* Identical training inputs get exactly equal eigenvector rows (their mean), so
  that the unregularised LP cannot fit rounding noise between them; in the LP
  they are one row weighted by their number (per label).
"""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, check_cv
from sklearn.utils.validation import check_is_fitted

from kpm.base import KernelParamsMixin, validate_kernel_input, validate_kernel_input_y
from kpm.machine.engine import TIE_DECIMALS as _TIE_DECIMALS
from kpm.machine.engine import FoldCurves, FullPath, KernelPaths, check_rule_answerable, cv_extent, one_vs_rest
from kpm.machine.engine import clipped_risk as _clipped_risk
from kpm.machine.engine import decisions as _decisions
from kpm.machine.engine import model_curves as _model_curves
from kpm.machine.engine import pad as _pad
from kpm.machine.engine import path_width as _width
from kpm.machine.engine import predict_codes as _predict_codes
from kpm.machine.engine import check_selection_params, select_model, selection_curve
from kpm.hinge.lp_path import SOLVERS as LP_SOLVERS
from kpm.hinge.lp_path import HingeLP, HingePath, LPSolverError, PathGrower, hinge_lp_path
from kpm.kernels import make_kernel
from kpm.hinge.svm_path import MAX_SWEEPS as SVM_MAX_SWEEPS
from kpm.hinge.svm_path import TOL as SVM_TOL
from kpm.hinge.svm_path import DEFAULT_C, TWO_STAGE_MAX_SWEEPS, SVMFullPath, c_selection_curve, check_svm_params
from kpm.hinge.svm_path import max_sweeps_of, resolve_formulation, svm_c_errors, svm_c_grid, svm_fold_curves
from kpm.machine.rules import as_rule
from kpm.spectral.basis import check_eigen_solver, eigen_basis
from kpm.validation import (
    check_bool,
    check_int,
    check_kernel_matrix,
    check_option,
    kernel_degeneracy,
    warn_degenerate_kernel,
    warn_if_degenerate_model,
)

__all__ = ["KernelProjectionMachine", "LPSolverError", "DEFAULT_C", "TWO_STAGE_MAX_SWEEPS"]

_CV_DUPLICATES = ("warn", "split", "group")
#: D grid of ``formulation='svm'`` by default: every D up to 20, then steps of 25 %.
SVM_DIM_RATIO = 1.25
#: ``formulation='svm'``: the dual coordinate descent's tolerance and its sweeps per grid D
#: at most (:mod:`kpm.hinge.svm_path`), re-exported for the records of the reproductions.
SVM_SOLVER = {"tol": SVM_TOL, "max_sweeps": SVM_MAX_SWEEPS}


def _duplicate_groups(X, precomputed):
    """Group index of each sample (identical inputs -- or kernel rows -- share one); None if none."""
    A = np.ascontiguousarray(X)
    _, inv = np.unique(A, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    return None if inv.max() + 1 == len(inv) else inv


def _tie_duplicates(V, groups):
    """Make the eigenvector rows of identical samples exactly equal (their mean).

    For ``lambda_j > 0`` the rows are equal in exact arithmetic (identical kernel rows);
    the rounding noise between them (~1e-13) would otherwise let the hinge LP
    "separate" duplicated points of opposite labels with coefficients of 1e9 and more,
    which ruins the decision function and HiGHS's numerics (seen on 'image', which
    holds 69 duplicated patterns).
    """
    _, g = np.unique(groups, return_inverse=True)
    counts = np.bincount(g)
    if counts.max() == 1:
        return V
    sums = np.zeros((len(counts), V.shape[1]))
    np.add.at(sums, g, V)
    return sums[g] / counts[g][:, None]


_SMALL_ENTRY = 1e-9


class _Subspace:
    """The KPM's basis: the :class:`kpm.spectral.EigenBasis` of one training set, cut at
    the rank, with the KPM's post-processing of the eigenvectors.

    ``V`` (the whitened coordinates of the training points, the eigenvectors) has the
    rows of identical samples tied (:func:`_tie_duplicates`) and its entries at or below
    ``_SMALL_ENTRY`` zeroed; :meth:`features` are the whitened features of new points,
    ``V_j^T k(x) / lambda_j`` (the Nyström extension of ``V_j``). The paths use
    ``rank``, ``eigenvalues``, ``V``, ``groups``, ``col_means`` and :meth:`features`.
    """

    def __init__(self, K, centered, n_components=None, random_state=None, groups=None,
                 eigen_solver="auto"):
        basis = eigen_basis(K, n_components, center=centered, solver=eigen_solver,
                            random_state=random_state).truncate()
        V = basis.eigenvectors
        self.groups = groups  # duplicated samples: identical rows of V, merged in the LPs
        if groups is not None:
            V = _tie_duplicates(V, groups)
        # HiGHS ignores matrix entries below 1e-9 (small_matrix_value); zero them here so
        # that the LP it solves is exactly the one whose solution is evaluated (with the
        # huge coefficients of near-separable paths such entries are not negligible)
        V = np.where(np.abs(V) <= _SMALL_ENTRY, 0.0, V)
        self.basis = replace(basis, eigenvectors=V)
        self.rank = basis.rank
        self.eigenvalues = basis.eigenvalues
        self.col_means = basis.col_means
        self.V = V

    def features(self, K_new, m):
        """Features ``V_j^T k(x) / lambda_j`` (j <= m) of new points from their kernel rows."""
        return self.basis.features(K_new, m, whiten=True)


def _fit_paths(Z, Y, grid, solver="auto", groups=None):
    """One LP path per column of Y (one-vs-rest; binary: one column), solved on ``grid``.

    A path on which no solver solves some grid dimension ends before it (its
    ``failure`` says why); see :func:`_n_valid` and :func:`_failures`.
    """
    return [
        hinge_lp_path(Z, Y[:, c], int(grid[-1]), dims=grid, solver=solver, groups=groups, on_failure="stop")
        for c in range(Y.shape[1])
    ]


def _eigen_full_path(basis, solver):
    """The full-data paths on the eigenvector basis, by the exact solver: ``(grid, Y) -> FullPath``."""

    def solve(grid, Y):
        paths = _fit_paths(basis.V[:, : int(grid[-1])], Y, grid, solver, basis.groups)
        return FullPath.from_paths(paths, basis.V, grid, Y)

    return solve


def _full_path_solver(basis, formulation, lp_solver, C, max_sweeps=SVM_MAX_SWEEPS):
    """``(grid, Y) -> FullPath``: the full-data paths of a formulation on ``basis``."""
    if formulation == "paper":
        return _eigen_full_path(basis, lp_solver)
    return SVMFullPath(basis.V, np.sqrt(basis.eigenvalues), C, max_sweeps)


def _fold_grid(grid, m):
    """The grid of a fold whose basis holds ``m`` columns: the grid's D <= m, then m."""
    g = grid[grid <= m]
    return g if len(g) and g[-1] == m else np.append(g, m)


def _fold_subspace(K, tr, centered, grid, n_components, random_state, groups, eigen_solver):
    """``(subspace, m, fold grid)`` of a CV fold's training kernel; ``m`` = columns used.

    Dimensions beyond the fold's rank: the subspace cannot grow, the fold grid ends at ``m``
    (the last solution is kept for the larger D of the grid).
    """
    sub = _Subspace(
        K[np.ix_(tr, tr)], centered, n_components, random_state=random_state,
        groups=None if groups is None else groups[tr], eigen_solver=eigen_solver,
    )
    m = min(int(grid[-1]), sub.rank)
    if m < 1:
        raise ValueError("a cross-validation training fold has a kernel matrix of rank 0")
    return sub, m, _fold_grid(grid, m)


def _svm_fold_task(K, tr, va, Y, codes, centered, grid, Cs, n_components, random_state, groups=None, fold=0,
                   eigen_solver="auto", subspace=None, max_sweeps=SVM_MAX_SWEEPS):
    """The SVM paths of one CV fold for every C: one :class:`FoldCurves` per C.

    ``subspace``: the fold's ``(subspace, m, fold grid)`` if already computed."""
    if subspace is None:
        subspace = _fold_subspace(K, tr, centered, grid, n_components, random_state, groups, eigen_solver)
    sub, m, g = subspace
    val = (sub.features(K[np.ix_(va, tr)], m), Y[va], codes[va])
    return svm_fold_curves((sub.V[:, :m], Y[tr]), val, np.sqrt(sub.eigenvalues[:m]), g, Cs, len(grid),
                           f"fold {fold}", max_sweeps=max_sweeps)


def _svm_fold_c_errors(K, tr, va, Y, codes, centered, grid, Cs, n_components, random_state, groups=None,
                       eigen_solver="auto"):
    """Stage one of ``c_selection='two-stage'`` on one CV fold: the SVM at the fold's largest
    D (the kernel SVM where that is the fold's rank) for every C of the increasing ``Cs``.

    Returns the fold's ``(subspace, m, fold grid)`` (reused by stage two) and its
    misclassified validation points per C."""
    sub, m, g = _fold_subspace(K, tr, centered, grid, n_components, random_state, groups, eigen_solver)
    val = (sub.features(K[np.ix_(va, tr)], m), Y[va], codes[va])
    errors = svm_c_errors((sub.V[:, :m], Y[tr]), val, np.sqrt(sub.eigenvalues[:m]), Cs,
                          max_sweeps=TWO_STAGE_MAX_SWEEPS)
    return (sub, m, g), errors


def _fold_task(K, tr, va, Y, codes, centered, grid, n_components, random_state, groups=None, solver="auto",
               fold=0, eigen_solver="auto"):
    """Fit the paths of one CV fold; return its :class:`FoldCurves` on the grid."""
    sub, m, g = _fold_subspace(K, tr, centered, grid, n_components, random_state, groups, eigen_solver)
    paths = _fit_paths(sub.V[:, :m], Y[tr], g, solver, sub.groups)
    w = _width(paths)
    F_va = _decisions(paths, sub.features(K[np.ix_(va, tr)], w))  # (n_va, n_g, C)
    F_tr = _decisions(paths, sub.V[:, :w])
    errors = (_predict_codes(F_va) != codes[va][:, None]).sum(axis=0)
    return FoldCurves.from_paths(paths, errors, _clipped_risk(F_tr, Y[tr]), len(grid), f"fold {fold}")


class _LockstepFold:
    """One CV fold advanced together with the others: its basis, one :class:`PathGrower`
    per one-vs-rest problem, the decision values of the last solutions and the curves."""

    def __init__(self, K, tr, va, Y, centered, max_dim, random_state, groups, solver, eigen_solver="auto"):
        sub = _Subspace(
            K[np.ix_(tr, tr)], centered, random_state=random_state,
            groups=None if groups is None else groups[tr], eigen_solver=eigen_solver,
        )
        self.m = min(max_dim, sub.rank)
        if self.m < 1:
            raise ValueError("a cross-validation training fold has a kernel matrix of rank 0")
        self.tr, self.va = tr, va
        self.V = sub.V[:, : self.m]
        self.Z_va = sub.features(K[np.ix_(va, tr)], self.m)
        n_classes = Y.shape[1]
        self.growers = [PathGrower(HingeLP(Y[tr, c], solver=solver, groups=sub.groups), self.V)
                        for c in range(n_classes)]
        self.F_va = np.zeros((len(va), n_classes))
        self.F_tr = np.zeros((len(tr), n_classes))
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
        err = int((_predict_codes(self.F_va) != codes[self.va]).sum())
        self.errors.append(err)
        self.clipped.append(float(np.maximum(0.0, 1.0 - Y[self.tr] * np.clip(self.F_tr, -1, 1)).mean()))
        return err

    @property
    def frozen(self):
        """Every path at its floor or at the fold's rank: no later D changes the fold."""
        return all(g.at_floor or g.lp.n_cols >= self.m for g in self.growers)

    def curves(self, n_grid, n_used, failures):
        return FoldCurves(
            errors=_pad(np.asarray(self.errors, dtype=float), n_grid),
            clipped=_pad(np.asarray(self.clipped), n_grid),
            n_used=n_used,
            n_valid=n_used,
            fallbacks=sum(g.lp.fallbacks for g in self.growers),
            failures=failures,
        )


def _cv_lockstep(K, splits, Y, codes, centered, grid, early_stopping, random_state, groups=None, solver="auto",
                 eigen_solver="auto"):
    """All folds' paths advanced together along the grid, with optional early stopping.

    Returns the folds' :class:`FoldCurves` (padded to the grid) and the number of grid
    points used. The sweep ends when every fold's paths are frozen (training hinge risk
    at its floor -- zero, or the loss forced by duplicated samples with both labels --
    or the fold's rank: the CV curve is flat beyond, so no later D can win the
    tie-broken argmin) or, with ``early_stopping``, at the first grid D > 2 D_best + 20
    (D_best the CV minimiser so far; a heuristic), or before a grid D that no solver
    solved on some fold (its ``failures``).
    """
    folds = [_LockstepFold(K, tr, va, Y, centered, int(grid[-1]), random_state, groups, solver, eigen_solver)
             for tr, va in splits]
    best, best_D, n_used, failures = np.inf, None, len(grid), []
    for gi, D in enumerate(grid):
        for k, fold in enumerate(folds):
            failures += fold.advance(D, f"fold {k}")
        if failures:  # the CV curve is defined on the solved grid points only
            n_used = gi
            break
        total = sum(fold.record(Y, codes) for fold in folds)
        if total < best:
            best, best_D = total, int(D)
        if all(fold.frozen for fold in folds) or (early_stopping and D > 2 * best_D + 20):
            n_used = gi + 1
            break
    curves = [
        fold.curves(len(grid), n_used, [f for f in failures if f["path"] == f"fold {k}"])
        for k, fold in enumerate(folds)
    ]
    return curves, n_used


def auto_dim_grid(max_dim: int, dense: int = 20, ratio: float = 1.1) -> np.ndarray:
    """Every D up to ``dense``, then geometric steps of ``ratio`` up to ``max_dim``."""
    dims = list(range(1, min(dense, max_dim) + 1))
    while dims[-1] < max_dim:
        dims.append(min(max_dim, max(dims[-1] + 1, int(round(dims[-1] * ratio)))))
    return np.asarray(dims)


class KernelProjectionMachine(KernelParamsMixin, ClassifierMixin, BaseEstimator):
    """Kernel Projection Machine: hinge-loss ERM on kernel-PCA subspaces of chosen dimension.

    For each dimension D the classifier minimises the empirical hinge loss over
    ``f = sum_{j<=D} beta_j V_j + b`` where ``V_j`` are the eigenvectors of the
    (uncentred, as in the paper) kernel matrix -- a linear programme solved for
    the whole path ``D = 1..max_dim`` by a warm-started specialised simplex
    (HiGHS as fallback, or on request: ``lp_solver``) -- and returns
    ``f_D(x) = sum_i alpha_i k(x_i, x) + b`` with ``alpha = sum_j (beta_j/lambda_j) V_j``.
    The dimension is chosen by cross-validation (the NIPS 2004 paper), by a
    penalty ``lam * D`` on the clipped hinge risk, or by the slope heuristic
    (Zwald & Blanchard 2005).

    **The default goes beyond the papers where D is chosen by cross-validation**
    (``formulation='auto'`` with ``selection='cv'`` is ``formulation='svm'``): in each
    ``S_D`` it fits the soft-margin SVM instead of the unregularised hinge LP, because on
    Rätsch's 13 benchmarks the paper's KPM trails the CV-tuned SVM (by 3.9 points on
    'image', 1 point on average) and this formulation does not (see the user guide,
    "Beyond the papers", for the measurements). The penalty and slope rules and a fixed D
    keep the paper's LP, and ``formulation='paper'`` gives the papers' KPM with any rule.
    With the kernel-PCA features ``Phi_D(x) = (V_j^T k(x) / sqrt(lambda_j))_{j<=D}`` (on
    the training points ``sqrt(lambda_j) V_j``, so that ``Phi_r Phi_r^T = K`` at the rank
    r) the svm formulation solves::

        min_{w, b} 1/2 (|w|^2 + b^2) + C sum_i max(0, 1 - y_i (w . Phi_D(x_i) + b)),

    the intercept being the weight of a constant feature of value 1 (LIBLINEAR's
    convention). At ``D = r`` the problem is the kernel SVM with kernel ``k + 1`` and
    no separate intercept -- the same decision function as :class:`sklearn.svm.SVC`
    up to that intercept's small regularisation; smaller D restricts the SVM to the
    leading kernel-PCA directions. Every D of the grid is solved by dual coordinate
    descent warm-started from the previous D (:mod:`kpm.hinge.svm_path`). C and D are chosen
    by the same K-fold CV: by default C first, by the CV error of the SVM at the largest D
    (the kernel SVM), over ``numpy.logspace(-2, 3, 11)``, then D at that C
    (``c_selection``). See the user guide, "Beyond the papers".

    Parameters
    ----------
    kernel : str, callable, Kernel, or list, default='rbf'
        The kernel (see :func:`kpm.kernels.make_kernel`). A list of kernels, or of
        parameter dicts such as ``{'kernel': 'rbf', 'sigma': 2.0}``, searches the
        family ``{S_D(k)}`` over all kernels jointly (the paper's closing proposal);
        ``kernel_`` and ``kernel_index_`` report the winner.
    sigma, gamma : float, optional
        RBF width (``sigma``: ``exp(-|x-y|^2/(2 sigma^2))``, as in the KPM papers;
        ``'median'`` for the median heuristic) or ``gamma``. Default ``gamma='scale'``.
    degree, coef0 : float
        Polynomial / sigmoid parameters.
    kernel_params : dict, optional
        Extra kernel parameters.
    selection : {'cv', 'penalty', 'slope'}, int or SelectionRule, default='cv'
        How D is chosen: K-fold CV of the 0-1 error (ties -> smaller D); the
        penalised clipped hinge risk ``R_n(clip f_D) + lam D`` with ``lam =
        penalty``; the slope heuristic (``lam = slope_factor * lam_jump``); or a
        fixed D. Or a rule object of :mod:`kpm.machine.rules` (``CV()``, ``Penalty(lam)``,
        ``Slope(factor)``, ``FixedD(d)``, or a new one); :meth:`select_dim` tells which
        model another rule picks from a fitted model's curves.
    cv : int or CV splitter, default=5
        Folds for ``selection='cv'`` and ``penalty='cv'``. An int gives a shuffled
        :class:`~sklearn.model_selection.StratifiedKFold` seeded by ``random_state``.
    penalty : float or 'cv', default='cv'
        ``lam`` for ``selection='penalty'``; ``'cv'`` chooses it by cross-validation
        over the exact breakpoints of the folds' penalty paths.
    slope_factor : float, default=2.0
        Factor of the slope heuristic (Birgé-Massart's 2).
    max_dim : int, optional
        Largest D considered. Default: the numerical rank of the kernel matrix
        (eigenvalues above ``1e-10 lambda_1``, the rank cut of :mod:`kpm.spectral`):
        beyond it the eigenvectors are rounding noise and the Nyström extension would
        divide by eigenvalues at the rounding level.
        In practice the path also stops at the first D where the training hinge
        risk reaches its floor (zero, or the loss forced by duplicated inputs with
        both labels), beyond which every D has the same solution (see
        :mod:`kpm.hinge.lp_path`).
    dim_grid : None, 'auto' or list of int, default=None
        The dimensions at which the LP is solved and D selected: ``None`` every
        ``D = 1..max_dim`` (the papers' protocol); ``'auto'`` every D up to 20, then
        steps of 10 % (:func:`auto_dim_grid`); or an explicit list. Between grid
        points the path adds columns without solving (faster, but D off the grid
        can no longer be selected).
    early_stopping : bool, default=False
        Cross-validation only: advance the paths of all folds together and stop the
        sweep at the first D > 2 D_best + 20, D_best the CV minimiser so far (a
        heuristic: it can miss a later minimum). By default every D is solved up to
        the bound of :mod:`kpm.hinge.lp_path` (training risk at its floor in every fold), which
        provably cannot change the selection. With early stopping ``n_jobs`` is not used.
    centered : bool, default=False
        Use the eigenvectors of the centred kernel matrix (the paper: uncentred).
    formulation : {'auto', 'paper', 'svm'}, default='auto'
        ``'paper'``: the KPM of the papers, the hinge LP in every ``S_D``. ``'svm'``:
        the soft-margin SVM restricted to ``S_D`` (beyond the papers; see above), D and
        C chosen by cross-validation. ``'auto'``: ``'svm'`` when D is chosen by CV
        (``selection='cv'`` or ``CV()``, without ``early_stopping``), ``'paper'`` for
        every other rule (the penalty and slope rules are the theory of the LP's
        hinge risk minimisers, and cannot choose C); ``formulation_`` tells which ran.
        The svm formulation's default D grid is every D up to 20,
        then steps of 25 % up to the rank (:func:`auto_dim_grid`, ratio
        :data:`SVM_DIM_RATIO`), so that the rank -- the kernel SVM -- is a candidate.
        With ``'svm'``, ``lp_solver`` is unused and ``early_stopping`` must be False; with
        several ``C`` the selection must be ``'cv'`` (the penalty and slope rules compare
        training risks, which always favour the largest C); with one C every rule works,
        on the curves of that C.
    C : float, sequence of float or None, default=None
        ``formulation='svm'`` only: the weights of the hinge loss among which CV chooses
        (sorted; the CV rule's ties go to the smaller D, then to the smaller C). None: the
        grid of the C rule (``kpm.machine.exact.DEFAULT_C``), ``numpy.logspace(-2, 3,
        11)`` for ``'two-stage'``, ``(0.1, 0.3, 1, 3, 10)`` for ``'joint'``. Unused by
        ``'paper'``.
    c_selection : {'two-stage', 'joint'}, default='two-stage'
        ``formulation='svm'`` with CV: how C is chosen (unused by ``'paper'``).
        ``'two-stage'``: first C by the pooled CV error of the SVM at the largest D of the
        grid (the kernel SVM when that is the rank; one solve per C and fold, warm-started
        along C; ties -> the smaller C), then D by the CV error along D at that C only.
        ``'joint'``: (D, C) minimise the CV error over the whole grid; over a wide C grid
        it can pick a small-D, large-C model whose CV error is low by chance, hence its
        narrower default grid, which does not follow the kernel width. Measured on
        Rätsch's benchmarks: both rules within 0.5 point of the CV-tuned SVC on each of
        the 13 sets at likelihood-chosen kernel widths; on 'image' at the median
        heuristic's width the two-stage rule errs 3.4-3.8 % (depending on the folds)
        against the SVC's 2.6-3.0 %, the joint rule 7.1 %. The two-stage paths allow
        ``TWO_STAGE_MAX_SWEEPS`` (200) sweeps of the dual coordinate descent per D instead
        of 20: large C converges slowly. See the user guide, "Beyond the papers".
    lp_solver : {'auto', 'simplex', 'highs'}, default='auto'
        The solver of the hinge LP paths (:mod:`kpm.hinge.lp_path`): ``'simplex'`` the
        specialised warm-started simplex of :mod:`kpm.hinge.simplex`, ``'highs'``
        one warm-started HiGHS model per path, ``'auto'`` the former with the
        latter as fallback on numerical trouble. All solve the same LPs exactly;
        where an LP has several optimal solutions (typically once the training
        hinge risk is 0) they may return different ones.
    cv_duplicates : {'warn', 'split', 'group'}, default='warn'
        Cross-validation with duplicated samples (identical inputs, or identical rows
        of a precomputed kernel). ``'split'``: the folds ignore them, so copies of a
        sample can fall in the training and the validation part of a fold (the
        papers' protocol; right where duplicates are part of the data's distribution,
        e.g. discrete features, and the test data repeat training inputs too).
        ``'group'``: the copies of a sample stay in one fold
        (:class:`~sklearn.model_selection.StratifiedGroupKFold`, or the ``groups`` of
        a given splitter); right where duplicates are an artefact, since copies on
        both sides make the CV error favour large D. ``'warn'``: as ``'split'``, with
        a warning when X has duplicates.
    eigen_solver : {'auto', 'dense', 'arpack', 'randomized'}, default='auto'
        Eigensolver of the kernel matrices (full data and every fold; see
        :mod:`kpm.spectral`). ``'auto'``: the whole spectrum by LAPACK (``'dense'``),
        unless the largest D is known in advance (``max_dim`` or a fixed D), then ARPACK
        or the block Krylov solver where the measured crossovers favour them.
    random_state : int, RandomState or None
        Seeds the CV shuffling and the partial eigensolvers.
    n_jobs : int, optional
        Parallel jobs over the CV folds (joblib).

    Attributes
    ----------
    classes_ : ndarray
    dim_ : int
        The selected dimension.
    alpha_ : ndarray (n_samples,) or (n_classes, n_samples)
        Kernel expansion coefficients, ``f(x) = alpha_ @ k(X_fit_, x) + intercept_``.
    intercept_ : float or ndarray (n_classes,)
    eigenvalues_ : ndarray
        Eigenvalues of the (winning kernel's) training kernel matrix, up to the rank.
    kernel_ : Kernel
        The kernel used (the winner of a list).
    kernel_index_ : int
        Its position in the list (0 for a single kernel).
    formulation_ : {'paper', 'svm'}
        The formulation fitted (``formulation`` with ``'auto'`` resolved).
    C_ : float or None
        ``formulation_='svm'``: the chosen C (None for the paper's KPM).
    c_selection_curve_ : dict of ndarray or None
        ``c_selection='two-stage'`` with CV: stage one's pooled CV 0-1 error
        (``cv_error``) per ``kernel`` index and ``C``; None otherwise. ``selection_curve_``
        then holds the models of the chosen C only.
    X_fit_ : ndarray
    selection_curve_ : dict of ndarray
        Per model (D, and ``kernel`` index for a list): ``D``, ``kernel``,
        ``cv_error`` (pooled CV 0-1 error, NaN when no CV was run),
        ``hinge_risk`` (training ``R_n(f_D)``), ``clipped_risk`` (``R_n(clip f_D)``),
        ``criterion`` (``clipped_risk + penalty_ * D``, NaN without a penalty);
        with ``formulation='svm'`` also ``C``: the models are the (kernel, C, D) triples,
        in that order.
    penalty_ : float or None
        The ``lam`` used by the penalty or slope rule.
    slope_lambda_ : float or None
        ``lam_jump`` of the slope heuristic.
    path_dims_ : ndarray of int
        The dimensions of the stored full-data path of the winning kernel. For
        ``selection='cv'`` it ends at the selected D (the selection needs nothing
        more; the rest of ``selection_curve_``'s training risks is NaN until
        :meth:`extend_path` solves further).
    coef_path_ : list of ndarray
        ``beta`` at every D of ``path_dims_`` (one array per one-vs-rest problem);
        with ``intercept_path_`` the whole path is kept (see
        :meth:`decision_function_path`).
    fit_time_ : float
        Seconds spent in :meth:`fit`.
    lp_fallbacks_ : int
        Paths (folds and full data) on which ``lp_solver='auto'`` handed the LP to
        HiGHS after the specialised simplex reported numerical trouble.
    lp_failures_ : list of dict
        The paths that ended early because no solver solved the LP at some dimension
        (empty when every LP was solved): ``path`` ('full data' or 'fold k'),
        ``problem`` (the one-vs-rest problem, 0 for two classes), ``kernel`` (its
        index), ``dim`` (the D not solved) and ``error`` (the solvers' statuses). The
        selection then ran over the dimensions below the smallest such D (see
        ``selection_curve_``), and :meth:`fit` warned (``ConvergenceWarning``). This
        happens on nearly separable data, where the optimal coefficients exceed 1e9
        and the margins they give are below the precision of double arithmetic.

    See Also
    --------
    NystroemKPM : The KPM on Nyström eigenfunctions, for large n.
    KernelPCRClassifier : Least squares instead of the hinge loss on the same subspaces,
        with the dimension from the relevant-dimension criterion.
    KernelProjection : The kernel PCA coordinates, for any linear model.
    sklearn.svm.SVC : The support vector machine the KPM is compared with.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kpm import KernelProjectionMachine
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> clf = KernelProjectionMachine(sigma=0.5, random_state=0).fit(X, y)
    >>> clf.formulation_, clf.dim_, clf.C_  # the SVM in S_D; D and C by 5-fold CV
    ('svm', 25, 10.0)
    >>> X_test, y_test = make_moons(1000, noise=0.2, random_state=1)
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.961

    The papers' KPM (the hinge LP in ``S_D``):

    >>> paper = KernelProjectionMachine(sigma=0.5, formulation="paper", random_state=0).fit(X, y)
    >>> paper.dim_                    # kernel PCA directions chosen by 5-fold CV
    6
    >>> print(f"{paper.score(X_test, y_test):.3f}")
    0.965
    """

    def __init__(
        self,
        kernel="rbf",
        *,
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        selection="cv",
        cv=5,
        penalty="cv",
        slope_factor=2.0,
        max_dim=None,
        dim_grid=None,
        early_stopping=False,
        centered=False,
        lp_solver="auto",
        cv_duplicates="warn",
        eigen_solver="auto",
        formulation="auto",
        C=None,
        c_selection="two-stage",
        random_state=None,
        n_jobs=None,
    ):
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.selection = selection
        self.cv = cv
        self.penalty = penalty
        self.slope_factor = slope_factor
        self.max_dim = max_dim
        self.dim_grid = dim_grid
        self.early_stopping = early_stopping
        self.centered = centered
        self.lp_solver = lp_solver
        self.cv_duplicates = cv_duplicates
        self.eigen_solver = eigen_solver
        self.formulation = formulation
        self.C = C
        self.c_selection = c_selection
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------ helpers
    def _is_precomputed(self):
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _kernel_list(self, X):
        specs = self.kernel if isinstance(self.kernel, (list, tuple)) else [self.kernel]
        if len(specs) == 0:
            raise ValueError("kernel is an empty list")
        kernels = []
        for spec in specs:
            if isinstance(spec, dict):
                params = dict(spec)
                name = params.pop("kernel", "rbf")
                base = {
                    "sigma": self.sigma if "gamma" not in params and "c" not in params else None,
                    "gamma": self.gamma if "sigma" not in params and "c" not in params else None,
                    "degree": self.degree,
                    "coef0": self.coef0,
                }
                for key in ("sigma", "gamma", "degree", "coef0"):
                    if key in params:
                        base[key] = params.pop(key)
                k = make_kernel(name, kernel_params=params or None, X=X, **base)
            elif isinstance(spec, (list, tuple)):
                raise ValueError("kernel lists cannot be nested")
            else:
                if isinstance(spec, str) and spec == "precomputed" and len(specs) > 1:
                    raise ValueError("'precomputed' cannot be part of a kernel list")
                k = make_kernel(
                    spec,
                    sigma=self.sigma,
                    gamma=self.gamma,
                    degree=self.degree,
                    coef0=self.coef0,
                    kernel_params=self.kernel_params,
                    X=X,
                )
            kernels.append(k)
        return kernels

    def _validate_params(self):
        check_selection_params(self.selection, self.penalty, self.slope_factor)
        md = self.max_dim
        if md is not None and (isinstance(md, bool) or not isinstance(md, numbers.Integral) or md < 1):
            raise ValueError(f"max_dim must be None or a positive int, got {md!r}")
        if not isinstance(self.lp_solver, str) or self.lp_solver not in LP_SOLVERS:
            raise ValueError(f"lp_solver must be one of {LP_SOLVERS}, got {self.lp_solver!r}")
        if isinstance(self.cv, numbers.Integral) and not isinstance(self.cv, bool) and self.cv < 2:
            raise ValueError(f"cv must be at least 2 folds, got {self.cv}")
        check_option(self.cv_duplicates, "cv_duplicates", _CV_DUPLICATES)
        check_bool(self.centered, "centered")
        check_bool(self.early_stopping, "early_stopping")
        check_eigen_solver(self.eigen_solver)
        check_svm_params(self.formulation, self.C, self.c_selection)
        if self.formulation == "svm" and self.early_stopping:
            raise ValueError("early_stopping=True is an option of formulation='paper' (the LP paths) only")
        if self.n_jobs is not None:
            check_int(self.n_jobs, "n_jobs", minimum=None)
            if self.n_jobs == 0:
                raise ValueError("n_jobs must be a nonzero integer or None (joblib), got 0")

    def _splits(self, X, y, groups):
        """The CV folds; duplicated samples (``groups``) handled by ``cv_duplicates``."""
        cv = self.cv
        grouped = groups is not None and self.cv_duplicates == "group"
        if groups is not None and self.cv_duplicates == "warn":
            warnings.warn(
                f"X holds duplicated samples ({len(np.unique(groups))} distinct of {len(y)}): copies "
                "fall in both training and validation folds, which biases the cross-validation "
                "error towards large D. Set cv_duplicates='group' to keep the copies of a sample in "
                "one fold, or cv_duplicates='split' where duplicates are part of the data's "
                "distribution (e.g. discrete features; the papers' protocol) to silence this.",
                UserWarning,
                stacklevel=3,
            )
        if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
            kfold = StratifiedGroupKFold if grouped else StratifiedKFold
            cv = kfold(int(cv), shuffle=True, random_state=self.random_state)
        cv = check_cv(cv, y, classifier=True)
        splits = list(cv.split(X, y, groups if grouped else None))
        for k, (tr, va) in enumerate(splits):
            if len(np.unique(y[tr])) < len(self.classes_):
                raise ValueError(
                    f"cross-validation fold {k} has training samples of only "
                    f"{len(np.unique(y[tr]))} of the {len(self.classes_)} classes; use fewer "
                    "folds or a stratified splitter"
                )
            if len(va) == 0:
                raise ValueError(f"cross-validation fold {k} has an empty validation set")
        return splits

    # ---------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit the path of every D, select D, and keep the selected function.

        The algorithm: for each kernel the eigenvector basis and the CV folds' paths
        (:meth:`_kernel_paths`), then the full-data paths the rule needs and the rule
        (:func:`kpm.machine.engine.select_model`), then the coefficients of the chosen model.

        Parameters
        ----------
        X : array-like (n_samples, n_features), or (n_samples, n_samples) kernel
            matrix for ``kernel='precomputed'``.
        y : array-like (n_samples,)
            Class labels (two or more classes; more: one-vs-rest).

        Returns
        -------
        self

        Warns
        -----
        ConvergenceWarning
            When no LP solver solved some dimension of a path: the selection then runs
            over the dimensions below it (see ``lp_failures_``).
        DegenerateKernelWarning
            When the (selected) kernel matrix is numerically the identity or constant.
        DegenerateModelWarning
            When the fitted function predicts one class on all training samples.
        """
        t0 = time.perf_counter()
        self._validate_params()
        rule = as_rule(self.selection, self.penalty, self.slope_factor)
        # (early stopping is an option of the LP paths)
        self.formulation_ = resolve_formulation(self.formulation, rule, lp_only=self.early_stopping)
        Cs = self._C_grid(rule)
        X, y, codes, Y = self._check_data(X, y)
        kernels = self._kernel_list(X)
        groups = _duplicate_groups(X, self._is_precomputed())
        splits = self._splits(X, y, groups) if rule.needs_cv else None
        fits, family, stage_one = [], [], []
        for i, kern in enumerate(kernels):
            kps, kernel_Cs, errors = self._kernel_paths(kern, X, Y, codes, splits, groups, rule, Cs)
            fits += kps
            family += [(i, C) for C in kernel_Cs]
            if errors is not None:
                stage_one.append((i, errors))
        self.c_selection_curve_ = c_selection_curve(Cs, stage_one)
        choice = select_model(fits, rule, Y)
        self._set_model(fits, kernels, family, choice, Y)
        self.X_fit_ = X
        self._warn_degenerate(fits[self._model_family], y)
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _C_grid(self, rule):
        """The C values of ``formulation='svm'`` (None for the paper's KPM)."""
        if self.formulation_ != "svm":
            return None
        return svm_c_grid(self.C, self.c_selection, rule, self.selection)

    def _check_data(self, X, y):
        """Validated X, y, the class codes and the one-vs-rest targets Y in {-1, +1}."""
        X, y = validate_kernel_input_y(self, X, y, y_numeric=False, min_samples=2)
        self.classes_, codes, Y = one_vs_rest(y, "the Kernel Projection Machine")
        if self._is_precomputed():
            X = check_kernel_matrix(X)
        return X, y, codes, Y

    def _warn_degenerate(self, kp, y):
        """The fit's warnings: failed LPs, a degenerate kernel, a one-class model."""
        if self.lp_failures_:
            first = min(self.lp_failures_, key=lambda f: f["dim"])
            warnings.warn(
                f"KernelProjectionMachine: no LP solver solved the hinge LP at D={first['dim']} "
                f"({first['path']}); dimensions from D={first['dim']} on were not considered, D was "
                f"selected among D <= {int(self.selection_curve_['D'].max())}. This happens where the "
                "training data are nearly separable in the subspace: the optimal coefficients pass 1e9 "
                f"and the margins they give fall below double precision. Cause: {first['error']}",
                ConvergenceWarning,
                stacklevel=3,
            )
        if kp.degeneracy is not None:
            warn_degenerate_kernel(kp.degeneracy, "KernelProjectionMachine", stacklevel=4)
        V = self._subspace.V[:, : self.dim_]
        F = np.stack([V @ beta + b for beta, b in (p.coef_at(self.dim_) for p in kp.full.paths)], axis=1)
        warn_if_degenerate_model(
            self.classes_[_predict_codes(F)], y, self.classes_, "KernelProjectionMachine", stacklevel=4
        )

    def _grid(self, max_dim):
        g = self.dim_grid
        if g is None and self.formulation_ == "svm":
            return auto_dim_grid(max_dim, ratio=SVM_DIM_RATIO)
        if g is None:
            return np.arange(1, max_dim + 1)
        if isinstance(g, str):
            if g != "auto":
                raise ValueError(f"dim_grid must be None, 'auto' or a list of ints, got {g!r}")
            return auto_dim_grid(max_dim)
        grid = np.asarray(g)
        if grid.ndim != 1 or len(grid) == 0 or not np.issubdtype(grid.dtype, np.integer):
            raise ValueError(f"dim_grid must be None, 'auto' or a list of ints, got {g!r}")
        grid = np.unique(grid)
        if grid[0] < 1:
            raise ValueError(f"dim_grid must hold positive ints, got {g!r}")
        grid = grid[grid <= max_dim]
        if len(grid) == 0:
            raise ValueError(f"no dimension of dim_grid is <= the largest usable D = {max_dim}")
        return grid

    def _basis(self, K, groups, rule):
        """The eigenvector basis of the full training set and the largest usable D."""
        n = K.shape[0]
        # a partial eigendecomposition when the largest D is known in advance
        known = self.max_dim
        if rule.fixed_dim is not None:
            known = rule.fixed_dim if known is None else min(known, rule.fixed_dim)
        n_comp = known if known is not None and known < n - 1 else None
        basis = _Subspace(K, self.centered, n_comp, random_state=self.random_state, groups=groups,
                          eigen_solver=self.eigen_solver)
        if basis.rank < 1:
            raise ValueError("the kernel matrix has rank 0 (no positive eigenvalue)")
        centred = "centred " if self.centered else ""
        if self.max_dim is not None:
            # (a partial decomposition, up to a fixed D < max_dim, tells the rank up to D only)
            if self.max_dim > basis.rank and (n_comp is None or n_comp >= self.max_dim):
                raise ValueError(
                    f"max_dim={self.max_dim} is larger than the rank {basis.rank} of the {centred}kernel matrix"
                )
            max_dim = int(self.max_dim)
        else:
            max_dim = basis.rank
        if rule.fixed_dim is not None:
            if rule.fixed_dim > max_dim:
                raise ValueError(
                    f"selection={self.selection} (a fixed D) is larger than "
                    f"{'max_dim' if self.max_dim is not None else 'the rank of the kernel matrix'} = {max_dim}"
                )
            if rule.fixed_dim > basis.rank:
                raise ValueError(
                    f"selection={self.selection} (a fixed D) is larger than the rank {basis.rank} "
                    f"of the {centred}kernel matrix"
                )
            max_dim = rule.fixed_dim
        return basis, max_dim

    def _kernel_paths(self, kern, X, Y, codes, splits, groups, rule, Cs=None):
        """One kernel: its basis, its D grid and (with CV) the folds' curves, as a list of
        :class:`KernelPaths`: one for the paper's KPM, one per C for ``formulation='svm'``
        (with ``c_selection='two-stage'``: one, for the C of stage one). Returns the list,
        the C of each entry and stage one's CV errors per C (None without stage one)."""
        K = X if kern.is_precomputed else kern(X)
        if kern.user_defined:
            K = check_kernel_matrix(K, f"the kernel matrix of the {kern.name} kernel")
        basis, max_dim = self._basis(K, groups, rule)
        grid = self._grid(max_dim)
        if rule.fixed_dim is not None and grid[-1] != max_dim:
            grid = np.append(grid, max_dim)
        degeneracy = kernel_degeneracy(K)
        subspaces = stage_one = None
        if splits is not None and Cs is not None and self.c_selection == "two-stage":
            subspaces, stage_one = self._stage_one(K, Y, codes, splits, grid, groups, Cs)
            Cs = Cs[[int(np.argmin(stage_one))]]  # first minimum: ties -> the smaller C
        kps = [
            KernelPaths(basis=basis, grid=grid, n_used=len(grid), degeneracy=degeneracy,
                        solve_path=_full_path_solver(basis, self.formulation_, self.lp_solver, C, max_sweeps_of(self.c_selection)))
            for C in (Cs if Cs is not None else [None])
        ]
        if splits is not None and Cs is not None:
            for kp, folds in zip(kps, self._svm_cv_paths(K, Y, codes, splits, grid, groups, Cs, subspaces)):
                kp.folds, kp.n_used = folds, cv_extent(folds)
        elif splits is not None:
            kps[0].folds, kps[0].n_used = self._cv_paths(K, Y, codes, splits, grid, groups)
        return kps, (Cs if Cs is not None else [None]), stage_one

    def _fold_n_components(self, grid, n_train):
        """The fold bases' partial eigendecomposition size (None: the whole spectrum)."""
        n_comp = int(grid[-1]) if self.max_dim is not None else None
        return n_comp if n_comp is not None and n_comp < n_train - 1 else None

    def _stage_one(self, K, Y, codes, splits, grid, groups, Cs):
        """``c_selection='two-stage'``: the folds' ``(subspace, m, grid)`` and the pooled CV
        error of the SVM at each fold's largest D, per C (:func:`_svm_fold_c_errors`)."""
        from joblib import Parallel, delayed

        per_fold = Parallel(n_jobs=self.n_jobs)(
            delayed(_svm_fold_c_errors)(
                K, tr, va, Y, codes, self.centered, grid, Cs, self._fold_n_components(grid, len(tr)),
                self.random_state, groups, self.eigen_solver,
            )
            for tr, va in splits
        )
        return [f[0] for f in per_fold], sum(f[1] for f in per_fold) / len(Y)

    def _svm_cv_paths(self, K, Y, codes, splits, grid, groups, Cs, subspaces=None):
        """``formulation='svm'``: per C, the CV folds' curves on the grid."""
        from joblib import Parallel, delayed

        per_fold = Parallel(n_jobs=self.n_jobs)(
            delayed(_svm_fold_task)(
                K, tr, va, Y, codes, self.centered, grid, Cs, self._fold_n_components(grid, len(tr)),
                self.random_state, groups, k, self.eigen_solver, None if subspaces is None else subspaces[k],
                max_sweeps_of(self.c_selection),
            )
            for k, (tr, va) in enumerate(splits)
        )
        return [[fold[i] for fold in per_fold] for i in range(len(Cs))]

    def _cv_paths(self, K, Y, codes, splits, grid, groups):
        """The CV folds' curves on the grid and the number of grid points used."""
        if self.early_stopping:
            return _cv_lockstep(K, splits, Y, codes, self.centered, grid, True, self.random_state, groups,
                                self.lp_solver, self.eigen_solver)
        from joblib import Parallel, delayed

        folds = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_task)(
                K, tr, va, Y, codes, self.centered, grid, self._fold_n_components(grid, len(tr)),
                self.random_state, groups, self.lp_solver, k, self.eigen_solver,
            )
            for k, (tr, va) in enumerate(splits)
        )
        return folds, cv_extent(folds)

    def _set_model(self, fits, kernels, family, choice, Y):
        """The fitted attributes: the curves, the rule's outputs and the chosen model's coefficients."""
        self._curves = curves = _model_curves(fits, len(Y))
        self.lp_failures_ = [dict(f, kernel=i) for i, kp in enumerate(fits) for f in kp.failures]
        self.lp_fallbacks_ = int(sum(kp.fallbacks for kp in fits))
        self.penalty_ = choice.penalty
        self.slope_lambda_ = choice.slope_lambda
        if choice.penalty_cv_curve is not None:
            self.penalty_cv_curve_ = choice.penalty_cv_curve
        self.selection_curve_ = selection_curve(curves, self.penalty_)
        if self.formulation_ == "svm":
            fam = np.asarray(family, dtype=float)[curves.kernel]
            self.selection_curve_["kernel"] = fam[:, 0].astype(int)
            self.selection_curve_["C"] = fam[:, 1]
        j, D = choice.kernel_index, choice.dim
        kp = fits[j]
        k, C = family[j]
        self.C_ = None if C is None else float(C)
        self._model_family = j
        self.kernel_, self.kernel_index_, self.dim_ = kernels[k], k, D
        self.eigenvalues_ = kp.basis.eigenvalues
        self.alpha_, self.intercept_ = self._expansion(kp, D)
        self._Y = Y
        self._grid_used = kp.dims
        self._subspace = kp.basis
        self._set_path(kp.full)

    def _expansion(self, kp, D):
        """``alpha``, ``b`` of ``f(x) = sum_i alpha_i k(x_i, x) + b`` at D (one per problem)."""
        basis = kp.basis
        alphas, intercepts = [], []
        for p in kp.full.paths:
            beta, b = p.coef_at(D)
            a = basis.V[:, :D] @ (beta / basis.eigenvalues[:D])
            if self.centered:
                a = a - a.mean()
                b = b - float(a @ basis.col_means)
            alphas.append(a)
            intercepts.append(b)
        if len(alphas) == 1:
            return alphas[0], intercepts[0]
        return np.vstack(alphas), np.asarray(intercepts)

    def _set_path(self, full):
        self.path_dims_ = full.dims
        self.coef_path_ = [p.coef for p in full.paths]
        self.intercept_path_ = [p.intercept for p in full.paths]

    def select_dim(self, rule):
        """The model another selection rule picks from this fit's curves, without re-fitting.

        The rule is applied to the curves the fit computed (``selection_curve_`` and
        the CV folds' curves), exactly as :meth:`fit` applies its own rule: a model
        fitted with ``selection='penalty', penalty='cv'`` holds every curve and answers
        every rule. Two limits:

        * The models are those of this fit: a fit with cross-validation considers the
          dimensions up to the end of the CV sweep (every fold's training risk at its
          floor), a fit without it those up to ``max_dim``. ``Penalty(lam)`` and
          ``Slope`` answer as a fresh fit without CV only where the full-data path
          reached its floor within this fit's dimensions (beyond, every D has the
          same solution and neither rule picks it).
        * A rule needs what it reads: :class:`~kpm.machine.rules.CV` and ``Penalty('cv')`` the
          CV curves (a fit that ran CV), the other rules the training risk of every
          model (``selection='cv'`` solves the full-data path only up to the selected
          D: :meth:`extend_path` solves the rest, for one kernel).

        Parameters
        ----------
        rule : SelectionRule, {'cv', 'penalty', 'slope'} or int
            A rule of :mod:`kpm.machine.rules`, or a ``selection`` value (``'penalty'`` and
            ``'slope'`` with this model's ``penalty`` and ``slope_factor``).

        Returns
        -------
        Choice
            ``dim``, ``kernel_index`` and ``index`` (the row of ``selection_curve_``) of
            the chosen model, with the rule's ``penalty`` / ``slope_lambda``.
        """
        check_is_fitted(self)
        rule = as_rule(rule, self.penalty, self.slope_factor)
        check_rule_answerable(rule, self._curves, self.selection, "call extend_path() first, or ")
        return rule.select(self._curves)

    def extend_path(self, max_dim=None):
        """Solve the winning kernel's full-data path further, for figures.

        With ``selection='cv'`` the full-data path is solved only a little past the
        selected D; this solves it on the CV sweep's dimensions up to ``max_dim``
        (default: all of them) and fills in ``selection_curve_``'s training risks,
        ``path_dims_``, ``coef_path_`` and ``intercept_path_``. The fitted function
        (``dim_``, ``alpha_``) does not change.

        Returns
        -------
        self
        """
        check_is_fitted(self)
        grid = self._grid_used
        if max_dim is not None:
            if isinstance(max_dim, bool) or not isinstance(max_dim, numbers.Integral) or max_dim < 1:
                raise ValueError(f"max_dim must be a positive int, got {max_dim!r}")
            grid = grid[grid <= max_dim]
            if len(grid) == 0 or grid[-1] < self.dim_:
                grid = self._grid_used[self._grid_used <= self.dim_]
        if len(grid) <= len(self.path_dims_):
            return self
        full = _full_path_solver(self._subspace, self.formulation_, self.lp_solver, self.C_,
                                 max_sweeps_of(self.c_selection))(grid, self._Y)
        self._set_path(full)
        rows = np.flatnonzero(self._curves.kernel == self._model_family)[: len(full.dims)]
        self.selection_curve_["hinge_risk"][rows] = full.hinge_risk
        self.selection_curve_["clipped_risk"][rows] = full.clipped_risk
        if self.penalty_ is not None:
            self.selection_curve_["criterion"][rows] = full.clipped_risk + self.penalty_ * full.dims
        return self

    # ------------------------------------------------------------ predict
    def _kernel_rows(self, X):
        check_is_fitted(self)
        X = validate_kernel_input(self, X, reset=False)
        if self.kernel_.is_precomputed:
            if X.shape[1] != self.X_fit_.shape[0]:
                raise ValueError(
                    f"a precomputed kernel for prediction must have {self.X_fit_.shape[0]} columns, got {X.shape[1]}"
                )
            return X
        return self.kernel_(X, self.X_fit_)

    def decision_function(self, X):
        """``f(x) = sum_i alpha_i k(x_i, x) + b``: shape (n,) binary, (n, n_classes) otherwise.

        The values are rounded to 9 decimals: the hinge LP puts many points exactly on
        the margin (one-vs-rest scores of exactly -1, say), and rounding makes such ties
        -- resolved to the first class -- independent of floating-point noise and of
        the batch the point is predicted in.
        """
        Kx = self._kernel_rows(X)
        if self.alpha_.ndim == 1:
            F = Kx @ self.alpha_ + self.intercept_
        else:
            F = Kx @ self.alpha_.T + self.intercept_[None, :]
        return np.round(F, _TIE_DECIMALS)

    def predict(self, X):
        """Predicted class labels."""
        F = self.decision_function(X)
        return self.classes_[_predict_codes(F[:, None] if F.ndim == 1 else F)]

    def decision_function_path(self, X):
        """Decision values of the winning kernel's solution at every D of ``path_dims_``.

        Returns
        -------
        ndarray (n, n_dims) for two classes, (n, n_dims, n_classes) otherwise.
        """
        Kx = self._kernel_rows(X)
        sub = self._subspace
        m = max(c.shape[1] for c in self.coef_path_)
        Z = sub.features(Kx, m)
        F = []
        for coef, b in zip(self.coef_path_, self.intercept_path_):
            p = HingePath(self.path_dims_, coef, b, np.zeros(len(b)), 1, np.zeros(len(b), int))
            F.append(p.decision_values(Z))
        F = np.stack(F, axis=2)
        return F[:, :, 0] if F.shape[2] == 1 else F

    def predict_path(self, X):
        """Predicted labels for every D: (n, n_dims)."""
        F = self.decision_function_path(X)
        return self.classes_[_predict_codes(F[:, :, None] if F.ndim == 2 else F)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._is_precomputed()
        return tags
