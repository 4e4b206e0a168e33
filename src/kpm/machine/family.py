"""The family of models of a KPM fit, built once for every basis.

A Kernel Projection Machine (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005)
fits, for each kernel of its family and each D of a grid, a model in ``S_D``, the span of the
first D columns of a basis: the papers' hinge LP, or the SVM for each C (``formulation='svm'``),
with the cross-validation curves its selection rule reads. :func:`build_family` does that for
any basis that gives a :class:`BasisFit`:

* the eigenvectors of the kernel matrix (:mod:`kpm.machine.eigen`: the basis' columns are
  ``V``, each fold's basis decomposed anew or by Rayleigh-Ritz);
* Nyström eigenfunctions of m landmarks (:mod:`kpm.machine.nystroem_data`: the columns are
  the features ``K(X, Z) P``, the folds their rows);
* the same on Dask workers (:mod:`kpm.machine.dask_data`: the papers' LP by constraint
  generation, the features never on the client).

The SVM's C and D are chosen by the folds' curves (:func:`kpm.machine.folds.cross_validate_svm`)
or, with the squared hinge, by the leave-one-out error of the whole training set in closed
form (:func:`kpm.machine.folds.loo_svm`), whose path is then the full-data path of the final
fit -- on every basis the same computation on the explicit features ``columns * scale``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Protocol

import numpy as np

from kpm.machine.engine import Family, KernelPaths, cv_extent
from kpm.machine.folds import LooData, cross_validate, cross_validate_svm, loo_svm
from kpm.machine.formulation import FitPlan, SVMFullPath
from kpm.machine.progress import Progress

__all__ = ["FitData", "BasisFit", "EngineSettings", "build_family"]


class FitData(Protocol):
    """What the engine reads of a fit's training data (every estimator's data object has it).

    ``Y`` the one-vs-rest targets (n, n_problems); ``codes`` the class codes; ``weights``
    the samples' weights (None: unweighted); ``cv_total`` the pooled CV error's denominator
    (None: the points); ``loo`` whether D and C are chosen by the leave-one-out error, which
    leaves the copies of a sample (``loo_groups``; None: one point at a time) out together;
    ``phases`` the seconds of the estimator's own phases of its data (empty: one phase).
    """

    Y: np.ndarray
    codes: np.ndarray
    weights: np.ndarray | None
    cv_total: float | None
    loo: bool
    loo_groups: np.ndarray | None
    phases: dict

    @property
    def n(self) -> int: ...


@dataclass
class BasisFit:
    """One kernel's basis, as the engine reads it.

    Attributes
    ----------
    basis : object
        The basis (kept by the models: the estimator's prediction expansion reads it).
    grid : ndarray of int
        The D grid.
    capped : bool
        The grid ends below the rank of the basis.
    columns : ndarray (n, >= grid[-1])
        The basis' coordinates of the training points (for the SVM, ``columns * scale``
        are its features).
    scale : ndarray
        The SVM's scale of each column.
    lp_path : callable
        ``(grid, Y) -> FullPath``: the full-data paths of the papers' LP.
    folds : object or None
        The fold source (``fold(k)``, ``n_folds``, ``lp_curves(k)``;
        :mod:`kpm.machine.folds`), None without K folds.
    degeneracy : object
        The kernel's degeneracy (:func:`kpm.validation.kernel_degeneracy`), or None.
    excess : ndarray (n,) or None
        The training points' self-similarity excess (:func:`kpm.validation.self_similarity_excess`
        of the unweighted kernel matrix), where the fit checks its selection with it.
    row_block : int or None
        Rows of decision values evaluated at once on the full data (None: all).
    lp_cv : callable or None
        ``() -> (curves, n_used)``: the folds' LP curves where the basis has its own sweep
        (the exact basis' lockstep early stopping); None: one job per fold.
    """

    basis: object
    grid: np.ndarray
    capped: bool
    columns: np.ndarray
    scale: np.ndarray
    lp_path: Callable
    folds: object = None
    degeneracy: object = None
    excess: np.ndarray | None = None
    row_block: int | None = None
    lp_cv: Callable | None = None


@dataclass
class EngineSettings:
    """The estimator's settings the engine reads: ``early_stopping`` of the SVM's paths (with
    ``'auto'`` resolved), ``c_dim`` (the leave-one-out stage one's D, None: the grid's
    largest), the joblib ``n_jobs`` and ``prefer`` of the folds, and the progress lines."""

    early_stopping: bool
    c_dim: int | None = None
    n_jobs: int | None = None
    prefer: str | None = None
    progress: Progress | None = None


def build_family(bases: Iterable[BasisFit], data: FitData, plan: FitPlan, settings: EngineSettings) -> Family:
    """The :class:`~kpm.machine.engine.Family` of a fit: for each basis (one per kernel, in
    order, made as the iteration asks for it), its models -- one per C kept for the SVM, one
    for the LP -- with their cross-validation curves."""
    family = Family(all_Cs=plan.searched_Cs, cv_total=data.cv_total)
    for i, fit in enumerate(bases):
        if plan.formulation == "svm":
            _svm_members(family, i, fit, data, plan, settings)
        else:
            kp = _member(fit, fit.lp_path)
            if fit.folds is not None:
                if fit.lp_cv is not None:
                    kp.folds, kp.n_used = fit.lp_cv()
                else:
                    kp.folds = cross_validate(fit.folds.lp_curves, fit.folds.n_folds, n_jobs=settings.n_jobs,
                                              prefer=settings.prefer, progress=settings.progress)
                    kp.n_used = cv_extent(kp.folds)
            family.paths.append(kp)
            family.members.append((i, None))
    return family


def _member(fit, solve_path):
    return KernelPaths(basis=fit.basis, grid=fit.grid, n_used=len(fit.grid), degeneracy=fit.degeneracy, excess=fit.excess,
                       capped=fit.capped, solve_path=solve_path)


def _svm_members(family, i, fit, data, plan, settings):
    """``formulation='svm'``: basis ``i``'s members, one per C kept, with their CV curves (by
    the leave-one-out error or the K folds; none without cross-validation)."""
    Cs, curves, stage_one, recorded = plan.Cs, None, None, None
    if data.loo:
        m = int(fit.grid[-1])
        scale = np.asarray(fit.scale[:m], dtype=float)
        Phi = np.empty((fit.columns.shape[0], m))  # C order, as the solvers read it: no second copy
        np.multiply(fit.columns[:, :m], scale, out=Phi)
        loo_data = LooData(Phi, data.Y, data.codes, data.weights, scale, groups=data.loo_groups, c_dim=settings.c_dim)
        Cs, stage_one, curves = loo_svm(loo_data, plan, fit.grid, early_stopping=settings.early_stopping,
                                        progress=settings.progress)
        recorded = loo_data.paths  # the leave-one-out path of each C: the full-data path
    elif fit.folds is not None:
        total = data.n if data.cv_total is None else data.cv_total
        Cs, stage_one, curves = cross_validate_svm(fit.folds.fold, fit.folds.n_folds, plan, fit.grid, total,
                                                   early_stopping=settings.early_stopping, n_jobs=settings.n_jobs,
                                                   prefer=settings.prefer, progress=settings.progress)
    if stage_one is not None:
        family.stage_one.append((i, stage_one))
    for j, C in enumerate(Cs):
        kp = _member(fit, SVMFullPath(fit.columns, fit.scale, C, plan.max_sweeps, fit.row_block, loss=plan.loss,
                                      sample_weight=data.weights,
                                      recorded=None if recorded is None else recorded[j]))
        if curves is not None:
            kp.folds, kp.n_used = curves[j], cv_extent(curves[j])
        family.paths.append(kp)
        family.members.append((i, C))
