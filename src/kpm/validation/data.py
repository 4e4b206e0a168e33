"""Arrays of samples in one canonical form.

:func:`check_samples` returns finite, C-ordered float64 arrays, so that two memory layouts of
the same data give bit-identical results (BLAS sums in a layout-dependent order);
:func:`check_estimator_data` does the same for an estimator's ``fit``/``transform``, with
scikit-learn's ``n_features_in_`` and ``feature_names_in_`` bookkeeping;
:func:`check_sample_weight` checks the sample weights of a ``fit``,
:func:`check_weighted_classes` that its samples of positive weight hold two classes, and
:func:`duplicate_groups` finds identical samples.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, validate_data

__all__ = ["check_samples", "check_estimator_data", "check_sample_weight", "check_weighted_classes", "duplicate_groups"]


def duplicate_groups(X, *, always=False):
    """Group index of each sample (identical inputs -- or kernel rows -- share one); None if none
    (``always=True``: the indices even then). The groups are numbered in the sorted order of
    their inputs, whatever the order of the samples."""
    _, inv = np.unique(np.ascontiguousarray(X), axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    return None if inv.max() + 1 == len(inv) and not always else inv


def check_samples(X, name="X", *, min_samples=1, ensure_2d=True):
    """Samples as a finite, C-ordered float64 array.

    Accepts lists, DataFrames and any array-like; rejects sparse matrices, NaN or
    infinite values, complex and non-numeric data with scikit-learn's messages. The
    C order makes results independent of the caller's memory layout (BLAS sums in a
    layout-dependent order).
    """
    return check_array(
        X,
        dtype=np.float64,
        order="C",
        ensure_all_finite=True,
        ensure_2d=ensure_2d,
        ensure_min_samples=min_samples,
        input_name=name,
    )


def check_estimator_data(estimator, X, y="no_validation", *, reset=True, min_samples=1, y_numeric=False):
    """An estimator's input in the canonical form of :func:`check_samples`.

    scikit-learn's ``validate_data`` (which records or checks ``n_features_in_`` and
    ``feature_names_in_``, by ``reset``) with finite, C-ordered float64 ``X``. With
    ``y`` (omitted: X only) returns ``(X, y)``; ``y`` must then be 1-D, of X's
    length and finite (float64 with ``y_numeric``).
    """
    kwargs = dict(reset=reset, dtype=np.float64, order="C", ensure_all_finite=True, ensure_min_samples=min_samples)
    if isinstance(y, str) and y == "no_validation":
        return validate_data(estimator, X, **kwargs)
    X, y = validate_data(estimator, X, y, y_numeric=y_numeric, **kwargs)
    if y_numeric and y.dtype != np.float64:
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"y must be numeric (real targets), got an array of dtype {y.dtype}") from None
    return X, y


def check_sample_weight(sample_weight, n_samples, *, who=None):
    """Sample weights as a float64 array of shape ``(n_samples,)``.

    scikit-learn's convention: non-negative weights (a zero weight is a removed sample, an
    integer weight the sample repeated that many times) with a positive, finite sum.

    Parameters
    ----------
    sample_weight : array-like (n_samples,), scalar or None
        The weights; a scalar is the same weight for every sample, None is all ones.
    n_samples : int
        The number of samples they weigh.
    who : str, optional
        The estimator or function the weights are given to, the prefix of the messages.

    Returns
    -------
    ndarray (n_samples,) of float64

    Raises
    ------
    ValueError
        When the weights are not numbers, not one per sample, not finite, negative, all
        zero, or sum to more than the largest float.
    """
    prefix = f"{who}: " if who else ""
    if sample_weight is None:
        return np.ones(n_samples)
    w = np.asarray(sample_weight)
    if w.dtype.kind not in "biuf":
        raise ValueError(f"{prefix}sample_weight must be numbers, got an array of dtype {w.dtype}")
    w = w.astype(np.float64)
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.shape != (n_samples,):
        raise ValueError(
            f"{prefix}sample_weight must have shape ({n_samples},) for {n_samples} samples (one weight per "
            f"sample), got shape {w.shape}"
        )
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{prefix}sample_weight contains NaN or infinite values")
    if np.any(w < 0):
        raise ValueError(f"{prefix}sample_weight must be >= 0 (non-negative; a zero weight removes the sample), "
                         f"got {float(w.min())!r}")
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if not total > 0:
        raise ValueError(f"{prefix}sample_weight must have a positive sum: all weights are zero")
    if not np.isfinite(total):
        raise ValueError(f"{prefix}sample_weight sums to more than the largest float: scale the weights down")
    return w


def check_weighted_classes(y, weight, *, who=None, weighted_by="sample_weight", every_class=False):
    """Check that the samples of positive weight hold at least two classes.

    A zero weight removes a sample (scikit-learn's convention), so a class whose samples all
    weigh zero -- by ``sample_weight`` or by a class weight of 0 -- is absent from the fit: a
    classifier trained on what is left sees one class.

    Parameters
    ----------
    y : ndarray (n_samples,)
        The labels.
    weight : ndarray (n_samples,)
        The (validated) weights of the samples, class weights included.
    who : str, optional
        The estimator the weights are given to, the prefix of the message.
    weighted_by : str, default="sample_weight"
        What made the weights, for the message.
    every_class : bool, default=False
        Require every class to keep a positive total weight (an estimator that cannot drop
        a class, e.g. libsvm's one-vs-one SVC, whose pairs with a class of zero weight have
        no solution).

    Raises
    ------
    ValueError
        When fewer than two classes keep a positive total weight, or, with ``every_class``,
        when any class has none.
    """
    classes = np.unique(y)
    total = np.array([weight[y == c].sum() for c in classes])
    kept = classes[total > 0]
    prefix = f"{who}: " if who else ""
    dropped = classes[~(total > 0)].tolist()
    if len(kept) < 2:
        raise ValueError(
            f"{prefix}the samples of class(es) {dropped} all weigh zero ({weighted_by}), which "
            f"removes them: only class {kept.tolist()} is left to learn; a classifier needs at "
            "least two classes of positive weight"
        )
    if every_class and dropped:
        raise ValueError(
            f"{prefix}the samples of class(es) {dropped} all weigh zero ({weighted_by}): a class of zero "
            "weight cannot be learnt, yet would stay among the classes (and the one-vs-one SVC has no "
            "solution for its pairs); leave its samples out of X and y, or give them a positive weight"
        )
