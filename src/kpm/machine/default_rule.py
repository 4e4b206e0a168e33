"""The default KPM as the reference of a fit by another rule.

The papers' rules (the penalty ``lam D``, the slope heuristic, K-fold CV of the hinge LP) and
a user's cap on D read estimates that can mislead on small or unusual data: the slope
heuristic's penalty comes from the training risks of the large models, which are all 0 on
a few points per class; the training risk of a model fitted to duplicated rows counts each
copy. The default :class:`~kpm.machine.KernelProjectionMachine` (the soft-margin SVM in
S_D, C and D by the closed-form leave-one-out error, copies of a row left out together) is a
cheap reference on the same kernel: its leave-one-out curve scores every D of its grid, the
D another rule chose among them.

:func:`reference_errors` fits it and reads two numbers off that curve, at its chosen C: the
leave-one-out error of the D the user's rule chose (the smallest of the grid's errors at the
two dimensions around it, where it lies between them) and that of the default's own D.
:func:`warn_if_default_is_better` warns, naming the default, when the first is clearly
higher (:func:`kpm.validation.clearly_higher_error`) and the estimate the rule read for its
model (its CV or training error) is above the default's leave-one-out error as well. On 13 points of four classes the
slope heuristic chose D = 1 (leave-one-out error 62 %, test error 62 % on 1,000 fresh
points) where the default chose D = 13 (0 %, test 1.4 %).

Where the training points are far from each other (high dimensions, a narrow kernel:
:func:`kpm.machine.self_similarity.far_apart`) the leave-one-out error overrates small D, and
the reference's errors are those of up to 5 folds whose eigenbases leave their points out.
There the chosen model's own estimate overrates it too, and the default's error at its D is
the SVM's, not the model's: :func:`own_fold_error` refits the chosen model itself (its
formulation, at its D) on the same fold bases, and :func:`warn_if_default_is_better` also
warns where that error is clearly higher than the default's at its choice. On 30 draws of 50
points in R^400 (two classes 4 apart in 5 features; the slope and penalty rules and the
Nyström KPM, 90 fits) it added 17 warnings; the default's test error on 1,000 fresh points
was lower in 16 of them (by 0.10 to 0.14 in 4, by 0.04 to 0.06 in 6, by less than 0.02 in
6) and higher by 0.01 in one. It caught 4 of the 13 fits that trailed the default by 0.1 or
more without a warning.

The chosen model's own estimate -- its CV error, or the training error the penalty and slope
rules read, which can only flatter it -- is a third witness: where it is clearly higher than
the default's error at its choice, and by :data:`OWN_ESTIMATE_GAP` at least, the model says
itself that it is worse. On scikit-learn's digits (10 classes, 35 training images each, the
width 1 to 10 times the median) the papers' LP chose D = 9 to 20 by 5-fold CV, with CV errors
of 11 to 17 % against leave-one-out errors of 3 to 6 % for the default, and no other check
warned. Over the 1,170 fits of the papers' three rules in the real-data sweep
(``benchmarks/sweep_real_data.py``) this finding is the warning on 31 (30 that no other
check warned, all on digits), and on all 31 the default's test error was lower, by 0.013
to 0.12.

The reference costs one default fit (two where the points are far apart, and then one fit
of the chosen model on the folds); it is skipped
above :data:`REFERENCE_MAX_SAMPLES` samples (where the rules' estimates rest on many points)
and on data held by Dask workers.
"""

from __future__ import annotations

import contextvars
import warnings
from typing import NamedTuple, Optional

import numpy as np

from kpm.machine.self_similarity import far_apart
from kpm.validation import clearly_higher_error

__all__ = ["OWN_ESTIMATE_GAP", "REFERENCE_MAX_SAMPLES", "ReferenceErrors", "comparing_own_model", "default_kpm",
           "own_fold_error", "own_model", "reference_errors", "warn_if_default_is_better"]

#: Fits on more samples than this are not compared with the default KPM.
REFERENCE_MAX_SAMPLES = 5000

#: The chosen model's own estimate warns where it is clearly higher than the default's error
#: and above it by this much: at 0 of 252 against 4 of 252 the test calls it clearly higher
#: (its standard error has the floor of one sample), where the test errors were the same.
OWN_ESTIMATE_GAP = 0.05


#: True while :func:`own_fold_error` fits a model: that fit is not compared with the default
#: in turn.
_OWN_FIT = contextvars.ContextVar("kpm_own_fold_fit", default=False)


def comparing_own_model():
    """Whether a fit runs inside :func:`own_fold_error` (where it skips its own comparison
    with the default KPM)."""
    return _OWN_FIT.get()


