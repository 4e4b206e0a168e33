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
For a nonsingular K nothing changes. Within a run of eigenvalues closer than
``sqrt(eps) λ_1`` the eigensolver's basis is arbitrary too, and each of its directions gets
the run's mean ``s_i^2`` (:func:`spread_over_ties`). Among
candidate kernels, the one with the smallest ``-log l(d_hat)`` separates signal
from noise best (:func:`select_kernel`). The sum of all ``s_i^2`` is ``||y||^2``
for every kernel, so the criterion is comparable across kernels.

The intercept (``fit_intercept=True``, the default; a second deviation)
--------------------------------------------------------------------------
The slides' model has no constant: the mean of y is spread over the contributions, and
for a kernel that cannot represent a constant function it leaks into every direction,
noise included (Steinwart, Hush & Scovel (2006): the Gaussian kernel's feature space holds
no nonzero constant). Adding 100 to a regression target raised ``d_hat`` from 13 to 31 on
a smooth two-dimensional problem; on the ringnorm benchmark (first 20 realizations, the
σ of the reproduction) the median ``d_hat`` was 32.5, with kernel PCR at 3.9 % test error,
and with the constant modelled it is 2, at 1.6 % (the SVM: 1.7 %). With an intercept the
model spaces are ``span{1, u_1, .., u_d}``, as in the kernel expansion
``sum_i alpha_i k(x_i, x) + alpha_0`` of Braun, Lange & Buhmann (2006), and the
two-component model is fitted to the contributions ``t_i`` of the orthonormal basis of
these nested spaces, the constant first (:class:`TargetContributions`). Then
``sum_i t_i^2 = ||y - mean(y)||^2`` for every kernel, and ``d_hat`` does not move when a
constant is added to y. ``fit_intercept=False`` is the slides' model.

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

