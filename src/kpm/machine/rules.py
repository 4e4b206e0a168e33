"""Selection rules of the Kernel Projection Machine as small objects.

A rule picks one model from the curves a fit has computed (:class:`ModelCurves`: one
entry per model, a dimension D of one kernel's grid, with its cross-validated error
and training risks); it solves nothing. The rules apply the pure functions of
:mod:`kpm.machine.selection`, ties going to the smaller D:

* :class:`CV` -- the smallest pooled K-fold CV error (Blanchard, Massart, Vert &
  Zwald 2004);
* :class:`Penalty` -- ``argmin_D R_n(clip f_D) + lam D`` (Zwald & Blanchard 2005, eq. 3),
  ``lam`` given or chosen by K-fold CV over the exact breakpoints of the folds'
  penalty paths;
* :class:`Slope` -- the same penalty with ``lam = factor * lam_jump``, ``lam_jump`` the
  penalty of the largest dimension jump (Birgé & Massart's slope heuristic);
* :class:`FixedD` -- a given D.

``KernelProjectionMachine(selection=rule)`` fits with a rule, and a fitted machine
answers which model another rule picks from its curves without re-fitting
(:meth:`kpm.KernelProjectionMachine.select_dim`). A new rule is a subclass of
:class:`SelectionRule` with a :meth:`~SelectionRule.select` method.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.machine.selection import candidate_penalties, penalty_path, select_cv, select_penalty, slope_heuristic
from kpm.validation import Boolean, InstanceOf, Integer, Options, Real, check_int, check_param, check_real

__all__ = ["ModelCurves", "Choice", "SelectionRule", "CV", "Penalty", "Slope", "FixedD", "as_rule", "largest_within_one_se",
           "one_standard_error",
           "SELECTION_CONSTRAINTS"]


@dataclass(frozen=True)
class ModelCurves:
    """The curves a selection rule reads, one entry per model (a D of one kernel's grid).

    Attributes
    ----------
    D : ndarray of int (m,)
        The dimension of each model.
    kernel : ndarray of int (m,)
        The index of its kernel (all 0 for one kernel).
    cv_error : ndarray (m,)
        Pooled K-fold CV 0-1 error (misclassified validation points of all folds / n);
        NaN when no cross-validation was run.
    hinge_risk, clipped_risk : ndarray (m,)
        Training hinge risk ``R_n(f_D)`` and ``R_n(clip f_D)`` of the full-data
        solution; NaN where the full-data path was not solved.
    fold_errors, fold_clipped : ndarray (n_folds, m) or None
        Per CV fold: misclassified validation points and the clipped training risk of
        the fold's solution (None without cross-validation).
    n_samples : int
        Training samples (the denominator of the pooled CV errors: the validation points of
        all folds, their weight with sample weights).
    train_error : ndarray (m,) or None
        The training error rate of the full-data solution (weighted with sample weights);
        NaN where the full-data path was not solved.
    """

    D: np.ndarray
    kernel: np.ndarray
    cv_error: np.ndarray
    hinge_risk: np.ndarray
    clipped_risk: np.ndarray
    fold_errors: np.ndarray | None = None
    fold_clipped: np.ndarray | None = None
    n_samples: int = 0
    train_error: np.ndarray | None = None

    @property
    def has_cv(self) -> bool:
        return self.fold_errors is not None

    def index_of(self, kernel, D):
        """The entry of the model of kernel ``kernel`` and dimension ``D``, or None."""
        row = np.flatnonzero((self.kernel == kernel) & (self.D == D))
        return int(row[0]) if len(row) else None


@dataclass(frozen=True)
class Choice:
    """The model a rule picks.

    Attributes
    ----------
    index : int
        Its position in the curves.
    n_components : int
        Its dimension D.
    kernel_index : int
        Its kernel.
    penalty : float or None
        The ``lam`` of a penalty or slope rule.
    slope_lambda : float or None
        ``lam_jump`` of the slope heuristic.
    penalty_cv_curve : dict or None
        ``Penalty('cv')``: the candidate values of ``lam`` and their pooled CV errors.
    """

    index: int
    n_components: int
    kernel_index: int
    penalty: float | None = None
    slope_lambda: float | None = None
    penalty_cv_curve: dict | None = None


class SelectionRule:
    """Base of the selection rules: :meth:`select` picks a model from :class:`ModelCurves`.

    Class attributes tell the estimator what to compute for a rule: ``needs_cv``
    (the folds' curves) and ``needs_training_risks`` (the full-data path of every
    model; without it only the chosen model's path is solved).
    """

    needs_cv = False
    needs_training_risks = True

    @property
    def fixed_dim(self) -> int | None:
        """The D the rule fixes in advance (the path ends there), else None."""
        return None

    def select(self, curves: ModelCurves) -> Choice:  # pragma: no cover - abstract
        raise NotImplementedError

    def _choice(self, curves, idx, **kw):
        return Choice(int(idx), int(curves.D[idx]), int(curves.kernel[idx]), **kw)


@dataclass(frozen=True)
class CV(SelectionRule):
    r"""The model with the smallest pooled cross-validated 0-1 error (ties -> smaller D).

    The error is the estimator's (``cv``: K folds, or the leave-one-out error of
    :class:`~kpm.KernelProjectionMachine`'s default).

    Parameters
    ----------
    one_se : bool, default=False
        Then the largest D of that model's kernel (and C) whose pooled CV error is within one
        standard error :math:`\sqrt{e (1 - e) / n}` of the minimum :math:`e` (:math:`n` the
        validation points): a one-standard-error rule (Breiman et al. 1984) towards the larger model.
        It is the rule of the SVM formulation's ``c_selection='two-stage'``, whose largest
        D is the kernel SVM at the C chosen by cross-validation: a smaller D must beat it
        clearly, not by the chance of a few validation points.
    """

    one_se: bool = False

    needs_cv = True
    needs_training_risks = False

    def __post_init__(self):
        object.__setattr__(self, "one_se", check_param(self.one_se, "CV: one_se", [Boolean()]))

    def select(self, curves):
        idx = select_cv(curves.D, curves.cv_error)
        if self.one_se:
            idx = largest_within_one_se(curves, idx)
        return self._choice(curves, idx)


def one_standard_error(e, n):
    """``sqrt(e (1 - e) / n)``: the standard error of a pooled CV error ``e`` (a fraction) over
    ``n`` validation points (their total weight with sample weights)."""
    return float(np.sqrt(max(e * (1.0 - e), 0.0) / max(n, 1)))


def largest_within_one_se(curves, idx):
    """The index of the largest D of model ``idx``'s kernel whose pooled CV error is within
    one standard error of model ``idx``'s (see :class:`CV`)."""
    e = float(curves.cv_error[idx])
    se = one_standard_error(e, curves.n_samples)
    rows = np.flatnonzero((curves.kernel == curves.kernel[idx]) & (curves.cv_error <= e + se + 1e-12))
    return int(rows[np.argmax(curves.D[rows])])


@dataclass(frozen=True)
class Penalty(SelectionRule):
    r"""The penalised rule: the D minimising :math:`R_n(\operatorname{clip} f_D) + \lambda D`.

    Zwald & Blanchard (2005), eq. 3: :math:`R_n(\operatorname{clip} f_D)` is the empirical hinge risk of the model of
    dimension D with its values clipped to :math:`[-1, 1]`. By default (``lam='cv'``)
    :math:`\lambda` is chosen by cross-validation.

    Parameters
    ----------
    lam : float >= 0 or 'cv', default='cv'
        The penalty :math:`\lambda` per dimension; ``'cv'`` chooses it by K-fold CV: every
        fold's exact penalty path gives the D each :math:`\lambda` selects there, and the
        :math:`\lambda` with the smallest pooled validation error wins (ties -> the larger
        :math:`\lambda`).
    """

    lam: float | str = "cv"

    def __post_init__(self):
        object.__setattr__(self, "lam", check_param(self.lam, "Penalty: lam", [Real(0), Options("cv")]))

    @property
    def needs_cv(self):
        return self.lam == "cv"

    def select(self, curves):
        cv_curve = None
        if self.lam == "cv":
            lam, cv_curve = _cv_penalty(curves)
        else:
            lam = self.lam
        idx = select_penalty(curves.D, curves.clipped_risk, lam)
        return self._choice(curves, idx, penalty=lam, penalty_cv_curve=cv_curve)


def _cv_penalty(curves):
    """``lam`` minimising the pooled CV error of the penalty rule (ties -> larger ``lam``)."""
    paths = [penalty_path(curves.D, c) for c in curves.fold_clipped]
    cands = candidate_penalties(paths)
    totals = np.array([sum(errs[p.selected(lam)] for errs, p in zip(curves.fold_errors, paths)) for lam in cands])
    best = np.flatnonzero(totals == totals.min())
    # cands decrease: the first minimiser is the largest lam
    return float(cands[best[0]]), {"penalty": cands, "cv_error": totals / curves.n_samples}


@dataclass(frozen=True)
class Slope(SelectionRule):
    r"""The slope heuristic: the penalty rule with :math:`\lambda = c\, \lambda_{\text{jump}}`.

    :math:`c` is ``factor``, and :math:`\lambda_{\text{jump}}` is the penalty at which the selected D makes its largest
    jump as :math:`\lambda` decreases (Birgé & Massart; Zwald & Blanchard 2005).

    Parameters
    ----------
    factor : float > 0, default=2.0
        Birgé and Massart's factor between the minimal penalty and the one used.
    """

    factor: float = 2.0

    def __post_init__(self):
        object.__setattr__(self, "factor", check_real(self.factor, "Slope: factor", low=0.0, low_open=True))

    def select(self, curves):
        idx, lam_jump, _ = slope_heuristic(curves.D, curves.clipped_risk, self.factor)
        return self._choice(curves, idx, penalty=self.factor * lam_jump, slope_lambda=lam_jump)


@dataclass(frozen=True)
class FixedD(SelectionRule):
    """A fixed dimension D (the first kernel of a list with that D).

    Where the path ended before D (no LP solver solved some dimension: the fit warns),
    the largest D solved.
    """

    d: int

    def __post_init__(self):
        object.__setattr__(self, "d", check_int(self.d, "FixedD: d"))

    @property
    def fixed_dim(self):
        return self.d

    def select(self, curves):
        hit = np.flatnonzero(curves.D == self.d)
        return self._choice(curves, int(hit[0]) if len(hit) else int(np.argmax(curves.D)))


#: The accepted forms of an estimator's ``selection`` parameter (its declared constraints).
SELECTION_CONSTRAINTS = [Options("cv", "penalty", "slope"), Integer(1), InstanceOf(SelectionRule, "a SelectionRule")]


def as_rule(selection, penalty="cv", slope_factor=2.0) -> SelectionRule:
    """The rule object of a ``selection`` parameter: a rule, 'cv', 'penalty', 'slope' or a D.

    ``penalty`` and ``slope_factor`` parametrise the ``'penalty'`` and ``'slope'``
    spellings (the estimator's parameters of those names).
    """
    selection = check_param(selection, "selection", SELECTION_CONSTRAINTS)
    if isinstance(selection, SelectionRule):
        return selection
    if isinstance(selection, int):
        return FixedD(selection)
    rules = {"cv": CV, "penalty": lambda: Penalty(penalty), "slope": lambda: Slope(slope_factor)}
    return rules[selection]()
