"""Explicit kernel feature map: Kwak's nonlinear projection trick (Kwak 2013, Algorithm 1).

The mapped training data ``phi(x_1) .. phi(x_n)`` (centred in feature space by
default) span an r-dimensional subspace P of the feature space, r being the rank
of the centred kernel matrix ``K~ = H K H``. With ``K~ = U Lambda U^T`` (the
eigenvalues above ``rank_tol * lambda_max``), the columns of
``Phi U Lambda^{-1/2}`` are an orthonormal basis of P, and

* the coordinates of the training data are ``Y = Lambda^{1/2} U^T`` (r x n), so
  ``Y^T Y = K~`` (Kwak, Corollary 3) and the rows of ``Y^T`` are centred
  (Lemma 4);
* a new point is mapped to ``y(x) = Lambda^{-1/2} U^T k~(x)`` with the centred
  kernel vector ``k~(x) = H (kappa(x) - K 1/n)`` (Theorem 2, Section III-A);
* truncating to the D leading coordinates gives the kernel PCA features;
* optionally the length of the residual ``phi(x) - phi_P(x)`` is appended as an
  extra coordinate, ``sqrt(max(k~(x, x) - ||y(x)||^2, 0))`` (Lemma 5);
* optionally the coordinates are whitened, ``Lambda^{-1/2} y`` (Schölkopf et al.
  1999, Section II-C), so that the training coordinates have identity scatter.

Any linear method applied to ``transform(X)`` is then the kernel version of that
method (Kwak's Algorithm 1, step 5).

The way back: a point ``y`` of the coordinate space is the feature-space point
``phi_bar + sum_k y_k V^k`` (``V^k`` the unit principal directions), an expansion on the
training points (on the landmarks, for the Nyström variant); :meth:`KernelProjection.inverse_transform`
returns an approximate pre-image, an input point whose image is closest to it
(:mod:`kpm.preimage`: the fixed-point iteration, gradient descent, the MDS
pre-image of Kwok & Tsang 2004, or the learned map of Bakır et al. 2004).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from kpm.base import KernelParamsMixin, user_matrix_name, validate_kernel_input
from kpm.decomposition.components import relevant_dimension
from kpm.decomposition.preimaging import (
    Preimager,
    checks_reconstruction,
    fit_learned_map,
    resolve_preimage,
    warn_failed_preimages,
    warn_reconstruction,
)
from kpm.decomposition.solvers import PROJECTION_SOLVERS, SpectralFitter, choose_solver, landmark_kernel
from kpm.preimage import PREIMAGE_METHODS
from kpm.spectral.basis import RANK_RTOL
from kpm.spectral.landmarks import LANDMARK_RULES
from kpm.validation import (
    Boolean,
    Integer,
    InstanceOf,
    Options,
    RandomState,
    Real,
    check_bool,
    check_kernel_matrix,
    check_param,
    validate_params,
)

__all__ = ["KernelProjection", "fit_coordinates"]


class KernelProjection(KernelParamsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                       BaseEstimator):
    r"""Explicit coordinates in kernel feature space (Kwak's nonlinear projection trick).

    By default (``n_components=None``, ``centered=True``, the RBF kernel with
    ``gamma='scale'``) :meth:`fit` eigendecomposes the centred kernel matrix
    :math:`\tilde K = U \Lambda U^\top` and keeps every eigenpair above the rank cut,
    :math:`\lambda >` ``rank_tol`` :math:`\times\, \lambda_{\max}` (the full numerical rank:
    Kwak's map); :meth:`transform` maps a point to

    .. math::

        y(x) = \Lambda^{-1/2} U^\top \tilde k(x),

    and :meth:`fit_transform` returns the training coordinates
    :math:`Y^\top = U \Lambda^{1/2}` (so that :math:`Y^\top Y = \tilde K`). An int
    ``n_components`` keeps the D leading coordinates (the kernel PCA features),
    ``whiten=True`` scales them to unit scatter, ``n_landmarks`` gives the Nyström
    variant, and :meth:`inverse_transform` maps coordinates back to input space
    (pre-images).

    Parameters
    ----------
    n_components : int, float, 'rde' or None, default=None
        Number of coordinates D. ``None``: the full numerical rank r (Kwak's map).
        An int: the D leading coordinates (kernel PCA features); it must not exceed the
        rank. A float in (0, 1): the smallest D whose ``explained_variance_ratio_`` sums to
        at least that fraction (of ``trace(K~)``, the total variance; on the Nyström
        variant, of the trace of the approximation). ``'rde'``: the relevant dimension of
        the labels ``y`` given to :meth:`fit` (Braun, Buhmann & Müller), the
        ``n_components_`` of :class:`kpm.RelevantDimension` with the same kernel on the
        same data (which decomposes the uncentred n x n kernel matrix; at most the rank).
    kernel : str, callable or Kernel, default='rbf'
        See :func:`kpm.kernels.make_kernel`. ``'precomputed'``: ``fit`` takes the
        (n, n) training kernel matrix and ``transform`` an (n_test, n) matrix of kernel
        values against the training points. A precomputed matrix, and the matrix of a
        callable kernel, must be symmetric and the matrix decomposed (centred, by default)
        positive semi-definite (:func:`kpm.validation.check_kernel_matrix`); so a
        conditionally positive definite matrix such as ``-D^2 / 2`` (squared distances)
        is accepted when centred (classical scaling).
    sigma, gamma : float, optional
        RBF width (:math:`\exp(-\|x-y\|^2/(2\sigma^2))` or :math:`\exp(-\gamma \|x-y\|^2)`; give at
        most one; default ``gamma='scale'``), or the scale of poly/sigmoid.
    degree : float, default=3
        Polynomial degree.
    coef0 : float, default=1.0
        Additive constant of poly and sigmoid kernels.
    kernel_params : dict, optional
        Extra kernel parameters (see :func:`kpm.kernels.make_kernel`).
    centered : bool, default=True
        Centre the data in feature space (Kwak Section III-A). If False, ``K`` itself
        is decomposed.
    rank_tol : float in [0, 1), default=1e-10
        Relative eigenvalue tolerance: eigenvalues :math:`\le` ``rank_tol`` :math:`\times\, \lambda_{\max}` count as zero
        (they define the numerical rank and are never inverted, so duplicate points or
        low-rank kernels give finite coordinates), and so do eigenvalues at the rounding
        level ``n eps max|K|`` of the kernel values, whatever ``rank_tol``. The default is the
        package's rank tolerance ``kpm.spectral.RANK_RTOL`` (see :mod:`kpm.spectral`).
    residual : bool, default=False
        Append the residual coordinate of Kwak's Lemma 5, the distance of ``phi(x)`` to
        the (affine, if centred) subspace spanned by the D retained directions.
    whiten : bool, default=False
        Scale the coordinates by :math:`\Lambda^{-1/2}` (unit scatter of the training data).
    eigen_solver : {'auto', 'dense', 'arpack', 'randomized', 'matrix-free', 'nystroem'}, default='auto'
        ``'dense'``: LAPACK ``eigh``. ``'arpack'``: ARPACK Lanczos. ``'randomized'``:
        randomized block Krylov with a Ritz-residual convergence test (the registry of
        :mod:`kpm.spectral`). ``'matrix-free'``: exact kernel PCA without the n x n
        matrix (:func:`kpm.spectral.operator.matrix_free_basis`): kernel values are computed
        in row blocks within ``kpm.get_config()['block_bytes']``, float32 iterations for the
        RBF kernel, every eigenpair certified in float64 to ``eigen_tol``; it needs an
        integer ``n_components`` and a kernel on feature vectors (not precomputed or
        callable). ``'nystroem'``: landmark approximation (below,
        :func:`kpm.spectral.nystroem_basis`). ``'auto'``: ``'nystroem'`` if
        ``n_landmarks`` is given; else :func:`kpm.spectral.resolve_solver` (for an
        integer ``n_components`` much smaller than n, ``'arpack'`` up to 100 components
        and ``'randomized'`` beyond, the measured crossovers; a float ``n_components``:
        ``'dense'`` up to n = 2000, ``'randomized'`` beyond; otherwise ``'dense'``), except
        that a kernel matrix over the memory budget ``kpm.get_config()['max_kernel_bytes']``
        gets ``'matrix-free'`` (for a built-in kernel on feature vectors and an int or float
        ``n_components``) instead of a ``KernelMemoryError``. ``eigen_solver_`` tells which
        solver ran. A float ``n_components`` with ``'matrix-free'``: leading pairs are
        computed in growing numbers until they hold the fraction.
    n_landmarks : int, optional
        Number of landmarks of the Nyström variant (default 1000, at most n). The
        landmarks are chosen by the ``landmarks`` rule with ``random_state``; the map is then
        the exact nonlinear projection trick for the feature vectors projected onto the
        span of the landmarks' feature vectors, computed blockwise in memory O(n m).
        With ``n_landmarks = n`` it equals the exact map.
    landmarks : {'uniform', 'kmeans++', 'rpcholesky'}, default='uniform'
        How the Nyström variant picks its landmarks (:func:`kpm.spectral.landmarks.select_landmarks`):
        uniformly without replacement, by k-means++ seeding in input space, or by randomly
        pivoted Cholesky on the kernel matrix (Chen, Epperly, Tropp & Webber 2023; ``O(n m)``
        kernel entries, a smaller approximation error than uniform landmarks).
    random_state : int, RandomState or None, default=None
        Seeds the partial eigensolvers and the landmark draw.
    eigen_tol : float, optional
        Convergence tolerance of the iterative solvers (default 1e-10; the dense solver is
        exact to rounding). ``'arpack'``: ARPACK's relative tolerance, every pair satisfies
        :math:`\|\tilde K u - \lambda u\| \le \epsilon \lambda` (:math:`\epsilon` =
        ``eigen_tol``); ``'randomized'`` and ``'matrix-free'``:
        :math:`\|\tilde K u - \lambda u\| \le \epsilon \lambda_1`. The eigenvalues are then
        exact to about :math:`\epsilon^2 \lambda_1` (:doc:`/user_guide/feature_map`).
    preimage : {'auto', 'fixed-point', 'gradient', 'mds', 'learned'}, default='auto'
        How :meth:`inverse_transform` maps coordinates back to input space
        (:mod:`kpm.preimage`). ``'fixed-point'``: the Gaussian kernel's iteration
        (Schölkopf et al. 1999), ``'gradient'``: L-BFGS on the pre-image objective (any kernel
        of ``kpm.preimage.DIFFERENTIABLE_KERNELS``), both started from the MDS
        pre-image unless :meth:`inverse_transform` is given ``init``; ``'mds'``: the
        non-iterative pre-image of Kwok & Tsang (2004); ``'learned'``: the kernel ridge
        map from coordinates to inputs of Bakır, Weston & Schölkopf (2004), fitted by
        :meth:`fit` (scikit-learn's ``KernelPCA(fit_inverse_transform=True)`` map with an
        unpenalised intercept; an
        n x n system, m x m on the Nyström landmarks). ``'auto'``: ``'fixed-point'`` for the
        Gaussian kernel, ``'gradient'`` for the other differentiable kernels; other kernels
        (callables) have no pre-image unless ``'learned'`` is asked for. On the Nyström
        variant the pre-images are computed from the landmark expansion.
    preimage_alpha : float >= 0 or 'auto', default='auto'
        Ridge parameter of the learned map (``preimage='learned'``). ``'auto'``: the value
        of smallest closed-form leave-one-out error on the training points, on a grid from
        ``1e-8`` to ``1e2`` times the mean diagonal of the kernel matrix of the coordinates
        (:func:`kpm.preimage.learned.fit_learned_preimage`). It was 1.0 before version 0.2.
    preimage_max_iter : int, default=500
        Iteration cap of the iterative pre-images.
    preimage_tol : float > 0, default=1e-6
        Tolerance of the iterative pre-images (fixed point: step in kernel widths; gradient:
        relative reduction of the gradient's infinity norm).
    preimage_neighbors : int, default=10
        Nearest expansion points the MDS pre-image is placed among.
    preimage_restart : {'nearest', 'best'}, default='nearest'
        Restart rule of the fixed-point iteration when its denominator vanishes
        (:func:`kpm.preimage.solvers.gaussian_fixed_point`).

    Attributes
    ----------
    eigenvalues_ : ndarray (n_components_,)
        Leading eigenvalues of the centred kernel matrix, decreasing.
    explained_variance_ratio_ : ndarray (n_components_,)
        ``eigenvalues_`` divided by the trace of the decomposed matrix (the total variance
        in feature space; the sum of all its eigenvalues). On the Nyström variant, the
        shares of the trace of the approximate (centred) kernel matrix, not of the exact one.
    eigen_solver_ : str
        The eigensolver that ran (``'auto'`` resolved): ``'dense'``, ``'arpack'``,
        ``'randomized'``, ``'matrix-free'`` or ``'nystroem'``.
    preimage_ : str or None
        The pre-image method of :meth:`inverse_transform` (``preimage='auto'`` resolved);
        None when there is none (a precomputed kernel, a callable kernel without ``'learned'``).
    preimage_map_ : kpm.preimage.LearnedPreimage or None
        The learned pre-image map (``preimage='learned'``), else None.
    preimage_alpha_ : float or None
        The ridge parameter of the learned map (``preimage_alpha='auto'`` resolved), else None.
    preimage_loo_error_ : float or None
        Leave-one-out error of the learned map on its training points (the mean squared
        difference per input feature between a training point and its pre-image by the map
        fitted without it; NaN for ``preimage_alpha=0``), else None.
    eigenvectors_ : ndarray (n_samples, n_components_)
        Matching unit eigenvectors (largest-magnitude entry positive).
    dual_coef_ : ndarray (n_samples, n_components_) or (n_landmarks, n_components_)
        :math:`U \Lambda^{-1/2}`: :math:`y(x)` = ``dual_coef_.T @`` :math:`\tilde k(x)` (the
        kernel PCA expansion coefficients :math:`\alpha^k`). For the Nyström variant, the coefficients of the
        landmark kernel vector (see ``nystroem_offset_``).
    n_components_ : int
        Number of coordinates D (without the residual).
    rank_ : int
        Numerical rank of the centred kernel matrix when the whole spectrum was computed
        (``n_components=None``, dense solver); otherwise the number of computed
        eigenvalues above ``rank_tol`` :math:`\times\, \lambda_{\max}`, a lower bound.
    X_fit_ : ndarray (n_samples, n_features) or None
        Training data (None for a precomputed kernel).
    kernel_ : kpm.kernels.Kernel
        The kernel used.
    kernel_col_means_ : ndarray (n_samples,)
        :math:`K \mathbf 1 / n` (zeros when not centred); the Nyström variant stores the landmark
        quantities in ``nystroem_*`` attributes instead and sets this to None.
    kernel_mean_ : float
        :math:`\mathbf 1^\top K \mathbf 1 / n^2` (0 when not centred).
    ritz_residuals_ : ndarray (n_components_,) or None
        ``eigen_solver='matrix-free'``: the certificate,
        :math:`\|\tilde K u_j - \lambda_j u_j\| / \lambda_1` computed in float64 for each returned pair (None for other solvers).
    eigen_solver_info_ : dict or None
        ``eigen_solver='matrix-free'``: products of each precision (``n_fast``,
        ``n_exact``), block size, residual history, and seconds spent (``start_s``,
        ``rr_s``, the operator's ``timings``); see
        :func:`kpm.spectral.operator.matrix_free_basis`. None for other solvers.
    landmark_indices_ : ndarray of int or None
        Indices of the Nyström landmarks in the training data.
    nystroem_offset_ : ndarray (n_components_,) or None
        Nyström variant: :math:`y(x)` = ``dual_coef_.T @`` :math:`\kappa_Z(x)` ``-
        nystroem_offset_``.
    n_features_in_ : int
        Number of input features (n_samples for a precomputed kernel).

    See Also
    --------
    KernelPCAL1 : PCA-L1 on these coordinates (robust to outliers).
    KernelProjectionMachine : A classifier on the leading kernel PCA coordinates.
    sklearn.decomposition.KernelPCA : The same leading directions, without the
        full-rank explicit coordinates.

    Notes
    -----
    Kwak's Lemma 5 is stated for the full-rank map; with ``n_components < r`` the
    residual coordinate is the distance to the D-dimensional subspace (it is then
    non-zero for training points too).

    References
    ----------
    N. Kwak, "Nonlinear projection trick in kernel methods: an alternative to the kernel
    trick", IEEE TNNLS 24(12), 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from kpm import KernelProjection, pairwise_kernel
    >>> X, _ = make_moons(200, noise=0.2, random_state=0)
    >>> Y = KernelProjection(sigma=0.5).fit_transform(X)  # every direction of nonzero variance
    >>> Y.shape
    (200, 125)
    >>> K = pairwise_kernel(X, kernel="rbf", sigma=0.5)
    >>> H = np.eye(200) - 1 / 200                         # centring in feature space
    >>> bool(np.allclose(Y @ Y.T, H @ K @ H, atol=1e-8))  # coordinates reproduce the kernel
    True
    >>> KernelProjection(10, sigma=0.5).fit(X).transform(X[:3]).shape
    (3, 10)
    >>> kp = KernelProjection(0.9, sigma=0.5).fit(X)      # 90% of the variance
    >>> kp.n_components_, round(float(kp.explained_variance_ratio_.sum()), 3)
    (11, 0.902)
    >>> Z = kp.inverse_transform(kp.transform(X[:3]))     # pre-images: back to input space
    >>> Z.shape
    (3, 2)
    """

    def __init__(
        self,
        n_components=None,
        *,
        kernel="rbf",
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        centered=True,
        rank_tol=RANK_RTOL,
        residual=False,
        whiten=False,
        eigen_solver="auto",
        n_landmarks=None,
        landmarks="uniform",
        random_state=None,
        eigen_tol=None,
        preimage="auto",
        preimage_alpha="auto",
        preimage_max_iter=500,
        preimage_tol=1e-6,
        preimage_neighbors=10,
        preimage_restart="nearest",
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.centered = centered
        self.rank_tol = rank_tol
        self.residual = residual
        self.whiten = whiten
        self.eigen_solver = eigen_solver
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.random_state = random_state
        self.eigen_tol = eigen_tol
        self.preimage = preimage
        self.preimage_alpha = preimage_alpha
        self.preimage_max_iter = preimage_max_iter
        self.preimage_tol = preimage_tol
        self.preimage_neighbors = preimage_neighbors
        self.preimage_restart = preimage_restart

    _parameter_constraints = {
        "n_components": [Integer(1), Real(0, 1, "neither"), Options("rde"), None],
        "centered": [Boolean()],
        "rank_tol": [Real(0, 1, "left")],
        "residual": [Boolean()],
        "whiten": [Boolean()],
        "eigen_solver": [Options(*PROJECTION_SOLVERS)],
        "n_landmarks": [Integer(1), None],
        "landmarks": [Options(*LANDMARK_RULES)],
        "random_state": [RandomState()],
        "eigen_tol": [Real(0, 1, "neither"), None],
        "preimage": [Options("auto", *PREIMAGE_METHODS)],
        "preimage_alpha": [Real(0, None), Options("auto")],
        "preimage_max_iter": [Integer(1)],
        "preimage_tol": [Real(0, None, "neither")],
        "preimage_neighbors": [Integer(1)],
        "preimage_restart": [Options("nearest", "best")],
    }

    # ------------------------------------------------------------------ checks
    def _check_params(self, n):
        """The declared constraints, then the rules between parameters and with n."""
        params = validate_params(self)
        nc = params["n_components"]
        if isinstance(nc, int) and nc > n:
            raise ValueError(
                f"n_components={nc} is larger than the number of training samples {n} "
                "(and hence than the rank of the kernel matrix)"
            )
        if self.n_landmarks is not None and self.eigen_solver not in ("auto", "nystroem"):
            raise ValueError(
                f"n_landmarks is used by the Nyström variant only; it cannot be combined "
                f"with eigen_solver={self.eigen_solver!r}"
            )
        if self.eigen_tol is not None and self.eigen_solver in ("dense", "nystroem"):
            raise ValueError(
                f"eigen_tol is the tolerance of the iterative solvers ('arpack', 'randomized', "
                f"'matrix-free', or 'auto' choosing one); eigen_solver={self.eigen_solver!r} has none"
            )
        nystroem = self.eigen_solver == "nystroem" or (
            self.eigen_solver == "auto" and self.n_landmarks is not None
        )
        if self.landmarks != "uniform" and not nystroem:
            raise ValueError(
                f"landmarks={self.landmarks!r} is used by the Nyström variant only: give "
                "n_landmarks or eigen_solver='nystroem'"
            )
        return params

    # -------------------------------------------------------------------- fit
    def fit(self, X, y=None):
        """Eigendecompose the (centred) kernel matrix of X.

        Parameters
        ----------
        X : array-like (n_samples, n_features), or (n_samples, n_samples) if precomputed
        y : array-like (n_samples,), optional
            Labels or real targets: used only by ``n_components='rde'`` (the relevant
            dimension); ignored otherwise. A float array is a real target, any other (strings,
            integers, booleans) class labels, as :meth:`kpm.RelevantDimension.fit` reads them.

        Returns
        -------
        self
        """
        self._fit(X, y)
        return self

    def fit_transform(self, X, y=None):
        r"""Fit and return the training coordinates :math:`Y^\top = U \Lambda^{1/2}`.

        Parameters
        ----------
        X : array-like (n_samples, n_features), or (n_samples, n_samples) if precomputed
        y : array-like (n_samples,), optional
            Used only by ``n_components='rde'``.

        Returns
        -------
        Y : ndarray (n_samples, n_components_ [+ 1 with ``residual``])
        """
        return fit_coordinates(self, X, y)

    def _fit(self, X, y=None, where="KernelProjection"):
        """Fit on X (labels y for ``n_components='rde'``), naming ``where`` in warnings;
        returns the training coordinates (n, n_components_) and the diagonal of the
        decomposed kernel matrix (for the residual)."""
        X = validate_kernel_input(self, X, reset=True, min_samples=2)
        n = X.shape[0]
        nc = self._check_params(n)["n_components"]
        self.kernel_ = self._make_kernel(X)
        precomputed = self.kernel_.is_precomputed
        what = user_matrix_name(self.kernel_)
        if precomputed:
            if self.residual:
                raise ValueError(
                    "residual=True needs k(x, x) of new points, which a precomputed kernel does "
                    "not provide"
                )
            X = check_kernel_matrix(X, f"the {what}", psd=False)
        self.preimage_ = resolve_preimage(self.kernel_, self.preimage)
        rde = nc == "rde"
        if rde:
            nc = relevant_dimension(self.kernel_, X, y, self.random_state)
        solver = choose_solver(self.eigen_solver, self.n_landmarks, nc, n, self.kernel_)
        self.eigen_solver_ = solver
        self.X_fit_ = None if precomputed else X
        fitter = SpectralFitter(self.kernel_, nc, rde=rde, centered=self.centered, rank_tol=self.rank_tol,
                                eigen_tol=self.eigen_tol, random_state=self.random_state,
                                n_landmarks=self.n_landmarks, landmarks=self.landmarks, residual=self.residual)
        if solver == "nystroem":
            result = fitter.nystroem(X, what, where)
        elif solver == "matrix-free":
            result = fitter.matrix_free(X, where)
        else:
            result = fitter.dense(X, solver, what, where)
        self._set_spectrum(result)
        self.preimage_map_ = self.preimage_alpha_ = self.preimage_loo_error_ = None
        self.__dict__.pop("_reconstruction_checks", None)  # inverse_transform's held-out check
        if self.preimage_ == "learned":
            self.preimage_map_ = fit_learned_map(result.coordinates, X, self.kernel_, self.preimage_alpha,
                                                 self.landmark_indices_)
            self.preimage_alpha_ = self.preimage_map_.alpha
            self.preimage_loo_error_ = self.preimage_map_.loo_error
        return result.coordinates, result.diag_c

    def _set_spectrum(self, result):
        """The fitted attributes of the eigendecomposition, from a :class:`SpectralFit`."""
        basis = self._basis_ = result.basis
        self.eigenvalues_ = basis.eigenvalues
        self.eigenvectors_ = basis.eigenvectors
        self.dual_coef_ = result.dual_coef
        self.n_components_ = result.n_components
        self.rank_ = result.rank
        self.kernel_col_means_ = result.col_means
        self.kernel_mean_ = result.mean
        self.ritz_residuals_ = result.ritz_residuals
        self.eigen_solver_info_ = result.solver_info
        self.landmark_indices_ = result.landmark_indices
        self.nystroem_offset_ = result.nystroem_offset
        self.explained_variance_ratio_ = self.eigenvalues_ / basis.trace

    # -------------------------------------------------------------- transform
    def _finish(self, Yt, diag_c):
        """Residual column and whitening of the coordinates ``Yt`` (n, D)."""
        out = Yt
        if self.whiten:
            out = Yt / np.sqrt(self.eigenvalues_)
        if self.residual:
            res = np.sqrt(np.maximum(diag_c - np.einsum("ij,ij->i", Yt, Yt), 0.0))
            out = np.column_stack([out, res])
        return out

    @property
    def _n_features_out(self):
        """Output columns (``get_feature_names_out``: kernelprojection0, ...)."""
        return self.n_components_ + int(bool(self.residual))

    def transform(self, X):
        r"""Coordinates :math:`y(x) = \Lambda^{-1/2} U^\top \tilde k(x)` of new points.

        Parameters
        ----------
        X : array-like (n_test, n_features), or (n_test, n_samples) kernel values against
            the training points if the kernel is precomputed.

        Returns
        -------
        Y : ndarray (n_test, n_components_ [+ 1 with ``residual``])
        """
        check_is_fitted(self, "eigenvalues_")
        X = validate_kernel_input(self, X, reset=False)
        if self.landmark_indices_ is not None:
            Kz = landmark_kernel(self.kernel_, X, self.X_fit_, self.landmark_indices_)
            Yt = Kz @ self.dual_coef_ - self.nystroem_offset_
            diag_c = None
            if self.residual:
                ny = self._basis_.nystroem
                M, fbar = ny.landmark_map, ny.feature_mean
                Fx = Kz @ M
                dk = self.kernel_.diag(X)
                f_sq = np.einsum("ij,ij->i", Fx, Fx)
                f_fbar = Kz @ (M @ fbar)  # for ||f(x) - fbar||^2
                diag_c = np.maximum(dk - f_sq, 0.0) + f_sq - 2.0 * f_fbar + float(fbar @ fbar)
            return self._finish(Yt, diag_c)

        basis = self._basis_
        k = self.n_components_
        Yt = np.empty((X.shape[0], k))
        row_means = np.empty(X.shape[0]) if self.residual else None
        blocks = (
            [(slice(0, X.shape[0]), X)]
            if self.kernel_.is_precomputed
            else self.kernel_.blocks(X, self.X_fit_)
        )
        for rows, Kb in blocks:
            Yt[rows] = basis.features(Kb, k)
            if self.residual:
                row_means[rows] = Kb.mean(axis=1)
        diag_c = None
        if self.residual:
            dk = self.kernel_.diag(X)
            diag_c = dk - 2.0 * row_means + self.kernel_mean_ if self.centered else dk
        return self._finish(Yt, diag_c)

    # ------------------------------------------------------ inverse transform
    def _preimager(self):
        return Preimager(self, self._basis_, self._n_features_out)

    def expansion(self, Y):
        r"""The feature-space points with coordinates Y, as expansions on the training points.

        :math:`P_j = \bar\phi + \sum_k Y_{jk} V^k = \sum_i c_{ji}\, \phi(p_i)` (:math:`c` =
        ``coefs``, :math:`p` = ``points``), the
        points being the training inputs (the landmarks, on the Nyström variant): the
        targets of the pre-image solvers of :mod:`kpm.preimage`, for calling them
        with settings of one's own.

        Parameters
        ----------
        Y : array-like (n_samples, n_components_ [+ 1 with ``residual``])
            Coordinates of :meth:`transform`'s form.

        Returns
        -------
        coefs : ndarray (n_samples, n_points)
        points : ndarray (n_points, n_features)
        sq_norms : ndarray (n_samples,)
            :math:`\|P_j\|^2 = c_j^\top K c_j`.
        """
        check_is_fitted(self, "eigenvalues_")
        if self.X_fit_ is None:
            raise ValueError(
                "the expansion points are the training inputs, which a precomputed kernel does not have"
            )
        preimager = self._preimager()
        coefs, sq, _ = preimager.expansion(preimager.coordinates(Y))
        return coefs, preimager.points(), sq

    def inverse_transform(self, Y, *, init=None, return_info=False):
        r"""Approximate pre-images: input points whose images are closest to the feature-space
        points with coordinates Y.

        The coordinates (of :meth:`transform`'s form; whitened and residual columns are
        understood) define :math:`P = \bar\phi + \sum_k y_k V^k`, an expansion on the
        training points (the landmarks, on the Nyström variant); the pre-image :math:`z`
        minimises :math:`\|\phi(z) - P\|^2` by the method ``preimage_`` (see ``preimage``), or is the learned
        map's image of Y. Targets are solved in blocks within ``kpm.get_config()['block_bytes']``.

        Parameters
        ----------
        Y : array-like (n_samples, n_components_ [+ 1 with ``residual``])
            Coordinates, e.g. ``transform(X)`` with some columns changed or zeroed (zeroing
            the trailing ones projects onto fewer components).
        init : array-like (n_samples, n_features), optional
            Starting points of the iterative pre-images (``'fixed-point'``, ``'gradient'``),
            e.g. the noisy inputs when denoising; default: the MDS pre-images (Kwok & Tsang
            2004). Not used by ``'mds'`` and ``'learned'`` (an error if given).
        return_info : bool, default=False
            Also return the per-point diagnostics.

        Returns
        -------
        Z : ndarray (n_samples, n_features)
        info : kpm.preimage.PreimageInfo
            Only with ``return_info=True``: iterations, convergence and the objective
            :math:`\|\phi(z) - P\|^2` of each pre-image.

        Warns
        -----
        UserWarning
            With ``n_components=None`` (a projection on every component, whose pre-images
            should reconstruct the points), when they do not on held-out training points:
            Stein's estimate of their error against the clean points exceeds the points' own
            (:func:`kpm.decomposition.preimaging.reconstruction_warning`; computed once per fit
            and kind of start). The warning names the better choice, the inputs themselves.
            Also, with ``n_components=None``, when some pre-images are far from their targets
            in feature space (``info.objective`` at least
            :data:`kpm.decomposition.preimaging.FAILED_PREIMAGE_RESIDUAL` times
            :math:`k(z, z)`): the coordinates of points outside the region of the training
            data, which such a projection does not reconstruct.
        """
        check_is_fitted(self, "eigenvalues_")
        return_info = check_bool(return_info, "return_info")
        preimager = self._preimager()
        preimager.check_available()
        Y = preimager.coordinates(Y)
        init = preimager.check_init(init, Y.shape[0], self.n_features_in_)
        check = checks_reconstruction(self)
        heldout_bar = warn_reconstruction(self, init is not None) if check else None
        Z, info = preimager.solve(Y, init, return_info or check)
        if check:
            warn_failed_preimages(self, Z, info.objective, heldout_bar)
        return (Z, info) if return_info else Z

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


def fit_coordinates(projection, X, y=None, *, owner="KernelProjection"):
    """Fit ``projection`` on X and return the training coordinates, naming ``owner`` in warnings.

    :meth:`KernelProjection.fit_transform` for an estimator that maps its data with a
    :class:`KernelProjection` (e.g. :class:`kpm.decomposition.pca_l1.KernelPCAL1`), whose warnings
    about a degenerate kernel then name that estimator.

    Parameters
    ----------
    projection : KernelProjection
        An unfitted (or to be refitted) projection; it is fitted in place.
    X : array-like (n_samples, n_features), or (n_samples, n_samples) if precomputed
    y : array-like (n_samples,), optional
        Labels, for ``n_components='rde'``.
    owner : str, default='KernelProjection'
        The model named in warnings.

    Returns
    -------
    Y : ndarray (n_samples, n_components_ [+ 1 with ``residual``])
    """
    check_param(projection, "projection", [InstanceOf(KernelProjection, "a KernelProjection")])
    check_param(owner, "owner", [InstanceOf(str, "a str")])
    Yt, diag_c = projection._fit(X, y, owner)
    return projection._finish(Yt, diag_c)
