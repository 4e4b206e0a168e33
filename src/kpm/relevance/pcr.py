"""Kernel principal component regression (kernel PCR) and classification.

Braun, Buhmann & Müller ("Learning in kernel feature spaces", talk slides): with the eigendecomposition ``K = U Λ U^T``
of the (uncentred) training kernel matrix and the contributions
``s = U^T y``, the fit on the first d kernel PCA directions is

    training fit       Π_d y = U_d U_d^T y = sum_{i<=d} u_i s_i
    new point          f(x)  = κ(x)^T U_d Λ_d^{-1} U_d^T y

(least squares on the first d kernel PCA coordinates; at a training point
``f(x_j) = (Π_d y)_j``). Classification takes the sign (binary) or, for more
than two classes, the arg-max over one-vs-rest ±1 columns that share the one
eigendecomposition (the pooled ``sum_c s_ic^2`` fixes one common d).

The number of directions d is

* an integer (``1 <= d <= n-1``, and at most the numerical rank of K, since
  ``Λ_d^{-1}`` must exist),
* ``'relevant'`` (default): the relevant-dimension estimate ``d_hat`` of
  :class:`kpm.relevance.RelevantDimension` (clipped to the numerical rank), or
* ``'cv'``: k-fold cross-validation of the squared error (regressor) or the 0-1
  error (classifier) over ``d = 1 .. D``; ties go to the smaller d. All d are
  scored from one eigendecomposition per fold (cumulative sums over components).

Strings (weighted-degree kernel) and precomputed kernels are accepted as in
:mod:`kpm.relevance`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import KFold, StratifiedKFold, check_cv
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from kpm.base import (
    KernelParamsMixin,
    cross_gram,
    train_gram,
    validate_kernel_input,
    validate_kernel_input_y,
)
from kpm.relevance.dimension import (
    NULL_SPACE_OPTIONS,
    cap_dim,
    model_directions,
    rank_error,
    relevant_dimension_from_contributions,
)
from kpm.spectral.basis import EIGEN_SOLVERS, eigen_basis
from kpm.validation import (
    Integer,
    Options,
    RandomState,
    Splitter,
    validate_params,
    warn_if_degenerate_kernel,
    warn_if_degenerate_model,
)

__all__ = ["KernelPCRRegressor", "KernelPCRClassifier"]


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
        self.cv = cv
        self.max_components = max_components
        self.cv_loss = cv_loss
        self.cv_rule = cv_rule
        self.null_space = null_space
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    _parameter_constraints = {
        "n_components": [Integer(1), Options("relevant", "cv")],
        "cv": [Integer(2), Splitter()],
        "max_components": [Integer(1), None],
        "cv_loss": [Options("auto", "squared")],
        "cv_rule": [Options("min", "one_se")],
        "null_space": [Options(*NULL_SPACE_OPTIONS)],
        "eigen_solver": [Options(*EIGEN_SOLVERS)],
        "random_state": [RandomState()],
    }

    # ------------------------------------------------------------ helpers
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

    def _losses(self, pred, va, y, Y):
        """Per-sample losses of cumulative predictions pred (n_val, D, c) on rows va -> (n_val, D)."""
        raise NotImplementedError

    def _splitter(self, y, cv):
        """The CV splitter of ``cv`` (validated): an int is shuffled (stratified) k-fold."""
        if hasattr(cv, "split"):
            return cv
        if not isinstance(cv, int):  # an iterable of (train, test) pairs
            return check_cv(cv)
        if self._is_classifier:
            _, counts = np.unique(y, return_counts=True)
            if counts.min() >= cv:
                return StratifiedKFold(cv, shuffle=True, random_state=self.random_state)
        return KFold(cv, shuffle=True, random_state=self.random_state)

    def _cv_select(self, K, Y, y, cv):
        n = len(y)
        splits = list(self._splitter(y, cv).split(np.zeros((n, 1)), y))
        fold_preds = []
        D = n
        for tr, va in splits:
            basis = eigen_basis(K[np.ix_(tr, tr)], solver=self.eigen_solver)
            w, U, r = np.maximum(basis.eigenvalues, 0.0), basis.eigenvectors, basis.rank
            D = min(D, r, len(tr) - 1)
            fold_preds.append((tr, va, w, U))
        if self.max_components is not None:
            D = min(D, self.max_components)
        if D < 1:
            raise ValueError("cross-validation folds have kernel matrices of rank 0")
        losses = np.zeros((n, D))  # per-sample validation loss for every d
        for tr, va, w, U in fold_preds:
            coef = (U[:, :D].T @ Y[tr]) / w[:D, None]  # (D, c)
            A = K[np.ix_(va, tr)] @ U[:, :D]  # (n_va, D)
            pred = np.cumsum(A[:, :, None] * coef[None, :, :], axis=1)  # (n_va, D, c)
            if self.cv_loss == "squared":
                losses[va] = ((pred - Y[va][:, None, :]) ** 2).mean(axis=2)
            else:
                losses[va] = self._losses(pred, va, y, Y)
        errs = losses.mean(axis=0)
        best = int(np.argmin(errs))
        if self.cv_rule == "one_se":
            se = losses[:, best].std(ddof=1) / np.sqrt(n) if n > 1 else 0.0
            best = int(np.argmax(errs <= errs[best] + se))
        return best + 1, errs

    # ---------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit kernel PCR.

        Parameters
        ----------
        X : array-like (n_samples, n_features), kernel matrix, or strings
        y : array-like (n_samples,)
            Real targets (regressor; NaN/inf raise ValueError) or class labels.

        Returns
        -------
        self
        """
        X, y = validate_kernel_input_y(self, X, y, y_numeric=not self._is_classifier)
        Y = self._targets(y)
        n = len(y)
        if n < 3:
            raise ValueError(f"kernel PCR needs at least 3 samples, got {n} sample(s)")
        params = self._check_params(n)
        K, kernel, name = train_gram(self, X)
        degeneracy = warn_if_degenerate_kernel(K, type(self).__name__, stacklevel=3)
        m = None
        if self.max_components is not None and self.n_components != "cv":
            m = min(n, self.max_components + 1)
        basis = eigen_basis(K, m, solver=self.eigen_solver, random_state=self.random_state, name=name)
        w, U, rank = np.maximum(basis.eigenvalues, 0.0), basis.eigenvectors, basis.rank
        if rank == 0:
            raise rank_error(rank, degeneracy, "kernel PCR has no direction to use")
        s = U.T @ Y  # (m, c)
        s_used, total, n_used, _, max_cut = model_directions(
            w, s, float((Y**2).sum()), n, self.null_space, rank=rank
        )
        if n_used >= 2:
            rel_dim, nll, s1, s2 = relevant_dimension_from_contributions(
                s_used, total=total, n=n_used, max_components=cap_dim(params["max_components"], max_cut)
            )
        else:  # rank-1 kernel matrix: one direction is all there is
            rel_dim, nll, s1, s2 = 1, np.zeros(1), np.full(1, total), np.zeros(1)
        self.cv_errors_ = None
        if self.n_components == "relevant":
            d = min(rel_dim, rank)
        elif self.n_components == "cv":
            d, self.cv_errors_ = self._cv_select(K, Y, y, params["cv"])
        else:
            d = params["n_components"]
            if d > rank:
                raise ValueError(
                    f"n_components={d} is larger than the numerical rank {rank} of the kernel "
                    "matrix: the prediction would divide by zero eigenvalues"
                )
            if d > len(w):
                raise ValueError(f"n_components={d} > max_components={self.max_components}")
        coef = s[:d] / w[:d, None]
        self.kernel_ = kernel
        self.X_fit_ = X
        self.eigenvalues_ = w
        self.s_ = s[:, 0] if s.shape[1] == 1 else s
        self.neg_log_likelihood_ = nll
        self.relevant_dim_ = rel_dim
        self.sigma1_sq_ = float(s1[rel_dim - 1])
        self.sigma2_sq_ = float(s2[rel_dim - 1])
        self.n_components_ = d
        self.dual_coef_ = U[:, :d] @ coef  # (n, c)
        self.fitted_train_ = U[:, :d] @ s[:d]  # Π_d Y
        self._finish_fit(y, Y)
        return self

    def _finish_fit(self, y, Y):
        pass

    def _raw_predict(self, X):
        check_is_fitted(self)
        X = validate_kernel_input(self, X, reset=False)
        Kx = cross_gram(self.kernel_, X, self.X_fit_)
        return Kx @ self.dual_coef_


