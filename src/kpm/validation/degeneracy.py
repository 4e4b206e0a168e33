"""Degenerate kernels and models: warnings that name the fix.

A kernel value counts as numerically zero (or numerically equal to the diagonal) within
``DEGENERACY_TOL = sqrt(eps)`` of the diagonal, the precision below which eigenvectors
computed in double precision carry no information. A classifier is degenerate when it
predicts one class on all its training samples, or is less accurate on them than always
predicting the most frequent class.
"""

from __future__ import annotations

import warnings

import numpy as np

from kpm.exceptions import DegenerateKernelWarning, DegenerateModelWarning

__all__ = [
    "DEGENERACY_TOL",
    "ISOLATED_FRACTION",
    "DIAGONAL_RTOL",
    "kernel_degeneracy",
    "warn_if_degenerate_kernel",
    "warn_degenerate_kernel",
    "warn_if_one_class",
    "warn_if_degenerate_model",
    "warn_if_degenerate_counts",
    "self_similarity_excess",
    "clearly_higher_error",
]

DEGENERACY_TOL = float(np.sqrt(np.finfo(float).eps))
#: share of samples numerically orthogonal to all others above which a kernel matrix
#: counts as numerically the identity
ISOLATED_FRACTION = 0.1
#: a sample whose self-similarity ``k(x, x)`` is at or below this fraction of the largest lies
#: below the rank cut of :mod:`kpm.spectral` (``RANK_RTOL``, the same value): no eigenvector
#: above the cut resolves it
DIAGONAL_RTOL = 1e-10


def kernel_degeneracy(K, *, tol=DEGENERACY_TOL, block_rows=512):
    r"""Diagnose a kernel matrix that is numerically the identity or constant.

    With the normalised kernel :math:`k(x_i, x_j) / \sqrt{k(x_i, x_i)\, k(x_j, x_j)}` (over
    the samples of positive diagonal):

    * ``'identity'``: at least ``ISOLATED_FRACTION`` of the samples have normalised
      kernel values ``<= tol`` with every other sample (numerically orthogonal to all
      of them in feature space: the kernel width is too small for the data);
    * ``'constant'``: every normalised kernel value is within ``tol`` of 1 (all
      feature vectors numerically parallel: the width is too large);
    * ``'scale'``: at least ``ISOLATED_FRACTION`` of them have a self-similarity
      ``k(x, x)`` at or below ``DIAGONAL_RTOL`` times the largest (a polynomial kernel of
      high degree: ``(1 + gamma |x|^2)^50`` spans 39 orders of magnitude on two moons, where
      kernel PCR fitted the few points of largest norm and was near chance elsewhere).

    Returns ``(kind, measure)`` -- the share of isolated samples, the largest
    ``1 - k_ij``, or the share of samples below the scale -- or None.
    """
    K = np.asarray(K)
    d = np.diag(K)
    idx = np.flatnonzero(d > 0)
    m = len(idx)
    if m < 2:
        return None
    small = float(np.mean(d[idx] <= DIAGONAL_RTOL * np.max(d[idx])))
    if small >= ISOLATED_FRACTION:
        return "scale", small
    every = m == len(d)
    # RBF, normalised kernels: nothing to scale. Their diagonal by the norm expansion is 1 to a
    # few eps (and must stay as computed: duplicated samples need bitwise equal rows), which
    # moves the normalised values by as little, far below tol
    unit = every and bool(np.all(np.abs(d - 1.0) <= 16 * np.finfo(float).eps))
    s = 1.0 / np.sqrt(d[idx])
    alone = np.empty(m, dtype=bool)  # no normalised value above tol with another sample
    low, high = np.inf, -np.inf
    for start in range(0, m, block_rows):
        stop = min(start + block_rows, m)
        rows = np.arange(start, stop)
        B = K[start:stop] if every else K[np.ix_(idx[rows], idx)]
        if not unit:
            B = B * s[rows, None]
            B *= s[None, :]
        # max |1 - B| = max(1 - min B, max B - 1), without a temporary
        b_min = float(B.min())
        low, high = min(low, b_min), max(high, float(B.max()))
        if unit and b_min >= 0.0:
            # values in [0, 1] with the diagonal 1 > tol (RBF): a boolean pass, no copy
            alone[rows] = np.count_nonzero(B > tol, axis=1) <= 1
            continue
        B = np.abs(B, out=None if unit else B)
        B[np.arange(len(rows)), rows] = 0.0
        alone[rows] = B.max(axis=1) <= tol
    spread = max(1.0 - low, high - 1.0)
    if spread <= tol:
        return "constant", spread
    isolated = float(np.mean(alone))
    if isolated >= ISOLATED_FRACTION:
        return "identity", isolated
    return None


