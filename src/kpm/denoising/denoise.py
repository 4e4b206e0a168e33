"""Kernel PCA denoising by approximate pre-images (Schölkopf et al. 1999 §IV; Mika et al. 1999).

A noisy point ``x`` is mapped to feature space, projected onto the first
``n_components`` (centred) kernel PCA directions, and mapped back by an
approximate pre-image ``z`` of the projection (Schölkopf et al. 1999, §IV-A, §IV-B)::

    alpha^k = u_k / sqrt(lambda_k)                  (eigenpairs of the centred Gram matrix)
    beta_k  = sum_i alpha_i^k k~(x)_i               (kernel PCA features of x)
    P_m phi(x) = phi_bar + sum_k beta_k V^k = sum_i gamma_i phi(x_i),
    gamma_i = sum_k beta_k alpha_i^k + (1/n) (1 - sum_j sum_k beta_k alpha_j^k)

    z = argmin_z ||phi(z) - P_m phi(x)||^2

:class:`KernelPCADenoiser` is :meth:`kpm.KernelProjection.transform` followed by
:meth:`kpm.KernelProjection.inverse_transform` (one implementation of pre-images, in
:mod:`kpm.preimage.solvers`), with the iterative pre-images started at the noisy point.
Pre-image methods: ``'fixed-point'`` (Gaussian kernel only; the paper's iteration,
:func:`kpm.preimage.solvers.gaussian_fixed_point`), ``'gradient'`` (L-BFGS with analytic
gradients for rbf, poly, sigmoid, imq and linear;
:func:`kpm.preimage.solvers.gradient_preimage`), ``'mds'`` (the non-iterative pre-image of
Kwok & Tsang 2004, :func:`kpm.preimage.solvers.mds_preimage`) and ``'learned'`` (a kernel
ridge regression from kernel PCA features back to inputs, Bakır et al. 2004: the map
scikit-learn's :class:`~sklearn.decomposition.KernelPCA` fits with
``fit_inverse_transform=True``, with an unpenalised intercept). ``'auto'`` is the fixed point for the Gaussian kernel and
the gradient pre-image for the other differentiable kernels.

:class:`LinearPCADenoiser` is the linear PCA baseline (reconstruction from the
first principal components).
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
from scipy import linalg
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from kpm.base import check_n_components, raw_input_kernel
from kpm.decomposition.projection import KernelProjection, fit_coordinates
from kpm.denoising.selection import select_components
from kpm.preimage import PREIMAGE_METHODS, PreimageInfo
from kpm.spectral.basis import EIGEN_SOLVERS, numerical_rank
from kpm.validation import Integer, Options, RandomState, Real, validate_params
from kpm.validation import check_bool, check_estimator_data, check_int

__all__ = ["KernelPCADenoiser", "LinearPCADenoiser", "PreimageInfo"]

_PREIMAGES = ("auto", *PREIMAGE_METHODS)


def _resolve_components(n_components, fitted, name="n_components"):
    """Number of components to use at denoising time (at most the fitted number)."""
    if n_components is None:
        return fitted
    q = check_int(n_components, name, minimum=1)
    if q > fitted:
        raise ValueError(
            f"{name}={q} is larger than the {fitted} components fitted; refit with a larger "
            "n_components"
        )
    return q


class KernelPCADenoiser(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    r"""Denoise inputs by kernel PCA projection followed by an approximate pre-image.

    ``transform(X)`` projects :math:`\phi(x)` onto the first ``n_components`` centred
    kernel PCA directions of the training data (by default, ``n_components=None``, every
    direction above the rank cut: give ``n_components`` to denoise) and returns the
    approximate pre-images (points of input space whose images are closest to the
    projections), following Schölkopf et al. (1999) §IV: it is
    :meth:`kpm.KernelProjection.transform` followed by
    :meth:`kpm.KernelProjection.inverse_transform`, the iterative pre-images started at
    the noisy point. By default (the RBF kernel, ``preimage='auto'``) the pre-image is
    Schölkopf et al.'s fixed-point iteration for the Gaussian kernel, restarted from the
    training points nearest the starting point, in turn, when its denominator vanishes
    (``restart='nearest'``).

    Parameters
    ----------
    n_components : int, None or 'auto', default='auto'
        Number of kernel PCA directions kept. ``None`` keeps all directions with a
        numerically nonzero eigenvalue (the rank cut of :mod:`kpm.spectral`; the default
        before version 0.2). ``'auto'`` chooses it from the data by 5-fold cross-validation
        on the training points (:func:`kpm.denoising.selection.select_components`): the
        noise variance per feature is the plateau of linear PCA's held-out residual variance
        per residual dimension (cross-validated probabilistic PCA); for each number of
        components on a geometric grid, the held-out reconstruction error and the
        divergence of the denoiser (Hutchinson's estimate by finite differences) give
        Stein's unbiased estimate of the squared error against the clean points, and the
        number of smallest estimate is kept. A :class:`UserWarning` is issued when that
        estimate is not at least 10 % below the input's (the noise variance), naming
        ``LinearPCADenoiser`` when it is expected to do better, and when the noise level
        cannot be estimated (data that fill their input space; then every component is
        kept). ``component_selection_`` holds the numbers.
    kernel : {'rbf', 'poly', 'sigmoid', 'imq', 'linear'} or callable, default='rbf'
        Kernel (see :func:`kpm.kernels.make_kernel`). ``'precomputed'`` is not
        possible: pre-images need input vectors. A callable kernel works only with
        ``preimage='learned'``.
    sigma : float or 'median', optional
        RBF width, :math:`\exp(-\|x-y\|^2 / (2\sigma^2))`.
    gamma : float or 'scale', optional
        RBF :math:`\exp(-\gamma \|x-y\|^2)` (default ``'scale'``: ``1/(n_features X.var())``);
        poly/sigmoid inner-product scale. Schölkopf's :math:`\exp(-\|x-y\|^2/c)` is
        :math:`\gamma = 1/c` (or ``kernel_params={'c': c}``).
    degree : int, default=3
        Polynomial degree.
    coef0 : float, default=1.0
        Constant of poly and sigmoid.
    kernel_params : dict, optional
        Other kernel parameters (e.g. ``{'c': 128}``).
    preimage : {'auto', 'fixed-point', 'gradient', 'mds', 'learned'}, default='auto'
        Pre-image method (see :class:`kpm.KernelProjection`'s ``preimage``). ``'auto'``:
        ``'fixed-point'`` for the Gaussian kernel, ``'gradient'`` for poly, sigmoid, imq and
        linear. ``'fixed-point'`` needs the Gaussian kernel.
    preimage_max_iter : int, default=500
        Iteration cap of the pre-image solver (run by :meth:`transform`; fit does not
        iterate). Named ``max_iter`` before version 0.2.
    preimage_tol : float > 0, default=1e-6
        Tolerance of the pre-image solver (fixed-point: step in kernel widths;
        gradient: relative reduction of the gradient's infinity norm).
    restart : {'nearest', 'best'}, default='nearest'
        Restart rule of the fixed-point iteration when its denominator vanishes.
    alpha : float >= 0 or 'auto', default=1.0
        Ridge parameter of the learned inverse (``preimage='learned'`` only); ``'auto'``:
        chosen by its closed-form leave-one-out error on the training points (see
        :func:`kpm.preimage.learned.fit_learned_preimage`). The leave-one-out error measures
        how well the map recovers a training point from its coordinates, not how well it
        denoises: when the kept coordinates determine the point (few input features, e.g. a
        curve in R^3 with 8 components), the best such map returns about the noisy input,
        and a larger ridge denoises by smoothing; with many features (USPS digits, 64
        components) the two agree.
    eigen_solver : {'auto', 'dense', 'arpack', 'randomized', 'matrix-free'}, default='auto'
        Eigensolver for the centred Gram matrix (the registry of :mod:`kpm.spectral`).
        ``'auto'``: :func:`kpm.spectral.resolve_solver`, the measured crossovers (dense
        LAPACK for the whole spectrum, :math:`n \le 300` or ``n_components > n/5``; ARPACK for up
        to 100 components; the block Krylov solver beyond; the matrix-free solver when the
        kernel matrix exceeds ``kpm.get_config()['max_kernel_bytes']``).
    random_state : int, RandomState or None, default=None
        Seeds the partial eigensolvers.

    Attributes
    ----------
    projection_ : KernelProjection
        The fitted kernel PCA, whose :meth:`~kpm.KernelProjection.inverse_transform`
        computes the pre-images.
    n_components_ : int
        Number of components kept.
    component_selection_ : kpm.denoising.selection.ComponentSelection or None
        With ``n_components='auto'``: the estimated noise variance, the cross-validated
        reconstruction errors and risk estimates per number of components, and the
        warning issued, if any; else None.
    eigenvalues_ : ndarray of shape (n_components_,)
        Eigenvalues of the centred Gram matrix, decreasing.
    eigenvectors_ : ndarray of shape (n_samples, n_components_)
        Unit eigenvectors :math:`u_k`.
    alphas_ : ndarray of shape (n_samples, n_components_)
        :math:`u_k / \sqrt{\lambda_k}`: expansion coefficients of unit feature-space directions.
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training data (the expansion points of the pre-images).
    kernel_ : kpm.kernels.Kernel
        The kernel used.
    n_features_in_ : int
        Number of input features.

    See Also
    --------
    LinearPCADenoiser : The linear PCA baseline.
    kpm.KernelProjection : The kernel PCA coordinates and their pre-images.
    kpm.preimage.solvers.gaussian_fixed_point : The fixed-point pre-image iteration.
    sklearn.decomposition.KernelPCA : Kernel PCA with a learned pre-image map
        (``preimage='learned'`` fits the same map).

    Notes
    -----
    :meth:`transform` leaves the estimator unchanged; the pre-image diagnostics
    (iterations, convergence, objective per point) come from
    ``denoise(X, return_info=True)``. Pre-images that did not converge are returned
    (the best iterate found) and reported by a :class:`ConvergenceWarning`.

    References
    ----------
    Schölkopf, Mika, Burges, Knirsch, Müller, Rätsch, Smola (1999). Input space
    versus feature space in kernel-based methods. IEEE TNN 10(5).

    Examples
    --------
    >>> import numpy as np
    >>> from kpm import KernelPCADenoiser
    >>> rng = np.random.default_rng(0)
    >>> t = rng.uniform(0, 2 * np.pi, 300)
    >>> clean = np.c_[np.cos(t), np.sin(t)]                  # the unit circle
    >>> noisy = clean + 0.1 * rng.standard_normal(clean.shape)
    >>> Z = KernelPCADenoiser(n_components=8, sigma=0.5).fit(noisy).transform(noisy)
    >>> def off(P):                                          # mean distance to the circle
    ...     return np.abs(np.linalg.norm(P, axis=1) - 1).mean()
    >>> print(f"{off(noisy):.3f} -> {off(Z):.3f}")
    0.072 -> 0.017
    """

    _parameter_constraints = {
        "n_components": [Integer(1), None, Options("auto")],
        "preimage": [Options(*_PREIMAGES)],
        "preimage_max_iter": [Integer(1)],
        "preimage_tol": [Real(0, None, "neither")],
        "restart": [Options("nearest", "best")],
        "alpha": [Real(0, None), Options("auto")],
        "eigen_solver": [Options(*EIGEN_SOLVERS)],
        "random_state": [RandomState()],
    }

    def __init__(
        self,
        n_components="auto",
        *,
        kernel="rbf",
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        preimage="auto",
        preimage_max_iter=500,
        preimage_tol=1e-6,
        restart="nearest",
        alpha=1.0,
        eigen_solver="auto",
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.preimage = preimage
        self.preimage_max_iter = preimage_max_iter
        self.preimage_tol = preimage_tol
        self.restart = restart
        self.alpha = alpha
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Fit kernel PCA on the training data (clean or noisy).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self

        Warns
        -----
        UserWarning
            With ``n_components='auto'``, when the cross-validation does not expect the
            denoiser to improve on the noisy input, or cannot estimate the noise level.
        """
        if raw_input_kernel(self.kernel) is not None:
            raise ValueError(
                f"kernel {self.kernel!r} takes non-numeric input (e.g. strings): denoising needs "
                "pre-images in a numeric input space"
            )
        params = validate_params(self)
        X = check_estimator_data(self, X, min_samples=2)
        n_components = params["n_components"]
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            raise ValueError(
                "kernel='precomputed' cannot be used for denoising: pre-images live in input space"
            )
        if isinstance(n_components, int):
            # the centred Gram matrix has rank at most n - 1
            check_n_components(n_components, X.shape[0] - 1)
        self.component_selection_ = None
        if n_components == "auto":
            with warnings.catch_warnings():
                # the folds' fits and pre-images: the final fit warns about what applies
                warnings.simplefilter("ignore")
                selection = select_components(
                    X, partial(self._projection, KernelProjection),
                    random_state=0 if self.random_state is None else self.random_state)
            self.component_selection_ = selection
            n_components = selection.n_components
            if selection.message is not None:
                warnings.warn(selection.message, UserWarning, stacklevel=2)
        projection = self._projection(KernelProjection, n_components)
        fit_coordinates(projection, X, owner="KernelPCADenoiser")
        if projection.preimage_ is None:
            raise ValueError(
                f"kernel {projection.kernel_.name!r} has no fixed-point, gradient or MDS pre-image: "
                "use preimage='learned'"
            )
        self.projection_ = projection
        self.n_components_ = projection.n_components_
        self.eigenvalues_ = projection.eigenvalues_
        self.eigenvectors_ = projection.eigenvectors_
        self.alphas_ = projection.dual_coef_
        self.X_fit_ = projection.X_fit_
        self.kernel_ = projection.kernel_
        return self

    def _projection(self, cls, n_components):
        """An unfitted KernelProjection with this denoiser's settings and n_components."""
        solver = self.eigen_solver
        if n_components is None and solver in ("arpack", "randomized", "matrix-free"):
            solver = "dense"  # the whole spectrum: the partial solvers have nothing to add
        return cls(
            n_components, kernel=self.kernel, sigma=self.sigma, gamma=self.gamma, degree=self.degree,
            coef0=self.coef0, kernel_params=self.kernel_params, eigen_solver=solver,
            random_state=self.random_state, preimage=self.preimage, preimage_alpha=self.alpha,
            preimage_max_iter=self.preimage_max_iter, preimage_tol=self.preimage_tol,
            preimage_restart=self.restart,
        )

    # ------------------------------------------------------------ transform
    def transform_features(self, X, n_components=None):
        """Kernel PCA features ``beta_k`` of X (projections onto the unit directions).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_components : int, optional
            Number of leading components (at most ``n_components_``).

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        X = check_estimator_data(self, X, reset=False)
        q = _resolve_components(n_components, self.n_components_)
        return self.projection_.transform(X)[:, :q]

    def denoise(self, X, n_components=None, *, return_info=False):
        """Denoise X using the first ``n_components`` fitted components.

        Same as :meth:`transform`, but with fewer components than were fitted if
        asked (no refit needed: the trailing coordinates are set to zero, which projects
        onto the leading components; not available for ``preimage='learned'`` whose
        learned inverse depends on the number of components), and with the pre-image
        diagnostics on request. The estimator is not modified.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_components : int, optional
            At most ``n_components_`` (default: all fitted components).
        return_info : bool, default=False
            Also return the diagnostics of the pre-image iteration.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features)
            Approximate pre-images of the projections.
        info : PreimageInfo
            Only with ``return_info=True``: per point, ``n_iter`` (iterations),
            ``converged`` and ``objective`` (see :class:`PreimageInfo`).

        Warns
        -----
        ConvergenceWarning
            When pre-images did not converge within ``preimage_max_iter`` (the best iterates
            are returned; ``info.converged`` flags them).
        """
        check_is_fitted(self)
        return_info = check_bool(return_info, "return_info")
        X = check_estimator_data(self, X, reset=False)
        q = _resolve_components(n_components, self.n_components_)
        projection = self.projection_
        method = projection.preimage_
        if method == "learned" and q != self.n_components_:
            raise ValueError(
                "preimage='learned' learns its inverse for the fitted n_components only; refit "
                "with the number of components wanted"
            )
        Y = projection.transform(X)
        Y[:, q:] = 0.0
        init = X if method in ("fixed-point", "gradient") else None
        Z, info = projection.inverse_transform(Y, init=init, return_info=True)
        n_bad = int(np.sum(~info.converged))
        if n_bad:
            warnings.warn(
                f"{n_bad} of {len(X)} pre-images did not converge (preimage={method!r}, "
                f"preimage_max_iter={self.preimage_max_iter}, preimage_tol={self.preimage_tol}); the best iterates are returned (see "
                "denoise(..., return_info=True))",
                ConvergenceWarning,
                stacklevel=2,
            )
        return (Z, info) if return_info else Z

    def transform(self, X):
        """Denoise X: approximate pre-images of its kernel PCA projections.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features)
        """
        return self.denoise(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        return tags


class LinearPCADenoiser(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    r"""Linear PCA denoising baseline: reconstruction from the first principal components.

    ``transform(X)`` is :math:`\bar x + (x - \bar x) W W^\top` with :math:`W` the first
    ``n_components`` principal directions of the training data. The default
    (``n_components=None``) keeps every component with a nonzero singular value, a mere
    change of basis that denoises nothing: give ``n_components``.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of principal components kept; ``None`` keeps all with a nonzero
        singular value (a mere change of basis: no denoising).

    Attributes
    ----------
    n_components_ : int
    components_ : ndarray of shape (n_components_, n_features)
        Principal directions (rows, unit norm).
    explained_variance_ : ndarray of shape (n_components_,)
    mean_ : ndarray of shape (n_features,)
    n_features_in_ : int

    See Also
    --------
    KernelPCADenoiser : Denoising in a kernel feature space.
    sklearn.decomposition.PCA : The principal components it reconstructs from.

    Examples
    --------
    >>> import numpy as np
    >>> from kpm import LinearPCADenoiser
    >>> rng = np.random.default_rng(0)
    >>> clean = rng.standard_normal((300, 1)) @ rng.standard_normal((1, 5))  # a line in R^5
    >>> noisy = clean + 0.1 * rng.standard_normal(clean.shape)
    >>> Z = LinearPCADenoiser(n_components=1).fit(noisy).transform(noisy)
    >>> print(f"{np.mean((noisy - clean) ** 2):.4f} -> {np.mean((Z - clean) ** 2):.4f}")
    0.0098 -> 0.0022
    """

    _parameter_constraints = {"n_components": [Integer(1), None]}

    def __init__(self, n_components=None):
        self.n_components = n_components

    def fit(self, X, y=None):
        """Fit linear PCA.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        n_components = validate_params(self)["n_components"]
        X = check_estimator_data(self, X, min_samples=2)
        n, d = X.shape
        if n_components is not None:
            check_n_components(n_components, min(n - 1, d))
        self.mean_ = X.mean(axis=0)
        _, s, Vt = linalg.svd(X - self.mean_, full_matrices=False, check_finite=False)
        rank = numerical_rank(s)  # on the singular values of the centred data
        if rank == 0:
            raise ValueError("all training points are identical: nothing to project onto")
        q = rank if n_components is None else check_n_components(n_components, rank)
        # deterministic signs
        idx = np.argmax(np.abs(Vt[:q]), axis=1)
        signs = np.sign(Vt[np.arange(q), idx])
        signs[signs == 0] = 1.0
        self.components_ = Vt[:q] * signs[:, None]
        self.explained_variance_ = s[:q] ** 2 / (n - 1)
        self.n_components_ = q
        return self

    def denoise(self, X, n_components=None):
        """Reconstruct X from its first ``n_components`` (at most ``n_components_``) components.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        n_components : int, optional

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = check_estimator_data(self, X, reset=False)
        q = _resolve_components(n_components, self.n_components_)
        W = self.components_[:q]
        return self.mean_ + ((X - self.mean_) @ W.T) @ W

    def transform(self, X):
        """Denoise X by projection onto the principal subspace.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        return self.denoise(X)