class ReferenceErrors(NamedTuple):
    """The default's errors :func:`reference_errors` reads: at the chosen ``D``
    (``at_D``), at its own choice ``D_ref`` (``best``), which error they are (``what``),
    the folds whose eigenbases leave their points out (``folds``; None where the errors
    are leave-one-out errors) and the seed they were drawn with (``seed``)."""

    at_D: float
    best: float
    D_ref: int
    what: str
    folds: Optional[object]
    seed: object


def default_kpm(est):
    """The unfitted default KPM on the fitted estimator ``est``'s kernel (``kernel_``), on the
    exact basis, with its class weights, seed and jobs: the reference :func:`reference_errors`
    fits."""
    # imported here: the exact KPM's module imports this one (through the KPMs' base class)
    from kpm.machine.exact import KernelProjectionMachine

    return KernelProjectionMachine(kernel=est.kernel_, basis="exact", class_weight=est.class_weight,
                                   random_state=est.random_state, n_jobs=est.n_jobs)


def own_model(est, **params):
    """The fitted model ``est``'s formulation (and C, for the SVM) as an unfitted exact KPM
    on its kernel, with its class weights, seed and jobs and ``params``: the model
    :func:`own_fold_error` refits on fold bases."""
    from kpm.machine.exact import KernelProjectionMachine  # as in default_kpm

    C = est.C_ if est.formulation_ == "svm" else None
    return KernelProjectionMachine(kernel=est.kernel_, basis="exact", formulation=est.formulation_, C=C,
                                   class_weight=est.class_weight, random_state=est.random_state,
                                   n_jobs=est.n_jobs, **params)


