"""What a KPM fit solves in each subspace, and how it chooses C: the fit's plan.

The KPM papers (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005) minimise the
unregularised hinge risk over ``S_D`` (``formulation='paper'``: the hinge LP of
:mod:`kpm.hinge.lp_path`). Beyond them, ``formulation='svm'`` fits the soft-margin SVM
restricted to ``S_D`` (:mod:`kpm.hinge.svm_path`), with C chosen by the same
cross-validation as D: jointly, or first C by the CV error of the SVM at the largest D, then
D at that C (``c_selection``). The user guide ("Beyond the papers") gives the reasons and
the measurements.

:class:`FitPlan` is an estimator's ``selection``, ``formulation``, ``C`` and ``c_selection``
resolved once, at the start of ``fit``; the rest of the fit reads the plan. The functions on
feature columns take any columns ``Z`` and a ``scale`` per column such that ``Z * scale`` are
the SVM's features: the exact KPM's eigenvectors with ``scale = sqrt(lambda)``, the
Nyström KPM's eigenfunctions with ``scale = sqrt(lambda / m)``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kpm.hinge.svm_path import C_PATH_MAX_SWEEPS, LOSSES, MAX_SWEEPS, TOL, svm_paths
from kpm.machine.engine import FullPath
from kpm.machine.rules import CV, SelectionRule, as_rule
from kpm.validation import check_positive_grid

__all__ = [
    "FORMULATIONS",
    "C_SELECTIONS",
    "DEFAULT_C",
    "C_EXTENSION",
    "TWO_STAGE_MAX_SWEEPS",
    "C_PATIENCE",
    "LOO_C_PATIENCE",
    "SVM_SOLVER",
    "FitPlan",
    "plan_fit",
    "c_selection_curve",
    "LOSSES",
    "SVMFullPath",
]

#: The estimators' ``formulation`` values: the paper's hinge LP in S_D, the SVM in S_D, or
#: ``'auto'`` (the SVM where D is chosen by cross-validation, the LP otherwise).
FORMULATIONS = ("auto", "paper", "svm")
#: How ``formulation='svm'`` chooses C: jointly with D, or first C at the largest D, then D.
C_SELECTIONS = ("joint", "two-stage")
#: The C grid of each C rule when ``C=None``: the two-stage rule compares each C on one model
#: (the SVM at the largest D), so it can search as wide a grid as a CV-tuned SVC; the joint
#: rule compares every (D, C) pair, and over a wide grid small-D, large-C models win its CV
#: by chance (see the user guide, "Beyond the papers").
DEFAULT_C = {"joint": (0.1, 0.3, 1.0, 3.0, 10.0),
             "two-stage": tuple(float(c) for c in np.logspace(-2, 3, 11))}
#: ``c_selection='two-stage'`` with ``C=None``: the C values above its grid that stage one
#: tries, from the smallest up, where the grid's largest C (1000) has the smallest CV error
#: (and that error is not zero): on data whose classes want a harder margin (a wide kernel)
#: the grid's end would otherwise choose C. The sweep stops as the grid's does
#: (:func:`kpm.machine.folds.svm_c_curve`).
C_EXTENSION = tuple(float(c) for c in np.logspace(3.5, 6, 6))
#: ``c_selection='two-stage'``: sweeps of the dual coordinate descent per grid D at most, for
#: stage one's single D per C and for stage two's path: its wide C grid reaches C = 1000, where
#: the joint rule's 20 sweeps per D leave the dual far from converged (user guide, "Beyond the
#: papers").
TWO_STAGE_MAX_SWEEPS = C_PATH_MAX_SWEEPS
#: Stage one of ``c_selection='two-stage'`` with early stopping (:func:`kpm.machine.folds.svm_c_curve`):
#: the C values are tried from the largest down and the sweep ends after this many in a row
#: with a pooled CV error above the best so far.
C_PATIENCE = 2
#: ... and with the leave-one-out error (``cv='loo'``), whose stage one costs one solve per C
#: instead of one per fold: three values in a row, since its error counts on small sets often
#: rise by chance for two values and fall again (the user guide, "Beyond the papers").
LOO_C_PATIENCE = 3
#: The SVM solver's settings, for the records of the reproductions.
SVM_SOLVER = {"tol": TOL, "max_sweeps": MAX_SWEEPS, "two_stage_max_sweeps": TWO_STAGE_MAX_SWEEPS}


@dataclass(frozen=True)
class FitPlan:
    """An estimator's model-selection parameters, resolved once per fit.

    Attributes
    ----------
    rule : SelectionRule
        The rule that chooses D (``selection`` as an object of :mod:`kpm.machine.rules`).
    formulation : {'paper', 'svm'}
        What each subspace solves (``'auto'`` resolved).
    Cs : ndarray or None
        ``formulation='svm'``: the sorted C values; None for the paper's LP.
    c_selection : {'two-stage', 'joint'}
        How the SVM's C is chosen with CV.
    loss : {'squared_hinge', 'hinge'}
        The SVM's loss.
    C_extension : ndarray or None
        The C values above ``Cs`` that stage one tries where the largest of ``Cs`` has its
        smallest error (:data:`C_EXTENSION`, with the two-stage rule and ``C=None``); None:
        ``Cs`` only.
    """

    rule: SelectionRule
    formulation: str
    Cs: np.ndarray | None
    c_selection: str
    loss: str = "hinge"
    C_extension: np.ndarray | None = None

    @property
    def searched_Cs(self) -> np.ndarray | None:
        """The C values stage one may try: ``Cs``, then ``C_extension`` (where it has one)."""
        if self.C_extension is None:
            return self.Cs
        return np.concatenate([self.Cs, self.C_extension])

    @property
    def two_stage(self) -> bool:
        """Whether C is chosen first, by stage one's CV error at the largest D."""
        return self.formulation == "svm" and self.rule.needs_cv and self.c_selection == "two-stage"

    @property
    def max_sweeps(self) -> int:
        """Sweeps per grid D of the SVM paths: more with a wide C grid."""
        return MAX_SWEEPS if self.c_selection == "joint" else TWO_STAGE_MAX_SWEEPS