import numbers
import reprlib
import warnings
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
from kpm.exceptions import ReferenceModelWarning
from kpm.kernels import Kernel, make_kernel
from kpm.spectral.basis import EIGEN_SOLVERS, RANK_RTOL, eigen_basis, numerical_rank
from kpm.validation import (
    DEGENERACY_TOL,
    Boolean,
    Integer,
    Options,
    RandomState,
    check_int,
    check_option,
    check_real,
    check_samples,
    clearly_higher_error,
    duplicate_groups,
    relevance_targets,
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


#: the constant vector counts as inside the span of leading directions when the squared norm of
#: its part outside the span (the vector normalised to 1) is at most this: far below the
#: accuracy a direction needs to be fitted (its contributions are divided by that norm), far
#: above the rounding of the tail sums it is computed from
INTERCEPT_ATOL = 1e-16
#: a direction completes the constant when it leaves at most this fraction of the constant's
#: squared norm outside the span (the squared diagonal of the Gram--Schmidt factor, which the
#: contributions are divided by): the rank tolerance
INTERCEPT_RTOL = RANK_RTOL


@dataclass(frozen=True)
class TargetContributions:
    """Contributions of targets ``Y`` to the eigenvectors ``u_i`` of a (weighted) kernel matrix.

    Built by :func:`target_contributions`. With an intercept, the nested model spaces are
    ``S_d = span{1, u_1, .., u_d}`` (least squares with an unpenalised constant, the offset
    ``alpha_0`` of Braun, Lange & Buhmann's kernel expansion). Writing ``e = 1/sqrt(N)``
    (unit constant), ``a_i = u_i^T e``, ``c_d^2 = 1 - sum_{i<=d} a_i^2`` (the squared norm
    of ``e`` outside ``span{u_1..u_d}``) and ``s_i = u_i^T (Y - mean)``, the projection of
    ``Y`` on ``S_d`` is ``mean + gamma_d e + sum_{i<=d} (s_i - gamma_d a_i) u_i`` with
    ``gamma_d = -(sum_{i<=d} a_i s_i) / c_d^2``, and the orthonormal basis of the nested
    spaces (Gram--Schmidt of ``u_1, u_2, ..`` against ``e``) has the contributions

        t_i = (c_{i-1}^2 s_i + a_i sum_{j<i} a_j s_j) / (c_{i-1} c_i).

    A direction with ``c_i^2 <= INTERCEPT_RTOL c_{i-1}^2`` or ``c_i^2 <= INTERCEPT_ATOL``
    completes the constant (``t_i = 0``, left out of the two-component model); beyond it
    ``t_i = s_i``. The ``c_d^2`` are tail sums ``sum_{i>d} a_i^2`` plus the constant's part
    outside every computed ``u_i`` (no cancellation).
    Without an intercept ``mean = 0``, ``a = 0`` and ``t = s = U^T Y`` (the slides' model).
    With sample weights ``w`` everything is computed for ``W^{1/2} K W^{1/2}`` and
    ``W^{1/2} Y``, which is the kernel PCA of the rows repeated ``w`` times.
    """

    mean: np.ndarray  # (c,)
    s: np.ndarray  # (m, c)
    a: np.ndarray  # (m,)
    outside: np.ndarray  # (m + 1,): c_d^2 for d = 0 .. m
    t: np.ndarray  # (m, c)
    keep: np.ndarray  # (m,) bool: directions that add to the model space
    total: float  # weighted sum of squares of Y - mean over all directions
    weight_sum: float  # N
    intercept: bool
    copies: int = 0  # directions that separate copies of a row with equal targets

    def _gamma(self, d):
        """``gamma_d`` for d = 1 .. len(d) (an array of d), shape (len(d), c)."""
        d = np.atleast_1d(d)
        num = np.cumsum(self.a[:, None] * self.s, axis=0)[d - 1]
        out = self.outside[d][:, None]
        live = out > INTERCEPT_ATOL
        return np.where(live, -num / np.where(live, out, 1.0), 0.0)

    def coefficients(self, d):
        """``(b, c)`` of the fit on the first d directions: ``b + sum_i c_i u_i``, shapes (c,), (d, c)."""
        if not self.intercept:
            return np.zeros(self.s.shape[1]), self.s[:d].copy()
        g = self._gamma(d)[0]
        return self.mean + g / np.sqrt(self.weight_sum), self.s[:d] - self.a[:d, None] * g[None, :]

    def cumulative_sums(self, r):
        """``sum_{i<=d} r_i c_i`` for the coefficients ``c`` of the fit on d directions
        (:meth:`coefficients`), for d = 1 .. D and each row of ``r`` (..., D): shape
        (..., D, c)."""
        r = np.asarray(r, dtype=float)
        D = r.shape[-1]
        out = np.cumsum(r[..., None] * self.s[:D], axis=-2)
        if self.intercept:
            out -= self._gamma(np.arange(1, D + 1)) * np.cumsum(r * self.a[:D], axis=-1)[..., None]
        return out

    def cumulative_predictions(self, Phi):
        """Predictions of the fits on d = 1 .. D directions from the directions' values ``Phi``
        (n_points, D) at the points: shape (n_points, D, c)."""
        pred = self.cumulative_sums(Phi)
        if self.intercept:  # plus the intercepts b_d of the coefficients
            pred += self.mean + self._gamma(np.arange(1, Phi.shape[1] + 1)) / np.sqrt(self.weight_sum)
        return pred


def target_contributions(U, Y, sqrt_weight=None, *, fit_intercept=True, groups=None):
    """The :class:`TargetContributions` of targets ``Y`` (n, c) to the unit vectors ``U`` (n, m).

    ``U`` are the eigenvectors of ``W^{1/2} K W^{1/2}`` for square-root weights
    ``sqrt_weight`` (default: all ones, the plain kernel matrix). ``groups`` (n,): the groups
    of identical inputs (:func:`kpm.validation.duplicate_groups`); a group of g rows with
    equal targets counts ``g - 1`` in ``copies``: the directions that separate its copies,
    which every kernel matrix maps to 0 and where its targets contribute exactly 0 (the
    rows repeated, as an integer sample weight does).
    """
    Y = np.asarray(Y, dtype=float)
    n = len(Y)
    sw = np.ones(n) if sqrt_weight is None else np.asarray(sqrt_weight, dtype=float)
    w = sw**2
    N = float(w.sum())
    mean = (w @ Y) / N if fit_intercept else np.zeros(Y.shape[1])
    Yc = Y - mean
    s = U.T @ (sw[:, None] * Yc)
    total = float(np.sum(w[:, None] * Yc**2))
    copies = 0 if groups is None else _copies(Y, np.asarray(groups))
    m = U.shape[1]
    if not fit_intercept:
        return TargetContributions(mean, s, np.zeros(m), np.ones(m + 1), s, np.ones(m, bool), total, N, False,
                                   copies)
    e = sw / np.sqrt(N)
    a = U.T @ e
    rest = e - U @ a  # the constant outside every computed direction
    outside = float(rest @ rest) + np.concatenate([np.cumsum((a**2)[::-1])[::-1], [0.0]])
    # sum_{j<i} a_j s_j = -(sum_{j>=i} a_j s_j + rest^T W^1/2 (Y - mean)), since the constant is
    # orthogonal to Y - mean: tail sums, accurate where the constant is nearly in the span
    ar = (rest @ (sw[:, None] * Yc))[None, :]
    before = -(np.cumsum((a[:, None] * s)[::-1], axis=0)[::-1] + ar)
    prev, nxt = outside[:-1], outside[1:]
    plain = prev <= INTERCEPT_ATOL  # the constant already lies in the span of the earlier u
    # this direction completes the constant
    dropped = ~plain & ((nxt <= INTERCEPT_ATOL) | (nxt <= INTERCEPT_RTOL * prev))
    regular = ~plain & ~dropped
    t = s.copy()
    t[dropped] = 0.0
    t[regular] = (prev[regular, None] * s[regular] + a[regular, None] * before[regular]) / np.sqrt(
        prev[regular] * nxt[regular])[:, None]
    return TargetContributions(mean, s, a, outside, t, ~dropped, total, N, True, copies)


def _copies(Y, groups):
    """``sum (g - 1)`` over the groups (``groups``: their indices) of g rows whose targets
    ``Y`` (n, c) are all equal: the rows that only repeat another."""
    G = int(groups.max()) + 1
    if G == len(groups):
        return 0
    size = np.bincount(groups, minlength=G)
    first = np.zeros(G, dtype=int)
    first[groups[::-1]] = np.arange(len(groups))[::-1]  # a row of each group
    differs = np.any(Y != Y[first[groups]], axis=1)
    varied = np.bincount(groups, differs, G) > 0
    return int(np.sum((size - 1)[~varied]))


def model_directions(w, s, total_all, n, null_space="exclude", *, rank=None, keep=None, intercept=False):
    """The contributions the two-component model is fitted to.

    ``rank``: the numerical rank of K (default: :func:`kpm.spectral.numerical_rank` of
    ``w``; an :class:`kpm.spectral.EigenBasis` knows it). ``null_space='exclude'``
    (default): directions of the numerical null space of K (the eigenvalues cut by
    :mod:`kpm.spectral`) are left out: their order is arbitrary (degenerate zero
    eigenvalues) and, with duplicated inputs, their contributions are exactly 0 when the
    duplicates agree in y, which would otherwise reward a spurious ``d`` close to n.
    ``null_space='noise'``: all n directions are kept (as on the slides), but the null
    space always belongs to the noise component: the cut d is at most the rank. ``n`` counts
    the rows less the copies of a row with equal targets (:func:`target_contributions`):
    with such copies (``len(w) > n``) the directions that separate them are no directions of
    the kernel (every kernel matrix maps them to 0, and the equal targets contribute exactly
    0 there, which made the noise variance small and the cut d the rank: kernel PCR on rows
    repeated 4 times had test R^2 -1770 at d = 49 of 50); the null space is then the tail
    beyond the rank, of ``total_all`` minus the computed part. Copies with different
    targets stay: their differences are noise.
    ``keep`` (default: all) marks the directions that add to the model space: with an
    intercept (``intercept=True``, see :class:`TargetContributions`) the one that completes
    the constant is left out, and the directions orthogonal to the constant number n - 1.

    Returns ``(s_used, total, n_used, rank, max_cut, index)``: ``index`` holds the positions
    of ``s_used`` among the directions (the model's k-th direction is ``u_{index[k-1]+1}``).
    When only the leading eigenpairs were computed and all are above the tolerance, the
    tail is ``total_all`` minus the computed part over the remaining directions.
    """
    check_option(null_space, "null_space", NULL_SPACE_OPTIONS)
    r = numerical_rank(w) if rank is None else int(rank)
    idx = np.arange(len(s)) if keep is None else np.flatnonzero(keep)
    n_all = n - 1 if intercept else n
    if null_space == "noise":
        if len(w) > n:
            idx = idx[idx < r]
        cut = int(np.sum(idx < r))
        s_used = s[idx]
        # the full spectrum sums to total_all but for the rounding of its null space, whose
        # directions (and contributions) are arbitrary: the computed sum is the total then
        used = float((s_used**2).sum())
        total = used if len(w) == n else max(float(total_all), used)
        return s_used, total, n_all, r, max(1, min(cut, n_all - 1)), idx
    if r < len(w) or len(w) == n:
        idx = idx[idx < r]
        s_used = s[idx]
        return s_used, float((s_used**2).sum()), len(idx), r, max(1, len(idx) - 1), idx
    return s[idx], float(total_all), n_all, r, n_all - 1, idx


#: values of the ``null_space`` parameter
NULL_SPACE_OPTIONS = ("exclude", "noise")


def cap_dim(max_components, max_cut):
    """The largest cut d of the model: ``max_cut``, or ``max_components`` (validated) below it."""
    return max_cut if max_components is None else min(max_components, max_cut)


@dataclass(frozen=True)
class TwoComponentFit:
    """The two-component model fitted to :class:`TargetContributions` (see
    :func:`two_component_fit`); ``dim`` counts eigenvectors ``u_i`` (the model space is
    ``span{u_1..u_dim}``, with the constant when there is an intercept)."""

    dim: int
    model_dim: int  # the cut among the directions the model is fitted to (index of nll)
    nll: np.ndarray
    sigma1_sq: np.ndarray
    sigma2_sq: np.ndarray
    n_directions: int


def two_component_fit(contributions, eigenvalues, n, null_space="exclude", *, rank=None, max_components=None):
    """Fit the two-component model to the contributions ``t`` of a :class:`TargetContributions`
    over the directions :func:`model_directions` selects; None when fewer than 2 remain.
    ``n``: the number of rows (of positive weight), less the contributions' ``copies``."""
    s_used, total, n_used, _, max_cut, idx = model_directions(
        eigenvalues, contributions.t, contributions.total, n - contributions.copies, null_space, rank=rank,
        keep=contributions.keep, intercept=contributions.intercept)
    if n_used < 2 or len(s_used) < 1:
        return None
    s_used = spread_over_ties(s_used, np.asarray(eigenvalues, dtype=float)[idx], eigenvalues[0])
    dim, nll, s1, s2 = relevant_dimension_from_contributions(
        s_used, total=total, n=n_used, max_components=cap_dim(max_components, max_cut))
    return TwoComponentFit(int(idx[dim - 1]) + 1, dim, nll, s1, s2, n_used)


#: eigenvalues closer than this (relative to lambda_1) are tied: ``sqrt(eps)``, the precision
#: below which eigenvectors computed in double precision carry no information
#: (:data:`kpm.validation.DEGENERACY_TOL`, below which a kernel value counts as zero)
TIE_RTOL = DEGENERACY_TOL


def spread_over_ties(s, eigenvalues, top=None):
    """The contributions ``s`` (m,) or (m, c) with each run of tied eigenvalues given its mean square.

    Within an eigenspace of (numerically) equal eigenvalues the eigensolver's basis is
    arbitrary, and so is the split of the targets' sum of squares over its directions; only
    the sum over the whole eigenspace is determined. Eigenvalues closer than ``TIE_RTOL *
    top`` are split by kernel values that :func:`kpm.validation.kernel_degeneracy` counts
    as 0. A width far below the distances between the points makes hundreds of eigenvalues
    equal to 1 within that: on Rätsch's ringnorm (realization 1, sigma = 0.355) the
    last of them were contrasts between the few points of one class that have neighbours,
    whose labels are equal and whose contributions after the intercept were ~1e-7; the noise
    component had variance 1e-9 and :func:`select_kernel` ranked that width first (d_hat =
    356 of 400, kernel PCR at 50.6 % test error). Each direction of a run of eigenvalues
    within ``TIE_RTOL * top`` of their neighbours (``top``: lambda_1, default the largest
    of ``eigenvalues``) gets the run's mean ``s_i^2`` (per output column), the value for a
    basis of the eigenspace drawn at random; ringnorm's ranking then has 3.55 first (d_hat
    = 2, 1.8 %).
    """
    s = np.asarray(s, dtype=float)
    w = np.asarray(eigenvalues, dtype=float)
    if len(w) < 2:
        return s
    top = float(np.max(w)) if top is None else float(top)
    breaks = np.flatnonzero(np.abs(np.diff(w)) > TIE_RTOL * max(top, np.finfo(float).tiny)) + 1
    if len(breaks) == len(w) - 1:
        return s
    runs = np.repeat(np.arange(len(breaks) + 1), np.diff(np.r_[0, breaks, len(w)]))
    s2 = s**2 if s.ndim == 2 else (s**2)[:, None]
    sums = np.zeros((runs[-1] + 1, s2.shape[1]))
    np.add.at(sums, runs, s2)
    out = np.sqrt(sums / np.bincount(runs)[:, None])[runs]
    return out if s.ndim == 2 else out[:, 0]


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
    r"""Fit the two-component model to contributions :math:`s_i` (Braun, Buhmann & Müller).

    Parameters
    ----------
    s : array-like (m,) or (m, n_outputs)
        Contributions :math:`s_i = u_i^\top y` in order of decreasing eigenvalue. With several
        output columns, :math:`s_i^2` is summed over the columns (a pooled fit).
    total : float, optional
        :math:`\sum_i s_i^2` over *all* n directions (:math:`\|y\|^2`). Needed when only the
        leading m < n contributions are given; defaults to the sum of :math:`s_i^2`.
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
    r"""Estimate the relevant dimension of (X, y) in the feature space of a kernel.

    By default (``fit_intercept=True``, the RBF kernel with ``gamma='scale'``, every d up to
    the numerical rank) it fits the two-component model of Braun, Buhmann & Müller,

    .. math::

        s_i \sim \mathcal N(0, \sigma_1^2)\ \ (i \le d), \qquad
        s_i \sim \mathcal N(0, \sigma_2^2)\ \ (i > d),

    by maximum likelihood over the cut d, to the contributions :math:`s_i` of the kernel
    PCA directions to the labels: those of the orthonormal basis of
    :math:`\operatorname{span}\{1, u_1, \dots, u_d\}`, the constant first, with
    :math:`u_i` the eigenvectors of the (uncentred) kernel matrix
    (``fit_intercept=False``: the slides' :math:`s_i = u_i^\top y`). The d of largest
    likelihood (ties: the smaller) is the relevant dimension ``n_components_``, the
    number of kernel PCA directions :meth:`transform` maps to; the numerical null space of
    a singular kernel matrix is left out (``null_space='exclude'``). See the module
    docstring of :mod:`kpm.relevance.dimension`.

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
    fit_intercept : bool, default=True
        Model an unpenalised constant beside the kernel PCA directions: the contributions
        are those of the orthonormal basis of :math:`\operatorname{span}\{1, u_1, \dots, u_d\}` (the constant
        first, see the module docstring), so that ``d_hat`` does not change when a constant
        is added to y. False: the slides' :math:`s_i = u_i^\top y`, in which an offset of y spreads
        over every direction the kernel cannot make constant and inflates ``d_hat``.
    max_components : int, optional
        Largest dimension considered. ``None``: all ``d = 1 .. n-1`` (needs the full
        eigendecomposition). A smaller value uses a partial eigensolver; the tail
        variance is then computed from :math:`\|y\|^2` minus the leading contributions
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
    s_ : ndarray (m,), or (m, n_classes) for more than two classes
        Contributions the model is fitted to (m = n, or ``max_components + 1`` with a partial
        solve): :math:`u_i^\top y` without an intercept; with one, those of the directions made
        orthogonal to the constant and to the earlier ones (0 for the direction that
        completes the constant). One column per one-vs-rest target of class labels.
    y_mean_ : float, or ndarray (n_classes,) for more than two classes
        The mean of y (of the coded targets) taken out by the intercept (0 with
        ``fit_intercept=False``).
    neg_log_likelihood_ : ndarray (D,)
        :math:`-\log l(d)` for :math:`d = 1, \dots, D` (index ``d - 1``; d counts the directions the model
        is fitted to, which are the first d eigenvectors unless one completes the constant).
    min_neg_log_likelihood_ : float
        :math:`-\log l(\hat d)`, the kernel-selection criterion.
    sigma1_sq_, sigma2_sq_ : float
        The two noise levels at ``d_hat`` (signal part, noise part).
    eigenvalues_ : ndarray (m,)
        Eigenvalues of K, decreasing.
    rank_ : int
        Numerical rank of K (eigenvalues above the rank cut of :mod:`kpm.spectral`,
        :math:`10^{-10} \lambda_1`; a lower bound with a partial solve).
    n_directions_ : int
        Number of directions the two-component model is fitted to: ``rank_`` with
        ``null_space='exclude'`` (the slides use all n, which only differs when K is
        singular, e.g. with duplicated inputs), n with ``null_space='noise'`` (less the
        copies of a row with equal y, which only repeat it); one fewer
        where the constant of the intercept lies in their span.
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
        "fit_intercept": [Boolean()],
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
        fit_intercept=True,
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
        self.fit_intercept = fit_intercept
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
            Real targets (a float array; NaN/inf raise ValueError) or class labels (any other
            array: strings, integers, booleans), coded as the classifiers code them
            (:func:`kpm.validation.targets.relevance_targets`): one ±1 target for two classes,
            one ±1 target per class for more, whose contributions the model fits jointly (as
            :class:`KernelPCRClassifier` does).

        Returns
        -------
        self
        """
        return self._fit(X, y, where="RelevantDimension")

    def _fit(self, X, y, where):
        """:meth:`fit`; ``where`` names the model in warnings (see :func:`select_kernel`)."""
        params = validate_params(self)
        X, y = validate_kernel_input_y(self, X, y, y_numeric=False)
        Y = relevance_targets(y, "RelevantDimension")
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
        groups = duplicate_groups(X, always=True)
        contrib = target_contributions(U, Y, fit_intercept=self.fit_intercept, groups=groups)
        rank = basis.rank
        fit = two_component_fit(contrib, w, n, self.null_space, rank=rank, max_components=max_components)
        if fit is None or rank < 1:
            raise rank_error(
                rank, degeneracy, "the two-component model needs at least 2 directions with nonzero "
                "eigenvalue" + (" besides the constant of the intercept" if self.fit_intercept else ""))
        self.rank_ = rank
        self.n_directions_ = fit.n_directions
        self.kernel_ = kernel
        self.X_fit_ = X
        self.eigenvalues_ = w
        self.eigenvectors_ = U
        one = Y.shape[1] == 1
        self.s_ = contrib.t[:, 0] if one else contrib.t
        self.y_mean_ = float(contrib.mean[0]) if one else np.asarray(contrib.mean, dtype=float)
        self.neg_log_likelihood_ = fit.nll
        self.n_components_ = fit.dim
        self.min_neg_log_likelihood_ = float(fit.nll[fit.model_dim - 1])
        self.sigma1_sq_ = float(fit.sigma1_sq[fit.model_dim - 1])
        self.sigma2_sq_ = float(fit.sigma2_sq[fit.model_dim - 1])
        return self

    @property
    def _n_features_out(self):
        """Output columns (``get_feature_names_out``: relevantdimension0, ...)."""
        return self.n_components_

    def transform(self, X):
        r"""Coordinates of X on the first ``n_components_`` kernel PCA directions.

        :math:`\kappa(x)^\top u_i / \sqrt{\lambda_i}` (the empirical kernel map of the
        uncentred K; training points map to the rows of :math:`U_d \Lambda_d^{1/2}`).
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
    loo_error: float  # kernel PCR's leave-one-out error at d_hat (:func:`kernel_pcr_loo_error`)


def kernel_pcr_loo_error(est, Y, regression=False):
    """The leave-one-out error of kernel PCR on a fitted :class:`RelevantDimension`'s first
    ``n_components_`` eigenvectors ``U`` (and the constant, with its intercept): the least
    squares fit ``H Y`` of the targets ``Y`` (:func:`~kpm.validation.relevance_targets`),
    ``H`` the projection onto those columns, leaves point ``i`` out with residual ``(Y_i -
    (HY)_i) / (1 - H_ii)`` (Allen 1974). For class labels, the fraction of points whose
    left-out prediction has the wrong sign (two classes) or largest column (more); for a
    real target, the mean squared left-out residual. A point with ``H_ii = 1`` (its own
    direction) counts as an error, its left-out prediction being undetermined."""
    Y = np.asarray(Y, dtype=float)
    U = est.eigenvectors_[:, : est.n_components_]
    A = np.column_stack([np.ones(len(Y)), U]) if est.fit_intercept else U
    Q = np.linalg.qr(A)[0]
    leverage = np.einsum("ij,ij->i", Q, Q)
    residual = Y - Q @ (Q.T @ Y)
    undetermined = 1.0 - leverage <= 1e-10
    left_out = residual / np.where(undetermined, 1.0, 1.0 - leverage)[:, None]
    if regression:
        return float(np.mean(np.where(undetermined[:, None], np.inf, left_out**2)))
    predicted = Y - left_out
    wrong = (predicted[:, 0] * Y[:, 0] <= 0) if Y.shape[1] == 1 else predicted.argmax(axis=1) != Y.argmax(axis=1)
    return float(np.mean(wrong | undetermined))


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
        f"make_kernel parameters such as {{'kernel': 'rbf', 'sigma': 1.0}}; got {_describe(candidate)}"
    )


def select_kernel(candidates, X, y, *, fit_intercept=True, max_components=None):
    r"""Rank candidate kernels by the likelihood of the two-component model at d_hat.

    Braun, Buhmann & Müller: each candidate is fitted by :class:`RelevantDimension` (by
    default with an intercept, ``fit_intercept=True``, and every d up to the rank), and the
    best kernel is the one with the smallest :math:`-\log l(\hat d)`: it separates the label
    information from the noise best. Usable as the width
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
        Real targets or class labels, as :meth:`RelevantDimension.fit` reads them.
    fit_intercept : bool, default=True
        As in :class:`RelevantDimension` (False: the slides' criterion, :math:`s = U^\top y`).
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
        Empty candidate list, an invalid candidate, invalid X / y, or the arguments in
        another order than ``(candidates, X, y)``.

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
    [(0.3, 10), (0.1, 83), (1.0, 17), (3.0, 3)]
    """
    _check_argument_order(candidates, X, y)
    candidates = _candidate_list(candidates)
    scores = []
    for i, cand in enumerate(candidates):
        where = f"select_kernel, candidate {i} ({_describe(cand)})"
        try:
            Xc = X if accepts_raw_input(cand) else _as_float(X)
            kern = _candidate_kernel(cand, Xc)
            est = RelevantDimension(kernel=kern, fit_intercept=fit_intercept,
                                    max_components=max_components)._fit(Xc, y, where)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from exc
        scores.append((est.min_neg_log_likelihood_, i, cand, est))
    Y = relevance_targets(np.asarray(y), "select_kernel")
    regression = np.asarray(y).dtype.kind == "f"  # a real target (relevance_targets' rule)
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
                loo_error=kernel_pcr_loo_error(est, Y, regression),
            )
        )
    _warn_if_another_candidate_is_better(out, regression, len(Y))
    return out


