"""Reduced-set approximations of SVM decision functions (Schölkopf et al. 1999, §V).

An SVM (or any kernel machine) decides with ``f(x) = sum_i alpha_i k(x_i, x) + b``, i.e.
``f(x) = <Psi, phi(x)> + b`` with ``Psi = sum_i alpha_i phi(x_i)``. Its cost is one kernel
evaluation per support vector. A *reduced set* replaces ``Psi`` by
``Psi' = sum_{j<=m} beta_j phi(z_j)`` with ``m`` much smaller than the number of support
vectors; the approximation error ``||Psi - Psi'||^2 = alpha'K alpha - 2 beta'K^{zx} alpha +
beta'K^z beta`` is computable from kernels alone (Schölkopf et al. 1999, §V).

Methods
-------
The derivations, the shared budget, the fit to the decision values and the threshold rules
are in :doc:`/user_guide/reduced_sets`.

``'select'``
    One-at-a-time removal of expansion vectors with optimal readjustment of the others
    (Schölkopf et al. 1999, §V-C): the cheapest removal costs ``beta_n^2 / G_nn`` with
    ``G`` the inverse Gram matrix of the current set, downdated by rank-one steps.
``'select-l1'``
    Shrinkage selection ``min_beta (alpha-beta)'K(alpha-beta) + lambda sum_i c_i |beta_i|``
    (the LARS-lasso path on the Gram form; a multi-task lasso when the machines share their
    vectors), then optimal coefficients on the selected patterns.
``'construct'``
    Reduced-set construction for the Gaussian kernel: each new ``z_j`` is the fixed-point
    pre-image (:func:`kpm.preimage.solvers.gaussian_fixed_point`) of the current residual,
    then all coefficients are recomputed optimally; optionally a joint L-BFGS descent over
    ``(z, beta)`` (``gradient_maxiter``).
``'burges'``
    Burges' (1996) method: each ``z_j`` by L-BFGS from random starts, optimal coefficients
    after each new vector, the joint descent as second phase.

For the linear kernel both constructions are exact with one vector per machine:
``Psi = sum_i alpha_i x_i`` is the weight vector ``w`` itself (Burges 1996); machines that
share a budget of m vectors get the best rank-m approximation of their weight vectors.

With ``shared_vectors`` the machines of a multi-class system share one budget of distinct
vectors (the cost per test point), each with its own optimal coefficients, and the
criterion is the total error ``sum_p ||Psi_p - Psi'_p||^2``. Beyond the paper,
``coef_fit='train'`` and ``data_fit_maxiter`` fit the original decision values on the
training set instead of ``Psi``. The offsets are re-estimated on the training set
(``threshold``: ``'mean'``, ``'error'`` or ``'keep'``). Sample weights weight every fit on
the training set; the default budget ``n_vectors='auto'`` grows until the reduced machine
is about as accurate on the training set as the SVC.

Inputs accepted
---------------
A fitted :class:`sklearn.svm.SVC` (binary; multi-class in its one-vs-one ``dual_coef_``
layout), a list of fitted binary ``SVC`` (one-vs-rest: machine k separates ``classes_[k]``,
its positive class ``svc.classes_[1]``, from the rest), or a kernel expansion
``(support_vectors, coef, intercept, kernel)`` (or a dict with these keys): ``coef`` of
shape ``(n_machines, n_vectors)``, one machine is binary, several are one-vs-rest.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from kpm.reduced_set.construction import construct_linear
from kpm.reduced_set.data_fit import (
    auto_offset_rule,
    data_fit,
    distinct_rows,
    fit_coef_on_data,
    fit_offsets,
    sample_class_weights,
    training_agreement,
)
from kpm.reduced_set.expansion import (
    as_expansion,
    expansion_classes,
    expansion_error,
    expansion_values,
    machine_optimal_coefficients,
    ovo_to_ovr,
    predict_labels,
)
from kpm.reduced_set.reduction import reduce_per_machine, reduce_shared
from kpm.validation import (
    Boolean,
    ClassWeights,
    Integer,
    Options,
    RandomState,
    Real,
    check_option,
    check_sample_weight,
    check_weighted_classes,
    validate_params,
    warn_if_degenerate_kernel,
    warn_if_degenerate_model,
)

__all__ = [
    "AUTO_FRACTIONS",
    "AUTO_MIN_R2",
    "LINEAR_EXACT_RTOL",
    "METHODS",
    "WORSE_R2",
    "ReducedSetSVC",
    "auto_tolerance",
    "fit_on_distinct_rows",
    "fit_svc",
    "warn_if_linear_selection",
    "reduce_svc",
    "worse_tolerance",
]

#: The reduction methods.
METHODS = ("select", "select-l1", "construct", "burges")
_THRESHOLDS = ("auto", "mean", "error", "keep")
_COEF_FITS = ("feature-space", "train")
#: the budgets ``n_vectors='auto'`` tries, as fractions of the support vectors, smallest first
AUTO_FRACTIONS = (0.1, 0.2, 0.4, 0.8, 1.0)


def auto_tolerance(n):
    """How much lower than the SVC's a reduced machine's training accuracy may be for
    ``n_vectors='auto'`` to take it: 1 %, or one of the n training samples."""
    return max(0.01, 1.0 / n)


#: the share of the variation of the SVC's decision values on the training set that the
#: reduced machine must reproduce for ``n_vectors='auto'`` (R^2 of its decision values)
AUTO_MIN_R2 = 0.9
#: an explicit budget reproducing less than this share warns
WORSE_R2 = 0.5
#: a selection for a linear SVC leaving more than this share of ||Psi||^2 warns (its exact
#: reduction, ``method='construct'``, leaves none: rounding only)
LINEAR_EXACT_RTOL = 1e-8


def worse_tolerance(n):
    """The accuracy gap (training set of n samples) beyond which an explicit budget is
    clearly worse than the SVC and warns: 5 %, or two samples."""
    return max(0.05, 2.0 / n)


def warn_if_linear_selection(reduced, exp):
    """Warn when the fitted ``reduced`` machine selected vectors of the linear SVC ``exp`` and
    does not reproduce it: its expansion is the weight vector itself, so
    ``method='construct'`` reduces it exactly, to one vector per machine -- fewer vectors and
    no error."""
    if exp.kernel.name != "linear" or reduced.method not in ("select", "select-l1"):
        return
    rel = float(np.max(reduced.approximation_error_ / np.maximum(reduced.original_norm_sq_, 1e-300)))
    if rel > LINEAR_EXACT_RTOL:
        warnings.warn(
            f"ReducedSetSVC with method={reduced.method!r} on a linear SVC keeps "
            f"{reduced.n_expansion_vectors_} of its vectors and loses {rel:.1%} of "
            "||Psi||^2 (the squared norm of its weight vector); a linear SVC reduces exactly "
            "to one vector per machine, its weight vector: use method='construct'",
            UserWarning,
            stacklevel=3,
        )


def fit_svc(estimator, class_weight, X, y, weight):
    """Fit a clone of the unfitted ``estimator`` (None: ``SVC(kernel='rbf')``) on the
    validated ``(X, y)`` with the sample weights ``weight`` (:func:`fit_on_distinct_rows`);
    ``class_weight``, unless None, replaces its own. Raises a ValueError when the samples of
    positive weight, class weights included, hold one class."""
    from sklearn.svm import SVC

    base = SVC(kernel="rbf") if estimator is None else estimator
    if not hasattr(base, "fit"):
        raise ValueError("with prefit=False, estimator must be an unfitted SVC (or None)")
    base = clone(base)
    if class_weight is not None and "class_weight" in base.get_params():
        base.set_params(class_weight=class_weight)
    per_class = sample_class_weights(base.get_params().get("class_weight"), np.unique(y), None, y, weight)
    check_weighted_classes(y, weight * per_class, who="ReducedSetSVC",
                           weighted_by="sample_weight times class_weight", every_class=True)
    return fit_on_distinct_rows(base, X, y, weight)


def fit_on_distinct_rows(svc, X, y, weight):
    """Fit the (unfitted) ``svc`` on ``(X, y)`` with the sample weights ``weight``.

    Where rows repeat or weights are not all one, it is fitted on the distinct ``(row,
    label)`` pairs with their summed weights (:func:`distinct_rows`), the same problem: a
    row repeated k times has k dual variables in ``[0, C]``, the row weighted k one in
    ``[0, k C]``, and both give the same decision function; libsvm then sees the same
    input for integer weights as for repeated rows (its solution depends on the order of the
    rows and on its tolerance), and ``gamma='scale'`` is computed from the weighted variance
    of ``X``, the variance of the repeated rows. Else it is fitted on ``(X, y)`` as given.
    """
    Xd, yd, wd = distinct_rows(X, y, weight)
    if len(Xd) == len(X) and np.all(weight == 1):
        return svc.fit(X, y)
    params = svc.get_params()
    if params.get("gamma") == "scale" and params.get("kernel") in ("rbf", "poly", "sigmoid"):
        mean = wd @ Xd.mean(axis=1) / wd.sum()
        var = float(wd @ np.mean((Xd - mean) ** 2, axis=1) / wd.sum())
        svc.set_params(gamma=1.0 / (X.shape[1] * var) if var != 0 else 1.0)
    return svc.fit(Xd, yd, sample_weight=wd)


# ------------------------------------------------------------------------ estimator
class ReducedSetSVC(ClassifierMixin, BaseEstimator):
    r"""An SVM whose kernel expansion is replaced by a much shorter one (reduced set).

    An SVM decides with :math:`f(x) = \langle \Psi, \phi(x) \rangle + b`,
    :math:`\Psi = \sum_i \alpha_i \phi(x_i)` over its support vectors; a reduced set replaces
    :math:`\Psi` by :math:`\Psi' = \sum_{j \le m} \beta_j \phi(z_j)` with m much smaller,
    and the cost of a prediction by m kernel evaluations (Schölkopf et al. 1999, Section V).
    By default (``prefit=False``, ``estimator=None``) it fits ``SVC(kernel='rbf')`` on
    (X, y), then removes expansion vectors one at a time, readjusting the others optimally
    (``method='select'``; Schölkopf et al. 1999, Section V-C), with the budget
    ``n_vectors='auto'``: 10, 20, 40, 80 and 100 % of the support vectors in turn, until the
    reduced machine's training accuracy is within 1 % of the SVC's and its decision values
    reproduce 90 % of the variation of the SVC's. The coefficients minimise
    :math:`\|\Psi - \Psi'\|^2` (``coef_fit='feature-space'``) and each offset is refitted
    on the training set (``threshold='auto'``: the mean rule over the training points that are
    not support vectors, when they carry at least half of the training weight).
    A one-vs-one ``SVC`` shares one budget of vectors among its machines.

    Parameters
    ----------
    estimator : SVC, list of SVC, tuple or dict, default=None
        With ``prefit=False``: an unfitted :class:`sklearn.svm.SVC` to fit on ``(X, y)``
        (``None``: ``SVC(kernel='rbf')``). With ``prefit=True``: a fitted ``SVC`` (binary,
        or multi-class in its one-vs-one layout), a list of fitted binary ``SVC`` (one-vs-
        rest) or a kernel expansion ``(support_vectors, coef, intercept, kernel)``.
    n_vectors : int, float or 'auto', default='auto'
        The budget. Per machine (``shared_vectors`` false): expansion vectors per machine,
        an int :math:`m \ge 1` or a float in ``(0, 1]``, the fraction of each machine's support
        vectors (rounded up). Shared (several machines, ``shared_vectors`` true): the
        number of *distinct* expansion vectors of the whole system, i.e. kernel
        evaluations per test point (a float: fraction of the distinct support vectors of
        all machines). A budget at least the number of support vectors keeps the original
        expansion, with a warning. ``'auto'``: the fractions 0.1, 0.2, 0.4, 0.8 and 1 in
        turn, until the reduced machine's (weighted) training accuracy is within 1 % (or one
        training sample) of the SVC's and its decision values on the training set reproduce
        90 % of the variation of the SVC's (``decision_r2_``); the whole expansion, with a
        warning, when none does. Without training data (``prefit=True``, no X) it is 0.1. An
        explicit budget whose training accuracy falls short of the SVC's by more than 5 % (or
        two samples), or whose decision values reproduce less than half of the SVC's
        variation, warns, naming the better choice. (The default was 0.1, which kept 1 vector of an SVC with
        10 support vectors and a test error of 42 % where the SVC had none.)
    method : {'select', 'select-l1', 'construct', 'burges'}, default='select'
        See the module docstring and :doc:`/user_guide/reduced_sets`. 'construct' and
        'burges' build vectors for the Gaussian kernel, and for the linear kernel, where
        one vector :math:`w = \sum_i \alpha_i x_i` per machine is exact (shared by several
        machines: the best rank-m approximation of their ``w``).
    prefit : bool, default=False
        Whether ``estimator`` is already fitted.
    class_weight : dict, 'balanced' or None, default=None
        Passed to the SVC it fits (``prefit=False``), and multiplied into the sample weights
        of the fits on the training set here (``'balanced'``: from the weighted class
        counts). None: the fitted SVC's own ``class_weight_``.
    threshold : {'auto', 'mean', 'error', 'keep'}, default='auto'
        How the offset of each reduced machine is recomputed on the training set
        (:doc:`/user_guide/reduced_sets`). ``'auto'``: ``'mean'`` over the training points
        that are not support vectors (held out from the expansion: at a support vector the
        SVC's value holds the point's own term, which biases the mean) when they carry at
        least half of the training weight, else ``'keep'`` (and ``'keep'`` without training
        data); with ``coef_fit='train'`` or ``data_fit_maxiter``, which fit the decision
        values on the training set, ``'mean'`` over it (their least-squares offset);
        ``threshold_`` says which was taken.
    shared_vectors : bool or 'auto', default='auto'
        Whether the machines of a multi-machine system (one-vs-one ``SVC``, list of one-vs-
        rest machines, expansion with several rows) share one budget of expansion vectors,
        each machine keeping its own optimal coefficients over the shared set. ``'auto'``:
        shared for a one-vs-one ``SVC`` (its machines already share one pool of support
        vectors), per machine otherwise. No effect on a binary machine.
    l1_weights : {'uniform', 'inverse'}, default='inverse'
        Weights :math:`c_i` of the shrinkage penalty (``'inverse'``:
        :math:`\overline{|\alpha|} / |\alpha_i|`).
    preimage_max_iter : int, default=300
        Iterations per pre-image: of the fixed-point iteration (``'construct'``) or of
        L-BFGS (``'burges'``).
    preimage_tol : float > 0, default=1e-6
        Step tolerance of the fixed-point pre-image iteration in kernel widths
        (``'construct'``, see :func:`kpm.preimage.solvers.gaussian_fixed_point`);
        construction stops early if :math:`\|\Psi - \Psi'\|^2 \le 10^{-12} \|\Psi\|^2`.
    n_restarts : int, default=3
        Fixed-point starts per constructed vector (``'construct'``).
    gradient_maxiter : int, default=0
        L-BFGS iterations of the final joint descent over ``(z, beta)`` of all machines
        (``'construct'`` and ``'burges'``, whose second phase it is; 0: none).
    data_fit_maxiter : int, default=0
        L-BFGS iterations of a final joint descent over the vectors, coefficients and
        offsets of all machines that fits the original decision values on the training
        set ``X`` by least squares (Gaussian kernel; needs ``X``; 0: none). Beyond
        Schölkopf et al. (1999), whose closing remark it follows: it approximates ``f``
        where the data are rather than ``Psi`` in feature space. Every machine keeps the
        vectors it uses. Early stopping on a held-out ``validation_fraction`` of ``X``.
    validation_fraction : float, default=0.2
        Fraction of ``X`` held out by ``data_fit_maxiter`` to choose the iterate (lowest
        held-out squared error, checked every 10 iterations); 0: the last iterate. The rows
        held out are chosen by their content (a hash), so that integer sample weights and
        repeated rows hold out the same points.
    coef_fit : {'feature-space', 'train'}, default='feature-space'
        How the final coefficients over the reduced vectors are chosen: ``'feature-space'``
        minimises :math:`\|\Psi - \Psi'\|^2` (the paper's Proposition); ``'train'`` fits, machine
        by machine over its own reduced vectors, the original decision values on the
        training set ``X`` by least squares (offset included), i.e. approximates ``f``
        where the data are (the closing remark of Schölkopf et al. 1999; not in their
        experiments). Needs ``X``.
    random_state : int, RandomState or None, default=None
        Seeds the extra fixed-point starts and Burges' random starts.

    Attributes
    ----------
    estimator_ : object
        The (fitted) input machine; fitted here on the distinct rows where rows repeat or
        weights are not all one (:func:`fit_on_distinct_rows`; ``support_`` indexes those).
    classes_ : ndarray
        Class labels.
    kernel_ : kpm.kernels.Kernel
        The kernel of the expansion.
    reduced_vectors_ : ndarray of shape (n_expansion_vectors_, n_features)
        All expansion vectors (machines share those they have in common).
    reduced_coef_ : ndarray of shape (n_machines, n_expansion_vectors_)
        Coefficients ``beta`` (zero where a machine does not use a vector).
    intercept_ : ndarray of shape (n_machines,)
        Recomputed offsets.
    threshold_ : {'mean', 'error', 'keep'}
        The rule that gave them (``threshold='auto'`` resolved).
    original_intercept_ : ndarray of shape (n_machines,)
    n_vectors_ : ndarray of int, shape (n_machines,)
        Expansion vectors per machine after reduction.
    original_n_vectors_ : ndarray of int, shape (n_machines,)
        Support vectors per machine before reduction.
    n_expansion_vectors_ : int
        Distinct vectors, i.e. kernel evaluations per test point.
    shared_vectors_ : bool
        Whether the budget was shared by the machines.
    approximation_error_ : ndarray of shape (n_machines,)
        :math:`\|\Psi - \Psi'\|^2` per machine, from kernels.
    original_norm_sq_ : ndarray of shape (n_machines,)
        :math:`\|\Psi\|^2` per machine (``approximation_error_ / original_norm_sq_`` is relative).
    original_accuracy_, reduced_accuracy_ : float or None
        (Weighted) training accuracy of the SVC and of the reduced machine (None without
        training data).
    decision_r2_ : float
        The share of the variation of the SVC's decision values on the training set that the
        reduced machine's reproduce (:math:`1 - \sum (f - g)^2 / \sum (f - \bar f)^2`, weighted,
        over all machines; with training data only).
    n_vectors_fraction_ : float or None
        The fraction ``n_vectors='auto'`` settled on (None for an explicit budget).
    n_features_in_ : int

    See Also
    --------
    reduce_svc : The same for an already fitted SVC, in one call.
    sklearn.svm.SVC : The machine whose expansion is shortened.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.svm import SVC
    >>> from kpm import ReducedSetSVC
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> svc = SVC(kernel="rbf", gamma=2.0).fit(X, y)
    >>> int(svc.n_support_.sum())
    50
    >>> small = ReducedSetSVC(svc, n_vectors=10, prefit=True).fit(X, y)
    >>> small.n_expansion_vectors_    # kernel evaluations per prediction
    10
    >>> X_test, y_test = make_moons(1000, noise=0.2, random_state=1)
    >>> print(f"{svc.score(X_test, y_test):.3f} {small.score(X_test, y_test):.3f}")
    0.960 0.957
    """

    _parameter_constraints = {
        "n_vectors": [Integer(1), Real(0, 1, "right"), Options("auto")],
        "method": [Options(*METHODS)],
        "prefit": [Boolean()],
        "threshold": [Options(*_THRESHOLDS)],
        "shared_vectors": [Boolean(), Options("auto")],
        "l1_weights": [Options("uniform", "inverse")],
        "preimage_max_iter": [Integer(1)],
        "preimage_tol": [Real(0, None, "neither")],
        "n_restarts": [Integer(1)],
        "gradient_maxiter": [Integer(0)],
        "data_fit_maxiter": [Integer(0)],
        "validation_fraction": [Real(0, 1, "left")],
        "coef_fit": [Options(*_COEF_FITS)],
        "class_weight": [Options("balanced"), ClassWeights(), None],
        "random_state": [RandomState()],
    }

    def __init__(
        self,
        estimator=None,
        n_vectors="auto",
        method="select",
        *,
        prefit=False,
        class_weight=None,
        threshold="auto",
        shared_vectors="auto",
        l1_weights="inverse",
        preimage_max_iter=300,
        preimage_tol=1e-6,
        n_restarts=3,
        gradient_maxiter=0,
        data_fit_maxiter=0,
        validation_fraction=0.2,
        coef_fit="feature-space",
        random_state=None,
    ):
        self.estimator = estimator
        self.n_vectors = n_vectors
        self.method = method
        self.prefit = prefit
        self.class_weight = class_weight
        self.threshold = threshold
        self.shared_vectors = shared_vectors
        self.l1_weights = l1_weights
        self.preimage_max_iter = preimage_max_iter
        self.preimage_tol = preimage_tol
        self.n_restarts = n_restarts
        self.gradient_maxiter = gradient_maxiter
        self.data_fit_maxiter = data_fit_maxiter
        self.validation_fraction = validation_fraction
        self.coef_fit = coef_fit
        self.random_state = random_state

    def _target(self, n_sv):
        """The budget of a machine with ``n_sv`` support vectors (``n_vectors`` validated)."""
        nv = self._n_vectors
        if isinstance(nv, int):
            return nv
        return max(1, int(np.ceil(nv * n_sv - 1e-9)))

    # ------------------------------------------------------------------- fit
    def fit(self, X=None, y=None, sample_weight=None):
        """Reduce the machine's expansion (fitting the SVC first unless ``prefit``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data: used to fit the SVC (``prefit=False``), to recompute the
            thresholds, and to compare the reduced machine with the SVC. May be omitted
            with ``prefit=True`` and ``threshold`` 'keep'/'auto'.
        y : array-like of shape (n_samples,)
            Labels.
        sample_weight : array-like of shape (n_samples,), optional
            Passed to the SVC's ``fit`` (``prefit=False``; where rows repeat or weights are
            not all one, on the distinct rows with their summed weights and ``gamma='scale'``
            from the weighted variance, :func:`fit_on_distinct_rows`, so that integer weights
            and repeated rows give the same machine) and weighting every fit on the training
            set here: the thresholds, ``coef_fit='train'``, ``data_fit_maxiter`` and the
            accuracies that ``n_vectors='auto'`` compares (times the class weights of the
            SVC, or ``class_weight``).

        Returns
        -------
        self
        """
        params = validate_params(self)
        n_vectors = params["n_vectors"]
        if self.prefit:
            if self.estimator is None:
                raise ValueError("prefit=True needs a fitted estimator (SVC, list of SVC or expansion)")
            est = self.estimator
            exp = as_expansion(est)
            if X is not None:
                X = validate_data(self, X, dtype=float)
                if X.shape[1] != exp.V.shape[1]:
                    raise ValueError(
                        f"X has {X.shape[1]} features but the machine was fitted on {exp.V.shape[1]}"
                    )
                if y is None:
                    raise ValueError("y is required together with X (to recompute the thresholds)")
                y = np.asarray(y)
                if y.shape != (len(X),):
                    raise ValueError(f"y must have shape ({len(X)},), got {y.shape}")
                check_classification_targets(y)
            else:
                if sample_weight is not None:
                    raise ValueError("sample_weight weights the training set X, y: pass them too")
                self.n_features_in_ = exp.V.shape[1]
            weight = None if X is None else check_sample_weight(sample_weight, len(X), who=type(self).__name__)
        else:
            X, y, weight, est = self._fit_svc(X, y, sample_weight)
            exp = as_expansion(est)
        self.estimator_ = est
        self._mode, self._pairs, self._ovr_shape = exp.mode, exp.pairs, exp.ovr_shape
        self._break_ties = exp.break_ties
        self.classes_ = expansion_classes(exp, y)
        if weight is not None:
            weight = weight * sample_class_weights(self.class_weight, self.classes_, est, y, weight)

        threshold = self.threshold
        if threshold == "auto" and X is None:
            threshold = "keep"
        if threshold != "keep" and X is None:
            raise ValueError(f"threshold={threshold!r} needs the training set X, y")
        if self.method in ("construct", "burges") and exp.kernel.name not in ("rbf", "linear"):
            raise ValueError(
                f"method={self.method!r} constructs new vectors for the Gaussian (RBF) kernel, and "
                f"exactly for the linear one; this machine's kernel is {exp.kernel.name!r}: use "
                "method='select' or 'select-l1'"
            )

        if self.coef_fit == "train" and X is None:
            raise ValueError("coef_fit='train' fits the coefficients on the training set X, y")
        if self.data_fit_maxiter > 0:
            if X is None:
                raise ValueError("data_fit_maxiter > 0 fits the decision values on the training set X, y")
            if exp.kernel.name != "rbf":
                raise ValueError(
                    f"data_fit_maxiter > 0 moves the vectors by the Gaussian kernel's gradient; this "
                    f"machine's kernel is {exp.kernel.name!r}"
                )
        K_sv = exp.kernel(exp.V)
        self.original_norm_sq_ = np.einsum("pi,ij,pj->p", exp.A, K_sv, exp.A)
        warn_if_degenerate_kernel(K_sv, "ReducedSetSVC: the kernel matrix of the support vectors")
        self._expansion = exp
        if X is None:
            self._n_vectors = AUTO_FRACTIONS[0] if n_vectors == "auto" else n_vectors
            self._fit_budget(exp, X, y, weight, threshold)
            self.original_accuracy_ = None
            warn_if_linear_selection(self, exp)
            return self
        self._original_raw = exp.kernel.matvec(X, exp.A.T, exp.V) + exp.b
        original = self._labels(self._original_raw)
        self.original_accuracy_ = float(weight @ (original == y) / weight.sum())
        if n_vectors == "auto":
            self._fit_auto(exp, X, y, weight, threshold)
        else:
            self._n_vectors = n_vectors
            self._fit_budget(exp, X, y, weight, threshold)
            self._warn_if_worse(X, y, weight)
        del self._original_raw
        warn_if_linear_selection(self, exp)
        warn_if_degenerate_model(self._labels(self._raw_validated(X)), y, self.classes_, "ReducedSetSVC")
        return self

    def _fit_svc(self, X, y, sample_weight):
        """Validate the training set and fit the SVC on it (``prefit=False``)."""
        if X is None:
            raise ValueError("fit needs X and y (or prefit=True with a fitted machine)")
        if y is None:
            raise ValueError("ReducedSetSVC requires y to be passed, but the target y is None")
        X, y = validate_data(self, X, y, dtype=float)
        check_classification_targets(y)
        if len(np.unique(y)) < 2:
            raise ValueError(
                f"the training labels contain only one class ({np.unique(y)[0]!r}); an SVM "
                "needs at least two classes"
            )
        weight = check_sample_weight(sample_weight, len(X), who=type(self).__name__)
        return X, y, weight, fit_svc(self.estimator, self.class_weight, X, y, weight)

    def _fit_budget(self, exp, X, y, weight, threshold):
        """Reduce at the budget ``self._n_vectors``, then the data fits and the offsets."""
        V_red, B_red = self._reduce(exp)
        if self.data_fit_maxiter > 0:
            V_red, B_red = data_fit(
                exp, X, V_red, B_red, maxiter=self.data_fit_maxiter,
                validation_fraction=self.validation_fraction, weight=weight,
            )
        if self.coef_fit == "train":
            B_red = fit_coef_on_data(exp, X, V_red, B_red, weight)
        self.kernel_ = exp.kernel
        self.reduced_vectors_ = V_red
        self.reduced_coef_ = B_red
        self.original_intercept_ = exp.b.copy()
        self.n_vectors_ = np.count_nonzero(B_red, axis=1)
        self.original_n_vectors_ = np.count_nonzero(exp.A, axis=1)
        self.n_expansion_vectors_ = int(len(V_red))
        self.shared_vectors_ = self._shared(exp)
        self.approximation_error_ = np.atleast_1d(
            expansion_error(exp.V, exp.A, V_red, B_red, exp.kernel)
        )
        self.intercept_ = self._thresholds(exp, X, y, threshold, weight)

    def _accuracy(self, X, y, weight):
        """The (weighted) training accuracy and the R^2 of the reduced decision values."""
        raw = self._raw_validated(X)
        return training_agreement(self._original_raw, raw, self._labels(raw), y, weight)

    def _fit_auto(self, exp, X, y, weight, threshold):
        """``n_vectors='auto'``: the first budget of :data:`AUTO_FRACTIONS` whose training
        accuracy is within :func:`auto_tolerance` of the SVC's and whose decision values
        reproduce at least :data:`AUTO_MIN_R2` of the SVC's variation on the training set."""
        tol = auto_tolerance(len(y))
        last = None
        for fraction in AUTO_FRACTIONS:
            self._n_vectors = fraction
            sizes = self._budget_sizes(exp)
            if sizes == last:
                continue
            last = sizes
            with warnings.catch_warnings():  # the last budget keeps the whole expansion
                warnings.filterwarnings("ignore", message="n_vectors=.* is not smaller than")
                self._fit_budget(exp, X, y, weight, threshold)
            self.reduced_accuracy_, self.decision_r2_ = self._accuracy(X, y, weight)
            if self.reduced_accuracy_ >= self.original_accuracy_ - tol and self.decision_r2_ >= AUTO_MIN_R2:
                break
        self.n_vectors_fraction_ = self._n_vectors
        if np.all(self.n_vectors_ >= self.original_n_vectors_) and self.n_expansion_vectors_ > 1:
            warnings.warn(
                f"ReducedSetSVC(n_vectors='auto'): no budget below the {int(np.max(self.original_n_vectors_))} "
                f"support vectors matched the SVC on its training data (accuracy {self.original_accuracy_:.3f}, "
                f"{AUTO_MIN_R2:.0%} of the variation of its decision values); the original expansion is "
                "kept: use the SVC itself",
                UserWarning,
                stacklevel=3,
            )

    def _budget_sizes(self, exp):
        """The budgets ``self._n_vectors`` gives: per machine, or the shared one."""
        if self._shared(exp):
            return (self._target(int(np.count_nonzero(np.any(exp.A != 0, axis=0)))),)
        return tuple(int(self._target(n)) for n in np.count_nonzero(exp.A, axis=1))

    def _warn_if_worse(self, X, y, weight):
        """Warn when an explicit budget is clearly worse on the training set than the SVC it
        reduces -- less accurate by more than :func:`worse_tolerance`, or reproducing less than
        :data:`WORSE_R2` of the variation of its decision values -- naming the better choice."""
        self.reduced_accuracy_, self.decision_r2_ = self._accuracy(X, y, weight)
        self.n_vectors_fraction_ = None
        gap = self.original_accuracy_ - self.reduced_accuracy_
        if gap > worse_tolerance(len(y)) or self.decision_r2_ < WORSE_R2:
            what = (f"less accurate on its training data than the SVC it reduces "
                    f"({self.reduced_accuracy_:.3f} against {self.original_accuracy_:.3f}"
                    if gap > worse_tolerance(len(y)) else
                    f"far from the SVC it reduces on its training data (its decision values "
                    f"reproduce {max(self.decision_r2_, 0.0):.0%} of the SVC's variation")
            warnings.warn(
                f"ReducedSetSVC with n_vectors={self.n_vectors!r} ({self.n_expansion_vectors_} "
                f"expansion vector(s)) is clearly {what}, {int(np.max(self.original_n_vectors_))} "
                "support vectors): use a larger n_vectors (n_vectors='auto' takes the smallest budget "
                "that matches the SVC), or the SVC itself",
                UserWarning,
                stacklevel=3,
            )

    def refit_threshold(self, X, y, threshold="mean", sample_weight=None):
        """Recompute the offsets of the reduced machine(s) on ``(X, y)``, in place.

        Lets one compare threshold rules without repeating the reduction.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        threshold : {'mean', 'error', 'keep'}
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        threshold = check_option(threshold, "threshold", ("mean", "error", "keep"))
        X, y, weight = self._refit_data(X, y, sample_weight)
        self.intercept_ = self._thresholds(self._expansion, X, y, threshold, weight)
        return self

    def _refit_data(self, X, y, sample_weight):
        """The validated ``(X, y, weight)`` of a refit."""
        check_is_fitted(self, "reduced_coef_")
        X = validate_data(self, X, dtype=float, reset=False)
        y = np.asarray(y)
        if y.shape != (len(X),):
            raise ValueError(f"y must have shape ({len(X)},), got {y.shape}")
        if not np.all(np.isin(y, self.classes_)):
            raise ValueError("y holds labels that are not among classes_")
        weight = None if sample_weight is None else check_sample_weight(sample_weight, len(X),
                                                                        who=type(self).__name__)
        return X, y, weight

    def refit_coefficients(self, X, y, coef_fit="train", threshold="mean", sample_weight=None):
        """Recompute the coefficients over the reduced vectors, in place (see ``coef_fit``),
        then the offsets (``threshold``); the vectors are kept.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        coef_fit : {'feature-space', 'train'}
        threshold : {'mean', 'error', 'keep'}
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        coef_fit = check_option(coef_fit, "coef_fit", _COEF_FITS)
        threshold = check_option(threshold, "threshold", ("mean", "error", "keep"))
        X, y, weight = self._refit_data(X, y, sample_weight)
        exp, V = self._expansion, self.reduced_vectors_
        if coef_fit == "train":
            B = fit_coef_on_data(exp, X, V, self.reduced_coef_, weight)
        else:
            B = machine_optimal_coefficients(exp, V, self.reduced_coef_ != 0)
        self.reduced_coef_ = B
        self.approximation_error_ = np.atleast_1d(expansion_error(exp.V, exp.A, V, B, exp.kernel))
        self.intercept_ = self._thresholds(exp, X, y, threshold, weight)
        return self

    def _machine_targets(self, exp):
        """Vectors to keep per machine, validated against its number of support vectors."""
        n_sv = np.count_nonzero(exp.A, axis=1)
        targets = np.array([self._target(n) for n in n_sv])
        full = np.flatnonzero(targets >= n_sv)
        if len(full):
            warnings.warn(
                f"n_vectors={self.n_vectors} is not smaller than the number of support vectors "
                f"of machine(s) {full.tolist()} ({n_sv[full].tolist()}): their original "
                "expansion is kept",
                UserWarning,
                stacklevel=4,
            )
        return np.minimum(targets, n_sv)

    def _shared(self, exp):
        if len(exp.A) == 1:
            return False
        if self.shared_vectors == "auto":
            return exp.mode == "ovo"
        return bool(self.shared_vectors)

    def _reduce(self, exp):
        """The reduced vectors and coefficients of ``exp`` at the budget ``self._n_vectors``."""
        shared = self._shared(exp)
        n_used = int(np.count_nonzero(np.any(exp.A != 0, axis=0)))
        if self.method in ("construct", "burges") and exp.kernel.name == "linear":
            m = self._target(n_used) if shared else 1
            return construct_linear(exp, np.ones(len(exp.A), int), shared, m)
        solver = dict(l1_weights=self.l1_weights, max_iter=self.preimage_max_iter,
                      tol=self.preimage_tol, n_restarts=self.n_restarts,
                      gradient_maxiter=self.gradient_maxiter, random_state=self.random_state)
        if not shared:
            return reduce_per_machine(exp, self.method, self._machine_targets(exp), **solver)
        m = self._target(n_used)
        if m >= n_used:
            warnings.warn(
                f"n_vectors={self._n_vectors} is not smaller than the {n_used} distinct support "
                "vectors: the original expansion is kept",
                UserWarning,
                stacklevel=4,
            )
            used = np.flatnonzero(np.any(exp.A != 0, axis=0))
            return exp.V[used], exp.A[:, used]
        return reduce_shared(exp, self.method, m, **solver)

    def _thresholds(self, exp, X, y, threshold, weight=None):
        if threshold == "auto" and (self.coef_fit == "train" or self.data_fit_maxiter > 0):
            threshold = "mean"  # the offset of their least-squares fit on the training set
        elif threshold == "auto":
            threshold, rows = auto_offset_rule(exp, X, weight)
            if rows is not None:
                X, y = X[rows], np.asarray(y)[rows]
                weight = None if weight is None else weight[rows]
        self.threshold_ = threshold
        return fit_offsets(exp, X, y, self.classes_, self.reduced_vectors_, self.reduced_coef_,
                           threshold, weight)

    # --------------------------------------------------------------- predict
    def _raw(self, X):
        check_is_fitted(self, "reduced_coef_")
        return self._raw_validated(validate_data(self, X, dtype=float, reset=False))

    def _raw_validated(self, X):
        """Raw decision values (n, n_machines) of an X already validated: the training set
        inside :meth:`fit`, which must not pass the public validation again (an ndarray
        there would be checked against the feature names of a DataFrame given to fit)."""
        return expansion_values(self.kernel_, X, self.reduced_vectors_, self.reduced_coef_) + self.intercept_

    def decision_function(self, X):
        """Decision values of the reduced machine(s).

        Returns
        -------
        ndarray of shape (n_samples,) for a binary machine, (n_samples, n_classes) for
        one-vs-rest (and for a one-vs-one SVC with ``decision_function_shape='ovr'``, with
        scikit-learn's vote-plus-confidence transform), else (n_samples, n_pairs).
        """
        D = self._raw(X)
        if self._mode == "binary":
            return D[:, 0]
        if self._mode == "ovo" and self._ovr_shape:
            return ovo_to_ovr(D, len(self.classes_))
        return D

    def predict(self, X):
        """Class labels, by scikit-learn's rules for the input machine.

        One-vs-one machines vote like libsvm (a positive decision value is a vote for the
        first class of the pair; ties go to the class listed first in ``classes_``), or,
        for an ``SVC`` with ``break_ties=True`` and ``decision_function_shape='ovr'``,
        the argmax of :meth:`decision_function`; one-vs-rest: argmax of the decision
        values; binary: ``classes_[1]`` where the decision value is positive.
        """
        check_is_fitted(self, "reduced_coef_")
        return self._labels(self._raw(X))

    def _labels(self, D):
        """Class labels from raw decision values ``D`` (n, n_machines), by the rules of
        :meth:`predict` (also applied to the original expansion)."""
        return predict_labels(D, self.classes_, self._mode, self._pairs,
                              ovr_shape=self._ovr_shape, break_ties=self._break_ties)