def warn_if_degenerate_kernel(K, where, *, stacklevel=3):
    """Warn (:class:`~kpm.exceptions.DegenerateKernelWarning`) about a degenerate kernel matrix.

    Returns the diagnosis of :func:`kernel_degeneracy`.
    """
    found = kernel_degeneracy(K)
    if found is not None:
        warn_degenerate_kernel(found, where, stacklevel=stacklevel + 1)
    return found


def warn_degenerate_kernel(diagnosis, where, *, stacklevel=3):
    """Issue the :class:`~kpm.exceptions.DegenerateKernelWarning` of a diagnosis of
    :func:`kernel_degeneracy` (``(kind, measure)``), naming the fix."""
    kind, measure = diagnosis
    if kind == "scale":
        msg = (
            f"{where}: the kernel's self-similarities k(x, x) span more than "
            f"{-np.log10(DIAGONAL_RTOL):.0f} orders of magnitude: {measure:.0%} of the samples lie "
            f"below {DIAGONAL_RTOL:.0e} of the largest, where the kernel matrix is numerically "
            "zero, so the model is fitted to the few samples of largest norm. Lower the degree of "
            "the polynomial kernel, scale the features, or normalise the kernel."
        )
    elif kind == "identity":
        msg = (
            f"{where}: the kernel matrix is numerically the identity: {measure:.0%} of the samples "
            f"have kernel values below {DEGENERACY_TOL:.1e} (relative to the diagonal) with every "
            "other sample, so nothing generalises between them. The kernel width is too small for "
            "the scale of the data: scale the features or use sigma='median'."
        )
    else:
        msg = (
            f"{where}: the kernel matrix is numerically constant: all kernel values lie within "
            f"{measure:.1e} of the diagonal (relative), below the precision of its eigenvectors. "
            "The kernel width is too large for the scale of the data (or the samples are identical): "
            "scale the features or use sigma='median'."
        )
    warnings.warn(msg, DegenerateKernelWarning, stacklevel=stacklevel)


def warn_if_one_class(predictions, classes, where, *, stacklevel=3):
    """Warn (:class:`~kpm.exceptions.DegenerateModelWarning`) when a classifier fitted on
    several classes predicts one class on all its training samples. Returns True then."""
    predictions = np.asarray(predictions)
    if len(classes) < 2 or predictions.size == 0:
        return False
    found = np.unique(predictions)
    if len(found) > 1:
        return False
    _warn_one_class(found[0], predictions.size, len(classes), where, stacklevel + 1)
    return True


def _warn_one_class(label, n, n_classes, where, stacklevel):
    label = label.item() if isinstance(label, np.generic) else label
    warnings.warn(
        f"{where} predicts the single class {label!r} on all {n} of its "
        f"training samples (fitted on {n_classes} classes): the model is degenerate. Check the "
        "kernel width against the scale of the data (sigma='median', or standardise the features).",
        DegenerateModelWarning,
        stacklevel=stacklevel,
    )


def _warn_if_less_accurate(accuracy, majority, where, stacklevel):
    if accuracy >= majority:
        return False
    warnings.warn(
        f"{where} is less accurate on its own training samples ({accuracy:.3f}) than always "
        f"predicting the most frequent class ({majority:.3f}): the model is degenerate. Check the "
        "kernel width against the scale of the data (sigma='median', or standardise the features) "
        "and the model's size (dimension, number of vectors).",
        DegenerateModelWarning,
        stacklevel=stacklevel,
    )
    return True


