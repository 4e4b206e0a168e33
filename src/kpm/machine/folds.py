"""Cross-validation of the Kernel Projection Machine: the folds and the work done on each.

A KPM estimator's cross-validation is a *fold source*: for fold ``k`` it gives a
:class:`Fold` (the fold's training features and one-vs-rest targets, its validation
features, targets and class codes, the feature scale of the SVM and the fold's D grid) and
the curves of the papers' LP on the fold. The exact KPM's source decomposes each fold's
training kernel matrix anew (:class:`kpm.machine.eigen.EigenFolds`) or finds it by
Rayleigh-Ritz in the training set's basis (:class:`kpm.machine.eigen.RitzFolds`); the Nyström KPM's
reads rows of the landmark features (:mod:`kpm.machine.nystroem_data`, and
:mod:`kpm.machine.dask_data` on Dask workers). The functions here run the folds in
parallel and assemble their curves, whatever the source:

* :func:`make_splits` -- the folds (stratified K-fold, or the user's splitter), checked; a
  class too small for every fold (a single sample, or a single group of duplicates) is kept
  in every training part and validated in none;
* :func:`cross_validate` -- one job per fold (the LP paths), in joblib workers;
* :func:`cross_validate_svm` -- ``formulation='svm'``: stage one of
  ``c_selection='two-stage'`` (the C of the smallest CV error at the largest D; with early
  stopping :func:`svm_c_curve`), then the folds' SVM paths for each C kept, advanced
  together along D (:func:`svm_d_path`, with optional early stopping);
* :func:`loo_svm` -- the same stages for the squared-hinge SVM scored by its leave-one-out
  error instead of folds (``cv='loo'``): one "fold", the whole training set
  (:class:`LooData`), whose path (:class:`LooPath`) is the full-data model's, each point
  scored under the model without it by its leverage
  (:meth:`kpm.hinge.squared_hinge.SquaredHingeSVM.loo_margins`).
"""

from __future__ import annotations

import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold, check_cv

from kpm.blas_threads import small_blas
from kpm.hinge.svm_path import solved_path, svm_c_path, svm_solver
from kpm.machine.engine import FoldCurves, clipped_risk, misclassified, pad, predict_codes
from kpm.machine.formulation import C_PATIENCE, LOO_C_PATIENCE, TWO_STAGE_MAX_SWEEPS
from kpm.machine.progress import Progress
from kpm.machine.rules import one_standard_error

__all__ = ["Fold", "FoldPath", "LooData", "LooPath", "make_splits", "uses_loo", "check_fold", "validation_total",
           "cross_validate", "cross_validate_svm", "loo_svm", "svm_c_curve", "svm_d_path"]

#: The folds of ``cv='auto'`` where the leave-one-out error does not apply.
DEFAULT_FOLDS = 5

