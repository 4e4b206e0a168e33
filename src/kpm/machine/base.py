"""The fit skeleton shared by the Kernel Projection Machine estimators.

A KPM fit (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005) is *basis x
paths x rule*. :meth:`BaseKPM.fit` is the whole algorithm, for every basis:

1. the parameters, checked against their declared constraints, and the plan: the selection
   rule, the formulation and the C values (:func:`kpm.machine.formulation.plan_fit`);
2. the training data and the basis (:meth:`BaseKPM._training_data`, the estimator's own:
   the eigenvectors of the kernel matrix, or Nyström eigenfunctions);
3. the family of models and their cross-validation curves (:meth:`BaseKPM._family`);
4. the full-data paths the rule needs, and the rule's choice
   (:func:`kpm.machine.engine.select_model`);
5. the fitted attributes: the selection's, shared here, and the chosen model's
   coefficients, the estimator's own (:meth:`BaseKPM._set_solution`).

Predictions follow one rule (:func:`kpm.machine.engine.predict_codes`): decision values
rounded to :data:`kpm.machine.engine.TIE_DECIMALS` decimals (the hinge LP puts many points
exactly on the margin), ties to the first class.

Sample and class weights (:mod:`kpm.machine.weights`) run through every step; ``verbose``
writes progress lines (:mod:`kpm.machine.progress`). After the fit, a model chosen by the
penalty or slope rule is compared with the other models of its path (:meth:`BaseKPM._warn_underfit`);
then, unless ``keep_paths=True``, the state only the path methods read (the basis, the paths,
the curves of every model) is dropped (:meth:`BaseKPM._drop_paths`): a fitted model keeps what
prediction needs.
"""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from kpm.base import KernelParamsMixin
from kpm.machine.default_rule import (
    REFERENCE_MAX_SAMPLES,
    comparing_own_model,
    default_kpm,
    own_fold_error,
    reference_errors,
    warn_if_default_is_better,
)
from kpm.machine.engine import TIE_DECIMALS, check_rule_answerable, model_curves, predict_codes, select_model
from kpm.machine.engine import selection_curve as make_selection_curve
from kpm.machine.formulation import C_SELECTIONS, FORMULATIONS, c_selection_curve, plan_fit
from kpm.machine.progress import Progress
from kpm.machine.rules import SELECTION_CONSTRAINTS, Penalty, Slope, as_rule
from kpm.machine.self_similarity import selection_estimate, self_excluded_error, warn_if_self_similarity_overrates
from kpm.machine.weights import CLASS_WEIGHT_CONSTRAINTS
from kpm.validation import Boolean, Integer, Options, PositiveGrid, Real, Splitter, validate_params

__all__ = ["BaseKPM", "SELECTION_PARAMETERS", "UNDERFIT_GAP", "UNDERFIT_ERRORS_PER_DIM"]

#: The underfit check of the penalty and slope rules (:meth:`BaseKPM._warn_underfit`): a
#: model of the path at most ``2 D + 5`` dimensions has a training error lower by at least
#: this much (and at most half the chosen model's; how often it warns on fits that
#: generalise well and badly: ``docs/results/notes/code_measurements.md``) ...
UNDERFIT_GAP = 0.1
#: ... and by at least this many training samples per dimension added.
UNDERFIT_ERRORS_PER_DIM = 3

#: The declared constraints of the parameters every KPM estimator has.
SELECTION_PARAMETERS = {
    "selection": SELECTION_CONSTRAINTS,
    "cv": [Integer(2), Splitter()],
    "penalty": [Real(0), Options("cv")],
    "slope_factor": [Real(0, None, "neither")],
    "formulation": [Options(*FORMULATIONS)],
    "C": [PositiveGrid(), None],
    "c_selection": [Options(*C_SELECTIONS)],
    "class_weight": CLASS_WEIGHT_CONSTRAINTS,
    "n_jobs": [Integer(None, -1), Integer(1), None],
    "verbose": [Integer(0)],
    "keep_paths": [Boolean()],
}


class _Clock:
    """Runs a phase of the fit and keeps its seconds."""

    def __init__(self):
        self.seconds = {}

    def __call__(self, phase, fn, *args):
        t = time.perf_counter()
        out = fn(*args)
        self.seconds[phase] = time.perf_counter() - t
        return out


