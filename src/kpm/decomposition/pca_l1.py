"""PCA-L1 (Kwak 2008) and kernel PCA-L1 (Kwak 2013, Section IV-D).

PCA-L1 looks for the unit vector w maximising the L1 dispersion ``sum_i |w^T x_i|``
by *polarity flipping* (Algorithm 2 of Kwak 2013):

1. start from a unit vector ``w(0)``;
2. polarities ``p_i = sign(w^T x_i)`` (``+1`` for a zero projection);
3. ``w <- sum_i p_i x_i / ||sum_i p_i x_i||``;
4. if the polarities changed, go to 2; else if some ``w^T x_i = 0``, perturb
   ``w <- (w + dw)/||w + dw||`` with a small random ``dw`` and go to 2; else stop.

Each flip cannot decrease the dispersion (``sum |w_new^T x_i| >= p^T X w_new =
||X^T p|| >= p^T X w``), so the iteration stops at a local maximum after finitely many
steps. Several components are found greedily with the deflation
``x_i <- x_i - w (w^T x_i)``.

Beyond the paper (switch it off with ``flip_check=False``): at a fixed point the
algorithm also tries every *single-sample polarity flip*; flipping ``p_i`` improves the
objective iff ``||x_i||^2 > ||X^T p|| |w^T x_i|``, and the best such flip is applied
before iterating again. The returned w is then a local maximum in both senses (no small
rotation of w and no single sign flip increases the L1 dispersion).

Kernel PCA-L1 applies PCA-L1 to the explicit coordinates of
:class:`kpm.decomposition.projection.KernelProjection` (which the kernel trick cannot do, since the
objective is not a function of inner products).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from kpm.base import KernelParamsMixin, validate_kernel_input
from kpm.decomposition.projection import KernelProjection, fit_coordinates
from kpm.spectral.basis import RANK_RTOL
from kpm.validation import (
    Boolean,
    Integer,
    Options,
    RandomState,
    Real,
    check_bool,
    check_estimator_data,
    check_int,
    check_option,
    check_random_state,
    check_samples,
    validate_params,
)

__all__ = ["PCAL1", "KernelPCAL1", "pca_l1_component", "l1_dispersion"]

_INITS = ("max_norm", "pca", "random")


def l1_dispersion(X, w):
    r"""The L1 dispersion :math:`\sum_i |w^\top x_i|` of the rows of X along w.

    Parameters
    ----------
    X : array-like (n_samples, n_features)
    w : array-like (n_features,)
    """
    X = check_samples(X)
    w = _check_direction(w, X.shape[1], "w")
    with np.errstate(over="ignore"):
        value = float(np.abs(X @ w).sum())
    if not np.isfinite(value):
        raise ValueError("the L1 dispersion overflows float64: rescale X")
    return value


def _check_direction(w, n_features, name):
    """A finite non-zero vector of length ``n_features`` (float64)."""
    w = np.asarray(w)
    if w.dtype.kind not in "biuf" or w.ndim != 1 or len(w) != n_features:
        raise ValueError(
            f"{name} must be a real vector of length {n_features} (one entry per feature), got "
            f"{'shape ' + str(w.shape) if w.dtype.kind in 'biuf' else 'dtype ' + str(w.dtype)}"
        )
    w = w.astype(np.float64)
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return w


def _binary_exponent(X):
    """e with ``max|X| = m 2^e``, ``m`` in [0.5, 1): ``ldexp(X, -e)`` rescales X exactly."""
    top = float(np.max(np.abs(X))) if X.size else 0.0
    return int(np.frexp(top)[1]) if top > 0 else 0


def _scaled_back(values, e, what):
    with np.errstate(over="ignore"):
        out = np.ldexp(values, e)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"the {what} overflows float64: rescale X")
    return out


def _initial_w(X, init, rs):
    if init == "max_norm":
        w = X[np.argmax(np.einsum("ij,ij->i", X, X))].copy()
    elif init == "pca":
        w = np.linalg.svd(X, full_matrices=False)[2][0].copy()
    else:
        w = rs.standard_normal(X.shape[1])
    nw = np.linalg.norm(w)
    if nw == 0:
        w = rs.standard_normal(X.shape[1])
        nw = np.linalg.norm(w)
    return w / nw


def pca_l1_component(X, *, init="max_norm", max_iter=1000, flip_check=True, random_state=None):
    """One PCA-L1 direction of the rows of X (no centring, no deflation).

    Parameters
    ----------
    X : ndarray (n_samples, n_features)
    init : {'max_norm', 'pca', 'random'} or ndarray (n_features,), default='max_norm'
        Starting vector: the sample of largest norm (Kwak 2008), the leading L2 principal
        direction, a Gaussian vector, or a given vector.
    max_iter : int, default=1000
        Cap on the polarity updates.
    flip_check : bool, default=True
        Also escape fixed points that a single-sample polarity flip improves (see the
        module docstring).
    random_state : int, RandomState or None
        Seeds the perturbation step (and ``init='random'``).

    Returns
    -------
    w : ndarray (n_features,)
        Unit vector.
    history : ndarray
        L1 dispersion of the current solution after each iteration (non-decreasing;
        ``history[0]`` is that of the starting vector).
    n_iter : int
        Number of polarity updates.
    converged : bool
    """
    rs = check_random_state(random_state)
    X = check_samples(X)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    flip_check = check_bool(flip_check, "flip_check")
    if isinstance(init, str):
        init = check_option(init, "init", _INITS)
    else:
        init = _check_direction(init, X.shape[1], "init")
        init = init / max(np.max(np.abs(init)), np.finfo(float).tiny)
        if not np.linalg.norm(init) > 0:
            raise ValueError("init must be a non-zero vector")
    # the iteration is scale-invariant: run it on X scaled exactly by a power of 2 into
    # [-1, 1], so that no magnitude representable in float64 over- or underflows
    e = _binary_exponent(X)
    w, history, n_iter, converged = _polarity_iteration(
        np.ldexp(X, -e), init, max_iter, flip_check, rs
    )
    return w, _scaled_back(history, e, "L1 dispersion"), n_iter, converged


def _polarity_iteration(X, init, max_iter, flip_check, rs):
    """:func:`pca_l1_component` on validated input (rows of X of moderate magnitude)."""
    if isinstance(init, str):
        w = _initial_w(X, init, rs)
    else:
        w = init / np.linalg.norm(init)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    scale = float(norms.max()) if norms.size else 0.0
    live = norms > 1e-12 * scale  # samples at the origin never matter
    proj = X @ w
    disp = float(np.abs(proj).sum())
    history = [disp]
    n_iter = 0
    n_perturb = 0
    converged = False
    while n_iter < max_iter:
        p = np.where(proj < 0, -1.0, 1.0)
        v = X.T @ p
        nv = float(np.linalg.norm(v))
        if nv == 0.0:  # all samples at the origin, or cancelling polarities
            converged = True
            break
        w_new = v / nv
        proj_new = X @ w_new
        disp_new = float(np.abs(proj_new).sum())
        n_iter += 1
        p_new = np.where(proj_new < 0, -1.0, 1.0)
        if disp_new >= disp:
            w, proj, disp = w_new, proj_new, disp_new
        history.append(disp)
        if not np.array_equal(p_new, p):
            continue  # Step 4a: polarities changed
        # A fixed point of the polarity iteration.
        zero = live & (np.abs(proj) <= 1e-10 * norms)
        if np.any(zero) and n_perturb < 20:
            # Step 4b: move off the zero projections with a small random perturbation.
            n_perturb += 1
            for _ in range(10):
                dw = rs.standard_normal(w.shape) * 1e-6
                w_try = (w + dw) / np.linalg.norm(w + dw)
                proj_try = X @ w_try
                disp_try = float(np.abs(proj_try).sum())
                if disp_try >= disp:
                    w, proj, disp = w_try, proj_try, disp_try
                    break
            else:
                zero = np.zeros_like(zero)
            if np.any(zero):
                history[-1] = disp
                continue
        if flip_check:
            # Single-sample polarity flips: gain 4 (||x_i||^2 - ||X^T p|| |x_i^T w|).
            s = float(np.linalg.norm(X.T @ p))
            gain = norms**2 - s * np.abs(proj)
            i = int(np.argmax(gain))
            if gain[i] > 1e-12 * s * scale:
                p[i] = -p[i]
                v = X.T @ p
                w_try = v / np.linalg.norm(v)
                proj_try = X @ w_try
                disp_try = float(np.abs(proj_try).sum())
                if disp_try > disp:
                    w, proj, disp = w_try, proj_try, disp_try
                    history[-1] = disp
                    continue
        converged = True
        break
    return w, np.asarray(history), n_iter, converged


#: the constraints of the PCA-L1 iteration's parameters, shared by PCAL1 and KernelPCAL1
_PCA_L1_CONSTRAINTS = {
    "n_components": [Integer(1), None],
    "init": [Options(*_INITS)],
    "max_iter": [Integer(1)],
    "flip_check": [Boolean()],
    "random_state": [RandomState()],
}


def _check_rank_bound(n_components, n_samples, n_features, what="min(n_samples, n_features)"):
    """``n_components`` (validated) against the bound ``min(n_samples, n_features)`` of the rank."""
    if n_components is not None and n_components > min(n_samples, n_features):
        raise ValueError(
            f"n_components={n_components} is larger than {what} = {min(n_samples, n_features)}, "
            "an upper bound of the rank of the data"
        )


def _fit_pca_l1(est, Xc, n_components, rs):
    """Greedy deflation: fills components_, dispersion_history_, n_iter_ of est."""
    e = _binary_exponent(Xc)
    Xd = np.ldexp(Xc, -e)  # exact rescaling: see pca_l1_component
    base = float(np.linalg.norm(Xd))
    comps, hists, iters = [], [], []
    for j in range(n_components):
        if not np.linalg.norm(Xd) > 1e-10 * max(base, np.finfo(float).tiny):
            if est.n_components is None:
                break
            raise ValueError(
                f"n_components={est.n_components} is larger than the rank {j} of the "
                f"{'centred ' if getattr(est, 'centered', True) else ''}data"
            )
        w, hist, n_it, conv = pca_l1_component(
            Xd, init=est.init, max_iter=est.max_iter, flip_check=est.flip_check, random_state=rs
        )
        if not conv:
            warnings.warn(
                f"PCA-L1 component {j} did not converge in max_iter={est.max_iter} iterations",
                ConvergenceWarning,
            )
        comps.append(w)
        hists.append(_scaled_back(hist, e, "L1 dispersion"))
        iters.append(n_it)
        Xd -= np.outer(Xd @ w, w)
    if not comps:
        raise ValueError("the data have rank 0 (all samples identical): no PCA-L1 component")
    est.components_ = np.asarray(comps)
    est.dispersion_history_ = hists
    est.n_iter_per_component_ = np.asarray(iters)
    est.n_iter_ = int(max(iters))
    est.n_components_ = len(comps)


class PCAL1(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Principal component analysis maximising the L1 dispersion (Kwak 2008).

    Each component is a unit vector w maximising the L1 dispersion
    :math:`\sum_i |w^\top (x_i - \bar x)|` of the centred data (``centered=True``), found by
    polarity flipping (Kwak 2008) started at the sample of largest norm
    (``init='max_norm'``), with single-sample polarity flips tried at each fixed point
    (``flip_check=True``, beyond the paper; see :mod:`kpm.decomposition.pca_l1`). By default
    (``n_components=None``) components are found greedily with deflation up to
    ``min(n_samples, n_features)``, stopping early at the rank of the data.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components, found greedily with deflation. ``None``: up to
        ``min(n_samples, n_features)``, stopping early at the rank of the data.
    centered : bool, default=True
        Subtract the mean before fitting (and in :meth:`transform`).
    init : {'max_norm', 'pca', 'random'}, default='max_norm'
        Starting vector of each component: the (deflated) sample of largest norm, as
        suggested by Kwak (2008), the L2 principal direction, or a random direction.
    max_iter : int, default=1000
        Cap on the polarity updates per component.
    flip_check : bool, default=True
        Escape fixed points that a single-sample polarity flip improves (an addition to
        Kwak's algorithm; ``False`` gives the paper's algorithm exactly).
    random_state : int, RandomState or None, default=None
        Seeds the zero-projection perturbations (and ``init='random'``).

    Attributes
    ----------
    components_ : ndarray (n_components_, n_features)
        Orthonormal PCA-L1 directions, in order.
    mean_ : ndarray (n_features,)
        Training mean (zeros if ``centered=False``).
    dispersion_history_ : list of ndarray
        Per component, the L1 dispersion (of the deflated data) after each iteration;
        non-decreasing.
    n_iter_ : int
        Largest number of polarity updates over the components.
    n_iter_per_component_ : ndarray of int
        Polarity updates per component.
    n_components_ : int
    n_features_in_ : int

    See Also
    --------
    KernelPCAL1 : PCA-L1 in a kernel feature space.
    sklearn.decomposition.PCA : Principal components of maximal variance (L2).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import PCA
    >>> from kpm import PCAL1
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 2)) * [3.0, 1.0]  # the first axis varies most
    >>> X[:3] = [0.0, 20.0]                             # three outliers on the second axis
    >>> print(np.abs(PCAL1(n_components=1).fit(X).components_).round(2))
    [[0.94 0.33]]
    >>> print(np.abs(PCA(n_components=1).fit(X).components_).round(2))  # turned to the outliers
    [[0.13 0.99]]
    """

    _parameter_constraints = {**_PCA_L1_CONSTRAINTS, "centered": [Boolean()]}

    def __init__(
        self,
        n_components=None,
        *,
        centered=True,
        init="max_norm",
        max_iter=1000,
        flip_check=True,
        random_state=None,
    ):
        self.n_components = n_components
        self.centered = centered
        self.init = init
        self.max_iter = max_iter
        self.flip_check = flip_check
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the PCA-L1 directions.

        Parameters
        ----------
        X : array-like (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        X = check_estimator_data(self, X, min_samples=2)
        n, d = X.shape
        nc = params["n_components"]
        _check_rank_bound(nc, n, d)
        self.mean_ = X.mean(axis=0) if self.centered else np.zeros(d)
        k = nc if nc is not None else min(n, d)
        _fit_pca_l1(self, X - self.mean_, k, check_random_state(params["random_state"]))
        return self

    @property
    def _n_features_out(self):
        """Output columns (``get_feature_names_out``: pcal10, pcal11, ...)."""
        return self.components_.shape[0]

    def transform(self, X):
        """Project onto the PCA-L1 directions: ``(X - mean_) @ components_.T``."""
        check_is_fitted(self, "components_")
        X = check_estimator_data(self, X, reset=False)
        return (X - self.mean_) @ self.components_.T

    def l1_dispersion(self, X):
        r"""L1 dispersion :math:`\sum_i |w_k^\top (x_i - \bar x)|` of X along each component."""
        return np.abs(self.transform(X)).sum(axis=0)


class KernelPCAL1(KernelParamsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                  BaseEstimator):
    r"""Kernel PCA-L1: PCA-L1 on the explicit kernel coordinates (Kwak 2013, IV-D).

    The data are mapped by :class:`kpm.decomposition.projection.KernelProjection` (by
    default the RBF kernel with ``gamma='scale'``, full numerical rank, centred in feature
    space), and :class:`PCAL1` runs on the coordinates ``Y`` (by default up to the rank,
    from the sample of largest norm); by Kwak's Lemma 1 and Theorem 2 this maximises
    :math:`\sum_i |w^\top \phi(x_i)|` over unit vectors w of the feature space.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of L1 components (``None``: up to the rank).
    kernel, sigma, gamma, degree, coef0, kernel_params
        Kernel, as in :class:`kpm.decomposition.projection.KernelProjection`.
    rank_tol : float in [0, 1), default=1e-10
        Relative eigenvalue tolerance of the projection (``KernelProjection``'s ``rank_tol``).
    eigen_solver : {'auto', 'dense', 'nystroem'}, default='auto'
        Solver of the projection (the full rank is needed, hence no partial solver).
    n_landmarks : int, optional
        Landmarks of the Nyström variant of the projection.
    init, max_iter, flip_check
        As in :class:`PCAL1`.
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    projection_ : KernelProjection
        The fitted feature map.
    components_ : ndarray (n_components_, rank)
        PCA-L1 directions in the coordinates of ``projection_``.
    dual_coef_ : ndarray (n_samples, n_components_)
        Expansion :math:`w_k = \sum_i a_{ik} (\phi(x_i) - \bar\phi)` (:math:`a` =
        ``dual_coef_``), so that the projection of x is :math:`a^\top \tilde k(x)` (exact
        variant only; None for Nyström).
    dispersion_history_, n_iter_, n_iter_per_component_, n_components_, n_features_in_
        As in :class:`PCAL1`.

    See Also
    --------
    PCAL1 : PCA-L1 of the input features.
    KernelProjection : The explicit coordinates PCA-L1 runs on.

    Examples
    --------
    >>> from sklearn.datasets import make_circles
    >>> from kpm import KernelPCAL1
    >>> X, _ = make_circles(200, noise=0.05, factor=0.3, random_state=0)
    >>> kpca = KernelPCAL1(n_components=2, sigma=0.5).fit(X)
    >>> kpca.transform(X[:4]).shape
    (4, 2)
    >>> kpca.get_feature_names_out()
    array(['kernelpcal10', 'kernelpcal11'], dtype=object)
    """

    _parameter_constraints = {
        **_PCA_L1_CONSTRAINTS,
        "rank_tol": [Real(0, 1, "left")],
        # the full-rank map: no partial eigensolver
        "eigen_solver": [Options("auto", "dense", "nystroem")],
        "n_landmarks": [Integer(1), None],
    }

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
        rank_tol=RANK_RTOL,
        eigen_solver="auto",
        n_landmarks=None,
        init="max_norm",
        max_iter=1000,
        flip_check=True,
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.rank_tol = rank_tol
        self.eigen_solver = eigen_solver
        self.n_landmarks = n_landmarks
        self.init = init
        self.max_iter = max_iter
        self.flip_check = flip_check
        self.random_state = random_state

    def fit(self, X, y=None):
        """Map X explicitly and fit PCA-L1 on the coordinates.

        Parameters
        ----------
        X : array-like (n_samples, n_features), or (n_samples, n_samples) if precomputed
        y : ignored

        Returns
        -------
        self
        """
        params = validate_params(self)
        X = validate_kernel_input(self, X, reset=True, min_samples=2)
        self.projection_ = KernelProjection(
            None,
            kernel=self.kernel,
            sigma=self.sigma,
            gamma=self.gamma,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
            rank_tol=self.rank_tol,
            eigen_solver=self.eigen_solver,
            n_landmarks=self.n_landmarks,
            random_state=self.random_state,
        )
        Y = fit_coordinates(self.projection_, X, owner="KernelPCAL1")
        n, r = Y.shape
        nc = params["n_components"]
        _check_rank_bound(nc, n, r, what="the rank of the centred kernel matrix")
        k = nc if nc is not None else r
        _fit_pca_l1(self, Y, k, check_random_state(params["random_state"]))
        if self.projection_.landmark_indices_ is None:
            self.dual_coef_ = self.projection_.dual_coef_ @ self.components_.T
        else:
            self.dual_coef_ = None
        return self

    @property
    def _n_features_out(self):
        """Output columns (``get_feature_names_out``: kernelpcal10, ...)."""
        return self.components_.shape[0]

    def transform(self, X):
        """Kernel PCA-L1 features ``components_ @ y(x)``."""
        check_is_fitted(self, "components_")
        X = validate_kernel_input(self, X, reset=False)
        return self.projection_.transform(X) @ self.components_.T