def reduce_svc(svc, n_vectors, method="select", *, X=None, y=None, sample_weight=None, **params):
    """Reduced-set approximation of a fitted SVM.

    :class:`ReducedSetSVC` with ``prefit=True`` on the fitted ``svc``: by default
    (``method='select'``) its expansion vectors are removed one at a time, the others
    readjusted optimally (Schölkopf et al. 1999, Section V-C), down to ``n_vectors``; the
    offsets are refitted when ``X`` and ``y`` are given, else kept.

    Parameters
    ----------
    svc : SVC, list of SVC, tuple or dict
        A fitted :class:`sklearn.svm.SVC`, a list of fitted binary ``SVC`` (one-vs-rest) or
        a kernel expansion ``(support_vectors, coef, intercept, kernel)``.
    n_vectors : int, float or 'auto'
        Expansion vectors per machine (see :class:`ReducedSetSVC`).
    method : {'select', 'select-l1', 'construct', 'burges'}
    X, y : array-like, optional
        The training set, to recompute the thresholds (without it the original offsets
        are kept).
    sample_weight : array-like, optional
        Weights of the training set's samples (see :meth:`ReducedSetSVC.fit`).
    **params
        Further :class:`ReducedSetSVC` parameters.

    Returns
    -------
    ReducedSetSVC
        Fitted, with ``decision_function``, ``predict`` and ``score``.

    See Also
    --------
    ReducedSetSVC : The estimator it returns (also fits the SVC itself).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.svm import SVC
    >>> from kpm import reduce_svc
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> svc = SVC(kernel="rbf", gamma=2.0).fit(X, y)
    >>> small = reduce_svc(svc, 10, method="construct", X=X, y=y, random_state=0)
    >>> small.n_expansion_vectors_, int(svc.n_support_.sum())
    (10, 50)
    >>> rel = small.approximation_error_ / small.original_norm_sq_  # ||Psi - Psi'||^2 / ||Psi||^2
    >>> print(rel.round(3))
    [0.086]
    """
    if svc is None:
        raise ValueError("reduce_svc needs a fitted SVC, a list of SVCs or a kernel expansion")
    return ReducedSetSVC(svc, n_vectors=n_vectors, method=method, prefit=True, **params).fit(
        X, y, sample_weight=sample_weight)