def reference_errors(reference, X, y, sample_weight, D):
    """Fit ``reference`` (an unfitted default KPM on the fitted model's kernel, on the exact
    basis) on the same data and read its leave-one-out curve at its chosen C.

    Returns
    -------
    ReferenceErrors or None
        The leave-one-out error of dimension ``D`` (the smaller of the errors at the grid's
        dimensions on either side of ``D`` where ``D`` is not on the grid), that of the
        default's chosen ``D_ref``, which error they are, the folds of the fold bases
        (None: the leave-one-out error) and their seed. None where ``D`` lies beyond the
        curve (the default's early stopping ends it at its choice) or the reference could
        not be fitted.

    Where the training points are far from each other
    (:func:`kpm.machine.self_similarity.far_apart`) the leave-one-out error, which keeps every
    point in the eigenbasis, overrates the small D whose leading directions the points' own
    parts make (55 points in R^400: 14.5 % at D = 3 for a test error of 28.7 %); the reference is
    then refitted with fold bases (up to 5 folds, each fold's basis without its points), and
    its errors are those of these folds.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            reference.fit(X, y, sample_weight=sample_weight)
            # imported here: like default_kpm's import (the modules import this one)
            from kpm.machine.basis_choice import fit_fold_bases, fold_bases_split

            split, seed = fold_bases_split(reference, y, sample_weight)
            if reference.cv_basis_ in ("loo", "ritz") and _far_apart(reference):
                fit_fold_bases(reference, X, y, sample_weight)  # on that split, where it has folds
            # cv_basis_ 'fold': refitted here, or by the default itself, with fold bases
            folds = (split or None) if reference.cv_basis_ == "fold" else None
            what = _estimate_name(reference.cv_basis_, folds)
        except (ValueError, np.linalg.LinAlgError, MemoryError):  # incl. the kernel memory budget
            return None
    curve = reference.selection_curve_
    rows = np.ones(len(curve["D"]), dtype=bool)
    if "C" in curve and reference.C_ is not None:
        rows = np.isclose(curve["C"], reference.C_)
    dims, errors = curve["D"][rows], curve["cv_error"][rows]
    known = np.isfinite(errors)
    dims, errors = dims[known], errors[known]
    if len(dims) == 0 or D > dims.max():
        return None
    below, above = dims[dims <= D].max(initial=0), dims[dims >= D].min()
    around = errors[(dims == below) | (dims == above)]
    mine = errors[dims == reference.n_components_]
    if len(around) == 0 or len(mine) == 0:
        return None
    return ReferenceErrors(float(around.min()), float(mine[0]), int(reference.n_components_), what, folds, seed)


def own_fold_error(model, X, y, sample_weight, D, folds, seed):
    """The cross-validation error at ``D`` of the chosen model's own formulation on fold
    bases: ``model`` (an unfitted exact KPM with the chosen model's kernel, formulation and
    C) fitted at the single dimension ``D`` with the reference's ``folds`` (drawn with
    ``seed``, as :func:`kpm.machine.basis_choice.fit_fold_bases` draws them), each fold's
    eigenbasis without its validation points. NaN where it cannot be fitted (a fold's
    rank below ``D``).

    Where the training points are far from each other the chosen model's own estimate (its
    training error, or a CV whose basis keeps the validation points) overrates it, and so
    does the default's error at ``D``, which is the SVM's, not the model's. On 55 points in
    R^400 at the median width the slope heuristic chose D = 3 with the papers' LP: the
    default's fold error at D = 3 was 23.6 % against 14.5 % at its own choice, not clearly
    higher; the LP's own fold error at D = 3 was 29.1 %, and its test error 28.7 % against
    the default's 12.4 %."""
    model = model.set_params(selection="cv", n_components_grid=[int(D)], cv=folds, cv_basis="fold",
                             random_state=seed, early_stopping=False)
    token = _OWN_FIT.set(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.fit(X, y, sample_weight=sample_weight)
        except (ValueError, np.linalg.LinAlgError, MemoryError):
            return float("nan")
        finally:
            _OWN_FIT.reset(token)
    curve = model.selection_curve_
    at = np.flatnonzero(curve["D"] == D)
    return float(curve["cv_error"][at[0]]) if len(at) else float("nan")


def _estimate_name(cv_basis, folds=None):
    """What the fitted reference's CV curve is, from its ``cv_basis_`` (and ``folds``, where
    known)."""
    if cv_basis == "loo":
        return "leave-one-out error"
    k = "" if folds is None else f"{folds}-fold "
    if cv_basis == "fold":  # also where the default refitted itself with fold bases
        return f"{k}cross-validation error (each fold's eigenbasis without its points)"
    return f"{k}cross-validation error"


def _far_apart(reference):
    """Whether the fitted reference's training points are far from each other
    (:func:`kpm.machine.self_similarity.far_apart` of its kernel matrix)."""
    kernel = reference.kernel_
    K = reference.X_fit_ if kernel.is_precomputed else kernel(reference.X_fit_)
    return far_apart(np.asarray(K, dtype=float))


def warn_if_default_is_better(name, D, estimate, errors, n, advice, own=float("nan"), stacklevel=3,
                              estimate_name=""):
    """Warn when the default's leave-one-out error of the chosen ``D`` (``errors``, from
    :func:`reference_errors`) is clearly higher than that of its own choice, and the estimate
    the rule read for its model (its CV error, or its training error for the rules that run
    no CV; NaN: unknown) is above that too: the chosen model does not do as well as the
    default by its own measure either (the leave-one-out error at ``D`` is the SVM's, not the
    chosen model's, and with heavily duplicated rows it moves by a whole group of copies at a
    time). Where the reference's errors are those of fold bases (the points far apart),
    also when the chosen model's own error on the same folds (``own``, from
    :func:`own_fold_error`; NaN: not measured) is clearly higher than the default's at its
    choice. And where the ``estimate`` itself (``estimate_name``: which one; empty: not
    compared) is clearly higher than the default's error at its choice, and by
    :data:`OWN_ESTIMATE_GAP`. ``n`` training samples, ``advice`` names the better choice.
    Returns whether it warned."""
    if errors is None or D == errors.D_ref:
        return False
    best, D_ref, what = errors.best, errors.D_ref, errors.what
    if clearly_higher_error(errors.at_D, best, n) and estimate > best:
        finding = (f"the selected D = {D} has a {what} of {errors.at_D:.1%} by the default rule (the "
                   f"soft-margin SVM in S_D with C and D by that error), against {best:.1%} at its own "
                   f"choice D = {D_ref}: this rule chose a clearly worse subspace for these data.")
    elif np.isfinite(own) and clearly_higher_error(own, best, n):
        finding = (f"the chosen model (D = {D}) has a {what} of {own:.1%}, refitted on each fold, against "
                   f"{best:.1%} for the default rule (the soft-margin SVM in S_D with C and D by that error) at "
                   f"its choice D = {D_ref}: the training points are far from each other, where the model's own "
                   "estimate overrates it, and it is clearly worse than the default on these data.")
    elif (estimate_name and clearly_higher_error(estimate, best, n)
          and estimate - best >= OWN_ESTIMATE_GAP - 1e-12):
        finding = (f"the chosen model (D = {D}) misclassifies {estimate:.1%} by {estimate_name}, against a "
                   f"{what} of {best:.1%} for the default rule (the soft-margin SVM in S_D with C and D by that "
                   f"error) at its choice D = {D_ref}: by its own estimate it is clearly worse than the default "
                   "on these data.")
    else:
        return False
    warnings.warn(f"{name}: {finding} {advice}", UserWarning, stacklevel=stacklevel)
    return True
