"""Which basis a :class:`~kpm.machine.exact.KernelProjectionMachine` fits on, and the fit on
Nyström eigenfunctions.

The Kernel Projection Machine (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005)
works in the span of the leading kernel-PCA directions. Its exact basis -- the eigenvectors of
the n x n kernel matrix -- needs that matrix in memory; beyond the budget
``kpm.get_config()['max_kernel_bytes']`` the directions are approximated by the Nyström
eigenfunctions of m landmarks (Williams & Seeger 2001; :mod:`kpm.machine.nystroem_data`),
whose features cost O(n m) memory. :func:`resolve_basis` makes that choice
(``basis='auto'``); :func:`fit_nystroem` fits the machine on the Nyström basis with the
estimator's own parameters -- the same formulation, C and D grids and selection (by default
the SVM in ``S_D`` with C and D by the closed-form leave-one-out error) -- and gives it the
fitted attributes of the result, its kernel expansion on the landmarks
(``f(x) = dual_coef_ @ k(X_fit_, x) + intercept_`` with ``X_fit_`` the landmarks).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import _num_samples

from kpm.base import raw_input_kernel
from kpm.config import get_config
from kpm.machine.folds import DEFAULT_FOLDS
from kpm.machine.nystroem import NystroemKPM

__all__ = ["BASES", "resolve_basis", "fit_fold_bases", "fit_nystroem", "NYSTROEM_PARAMETERS"]

#: The ``basis`` values of :class:`~kpm.machine.exact.KernelProjectionMachine`.
BASES = ("auto", "exact", "nystroem")

#: The parameters a :class:`~kpm.machine.exact.KernelProjectionMachine` passes, as they are,
#: to its fit on the Nyström basis (those of the exact basis only -- ``centered``,
#: ``lp_solver``, ``eigen_solver``, ``cv_basis`` -- are not among them).
NYSTROEM_PARAMETERS = ("n_landmarks", "landmarks", "kernel", "sigma", "gamma", "degree", "coef0", "kernel_params",
                       "selection", "cv", "penalty", "slope_factor", "max_components", "n_components_grid",
                       "early_stopping", "cv_duplicates", "formulation", "C", "c_selection", "loss", "class_weight",
                       "random_state", "n_jobs", "verbose", "keep_paths")


def _nystroem_possible(est):
    """Why the Nyström basis cannot take the estimator's kernel, or None where it can."""
    if isinstance(est.kernel, (list, tuple)):
        return "a list of kernels"
    if isinstance(est.kernel, str) and est.kernel == "precomputed":
        return "kernel='precomputed'"
    if raw_input_kernel(est.kernel) is not None:
        return "a kernel on raw inputs (the Nyström features need feature vectors)"
    if est.centered:
        return "centered=True"
    return None


def resolve_basis(est, X):
    """``'exact'`` or ``'nystroem'``: ``basis`` with ``'auto'`` resolved -- the exact basis
    while the n x n kernel matrix fits ``kpm.get_config()['max_kernel_bytes']`` (or where the
    Nyström basis cannot take the estimator's kernel: the exact fit then raises
    :class:`~kpm.exceptions.KernelMemoryError`), the Nyström basis beyond."""
    if est.basis != "auto":
        if est.basis == "nystroem" and (why := _nystroem_possible(est)) is not None:
            raise ValueError(f"{est._name}: basis='nystroem' does not support {why}; use basis='exact'")
        return est.basis
    n = _num_samples(X)
    fits = 8 * n * n <= get_config()["max_kernel_bytes"]
    return "exact" if fits or _nystroem_possible(est) is not None else "nystroem"


def fit_nystroem(est, X, y, sample_weight=None):
    """Fit ``est`` on the Nyström eigenfunctions of ``n_landmarks`` landmarks: a
    :class:`~kpm.machine.nystroem.NystroemKPM` with the estimator's parameters, whose fitted
    attributes ``est`` takes, with ``X_fit_`` the landmarks (the kernel expansion of
    ``dual_coef_``) and ``kernel_index_ = 0``. Returns ``est``."""
    machine = NystroemKPM(**{name: getattr(est, name) for name in NYSTROEM_PARAMETERS})
    machine._name = est._name
    machine.fit(X, y, sample_weight)
    for name, value in vars(machine).items():
        if name.endswith("_") and not name.startswith("__"):
            setattr(est, name, value)
    for name in ("_curves", "_model_member"):  # what select_dim reads (keep_paths=True)
        if name in vars(machine):
            setattr(est, name, getattr(machine, name))
    est.X_fit_ = est.landmarks_
    est.kernel_index_ = 0
    est.cv_basis_ = None
    return est


def fold_bases_split(est, y, sample_weight=None):
    """The folds :func:`fit_fold_bases` refits ``est`` with, and their seed: ``(est.cv, or
    with a string cv DEFAULT_FOLDS, fewer where a class of positive weight is smaller (0
    where one has a single sample); est.random_state, or 0 where it is None)``."""
    folds = est.cv
    if isinstance(folds, str):
        labels = np.asarray(y)
        if sample_weight is not None:
            labels = labels[np.asarray(sample_weight, dtype=float) > 0]
        folds = min(DEFAULT_FOLDS, int(np.unique(labels, return_counts=True)[1].min()))
        if folds < 2:
            folds = 0
    # seed 0 where random_state is None: the default stays deterministic
    return folds, 0 if est.random_state is None else est.random_state


def fit_fold_bases(est, X, y, sample_weight=None):
    """Refit ``est`` with each cross-validation fold's kernel matrix decomposed without its
    validation points (``cv_basis='fold'``) and give it the result's fitted attributes; its
    parameters stay as they are. The folds are ``est.cv``'s, or with a string ``cv``
    ``DEFAULT_FOLDS``, fewer where a class (of positive weight) is smaller; they are drawn
    with seed 0 where ``random_state`` is None. Returns the number of folds, or 0 (nothing
    refitted) where a class has a single sample.

    The default's estimate -- the closed-form leave-one-out error, or Rayleigh-Ritz folds -- keeps
    every training point in the eigenbasis; where each point's similarity with itself exceeds
    its neighbours' (high dimensions, a narrow kernel) the directions carry the validation
    points' own part and the estimate overrates the model (:mod:`kpm.machine.self_similarity`).
    """
    from sklearn.base import clone

    folds, seed = fold_bases_split(est, y, sample_weight)
    if folds == 0:
        return 0
    params = est.get_params(deep=False)
    machine = clone(est).set_params(cv_basis="fold", cv=folds, random_state=seed)
    machine._name = est._name
    machine.fit(X, y, sample_weight)
    est._clear_fitted()
    for name, value in vars(machine).items():
        if name not in params:
            setattr(est, name, value)
    return folds
