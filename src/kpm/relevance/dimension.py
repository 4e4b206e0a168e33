"""Relevant dimensions of a supervised problem in kernel feature space.

Braun, Buhmann & Müller (K.-R. Müller, M. L. Braun and J. Buhmann, "Learning in
kernel feature spaces", talk slides). The contributions of the kernel PCA directions to the
outputs are ``s_i = u_i^T y`` for the eigenvectors ``u_i`` of the (uncentred)
kernel matrix ``K`` in order of decreasing eigenvalue. If the kernel fits the
problem, the label information sits in the leading few ``s_i`` and the rest is
noise. A two-component model

    s_i ~ N(0, sigma_1^2) for i <= d,     s_i ~ N(0, sigma_2^2) for i > d

is fitted by maximum likelihood over the cut-off d:

    -log l(d) ∝ (d/n) log sigma_1^2 + ((n-d)/n) log sigma_2^2,
    sigma_1^2 = (1/d) sum_{i<=d} s_i^2,  sigma_2^2 = (1/(n-d)) sum_{i>d} s_i^2,

and ``d_hat = argmin_d`` (ties: the smaller d), ``d = 1 .. n-1``.

Deviation from the slides: n is the number of directions with a nonzero eigenvalue
(the numerical rank of K, eigenvalues > 1e-10 λ_1: the rank cut of :mod:`kpm.spectral`),
not the number of samples. In the
null space of a singular K the eigenvector order is arbitrary, and duplicated inputs
with equal labels give contributions exactly 0 there, which would make the model
pick a spurious d just below n (:doc:`/user_guide/relevance` shows a case).
For a nonsingular K nothing changes. Among
candidate kernels, the one with the smallest ``-log l(d_hat)`` separates signal
from noise best (:func:`select_kernel`). The sum of all ``s_i^2`` is ``||y||^2``
for every kernel, so the criterion is comparable across kernels.

Non-numeric inputs (strings for the weighted-degree kernel)
-----------------------------------------------------------
``X`` is validated by :func:`kpm.validation.check_estimator_data` (finite float
arrays) unless the kernel object has a ``check_input(X)`` method, as
:class:`kpm.kernels.WeightedDegreeKernel` does: then that method
validates ``X`` (e.g. a 1-D array of equal-length strings) and the estimator
passes the validated array to the kernel unchanged. ``kernel='precomputed'``
also works (``X`` is then the kernel matrix). A precomputed matrix, and the matrix
of a callable kernel, must be symmetric and positive semi-definite
(:func:`kpm.validation.check_kernel_matrix`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from kpm.base import (
    KernelParamsMixin,
    accepts_raw_input,
    cross_gram,
    train_gram,
    validate_kernel_input,
    validate_kernel_input_y,
)
from kpm.kernels import Kernel, make_kernel
from kpm.spectral.basis import EIGEN_SOLVERS, RANK_RTOL, eigen_basis, numerical_rank
from kpm.validation import (
    Integer,
    Options,
    RandomState,
    check_int,
    check_option,
    check_real,
    check_samples,
    validate_params,
    warn_if_degenerate_kernel,
)

__all__ = [
    "RelevantDimension",
    "select_kernel",
    "KernelScore",
    "relevant_dimension_from_contributions",
]


# ---------------------------------------------------------------------------
# the relevant-dimension model (also used by kpm.relevance.pcr)
# ---------------------------------------------------------------------------
#: eigenvalues <= RANK_TOL * lambda_1 form the numerical null space of K (the package's
#: rank tolerance, :data:`kpm.spectral.RANK_RTOL`)
RANK_TOL = RANK_RTOL


def model_directions(w, s, total_all, n, null_space="exclude", *, rank=None):
    """The contributions the two-component model is fitted to.

    ``rank``: the numerical rank of K (default: :func:`kpm.spectral.numerical_rank` of
    ``w``; an :class:`kpm.spectral.EigenBasis` knows it). ``null_space='exclude'``
    (default): directions of the numerical null space of K (the eigenvalues cut by
    :mod:`kpm.spectral`) are left out: their order is arbitrary (degenerate zero
    eigenvalues) and, with duplicated inputs, their contributions are exactly 0 when the
    duplicates agree in y, which would otherwise reward a spurious ``d`` close to n.
    ``null_space='noise'``: all n directions are kept (as on the slides), but the null
    space always belongs to the noise component: the cut d is at most the rank.

    Returns ``(s_used, total, n_used, rank, max_cut)``; when only the leading eigenpairs were
    computed and all are above the tolerance, the tail is ``total_all`` minus the computed
    part over ``n`` directions.
    """
    check_option(null_space, "null_space", NULL_SPACE_OPTIONS)
    r = numerical_rank(w) if rank is None else int(rank)
    if null_space == "noise":
        return s, float(total_all), n, r, max(1, min(r, n - 1))
    if r < len(w) or len(w) == n:
        s_used = s[:r]
        s2 = s_used**2
        return s_used, float(s2.sum()), r, r, max(1, r - 1)
    return s, float(total_all), n, r, n - 1


#: values of the ``null_space`` parameter
NULL_SPACE_OPTIONS = ("exclude", "noise")


def cap_dim(max_components, max_cut):
    """The largest cut d of the model: ``max_cut``, or ``max_components`` (validated) below it."""
    return max_cut if max_components is None else min(max_components, max_cut)


def rank_error(rank, degeneracy, what):
    """The error for a kernel matrix of numerical rank 0 or 1 that ``what`` cannot use;
    ``degeneracy`` is the diagnosis of :func:`kpm.validation.kernel_degeneracy`."""
    if rank == 0:
        why = "it is zero"
    elif degeneracy is not None and degeneracy[0] == "constant":
        why = "it is constant: all training samples are identical in feature space"
    else:
        why = "the training samples span a single direction in feature space"
    return ValueError(f"the kernel matrix has numerical rank {rank} ({why}): {what}")


def relevant_dimension_from_contributions(s, *, total=None, n=None, max_components=None):
    """Fit the two-component model to contributions ``s_i`` (Braun, Buhmann & Müller).

    Parameters
    ----------
    s : array-like (m,) or (m, n_outputs)
        Contributions ``u_i^T y`` in order of decreasing eigenvalue. With several
        output columns, ``s_i^2`` is summed over the columns (a pooled fit).
    total : float, optional
        ``sum_i s_i^2`` over *all* n directions (``||y||^2``). Needed when only the
        leading m < n contributions are given; defaults to the sum of ``s^2``.
    n : int, optional
        The number of directions (samples). Defaults to ``m``.
    max_components : int, optional
        Largest d considered (default ``min(m, n - 1)``).

    Returns
    -------
    dim : int
        The minimiser ``d_hat`` (ties: smallest).
    nll : ndarray (D,)
        ``-log l(d)`` for ``d = 1 .. D`` (entry ``d - 1``).
    sigma1_sq, sigma2_sq : ndarray (D,)
        The two noise levels for every d.
    """
    s2 = _squared_contributions(s)
    m = len(s2)
    n = m if n is None else check_int(n, "n", minimum=2)
    if m < 1 or n < 2:
        raise ValueError(f"the two-component model needs at least 2 directions, got n={n}")
    if m > n:
        raise ValueError(f"got {m} contributions for n={n} directions")
    max_components = check_int(max_components, "max_components", minimum=1, allow_none=True)
    csum_all = float(s2.sum())
    if total is None:
        total = csum_all
    else:
        total = check_real(total, "total", low=0.0)
        if total < csum_all * (1 - 1e-8):
            raise ValueError(
                f"total={total!r} is below the sum of the squared contributions given "
                f"({csum_all!r}); total is the sum over all n directions"
            )
    D = min(m, n - 1) if max_components is None else min(max_components, m, n - 1)
    csum = np.cumsum(s2)[:D]
    d = np.arange(1, D + 1, dtype=float)
    head = csum
    tail = np.maximum(total - csum, 0.0)
    # floor the variances: a component with (numerically) zero variance would
    # give -inf; flooring at a tiny fraction of the mean keeps the argmin sane.
    floor = max(total / n, np.finfo(float).tiny) * 1e-12
    sigma1_sq = np.maximum(head / d, floor)
    sigma2_sq = np.maximum(tail / (n - d), floor)
    nll = (d / n) * np.log(sigma1_sq) + ((n - d) / n) * np.log(sigma2_sq)
    dim = int(np.argmin(nll)) + 1
    return dim, nll, sigma1_sq, sigma2_sq


def _squared_contributions(s):
    """``s_i^2`` (summed over the output columns of a 2-D ``s``), validated."""
    s = np.asarray(s)
    if s.dtype.kind not in "biuf":
        raise ValueError(f"the contributions s must be real numbers, got an array of dtype {s.dtype}")
    s = s.astype(np.float64)
    if s.ndim not in (1, 2):
        raise ValueError(f"s must be 1-D or 2-D, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("the contributions s contain NaN or infinite values")
    with np.errstate(over="ignore"):
        s2 = (s**2).sum(axis=1) if s.ndim == 2 else s**2
    if not np.all(np.isfinite(s2)):
        raise ValueError("the squared contributions s^2 overflow float64: rescale y")
    return s2


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------
class RelevantDimension(KernelParamsMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                        BaseEstimator):
    """Estimate the relevant dimension of (X, y) in the feature space of a kernel.

    Fits the two-component model of Braun, Buhmann & Müller to the contributions
    ``s_i = u_i^T y`` of the eigenvectors of the (uncentred) kernel matrix
    (see the module docstring).

    Parameters
    ----------
    kernel : str, callable or Kernel, default='rbf'
        Any kernel accepted by :func:`kpm.kernels.make_kernel`, ``'precomputed'``,
        or a :class:`~kpm.kernels.WeightedDegreeKernel` (string input).
    sigma, gamma : float, optional
        RBF width (exactly one; ``gamma='scale'`` default as in scikit-learn).
    degree, coef0 : float
        Polynomial / sigmoid parameters.
    kernel_params : dict, optional
        Extra kernel parameters.
    max_components : int, optional
        Largest dimension considered. ``None``: all ``d = 1 .. n-1`` (needs the full
        eigendecomposition). A smaller value uses a partial eigensolver; the tail
        variance is then computed from ``||y||^2`` minus the leading contributions
        over all n directions, which equals the full fit when K is nonsingular (the
        partial solve cannot see the null space of a singular K).
    null_space : {'exclude', 'noise'}, default='exclude'
        What to do with the numerical null space of a singular K (duplicated inputs, few
        distinct inputs): leave it out of the model ('exclude'), or keep its contributions
        in the noise component with the cut d limited to the rank ('noise', closer to the
        slides, which use all n directions). No effect when K is nonsingular.
    eigen_solver : {'auto', 'dense', 'arpack', 'randomized'}, default='auto'
        Eigensolver (the registry of :mod:`kpm.spectral`) when ``max_components`` is given;
        without it the whole spectrum is computed by LAPACK.
    random_state : int, RandomState or None
        Seeds the partial eigensolvers.

    Attributes
    ----------
    n_components_ : int
        The estimated relevant dimension ``d_hat``: the number of kernel PCA directions
        :meth:`transform` maps to.
    s_ : ndarray (m,)
        Contributions ``u_i^T y`` (m = n, or ``max_components + 1`` with a partial solve).
    neg_log_likelihood_ : ndarray (D,)
        ``-log l(d)`` for ``d = 1 .. D`` (index ``d - 1``).
    min_neg_log_likelihood_ : float
        ``-log l(d_hat)``, the kernel-selection criterion.
    sigma1_sq_, sigma2_sq_ : float
        The two noise levels at ``d_hat`` (signal part, noise part).
    eigenvalues_ : ndarray (m,)
        Eigenvalues of K, decreasing.
    rank_ : int
        Numerical rank of K (eigenvalues above the rank cut of :mod:`kpm.spectral`,
        ``1e-10 lambda_1``; a lower bound with a partial solve).
    n_directions_ : int
        Number of directions the two-component model is fitted to: ``rank_`` with
        ``null_space='exclude'`` (the slides use all n, which only differs when K is
        singular, e.g. with duplicated inputs), n with ``null_space='noise'``.
    eigenvectors_ : ndarray (n, m)
        The matching unit eigenvectors.
    kernel_ : Kernel
        The kernel used.
    X_fit_ : ndarray
        Training inputs (needed by :meth:`transform`).
    n_features_in_ : int
        Number of features (numeric input only).

    See Also
    --------
    select_kernel : Rank candidate kernels by the same likelihood.
    KernelPCRClassifier : Kernel PCR classification in the relevant dimension.
    KernelPCRRegressor : Kernel PCR regression in the relevant dimension.

    Examples
    --------
    >>> import numpy as np
    >>> from kpm import RelevantDimension
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (200, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(200)
    >>> rd = RelevantDimension(sigma=1.0).fit(X, y)
    >>> rd.n_components_              # kernel PCA directions that carry the label
    6
    >>> rd.transform(X[:3]).shape
    (3, 6)
    """

    _parameter_constraints = {
        "max_components": [Integer(1), None],
        "null_space": [Options(*NULL_SPACE_OPTIONS)],
        "eigen_solver": [Options(*EIGEN_SOLVERS)],
        "random_state": [RandomState()],
    }

    def __init__(
        self,
        kernel="rbf",
        *,
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        max_components=None,
        null_space="exclude",
        eigen_solver="auto",
        random_state=None,
    ):
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.max_components = max_components
        self.null_space = null_space
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    def fit(self, X, y):
        """Estimate the relevant dimension.

        Parameters
        ----------
        X : array-like (n_samples, n_features), kernel matrix, or strings
            Training inputs.
        y : array-like (n_samples,)
            Real targets or ±1 labels (numeric; NaN/inf raise ValueError).

        Returns
        -------
        self
        """
        return self._fit(X, y, where="RelevantDimension")

    def _fit(self, X, y, where):
        """:meth:`fit`; ``where`` names the model in warnings (see :func:`select_kernel`)."""
        params = validate_params(self)
        X, y = validate_kernel_input_y(self, X, y, y_numeric=True)
        n = len(y)
        if n < 3:
            raise ValueError(f"RelevantDimension needs at least 3 samples, got {n} sample(s)")
        max_components = params["max_components"]
        if max_components is not None and max_components > n - 1:
            raise ValueError(
                f"max_components={max_components} is larger than n - 1 = {n - 1} "
                f"(n = {n} training samples)"
            )
        K, kernel, name = train_gram(self, X)
        degeneracy = warn_if_degenerate_kernel(K, where, stacklevel=4)
        m = None if max_components is None else min(n, max_components + 1)
        basis = eigen_basis(K, m, solver="dense" if m is None else self.eigen_solver,
                            random_state=self.random_state, name=name)
        w, U = np.maximum(basis.eigenvalues, 0.0), basis.eigenvectors  # clipped: rounding noise
        s = U.T @ y
        s_used, total, n_used, rank, max_cut = model_directions(
            w, s, float(y @ y), n, self.null_space, rank=basis.rank
        )
        if n_used < 2 or rank < 1:
            raise rank_error(
                rank, degeneracy, "the two-component model needs at least 2 directions with nonzero eigenvalue"
            )
        dim, nll, s1, s2 = relevant_dimension_from_contributions(
            s_used, total=total, n=n_used, max_components=cap_dim(max_components, max_cut)
        )
        self.rank_ = rank
        self.n_directions_ = n_used
        self.kernel_ = kernel
        self.X_fit_ = X
        self.eigenvalues_ = w
        self.eigenvectors_ = U
        self.s_ = s
        self.neg_log_likelihood_ = nll
        self.n_components_ = dim
        self.min_neg_log_likelihood_ = float(nll[dim - 1])
        self.sigma1_sq_ = float(s1[dim - 1])
        self.sigma2_sq_ = float(s2[dim - 1])
        return self

    @property
    def _n_features_out(self):
        """Output columns (``get_feature_names_out``: relevantdimension0, ...)."""
        return self.n_components_

    def transform(self, X):
        """Coordinates of X on the first ``n_components_`` kernel PCA directions.

        ``kappa(x)^T u_i / sqrt(lambda_i)`` (the empirical kernel map of the
        uncentred K; training points map to the rows of ``U_d Lambda_d^{1/2}``).
        Directions with zero eigenvalue give zero coordinates.

        Parameters
        ----------
        X : array-like, kernel rows against the training set, or strings

        Returns
        -------
        Z : ndarray (n_samples, n_components_)
        """
        check_is_fitted(self)
        X = validate_kernel_input(self, X, reset=False)
        Kx = cross_gram(self.kernel_, X, self.X_fit_)
        w = self.eigenvalues_[: self.n_components_]
        live = np.arange(len(w)) < self.rank_  # directions above the rank cut
        scale = np.where(live, 1.0 / np.sqrt(np.where(live, w, 1.0)), 0.0)
        return (Kx @ self.eigenvectors_[:, : self.n_components_]) * scale

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


# ---------------------------------------------------------------------------
# kernel selection
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelScore:
    """One candidate kernel's score in :func:`select_kernel` (lower is better)."""

    rank: int
    index: int  # position in the candidate list
    candidate: Any
    kernel: Kernel
    n_components: int  # the candidate's relevant dimension d_hat
    neg_log_likelihood: float
    sigma1_sq: float
    sigma2_sq: float


def _candidate_kernel(candidate, X) -> Kernel:
    if isinstance(candidate, Kernel):
        return candidate
    if isinstance(candidate, dict):
        params = dict(candidate)
        name = params.pop("kernel", "rbf")
        return make_kernel(name, X=X, **params)
    if isinstance(candidate, str) or callable(candidate):
        return make_kernel(candidate, X=X)
    raise ValueError(
        "a kernel candidate must be a kpm Kernel, a callable, a kernel name, or a dict of "
        f"make_kernel parameters such as {{'kernel': 'rbf', 'sigma': 1.0}}; got {candidate!r}"
    )


def select_kernel(candidates, X, y, *, max_components=None):
    """Rank candidate kernels by the likelihood of the two-component model at d_hat.

    Braun, Buhmann & Müller: the best kernel is the one with the smallest ``-log l(d_hat)``:
    it separates the label information from the noise best. Usable as the width
    selection of any kernel method (e.g. the Kernel Projection Machine).

    Parameters
    ----------
    candidates : sequence
        Kernels: :class:`~kpm.kernels.Kernel` objects, callables (e.g. a
        :class:`~kpm.kernels.WeightedDegreeKernel`), kernel names, or dicts
        of :func:`~kpm.kernels.make_kernel` parameters, e.g.
        ``[{'kernel': 'rbf', 'sigma': s} for s in sigmas]``.
    X : array-like
        Training inputs (strings when every candidate validates its own input).
    y : array-like (n_samples,)
        Targets or ±1 labels.
    max_components : int, optional
        As in :class:`RelevantDimension`.

    Returns
    -------
    ranking : list of KernelScore
        Sorted best first (ties keep the candidate order); ``ranking[0].candidate``
        is the selected one.

    Raises
    ------
    ValueError
        Empty candidate list, an invalid candidate, or invalid X / y.

    See Also
    --------
    RelevantDimension : The relevant dimension of one kernel.
    KernelPCRClassifier : Classification with the selected kernel.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kpm import select_kernel
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> ranking = select_kernel([{"kernel": "rbf", "sigma": s} for s in (0.1, 0.3, 1.0, 3.0)], X, y)
    >>> [(r.candidate["sigma"], r.n_components) for r in ranking]  # best first, with its dimension
    [(0.3, 17), (0.1, 83), (1.0, 17), (3.0, 3)]
    """
    candidates = _candidate_list(candidates)
    scores = []
    for i, cand in enumerate(candidates):
        where = f"select_kernel, candidate {i} ({cand!r})"
        try:
            Xc = X if accepts_raw_input(cand) else _as_float(X)
            kern = _candidate_kernel(cand, Xc)
            est = RelevantDimension(kernel=kern, max_components=max_components)._fit(Xc, y, where)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from exc
        scores.append((est.min_neg_log_likelihood_, i, cand, est))
    order = sorted(range(len(scores)), key=lambda j: (scores[j][0], j))
    out = []
    for r, j in enumerate(order):
        nll, i, cand, est = scores[j]
        out.append(
            KernelScore(
                rank=r + 1,
                index=i,
                candidate=cand,
                kernel=est.kernel_,
                n_components=est.n_components_,
                neg_log_likelihood=float(nll),
                sigma1_sq=est.sigma1_sq_,
                sigma2_sq=est.sigma2_sq_,
            )
        )
    return out


def _candidate_list(candidates):
    if isinstance(candidates, (str, dict, Kernel)) or callable(candidates):
        return [candidates]
    try:
        candidates = list(candidates)
    except TypeError:
        raise ValueError(
            f"candidates must be a sequence of kernels (or one kernel), got {candidates!r}"
        ) from None
    if len(candidates) == 0:
        raise ValueError("select_kernel needs at least one candidate kernel; got an empty list")
    return candidates


def _as_float(X):
    """Numeric X for a numeric kernel candidate (:func:`kpm.validation.check_samples`)."""
    try:
        return check_samples(X)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"X must be numeric for this kernel candidate ({exc}; string input needs a kernel "
            "with a check_input method, e.g. kpm.WeightedDegreeKernel)"
        ) from exc
