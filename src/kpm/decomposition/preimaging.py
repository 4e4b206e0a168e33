"""The way back from :class:`kpm.KernelProjection`'s coordinates to input space.

A point ``y`` of the coordinate space is the feature-space point ``phi_bar + sum_k y_k V^k``
(``V^k`` the unit principal directions), an expansion on the training points (on the
landmarks, for the Nyström variant). Its pre-image is an input point whose image is closest
to it, found by a solver of :mod:`kpm.preimage` (Schölkopf et al. 1999; Kwok & Tsang 2004) or
given by the learned map (Bakır, Weston & Schölkopf 2004).

* :func:`resolve_preimage` -- the ``preimage`` parameter checked against the kernel and
  ``'auto'`` resolved (``preimage_``);
* :func:`fit_learned_map` -- the learned map of :meth:`kpm.KernelProjection.fit`, with a
  warning when it misses held-out points by more than the noise;
* :class:`Preimager` -- the expansions of a fitted projection's coordinates and their
  pre-images, solved in blocks (:meth:`kpm.KernelProjection.inverse_transform`);
* :func:`reconstruction_warning` -- whether the pre-images of a projection on every
  component reconstruct held-out points better than the points themselves are to their clean
  values, and the warning that says they do not (:func:`warn_reconstruction`);
* :func:`warn_failed_preimages` -- the targets of such a projection whose pre-images are far
  from them in feature space (points outside the region of the training data).
"""

from __future__ import annotations

import contextvars
import warnings

import numpy as np

from kpm.config import get_config
from kpm.preimage import (
    DIFFERENTIABLE_KERNELS,
    PreimageInfo,
    default_preimage,
    fit_learned_preimage,
    preimage_objective,
    solve_preimages,
)
from kpm.preimage.noise import (
    heldout_folds,
    heldout_linear_pca,
    noise_level,
    noise_variance_bound,
    residual_variances,
    stein_risk,
)
from kpm.validation import check_samples

__all__ = ["FAILED_PREIMAGE_RESIDUAL", "HELDOUT_RESIDUAL_FACTOR", "HELDOUT_RESIDUAL_QUANTILE", "Preimager",
           "checks_reconstruction", "fit_learned_map", "reconstruction_warning", "relative_residuals",
           "resolve_preimage", "warn_failed_preimages", "warn_reconstruction"]

#: a pre-image ``z`` of a projection on every component has failed when its feature-space
#: residual ``||phi(z) - P||^2`` is at least this fraction of ``k(z, z)`` (a distance of a third
#: of the image's norm). The projection of a point near the training data is reconstructed to
#: 1e-4 of it or better; the failures seen reach 0.15-0.7: 1 of 1,000 Gaussian test points
#: outside the 122 training points (squared error 0.011 against 1e-17 for the others), 20 %
#: of the points of 8 training points' learned map
FAILED_PREIMAGE_RESIDUAL = 0.1
#: ... and at least this many times the upper quartile (:data:`HELDOUT_RESIDUAL_QUANTILE`) of
#: the residuals of the held-out training points' pre-images (:func:`reconstruction_warning`):
#: on noisy data every point lies off the span of the others' images, and pre-images far from
#: their targets are then the denoised points (a circle in 2 of 50 dimensions: residuals
#: 0.1-0.3, squared errors a fifth of the inputs'). A quartile, not the largest: held-out
#: points can fail themselves (the one training point of a cluster, left out), and a bar at
#: their residual (0.49 of 8 points' learned map) hid test points of a cluster absent from
#: the training set (residual 0.27, squared error 1.4 per feature against the inputs' 4e-4)
HELDOUT_RESIDUAL_FACTOR = 4.0
#: the quantile of the held-out residuals that :data:`HELDOUT_RESIDUAL_FACTOR` multiplies
HELDOUT_RESIDUAL_QUANTILE = 0.75


def resolve_preimage(kernel, method):
    """``preimage_``: the pre-image method ``method`` (``'auto'`` resolved) for the fitted
    ``kernel``, or None (no pre-images); an error for a method the kernel cannot use."""
    if kernel.is_precomputed or kernel.raw_input:
        if method not in ("auto",):
            what = "a precomputed kernel matrix" if kernel.is_precomputed else "non-numeric input"
            raise ValueError(
                f"preimage={method!r}: pre-images are points of a numeric input space, and "
                f"{what} has none; use preimage='auto' (no inverse_transform)"
            )
        return None
    if method == "auto":
        return default_preimage(kernel)
    if method == "fixed-point" and kernel.name != "rbf":
        raise ValueError(
            f"preimage='fixed-point' is the Gaussian-kernel iteration; kernel {kernel.name!r} "
            "needs preimage='gradient' or 'mds' (poly, sigmoid, imq, linear) or 'learned'"
        )
    if method in ("gradient", "mds") and kernel.name not in DIFFERENTIABLE_KERNELS:
        raise ValueError(
            f"preimage={method!r} needs one of the kernels {DIFFERENTIABLE_KERNELS}, got "
            f"{kernel.name!r}; use preimage='learned'"
        )
    return method


