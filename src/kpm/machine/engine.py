"""The engine of the Kernel Projection Machine, shared by its estimators: paths x rule.

A KPM fit (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005) is a basis
(feature columns in order: the eigenvectors of the kernel matrix for
:class:`kpm.KernelProjectionMachine`, Nyström eigenfunctions for
:class:`kpm.NystroemKPM`), hinge-LP paths over the nested spans of its columns --
one per one-vs-rest problem, grown by :func:`kpm.hinge.lp_path.grow_path` with any
:class:`~kpm.hinge.lp_path.PathSolver` -- and a selection rule of :mod:`kpm.machine.rules`
applied to the curves of those paths. This module holds what does not depend on
the basis or the path solver:

* the typed curves: :class:`FoldCurves` (one CV fold), :class:`FullPath` (the
  full-data paths of one kernel), :class:`KernelPaths` (one kernel of the family),
  :func:`model_curves` (the family's :class:`~kpm.machine.rules.ModelCurves`);
* :func:`select_model`, which solves the full-data paths a rule needs and applies it,
  and :func:`check_rule_answerable`, the limits of answering another rule from a fit;
* the decision rule shared by every prediction: :func:`predict_codes` (decision values
  rounded to :data:`TIE_DECIMALS` decimals; ties to the first class, a zero decision
  value to the negative class), with the one-vs-rest targets of the validation layer
  (:func:`kpm.validation.targets.one_vs_rest`, re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from kpm.machine.rules import ModelCurves
from kpm.validation.targets import one_vs_rest, ovr_targets

__all__ = [
    "TIE_DECIMALS",
    "predict_codes",
    "one_vs_rest",
    "ovr_targets",
    "ovr_codes",
    "clipped_losses",
    "clipped_risk",
    "misclassified",
    "error_rate",
    "pad",
    "n_valid",
    "path_failures",
    "path_width",
    "decisions",
    "curve_sums",
    "FoldCurves",
    "FullPath",
    "KernelPaths",
    "Family",
    "cv_extent",
    "model_curves",
    "select_model",
    "selection_curve",
    "check_rule_answerable",
]

TIE_DECIMALS = 9


def predict_codes(F):
    """Predicted class codes from decision values (..., n_paths).

    Decision values equal to ``1e-9`` are ties (the hinge LP puts many points exactly
    on the margin, e.g. two one-vs-rest scores of exactly -1): they go to the first
    class, and a zero decision value to the negative class, whatever the rounding.
    """
    F = np.round(F, TIE_DECIMALS)
    if F.shape[-1] == 1:
        return (F[..., 0] > 0).astype(int)
    return np.argmax(F, axis=-1)


def ovr_codes(Y):
    """The class codes of one-vs-rest targets (:func:`ovr_targets`): the inverse map."""
    return (Y[:, 0] > 0).astype(int) if Y.shape[1] == 1 else np.argmax(Y, axis=1)


def clipped_losses(F, Y):
    """The hinge losses of the clipped decision values ``F`` (n, n_grid, n_paths) against
    the one-vs-rest targets ``Y`` (n, n_paths), point by point: (n, n_grid, n_paths)."""
    return np.maximum(0.0, 1.0 - Y[:, None, :] * np.clip(F, -1.0, 1.0))


def clipped_risk(F, Y, weights=None):
    """Mean hinge loss of the clipped decision values, averaged over the paths: (n_grid,);
    with ``weights`` (one per point) the weighted mean."""
    loss = clipped_losses(F, Y)
    if weights is None:
        return loss.mean(axis=(0, 2))
    return np.tensordot(weights, loss.mean(axis=2), axes=1) / float(np.sum(weights))


def misclassified(wrong, weights=None):
    """The misclassified points of a boolean array ``wrong`` ((n,) or (n, n_grid)), summed
    over the points: their number, or with ``weights`` (one per point) their total weight."""
    return wrong.sum(axis=0) if weights is None else weights @ wrong


def error_rate(F, codes, weights=None):
    """The (weighted) share of misclassified points at every grid D of decision values
    ``F`` (n, n_grid, n_paths): (n_grid,)."""
    wrong = predict_codes(F) != codes[:, None]
    return wrong.mean(axis=0) if weights is None else (weights @ wrong) / float(np.sum(weights))


def pad(v, length):
    """``v`` extended to ``length`` with its last value."""
    return v if len(v) >= length else np.concatenate([v, np.full(length - len(v), v[-1])])


def n_valid(paths, n_grid):
    """Grid points (of a grid of ``n_grid``) at which all paths are defined."""
    return min([n_grid] + [p.n_valid for p in paths if p.failure is not None])


def path_failures(paths, where):
    """The failed paths as records of ``lp_failures_``."""
    return [
        {"path": where, "problem": c, "dim": p.failed_dim, "error": p.failure}
        for c, p in enumerate(paths)
        if p.failure is not None
    ]


def path_width(paths):
    """Feature columns the paths' solutions use."""
    return max(p.coef.shape[1] for p in paths)


