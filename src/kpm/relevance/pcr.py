"""Kernel principal component regression (kernel PCR) and classification.

Braun, Buhmann & Müller ("Learning in kernel feature spaces", talk slides): with the
eigendecomposition ``K = U Λ U^T`` of the (uncentred) training kernel matrix, kernel PCR is
least squares on the first d kernel PCA directions ``u_1 .. u_d``. With an intercept
(``fit_intercept=True``, the default) the least squares are on ``span{1, u_1, .., u_d}``:
the constant is an unpenalised direction, as the offset ``alpha_0`` of the kernel expansion
``f(x) = sum_i alpha_i k(x_i, x) + alpha_0`` (Braun, Lange & Buhmann 2006). With the
contributions ``s = U^T (y - mean(y))``, ``a = U^T 1 / sqrt(n)`` and the constant's part
outside the first d directions, ``c_d^2 = 1 - sum_{i<=d} a_i^2``,

    training fit       mean(y) + gamma_d / sqrt(n) + sum_{i<=d} (s_i - gamma_d a_i) u_i,
                       gamma_d = -(sum_{i<=d} a_i s_i) / c_d^2
    new point          f(x) = intercept_ + κ(x)^T U_d Λ_d^{-1} c,   c_i = s_i - gamma_d a_i

(at a training point ``κ(x_j)^T u_i / λ_i = (u_i)_j``; where the constant lies in the span,
``c_d^2 = 0``, ``gamma_d = 0``). A training point's kernel row holds its similarity with
itself, which no new point has; where every point is far from every other (high
dimensions) K is close to a smooth kernel matrix plus ``delta I`` (El Karoui 2010), and the
intercept of the training fit would carry ``delta`` into every prediction.
``self_similarity='nearest'`` (default) moves the intercept by ``delta * mean_w(alpha)``,
with ``delta = min_j (K_jj - K_{j, nn(j)})`` the self-similarity every point has beyond its
nearest neighbour's: the intercept fitted to the training values with that part removed.
Without an intercept, the slides' formulas:
``Π_d y = U_d U_d^T y`` and ``f(x) = κ(x)^T U_d Λ_d^{-1} U_d^T y``, which predict 0 far from
the data whatever the mean of y, and fit an offset of y only as far as the kernel can make
a constant (a constant target of 3 was predicted between 0.82 and 3.97 at d = 5).
Classification takes the sign (binary) or, for more than two classes, the arg-max over
one-vs-rest ±1 columns that share the one eigendecomposition (each with its intercept;
the pooled ``sum_c t_ic^2`` fixes one common d).

The number of directions d is

* an integer (``1 <= d <= n-1``, and at most the numerical rank of K, since
  ``Λ_d^{-1}`` must exist); one below the relevant dimension whose training fit is clearly
  worse than there (training R^2 lower by 0.1, or accuracy by 5 % or two samples) warns,
* ``'relevant'`` (default): the relevant-dimension estimate ``d_hat`` of
  :class:`kpm.relevance.RelevantDimension` with the same ``fit_intercept`` (clipped to the
  numerical rank), or
* ``'cv'``: k-fold cross-validation of the squared error (regressor) or the 0-1
  error (classifier) over ``d = 1 .. D``; ties go to the smaller d. All d are
  scored from one eigendecomposition per fold (cumulative sums over components). The
  copies of a row are in one fold (a model scored on a point it was fitted to rewards
  interpolation: 66 points repeated 3 times had d = 58 and 49 % test error).

Sample weights
--------------
``fit(X, y, sample_weight=w)`` is weighted least squares on the same nested spaces, with
the directions taken from the weighted kernel matrix ``W^{1/2} K W^{1/2}``
(``W = diag(w)``): its eigenvectors ``v_i`` give ``u_i = W^{-1/2} v_i``, the contributions
``v_i^T W^{1/2} (y - mean_w(y))`` and the expansion coefficients ``W^{1/2} V_d Λ_d^{-1} c``.
For integer weights this *is* the kernel PCA of the rows repeated ``w_i`` times: the
repeated kernel matrix ``E K E^T`` (``E`` the n_rep x n expansion, ``E^T E = W``) has the
same nonzero eigenvalues, its eigenvectors are ``E W^{-1/2} v_i``, and the ``n_rep - n``
directions that separate copies of a row lie in its null space, where the copies' equal
targets contribute nothing. Hence the eigenvalues, the contributions, ``d_hat`` (with
``null_space='exclude'``, the default), the coefficients and every prediction equal
those of the repeated rows up to rounding, and so do ``null_space='noise'`` (which counts
the copies of a row with equal targets once) and ``n_components='cv'`` (whose folds keep
the copies of a row together and are dealt in the sorted order of the distinct inputs, for
the same ``random_state``). Not equal: a partial eigensolver counts the directions of the
model in samples, not in repeated rows. A zero weight removes the sample (its kernel column gets no
coefficient). The kernel must be the same for both: the default RBF width
(``gamma='scale'``) is computed from the weighted variance of X, as it is from the
repeated rows; ``sigma='median'`` is the median distance between the samples as given.

The kernel ridge reference
--------------------------
Truncating the directions is not always the better filter: kernel ridge regression on the
same kernel shrinks all of them (Hastie, Tibshirani & Friedman 2009, Sec. 3.4.1 and 5.8).
Every fit compares the model with it from the same eigendecomposition
(:mod:`kpm.relevance.reference`): the leave-one-out error of kernel ridge regression (with
the intercept unpenalised, as here) over a grid of ``alpha`` and that of the fitted model
(its directions kept) are closed forms, ``O(n m)`` per ``alpha``; the copies of a row are
left out together. Where ridge's error is clearly smaller (the mean squared error below
:data:`RIDGE_MARGIN` = 0.8 times the model's; for the classifier, one-vs-rest ridge on the
±1 codes, the error rate below 0.8 times and by two samples), a
:class:`~kpm.exceptions.ReferenceModelWarning` names ``sklearn.kernel_ridge.KernelRidge``
with the ``alpha`` it found (Friedman #1 at the defaults: kernel PCR test R^2 0.68, ridge on
the same kernel 0.86). Where no such warning is given and, with an intercept, the
model's leave-one-out error is not below that of the constant alone (the mean of y; the
classifier's intercept), the same warning says that its directions carry no signal it can
use (40 points in R^200 with the target linear in 3 of the features, where the leading
directions are those of the other 197: kernel PCR by cross-validation had test R^2 -0.07
against 0.035 for ridge; the user guide has how often it warns, and how rightly). The
errors are the attributes ``loo_error_``, ``reference_loo_error_``, ``reference_alpha_``
and ``constant_loo_error_`` (None after a partial eigendecomposition, which ridge cannot
use: ``max_components`` with a fixed or relevant d where a partial eigensolver runs, i.e.
not where LAPACK's dense solver does, for n <= 300 or more than n / 5 pairs, see
:func:`kpm.spectral.resolve_solver`).
The model's leave-one-out error keeps the directions of all the points, each left-out
point's among them. Where a few points make a direction -- few points, or many dimensions,
where every point is far from every other -- that overrates the model (ridge's, exact, does
not), so up to :data:`HELDOUT_MAX_SAMPLES` samples a fit whose leave-one-out comparison did
not warn compares the two again on :data:`HELDOUT_FOLDS` folds (copies of a row in one
fold), each fold's eigenbasis computed without its validation points: ``heldout_error_``
and ``reference_heldout_error_``, with the same margin (the regressor's also met by a held-out
R^2 lower by :data:`HELDOUT_R2_GAP`), where the training points' median
self-similarity in excess of their nearest neighbour's is at least
:data:`HELDOUT_SELF_SIMILARITY` times the smallest eigenvalue the model keeps. On 46 points in R^460 (three
classes apart in 5 features) kernel PCR at its relevant dimension had a leave-one-out error
of 13 % against ridge's 22 %, but 26 % against 15 % on held-out folds, and test errors of
26 % and 10 % on 1,000 fresh points.

Where the points weigh on their own directions so, most new points are far from every
training point: the classifier's values there fall to its intercept, the mean of the ±1
codes, which names the majority class. Ridge without an intercept falls to 0 there instead,
and the nearest training points decide. In that case the classifier's reference is the
ridge of smaller leave-one-out error with or without an intercept
(``reference_intercept_``), and the warning says which to fit. On 10-13 points of four
classes at ``sigma=1`` kernel PCR had test errors of 0.28-0.38, ridge with an intercept
was no better by its errors, and ridge without one had 0.03-0.09. The regressor keeps ridge
with its own intercept (without one, ridge regression was the worse model on test data in a
tenth of the fits such a check flagged; docs/results/notes/user_guide_measurements.md).

Strings (weighted-degree kernel) and precomputed kernels are accepted as in
:mod:`kpm.relevance`.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import check_cv
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from kpm.base import (
    KernelParamsMixin,
    cross_gram,
    train_gram,
    validate_kernel_input,
    validate_kernel_input_y,
)
from kpm.exceptions import ReferenceModelWarning
from kpm.relevance.reference import ridge_predictions, ridge_reference
from kpm.relevance.dimension import (
    NULL_SPACE_OPTIONS,
    rank_error,
    target_contributions,
    two_component_fit,
)
from kpm.kernels import make_kernel
from kpm.kernels.conventions import scale_gamma
from kpm.kernels.base import kernel_class
from kpm.kernels.rbf import RBFKernel
from kpm.spectral.basis import EIGEN_SOLVERS, eigen_basis, resolve_solver
from kpm.spectral.smoothers import loo_residuals
from kpm.validation import (
    Boolean,
    ClassWeights,
    Integer,
    Options,
    RandomState,
    Splitter,
    check_sample_weight,
    check_weighted_classes,
    duplicate_groups,
    one_vs_rest,
    self_similarity_excess,
    validate_params,
    warn_if_degenerate_kernel,
    warn_if_degenerate_model,
)

__all__ = ["KernelPCRRegressor", "KernelPCRClassifier", "HELDOUT_FOLDS", "HELDOUT_MAX_SAMPLES", "HELDOUT_R2_GAP",
           "HELDOUT_SELF_SIMILARITY", "RIDGE_MARGIN", "SMOOTH_MAX_GAIN"]

#: kernel ridge regression is clearly better when its leave-one-out error is below this
#: multiple of the model's: the relative standard error of a mean of n squared Gaussian
#: residuals is sqrt(2 / n), 0.1 at n = 200, so 0.8 is two of them there (and more for the
#: paired difference of two fits to the same residuals, which are strongly correlated)
RIDGE_MARGIN = 0.8
#: the comparison with kernel ridge on held-out folds (:meth:`_KernelPCRBase._compare_held_out`):
#: the most samples (of positive weight) it runs for, and its folds
HELDOUT_MAX_SAMPLES = 1000
HELDOUT_FOLDS = 5
#: ... and where: the training points' median self-similarity in excess of their nearest
#: neighbour's is at least this fraction of the smallest eigenvalue the model keeps (each point
#: then weighs on its own directions; at the relevant dimension 0.0-0.07 on 11 of Braun,
#: Buhmann & Müller's 13 benchmarks, 0.15 on image and 0.57 on splice (d_hat 261 and 91), 0.1
#: or more on 9-13 points of 3-6 classes and on 30-60 points in R^300..R^600)
HELDOUT_SELF_SIMILARITY = 0.1
#: ... and for the regressor, where its mean squared error there is above ridge's by this
#: fraction of the targets' variance (a held-out R^2 lower by 0.1; the same margin as the
#: training fit's underfit check), also when not below ``RIDGE_MARGIN`` times it
HELDOUT_R2_GAP = 0.1
#: ``self_similarity='smooth'`` divides a direction's coefficient by ``lam - delta``, at least
#: ``lam / SMOOTH_MAX_GAIN``: a direction whose eigenvalue is mostly the excess ``delta`` (noise
#: of the smooth part) is enlarged at most this many times
SMOOTH_MAX_GAIN = 20.0


def _weighted_scale_gamma(X, weight):
    """``gamma='scale'`` (``1 / (n_features X.var())``) of the rows repeated by their weights:
    the variance of the entries weighted by their rows' weights (rescaled as
    :func:`kpm.kernels.scale_gamma` does)."""
    X = np.asarray(X, dtype=float)
    top = float(np.max(np.abs(X)))
    if top == 0.0:
        return scale_gamma(X)
    Z = X / top
    total = float(weight.sum()) * X.shape[1]
    mu = float((weight @ Z).sum()) / total
    var = float((weight @ (Z - mu) ** 2).sum()) / total
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        gamma = 1.0 / (X.shape[1] * var) / np.float64(top) ** 2 if var > 0 else 1.0
    return float(gamma) if np.isfinite(gamma) and gamma > 0 else scale_gamma(X)


def _diagonal_excess(K, weight):
    """The self-similarity every point of ``K`` has in excess of its nearest neighbour's.

    ``delta = min_j (K_jj - K_{j, nn(j)})`` (the least of
    :func:`kpm.validation.self_similarity_excess`), ``nn(j)`` the nearest other point in the
    feature space (smallest ``K_ii + K_jj - 2 K_ij``); for the Gaussian kernel
    ``min_j (1 - max_{i != j} K_ij)``. In high dimensions, where every point is far from
    every other, ``K`` is close to a smooth kernel matrix plus this multiple of the identity
    (El Karoui 2010): a part of the training points' kernel rows that no new point has.
    0 where the minimum is negative, for fewer than two points, and where a point has a
    copy -- an exact duplicate, or a weight of 2 or more (as many repeated rows) -- since a
    new point can then coincide with a training point.
    """
    if len(K) < 2 or np.any(weight >= 2):
        return 0.0
    return float(np.min(self_similarity_excess(K)))


def _smooth_divisor(lam, delta):
    """The eigenvalues the extension to new points divides by: ``lam - delta`` (the smooth
    part's, ``self_similarity='smooth'``), at least ``lam /`` :data:`SMOOTH_MAX_GAIN`."""
    if delta == 0.0:
        return lam
    return np.maximum(lam - delta, lam / SMOOTH_MAX_GAIN)


class _KernelPCRBase(KernelParamsMixin, BaseEstimator):
    _is_classifier = False

    def __init__(
        self,
        n_components="relevant",
        *,
        kernel="rbf",
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        fit_intercept=True,
        self_similarity="nearest",
        cv=5,
        max_components=None,
        cv_loss="auto",
        cv_rule="min",
        null_space="exclude",
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
        self.fit_intercept = fit_intercept
        self.self_similarity = self_similarity
        self.cv = cv
        self.max_components = max_components
        self.cv_loss = cv_loss
        self.cv_rule = cv_rule
        self.null_space = null_space
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    _parameter_constraints = {
        "n_components": [Integer(1), Options("relevant", "cv")],
        "fit_intercept": [Boolean()],
        "self_similarity": [Options("nearest", "keep", "smooth")],
        "cv": [Integer(2), Splitter()],
        "max_components": [Integer(1), None],
        "cv_loss": [Options("auto", "squared")],
        "cv_rule": [Options("min", "one_se")],
        "null_space": [Options(*NULL_SPACE_OPTIONS)],
        "eigen_solver": [Options(*EIGEN_SOLVERS)],
        "random_state": [RandomState()],
    }

    # ------------------------------------------------------------ helpers
    def _make_kernel(self, X=None):
        """The kernel; with unequal sample weights, the default RBF width ``gamma='scale'``
        is that of the rows repeated by their weights (so that integer weights and repeated
        rows give the same kernel)."""
        weight = getattr(self, "_width_weight", None)
        params = self.kernel_params or {}
        if (weight is not None and X is not None and isinstance(self.kernel, str)
                and kernel_class(self.kernel) is RBFKernel and self.sigma is None
                and self.gamma in (None, "scale") and isinstance(params, dict)
                and not {"sigma", "gamma", "c"} & set(params)):
            return make_kernel(self.kernel, gamma=_weighted_scale_gamma(X, weight),
                               kernel_params=params)
        return super()._make_kernel(X)

    def _check_params(self, n):
        """The declared constraints, then ``n_components`` against the n training samples."""
        params = validate_params(self)
        nc = params["n_components"]
        if isinstance(nc, int) and nc > n - 1:
            raise ValueError(
                f"n_components={nc} is larger than n - 1 = {n - 1} (n = {n} training samples)"
            )
        return params

    def _targets(self, y):
        """Target matrix (n, c) for the regression, and bookkeeping."""
        raise NotImplementedError

    def _weights(self, y, sample_weight):
        """The sample weights of the fit (the classifier multiplies in its class weights)."""
        return sample_weight

    def _losses(self, pred, va, y, Y):
        """Per-sample losses of cumulative predictions pred (n_val, D, c) on rows va -> (n_val, D)."""
        raise NotImplementedError

    def _splits(self, y, cv, weight, groups, seed=None):
        """The CV folds ``[(train, val), ...]`` of ``cv`` (validated). An int: shuffled k-fold
        of the groups of identical inputs (``groups``, -1 for the samples of weight 0, which
        are in no fold), seeded by ``random_state``, stratified by class for the classifier
        (a group counts in the class of its smallest label). The copies of a row are never
        split between training and validation, where a model is scored on a point it was fitted
        to; the groups are dealt in the sorted order of their inputs, so that integer weights
        give the folds of the rows repeated. A splitter gets ``groups`` (a group splitter
        uses them). ``seed`` replaces ``random_state`` (the held-out check's folds, fixed
        where ``random_state`` is None)."""
        n = len(y)
        if not isinstance(cv, numbers.Integral):
            splitter = cv if hasattr(cv, "split") else check_cv(cv)  # or (train, test) pairs
            return list(splitter.split(np.zeros((n, 1)), y, groups))
        live = groups >= 0
        G = int(groups.max()) + 1
        if G < 2:
            raise ValueError("cross-validation needs at least 2 distinct samples (with positive weight), got 1")
        if G < cv:
            warnings.warn(
                f"{type(self).__name__}: cv={cv} folds, but only {G} distinct samples (with positive "
                f"weight), which no fold splits: {G} folds, one sample (and its copies) each",
                UserWarning, stacklevel=5)
            cv = G
        order = check_random_state(self.random_state if seed is None else seed).permutation(G)
        if self._is_classifier:
            codes = np.unique(y, return_inverse=True)[1].ravel()
            first = np.full(G, np.iinfo(np.int64).max)
            np.minimum.at(first, groups[live], codes[live])
            order = order[np.argsort(first[order], kind="stable")]
        fold = np.empty(G, dtype=int)
        fold[order] = np.arange(G) % cv
        of = np.where(live, fold[np.maximum(groups, 0)], -1)
        return [(np.flatnonzero(live & (of != k)), np.flatnonzero(of == k)) for k in range(cv)]

    def _basis(self, K, rows, sw, m=None, name=None):
        """Eigenbasis of ``W^{1/2} K W^{1/2}`` on ``rows`` (the samples with positive weight)
        and the targets' contributions; ``sw`` the square-root weights of ``rows``."""
        Kr = K if len(rows) == len(K) else K[np.ix_(rows, rows)]
        if np.any(sw != 1.0):
            Kr = sw[:, None] * Kr * sw[None, :]
        return eigen_basis(Kr, m, solver=self.eigen_solver, random_state=self.random_state, name=name)

    def _smooth_excess(self, K, rows, weight):
        """``self_similarity='smooth'``: the multiple ``delta`` of the identity in the matrix the
        basis decomposes (:func:`_diagonal_excess` of ``rows``, times their common weight),
        which the extension to new points takes off the eigenvalues; 0 otherwise, and with
        unequal weights (whose excess is not a multiple of the identity: the intercept is then
        moved as by 'nearest', :meth:`_excess_weights`)."""
        w = weight[rows]
        if self.self_similarity != "smooth" or np.any(w != w[0]):
            return 0.0
        Kr = K if len(rows) == len(K) else K[np.ix_(rows, rows)]
        return _diagonal_excess(Kr, w) * float(w[0])

    def _excess_weights(self, K, rows, weight):
        """``delta w_j / sum(w)`` on ``rows`` (``delta`` the diagonal excess of their kernel
        matrix, :func:`_diagonal_excess`): the intercept's shift is its product with the
        dual coefficients of ``rows``. None where the intercept is not corrected."""
        w = weight[rows]
        if not (self.fit_intercept and (self.self_similarity == "nearest" or (
                self.self_similarity == "smooth" and np.any(w != w[0])))):
            return None
        Kr = K if len(rows) == len(K) else K[np.ix_(rows, rows)]
        return _diagonal_excess(Kr, weight[rows]) * weight[rows] / float(weight[rows].sum())

    def _fold_bases(self, K, Y, splits, weight, groups):
        """Per CV fold ``(train, val, eigenvalues, eigenvectors, sqrt weights, contributions)``
        of the training part's samples of positive weight, and the largest d every fold has."""
        folds = []
        D = len(Y)
        for tr, va in splits:
            tr = np.asarray(tr)[weight[tr] > 0]
            if len(tr) < 2:
                raise ValueError(
                    f"a cross-validation fold has {len(tr)} training sample(s) with positive weight; "
                    "kernel PCR needs at least 2: use fewer folds"
                )
            sw = np.sqrt(weight[tr])
            basis = self._basis(K, tr, sw)
            lam, U, r = np.maximum(basis.eigenvalues, 0.0), basis.eigenvectors, basis.rank
            contrib = target_contributions(U, Y[tr], sw, fit_intercept=self.fit_intercept)
            D = min(D, r, len(np.unique(groups[tr])) - 1)
            folds.append((tr, va, lam, U, sw, contrib))
        return folds, D

    def _fold_predictions(self, K, fold, weight, D):
        """Predictions (n_val, D, c) of a fold's fits on d = 1 .. D directions at its
        validation samples (:meth:`_fold_bases`)."""
        tr, va, lam, U, sw, contrib = fold
        Phi = (K[np.ix_(va, tr)] @ (sw[:, None] * U[:, :D])) / _smooth_divisor(
            lam[:D], self._smooth_excess(K, tr, weight))  # (n_va, D)
        pred = contrib.cumulative_predictions(Phi)  # (n_va, D, c)
        excess = self._excess_weights(K, tr, weight)
        if excess is not None:
            # the intercept's shift for d = 1 .. D: excess^T dual with
            # dual = sw * U_d Λ_d^{-1} c (see _expansion)
            r = (U[:, :D].T @ (sw * excess)) / lam[:D]
            pred = pred + contrib.cumulative_sums(r)[None, :, :]
        return pred

    def _cv_select(self, K, Y, y, cv, weight, groups):
        n = len(y)
        folds, D = self._fold_bases(K, Y, self._splits(y, cv, weight, groups), weight, groups)
        if self.max_components is not None:
            D = min(D, self.max_components)
        if D < 1:
            raise ValueError("cross-validation folds have kernel matrices of rank 0")
        losses = np.zeros((n, D))  # per-sample validation loss for every d
        for fold in folds:
            va = fold[1]
            pred = self._fold_predictions(K, fold, weight, D)
            if self.cv_loss == "squared":
                losses[va] = ((pred - Y[va][:, None, :]) ** 2).mean(axis=2)
            else:
                losses[va] = self._losses(pred, va, y, Y)
        total = float(weight.sum())
        errs = (weight @ losses) / total
        best = int(np.argmin(errs))
        if self.cv_rule == "one_se":
            # the standard error of the weighted mean, weights counted as repeated samples
            dev = weight @ (losses[:, best] - errs[best]) ** 2
            se = np.sqrt(dev / (total - 1) / total) if total > 1 else 0.0
            best = int(np.argmax(errs <= errs[best] + se))
        return best + 1, errs

    # ---------------------------------------------------------------- fit
    def fit(self, X, y, sample_weight=None):
        """Fit kernel PCR.

        Parameters
        ----------
        X : array-like (n_samples, n_features), kernel matrix, or strings
        y : array-like (n_samples,)
            Real targets (regressor; NaN/inf raise ValueError) or class labels.
        sample_weight : array-like (n_samples,), optional
            Non-negative weights: weighted least squares, with the directions of the
            weighted kernel matrix (the module docstring says what equals repeating rows;
            the default RBF width ``gamma='scale'`` is taken from the weighted variance,
            ``sigma='median'`` from the samples as they are).

        Returns
        -------
        self
        """
        X, y = validate_kernel_input_y(self, X, y, y_numeric=not self._is_classifier)
        n = len(y)
        weight = check_sample_weight(sample_weight, n, who=type(self).__name__)
        Y = self._targets(y)
        weight = self._weights(y, weight)
        if self._is_classifier and (sample_weight is not None or self.class_weight is not None):
            # a class of zero weight would be fitted as absent, yet stay among classes_
            check_weighted_classes(y, weight, who=type(self).__name__, weighted_by="sample_weight times class_weight",
                                   every_class=True)
        if n < 3:
            raise ValueError(f"kernel PCR needs at least 3 samples, got {n} sample(s)")
        params = self._check_params(n)
        self._width_weight = None if np.all(weight == weight[0]) else weight
        try:
            K, kernel, name = train_gram(self, X)
        finally:
            del self._width_weight
        degeneracy = warn_if_degenerate_kernel(K, type(self).__name__, stacklevel=3)
        rows = np.flatnonzero(weight > 0)
        sw = np.sqrt(weight[rows])
        m = cap = None
        if self.max_components is not None and self.n_components != "cv":
            m = cap = min(len(rows), self.max_components + 1)
            if resolve_solver(self.eigen_solver, len(rows), m) == "dense":
                # LAPACK computes the whole spectrum at about the cost of its leading part
                # (n <= 300, or more than n / 5 pairs): it serves the kernel ridge reference and
                # tells whether the cap binds
                m = None
        basis = self._basis(K, rows, sw, m, name)
        lam, U, rank = np.maximum(basis.eigenvalues, 0.0), basis.eigenvectors, basis.rank
        if rank == 0:
            raise rank_error(rank, degeneracy, "kernel PCR has no direction to use")
        groups = np.full(n, -1)
        groups[rows] = duplicate_groups(X[rows], always=True)
        contrib = target_contributions(U, Y[rows], sw, fit_intercept=self.fit_intercept, groups=groups[rows])
        model = two_component_fit(contrib, lam, len(rows), self.null_space, rank=rank,
                                  max_components=params["max_components"])
        if model is not None:
            rel_dim, cut = model.dim, model.model_dim
            nll, s1, s2 = model.nll, model.sigma1_sq, model.sigma2_sq
        else:  # a single direction (besides the constant): it is all there is
            rel_dim, cut, nll, s1, s2 = 1, 1, np.zeros(1), np.full(1, contrib.total), np.zeros(1)
        self.cv_errors_ = None
        if self.n_components == "relevant":
            d = min(rel_dim, rank)
        elif self.n_components == "cv":
            d, self.cv_errors_ = self._cv_select(K, Y, y, params["cv"], weight, groups)
        else:
            d = params["n_components"]
            if d > rank:
                raise ValueError(
                    f"n_components={d} is larger than the numerical rank {rank} of the kernel "
                    "matrix: the prediction would divide by zero eigenvalues"
                )
            if d > (len(lam) if cap is None else cap):
                raise ValueError(f"n_components={d} > max_components={self.max_components}")
        excess = self._excess_weights(K, rows, weight)
        b, dual, fitted_rows = self._expansion(contrib, U, lam, sw, rows, n, d, excess,
                                               self._smooth_excess(K, rows, weight))
        fitted = K @ dual + b
        fitted[rows] = fitted_rows
        self.kernel_ = kernel
        self.X_fit_ = X
        self.eigenvalues_ = lam
        t = contrib.t
        self.s_ = t[:, 0] if t.shape[1] == 1 else t
        self.neg_log_likelihood_ = nll
        self.relevant_dim_ = rel_dim
        self.sigma1_sq_ = float(s1[cut - 1])
        self.sigma2_sq_ = float(s2[cut - 1])
        self.n_components_ = d
        self.intercept_ = b
        self.dual_coef_ = dual
        self.fitted_train_ = fitted
        self._finish_fit(y, Y, weight)
        whole_spectrum = len(lam) == len(rows)
        if isinstance(self.n_components, (int, np.integer)) and not isinstance(self.n_components, bool) \
                and d < min(rel_dim, rank):
            at_ref = self._expansion(contrib, U, lam, sw, rows, n, min(rel_dim, rank), excess)[2]
            self._warn_if_underfit(d, min(rel_dim, rank), Y[rows], fitted[rows], at_ref, weight[rows])
        elif self.n_components == "relevant" and cap is not None and whole_spectrum:
            # the whole spectrum is known: the relevant dimension without the cap
            free = two_component_fit(contrib, lam, len(rows), self.null_space, rank=rank)
            free_dim = min(free.dim, rank) if free is not None else d
            if free_dim > d:
                at_ref = self._expansion(contrib, U, lam, sw, rows, n, free_dim, excess)[2]
                self._warn_if_underfit(d, free_dim, Y[rows], fitted[rows], at_ref, weight[rows],
                                       cause=f"max_components={self.max_components}")
        # where ridge can be compared (the whole spectrum; see _compare_with_ridge)
        far = whole_spectrum and self._points_own_directions(K, weight, groups, d)
        warned = self._compare_with_ridge(lam, U, contrib, Y[rows], sw, groups[rows], d, weight[rows], far)
        if not warned and self.reference_alpha_ is not None and far:
            warned = self._compare_held_out(K, y, Y, weight, groups, d)
        if not warned:
            self._warn_if_no_signal(d)
        return self

    def _points_own_directions(self, K, weight, groups, d):
        """Whether the training points weigh on their own directions: up to
        :data:`HELDOUT_MAX_SAMPLES` samples (of positive weight) and three distinct ones, their
        median self-similarity in excess of their nearest neighbour's
        (:func:`kpm.validation.self_similarity_excess` of the weighted kernel matrix) is at
        least :data:`HELDOUT_SELF_SIMILARITY` times the smallest eigenvalue the model keeps."""
        live = groups >= 0
        if np.count_nonzero(live) > HELDOUT_MAX_SAMPLES or len(np.unique(groups[live])) < 3:
            return False
        sw = np.sqrt(weight[live])
        excess = float(np.median(self_similarity_excess(sw[:, None] * K[np.ix_(live, live)] * sw[None, :])))
        return excess >= HELDOUT_SELF_SIMILARITY * self.eigenvalues_[d - 1]

    def _compare_with_ridge(self, lam, U, contrib, Y, sw, groups, d, weight, far=False):
        """The leave-one-out errors of the model and of kernel ridge regression on the same
        eigendecomposition (:mod:`kpm.relevance.reference`), and the warning when ridge is
        clearly better (:meth:`_clearly_better`). Both None with a partial eigendecomposition,
        which ridge, shrinking every direction, cannot use. ``far``: the points weigh on their
        own directions (:meth:`_points_own_directions`), where the classifier's reference may
        be ridge without an intercept (:meth:`_reference_intercepts`)."""
        self.loo_error_ = self.reference_loo_error_ = self.reference_alpha_ = self.reference_intercept_ = None
        self.heldout_error_ = self.reference_heldout_error_ = self.constant_loo_error_ = None
        if len(lam) < len(Y):
            return False
        zc = sw[:, None] * (Y - contrib.mean)
        kw = dict(sqrt_weight=sw, groups=groups, intercept=self.fit_intercept)
        score = lambda res: self._loo_error(res, Y, weight)  # noqa: E731
        # the residual filter of the model: the directions after the first d
        self.loo_error_ = float(score(loo_residuals((np.arange(len(lam)) >= d).astype(float), U, zc, **kw)))
        # ... and of the constant alone (every direction filtered out)
        constant = self.constant_loo_error_ = float(score(loo_residuals(np.ones(len(lam)), U, zc, **kw)))
        ref = None
        for intercept in self._reference_intercepts(far):  # the smallest leave-one-out error wins
            z = zc if intercept == self.fit_intercept else sw[:, None] * Y
            candidate = ridge_reference(lam, U, z, sw, groups, intercept, score)
            if ref is None or candidate.errors.min() < ref.errors.min():
                ref, self.reference_intercept_ = candidate, intercept
        self.reference_alpha_ = ref.alpha
        self.reference_loo_error_ = float(ref.errors.min())
        if self._clearly_better(self.reference_loo_error_, self.loo_error_, float(weight.sum())):
            warnings.warn(
                f"{type(self).__name__}: kernel ridge {self._reference_name} on the same kernel has a "
                f"clearly smaller leave-one-out {self._loo_name} ({self.reference_loo_error_:.4g} against "
                f"{self.loo_error_:.4g} at d = {d}; {self._constant_name} alone: {constant:.4g}): use "
                f"sklearn.kernel_ridge.KernelRidge(alpha={ref.alpha:.3g}, kernel=...) with this "
                f"kernel{self._reference_hint}, or another kernel (see reference_loo_error_, "
                "reference_alpha_)",
                ReferenceModelWarning,
                stacklevel=3,
            )
            return True
        return False

    def _warn_if_no_signal(self, d):
        """Warn where, with an intercept, the model's leave-one-out error is not below that of
        the constant alone (``constant_loo_error_``: the mean of the targets, the classifier's
        majority class): its d directions carry nothing it can use."""
        constant = self.constant_loo_error_
        if not self.fit_intercept or constant is None or not constant > 0 or self.loo_error_ < constant:
            return
        warnings.warn(
            f"{type(self).__name__}: its leave-one-out {self._loo_name} at d = {d} ({self.loo_error_:.4g}) "
            f"is not below that of {self._constant_name} alone ({constant:.4g}): by this estimate the "
            "kernel PCA directions it keeps carry no signal it can use, and it predicts no better than "
            f"that constant (kernel ridge {self._reference_name} on the same kernel: {self.reference_loo_error_:.4g} "
            f"at alpha={self.reference_alpha_:.3g}); try another kernel or width (see "
            "constant_loo_error_, reference_loo_error_)",
            ReferenceModelWarning,
            stacklevel=3,
        )

    def _reference_intercepts(self, far):
        """Whether the kernel ridge references fit an intercept: as the model does."""
        return (self.fit_intercept,)

    def _compare_held_out(self, K, y, Y, weight, groups, d):
        """The model and kernel ridge regression (at ``reference_alpha_``) on held-out folds.

        The leave-one-out error of the model (:meth:`_compare_with_ridge`) keeps the
        directions of all the points, each left-out point's among them; where a few points
        make a direction (few points, or many dimensions) that overrates the model, and
        ridge's leave-one-out error, exact, can look no better although it is. Up to
        :data:`HELDOUT_MAX_SAMPLES` samples the two are also compared on
        :data:`HELDOUT_FOLDS` folds (copies of a row in one fold), each fold's eigenbasis
        computed without its validation points: ``heldout_error_`` (the model on its first
        ``min(d, the folds' rank)`` directions) and ``reference_heldout_error_``. Where ridge is
        clearly better there (:meth:`_clearly_better`), the warning names it. Run where the
        points weigh on their own directions (:meth:`_points_own_directions`)."""
        n_groups = len(np.unique(groups[groups >= 0]))
        splits = self._splits(y, min(HELDOUT_FOLDS, n_groups), weight, groups,
                              seed=0 if self.random_state is None else self.random_state)
        folds, D = self._fold_bases(K, Y, splits, weight, groups)
        dd = min(d, D)
        if dd < 1:
            return False
        mine, ridge = np.zeros(len(y)), np.zeros(len(y))
        for fold in folds:
            va = fold[1]
            mine[va] = self._losses(self._fold_predictions(K, fold, weight, dd)[:, dd - 1:], va, y, Y)[:, 0]
            tr, _, lam, U, sw, contrib = fold
            pred = ridge_predictions(K[np.ix_(va, tr)], Y[tr], lam, U, sw, self.reference_alpha_,
                                     self.reference_intercept_)
            ridge[va] = self._losses(pred[:, None, :], va, y, Y)[:, 0]
        total = float(weight.sum())
        self.heldout_error_ = float(weight @ mine / total)
        self.reference_heldout_error_ = float(weight @ ridge / total)
        scale = float(weight @ ((Y - weight @ Y / total) ** 2).mean(axis=1) / total)
        if self._clearly_better(self.reference_heldout_error_, self.heldout_error_, total, variance=scale):
            warnings.warn(
                f"{type(self).__name__}: kernel ridge {self._reference_name} on the same kernel has a "
                f"clearly smaller {self._loo_name} on {len(folds)} held-out folds whose eigenbases leave "
                f"their points out ({self.reference_heldout_error_:.4g} against {self.heldout_error_:.4g} "
                f"at d = {dd}; the leave-one-out errors, which keep each point's own directions: "
                f"{self.reference_loo_error_:.4g} against {self.loo_error_:.4g}): use "
                f"sklearn.kernel_ridge.KernelRidge(alpha={self.reference_alpha_:.3g}, kernel=...) with this "
                f"kernel{self._reference_hint}, or another kernel (see reference_heldout_error_)",
                ReferenceModelWarning,
                stacklevel=3,
            )
            return True
        return False

    @staticmethod
    def _expansion(contrib, U, lam, sw, rows, n, d, excess=None, smooth=0.0):
        """``(intercept, dual coefficients (n, c), training fit on rows)`` of the fit on d
        directions, the intercept moved by ``excess @ dual[rows]`` (see
        :meth:`_excess_weights`); the training fit is exact:
        ``(W^1/2 K W^1/2) v_i = λ_i v_i``."""
        b, coef = contrib.coefficients(d)
        dual = np.zeros((n, coef.shape[1]))
        dual[rows] = sw[:, None] * (U[:, :d] @ (coef / _smooth_divisor(lam[:d], smooth)[:, None]))
        if excess is not None:
            b = b + excess @ dual[rows]
        return b, dual, U[:, :d] @ coef / sw[:, None] + b

    def _warn_if_underfit(self, d, d_ref, Y, fitted, at_ref, weight, cause=None):
        """Warn when an explicit d (or the relevant dimension under the cap ``cause``, the
        ``max_components`` that bound it) fits the training set clearly worse than the
        relevant dimension d_ref would (the fit there costs one product with the
        eigenvectors)."""
        mine, ref, what = self._fit_quality(Y, fitted, at_ref, weight)
        if mine is None:
            return
        if cause is None:
            setting, advice = f"n_components={d}", "use n_components='relevant' or 'cv', or a larger n_components"
        else:
            setting, advice = f"{cause} (d = {d})", "raise max_components, or leave it None"
        warnings.warn(
            f"{type(self).__name__} with {setting} fits its training data clearly worse than at "
            f"the relevant dimension {d_ref} ({what} {mine:.3f} against {ref:.3f}): {advice}",
            UserWarning,
            stacklevel=4,
        )

    def _finish_fit(self, y, Y, weight):
        pass

    def _raw_predict(self, X):
        check_is_fitted(self)
        X = validate_kernel_input(self, X, reset=False)
        Kx = cross_gram(self.kernel_, X, self.X_fit_)
        return Kx @ self.dual_coef_ + self.intercept_


class KernelPCRRegressor(RegressorMixin, _KernelPCRBase):
    r"""Kernel principal component regression (Braun, Buhmann & Müller).

    Least squares of y on the first d eigenvectors :math:`u_1, \dots, u_d` of the
    (uncentred) training kernel matrix :math:`K = U \Lambda U^\top`. By default
    (``fit_intercept=True``) with an unpenalised constant, on
    :math:`\operatorname{span}\{1, u_1, \dots, u_d\}`, and with d the relevant dimension
    (``n_components='relevant'``: the estimate of :class:`RelevantDimension` on the same
    kernel, by default the RBF kernel with ``gamma='scale'``, and the same data); an int
    fixes d, ``'cv'`` chooses it by 5-fold cross-validation of the squared error. A new
    point is predicted by the kernel expansion

    .. math::

        f(x) = \kappa(x)^\top a + b, \qquad \kappa(x) = \big(k(x_i, x)\big)_i,

    :math:`a` = ``dual_coef_``, :math:`b` = ``intercept_`` (without an intercept,
    :math:`a = U_d \Lambda_d^{-1} U_d^\top y`); by default (``self_similarity='nearest'``)
    the intercept discounts the similarity of each training point with itself, which a new
    point lacks. The module docstring of :mod:`kpm.relevance.pcr` derives the fit.

    Parameters
    ----------
    n_components : int, 'relevant' or 'cv', default='relevant'
        Number d of leading kernel PCA directions: fixed, the relevant-dimension
        estimate, or chosen by k-fold CV of the squared error.
    kernel : str, callable or Kernel, default='rbf'
        See :func:`kpm.kernels.make_kernel`; ``'precomputed'`` and
        :class:`~kpm.kernels.WeightedDegreeKernel` are accepted.
    sigma, gamma, degree, coef0, kernel_params
        Kernel parameters.
    fit_intercept : bool, default=True
        Fit an unpenalised constant with the d directions (least squares on
        :math:`\operatorname{span}\{1, u_1, \dots, u_d\}`, see the module docstring), and estimate the relevant
        dimension from the contributions after it. False: the slides' model, without a
        constant (its predictions tend to 0 away from the data, and a target's offset is
        fitted only as far as the leading directions can make a constant).
    self_similarity : {'nearest', 'keep', 'smooth'}, default='nearest'
        How the model treats each training point's similarity with itself, which a new
        point lacks. 'nearest': the intercept is moved by ``delta * mean_w(dual_coef_)``,
        fitting it to the training points' values with the part ``delta`` of their
        self-similarity that every point has in excess of its nearest neighbour's removed
        (large only where every point is far from every other, as in high dimensions; 0 when
        a point has an exact duplicate or a weight of 2 or more). 'keep': the intercept of
        the training fit, Braun, Lange & Buhmann's expansion as it is. Both only with
        ``fit_intercept=True``; the user guide derives them. 'smooth': the kernel matrix is
        taken as a smooth one plus ``delta I`` (El Karoui 2010), whose eigenvectors are
        those of K and eigenvalues ``lambda_i - delta``: a new point's kernel row sees the
        smooth part only, so the extension divides by ``lambda_i - delta`` (at least
        ``lambda_i / SMOOTH_MAX_GAIN``) instead of ``lambda_i``, and the intercept is the
        training fit's (with unequal sample weights, whose excess is no multiple of the
        identity, the intercept is moved as by 'nearest'). The training fit, the relevant
        dimension and the leave-one-out errors are the same for the three; the CV folds
        predict their validation points as the option says. On 30 points in R^500 (two
        Gaussian classes) kernel PCR's test error was 18 % with 'nearest', 4 % with 'smooth'
        (a tuned SVC on the same kernel: 2 %); on low-dimensional data ``delta`` is about 0
        and the three agree. For regression it is worse: the shrinkage by
        ``(lambda_i - delta) / lambda_i`` that the other two give new points regularises the
        fit of the noise (fuzz harness, 30 to 60 points in R^200..R^600: test R^2 -1.08
        against 0.06 for 'nearest', kernel ridge 0.18).
    cv : int, CV splitter or iterable of (train, test) index pairs, default=5
        Folds for ``n_components='cv'`` (an int: shuffled k-fold of the distinct inputs,
        identical rows in one fold, seeded by ``random_state``; stratified by class for the
        classifier).
    max_components : int, optional
        Largest d considered by 'relevant' / 'cv' (and, for 'relevant' or a fixed
        d, allows a partial eigensolver). Where the dense solver runs anyway (n <= 300, or
        more than n / 5 pairs), the whole spectrum is computed: the kernel ridge reference
        is made, and a cap below the relevant dimension whose training fit is clearly worse
        than there (as for an integer ``n_components``) warns.
    cv_loss : {'auto', 'squared', 'zero_one'}, default='auto'
        CV criterion for ``n_components='cv'``: 'auto' is the squared error for the
        regressor and the 0-1 error for the classifier; the classifier also accepts
        'squared' (squared error of the ±1 coded decision values).
    cv_rule : {'min', 'one_se'}, default='min'
        'min': the d with the smallest CV loss (ties: smaller d); 'one_se': the smallest d
        whose CV loss is within one standard error (of the per-sample losses at the
        minimum) of the minimum.
    null_space : {'exclude', 'noise'}, default='exclude'
        Treatment of the null space of a singular K in the relevant-dimension estimate,
        see :class:`kpm.relevance.RelevantDimension`.
    eigen_solver : {'auto', 'dense', 'arpack', 'randomized'}, default='auto'
        Eigensolver of the kernel matrix (the registry of :mod:`kpm.spectral`); only a
        partial decomposition (``max_components`` with a fixed or relevant d) uses one
        other than LAPACK's.
    random_state : int, RandomState or None
        Seeds the CV shuffling and partial eigensolvers.

    Attributes
    ----------
    n_components_ : int
        The d used.
    relevant_dim_ : int
        The relevant-dimension estimate d_hat (whatever ``n_components`` is; the split
        :func:`kpm.plotting.plot_relevance` draws).
    s_ : ndarray
        Contributions the relevant-dimension model is fitted to: :math:`U^\top y` without an
        intercept, else those of the directions made orthogonal to the constant
        (:class:`kpm.relevance.RelevantDimension`'s ``s_``).
    neg_log_likelihood_ : ndarray
        The two-component criterion for ``d = 1 ..``.
    sigma1_sq_, sigma2_sq_ : float
        Noise levels of the two-component fit at d_hat.
    eigenvalues_ : ndarray
        Eigenvalues of K (decreasing; of :math:`W^{1/2} K W^{1/2}` with sample weights).
    dual_coef_ : ndarray (n, 1)
        The expansion: :math:`f(x) = \kappa(x)^\top a + b` with :math:`a` = ``dual_coef_``
        and :math:`b` = ``intercept_`` (without an intercept :math:`a = U_d \Lambda_d^{-1}
        U_d^\top y`).
    intercept_ : ndarray (1,)
        The constant of the expansion (0 with ``fit_intercept=False``).
    fitted_train_ : ndarray (n, 1)
        The fit at the training points (without an intercept :math:`\Pi_d y`).
    residual_variance_ : float
        :math:`\frac1n \sum_i (y_i - \hat y_i)^2` (weighted with sample weights), the estimated noise
        variance of the targets.
    cv_errors_ : ndarray or None
        Mean CV squared error per d (for ``n_components='cv'``).
    loo_error_ : float or None
        The model's leave-one-out mean squared error (weighted; the copies of a row left
        out together; its directions kept), see the module docstring.
    reference_loo_error_, reference_alpha_ : float or None
        The smallest leave-one-out mean squared error of kernel ridge regression on the same
        kernel, and its ``alpha`` (``sklearn.kernel_ridge.KernelRidge``'s); a
        :class:`~kpm.exceptions.ReferenceModelWarning` when it is below ``RIDGE_MARGIN``
        times ``loo_error_``.
    reference_intercept_ : bool or None
        Whether that ridge has an intercept (here as the model: ``fit_intercept``).
    constant_loo_error_ : float or None
        The leave-one-out mean squared error of the mean of y alone; with an intercept, a
        :class:`~kpm.exceptions.ReferenceModelWarning` when ``loo_error_`` is not below it
        (and no warning named kernel ridge).
    heldout_error_, reference_heldout_error_ : float or None
        The mean squared errors of the model and of that kernel ridge regression on
        ``HELDOUT_FOLDS`` held-out folds whose eigenbases leave their points out (up to
        ``HELDOUT_MAX_SAMPLES`` samples, where the leave-one-out comparison did not warn;
        where the self-similarity weighs on the model's directions, ``HELDOUT_SELF_SIMILARITY``;
        None otherwise); the same warning when ridge's is below ``RIDGE_MARGIN`` times the
        model's, or below it by ``HELDOUT_R2_GAP`` times the targets' variance.
    kernel_, X_fit_, n_features_in_
        As in :class:`kpm.relevance.RelevantDimension`.

    See Also
    --------
    KernelPCRClassifier : The same model on ±1 labels.
    RelevantDimension : The dimension estimate alone.
    sklearn.kernel_ridge.KernelRidge : Shrinks every kernel direction instead of
        truncating.

    Examples
    --------
    >>> import numpy as np
    >>> from kpm import KernelPCRRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, (200, 1))
    >>> y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(200)
    >>> reg = KernelPCRRegressor(sigma=1.0).fit(X, y)
    >>> reg.n_components_             # the relevant dimension
    6
    >>> print(reg.predict([[-1.5], [1.5]]).round(2))  # sin(1.5) = 0.997
    [-1.02  1.03]
    >>> shifted = KernelPCRRegressor(sigma=1.0).fit(X, y + 100)  # the intercept takes the offset
    >>> print((shifted.predict([[-1.5], [1.5]]) - 100).round(2))
    [-1.02  1.03]
    """

    def _targets(self, y):
        return np.asarray(y, dtype=float)[:, None]

    def _losses(self, pred, va, y, Y):
        return ((pred - Y[va][:, None, :]) ** 2).mean(axis=2)

    _reference_name = "regression"
    _loo_name = "squared error"
    _constant_name = "the mean of y"

    @property
    def _reference_hint(self):
        return " (fitted to y minus its mean)" if self.reference_intercept_ else ""

    def _finish_fit(self, y, Y, weight):
        self.residual_variance_ = float(weight @ ((Y - self.fitted_train_) ** 2)[:, 0] / weight.sum())

    @staticmethod
    def _loo_error(residuals, Y, weight):
        """The weighted mean squared leave-one-out residual."""
        return weight @ (residuals**2).mean(axis=1) / weight.sum()

    @staticmethod
    def _clearly_better(ref, mine, total, variance=None):
        """Ridge's MSE below :data:`RIDGE_MARGIN` times the model's; on held-out folds
        (``variance``: the targets' weighted variance) also below it by
        :data:`HELDOUT_R2_GAP` times that variance (an R^2 higher by that much)."""
        return ref < RIDGE_MARGIN * mine or (variance is not None and mine - ref >= HELDOUT_R2_GAP * variance)

    def _fit_quality(self, Y, fitted, at_ref, weight):
        """Training R^2 at the chosen d and at the reference: (mine, ref, name) when clearly
        worse (by more than 0.1), else (None, None, None)."""
        mean = weight @ Y[:, 0] / weight.sum()
        total = weight @ (Y[:, 0] - mean) ** 2
        if not total > 0:
            return None, None, None
        mine = 1.0 - float(weight @ (Y[:, 0] - fitted[:, 0]) ** 2 / total)
        ref = 1.0 - float(weight @ (Y[:, 0] - at_ref[:, 0]) ** 2 / total)
        return (mine, ref, "training R^2") if mine < ref - 0.1 else (None, None, None)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a cap on d binds where the target needs more directions: on scikit-learn's check
        # data (a linear function of 1 of 10 standardised features) the relevant dimension is
        # 11 and the training R^2 of every d <= 5 at most 0.18 (the fit warns that the cap
        # binds, and that kernel ridge regression is better)
        tags.regressor_tags.poor_score = self.max_components is not None
        return tags

    def predict(self, X):
        r"""Predict :math:`f(x) = \kappa(x)^\top a + b` (``dual_coef_``, ``intercept_``).

        Parameters
        ----------
        X : array-like, kernel rows against the training set, or strings

        Returns
        -------
        y_pred : ndarray (n_samples,)
        """
        return self._raw_predict(X)[:, 0]


class KernelPCRClassifier(ClassifierMixin, _KernelPCRBase):
    r"""Kernel PCR classifier: least squares on ±1 labels in the first d kernel PCA directions.

    By default d is the relevant dimension of the labels (``n_components='relevant'``, as
    in :class:`RelevantDimension`) and the least squares have an intercept
    (``fit_intercept=True``), on the RBF kernel with ``gamma='scale'``. Binary problems regress the ±1 coded labels (+1 = ``classes_[1]``) and take
    the sign; more classes use one ±1 column per class and the arg-max. See
    :class:`KernelPCRRegressor` for the parameters; ``n_components='cv'`` scores
    the 0-1 error (stratified shuffled folds when every class has ``cv`` members).
    With an intercept (the default) each column has its constant. Probabilities:
    wrap it in :class:`sklearn.calibration.CalibratedClassifierCV`.

    Parameters
    ----------
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, multiplied into the sample weights as in
        :class:`sklearn.svm.SVC`: ``'balanced'`` weighs class c by
        :math:`n / (n_{\text{classes}}\, n_c)`, with the counts weighted by ``sample_weight``
        (:func:`sklearn.utils.class_weight.compute_class_weight`). Other parameters:
        :class:`KernelPCRRegressor`.

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    label_noise_ : float
        Estimated label noise: the training disagreement between y and the
        class predicted by the training fit (the "est. error rate" of Braun, Buhmann &
        Müller; weighted with sample weights).
    intercept_ : ndarray (1,) or (n_classes,)
        The constants of the decision functions.
    n_components_, relevant_dim_, s_, neg_log_likelihood_, sigma1_sq_,
    sigma2_sq_, eigenvalues_, dual_coef_, fitted_train_, cv_errors_, kernel_,
    X_fit_, n_features_in_
        As in :class:`KernelPCRRegressor` (``cv_errors_`` is the 0-1 error, or the
        squared error with ``cv_loss='squared'``).
    loo_error_, reference_loo_error_, reference_alpha_ : float or None
        Leave-one-out error rates of the model and of one-vs-rest kernel ridge regression on
        the ±1 codes (the class of the largest value), and its ``alpha``.
    reference_intercept_ : bool or None
        Whether that ridge has an intercept: as the model, or without one where the points
        weigh on their own directions and its leave-one-out error is smaller so (module
        docstring).
    constant_loo_error_ : float or None
        The leave-one-out error rate of the intercept alone (the class of the largest mean
        code, the majority class), with the same warning as :class:`KernelPCRRegressor`'s.
    heldout_error_, reference_heldout_error_ : float or None
        Their error rates on held-out folds, as in :class:`KernelPCRRegressor`.

    See Also
    --------
    KernelPCRRegressor : The regression model it applies to ±1 labels.
    RelevantDimension : The dimension estimate alone.
    KernelProjectionMachine : Hinge loss on the same nested subspaces.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kpm import KernelPCRClassifier
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> clf = KernelPCRClassifier(sigma=0.5).fit(X, y)
    >>> clf.n_components_, clf.label_noise_  # relevant dimension, estimated label noise
    (17, 0.02)
    >>> X_test, y_test = make_moons(1000, noise=0.2, random_state=1)
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.963
    """

    _is_classifier = True
    _parameter_constraints = {
        **_KernelPCRBase._parameter_constraints,
        "cv_loss": [Options("auto", "zero_one", "squared")],
        "class_weight": [Options("balanced"), ClassWeights(), None],
    }

    def __init__(
        self,
        n_components="relevant",
        *,
        kernel="rbf",
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        fit_intercept=True,
        self_similarity="nearest",
        class_weight=None,
        cv=5,
        max_components=None,
        cv_loss="auto",
        cv_rule="min",
        null_space="exclude",
        eigen_solver="auto",
        random_state=None,
    ):
        super().__init__(
            n_components, kernel=kernel, sigma=sigma, gamma=gamma, degree=degree, coef0=coef0,
            kernel_params=kernel_params, fit_intercept=fit_intercept,
            self_similarity=self_similarity, cv=cv,
            max_components=max_components, cv_loss=cv_loss, cv_rule=cv_rule,
            null_space=null_space, eigen_solver=eigen_solver, random_state=random_state,
        )
        self.class_weight = class_weight

    def _weights(self, y, sample_weight):
        if self.class_weight is None:
            return sample_weight
        cw = validate_params(self, {"class_weight": self._parameter_constraints["class_weight"]})["class_weight"]
        if isinstance(cw, dict):
            unknown = [c for c in cw if c not in self.classes_]
            if unknown:
                raise ValueError(
                    f"class_weight names class(es) {unknown} not among the classes of y "
                    f"{self.classes_.tolist()}"
                )
        # 'balanced' from the weighted class counts: the same as for the repeated rows
        per_class = compute_class_weight(cw, classes=self.classes_, y=y, sample_weight=sample_weight)
        with np.errstate(invalid="ignore"):
            out = sample_weight * per_class[np.searchsorted(self.classes_, y)]
        return np.where(sample_weight > 0, out, 0.0)

    def _targets(self, y):
        self.classes_, _, Y = one_vs_rest(y, type(self).__name__)
        return Y

    def _decide(self, F):
        """Class indices from decision values F (..., c)."""
        if F.shape[-1] == 1:
            return (F[..., 0] > 0).astype(int)
        return np.argmax(F, axis=-1)

    def _losses(self, pred, va, y, Y):
        true = self._decide(Y[va])  # (n_va,)
        return (self._decide(pred) != true[:, None]).astype(float)

    def _fit_quality(self, Y, fitted, at_ref, weight):
        """Training accuracy at the chosen d and at the reference: (mine, ref, name) when
        clearly worse (by more than 5 %, or two samples), else (None, None, None)."""
        true = self._decide(Y)
        mine = float(weight @ (self._decide(fitted) == true) / weight.sum())
        ref = float(weight @ (self._decide(at_ref) == true) / weight.sum())
        clearly = mine < ref - max(0.05, 2.0 / len(Y))
        return (mine, ref, "training accuracy") if clearly else (None, None, None)

    _reference_name = "classification"
    _loo_name = "error rate"
    _constant_name = "the intercept"
    @property
    def _reference_hint(self):
        return (" on the ±1 codes of the classes (one column per class against the rest; the class of the "
                "largest value)" + (", fitted to the codes minus their mean" if self.reference_intercept_ else
                                    ", fitted to the codes as they are (no intercept: KernelRidge's own fit)"))

    def _reference_intercepts(self, far):
        """Also ridge without an intercept where the points weigh on their own directions
        (``far``): far from every training point its values fall to 0 instead of the codes' mean,
        the majority class (9-13 points of 3-6 classes at a narrow width, or 30 points in R^500:
        test errors of 0.02-0.05 against 0.16-0.45 for kernel PCR with its intercept)."""
        return (True, False) if self.fit_intercept and far else (self.fit_intercept,)

    def _loo_error(self, residuals, Y, weight):
        """The weighted share of samples whose leave-one-out decision values ``Y - residuals``
        give another class."""
        return weight @ (self._decide(Y - residuals) != self._decide(Y)) / weight.sum()

    @staticmethod
    def _clearly_better(ref, mine, total, variance=None):
        """Ridge's error rate below :data:`RIDGE_MARGIN` times the model's, and by the weight
        of two samples at least (``total``: the sum of the weights); ``variance`` (the
        regressor's held-out R^2 test) does not apply to labels."""
        return ref < RIDGE_MARGIN * mine and (mine - ref) * total >= 2.0 - 1e-9

    def _finish_fit(self, y, Y, weight):
        train_classes = self._decide(self.fitted_train_)
        self.label_noise_ = float(weight @ (train_classes != self._decide(Y)) / weight.sum())
        warn_if_degenerate_model(self.classes_[train_classes], y, self.classes_, type(self).__name__,
                                 stacklevel=4)

    def decision_function(self, X):
        """Decision values: ``f(x)`` (binary, positive = ``classes_[1]``) or one per class.

        Returns
        -------
        F : ndarray (n_samples,) or (n_samples, n_classes)
        """
        F = self._raw_predict(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        """Predicted class labels.

        Returns
        -------
        y_pred : ndarray (n_samples,)
        """
        F = self._raw_predict(X)
        return self.classes_[self._decide(F)]
