"""Cross-validation of the Kernel Projection Machine: the folds and the work done on each.

A KPM estimator's cross-validation is a *fold source*: for fold ``k`` it gives a
:class:`Fold` (the fold's training features and one-vs-rest targets, its validation
features, targets and class codes, the feature scale of the SVM and the fold's D grid) and
the curves of the papers' LP on the fold. The exact KPM's source decomposes each fold's
training kernel matrix anew (:class:`kpm.machine.eigen.EigenFolds`); the Nyström KPM's
reads rows of the landmark features (:mod:`kpm.machine.nystroem_data`, and
:mod:`kpm.machine.dask_data` on Dask workers). The functions here run the folds in
parallel and assemble their curves, whatever the source:

* :func:`make_splits` -- the folds (stratified K-fold, or the user's splitter), checked;
* :func:`cross_validate` -- one job per fold (the LP paths), in joblib workers;
* :func:`cross_validate_svm` -- ``formulation='svm'``: stage one of
  ``c_selection='two-stage'`` (the C of the smallest CV error at the largest D), then the
  folds' SVM paths for each C kept.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, check_cv

from kpm.machine.formulation import svm_c_errors, svm_fold_curves

__all__ = ["Fold", "make_splits", "cross_validate", "cross_validate_svm"]


@dataclass
class Fold:
    """One CV fold's data for the SVM paths.

    Attributes
    ----------
    train : tuple
        ``(Z_tr, Y_tr)``: the fold's training features (its columns) and one-vs-rest targets.
    val : tuple
        ``(Z_va, Y_va, codes_va)``: the validation features, targets and class codes.
    scale : ndarray
        Per column, the factor that makes ``Z * scale`` the SVM's features.
    grid : ndarray
        The fold's D grid (it may end before the estimator's, at the fold's rank).
    where : str
        ``'fold k'``, for the records of failed paths.
    block : int
        Rows of decision values evaluated at once.
    """

    train: tuple
    val: tuple
    scale: np.ndarray
    grid: np.ndarray
    where: str
    block: int = 8192


def make_splits(y, cv, random_state, n_classes, *, X=None, groups=None):
    """The CV folds ``[(train, val), ...]``: with ``cv`` an int, a shuffled stratified K-fold
    seeded by ``random_state`` (grouped: the samples of one group in one fold); else the
    splitter's folds. Every fold must have a validation point and training points of every
    class."""
    if isinstance(cv, numbers.Integral):
        if len(y) < cv:
            raise ValueError(f"cv={cv} folds need at least {cv} samples, got {len(y)}")
        kfold = StratifiedGroupKFold if groups is not None else StratifiedKFold
        cv = kfold(int(cv), shuffle=True, random_state=random_state)
    cv = check_cv(cv, y, classifier=True)
    splits = list(cv.split(np.zeros((len(y), 1)) if X is None else X, y, groups))
    for k, (train, val) in enumerate(splits):
        check_fold(k, len(np.unique(y[train])), n_classes, len(val))
    return splits


def check_fold(k, train_classes, n_classes, n_val):
    """Fold ``k`` has a validation point and training points of every class."""
    if train_classes < n_classes:
        raise ValueError(
            f"cross-validation fold {k} has training samples of only {train_classes} of the "
            f"{n_classes} classes; use fewer folds (cv) or a stratified splitter"
        )
    if n_val == 0:
        raise ValueError(f"cross-validation fold {k} has an empty validation set")


def _parallel(n_jobs, prefer):
    from joblib import Parallel

    return Parallel(n_jobs=n_jobs, prefer=prefer)


def cross_validate(job, n_folds, *, n_jobs=None, prefer=None):
    """``[job(k) for k in range(n_folds)]`` in joblib workers (``prefer``: 'threads' or
    processes), each job's seconds recorded in its :class:`~kpm.machine.engine.FoldCurves`."""
    from joblib import delayed

    return _parallel(n_jobs, prefer)(delayed(_timed)(job, k) for k in range(n_folds))


def _timed(job, k):
    t0 = time.perf_counter()
    curves = job(k)
    for c in curves if isinstance(curves, list) else [curves]:
        c.seconds = time.perf_counter() - t0
    return curves


def _stage_one(fold_of, k, Cs):
    fold = fold_of(k)
    return fold, svm_c_errors(fold, Cs)


def _svm_fold(fold_of, k, Cs, n_grid, max_sweeps, fold=None):
    t0 = time.perf_counter()
    fold = fold_of(k) if fold is None else fold
    curves = svm_fold_curves(fold, Cs, n_grid, max_sweeps=max_sweeps, block=fold.block)
    for c in curves:
        c.seconds = time.perf_counter() - t0
    return curves


def cross_validate_svm(fold_of, n_folds, plan, n_grid, n_samples, *, n_jobs=None, prefer=None):
    """``formulation='svm'``: the folds' SVM paths for the C values of the plan.

    With ``c_selection='two-stage'`` stage one first keeps the C of the smallest pooled CV
    error of the SVM at each fold's largest D (ties -> the smaller C; the folds' data are
    reused by stage two). Returns ``(Cs, stage_one, curves)``: the C values kept, stage
    one's pooled CV error per C of the plan (None without stage one) and, per C kept, the
    folds' :class:`~kpm.machine.engine.FoldCurves` (padded to ``n_grid`` points).
    """
    from joblib import delayed

    Cs, stage_one, folds = plan.Cs, None, [None] * n_folds
    if plan.two_stage:
        out = _parallel(n_jobs, prefer)(delayed(_stage_one)(fold_of, k, Cs) for k in range(n_folds))
        folds = [o[0] for o in out]
        stage_one = sum(o[1] for o in out) / n_samples
        Cs = Cs[[int(np.argmin(stage_one))]]  # first minimum: ties -> the smaller C
    per_fold = _parallel(n_jobs, prefer)(
        delayed(_svm_fold)(fold_of, k, Cs, n_grid, plan.max_sweeps, folds[k]) for k in range(n_folds)
    )
    return Cs, stage_one, [[f[i] for f in per_fold] for i in range(len(Cs))]
