"""Sample and class weights of the KPM estimators.

``fit(X, y, sample_weight=None)`` and ``class_weight`` ('balanced' or a dict, as
:class:`sklearn.svm.SVC` has them) become one weight per training sample
(:func:`fit_weights`): the product of the two. What each part of a fit does with it:

* samples of zero weight leave the fit (scikit-learn's equivalence: a zero weight is a
  removed sample);
* the basis is that of the training set with each sample repeated ``w_i`` times (the exact
  KPM: the eigenvectors of ``W^{1/2} K W^{1/2}``; the Nyström KPM: the landmarks weighted so);
* the papers' hinge LP weighs each slack, ``sum_i w_i xi_i`` (:func:`lp_weights`: scaled to
  mean 1, which does not change its solution);
* the SVM in ``S_D`` gives each sample the weight ``C w_i`` of its loss;
* the cross-validation and training errors count each misclassified sample with its weight,
  and the clipped hinge risks are weighted means;
* the default RBF width ``gamma='scale'`` is ``1 / (n_features var)`` with the weighted
  variance of X, the variance of the repeated samples (:func:`default_gamma`); the median
  heuristic ``sigma='median'`` (a subsampled statistic) reads the samples unweighted.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.class_weight import compute_class_weight

from kpm.validation import (ClassWeights, Options, check_sample_weight, check_weighted_classes, warn_if_degenerate_counts,
                             warn_if_one_class)

__all__ = ["positive_weights", "fit_weights", "lp_weights", "default_gamma", "warn_weighted_degenerate",
           "CLASS_WEIGHT_CONSTRAINTS"]


def positive_weights(sample_weight, y, who=None):
    """``(sample_weight, keep)``: the weights checked by :func:`kpm.validation.check_sample_weight`
    (``who`` naming the estimator), and the mask of the samples of positive weight where some
    weight is 0 -- a sample of weight 0 is a removed sample -- else None. ``(None, None)``
    without weights. The samples of positive weight must hold two classes of the labels ``y``
    (:func:`kpm.validation.check_weighted_classes`)."""
    if sample_weight is None:
        return None, None
    w = check_sample_weight(sample_weight, len(y), who=who)
    check_weighted_classes(np.asarray(y), w, who=who, every_class=True)
    keep = w > 0
    return w, None if keep.all() else keep


def fit_weights(sample_weight, class_weight, y, classes, who=None):
    """The weight of every training sample: ``sample_weight`` (checked by
    :func:`kpm.validation.check_sample_weight`, ``who`` naming the estimator) times the weight of
    its class (``class_weight``: None, ``'balanced'`` -- ``n / (n_classes * n_c)`` from the
    class counts weighted by ``sample_weight``, as
    :func:`sklearn.utils.class_weight.compute_class_weight` has it, so that integer weights
    and repeated rows get the same class weights -- or a dict
    ``{label: weight}``, 1 for the classes it does not name). None when both are None (the
    unweighted fit)."""
    if sample_weight is None and class_weight is None:
        return None
    y = np.asarray(y)
    w = check_sample_weight(sample_weight, len(y), who=who)
    if class_weight is not None:
        # 'balanced' from the class counts weighted by sample_weight: the same as for the repeated rows
        per_class = compute_class_weight(class_weight, classes=classes, y=y,
                                         sample_weight=None if sample_weight is None else w)
        w = w * per_class[np.searchsorted(classes, y)]
        if not np.sum(w) > 0:
            raise ValueError("the sample and class weights give every sample weight 0")
    check_weighted_classes(y, w, who=who, weighted_by="sample_weight times class_weight", every_class=True)
    return w


def lp_weights(sample_weight):
    """The slack weights of the hinge LPs: the sample weights scaled to mean 1 (the LP's
    solution does not depend on their scale; this keeps the solvers' tolerances where they
    are without weights). None for None."""
    return None if sample_weight is None else sample_weight / float(np.mean(sample_weight))


def default_gamma(est, kernel, X, weights):
    """The ``gamma`` to give :func:`kpm.make_kernel` for the kernel spec ``kernel`` of the
    estimator ``est`` with sample weights: where the spec is the RBF kernel at its default
    width (``gamma='scale'``: no ``sigma``, ``gamma`` or ``c`` given), ``1 / (n_features var)``
    with the weighted variance of the entries of X (each row weighing ``w_i``: the variance of
    the data with each sample repeated ``w_i`` times), computed on X rescaled by its largest
    magnitude as :func:`kpm.kernels.conventions.scale_gamma` is; otherwise ``est.gamma``."""
    gamma = getattr(est, "gamma", None)
    params = getattr(est, "kernel_params", None) or {}
    default = (isinstance(kernel, str) and kernel == "rbf" and getattr(est, "sigma", None) is None
               and (gamma is None or (isinstance(gamma, str) and gamma == "scale"))
               and not {"sigma", "gamma", "c"} & set(params))
    if weights is None or not default:
        return gamma
    X = np.asarray(X, dtype=float)
    s = float(np.max(np.abs(X))) if X.size else 0.0
    if not s > 0:
        return gamma  # identical zero samples: kpm's own rule
    Xs = X / s
    p = weights / float(np.sum(weights))
    mean = float(p @ Xs.mean(axis=1))
    var = float(p @ ((Xs - mean) ** 2).mean(axis=1))
    if not var > 0:
        return gamma
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        value = 1.0 / (X.shape[1] * var) / np.float64(s) ** 2
    return float(value) if np.isfinite(value) and value > 0 else gamma


def warn_weighted_degenerate(predictions, y, weights, classes, where, stacklevel=3):
    """The degenerate-model warning with sample weights: one class predicted on every sample,
    or a weighted training accuracy below the weighted share of the heaviest class."""
    if warn_if_one_class(predictions, classes, where, stacklevel=stacklevel + 1):
        return True
    scale = len(y) / float(np.sum(weights))  # counts in units of samples
    hit = weights * (predictions == y) * scale
    counts = np.array([weights[y == c].sum() for c in classes]) * scale
    predicted = np.array([np.count_nonzero(predictions == c) for c in classes])
    return warn_if_degenerate_counts(predicted, float(hit.sum()), counts, classes, where, stacklevel=stacklevel + 1)


#: The declared forms of ``class_weight``.
CLASS_WEIGHT_CONSTRAINTS = [Options("balanced"), ClassWeights(), None]
