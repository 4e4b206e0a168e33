"""Squared Euclidean distances for the distance kernels (RBF, IMQ), with a guard against
the cancellation of the norm expansion for points far from the origin."""

from __future__ import annotations

import numpy as np

__all__ = [
    "squared_distances",
    "cancelled_entries",
    "may_cancel",
    "exact_sq_dists",
    "EXPANSION_RTOL",
    "EPS",
]

#: relative accuracy below which kernel values from the norm expansion are recomputed
#: from differences (see :func:`cancelled_entries`)
EXPANSION_RTOL = 1e-12
EPS = float(np.finfo(float).eps)


def squared_distances(X, Y, X_sq=None, Y_sq=None):
    r"""Squared Euclidean distances :math:`\|x_i - y_j\|^2` by the norm expansion, clipped at zero.

    ``X_sq``/``Y_sq`` are the squared row norms (computed when omitted).
    """
    if X_sq is None:
        X_sq = np.einsum("ij,ij->i", X, X)
    if Y_sq is None:
        Y_sq = np.einsum("ij,ij->i", Y, Y)
    D = X @ Y.T
    D *= -2.0
    D += X_sq[:, None]
    D += Y_sq[None, :]
    np.maximum(D, 0.0, out=D)
    return D


def cancelled_entries(D, X_sq, Y_sq, scale, floor):
    """Entries of ``D = |x|^2 + |y|^2 - 2<x, y>`` the norm expansion may have cancelled away.

    The expansion's rounding error is about ``4 eps (|x|^2 + |y|^2)``: for points far from
    the origin compared with their distance (large offsets or magnitudes) it swamps ``D``
    (``k(x, x)`` of an RBF kernel at 1e8 comes out as ``exp(-1)``). Returns the mask of the
    entries whose error, times ``scale``, exceeds ``EXPANSION_RTOL (scale D + floor)``
    (for the RBF kernel ``floor`` excludes values that underflow to 0 anyway), or None when
    no entry can (the norms are small: the usual case, at no cost).
    """
    if not may_cancel(X_sq, Y_sq, scale, floor):
        return None
    err = 4.0 * EPS * scale * (X_sq[:, None] + Y_sq[None, :])
    return err > EXPANSION_RTOL * (scale * D + floor)


def may_cancel(X_sq, Y_sq, scale, floor):
    """Whether any entry can need :func:`cancelled_entries`'s correction (O(n) test)."""
    bound = 4.0 * EPS * scale * (float(np.max(X_sq, initial=0.0)) + float(np.max(Y_sq, initial=0.0)))
    return bound > EXPANSION_RTOL * floor


def exact_sq_dists(D, X, Y, mask, chunk=1 << 16):
    """Set ``D[mask]`` to ``||x_i - y_j||^2`` computed from the differences."""
    rows, cols = np.nonzero(mask)
    for start in range(0, len(rows), chunk):
        i, j = rows[start : start + chunk], cols[start : start + chunk]
        diff = X[i] - Y[j]
        D[i, j] = np.einsum("ij,ij->i", diff, diff)
    return D
