"""Input validation shared by every kpm estimator and public function.

One place decides what a valid input is, and every failure names the problem:

* **parameters**: :func:`check_int`, :func:`check_real`, :func:`check_option`,
  :func:`check_bool`, :func:`check_generator`, :func:`check_random_state`;
* **arrays of samples**: :func:`check_samples` (finite float64, C order, so that two
  memory layouts of the same data give bit-identical results) and
  :func:`check_estimator_data` (the same for an estimator's ``fit``/``transform``,
  with scikit-learn's ``n_features_in_`` bookkeeping);
* **kernel matrices**: :func:`check_kernel_matrix` (finite, square, symmetric to
  ``SYMMETRY_RTOL``, positive semi-definite to ``PSD_RTOL``),
  :func:`check_psd_spectrum` (the same PSD test on eigenvalues an estimator computed
  anyway), :func:`check_cross_kernel` (kernel rows of new points);
* **kernel values**: :func:`check_kernel_values` (finite: overflow is an error that
  says so, never NaN entries);
* **degenerate models**: :func:`warn_if_degenerate_kernel` (a kernel matrix that is
  numerically the identity or numerically constant), :func:`warn_if_one_class`
  (a classifier predicting a single class on its training data) and
  :func:`warn_if_degenerate_model` (that, or a classifier less accurate on its
  training data than always predicting the most frequent class).

Tolerances
----------
A precomputed kernel matrix is accepted as symmetric when
``|K - K^T| <= SYMMETRY_RTOL * max|K|`` entrywise (then symmetrised) and as
positive semi-definite when its smallest eigenvalue is at least
``-PSD_RTOL * lambda_max``: the rounding errors of a Gram matrix computed in double
precision are about ``n eps lambda_max``, far below that. A centred kernel matrix
``H K H`` carries rounding errors of the size of the *uncentred* entries, so its
spectrum is judged against ``scale = max |K|`` as well (the ``scale`` argument). A kernel value counts as
numerically zero (or numerically equal to the diagonal) within ``DEGENERACY_TOL =
sqrt(eps)`` of the diagonal, the precision below which eigenvectors computed in
double precision carry no information.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import linalg
from sklearn.utils.validation import check_array, validate_data

from kpm.exceptions import DegenerateKernelWarning, DegenerateModelWarning

__all__ = [
    "SYMMETRY_RTOL",
    "PSD_RTOL",
    "DEGENERACY_TOL",
    "ISOLATED_FRACTION",
    "check_int",
    "check_real",
    "check_option",
    "check_positive_grid",
    "check_bool",
    "check_generator",
    "check_random_state",
    "check_samples",
    "check_estimator_data",
    "check_kernel_matrix",
    "check_psd_spectrum",
    "check_cross_kernel",
    "check_kernel_values",
    "kernel_degeneracy",
    "warn_if_degenerate_kernel",
    "warn_degenerate_kernel",
    "warn_if_one_class",
    "warn_if_degenerate_model",
    "warn_if_degenerate_counts",
]

SYMMETRY_RTOL = 1e-8
PSD_RTOL = 1e-8
DEGENERACY_TOL = float(np.sqrt(np.finfo(float).eps))
#: share of samples numerically orthogonal to all others above which a kernel matrix
#: counts as numerically the identity
ISOLATED_FRACTION = 0.1


# ----------------------------------------------------------------------- parameters
def check_int(value, name, *, minimum=1, maximum=None, allow_none=False):
    """An integer parameter in ``[minimum, maximum]`` (bools and floats are rejected)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_real(value, name, *, low=None, high=None, low_open=False, high_open=False, allow_none=False):
    """A finite real parameter in the interval given by ``low``/``high`` (open ends on request)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}, got {value!r}")
    if high is not None and (value >= high if high_open else value > high):
        raise ValueError(f"{name} must be {'<' if high_open else '<='} {high:g}, got {value!r}")
    return value


def check_positive_grid(value, name):
    """A positive finite number or a non-empty 1-D sequence of them: a sorted, distinct array."""
    values = np.atleast_1d(np.asarray(value, dtype=object))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{name} must be a positive number or a non-empty list of them, got {value!r}")
    out = np.array([check_real(v, name, low=0.0, low_open=True) for v in values])
    return np.unique(out)


def check_option(value, name, options):
    """One of a fixed set of string options."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value