#: The hint of a fold without training samples of some class, for a user's splitter.
SPLITTER_HINT = ("use fewer folds (cv), or give cv as an int: its stratified folds keep a class too small "
                 "for every fold (a single sample) in every training part")


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
    weights : tuple or None
        ``(w_tr, w_va)``: the sample weights of the training and validation points (None:
        unweighted); the SVM's ``C w_i`` and the weighted validation errors.
    """

    train: tuple
    val: tuple
    scale: np.ndarray
    grid: np.ndarray
    where: str
    block: int = 8192
    weights: tuple | None = None

    @property
    def train_weights(self):
        return None if self.weights is None else self.weights[0]

    def val_errors(self, wrong):
        """The misclassified validation points (their weight with sample weights) of a
        boolean array ``wrong`` ((n_val,) or (n_val, n_grid)), summed over the points."""
        return misclassified(wrong, None if self.weights is None else self.weights[1])


def make_splits(y, cv, random_state, n_classes, *, X=None, groups=None, keep=None, who="KPM", stacklevel=5):
    """The CV folds ``[(train, val), ...]``: with ``cv`` an int, a shuffled stratified K-fold
    seeded by ``random_state`` (grouped: the samples of one group in one fold); else the
    splitter's folds. Every fold must have a validation point and training points of every
    class.

    ``keep`` (a boolean mask over the samples of ``y``, ``X`` and ``groups``, or None): the
    samples fitted -- those of positive weight. The folds are those of the kept samples,
    numbered among them: an int ``cv`` splits them; a splitter (or a list of splits) is
    given all the samples, and the others are then taken out of its folds (a sample of
    weight 0 is a removed sample).

    With ``cv`` an int, a class too small to have training points in every fold -- a single
    sample, or a single group of ``groups`` -- is kept in the training part of every fold and
    in no validation part (its samples are not validated), with a warning; the other samples
    are split as usual. A splitter's folds are used as they are (a fold without training
    points of some class is an error).
    """
    y = np.asarray(y)
    if not isinstance(cv, numbers.Integral):
        cv = check_cv(cv, y, classifier=True)
        splits = list(cv.split(np.zeros((len(y), 1)) if X is None else X, y, groups))
        if keep is not None:
            position = np.cumsum(keep) - 1  # the index of a kept sample among the kept
            splits = [(position[tr[keep[tr]]], position[va[keep[va]]]) for tr, va in splits]
            y = y[keep]
        for k, (train, val) in enumerate(splits):
            check_fold(k, len(np.unique(y[train])), n_classes, len(val), SPLITTER_HINT)
        return splits
    if keep is not None:
        y, X = y[keep], None if X is None else X[np.flatnonzero(keep)]
        groups = None if groups is None else np.asarray(groups)[keep]
    n_folds = int(cv)
    if len(y) < n_folds:
        raise ValueError(f"cv={n_folds} folds need at least {n_folds} samples, got {len(y)}")
    classes, codes = np.unique(y, return_inverse=True)
    codes = codes.ravel()
    units = np.arange(len(y)) if groups is None else np.asarray(groups).ravel()
    # a class with one sample (one group) can be in the training part of every fold only if
    # no fold validates it
    rare = {c for c in range(len(classes)) if len(np.unique(units[codes == c])) < 2}
    for _ in range(len(classes) + 1):
        kept = np.flatnonzero(~np.isin(codes, sorted(rare)))
        if len(kept) < n_folds:
            raise ValueError(
                f"cv={n_folds} folds need at least {n_folds} samples of the classes with two or more "
                f"samples{' (groups of duplicates)' if groups is not None else ''}, got {len(kept)}"
            )
        splits = _stratified(codes, kept, n_folds, random_state, X, None if groups is None else units)
        missing = {c for train, _ in splits for c in set(codes[kept]) - set(codes[train])}
        if not missing:
            break
        rare |= missing  # a grouped split left a class out of some training part
    if rare:
        held = np.flatnonzero(np.isin(codes, sorted(rare)))
        splits = [(np.sort(np.concatenate([train, held])), val) for train, val in splits]
        names = ", ".join(repr(classes[c].item() if isinstance(classes[c], np.generic) else classes[c])
                          for c in sorted(rare))
        warnings.warn(
            f"{who}: the class{'es' if len(rare) > 1 else ''} {names} "
            f"{'have' if len(rare) > 1 else 'has'} too few samples for {n_folds}-fold cross-validation "
            f"({len(held)} sample{'s' if len(held) > 1 else ''} in all): kept in the training part of every "
            "fold and validated in none, so the cross-validation error does not measure "
            f"{'them' if len(rare) > 1 else 'it'}.",
            UserWarning,
            stacklevel=stacklevel,
        )
    for k, (train, val) in enumerate(splits):
        check_fold(k, len(np.unique(y[train])), n_classes, len(val))
    return splits


def _stratified(codes, kept, n_folds, random_state, X, groups):
    """Shuffled stratified (grouped) K-fold of the samples ``kept``, as global indices."""
    kfold = StratifiedGroupKFold if groups is not None else StratifiedKFold
    splitter = kfold(n_folds, shuffle=True, random_state=random_state)
    Xk = np.zeros((len(kept), 1)) if X is None else X[kept]
    return [(kept[tr], kept[va]) for tr, va in
            splitter.split(Xk, codes[kept], None if groups is None else groups[kept])]


def check_fold(k, train_classes, n_classes, n_val, hint="use fewer folds (cv) or a stratified splitter"):
    """Fold ``k`` has a validation point and training points of every class (``hint``: what
    to do otherwise)."""
    if train_classes < n_classes:
        raise ValueError(
            f"cross-validation fold {k} has training samples of only {train_classes} of the "
            f"{n_classes} classes; {hint}"
        )
    if n_val == 0:
        raise ValueError(f"cross-validation fold {k} has an empty validation set")


def validation_total(splits, sample_weight=None):
    """The denominator of the pooled CV error: the validation points of all folds (their
    weight with sample weights)."""
    if sample_weight is None:
        return int(sum(len(va) for _, va in splits))
    return float(sum(sample_weight[va].sum() for _, va in splits))


def uses_loo(cv, plan, codes, groups, who="KPM"):
    """Whether D and C are chosen by the leave-one-out error of the squared-hinge SVM: with
    ``cv='loo'``, or ``cv='auto'`` where it applies -- the squared-hinge SVM with the CV rule,
    and two samples or more of every class (two distinct ones where the copies of a sample,
    ``groups``, are left out together); else the K folds, which keep a single sample of a
    class in every training part. ``cv='loo'`` where it does not apply is an error."""
    applies = plan.formulation == "svm" and plan.loss == "squared_hinge"
    if isinstance(cv, str) and cv == "loo":
        if not applies:
            raise ValueError(f"{who}: cv='loo' (the leave-one-out error of the squared-hinge SVM) needs "
                             "formulation='svm' (or 'auto' with selection='cv') and loss='squared_hinge'; "
                             "give cv an int or a splitter for the papers' LP or the hinge loss")
        return True
    if not (isinstance(cv, str) and applies):
        return False
    if groups is None:
        return np.bincount(codes).min() >= 2
    distinct = np.unique(np.column_stack([codes, groups]), axis=0)[:, 0]  # (class, group) pairs
    return np.bincount(distinct, minlength=codes.max() + 1).min() >= 2


def _parallel(n_jobs, prefer):
    """scikit-learn's :class:`~sklearn.utils.parallel.Parallel` (its configuration travels to
    the workers): ``n_jobs=None`` is one job unless a ``joblib.parallel_backend`` context says
    otherwise; loky's worker processes run on ``cores // n_jobs`` BLAS threads each."""
    from sklearn.utils.parallel import Parallel

    return Parallel(n_jobs=n_jobs, prefer=prefer)