def decisions(paths, Z):
    """Decision values at every grid D: (n, n_grid, n_paths)."""
    return np.stack([p.decision_values(Z) for p in paths], axis=2)


def curve_sums(paths, Z, Y, codes, rows, block=8192, weights=None):
    """Misclassified points and ``n *`` the clipped hinge risk of the paths' solutions at
    every grid D, over the ``rows`` of the features ``Z`` (in blocks of rows, so that
    no more than ``block`` rows of decision values are held). ``codes=None``: the
    clipped risks only (the errors are zero). With ``weights`` (one per row of ``Z``) the
    sums weigh the points: the misclassified weight and the weighted clipped risk times
    the rows' total weight."""
    w = path_width(paths)
    n_grid = len(paths[0].dims)
    errors = np.zeros(n_grid, dtype=np.int64 if weights is None else np.float64)
    clipped = np.zeros(n_grid)
    for start in range(0, len(rows), block):
        r = rows[start : start + block]
        F = decisions(paths, Z[r, :w])
        wr = None if weights is None else weights[r]
        if codes is not None:
            errors += misclassified(predict_codes(F) != codes[r][:, None], wr)
        if wr is None:
            clipped += clipped_risk(F, Y[r]) * len(r)
        else:
            clipped += np.tensordot(wr, clipped_losses(F, Y[r]).mean(axis=2), axes=1)
    return errors, clipped


@dataclass
class FoldCurves:
    """One CV fold's curves on the D grid (padded with their last value past the fold's end).

    ``errors``: misclassified validation points; ``clipped``: the clipped training hinge
    risk of the fold's solution; ``n_used``: grid points solved; ``n_valid``: grid
    points at which the fold's paths are defined (all, unless no solver solved some
    dimension: then the CV curve ends before it); ``fallbacks`` and ``failures`` as in
    ``lp_fallbacks_`` and ``lp_failures_``.
    """

    errors: np.ndarray
    clipped: np.ndarray
    n_used: int
    n_valid: int
    fallbacks: int
    failures: list
    seconds: float = 0.0
    working_set: int = 0

    @classmethod
    def from_paths(cls, paths, errors, clipped, n_grid, where):
        """The curves of a fold's paths from their validation errors and clipped training
        risks on the paths' grid (which may end before the fold's ``n_grid``)."""
        return cls(
            errors=pad(np.asarray(errors)[:n_grid], n_grid),
            clipped=pad(np.asarray(clipped)[:n_grid], n_grid),
            n_used=min(max(p.n_solved for p in paths), n_grid),
            n_valid=n_valid(paths, n_grid),
            fallbacks=sum(p.fallbacks for p in paths),
            failures=path_failures(paths, where),
        )


def cv_extent(folds):
    """Grid points the CV curves cover: to the last point any fold solved (beyond, the CV
    curve is flat: ties going to the smaller D, no later D can be selected), ending before
    a dimension that no solver solved on some fold."""
    return min(max(f.n_used for f in folds), min(f.n_valid for f in folds))