def fit_learned_map(Yt, X, kernel, alpha, landmark_indices):
    """The learned pre-image map (:func:`kpm.preimage.learned.fit_learned_preimage`) from the
    training coordinates ``Yt`` (the landmarks' on the Nyström variant) to the inputs X.

    Warns (``UserWarning``, at the caller of ``fit``) when its leave-one-out error exceeds
    twice :func:`kpm.preimage.noise.noise_variance_bound` of X or half the variance of X.
    """
    if landmark_indices is not None:
        Yt, X = Yt[landmark_indices], X[landmark_indices]
    learned = fit_learned_preimage(Yt, X, kernel, alpha=alpha)
    loo = learned.loo_error
    # A pre-image z of a noisy point x = c + n (noise variance sigma^2 per feature) has
    # E||z - c||^2 >= E||z - x||^2 - d sigma^2 (Stein's identity, divergence >= 0): a map
    # whose held-out error exceeds 2 sigma^2 per feature is further from the clean points
    # than the input. sigma^2 is bounded above by linear PCA's held-out residual variance
    # and the leave-one-out error is optimistic, so the warning errs on the silent side.
    # A map that misses held-out points by half their variance is useless whatever the
    # noise (the constant map at the mean misses them by all of it).
    bound = noise_variance_bound(X, random_state=0)
    variance = float(np.mean(np.var(X, axis=0)))
    if loo > 2.0 * bound or loo > 0.5 * variance:
        what = (f"more than twice the largest noise variance consistent with the data "
                f"({bound:.3g}, from linear PCA of held-out points): its pre-images are further "
                f"from the clean points than the inputs themselves"
                if loo > 2.0 * bound else
                f"more than half the variance of the data ({variance:.3g}): it explains less "
                f"than half of unseen points")
        warnings.warn(
            f"the learned pre-image map recovers held-out training points with a mean squared "
            f"error of {loo:.3g} per feature (leave-one-out, alpha={learned.alpha:.3g}), "
            f"{what}; use preimage='auto' (or 'mds'), fewer components, or keep the inputs",
            UserWarning, stacklevel=4)
    return learned