def cross_validate(job, n_folds, *, n_jobs=None, prefer=None, progress=None):
    """``[job(k) for k in range(n_folds)]`` in joblib workers (``prefer``: 'threads' or
    processes), each job's seconds recorded in its :class:`~kpm.machine.engine.FoldCurves`
    (``progress``: a :class:`~kpm.machine.progress.Progress`, told when a fold is done)."""
    from sklearn.utils.parallel import delayed

    progress = progress or Progress()
    progress(f"cross-validation: {n_folds} folds")
    return _parallel(n_jobs, prefer)(delayed(_timed)(job, k, n_folds, progress) for k in range(n_folds))


def _timed(job, k, n_folds=None, progress=None):
    t0 = time.perf_counter()
    curves = job(k)
    for c in curves if isinstance(curves, list) else [curves]:
        c.seconds = time.perf_counter() - t0
    if progress is not None:
        progress(f"fold {k + 1} of {n_folds} done ({time.perf_counter() - t0:.1f} s)")
    return curves


def _c_errors(fold, Cs, loss, max_sweeps):
    """The C stage on a fold: the misclassified validation points of the SVM on all the
    fold's columns (its largest D) for every C of the increasing ``Cs``
    (:func:`kpm.hinge.svm_path.svm_c_path` per one-vs-rest problem, warm along C)."""
    Z_tr, Y_tr = fold.train
    Z_va, _, codes_va = fold.val
    s = np.asarray(fold.scale[: Z_tr.shape[1]], dtype=float)
    Phi_va = Z_va * s
    F = np.zeros((len(codes_va), len(Cs), Y_tr.shape[1]))
    for c in range(Y_tr.shape[1]):
        W, b = svm_c_path(Z_tr * s, Y_tr[:, c], Cs, loss=loss, max_sweeps=max_sweeps,
                          sample_weight=fold.train_weights)
        F[:, :, c] = Phi_va @ W.T + b
    return fold.val_errors(predict_codes(F) != codes_va[:, None])