@dataclass
class FullPath:
    """The full-data paths of one kernel (one per one-vs-rest problem) on ``dims``, with
    their training hinge risk, clipped hinge risk and error rate (weighted means with
    sample weights)."""

    paths: list
    dims: np.ndarray
    hinge_risk: np.ndarray
    clipped_risk: np.ndarray
    failures: list
    train_error: np.ndarray | None = None

    @classmethod
    def from_paths(cls, paths, Z, grid, Y, row_block=None, clipped_sums=None, error_sums=None, weights=None):
        """The paths solved on ``grid`` with the training features ``Z``; they end before
        a dimension no solver solved. ``row_block``: the clipped risks and errors are summed
        over blocks of that many rows (:func:`curve_sums`), for large n; default: at once.
        ``clipped_sums`` and ``error_sums``: ``n *`` the clipped risks and the misclassified
        points on the grid, summed by the caller where the features live (``Z`` is then not
        read, and ``Y`` only for its length). ``weights``: the points' sample weights."""
        n_ok = n_valid(paths, len(grid))
        total = len(Y) if weights is None else float(np.sum(weights))
        errors = None
        if clipped_sums is not None:
            clipped = np.asarray(clipped_sums)[:n_ok] / total
            if error_sums is not None:
                errors = np.asarray(error_sums, dtype=float)[:n_ok] / total
        elif row_block is None:
            F = decisions(paths, Z[:, : path_width(paths)])[:, :n_ok]
            clipped = clipped_risk(F, Y, weights)
            errors = error_rate(F, ovr_codes(Y), weights)
        else:
            wrong, sums = curve_sums(paths, Z, Y, ovr_codes(Y), np.arange(len(Y)), row_block, weights)
            clipped, errors = sums[:n_ok] / total, wrong[:n_ok] / total
        return cls(
            paths=paths,
            dims=grid[:n_ok],
            hinge_risk=np.mean([p.hinge_risk for p in paths], axis=0)[:n_ok],
            clipped_risk=clipped,
            failures=path_failures(paths, "full data"),
            train_error=errors,
        )


@dataclass
class KernelPaths:
    """One kernel of the family: its basis, its D grid, the CV folds' curves and the full-data path.

    ``n_used``: the grid points that are models (the CV sweep's end, or where a path
    ended before a dimension no solver solved). ``solve_path(grid, Y)`` solves the
    full-data paths (:class:`FullPath`) on a grid; ``full`` is set by :meth:`solve_full`
    (for the CV rule only the chosen kernel's, up to the chosen D). ``capped``: the grid
    ends below the rank of the basis (``max_components``), so that a D chosen at its end may
    want a larger one.
    """

    basis: object
    grid: np.ndarray
    n_used: int
    solve_path: Callable
    folds: list | None = None
    full: FullPath | None = None
    degeneracy: object = None
    excess: np.ndarray | None = None
    capped: bool = False

    @property
    def dims(self):
        return self.grid[: self.n_used]

    def solve_full(self, Y, upto):
        """Solve the full-data paths on the first ``upto`` grid points; no model exists
        beyond a dimension that no solver solved (``n_used`` ends there)."""
        self.full = self.solve_path(self.grid[:upto], Y)
        if len(self.full.dims) < upto:
            self.n_used = min(self.n_used, len(self.full.dims))

    @property
    def failures(self):
        """Records of ``lp_failures_``: the folds' first, then the full data's."""
        folds = [rec for f in self.folds or [] for rec in f.failures]
        return folds + (self.full.failures if self.full is not None else [])

    @property
    def fallbacks(self):
        return sum(f.fallbacks for f in self.folds or []) + sum(
            p.fallbacks for p in (self.full.paths if self.full is not None else [])
        )


@dataclass
class Family:
    """The models of a fit: one :class:`KernelPaths` per member of the family, a member
    being a kernel (the paper's LP) or a (kernel, C) pair (``formulation='svm'``).

    ``members[i] = (kernel index, C)`` of ``paths[i]`` (C None for the LP); ``stage_one``
    holds ``(kernel index, pooled CV error per C)`` of ``c_selection='two-stage'`` over
    ``all_Cs``. ``cv_total``: the denominator of the pooled CV errors -- the validation
    points of all folds (their weight with sample weights); None: the training points.
    """

    paths: list = field(default_factory=list)
    members: list = field(default_factory=list)
    stage_one: list = field(default_factory=list)
    all_Cs: object = None
    cv_total: float | None = None