def _warn_if_another_candidate_is_better(ranking, regression, n):
    """The likelihood can favour a kernel whose relevant dimension fits the labels' noise (a
    narrow Gaussian with d_hat a large share of n): warn, naming it, when another candidate's
    kernel PCR is clearly better by the leave-one-out error -- for labels, an error at least
    twice the best's and above it by more than three binomial standard errors of the best; for
    a real target, a mean squared error at least twice the best's."""
    top = ranking[0]
    best = min(ranking, key=lambda r: (r.loo_error, r.rank))
    if best is top or not np.isfinite(best.loo_error):
        return
    e, e0 = top.loo_error, best.loo_error
    if regression:
        clear = e >= 2.0 * e0
        what = f"a leave-one-out mean squared error of {e:.4g}, against {e0:.4g}"
    else:
        clear = clearly_higher_error(e, e0, n)
        what = f"a leave-one-out error of {e:.1%}, against {e0:.1%}"
    if clear:
        warnings.warn(
            f"select_kernel: the top-ranked candidate {top.index} ({_describe(top.candidate)}, d_hat = "
            f"{top.n_components} of {n} samples) has {what} for candidate {best.index} "
            f"({_describe(best.candidate)}, d_hat = {best.n_components}), kernel PCR on each at its d_hat: "
            "the likelihood favours a kernel whose relevant dimension fits the labels' noise. Consider "
            f"candidate {best.index} (each KernelScore's loo_error).",
            ReferenceModelWarning,
            stacklevel=3,
        )


