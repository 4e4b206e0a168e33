"""Input validation shared by every kpm estimator and public function.

One place decides what a valid input is, and every failure names the problem:

* **parameters**: :func:`check_int`, :func:`check_real`, :func:`check_option`;
* **arrays of samples**: :func:`check_samples` (finite float64, C order, so that two
  memory layouts of the same data give bit-identical results);
* **kernel matrices**: :func:`check_kernel_matrix` (finite, square, symmetric to
  ``SYMMETRY_RTOL``, positive semi-definite to ``PSD_RTOL``),
  :func:`check_psd_spectrum` (the same PSD test on eigenvalues an estimator computed
  anyway), :func:`check_cross_kernel` (kernel rows of new points);
* **kernel values**: :func:`check_kernel_values` (finite: overflow is an error that
  says so, never NaN entries);
* **degenerate models**: :func:`warn_if_degenerate_kernel` (a kernel matrix that is
  numerically the identity or numerically constant) and :func:`warn_if_one_class`
  (a classifier predicting a single class on its training data).

Tolerances
----------
A precomputed kernel matrix is accepted as symmetric when
``|K - K^T| <= SYMMETRY_RTOL * max|K|`` entrywise (then symmetrised) and as
positive semi-definite when its smallest eigenvalue is at least
``-PSD_RTOL * lambda_max``: the rounding errors of a Gram matrix computed in double
precision are about ``n eps lambda_max``, far below that. A kernel value counts as
numerically zero (or numerically equal to the diagonal) within ``DEGENERACY_TOL =
sqrt(eps)`` of the diagonal, the precision below which eigenvectors computed in
double precision carry no information.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import linalg
from sklearn.utils.validation import check_array

from .exceptions import DegenerateKernelWarning, DegenerateModelWarning

__all__ = [
    "SYMMETRY_RTOL",
    "PSD_RTOL",
    "DEGENERACY_TOL",
    "ISOLATED_FRACTION",
    "check_int",
    "check_real",
    "check_option",
    "check_samples",
    "check_kernel_matrix",
    "check_psd_spectrum",
    "check_cross_kernel",
    "check_kernel_values",
    "kernel_degeneracy",
    "warn_if_degenerate_kernel",
    "warn_degenerate_kernel",
    "warn_if_one_class",
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


def check_option(value, name, options):
    """One of a fixed set of string options."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value


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


# ---------------------------------------------------------------------- kernel matrices
def check_kernel_matrix(K, name="the precomputed kernel matrix", *, psd=True):
    """A kernel matrix: finite, square, symmetric and (``psd=True``) positive semi-definite.

    Returns the symmetrised float64 matrix ``(K + K^T) / 2``. With ``psd=False`` the
    caller checks the spectrum it computes anyway with :func:`check_psd_spectrum`.
    """
    K = check_array(K, dtype=np.float64, order="C", ensure_all_finite=True, input_name="X")
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be square (n_samples, n_samples), got shape {K.shape}")
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    asym = float(np.max(np.abs(K - K.T))) if K.size else 0.0
    if asym > SYMMETRY_RTOL * scale:
        raise ValueError(
            f"{name} is not symmetric: max |K - K^T| = {asym:.3g} exceeds {SYMMETRY_RTOL:g} x max |K| "
            f"= {SYMMETRY_RTOL * scale:.3g}"
        )
    K = (K + K.T) / 2
    if psd:
        _check_psd_cholesky(K, name)
    return K


def _check_psd_cholesky(K, name):
    """PSD test without the spectrum: Cholesky of ``K + shift I`` succeeds iff
    ``lambda_min > -shift``; ``shift = PSD_RTOL * trace(K)`` (``trace >= lambda_max``)."""
    d = np.diag(K)
    if len(K) == 0:
        return
    if np.max(d) <= 0:
        check_psd_spectrum(linalg.eigvalsh(K), name)  # zero or negative: say which
        return
    shift = PSD_RTOL * float(np.sum(np.maximum(d, 0.0)))
    try:
        linalg.cholesky(K + shift * np.eye(len(K)), lower=True, check_finite=False)
    except linalg.LinAlgError:
        check_psd_spectrum(linalg.eigvalsh(K), name)


def check_psd_spectrum(eigenvalues, name="the kernel matrix"):
    """Raise unless the eigenvalues are those of a PSD matrix that is not zero."""
    w = np.asarray(eigenvalues, dtype=float)
    if w.size == 0:
        return
    top, bottom = float(np.max(w)), float(np.min(w))
    if top <= 0:
        if top == 0 and bottom == 0:
            raise ValueError(f"{name} is zero: a kernel matrix needs a positive eigenvalue")
        raise ValueError(
            f"{name} is not positive semi-definite: its largest eigenvalue is {top:.3g} (a kernel "
            "matrix has a positive one; is it a negated or a distance matrix?)"
        )
    if bottom < -PSD_RTOL * top:
        raise ValueError(
            f"{name} is not positive semi-definite: it has the eigenvalue {bottom:.3g}, below "
            f"-{PSD_RTOL:g} x lambda_max = {-PSD_RTOL * top:.3g}"
        )


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
    s = 1.0 / np.sqrt(d[idx])
    nearest = np.empty(m)
    spread = 0.0
    for start in range(0, m, block_rows):
        rows = np.arange(start, min(start + block_rows, m))
        B = K[np.ix_(idx[rows], idx)] * s[rows, None] * s[None, :]
        spread = max(spread, float(np.max(np.abs(1.0 - B))))
        B = np.abs(B)
        B[np.arange(len(rows)), rows] = 0.0
        nearest[rows] = B.max(axis=1)
    if spread <= tol:
        return "constant", spread
    isolated = float(np.mean(nearest <= tol))
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
            "The kernel width is too large for the scale of the data: scale the features or use "
            "sigma='median'."
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
    label = found[0].item() if isinstance(found[0], np.generic) else found[0]
    warnings.warn(
        f"{where} predicts the single class {label!r} on all {predictions.size} of its "
        f"training samples (fitted on {len(classes)} classes): the model is degenerate. Check the "
        "kernel width against the scale of the data (sigma='median', or standardise the features).",
        DegenerateModelWarning,
        stacklevel=stacklevel,
    )
    return True
