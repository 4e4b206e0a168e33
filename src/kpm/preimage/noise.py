"""The noise level of data, from linear PCA of held-out points (Tipping & Bishop 1999).

Under the model ``x = c + n`` (``n`` isotropic noise of variance ``sigma^2`` per input
feature), linear PCA fitted on K - 1 folds reconstructs the held-out fold from its first q
directions with error ``E_lin(q)`` per feature; the held-out residual variance per residual
dimension ``s(q) = E_lin(q) d / (d - q)`` is at least ``sigma^2`` for every q. The learned
pre-image map of :class:`kpm.KernelProjection` is judged against this bound, and
:mod:`kpm.denoising.selection` identifies ``sigma^2`` from its plateau.

References
----------
M. E. Tipping, C. M. Bishop, "Probabilistic principal component analysis", J. R. Stat. Soc.
B 61(3), 1999.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state

from kpm.validation import duplicate_groups

__all__ = ["heldout_folds", "linear_heldout_errors", "heldout_linear_pca", "residual_variances",
           "noise_level", "noise_variance_bound", "stein_risk", "subsample"]


def heldout_folds(X, n_folds, rng):
    """Fold labels with duplicated rows in the same fold (a held-out point must not be in
    the training folds)."""
    inverse = duplicate_groups(X, always=True)
    groups = rng.permutation(inverse.max() + 1)
    return groups[inverse] % n_folds


def linear_heldout_errors(X, labels, n_folds):
    """``E_lin(q)``: held-out reconstruction error per feature of linear PCA with q
    directions, for q = 0 up to ``min(d - 1, rank of the smallest training fold)``."""
    n, d = X.shape
    per_fold = []
    for f in range(n_folds):
        test = labels == f
        if not test.any():
            continue
        train = X[~test]
        mean = train.mean(axis=0)
        _, _, Vt = linalg.svd(train - mean, full_matrices=False, check_finite=False)
        R = X[test] - mean
        C = R @ Vt.T  # coordinates of the held-out points on every direction of the fold
        captured = np.concatenate([[0.0], np.cumsum(np.sum(C * C, axis=0))])
        per_fold.append(np.sum(R * R) - captured[:d])
    k = min(len(e) for e in per_fold)
    return np.sum([e[:k] for e in per_fold], axis=0) / (n * d)


def heldout_linear_pca(X, n_folds, max_points, rng):
    """``(X, labels, E_lin)``: at most ``max_points`` rows of X (:func:`subsample`), their fold
    labels (:func:`heldout_folds`) and the held-out errors of linear PCA on those folds
    (:func:`linear_heldout_errors`), drawn from ``rng`` in that order."""
    X = subsample(X, max_points, rng)
    labels = heldout_folds(X, n_folds, rng)
    return X, labels, linear_heldout_errors(X, labels, n_folds)


def residual_variances(E_lin, d):
    """``s(q) = E_lin(q) d / (d - q)``: the held-out residual variance per residual dimension."""
    return E_lin * d / (d - np.arange(len(E_lin)))


def noise_level(E_lin, d, *, plateau=0.25, gap=2.5):
    """``(sigma^2, q_lin)`` from the held-out errors ``E_lin`` of linear PCA
    (:func:`linear_heldout_errors`) on data of d features, or ``(nan, None)`` when the noise
    cannot be told from the signal.

    ``s(q)`` (:func:`residual_variances`) is ``sigma^2`` on a plateau beyond the signal's
    dimension k: the noise level is identified when ``s`` reaches its minimum (to within
    ``plateau``) at some ``q_lin`` with ``1 <= q_lin <= d - 2`` (at least two noise
    directions) and the held-out variance along the ``q_lin``-th direction is ``gap`` times
    ``sigma^2`` or more (the weakest signal direction stands out of the noise);
    ``sigma^2 = s(q_lin)``.
    """
    s = residual_variances(E_lin, d)
    best = float(np.min(s))
    if not best > 0.0:
        return float("nan"), None
    q_lin = int(np.flatnonzero(s <= (1.0 + plateau) * best)[0])
    if q_lin < 1 or q_lin > d - 2:
        return float("nan"), None
    sigma2 = float(s[q_lin])
    # the weakest signal direction must stand out of the noise: held-out variance along it
    if (E_lin[q_lin - 1] - E_lin[q_lin]) * d < gap * sigma2:
        return float("nan"), None
    return sigma2, q_lin


def stein_risk(squared_error, divergence, sigma2, d):
    """Stein's unbiased estimate (Stein 1981) of a map's squared error per feature against the
    clean points, under isotropic noise of variance ``sigma2`` per feature on ``d`` features:
    ``squared_error - sigma2 + 2 sigma2 divergence / d``, ``squared_error`` the mean squared
    distance of the map's outputs to its noisy inputs per feature and ``divergence`` the map's
    mean divergence per point (e.g. Hutchinson's estimate from random probes; ``q`` for a
    projection onto ``q`` directions). The input itself scores ``sigma2``."""
    return squared_error - sigma2 + 2.0 * sigma2 * divergence / d


def noise_variance_bound(X, *, n_folds=5, max_points=1000, random_state=0):
    """An upper bound on the noise variance per feature: ``min_q s(q)``, the smallest
    held-out residual variance per residual dimension of linear PCA (step 1 of
    :mod:`kpm.denoising.selection`).

    Every ``s(q)`` is at least ``sigma^2`` in expectation (signal left out only adds to it),
    whatever the data; the bound is tight when the signal lies in a linear subspace of
    dimension below d - 1, and is the variance of the weakest direction of the data when
    they fill their input space.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_folds : int, default=5
    max_points : int, default=1000
        At most this many points (a random subset) are used.
    random_state : int or RandomState, default=0

    Returns
    -------
    float
    """
    X, _, E_lin = heldout_linear_pca(X, n_folds, max_points, check_random_state(random_state))
    return float(np.min(residual_variances(E_lin, X.shape[1])))


def subsample(X, max_points, rng):
    """At most ``max_points`` rows of X, drawn at random (in their order)."""
    if X.shape[0] <= max_points:
        return X
    return X[np.sort(rng.choice(X.shape[0], max_points, replace=False))]