class FoldPath:
    """One fold's SVM paths along the D grid, one solver per one-vs-rest problem, with the
    fold's curves so far."""

    def __init__(self, fold, C, plan):
        Z_tr, self.Y_tr = fold.train
        Z_va, _, self.codes_va = fold.val
        self.fold = fold
        self.m = self.c_dim = Z_tr.shape[1]
        scale = np.asarray(fold.scale[: self.m], dtype=float)
        self.Phi_tr, self.Phi_va = Z_tr * scale, Z_va * scale
        self.solvers = [svm_solver(self.Phi_tr, self.Y_tr[:, c], C, loss=plan.loss, max_sweeps=plan.max_sweeps,
                                   sample_weight=fold.train_weights)
                        for c in range(self.Y_tr.shape[1])]
        self._start_curves()

    def _start_curves(self):
        """No D solved yet: empty curves, and the decision values of every problem at 0."""
        self.errors, self.clipped, self.seconds, self.solved = [], [], 0.0, 0
        self.F_va = np.zeros((len(self.codes_va), len(self.solvers)))
        self.F_tr = np.zeros((len(self.Y_tr), len(self.solvers)))

    def _solve(self, d, *, train=True):
        """The solvers at ``d`` columns: the decision values on the validation points (and,
        with ``train``, on the training points)."""
        for c, solver in enumerate(self.solvers):
            w, b = solver.solve(d)
            self.F_va[:, c] = self.Phi_va[:, :d] @ w + b
            if train:
                self.F_tr[:, c] = self.Phi_tr[:, :d] @ w + b

    def _val_errors(self):
        return self.fold.val_errors(predict_codes(self.F_va) != self.codes_va)

    def advance(self, D):
        """Solve at D (capped by the fold's columns) and record the curves; the errors."""
        t0 = time.perf_counter()
        d = min(int(D), self.m)
        if d > self.solved:
            self._solve(d)
            self.solved = d
        errors = self._val_errors()
        self.errors.append(errors)
        self.clipped.append(float(clipped_risk(self.F_tr[:, None, :], self.Y_tr, self.fold.train_weights)[0]))
        self.seconds += time.perf_counter() - t0
        return errors

    def errors_at_C(self, C):
        """Stage one's model at a new C: the solvers re-solved at stage one's D (``c_dim``:
        the fold's largest D), warm from their last solution; the misclassified validation
        points (no curves recorded)."""
        for solver in self.solvers:
            solver.set_C(C)
        self._solve(self.c_dim, train=False)
        return self._val_errors()

    def curves(self, n_grid, n_used, where):
        return FoldCurves(errors=pad(np.asarray(self.errors, dtype=float), n_grid),
                          clipped=pad(np.asarray(self.clipped), n_grid), n_used=n_used, n_valid=n_used,
                          fallbacks=0, failures=[], seconds=self.seconds)