class KernelPCRRegressor(RegressorMixin, _KernelPCRBase):
    """Kernel principal component regression (Braun, Buhmann & Müller).

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
    cv : int, CV splitter or iterable of (train, test) index pairs, default=5
        Folds for ``n_components='cv'`` (an int: shuffled KFold seeded by ``random_state``).
    max_components : int, optional
        Largest d considered by 'relevant' / 'cv' (and, for 'relevant' or a fixed
        d, allows a partial eigensolver).
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
        Contributions ``U^T y``.
    neg_log_likelihood_ : ndarray
        The two-component criterion for ``d = 1 ..``.
    sigma1_sq_, sigma2_sq_ : float
        Noise levels of the two-component fit at d_hat.
    eigenvalues_ : ndarray
        Eigenvalues of K (decreasing).
    dual_coef_ : ndarray (n, 1)
        ``U_d Λ_d^{-1} U_d^T y``: ``f(x) = κ(x)^T dual_coef_``.
    fitted_train_ : ndarray (n, 1)
        ``Π_d y``.
    residual_variance_ : float
        ``mean((y - Π_d y)^2)``, the estimated noise variance of the targets.
    cv_errors_ : ndarray or None
        Mean CV squared error per d (for ``n_components='cv'``).
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
    [-1.02  1.04]
    """

    def _targets(self, y):
        return np.asarray(y, dtype=float)[:, None]

    def _losses(self, pred, va, y, Y):
        return ((pred - Y[va][:, None, :]) ** 2).mean(axis=2)

    def _finish_fit(self, y, Y):
        self.residual_variance_ = float(np.mean((Y - self.fitted_train_) ** 2))

    def predict(self, X):
        """Predict ``f(x) = κ(x)^T U_d Λ_d^{-1} U_d^T y``.

        Parameters
        ----------
        X : array-like, kernel rows against the training set, or strings

        Returns
        -------
        y_pred : ndarray (n_samples,)
        """
        return self._raw_predict(X)[:, 0]