def _describe(value):
    """A short description of an argument for a message (never a whole array)."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"an array of shape {tuple(np.shape(value))}"
    if isinstance(value, (list, tuple)) and len(value) > 4:
        return f"a {type(value).__name__} of {len(value)} items"
    return reprlib.repr(value)


def _is_data(value):
    """Whether ``value`` looks like samples or targets rather than kernel candidates."""
    if hasattr(value, "shape") and hasattr(value, "dtype") or hasattr(value, "dtypes"):
        return True
    if isinstance(value, (list, tuple)) and len(value) > 0:
        first = value[0]
        return isinstance(first, (numbers.Number, np.ndarray, list, tuple)) and not isinstance(first, bool)
    return False


def _is_candidates(value):
    """Whether ``value`` looks like a list of kernel candidates (dicts or Kernel objects)."""
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(
        isinstance(c, (dict, Kernel)) for c in value)


def _check_argument_order(candidates, X, y):
    order = "the arguments are select_kernel(candidates, X, y)"
    if _is_data(candidates):
        where = "X" if _is_candidates(X) else ("y" if _is_candidates(y) else "")
        raise ValueError(
            f"candidates must be a list of kernels, got {_describe(candidates)}: {order}"
            + (f" (the candidates were passed as {where})" if where else "")
        )
    for name, value in (("X", X), ("y", y)):
        if _is_candidates(value):
            raise ValueError(f"{name} is a list of kernel candidates, not data: {order}")
    if _is_data(X) and _is_data(y) and _ndim(X) == 1 and _ndim(y) == 2:
        raise ValueError(
            f"X is 1-D ({_describe(X)}) and y is 2-D ({_describe(y)}): {order} (X and y swapped?)"
        )


def _ndim(value):
    """The dimension of array-like data; None for a ragged nesting (left to the data checks)."""
    try:
        return np.ndim(value)
    except ValueError:
        return None


def _candidate_list(candidates):
    if isinstance(candidates, (str, dict, Kernel)) or callable(candidates):
        return [candidates]
    try:
        candidates = list(candidates)
    except TypeError:
        raise ValueError(
            f"candidates must be a sequence of kernels (or one kernel), got {_describe(candidates)}"
        ) from None
    if len(candidates) == 0:
        raise ValueError("select_kernel needs at least one candidate kernel; got an empty list")
    return candidates


def _as_float(X):
    """Numeric X for a numeric kernel candidate (:func:`kpm.validation.check_samples`)."""
    try:
        return check_samples(X)
    except (TypeError, ValueError) as exc:
        why = str(exc).split("array=")[0].split("\n")[0].strip().rstrip(":")
        why = why if len(why) <= 120 else why[:117] + "..."
        raise ValueError(
            f"X must be numeric samples for this kernel candidate, got {_describe(X)} "
            f"({why}; string input needs a kernel with a check_input method, "
            "e.g. kpm.WeightedDegreeKernel)"
        ) from exc
