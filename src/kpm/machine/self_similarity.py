"""The self-similarity check of a KPM fit on high-dimensional data.

Where every point is far from every other (high dimensions, or a narrow kernel), the kernel
matrix is close to a smooth kernel matrix plus a multiple ``delta`` of the identity (El Karoui
2010): each training point's similarity with itself exceeds its nearest neighbour's by about
``delta`` (:func:`kpm.validation.self_similarity_excess`). A training point's kernel row then
holds a part no new point has: the fitted function ``f(x) = sum_l a_l k(z_l, x) + b`` takes
the value ``f(x_j)`` at a training point but about ``f(x_j) - e_j a_j`` at a new point as close
to it as its nearest neighbour (``e_j`` the excess, ``a_j`` its coefficient). The training
error, and the cross-validation error of :class:`~kpm.machine.NystroemKPM`, whose folds keep
the eigenfunctions of every landmark (the validation points among them), see the first
values: they overrate the model. On 30 points in R^500 (two Gaussian classes) the papers' LP
on the Nyström basis had a CV error of 6.7 % and a test error of 31 %; its values without the
excess misclassified 37 % of the training points, and the default
:class:`~kpm.machine.KernelProjectionMachine` (the soft-margin SVM in each subspace, C and D by
leave-one-out) had 3 % test error.

:func:`warn_if_self_similarity_overrates` compares the error of the values without the excess
with the estimate the selection read (the CV error of the chosen model, or its training error
for the rules that run no CV) and warns when it is higher by :data:`SELF_SIMILARITY_GAP` and
by :data:`SELF_SIMILARITY_SAMPLES` training samples.
"""

from __future__ import annotations

import warnings

import numpy as np

from kpm.machine.engine import predict_codes
from kpm.validation import self_similarity_excess

__all__ = ["SELF_SIMILARITY_GAP", "SELF_SIMILARITY_REGIME", "SELF_SIMILARITY_SAMPLES", "SELF_SIMILARITY_SPREAD",
           "excluded_error", "far_apart", "selection_estimate", "self_excluded_error", "self_similarity_overrates",
           "warn_if_self_similarity_overrates"]

#: The error rate of the values without the self-similarity must exceed the selection's
#: estimate by this much ...
SELF_SIMILARITY_GAP = 0.1
#: ... and by this many training samples (weighted) for the warning.
SELF_SIMILARITY_SAMPLES = 3.0
#: The points count as far apart (:func:`far_apart`) where their median excess is at least
#: this share of their self-similarity: 0.82 at the default width and 0.36 at the median
#: distance on 30-60 points in R^300..R^600, where the leave-one-out error read 3 % for a
#: test error of 50 %. Far below, large SVM coefficients alone can make the values without
#: the excess wrong (300 points in R^8, share 0.03: 28 % wrong against a leave-one-out
#: error of 9 % and a test error of 11 %).
SELF_SIMILARITY_REGIME = 0.3
#: ... among self-similarities within this factor of each other.
SELF_SIMILARITY_SPREAD = 10.0


def far_apart(K, excess=None):
    """Whether the points of the kernel matrix ``K`` are far from each other: their
    self-similarities are within a factor :data:`SELF_SIMILARITY_SPREAD` of each other and
    their median excess (``excess``, else :func:`kpm.validation.self_similarity_excess` of
    ``K``) is at least :data:`SELF_SIMILARITY_REGIME` of their self-similarity. (Where the
    self-similarities span orders of magnitude -- a polynomial kernel of high degree -- the
    kernel's range, not the points' distances, makes the excess.)"""
    diag = np.diag(K)
    if not (len(diag) and np.min(diag) > 0 and np.max(diag) <= SELF_SIMILARITY_SPREAD * np.min(diag)):
        return False
    excess = self_similarity_excess(K) if excess is None else excess
    return bool(np.median(excess / diag) >= SELF_SIMILARITY_REGIME)


def selection_estimate(curves, member, D):
    """The error the selection read for the chosen model (member ``member`` of the family, D
    dimensions) from its :class:`~kpm.machine.rules.ModelCurves`: ``(its pooled CV error, 'its
    cross-validation error')``, or its training error for the rules that run no CV; NaN where
    neither is known."""
    row = curves.index_of(member, D)
    if row is None:
        return float("nan"), ""
    cv = curves.cv_error[row]
    if np.isfinite(cv):
        return float(cv), "its cross-validation error"
    if curves.train_error is not None and np.isfinite(curves.train_error[row]):
        return float(curves.train_error[row]), "its training error"
    return float("nan"), ""


def self_excluded_error(K, scores, dual, codes, weights=None):
    """The error rate of a kernel expansion's training values without the self-similarity.

    Parameters
    ----------
    K : ndarray (m, m)
        The kernel matrix of the expansion's points (training points: the landmarks, or the
        whole training set).
    scores : ndarray (m, n_problems)
        The decision values at these points (one-vs-rest columns, or one for two classes).
    dual : ndarray (m, n_problems)
        The expansion's coefficients ``a_l`` of these points.
    codes : ndarray (m,)
        Their class codes.
    weights : ndarray (m,), optional
        Their weights.

    Returns
    -------
    error : float
        The (weighted) error rate of ``scores - e[:, None] * dual`` (``e``:
        :func:`kpm.validation.self_similarity_excess` of ``K``).
    excess : ndarray (m,)
    """
    e = self_similarity_excess(K)
    return excluded_error(e, scores, dual, codes, weights), e


def excluded_error(excess, scores, dual, codes, weights=None):
    """:func:`self_excluded_error` from the points' ``excess``
    (:func:`kpm.validation.self_similarity_excess` of their kernel matrix)."""
    wrong = predict_codes(scores - np.asarray(excess)[:, None] * dual) != codes
    w = np.ones(len(codes)) if weights is None else np.asarray(weights, dtype=float)
    return float(w @ wrong / w.sum())


def self_similarity_overrates(error, estimate, total):
    """Whether the error without the self-similarity (:func:`self_excluded_error`) exceeds the
    selection's ``estimate`` by :data:`SELF_SIMILARITY_GAP` and by
    :data:`SELF_SIMILARITY_SAMPLES` of the ``total`` (weighted) points."""
    gap = error - estimate
    return bool(np.isfinite(estimate) and gap >= SELF_SIMILARITY_GAP - 1e-12
                and gap * total >= SELF_SIMILARITY_SAMPLES - 1e-9)


def warn_if_self_similarity_overrates(name, error, excess, estimate, what, total, advice, stacklevel=3):
    """Warn when :func:`self_similarity_overrates` (``what``: which estimate ``estimate`` is);
    ``advice`` names the better choice. Returns whether it warned."""
    if not self_similarity_overrates(error, estimate, total):
        return False
    warnings.warn(
        f"{name}: the training points are far from each other in feature space (each one's similarity "
        f"with itself exceeds its nearest neighbour's by {float(np.median(excess)):.2f} (median): high-"
        "dimensional data or a narrow kernel, where the kernel matrix is close to a smooth one plus a "
        "multiple of the identity). The model's values at the training points hold that part, which no new "
        f"point has: without it the model misclassifies {error:.1%} of them, against {what} of "
        f"{estimate:.1%}, which overrates it. {advice}",
        UserWarning,
        stacklevel=stacklevel,
    )
    return True
