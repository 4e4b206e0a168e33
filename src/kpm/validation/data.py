"""Arrays of samples in one canonical form.

:func:`check_samples` returns finite, C-ordered float64 arrays, so that two memory layouts of
the same data give bit-identical results (BLAS sums in a layout-dependent order);
:func:`check_estimator_data` does the same for an estimator's ``fit``/``transform``, with
scikit-learn's ``n_features_in_`` and ``feature_names_in_`` bookkeeping.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_array, validate_data

__all__ = ["check_samples", "check_estimator_data"]


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