def warn_if_degenerate_model(predictions, y, classes, where, *, stacklevel=3):
    """Warn (:class:`~kpm.exceptions.DegenerateModelWarning`) when a classifier's
    predictions on its own training samples are those of a degenerate model.

    Either one class is predicted for every sample (:func:`warn_if_one_class`), or the
    training accuracy is below the share of the most frequent class: the model is
    worse on the data it was fitted to than the constant classifier. Returns True when
    it warned.
    """
    if warn_if_one_class(predictions, classes, where, stacklevel=stacklevel + 1):
        return True
    predictions, y = np.asarray(predictions), np.asarray(y)
    if predictions.size == 0 or predictions.shape != y.shape:
        return False
    accuracy = float(np.mean(predictions == y))
    majority = float(np.max(np.unique(y, return_counts=True)[1])) / y.size
    return _warn_if_less_accurate(accuracy, majority, where, stacklevel + 1)


def warn_if_degenerate_counts(predicted, correct, counts, classes, where, *, stacklevel=3):
    """:func:`warn_if_degenerate_model` from counts (data held elsewhere, e.g. on Dask
    workers): ``predicted[c]`` training samples predicted as ``classes[c]``, ``correct``
    of them right, ``counts[c]`` samples of class ``classes[c]``."""
    predicted, counts = np.asarray(predicted), np.asarray(counts)
    n = int(counts.sum())
    if len(classes) < 2 or n == 0:
        return False
    if np.count_nonzero(predicted) == 1:
        _warn_one_class(classes[int(np.flatnonzero(predicted)[0])], n, len(classes), where, stacklevel + 1)
        return True
    return _warn_if_less_accurate(correct / n, counts.max() / n, where, stacklevel + 1)


def self_similarity_excess(K, *, block_rows=512):
    """Each point's self-similarity in excess of its nearest neighbour's in feature space.

    ``e_j = K_jj - K_{j, nn(j)}``, ``nn(j)`` the nearest other point (smallest
    ``K_ii + K_jj - 2 K_ij``); for the Gaussian kernel ``1 - max_{i != j} K_ij``. In high
    dimensions, where every point is far from every other, ``K`` is close to a smooth kernel
    matrix plus ``min_j e_j`` times the identity (El Karoui 2010): a part of the training
    points' kernel rows that no new point has. 0 for a point with an exact copy (a new point
    can coincide with a training point) and where the difference is negative; all 0 for fewer
    than two points.

    Parameters
    ----------
    K : ndarray (m, m)
        A symmetric kernel matrix.
    block_rows : int, default=512
        Rows of the distance matrix held at a time.

    Returns
    -------
    ndarray (m,)
    """
    K = np.asarray(K, dtype=float)
    m = len(K)
    if m < 2:
        return np.zeros(m)
    diag = np.diag(K).copy()
    out = np.empty(m)
    for start in range(0, m, block_rows):
        rows = np.arange(start, min(m, start + block_rows))
        dist = diag[rows, None] + diag[None, :] - 2.0 * K[rows]
        dist[np.arange(len(rows)), rows] = np.inf
        nn = np.argmin(dist, axis=1)
        copy = dist[np.arange(len(rows)), nn] <= 1e-12 * (np.abs(diag[rows]) + np.abs(diag[nn]))
        out[rows] = np.where(copy, 0.0, diag[rows] - K[rows, nn])
    return np.maximum(out, 0.0)


def clearly_higher_error(error, best, n):
    """Whether an error rate ``error`` is clearly above a reference's ``best`` (both measured
    on the same ``n`` samples, by leave-one-out or cross-validation): at least twice it and
    above it by more than three binomial standard errors of ``best`` (at least that of one
    sample in ``n``)."""
    se = np.sqrt(max(best * (1.0 - best), 1.0 / n) / n)
    return bool(error >= 2.0 * best and error - best > 3.0 * se)
