"""Kernel matrices given by the user: finite, square, symmetric, positive semi-definite.

A precomputed kernel matrix is accepted as symmetric when ``|K - K^T| <= SYMMETRY_RTOL *
max|K|`` entrywise (then symmetrised) and as positive semi-definite when its smallest
eigenvalue is at least ``-PSD_RTOL * lambda_max``: the rounding errors of a Gram matrix
computed in double precision are about ``n eps lambda_max``, far below that. A centred kernel
matrix ``H K H`` carries rounding errors of the size of the *uncentred* entries, so its
spectrum is judged against ``scale = max |K|`` as well (the ``scale`` argument).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from sklearn.utils.validation import check_array

__all__ = [
    "SYMMETRY_RTOL",
    "PSD_RTOL",
    "check_kernel_matrix",
    "check_psd_spectrum",
    "check_cross_kernel",
    "check_kernel_values",
]

SYMMETRY_RTOL = 1e-8
PSD_RTOL = 1e-8


def check_kernel_matrix(K, name="the precomputed kernel matrix", *, psd=True, scale=None):
    r"""A kernel matrix: finite, square, symmetric and (``psd=True``) positive semi-definite.

    Returns the symmetrised float64 matrix :math:`(K + K^\top) / 2`. With ``psd=False`` the
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
    r"""Raise unless the eigenvalues are those of a PSD matrix that is not zero.

    An eigenvalue below :math:`-\epsilon \max(\lambda_{\max}, \text{scale})` (:math:`\epsilon` = ``PSD_RTOL``) makes the matrix not
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