@dataclass
class LooData:
    """The whole training set as the one "fold" of the leave-one-out error (:class:`LooPath`).

    Attributes
    ----------
    Phi : ndarray (n, m)
        The SVM's features (the basis's columns times their scale).
    Y : ndarray (n, n_problems)
        The one-vs-rest targets.
    codes : ndarray (n,)
        The class codes.
    weights : ndarray (n,) or None
        The sample weights (each point's ``C w_i``; its error counts ``w_i``).
    scale : ndarray (m,)
        The columns' scale: ``Phi = Z * scale`` for the basis's columns ``Z``, in whose
        coordinates the full-data paths are kept (:meth:`LooPath.solutions`).
    groups : ndarray (n,) of int or None
        The copies of a sample (identical rows of ``Phi``) share a group and are left out
        together; None: one point at a time.
    c_dim : int or None
        The D at which stage one compares the C values (None: all m columns).
    paths : list of LooPath
        The paths along D, in the order of their C, once their curves are made: the full-data
        paths of the final fit.
    """

    Phi: np.ndarray
    Y: np.ndarray
    codes: np.ndarray
    weights: np.ndarray | None = None
    scale: np.ndarray | None = None
    groups: np.ndarray | None = None
    c_dim: int | None = None
    where: str = "leave-one-out"
    paths: list = field(default_factory=list)  # the finished paths along D, one per C, in order

    @property
    def train_weights(self):
        return self.weights

    @property
    def total(self):
        """The denominator of the leave-one-out error: the points (their total weight)."""
        return len(self.codes) if self.weights is None else float(self.weights.sum())

    @property
    def stage_one_dim(self):
        """The D of stage one: ``c_dim``, at most the m columns."""
        m = self.Phi.shape[1]
        return m if self.c_dim is None else min(m, int(self.c_dim))


class LooPath(FoldPath):
    """The squared-hinge SVMs of the whole training set along the D grid, scored by their
    leave-one-out errors (:meth:`kpm.hinge.squared_hinge.SquaredHingeSVM.loo_margins`): a
    fold path whose validation points are the training points, each under the model fitted
    without it (without all its copies, with the data's ``groups``)."""

    def __init__(self, data, C, plan):  # noqa: D107 (the data: a LooData)
        self.fold, self.Y_tr, self.codes_va = data, data.Y, data.codes
        self.Phi_tr = np.ascontiguousarray(data.Phi, dtype=float)
        self.m = self.Phi_tr.shape[1]
        self.c_dim = data.stage_one_dim
        self.solvers = [svm_solver(self.Phi_tr, data.Y[:, c], C, loss="squared_hinge", sample_weight=data.weights)
                        for c in range(data.Y.shape[1])]
        self.kept = [[] for _ in self.solvers]
        self._start_curves()

    def _solve(self, d, *, train=True):
        """As the fold's, the validation values being the leave-one-out ones; along D
        (``train``) each problem's solution is kept (:meth:`solutions`)."""
        for c, solver in enumerate(self.solvers):
            work = solver.work
            w, b = solver.solve(d)
            f = self.Phi_tr[:, :d] @ w + b
            self.F_va[:, c] = self.Y_tr[:, c] * solver.loo_margins(self.Y_tr[:, c] * f, self.fold.groups)
            if train:
                self.F_tr[:, c] = f
                self.kept[c].append(((w.copy(), b), solver.work - work))

    def solutions(self, grid):
        """The full-data paths of this C on ``grid``, the first grid points of the path along
        D, from the solutions kept there (the same solver and warm starts as
        :func:`kpm.hinge.svm_path.svm_path`, so the same path): one
        :class:`~kpm.hinge.lp_path.HingePath` per problem in the coordinates of the basis (its
        columns' ``scale``), or None beyond the grid points solved."""
        n = len(grid)
        if n > len(self.kept[0]):
            return None
        return [solved_path(solver, self.fold.scale, grid, [s for s, _ in kept[:n]], [k for _, k in kept[:n]],
                            self.fold.weights) for solver, kept in zip(self.solvers, self.kept)]

    def curves(self, n_grid, n_used, where):
        self.fold.paths.append(self)
        return super().curves(n_grid, n_used, where)

    def _val_errors(self):
        return misclassified(predict_codes(self.F_va) != self.codes_va, self.fold.weights)