class BaseKPM(KernelParamsMixin, ClassifierMixin, BaseEstimator):
    """Base of the KPM estimators: the fit skeleton, the selection's attributes,
    :meth:`select_dim` and the prediction rule. Not meant to be used directly."""

    #: Which estimator a message is about.
    _name = "KPM"
    #: Where the joblib workers of the cross-validation run ('threads' or None: processes).
    _prefer = None
    #: The fitted state only the path methods (:meth:`select_dim` and the estimator's own)
    #: read, kept with ``keep_paths=True`` only: the curves of every model.
    _path_state = ("_curves",)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit the paths of every model, select one by the rule, keep it.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        y : array-like (n_samples,)
            Class labels (two or more classes; more: one-vs-rest).
        sample_weight : array-like (n_samples,), optional
            Non-negative weight of each sample (times ``class_weight``); see the estimator's
            docstring for what each step does with it.

        Returns
        -------
        self

        Warns
        -----
        ConvergenceWarning
            When no LP solver solved some dimension of a path: the selection then runs over
            the dimensions below it (see ``lp_failures_``).
        DegenerateKernelWarning
            When the kernel matrix is numerically the identity or constant.
        DegenerateModelWarning
            When the fitted function predicts one class on all training samples, or is less
            accurate on them than the majority class.
        UserWarning
            When the penalty or slope rule chose a model whose training error is far above
            that of a slightly larger D of its path (the rule may underfit: selection='cv'
            chooses by cross-validation), when another rule than the default chose a D whose
            leave-one-out error by the default KPM on the same kernel is clearly above that of
            the default's choice (:mod:`kpm.machine.default_rule`; up to 5,000 samples in
            memory), when ``C`` is given to a fit of the papers' LP (which has no C), or when a
            class is too small for every cross-validation fold.
        """
        t0 = time.perf_counter()
        self._clear_fitted()
        validate_params(self)
        self._check_params()
        self._progress = progress = Progress(self._name, self.verbose)
        plan = plan_fit(self, lp_only=self._lp_only(), lp_reason=self._lp_reason())
        clock = _Clock()
        try:
            with self._fit_context():
                progress("training data and basis")
                data = clock("data", self._training_data, X, y, plan, sample_weight)
                family = clock("cv", self._family, data, plan)
                progress("the full-data paths the rule needs")
                choice = clock("final_fit", select_model, family.paths, plan.rule, data.Y, family.cv_total)
                self._set_model(family, choice, data, plan)
        except BaseException:
            self._clear_fitted()  # never a partially fitted model
            raise
        progress(f"done: D={self.n_components_}")
        if self._refit(X, y, sample_weight, data):  # the refit warned, and timed itself
            self.fit_time_ = time.perf_counter() - t0
            return self
        self._warn_fit(family, data)
        self._warn_underfit(plan, data)
        self._warn_default_is_better(X, y, sample_weight, data.n)
        if not self.keep_paths:
            self._drop_paths()
        self.fit_time_ = time.perf_counter() - t0
        # the estimator's own phases of its data (e.g. the Nyström features) replace "data"
        phases = data.phases or {"data": clock.seconds["data"]}
        self.timings_ = {**phases, "cv": clock.seconds["cv"], "final_fit": clock.seconds["final_fit"],
                         "total": self.fit_time_}
        return self

    def _refit(self, X, y, sample_weight, data):
        """Whether this fit was replaced, before its warnings, by a refit with other settings
        (the exact KPM's fold bases, where its selection's estimate overrates the model)."""
        return False

    def _clear_fitted(self):
        """Never leave a stale model of an earlier fit: drop every fitted attribute."""
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("__")]:
            delattr(self, name)

    def _check_params(self):
        """Rules across parameters (after their declared constraints)."""

    def _drop_paths(self):
        """``keep_paths=False``: drop the state only the path methods read (``_path_state``)."""
        for name in self._path_state:
            self.__dict__.pop(name, None)

    def _has_paths(self):
        """Whether the fitted model holds the path methods' state (``keep_paths=True``)."""
        return all(name in self.__dict__ for name in self._path_state)

    def _check_paths(self, method):
        """The path methods need the state a fit with ``keep_paths=True`` keeps."""
        check_is_fitted(self)
        if not self._has_paths():
            raise AttributeError(
                f"{self._name}.{method}() needs the fit's paths and curves, which a fit keeps only with "
                f"keep_paths=True (without it the fitted model keeps what prediction needs); refit with "
                f"{self._name}(..., keep_paths=True)"
            )

    def _lp_only(self):
        """Whether the fit needs the papers' LP (``formulation='auto'`` is then ``'paper'``)."""
        return False

    def _lp_reason(self):
        """Why the fit needs the papers' LP (for the warning on an unused ``C``)."""
        return None

    def _fit_context(self):
        """A context around the work of a fit (e.g. turning a lost Dask cluster into one error)."""
        return contextlib.nullcontext()

    def _training_data(self, X, y, plan, sample_weight=None):  # pragma: no cover - abstract
        """The validated training data, the classes, the weights and the basis (sets ``classes_``)."""
        raise NotImplementedError

    def _family(self, data, plan):  # pragma: no cover - abstract
        """The :class:`~kpm.machine.engine.Family` of models with their CV curves."""
        raise NotImplementedError

    def _set_solution(self, kp, n_components, data):  # pragma: no cover - abstract
        """The chosen model's coefficients from its :class:`~kpm.machine.engine.KernelPaths`."""
        raise NotImplementedError

    def _set_model(self, family, choice, data, plan):
        """The selection's attributes, then the chosen model's (:meth:`_set_solution`)."""
        self.formulation_ = plan.formulation
        self._curves = curves = model_curves(family.paths, data.n if family.cv_total is None else family.cv_total)
        self.lp_failures_ = [dict(f, kernel=k) for (k, _), kp in zip(family.members, family.paths)
                             for f in kp.failures]
        self.lp_fallbacks_ = int(sum(kp.fallbacks for kp in family.paths))
        self.penalty_ = choice.penalty
        self.slope_lambda_ = choice.slope_lambda
        if choice.penalty_cv_curve is not None:
            self.penalty_cv_curve_ = choice.penalty_cv_curve
        self.selection_curve_ = make_selection_curve(curves, self.penalty_)
        if plan.formulation == "svm":
            members = np.asarray(family.members, dtype=float)[curves.kernel]
            self.selection_curve_["kernel"] = members[:, 0].astype(int)
            self.selection_curve_["C"] = members[:, 1]
        self.c_selection_curve_ = c_selection_curve(family.all_Cs, family.stage_one)
        k, C = family.members[choice.kernel_index]
        self.C_ = None if C is None else float(C)
        self.n_components_ = choice.n_components
        self._model_member = choice.kernel_index
        self._set_solution(family.paths[choice.kernel_index], choice.n_components, data)

    def _warn_fit(self, family, data):
        """The fit's warnings: failed LPs, a degenerate kernel, a degenerate model."""
        if self.lp_failures_:
            first = min(self.lp_failures_, key=lambda f: f["dim"])
            warnings.warn(
                f"{self._name}: no LP solver solved the hinge LP at D={first['dim']} ({first['path']}); "
                f"dimensions from D={first['dim']} on were not considered, D was selected among "
                f"D <= {int(self.selection_curve_['D'].max())}. {self._failure_hint()} "
                f"Cause: {first['error']}",
                ConvergenceWarning,
                stacklevel=3,
            )
        self._warn_edge(family, data)
        self._warn_degenerate(family, data)
        self._warn_cv_majority(family, data)

    def _warn_edge(self, family, data):
        """A dimension chosen at the end of a grid that stops below the rank -- by
        cross-validation, only where the CV error there is below that of every smaller D (the
        error still falling; not a choice of the one-standard-error rule among equals), or
        where it is no better than predicting the majority class (within one standard error
        of that rule's error: the capped grid held no useful model)."""
        if self._at_capped_end(family):
            curves = self._curves
            rows = curves.kernel == self._model_member
            e, D = curves.cv_error[rows], curves.D[rows]
            if np.isfinite(e).any():
                chosen = float(e[D == self.n_components_][0])
                falling = len(e) > 1 and chosen < np.nanmin(e[D < self.n_components_])
                if not falling and not _no_better_than_majority(chosen, data.codes, data.weights):
                    return
            advice = (f"(max_components={self.max_components}): a larger D may fit better. Raise "
                      "max_components to consider it." if self.max_components is not None else
                      "(the default's largest D for this many samples): a larger D may fit better. Set "
                      "max_components above it to consider it.")
            warnings.warn(
                f"{self._name}: the selected D = {self.n_components_} is the largest D considered {advice}",
                UserWarning,
                stacklevel=4,
            )

    def _at_capped_end(self, family):
        """Whether the chosen D is the last point of a grid that stops below the rank, the
        path solved to its end."""
        kp = family.paths[self._model_member]
        return kp.capped and self.n_components_ == int(kp.grid[-1]) and len(kp.dims) == len(kp.grid)

    def _warn_self_similarity_of(self, K, scores, dual, codes, weights, stacklevel):
        """The self-similarity check (:mod:`kpm.machine.self_similarity`) of the chosen model's
        values ``scores`` at the points of the kernel matrix ``K`` (coefficients ``dual``,
        class ``codes``, ``weights``) against the estimate its selection read; the warning names
        :meth:`_default_advice` and a wider kernel."""
        error, excess = self_excluded_error(K, scores, dual, codes, weights)
        estimate, what = selection_estimate(self._curves, self._model_member, self.n_components_)
        total = len(codes) if weights is None else float(np.sum(weights))
        warn_if_self_similarity_overrates(self._name, error, excess, estimate, what, total,
                                          self._default_advice() + " Or a wider kernel (a larger sigma).",
                                          stacklevel=stacklevel + 1)

    def _default_advice(self):
        """The better choice a warning about this fit names (the estimator's default, where
        the fit is not it), or None: the warnings that need it are then not given."""
        return None

    def _warn_cv_majority(self, family, data):
        """The chosen model's CV error no better than predicting the majority class (within one
        standard error of that rule's): every D the rule considered is useless with this
        formulation. :meth:`_warn_edge` already warns for the end of a capped grid."""
        advice = self._default_advice()
        if advice is None or getattr(data, "codes", None) is None:  # the labels on Dask workers: no counts here
            return
        row = self._curves.index_of(self._model_member, self.n_components_)
        if row is None or not np.isfinite(self._curves.cv_error[row]) or self._at_capped_end(family):
            return
        error = float(self._curves.cv_error[row])
        if _no_better_than_majority(error, data.codes, data.weights):
            warnings.warn(
                f"{self._name}: the selected D = {self.n_components_} has a cross-validation error of {error:.1%}, "
                "no better than predicting the majority class: no D of this fit is useful. " + advice,
                UserWarning,
                stacklevel=4,
            )

    def _warn_underfit(self, plan, data):
        """The penalty and slope rules compare training risks against a penalty ``lam D``;
        where few dimensions already fit the data (easy data), that penalty can keep D too
        small. The reference is the path's own models: warn when a model of the chosen
        member's path with ``D < D' <= 2 D + 5`` has a training error lower by at least
        :data:`UNDERFIT_GAP`, at most half the chosen model's, and lower by at least
        :data:`UNDERFIT_ERRORS_PER_DIM` training samples per dimension added (what fitting
        noise with the added dimensions does not give)."""
        if not isinstance(plan.rule, (Penalty, Slope)):
            return
        curves = self._curves
        if curves.train_error is None:
            return
        rows = np.flatnonzero(curves.kernel == self._model_member)
        D, err = curves.D[rows], curves.train_error[rows]
        here = np.flatnonzero(D == self.n_components_)
        if len(here) == 0 or not np.isfinite(err[here[0]]):
            return
        e0, D0 = float(err[here[0]]), self.n_components_
        near = np.flatnonzero((D > D0) & (D <= 2 * D0 + 5) & np.isfinite(err))
        gap = e0 - err[near]
        better = near[(gap >= UNDERFIT_GAP - 1e-12) & (err[near] <= e0 / 2)
                      & (data.n * gap >= UNDERFIT_ERRORS_PER_DIM * (D[near] - D0) - 1e-9)]
        if len(better) == 0:
            return
        j = better[np.argmin(err[better])]
        rule = "slope heuristic" if isinstance(plan.rule, Slope) else "penalty rule"
        warnings.warn(
            f"{self._name}: the {rule} chose D={D0}, whose training error ({e0:.1%}) is far above that of "
            f"D={int(D[j])} on the same path ({float(err[j]):.1%}): the rule underfits these data (it weighs "
            "the training risk against a penalty per dimension, which is too large where a few dimensions "
            "already fit the data). selection='cv' chooses D by cross-validation (with formulation='auto', "
            "the SVM in S_D); see selection_curve_['train_error'].",
            UserWarning,
            stacklevel=4,
        )

    def _warn_default_is_better(self, X, y, sample_weight, n):
        """A fit by another rule than the default against the default KPM on the same kernel
        (:mod:`kpm.machine.default_rule`): warn when the default's leave-one-out error of the
        chosen D, or the chosen model's own estimate, is clearly above the default's error at
        its own choice."""
        advice = self._default_advice()
        reference = self._default_reference(X) if advice is not None and not comparing_own_model() else None
        if reference is None or n > REFERENCE_MAX_SAMPLES:
            return
        errors = reference_errors(reference, X, y, sample_weight, self.n_components_)
        estimate, what = selection_estimate(self._curves, self._model_member, self.n_components_)
        own = float("nan")
        model = self._own_exact_model() if errors is not None and errors.folds is not None else None
        if model is not None:  # the points far apart: the model itself on the reference's fold bases
            own = own_fold_error(model, X, y, sample_weight, self.n_components_, errors.folds, errors.seed)
        warn_if_default_is_better(self._name, self.n_components_, estimate, errors, n, advice, own, stacklevel=5,
                                  estimate_name=what)

    def _own_exact_model(self):
        """The chosen model's formulation (and C) as an unfitted exact KPM on this fit's
        kernel, for :func:`kpm.machine.default_rule.own_fold_error`; None where the fit's
        model is not one on the span of the training points."""
        return None

    def _default_reference(self, X):
        """The unfitted default KPM on this fit's kernel (:func:`kpm.machine.default_rule.default_kpm`),
        or None where it cannot be fitted here (data on Dask workers)."""
        return default_kpm(self)

    def _failure_hint(self):
        return ("This happens where the training data are nearly separable in the subspace: the "
                "optimal coefficients pass 1e9 and the margins they give fall below double precision.")

    def _warn_degenerate(self, family, data):  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------ selection
    def select_dim(self, rule):
        """The model another selection rule picks from this fit's curves, without re-fitting.

        The rule is applied to the curves the fit computed (``selection_curve_`` and the CV
        folds' curves), exactly as :meth:`fit` applies its own rule: a model fitted with
        ``selection='penalty', penalty='cv'`` holds every curve and answers every rule. A
        rule needs what it reads: :class:`~kpm.machine.rules.CV` and ``Penalty('cv')`` the
        CV curves (a fit that ran CV), the other rules the training risk of every model
        (``selection='cv'`` solves the full-data path only up to the selected D). The curves
        are kept by a fit with ``keep_paths=True`` only.

        Parameters
        ----------
        rule : SelectionRule, {'cv', 'penalty', 'slope'} or int
            A rule of :mod:`kpm.machine.rules`, or a ``selection`` value (``'penalty'`` and
            ``'slope'`` with this model's ``penalty`` and ``slope_factor``).

        Returns
        -------
        Choice
            ``n_components``, ``kernel_index`` (the member of the family: the kernel, or
            with ``formulation='svm'`` the (kernel, C) pair) and ``index`` (the row of
            ``selection_curve_``) of the chosen model, with the rule's ``penalty`` /
            ``slope_lambda``.

        Raises
        ------
        AttributeError
            When the model was fitted without ``keep_paths=True``.
        """
        self._check_paths("select_dim")
        rule = as_rule(rule, self.penalty, self.slope_factor)
        check_rule_answerable(rule, self._curves, self.selection, self._extend_hint())
        return rule.select(self._curves)

    def _extend_hint(self):
        return ""

    # ------------------------------------------------------------------ predict
    def _scores(self, X):  # pragma: no cover - abstract
        """Decision values (n, n_problems) of X."""
        raise NotImplementedError

    def decision_function(self, X):
        """Decision values: shape (n,) for two classes (positive -> ``classes_[1]``),
        (n, n_classes) otherwise (one-vs-rest scores).

        The values are rounded to 9 decimals: the hinge LP puts many points exactly on the
        margin (one-vs-rest scores of exactly -1, say), and rounding makes such ties --
        resolved to the first class by :meth:`predict` -- independent of floating-point
        noise and of the batch a point is predicted in.
        """
        check_is_fitted(self)
        F = np.round(self._scores(X), TIE_DECIMALS)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        """Class labels: ``classes_[1]`` where the decision value is positive (two classes),
        the largest one-vs-rest score otherwise (ties to the first class)."""
        F = self.decision_function(X)
        return self.classes_[predict_codes(F[:, None] if F.ndim == 1 else F)]


def _no_better_than_majority(error, codes, weights=None):
    """Whether a CV error rate is within one standard error of the majority class's (the
    rule predicting the most frequent class, by weight with sample weights)."""
    counts = np.bincount(codes, weights=weights)
    majority = 1.0 - counts.max() / counts.sum()
    n = len(codes)
    return error >= majority - np.sqrt(max(majority * (1.0 - majority), 1.0 / n) / n)
