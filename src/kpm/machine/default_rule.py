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

The reference costs one default fit (two where the points are far apart); it is skipped
above :data:`REFERENCE_MAX_SAMPLES` samples (where the rules' estimates rest on many points)
and on data held by Dask workers.
"""

from __future__ import annotations

import warnings

import numpy as np

from kpm.machine.self_similarity import far_apart
from kpm.validation import clearly_higher_error

__all__ = ["REFERENCE_MAX_SAMPLES", "default_kpm", "reference_errors", "warn_if_default_is_better"]

#: Fits on more samples than this are not compared with the default KPM.
REFERENCE_MAX_SAMPLES = 5000


def default_kpm(est):
    """The unfitted default KPM on the fitted estimator ``est``'s kernel (``kernel_``), on the
    exact basis, with its class weights, seed and jobs: the reference :func:`reference_errors`
    fits."""
    # imported here: the exact KPM's module imports this one (through the KPMs' base class)
    from kpm.machine.exact import KernelProjectionMachine

    return KernelProjectionMachine(kernel=est.kernel_, basis="exact", class_weight=est.class_weight,
                                   random_state=est.random_state, n_jobs=est.n_jobs)


def reference_errors(reference, X, y, sample_weight, D):
    """Fit ``reference`` (an unfitted default KPM on the fitted model's kernel, on the exact
    basis) on the same data and read its leave-one-out curve at its chosen C.

    Returns
    -------
    (error_at_D, error, D_ref, what) or None
        The leave-one-out error of dimension ``D`` (the smaller of the errors at the grid's
        dimensions on either side of ``D`` where ``D`` is not on the grid), that of the
        default's chosen ``D_ref``, and which error they are. None where ``D`` lies beyond the
        curve (the default's early stopping ends it at its choice) or the reference could not
        be fitted.

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
            folds = None
            if reference.cv_basis_ in ("loo", "ritz") and _far_apart(reference):
                # imported here: like default_kpm's import (the modules import this one)
                from kpm.machine.basis_choice import fit_fold_bases

                folds = fit_fold_bases(reference, X, y, sample_weight) or None
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
    return float(around.min()), float(mine[0]), int(reference.n_components_), what


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


def warn_if_default_is_better(name, D, estimate, errors, n, advice, stacklevel=3):
    """Warn when the default's leave-one-out error of the chosen ``D`` (``errors``, from
    :func:`reference_errors`) is clearly higher than that of its own choice, and the estimate
    the rule read for its model (its CV error, or its training error for the rules that run
    no CV; NaN: unknown) is above that too: the chosen model does not do as well as the
    default by its own measure either (the leave-one-out error at ``D`` is the SVM's, not the
    chosen model's, and with heavily duplicated rows it moves by a whole group of copies at a
    time). ``n`` training samples, ``advice`` names the better choice. Returns whether it
    warned."""
    if errors is None:
        return False
    at_D, best, D_ref, what = errors
    if D == D_ref or not clearly_higher_error(at_D, best, n) or not estimate > best:
        return False
    warnings.warn(
        f"{name}: the selected D = {D} has a {what} of {at_D:.1%} by the default rule (the "
        f"soft-margin SVM in S_D with C and D by that error), against {best:.1%} at its own choice D = {D_ref}: "
        f"this rule chose a clearly worse subspace for these data. {advice}",
        UserWarning,
        stacklevel=stacklevel,
    )
    return True