class Preimager:
    """Expansions and pre-images of the coordinates of a fitted :class:`kpm.KernelProjection`.

    Parameters
    ----------
    projection : KernelProjection
        Fitted, with training inputs (``X_fit_`` not None).
    basis : kpm.spectral.basis.EigenBasis
        Its eigen basis (the landmark map of the Nyström variant).
    width : int
        The number of columns of its coordinates (with the residual).
    """

    def __init__(self, projection, basis, width):
        self.kp = projection
        self.basis = basis
        self.width = width

    def check_available(self):
        """An error naming why this fit has no pre-images (``preimage_`` is None)."""
        kp = self.kp
        if kp.preimage_ is not None:
            return
        why = (
            "pre-images are points of a numeric input space, which a precomputed kernel "
            "matrix does not have"
            if kp.kernel_.is_precomputed
            else "pre-images need input vectors and a kernel with a pre-image method"
            if kp.kernel_.raw_input
            else f"the {kp.kernel_.name} kernel has no fixed-point, gradient or MDS "
            "pre-image; refit with preimage='learned'"
        )
        raise ValueError(f"inverse_transform is not available: {why}")

    def coordinates(self, Y):
        """Validated coordinates of ``transform``'s form -> the unwhitened leading
        coordinates (m, n_components_) (a residual column is dropped)."""
        kp = self.kp
        Y = check_samples(Y, "Y", min_samples=0)
        if Y.shape[1] != self.width:
            raise ValueError(
                f"Y has {Y.shape[1]} columns, but this KernelProjection maps to {self.width} coordinates "
                f"({kp.n_components_} components{' and the residual' if kp.residual else ''})"
            )
        Y = Y[:, : kp.n_components_]
        return Y * np.sqrt(kp.eigenvalues_) if kp.whiten else Y

    def points(self):
        """The expansion points: the training inputs, or the landmarks (Nyström)."""
        kp = self.kp
        if kp.landmark_indices_ is not None:
            return kp.X_fit_[kp.landmark_indices_]
        return kp.X_fit_

    def expansion(self, Y, landmark_features=None, dots=False):
        """The feature-space points of the (unwhitened) coordinates Y as expansions on
        :meth:`points`: coefficients (m, p), squared norms (m,) and, with ``dots``, the dot
        products with the expansion points' images (m, p).

        Exact and matrix-free bases: ``P = phi_bar + sum_k y_k V^k`` with
        ``V^k = sum_i dual_coef_[i, k] (phi(x_i) - phi_bar)``; ``<P, phi(x_i)>`` follows from
        the training coordinates without kernel values. Nyström: ``P = sum_l w_l e_l`` in the
        orthonormal landmark basis ``e_l = sum_j M[j, l] phi(z_j)``, ``w = fbar + V y``;
        ``landmark_features`` are ``K(Z, Z) M``, the landmarks' own features.
        """
        kp = self.kp
        if kp.landmark_indices_ is not None:
            ny = self.basis.nystroem
            W = ny.feature_mean + Y @ ny.rotation.T
            coefs = W @ ny.landmark_map.T
            sq = np.einsum("ij,ij->i", W, W)
            D = W @ landmark_features.T if dots else None
            return coefs, sq, D
        A = kp.dual_coef_
        coefs = Y @ A.T
        sq = np.einsum("ij,ij->i", Y, Y)
        D = Y @ (kp.eigenvectors_ * np.sqrt(kp.eigenvalues_)).T if dots else None
        if kp.centered:
            n = A.shape[0]
            # <phi_bar, V^k> and the mean's weight 1/n (1 - sum_i sum_k y_k A[i, k])
            mean_dot_v = A.T @ (kp.kernel_col_means_ - kp.kernel_mean_)
            coefs += ((1.0 - coefs.sum(axis=1)) / n)[:, None]
            along = Y @ mean_dot_v
            sq += kp.kernel_mean_ + 2.0 * along
            if dots:
                D += kp.kernel_col_means_[None, :] + along[:, None]
        return coefs, sq, D

    def check_init(self, init, m, d):
        """``init`` of ``inverse_transform``, checked: None, or (m, d) starting points of an
        iterative method."""
        if init is None:
            return None
        method = self.kp.preimage_
        if method in ("mds", "learned"):
            raise ValueError(f"init is the start of the iterative pre-images; preimage={method!r} has none")
        init = check_samples(init, "init", min_samples=0)
        if init.shape != (m, d):
            raise ValueError(f"init must have shape (n_samples, n_features) = ({m}, {d}), got {init.shape}")
        return init

    def solve(self, Y, init, return_info):
        """The pre-images ``Z`` (m, d) of the unwhitened coordinates Y and their
        :class:`kpm.preimage.PreimageInfo` (the learned map's objectives only with
        ``return_info``), in blocks of rows within ``kpm.get_config()['block_bytes']``."""
        kp = self.kp
        method, m, d = kp.preimage_, Y.shape[0], kp.n_features_in_
        Z = np.empty((m, d))
        info = PreimageInfo(n_iter=np.zeros(m, dtype=int), converged=np.ones(m, dtype=bool), objective=np.empty(m))
        if m == 0:
            return Z, info
        points = self.points()
        want_dots = method == "mds" or (init is None and method != "learned")
        features = None
        if want_dots and kp.landmark_indices_ is not None:
            features = kp.kernel_(points) @ self.basis.nystroem.landmark_map
        step = max(1, int(get_config()["block_bytes"] // (8 * 4 * max(points.shape[0], d))))
        for a in range(0, m, step):
            rows = slice(a, min(a + step, m))
            if method == "learned":
                Z[rows] = kp.preimage_map_.predict(Y[rows])
                if return_info:
                    coefs, sq, _ = self.expansion(Y[rows])
                    info.objective[rows] = preimage_objective(Z[rows], coefs, points, kp.kernel_, ctc=sq)
                continue
            coefs, sq, D = self.expansion(Y[rows], features, dots=want_dots)
            Z[rows], block = solve_preimages(
                coefs, points, kp.kernel_, method=method, init=None if init is None else init[rows],
                ctc=sq, dots=D, n_neighbors=kp.preimage_neighbors, max_iter=kp.preimage_max_iter,
                tol=kp.preimage_tol, restart=kp.preimage_restart)
            info.n_iter[rows], info.converged[rows], info.objective[rows] = block.n_iter, block.converged, block.objective
        return Z, info


#: set while :func:`reconstruction_warning` cross-validates (the folds' own pre-images skip it)
_CHECKING = contextvars.ContextVar("kpm_reconstruction_check", default=False)


def reconstruction_warning(projection, start_at_input, *, n_folds=5, max_points=1000, max_test=200,
                           margin=0.05, tolerance=1e-6, random_state=0, residuals=None):
    """The warning for the pre-images of a projection on every component, or None.

    A projection on every component (``n_components=None``: Kwak's map, the full numerical
    rank) maps a point to the projection of its image onto the span of the training images;
    its pre-image is meant to reconstruct the point. Whether it does is measured on held-out
    training points, as :mod:`kpm.denoising.selection` measures a denoiser: ``projection``'s
    settings are fitted on ``n_folds - 1`` folds (copies of a row in one fold; on at most
    ``4 n_folds`` points, on all distinct points but one, in turn), the held-out
    points are mapped by ``transform`` and back by ``inverse_transform`` (the iterative
    pre-images started at the held-out points with ``start_at_input``, as a caller passing
    the inputs as ``init`` does), and Stein's unbiased estimate of the squared error against
    the clean points (Stein 1981), ``E||f(x) - x||^2 - d sigma^2 + 2 sigma^2 E[div f]`` per
    feature with Hutchinson's divergence estimate from one Rademacher probe per point
    (Hutchinson 1989), is compared with the input's, ``sigma^2``. The noise variance
    ``sigma^2`` is linear PCA's noise floor (:func:`kpm.preimage.noise.noise_level`), or where
    that is not identified its upper bound (:func:`kpm.preimage.noise.noise_variance_bound`:
    the estimate then decreases with ``sigma^2``, so the verdict errs on the silent side).
    A warning when the estimate exceeds ``(1 + margin) sigma^2 + tolerance`` times the
    data's variance per feature: the pre-images are then further from the clean points than
    the inputs themselves.

    Parameters
    ----------
    projection : KernelProjection
        Fitted with ``n_components=None`` on numeric inputs, with a pre-image method.
    start_at_input : bool
        Start the iterative pre-images at the held-out points (``init``), else at their
        default start.
    n_folds, max_points, max_test : int
        Folds, the most training points used (a random subset) and the most held-out points
        mapped back (all folds together).
    margin, tolerance : float
        See above.
    random_state : int
        Draws the subset, the folds and the probes.
    residuals : list, optional
        Extended with the held-out points' :func:`relative_residuals`.

    Returns
    -------
    str or None
    """
    from sklearn.base import clone
    from sklearn.utils import check_random_state

    rng = check_random_state(random_state)
    X, labels, E_lin = heldout_linear_pca(projection.X_fit_, n_folds, max_points, rng)
    d = X.shape[1]
    sigma2, q_lin = noise_level(E_lin, d)
    identified = q_lin is not None
    if not identified:
        sigma2 = float(np.min(residual_variances(E_lin, d)))
    variance = float(np.mean(np.var(X, axis=0)))
    eps = 0.1 * np.sqrt(sigma2) if sigma2 > 0.0 else 1e-8 * max(np.sqrt(variance), 1e-300)
    # few points: leave one (distinct) point out at a time, so the folds' fits are as close
    # to the whole fit as they can be (fits on 4/5 of 10 points reconstruct far worse)
    n_check = n_folds
    if len(X) <= 4 * n_folds:
        labels = heldout_folds(X, len(X), rng)
        n_check = int(labels.max()) + 1
    per_fold = max(1, max_test // n_check)
    err = div = 0.0
    count = 0
    token = _CHECKING.set(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the folds' fits: the caller's fit warned already
            for f in range(n_check):
                test = np.flatnonzero(labels == f)[:per_fold]
                train = labels != f
                if test.size == 0 or np.count_nonzero(train) < 2:
                    continue
                Xt = X[test]
                probe = rng.choice([-1.0, 1.0], size=Xt.shape)
                Xp = Xt + eps * probe
                try:
                    fold = clone(projection).fit(X[train])
                    Z, info = fold.inverse_transform(fold.transform(Xt), init=Xt if start_at_input else None,
                                                     return_info=True)
                    Zp = fold.inverse_transform(fold.transform(Xp), init=Xp if start_at_input else None)
                except (ValueError, np.linalg.LinAlgError):
                    continue  # a fold the settings cannot fit (too few points): no verdict from it
                if residuals is not None:
                    residuals.extend(relative_residuals(fold.kernel_, Z, info.objective))
                err += float(np.sum((Z - Xt) ** 2))
                div += float(np.sum(probe * (Zp - Z))) / eps
                count += len(test)
    finally:
        _CHECKING.reset(token)
    if count == 0:
        return None
    err /= count * d
    risk = stein_risk(err, div / count, sigma2, d)
    if not (np.isfinite(risk) and risk > (1.0 + margin) * sigma2 + tolerance * variance):
        return None
    noise = (f"the noise variance {sigma2:.3g} per feature of linear PCA's noise floor" if identified else
             f"at most {sigma2:.3g} per feature, the bound from linear PCA of held-out points")
    return (f"the pre-images of this projection on every component do not reconstruct unseen "
            f"points: mapped by transform and inverse_transform (preimage={projection.preimage_!r}), "
            f"held-out training points come back {err:.3g} per feature away, and Stein's unbiased "
            f"estimate of their squared error against the clean points is {risk:.3g} per feature "
            f"against {sigma2:.3g} for the points themselves (noise: {noise}); keep the inputs "
            f"(a projection on every component only reconstructs them), or denoise with fewer "
            f"components (KernelPCADenoiser chooses them)")


def relative_residuals(kernel, Z, objective):
    """``||phi(z) - P||^2 / k(z, z)`` of pre-images ``Z`` with objectives ``objective`` (0 where
    ``k(z, z)`` is not positive)."""
    scale = np.abs(kernel.diag(Z)) if len(Z) else np.empty(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(scale > 0, objective / np.where(scale > 0, scale, 1.0), 0.0)


def checks_reconstruction(projection):
    """Whether ``projection``'s pre-images are checked (:func:`warn_reconstruction`,
    :func:`warn_failed_preimages`): a projection on every component of numeric inputs, outside
    the held-out check's own fits."""
    return not _CHECKING.get() and projection.n_components is None and projection.X_fit_ is not None


def warn_failed_preimages(projection, Z, objective, heldout_bar):
    """Warn (at the caller of ``inverse_transform``) when some pre-images ``Z`` of a projection
    on every component are far from their targets in feature space: ``objective``
    (``||phi(z) - P||^2``, :class:`kpm.preimage.PreimageInfo`) at least
    :data:`FAILED_PREIMAGE_RESIDUAL` times ``k(z, z)``, and at least ``heldout_bar`` (what
    :func:`warn_reconstruction` returns: :data:`HELDOUT_RESIDUAL_FACTOR` times the upper
    quartile of the held-out training points' residuals). Such a projection reconstructs a
    point whose image lies near the span of the training images; coordinates of a point
    outside the region of the training data describe a feature-space point no input maps
    near, and its pre-image does not reconstruct it. Returns the indices of these targets."""
    relative = relative_residuals(projection.kernel_, Z, objective)
    failed = np.flatnonzero(relative >= max(FAILED_PREIMAGE_RESIDUAL, heldout_bar))
    if len(failed):
        warnings.warn(
            f"the pre-images of {len(failed)} of the {len(Z)} targets are far from them in feature space "
            f"(||phi(z) - P||^2 up to {float(relative[failed].max()):.2g} of k(z, z)): a projection on every "
            "component reconstructs the points whose images lie near the span of the training images, and "
            "these coordinates describe points outside it (e.g. inputs far from the training data). Where the "
            "coordinates come from transform(X), those rows of X are themselves the better reconstruction; "
            "inverse_transform(..., return_info=True) gives each target's residual (info.objective)",
            UserWarning, stacklevel=3)
    return failed


def warn_reconstruction(projection, start_at_input):
    """Issue :func:`reconstruction_warning`'s warning (at the caller of ``inverse_transform``),
    computed once per fitted projection and start, for a projection on every component of
    numeric inputs (:func:`checks_reconstruction`). Returns the held-out bar of
    :func:`warn_failed_preimages`: :data:`HELDOUT_RESIDUAL_FACTOR` times the
    :data:`HELDOUT_RESIDUAL_QUANTILE` quantile of the relative residuals of the held-out
    points' pre-images (0 where none was measured)."""
    cache = projection.__dict__.setdefault("_reconstruction_checks", {})
    if start_at_input not in cache:
        residuals = []
        message = reconstruction_warning(projection, start_at_input, residuals=residuals)
        quantile = float(np.quantile(residuals, HELDOUT_RESIDUAL_QUANTILE)) if residuals else 0.0
        cache[start_at_input] = message, HELDOUT_RESIDUAL_FACTOR * quantile
    message, heldout_bar = cache[start_at_input]
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=3)
    return heldout_bar