def check_bool(value, name):
    """A boolean flag: ``True``/``False`` or a numpy bool (integers and strings are rejected)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_generator(random_state, name="random_state"):
    """``numpy.random.default_rng(random_state)``, with a clear error for anything it refuses."""
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be None, a non-negative int, a SeedSequence or a numpy Generator, got "
            f"{random_state!r}"
        ) from None


def check_random_state(random_state, name="random_state"):
    """scikit-learn's ``check_random_state`` (None, an int in ``[0, 2**32 - 1]`` or a
    ``RandomState``), with an error that names the parameter."""
    from sklearn.utils import check_random_state as sk_check_random_state

    try:
        return sk_check_random_state(random_state)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be None, an integer in [0, 2**32 - 1] or a numpy RandomState, got "
            f"{random_state!r}"
        ) from None


# --------------------------------------------------------------------------- samples
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


# ---------------------------------------------------------------------- kernel matrices
def check_kernel_matrix(K, name="the precomputed kernel matrix", *, psd=True, scale=None):
    """A kernel matrix: finite, square, symmetric and (``psd=True``) positive semi-definite.

    Returns the symmetrised float64 matrix ``(K + K^T) / 2``. With ``psd=False`` the
    caller checks the spectrum it computes anyway with :func:`check_psd_spectrum`.
    ``scale`` is passed on to the PSD test (see :func:`check_psd_spectrum`).
    """
    K = check_array(K, dtype=np.float64, order="C", ensure_all_finite=True, input_name="X")
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be square (n_samples, n_samples), got shape {K.shape}")
    magnitude = float(max(K.max(), -K.min()))
    S = K - K.T  # the only n x n temporary; it becomes the result
    np.abs(S, out=S)
    asym = float(S.max())
    if asym > SYMMETRY_RTOL * magnitude:
        raise ValueError(
            f"{name} is not symmetric: max |K - K^T| = {asym:.3g} exceeds {SYMMETRY_RTOL:g} x max |K| "
            f"= {SYMMETRY_RTOL * magnitude:.3g}"
        )
    np.add(K, K.T, out=S)
    S *= 0.5
    K = S
    if psd:
        _check_psd_cholesky(K, name, scale)
    return K


def _check_psd_cholesky(K, name, scale=None):
    """PSD test without the spectrum: Cholesky of ``K + shift I`` succeeds iff
    ``lambda_min > -shift``; ``shift = PSD_RTOL * max(trace(K), scale)`` (``trace >= lambda_max``)."""
    d = np.diag(K)
    if len(K) == 0:
        return
    bound = max(float(np.sum(np.maximum(d, 0.0))), 0.0 if scale is None else float(scale))
    if bound <= 0:
        check_psd_spectrum(linalg.eigvalsh(K), name, scale=scale)  # zero or negative: say which
        return
    A = K.copy()
    A[np.diag_indices_from(A)] += PSD_RTOL * bound
    try:
        linalg.cholesky(A, lower=True, overwrite_a=True, check_finite=False)
    except linalg.LinAlgError:
        del A
        check_psd_spectrum(linalg.eigvalsh(K), name, scale=scale)


def check_psd_spectrum(eigenvalues, name="the kernel matrix", *, scale=None):
    """Raise unless the eigenvalues are those of a PSD matrix that is not zero.

    An eigenvalue below ``-PSD_RTOL * max(lambda_max, scale)`` makes the matrix not
    positive semi-definite. ``scale`` (default none) is the size of the entries whose
    rounding errors the matrix carries, e.g. ``max |K|`` for a centred ``H K H``: a
    spectrum within ``PSD_RTOL * scale`` of zero then passes (it is numerically zero,
    which the caller reports in its own terms); without ``scale`` an exactly zero
    spectrum is an error.
    """
    w = np.asarray(eigenvalues, dtype=float)
    if w.size == 0:
        return
    top, bottom = float(np.max(w)), float(np.min(w))
    floor = PSD_RTOL * max(top, 0.0 if scale is None else float(scale))
    if bottom < -floor:
        if top <= floor:
            raise ValueError(
                f"{name} is not positive semi-definite: its largest eigenvalue is {top:.3g} and its "
                f"smallest {bottom:.3g} (a kernel matrix has a positive one; is it a negated or a "
                "distance matrix?)"
            )
        raise ValueError(
            f"{name} is not positive semi-definite: it has the eigenvalue {bottom:.3g}, below "
            f"-{PSD_RTOL:g} x {'lambda_max' if floor == PSD_RTOL * top else 'max(lambda_max, scale)'} "
            f"= {-floor:.3g}"
        )
    if scale is None and top <= 0:
        raise ValueError(f"{name} is zero: a kernel matrix needs a positive eigenvalue")


def check_cross_kernel(K, n_train, name="the precomputed kernel matrix"):
    """Kernel rows of new points against ``n_train`` training points: finite, (m, n_train)."""
    K = check_array(K, dtype=np.float64, order="C", ensure_all_finite=True, input_name="X")
    if K.shape[1] != n_train:
        raise ValueError(
            f"{name} of new points must have one column per training sample ({n_train}), "
            f"got shape {K.shape}"
        )
    return K


def check_kernel_values(K, kernel=None):
    """Raise a clear error when computed kernel values are not finite (overflow)."""
    if not np.all(np.isfinite(K)):
        what = f"the kernel {kernel!r}" if kernel is not None else "the kernel"
        raise ValueError(
            f"{what} produced non-finite values: the computation overflowed float64 (input "
            "magnitudes too large for this kernel); scale the features, e.g. with "
            "sklearn.preprocessing.StandardScaler"
        )
    return K


# ------------------------------------------------------------------ degenerate models
def kernel_degeneracy(K, *, tol=DEGENERACY_TOL, block_rows=512):
    """Diagnose a kernel matrix that is numerically the identity or constant.

    With the normalised kernel ``k(x_i, x_j) / sqrt(k(x_i, x_i) k(x_j, x_j))`` (over
    the samples of positive diagonal):

    * ``'identity'``: at least ``ISOLATED_FRACTION`` of the samples have normalised
      kernel values ``<= tol`` with every other sample (numerically orthogonal to all
      of them in feature space: the kernel width is too small for the data);
    * ``'constant'``: every normalised kernel value is within ``tol`` of 1 (all
      feature vectors numerically parallel: the width is too large).

    Returns ``(kind, measure)`` -- the share of isolated samples, or the largest
    ``1 - k_ij`` -- or None.
    """
    K = np.asarray(K)
    d = np.diag(K)
    idx = np.flatnonzero(d > 0)
    m = len(idx)
    if m < 2:
        return None
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
    if kind == "identity":
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