def svm_c_curve(folds, Cs, plan, n_samples, *, patience=C_PATIENCE, make_path=FoldPath, above=None):
    """Stage one with early stopping: the folds' SVMs at stage one's D (their largest, or
    the leave-one-out data's ``c_dim``), advanced together
    from the largest C of the increasing ``Cs`` down, each C warm-started from the previous
    one; the sweep ends once ``patience`` values in a row have a pooled CV error above the
    best so far (None: every C). The small C values it skips are the expensive ones (nearly
    every point inside the margin). ``make_path``: the path of a fold (:class:`FoldPath`, or
    :class:`LooPath` for the leave-one-out error). Returns the pooled CV error per C (NaN
    where not reached).

    ``above``: the grid's smallest error, that of its largest C. Given, ``Cs`` are the
    values above the grid (:data:`kpm.machine.formulation.C_EXTENSION`), tried from the
    smallest up; the sweep ends once ``patience`` values in a row do not beat the best so
    far (ties keep the smaller C)."""
    upward = above is not None
    paths = [make_path(f, Cs[0] if upward else Cs[-1], plan) for f in folds]
    curve = np.full(len(Cs), np.nan)
    best, worse = (above if upward else np.inf), 0
    with small_blas(max(p.c_dim for p in paths) + 1):  # the Newton steps' (D + 1) x (D + 1) systems
        for j in (range(len(Cs)) if upward else range(len(Cs) - 1, -1, -1)):
            curve[j] = sum(p.errors_at_C(Cs[j]) for p in paths) / n_samples
            chosen = curve[j] < best if upward else curve[j] <= best  # ties: the smaller C
            best, worse = (curve[j], 0) if chosen else (best, worse + 1)
            if patience is not None and worse >= patience:
                break
    return curve


def svm_d_path(folds, C, grid, plan, *, early_stopping=False, stop_below=np.inf, progress=None, make_path=FoldPath):
    """The folds' SVM paths at one C (``make_path``: as :func:`svm_c_curve`), advanced
    together along the D grid: their :class:`~kpm.machine.engine.FoldCurves` (padded to the
    grid).

    With ``early_stopping`` the sweep ends at the first grid D > 2 D_best + 20, D_best the
    pooled CV minimiser so far (as the LP paths' early stopping); the curves then cover the
    grid points reached -- once D_best's pooled errors are below ``stop_below`` (in their
    units: points, or their weight); until then the sweep goes on to the end of the grid."""
    progress = progress or Progress()
    paths = [make_path(f, C, plan) for f in folds]
    best, best_D, n_used = np.inf, None, len(grid)
    with small_blas(int(grid[-1]) + 1):  # the Newton steps' (D + 1) x (D + 1) systems
        for gi, D in enumerate(grid):
            total = sum(p.advance(D) for p in paths)
            progress(f"C={C:g}: D={int(D)}, pooled CV errors {total:g}", level=2)
            if total < best:
                best, best_D = total, int(D)
            if early_stopping and D > 2 * best_D + 20 and best < stop_below:
                n_used = gi + 1
                break
    progress(f"C={C:g}: the folds' paths along D done (D up to {int(grid[n_used - 1])}; best D={best_D})")
    return [p.curves(len(grid), n_used, f.where) for p, f in zip(paths, folds)]


def cross_validate_svm(fold_of, n_folds, plan, grid, n_samples, *, early_stopping=False, n_jobs=None,
                       prefer=None, progress=None):
    """``formulation='svm'``: the folds' SVM paths for the C values of the plan.

    The folds' data are made first (in joblib workers: a fold may decompose its kernel
    matrix). With ``c_selection='two-stage'`` stage one keeps the C of the smallest pooled CV
    error of the SVM at each fold's largest D (ties -> the smaller C); with ``early_stopping``
    the C values are tried from the largest down and stop once the error has risen
    (:func:`svm_c_curve`). Then, for each C kept, the folds' paths along the D grid
    (:func:`svm_d_path`). Returns ``(Cs, stage_one, curves)``: the C values kept, stage one's
    pooled CV error per C of the plan (None without stage one; NaN for a C not tried) and,
    per C kept, the folds' :class:`~kpm.machine.engine.FoldCurves`. ``n_samples``: the
    denominator of the pooled CV errors (:func:`validation_total`).
    """
    from sklearn.utils.parallel import delayed

    progress = progress or Progress()
    progress(f"cross-validation: the bases of {n_folds} folds")
    folds = _parallel(n_jobs, prefer)(delayed(_timed_fold)(fold_of, k, n_folds, progress) for k in range(n_folds))

    def c_curve(Cs, above=None):
        if early_stopping:
            return svm_c_curve(folds, Cs, plan, n_samples, above=above)
        # without early stopping every C of Cs is tried, above the grid as in it
        errors = _parallel(n_jobs, prefer)(
            delayed(_c_errors)(f, Cs, plan.loss, TWO_STAGE_MAX_SWEEPS) for f in folds)
        return sum(errors) / n_samples

    return _svm_stages(folds, c_curve, plan, grid, n_samples, early_stopping=early_stopping, progress=progress,
                       make_path=FoldPath, what=f"at the largest D, {n_folds} folds")