def plan_fit(est, *, lp_only=False, lp_reason=None) -> FitPlan:
    """The :class:`FitPlan` of a KPM estimator's (validated) parameters ``selection``,
    ``penalty``, ``slope_factor``, ``formulation``, ``C`` and ``c_selection``.

    ``formulation='auto'`` is the SVM where D is chosen by cross-validation (which then
    chooses C too) and the paper's LP for every other rule and wherever the caller needs the
    LP (``lp_only``; ``lp_reason`` says why, for the warning below). The C grid (``C=None``:
    :data:`DEFAULT_C` of the C rule) may hold several values only with the CV rule: the
    penalty and slope rules compare training risks, which always favour the largest C.
    ``selection='cv'`` with the SVM's two-stage C rule is ``CV(one_se=True)``: a D below the
    largest must beat the kernel SVM clearly.

    Warns (``UserWarning``) when ``C`` is given and the fit is the papers' LP, which has no C:
    the value would otherwise be ignored without a word.
    """
    rule = as_rule(est.selection, est.penalty, est.slope_factor)
    formulation = est.formulation
    if formulation == "auto":
        formulation = "svm" if isinstance(rule, CV) and not lp_only else "paper"
    if formulation == "svm" and isinstance(est.selection, str) and est.selection == "cv" and est.c_selection == "two-stage":
        rule = CV(one_se=True)
    if formulation == "paper" and est.C is not None:
        _warn_c_ignored(est, lp_reason)
    Cs = extension = None
    if formulation == "svm":
        Cs = check_positive_grid(DEFAULT_C[est.c_selection] if est.C is None else est.C, "C")
        if est.C is None and est.c_selection == "two-stage":  # several C: the CV rule (checked below)
            extension = np.asarray(C_EXTENSION)
        if len(Cs) > 1 and not isinstance(rule, CV):
            raise ValueError(
                f"formulation='svm' with several C values chooses (D, C) by cross-validation: "
                f"selection must be 'cv' (got {est.selection!r}); give one C to use another rule"
            )
    return FitPlan(rule, formulation, Cs, est.c_selection, getattr(est, "loss", "hinge"), extension)


def _warn_c_ignored(est, lp_reason):
    """``C`` given to a fit of the papers' LP: say that it is not used, and why."""
    name = getattr(est, "_name", type(est).__name__)
    if est.formulation == "paper":
        why = "formulation='paper' fits the papers' hinge LP in S_D"
        fix = "formulation='svm' fits the SVM in S_D with this C"
    elif lp_reason is not None:
        why = f"{lp_reason}, the fit is the papers' hinge LP in S_D (formulation='auto')"
        fix = "drop C"
    else:
        why = (f"selection={est.selection!r} with formulation='auto' fits the papers' hinge LP in S_D (the "
               "penalty and slope rules are the theory of its hinge-risk minimisers)")
        fix = ("give formulation='svm' with one C to fit the SVM in S_D under this rule, or selection='cv' "
               "to choose C by cross-validation")
    warnings.warn(
        f"{name}: C={est.C!r} is ignored: {why}, which minimises the unregularised hinge risk and has no C; "
        f"{fix}.",
        UserWarning,
        stacklevel=5,
    )


def c_selection_curve(Cs, stage_one):
    """``c_selection_curve_``: stage one's pooled CV error per C of ``c_selection='two-stage'``,
    from ``stage_one = [(kernel index, errors per C), ...]`` (None without stage one)."""
    if not stage_one:
        return None
    return {
        "kernel": np.repeat([i for i, _ in stage_one], len(Cs)),
        "C": np.tile(np.asarray(Cs, dtype=float), len(stage_one)),
        "cv_error": np.concatenate([e for _, e in stage_one]),
    }


@dataclass
class SVMFullPath:
    """The full-data SVM paths of one C on the columns ``Z * scale``: a ``(grid, Y) ->
    FullPath`` solver for :class:`kpm.machine.engine.KernelPaths` (``row_block``: the
    clipped risks summed over blocks of rows; ``sample_weight``: each sample's ``C w_i``;
    ``recorded``: a path that solved the same problems along the same grid, whose
    ``solutions(grid)`` are taken, on the first call, where it reached that far -- the
    leave-one-out path, :class:`kpm.machine.folds.LooPath`)."""

    Z: np.ndarray
    scale: np.ndarray
    C: float
    max_sweeps: int = MAX_SWEEPS
    row_block: int | None = None
    loss: str = "hinge"
    sample_weight: np.ndarray | None = None
    recorded: object = None

    def __call__(self, grid, Y):
        paths = None
        if self.recorded is not None:  # taken once: the fitted model keeps no copy of the path's features
            paths, self.recorded = self.recorded.solutions(grid), None
        if paths is None:
            paths = svm_paths(self.Z, self.scale, Y, self.C, grid, loss=self.loss, max_sweeps=self.max_sweeps,
                              sample_weight=self.sample_weight)
        return FullPath.from_paths(paths, self.Z, grid, Y, row_block=self.row_block, weights=self.sample_weight)