class KernelPCRClassifier(ClassifierMixin, _KernelPCRBase):
    """Kernel PCR classifier: least squares on ±1 labels in the first d kernel PCA directions.

    Binary problems regress the ±1 coded labels (+1 = ``classes_[1]``) and take
    the sign; more classes use one ±1 column per class and the arg-max. See
    :class:`KernelPCRRegressor` for the parameters; ``n_components='cv'`` scores
    the 0-1 error (stratified shuffled folds when every class has ``cv`` members).

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    label_noise_ : float
        Estimated label noise: the training disagreement between y and the
        class predicted by ``Π_d y`` (the "est. error rate" of Braun, Buhmann & Müller).
    n_components_, relevant_dim_, s_, neg_log_likelihood_, sigma1_sq_,
    sigma2_sq_, eigenvalues_, dual_coef_, fitted_train_, cv_errors_, kernel_,
    X_fit_, n_features_in_
        As in :class:`KernelPCRRegressor` (``cv_errors_`` is the 0-1 error, or the
        squared error with ``cv_loss='squared'``).

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
    }

    def _targets(self, y):
        check_classification_targets(y)
        classes, yi = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError(
                f"the classifier needs at least 2 classes in y, got 1 class ({classes[0]!r})"
            )
        self.classes_ = classes
        if len(classes) == 2:
            return np.where(yi == 1, 1.0, -1.0)[:, None]
        Y = -np.ones((len(y), len(classes)))
        Y[np.arange(len(y)), yi] = 1.0
        return Y

    def _decide(self, F):
        """Class indices from decision values F (..., c)."""
        if F.shape[-1] == 1:
            return (F[..., 0] > 0).astype(int)
        return np.argmax(F, axis=-1)

    def _losses(self, pred, va, y, Y):
        true = self._decide(Y[va])  # (n_va,)
        return (self._decide(pred) != true[:, None]).astype(float)

    def _finish_fit(self, y, Y):
        train_classes = self._decide(self.fitted_train_)
        self.label_noise_ = float(np.mean(train_classes != self._decide(Y)))
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