def model_curves(fits, n):
    """The family's curves for the selection rules: every kernel's models, in kernel order
    (``n``: the denominator of the pooled CV errors, :attr:`Family.cv_total`)."""
    dims = np.concatenate([kp.dims for kp in fits])
    kidx = np.concatenate([np.full(kp.n_used, i) for i, kp in enumerate(fits)])
    hinge = np.full(len(dims), np.nan)
    clipped = np.full(len(dims), np.nan)
    train_error = np.full(len(dims), np.nan)
    pos = 0
    for kp in fits:
        if kp.full is not None:
            m = len(kp.full.dims)
            hinge[pos : pos + m] = kp.full.hinge_risk
            clipped[pos : pos + m] = kp.full.clipped_risk
            if kp.full.train_error is not None:
                train_error[pos : pos + m] = kp.full.train_error
        pos += kp.n_used
    if fits[0].folds is None:
        return ModelCurves(dims, kidx, np.full(len(dims), np.nan), hinge, clipped, n_samples=n,
                           train_error=train_error)
    cv_error = np.concatenate([(sum(f.errors for f in kp.folds) / n)[: kp.n_used] for kp in fits])
    per_fold = [
        [np.concatenate([getattr(kp.folds[k], name)[: kp.n_used] for kp in fits]) for k in range(len(fits[0].folds))]
        for name in ("errors", "clipped")
    ]
    return ModelCurves(dims, kidx, cv_error, hinge, clipped, np.vstack(per_fold[0]), np.vstack(per_fold[1]), n,
                       train_error=train_error)


def select_model(fits, rule, Y, cv_total=None):
    """Solve the full-data paths the rule needs and apply it: the chosen model.

    A rule that reads the training risks gets every kernel's full path on its models;
    otherwise only the chosen kernel's path is solved, up to the chosen D (should it
    end before that D, the rule chooses again among the dimensions it reached).
    ``cv_total``: the denominator of the pooled CV errors (default: ``len(Y)``).
    """
    n = len(Y) if cv_total is None else cv_total
    if rule.needs_training_risks:
        for kp in fits:
            kp.solve_full(Y, kp.n_used)
        return rule.select(model_curves(fits, n))
    while True:
        choice = rule.select(model_curves(fits, n))
        kp = fits[choice.kernel_index]
        upto = int(np.searchsorted(kp.grid, choice.n_components)) + 1
        kp.solve_full(Y, upto)
        if kp.n_used >= upto:
            return choice


def selection_curve(curves, penalty):
    """The ``selection_curve_`` of a fit: its curves per model, with the penalised criterion."""
    return {
        "D": curves.D,
        "kernel": curves.kernel,
        "cv_error": curves.cv_error,
        "hinge_risk": curves.hinge_risk,
        "clipped_risk": curves.clipped_risk,
        "train_error": curves.train_error if curves.train_error is not None else np.full(len(curves.D), np.nan),
        "criterion": curves.clipped_risk + (penalty if penalty is not None else np.nan) * curves.D,
    }


def check_rule_answerable(rule, curves, selection, extend=""):
    """Raise ``ValueError`` where a fit's curves cannot answer ``rule`` (see ``select_dim``).

    ``selection`` is the fit's own; ``extend`` names what solves the rest of the path.
    """
    if rule.needs_cv and not curves.has_cv:
        raise ValueError(
            f"{rule!r} needs the cross-validation curves; this model was fitted with "
            f"selection={selection!r}, which runs no cross-validation"
        )
    if rule.needs_training_risks and np.isnan(curves.clipped_risk).any():
        raise ValueError(
            f"{rule!r} needs the training risk of every model; this fit solved the full-data "
            f"path only up to the selected D ({extend}fit with a rule "
            "that solves every model, e.g. selection='penalty')"
        )
    if rule.fixed_dim is not None and rule.fixed_dim not in curves.D:
        raise ValueError(f"{rule!r}: D={rule.fixed_dim} is not one of this fit's models")