def loo_svm(data, plan, grid, *, early_stopping=False, progress=None):
    """``formulation='svm'`` with the squared hinge, scored by the leave-one-out error of the
    whole training set instead of K folds (:class:`LooPath`): the same stages as
    :func:`cross_validate_svm` (stage one without early stopping tries every C) and the same
    return value, with one "fold", ``data`` (a :class:`LooData`), whose validation points are
    all the training points."""
    progress = progress or Progress()

    def c_curve(Cs, above=None):
        return svm_c_curve([data], Cs, plan, data.total, patience=LOO_C_PATIENCE if early_stopping else None,
                           make_path=LooPath, above=above)

    what = f"at D={data.stage_one_dim}, cross-validation by the leave-one-out error"
    return _svm_stages([data], c_curve, plan, grid, data.total, early_stopping=early_stopping, progress=progress,
                       make_path=LooPath, what=what)


def _svm_stages(folds, c_curve, plan, grid, n_samples, *, early_stopping, progress, make_path, what):
    """Stage one (``c_curve()``: its pooled error per C) where the plan has it, then the
    folds' paths along D (``make_path``) for each C kept: ``(Cs, stage_one, curves)``."""

    def d_stage(C, stop_below=np.inf):
        return svm_d_path(folds, C, grid, plan, early_stopping=early_stopping, stop_below=stop_below,
                          progress=progress, make_path=make_path)

    Cs, stage_one = plan.Cs, None
    if plan.two_stage:
        progress(f"C stage: {len(plan.Cs)} values of C {what}")
        stage_one = c_curve(plan.Cs)
        if plan.C_extension is not None:
            stage_one = np.concatenate([stage_one, _c_extension(c_curve, stage_one, plan.C_extension, progress)])
        Cs = plan.searched_Cs[[int(np.nanargmin(stage_one))]]  # first minimum: ties -> the smaller C
        progress(f"C stage done: C={Cs[0]:g} (pooled CV error {float(np.nanmin(stage_one)):.4f})")
    if stage_one is None:
        curves = [d_stage(C) for C in Cs]
    else:  # one C: the D path goes on until a D beats the kernel SVM's CV error by one standard
        # error, so that the rule CV(one_se=True) can see the largest D
        e = float(np.nanmin(stage_one))
        curves = [d_stage(Cs[0], n_samples * (e - one_standard_error(e, n_samples)))]
    return Cs, stage_one, curves


def _c_extension(c_curve, stage_one, Cs, progress):
    """Stage one's errors at the C values ``Cs`` above the grid (NaN where not tried): tried
    where the grid's largest C has the smallest error and that error is not zero, the
    grid's end then being no evidence that a larger C is worse."""
    top = float(stage_one[-1])
    if int(np.nanargmin(stage_one)) < len(stage_one) - 1 or top == 0.0:
        return np.full(len(Cs), np.nan)
    progress(f"C stage: the largest C has the smallest error ({top:.4f}): C above it, up to {Cs[-1]:g}")
    return c_curve(Cs, above=top)


def _timed_fold(fold_of, k, n_folds, progress):
    """Fold ``k``'s :class:`Fold` (its basis), with a progress line."""
    t0 = time.perf_counter()
    fold = fold_of(k)
    progress(f"fold {k + 1} of {n_folds}: basis ready ({time.perf_counter() - t0:.1f} s)")
    return fold
