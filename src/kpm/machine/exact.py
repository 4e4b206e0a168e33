"""The Kernel Projection Machine on the eigenvectors of the kernel matrix (Blanchard,
Massart, Vert & Zwald, NIPS 2004; Zwald & Blanchard, NIPS 2005).

Hinge-loss empirical risk minimisation over the nested subspaces ``S_D = span{1, V_1, ...,
V_D}`` spanned by the leading eigenvectors of the kernel matrix, with D chosen by
cross-validation, by a penalty ``lam * D`` on the clipped hinge risk, or by the slope
heuristic. The fit is the skeleton of :mod:`kpm.machine.base` on the basis of
:mod:`kpm.machine.exact_basis` and the engine of :mod:`kpm.machine.family`; beyond the memory
budget of the kernel matrix the same estimator fits on Nyström eigenfunctions
(:mod:`kpm.machine.basis_choice`). The user guide ("The Kernel Projection Machine") gives the
method and the choices where the papers leave room.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.utils.validation import check_is_fitted

from kpm.base import store_init_params, validate_kernel_input, validate_kernel_input_y
from kpm.hinge.lp_path import SOLVERS as LP_SOLVERS
from kpm.machine.base import SELECTION_PARAMETERS, BaseKPM
from kpm.machine.basis_choice import BASES, fit_fold_bases, fit_nystroem, resolve_basis
from kpm.machine.default_rule import own_model
from kpm.machine.eigen import duplicate_groups
from kpm.machine.engine import one_vs_rest, predict_codes
from kpm.machine.exact_basis import ExactBases
from kpm.machine.exact_paths import ExactPaths
from kpm.machine.family import EngineSettings, build_family
from kpm.machine.folds import DEFAULT_FOLDS, make_splits, uses_loo, validation_total
from kpm.machine.formulation import LOSSES
from kpm.machine.grids import SVM_DIM_DENSE, SVM_DIM_RATIO, SVM_LOO_WHOLE_SPECTRUM_N, SVM_MAX_COMPONENTS
from kpm.machine.nystroem_data import expansion_scores
from kpm.machine.self_similarity import (
    excluded_error,
    selection_estimate,
    self_similarity_overrates,
    warn_if_self_similarity_overrates,
)
from kpm.machine.weights import fit_weights, positive_weights, warn_weighted_degenerate
from kpm.spectral import EIGEN_SOLVERS, LANDMARK_RULES
from kpm.validation import (
    Boolean,
    Integer,
    IntegerGrid,
    Options,
    RandomState,
    Splitter,
    check_kernel_matrix,
    validate_params,
    warn_degenerate_kernel,
    warn_if_degenerate_model,
)

__all__ = ["KernelProjectionMachine", "SVM_DIM_DENSE", "SVM_DIM_RATIO", "SVM_MAX_COMPONENTS",
           "SVM_LOO_WHOLE_SPECTRUM_N"]



@dataclass
class _ExactData:
    """The validated training data of the exact KPM, with what the engine reads
    (:class:`kpm.machine.family.FitData`: ``weights``, the samples' weights, None without
    sample or class weights; ``cv_total``, the pooled CV error's denominator; ``loo`` and
    ``loo_groups``)."""

    X: np.ndarray
    y: np.ndarray
    codes: np.ndarray
    Y: np.ndarray
    kernels: list
    groups: np.ndarray | None
    splits: list | None
    weights: np.ndarray | None = None
    cv_total: float | None = None
    loo: bool = False  # D and C by the leave-one-out error instead of the folds of ``splits``
    loo_groups: np.ndarray | None = None  # the copies the leave-one-out error leaves out together
    phases: dict = field(default_factory=dict)  # the data's phases: one ("data", timed by the fit)

    @property
    def n(self):
        return len(self.y)


class KernelProjectionMachine(ExactPaths, BaseKPM):
    r"""Kernel Projection Machine: a classifier restricted to the span of the leading
    kernel-PCA directions, with C and the dimension D chosen by leave-one-out.

    The directions are the eigenvectors of the kernel matrix while it fits the memory budget,
    the Nyström eigenfunctions of ``n_landmarks`` landmarks beyond (``basis='auto'``; the
    formulation and the selection are the same on both).

    By default (``formulation='auto'`` with ``selection='cv'`` and ``cv='auto'``) it fits,
    for each dimension D, the soft-margin SVM with the squared hinge loss inside the span
    :math:`S_D` of the first D eigenvectors of the (uncentred) kernel matrix, and chooses
    C, then D at that C, by the leave-one-out error of these SVMs, computed in closed form
    from the fits on the whole training set (no refit). ``formulation='paper'`` (and the
    penalty and slope rules, or a fixed D, whatever the formulation) gives the papers' KPM:
    minimisation of the empirical hinge loss in :math:`S_D`, a linear programme
    (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005).

    With :math:`(\lambda_j, V_j)` the eigenpairs of the kernel matrix and the kernel-PCA
    features :math:`\Phi_D(x) = \big(V_j^\top k(x) / \sqrt{\lambda_j}\big)_{j \le D}`, the
    default solves in :math:`S_D`

    .. math::

        \min_{w, b}\ \tfrac12 \big(\|w\|^2 + b^2\big)
        + C \sum_i \max\big(0,\ 1 - y_i (w^\top \Phi_D(x_i) + b)\big)^2

    (``loss='hinge'``: the hinge unsquared), the intercept being the weight of a constant
    feature of value 1. At D = the rank the problem is the kernel SVM with kernel
    :math:`k + 1` and no separate intercept; smaller D restricts the SVM to the leading
    kernel-PCA directions, which keeps the accuracy of a CV-tuned SVM where the papers' KPM
    trails it (the user guide, "Beyond the papers"). C is chosen among
    ``numpy.logspace(-2, 3, 11)`` (``kpm.machine.DEFAULT_C``) at the largest D of the grid
    -- and, where C = 1000 has the smallest error there (and it is not zero), among the values
    above it up to 10^6 (``kpm.machine.C_EXTENSION``) until the error stops falling --
    then D along the grid at that C (``c_selection='two-stage'``): the largest D whose
    error is within one standard error of the minimum (the rule ``CV(one_se=True)``), so
    that a smaller D must beat the kernel SVM clearly. The leave-one-out margins follow from each point's
    leverage (the copies of a duplicated sample are left out together); they are exact
    unless leaving the point out moves another across the margin. The basis is the whole
    spectrum up to n = ``SVM_LOO_WHOLE_SPECTRUM_N`` (the D grid reaches the rank, the
    kernel SVM) and the leading ``SVM_MAX_COMPONENTS`` eigenvectors above (a partial
    eigendecomposition); the path along D stops once the error has stopped improving
    (``early_stopping``). With K folds (``cv=5``) the basis holds the leading
    ``SVM_MAX_COMPONENTS`` eigenvectors and each fold's basis is found by Rayleigh-Ritz in
    the training set's (``cv_basis='ritz'``).

    The papers' KPM minimises, for each D, the empirical hinge loss over

    .. math::

        f = \sum_{j \le D} \beta_j V_j + b,

    a linear programme solved for the whole path :math:`D = 1, \dots,`
    ``max_components`` by a warm-started specialised simplex (HiGHS as fallback, or on
    request: ``lp_solver``), and returns
    :math:`f_D(x) = \sum_i a_i k(x_i, x) + b` with
    :math:`a = \sum_j (\beta_j / \lambda_j) V_j` (``dual_coef_``). D is chosen by
    cross-validation (the NIPS 2004 paper), by a penalty :math:`\lambda D` on the clipped
    hinge risk, or by the slope heuristic (Zwald & Blanchard 2005).

    Parameters
    ----------
    kernel : str, callable, Kernel, or list, default='rbf'
        The kernel (see :func:`kpm.kernels.make_kernel`). A list of kernels, or of
        parameter dicts such as ``{'kernel': 'rbf', 'sigma': 2.0}``, searches the
        family :math:`\{S_D(k)\}` over all kernels jointly (the paper's closing proposal);
        ``kernel_`` and ``kernel_index_`` report the winner.
    sigma, gamma : float, optional
        RBF width (``sigma``: :math:`\exp(-\|x-y\|^2/(2\sigma^2))`, as in the KPM papers;
        ``'median'`` for the median heuristic) or ``gamma``. Default ``gamma='scale'``.
    degree, coef0 : float
        Polynomial / sigmoid parameters.
    kernel_params : dict, optional
        Extra kernel parameters.
    basis : {'auto', 'exact', 'nystroem'}, default='auto'
        The kernel-PCA directions spanning :math:`S_D`. ``'exact'``: the eigenvectors of the
        n x n kernel matrix, which must fit ``kpm.get_config()['max_kernel_bytes']`` (4 GiB
        by default: n up to about 23,000). ``'nystroem'``: the Nyström eigenfunctions of
        ``n_landmarks`` landmarks (Williams & Seeger 2001), memory O(n m); the fit is that of
        :class:`NystroemKPM` with these parameters -- the same formulation, grids and
        selection (by default the SVM in :math:`S_D`, C and D by the closed-form leave-one-out
        error on the eigenfunction features) -- and ``X_fit_`` holds the landmarks. Only the
        exact basis takes a list of kernels, ``'precomputed'``, kernels on raw inputs and
        ``centered=True``; ``lp_solver``, ``eigen_solver`` and ``cv_basis`` are the exact
        basis's. ``'auto'``: the exact basis while its kernel matrix fits the budget (or where
        the Nyström basis cannot take the kernel), the Nyström basis beyond; ``basis_`` says
        which (the user guide, "Which basis").
    n_landmarks : int, default=1000
        ``basis='nystroem'``: the number m of landmarks (at most n).
    landmarks : {'uniform', 'kmeans++', 'rpcholesky'}, default='uniform'
        ``basis='nystroem'``: how the landmarks are drawn (:func:`kpm.spectral.select_landmarks`).
    selection : {'cv', 'penalty', 'slope'}, int or SelectionRule, default='cv'
        How D is chosen: the cross-validated 0-1 error (``cv``; ties -> smaller D); the
        penalised clipped hinge risk :math:`R_n(\operatorname{clip} f_D) + \lambda D` with
        :math:`\lambda` = ``penalty``; the slope heuristic (:math:`\lambda` =
        ``slope_factor`` :math:`\times\, \lambda_{\text{jump}}`); or a fixed D. Or a rule object of :mod:`kpm.machine.rules` (``CV()``, ``Penalty(lam)``,
        ``Slope(factor)``, ``FixedD(d)``, or a new one); :meth:`select_dim` tells which
        model another rule picks from a fitted model's curves.
    cv : 'auto', 'loo', int or CV splitter, default='auto'
        The cross-validation of ``selection='cv'`` and ``penalty='cv'``. An int gives a
        shuffled :class:`~sklearn.model_selection.StratifiedKFold` seeded by
        ``random_state``. ``'loo'``: the leave-one-out error of the squared-hinge SVM (the
        svm formulation with ``loss='squared_hinge'``), from the SVMs of the whole training
        set by the hat-matrix formula of the points inside the margin
        (:meth:`kpm.hinge.squared_hinge.SquaredHingeSVM.loo_margins`) -- one fit per C and D
        instead of one per fold, and no fold bases; the copies of a duplicated sample are
        left out together unless ``cv_duplicates='split'``. ``'auto'``: ``'loo'`` where it
        applies and every class has two samples or more (two distinct ones where copies are
        left out together); else 5 folds (the papers' LP, the hinge).
    penalty : float or 'cv', default='cv'
        :math:`\lambda` for ``selection='penalty'``; ``'cv'`` chooses it by cross-validation
        over the exact breakpoints of the folds' penalty paths.
    slope_factor : float, default=2.0
        Factor of the slope heuristic (Birgé-Massart's 2).
    max_components : int, optional
        Largest D considered (a value above the numerical rank of the kernel matrix stops at
        the rank). Default: the numerical rank of the kernel matrix (eigenvalues
        above ``kpm.spectral.RANK_RTOL`` :math:`\times\, \lambda_1`; beyond it the eigenvectors are
        rounding noise) for the papers' LP, and the rank capped at
        :data:`SVM_MAX_COMPONENTS` for the SVM with ``cv_basis='ritz'`` -- but for the
        leave-one-out error up to n = :data:`SVM_LOO_WHOLE_SPECTRUM_N`, whose stage one
        compares C at that D and whose path along D goes on to the rank. A D chosen at a cap
        below the rank warns where its CV error is below every smaller D's (still falling) or
        no better than the majority class's -- not where the SVM's one-standard-error rule
        takes the cap among equal errors. The LP path also stops at the first D where the training
        hinge risk reaches its floor (zero, or the loss forced by duplicated inputs with
        both labels), beyond which every D has the same solution.
    n_components_grid : None, 'auto' or list of int, default=None
        The dimensions at which the paths are solved and D selected: ``None`` every
        ``D = 1..max_components`` for the paper's LP (the papers' protocol) and every D up
        to 5, then steps of 25 % up to the rank for the SVM (:data:`SVM_DIM_DENSE`,
        :data:`SVM_DIM_RATIO`, so that the rank -- the kernel SVM -- is a candidate);
        ``'auto'`` every D up to 20, then steps of 10 %
        (:func:`kpm.machine.eigen.auto_dim_grid`); or an explicit list.
    early_stopping : bool or 'auto', default='auto'
        With cross-validation: advance the paths of all folds together and stop the sweep
        at the first D > 2 D_best + 20, D_best the CV minimiser so far (a heuristic: it can
        miss a later minimum). For the SVM with ``c_selection='two-stage'`` stage one
        likewise tries C from the largest value down and stops after
        :data:`kpm.machine.formulation.C_PATIENCE` values in a row above the best pooled CV
        error (:data:`~kpm.machine.formulation.LOO_C_PATIENCE` with the leave-one-out
        error; ``c_selection_curve_`` is NaN for the C values not tried). ``'auto'``: True
        for the SVM, False for the papers' LP, which
        then solves every D up to the floor of the training risk in every fold (provably
        without changing the selection). The LP's early stopping does not use ``n_jobs``.
    centered : bool, default=False
        Use the eigenvectors of the centred kernel matrix (the paper: uncentred).
    formulation : {'auto', 'paper', 'svm'}, default='auto'
        ``'paper'``: the KPM of the papers, the hinge LP in every ``S_D``. ``'svm'``: the
        soft-margin SVM restricted to ``S_D`` (beyond the papers; see above), D and C
        chosen by cross-validation. ``'auto'``: ``'svm'`` when D is chosen by CV
        (``selection='cv'`` or ``CV()``), ``'paper'`` for every other rule (the penalty and slope rules are the theory of the LP's hinge risk
        minimisers, and cannot choose C); ``formulation_`` tells which ran. With several
        ``C`` the selection must be ``'cv'``; with one C every rule works, on the curves
        of that C.
    C : float, sequence of float or None, default=None
        ``formulation='svm'`` only: the weights of the loss among which CV chooses (the CV
        rule's ties go to the smaller D, then to the smaller C). None: the C rule's grid
        (``kpm.machine.DEFAULT_C``), ``numpy.logspace(-2, 3, 11)`` for ``'two-stage'``
        (and above it ``kpm.machine.C_EXTENSION``, tried where C = 1000 has the smallest
        error), ``(0.1, 0.3, 1, 3, 10)`` for ``'joint'``. A user's C values are searched as
        given.
    c_selection : {'two-stage', 'joint'}, default='two-stage'
        ``formulation='svm'`` with CV: how C is chosen. ``'two-stage'``: first C by the
        pooled CV error of the SVM at the largest D of the grid (the kernel SVM when that
        is the rank; ties -> the smaller C), then D by the CV error along D at that C only.
        ``'joint'``: (D, C) minimise the CV error over the whole grid.
    loss : {'squared_hinge', 'hinge'}, default='squared_hinge'
        ``formulation='svm'`` only: the SVM's loss. The squared hinge (the loss of
        LIBLINEAR's default solver) is solved by a finite Newton method
        (:mod:`kpm.hinge.squared_hinge`), exactly at any C; the hinge by dual coordinate
        descent (:mod:`kpm.hinge.svm_path`), which slows down at large C.
    cv_basis : {'auto', 'ritz', 'fold'}, default='auto'
        With K folds, how each CV fold gets its kernel-PCA basis from its training points:
        ``'fold'`` decomposes the fold's kernel matrix (the papers' protocol); ``'ritz'`` finds the
        fold's eigenpairs by Rayleigh-Ritz in the span of the training set's basis (one
        product with the kernel matrix per fold instead of an eigendecomposition;
        :class:`kpm.machine.eigen.RitzFolds`), the SVM formulation only. ``'auto'``:
        ``'ritz'`` for the SVM, ``'fold'`` for the papers' LP; and where the default's
        estimate keeps every point in the basis (the leave-one-out error, or Ritz folds in a
        partial basis) and overrates the chosen model -- every training point far from every
        other (median self-similarity excess at least 0.3 of the diagonal), and its training
        values without the excess wrong more often than the estimate by 0.1 and 3 samples
        (:mod:`kpm.machine.self_similarity`) -- the fit is made again with fold bases
        (``cv`` folds, or with ``cv='auto'`` five, fewer where a class is smaller; see
        ``cv_basis_``). With ``'ritz'`` or ``cv='loo'`` that finding is a warning.
    lp_solver : {'auto', 'simplex', 'highs'}, default='auto'
        The solver of the hinge LP paths (:mod:`kpm.hinge.lp_path`): the specialised
        warm-started simplex of :mod:`kpm.hinge.simplex`, one warm-started HiGHS model per
        path, or (``'auto'``) the former with the latter as fallback on numerical
        trouble. All solve the same LPs exactly; where an LP has several optimal solutions
        they may return different ones.
    cv_duplicates : {'warn', 'split', 'group'}, default='warn'
        Cross-validation with duplicated samples (identical inputs, or identical rows of a
        precomputed kernel). ``'split'``: the folds ignore them, so copies of a sample can
        fall in the training and the validation part of a fold (the papers' protocol; right
        where duplicates are part of the data's distribution, e.g. discrete features).
        ``'group'``: the copies of a sample stay in one fold
        (:class:`~sklearn.model_selection.StratifiedGroupKFold`, or the ``groups`` of a
        given splitter); right where duplicates are an artefact, since copies on both sides
        make the CV error favour large D. ``'warn'``: with K folds as ``'split'``, with a
        warning when X has duplicates. With the leave-one-out error (``cv='auto'`` or
        ``'loo'``) ``'warn'`` and ``'group'`` leave the copies of a sample out together, at
        no extra cost (the copies' leverages add up; a sample left out alone would be
        predicted by its copies, and the error would favour the largest C), and ``'split'``
        one copy at a time.
    eigen_solver : {'auto', 'dense', 'arpack', 'randomized'}, default='auto'
        Eigensolver of the kernel matrices (full data and every fold; see
        :mod:`kpm.spectral`). ``'auto'``: the whole spectrum by LAPACK (``'dense'``),
        unless the largest D is known in advance (``max_components`` or a fixed D), then
        ARPACK or the block Krylov solver where the measured crossovers favour them.
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, as :class:`sklearn.svm.SVC` has them: a dict ``{label:
        weight}`` (1 for the classes it does not name) or ``'balanced'`` (:math:`n / (n_{\text{classes}}\,
        n_c)`, the counts weighted by ``sample_weight``); they multiply ``sample_weight``
        (see :meth:`fit`). Needs ``centered=False``.
    random_state : int, RandomState or None
        Seeds the CV shuffling and the partial eigensolvers.
    n_jobs : int, optional
        Parallel jobs over the K CV folds (:class:`sklearn.utils.parallel.Parallel`: None is
        one job unless a ``joblib.parallel_backend`` context says otherwise, -1 every core).
        The leave-one-out error (``cv='auto'`` where it applies) has no folds and no jobs.
        Whatever the jobs, the small dense work of the fit runs on one BLAS thread
        (:mod:`kpm.blas_threads`).
    verbose : int, default=0
        Progress lines on stderr: 1 for the phases of the fit and each cross-validation
        fold, 2 also for each D of the folds' paths.
    keep_paths : bool, default=False
        Keep, after :meth:`fit`, what the path methods read: the eigenvector basis, the
        full-data paths (``path_dims_``, ``coef_path_``, ``intercept_path_``) and the curves
        of every model (training and CV folds), for :meth:`select_dim`,
        :meth:`extend_path`, :meth:`decision_function_path` and :meth:`predict_path`
        (which raise ``AttributeError`` without it). False: the fitted model keeps what
        prediction needs -- ``dual_coef_``, ``intercept_``, ``kernel_`` and ``X_fit_`` --
        with the small diagnostics (``selection_curve_``, ``eigenvalues_``); the basis alone
        is an n x n matrix (on 1257 standardised digits the pickle is 0.76 MB instead of
        16.5 MB). The fitted function is the same either way.

    Attributes
    ----------
    classes_ : ndarray
    basis_ : {'exact', 'nystroem'}
        The basis fitted (``basis`` with ``'auto'`` resolved). On the Nyström basis the
        model also has :class:`NystroemKPM`'s fitted attributes (``landmarks_``,
        ``projection_``, ``coef_``, ``landmark_residual_``, ``n_selection_samples_``,
        ``streamed_steps_``, ...: beyond the memory of its features C and D are chosen on a
        subsample and the final SVM is streamed over all the points), ``X_fit_`` is
        ``landmarks_`` and only :meth:`select_dim` of the path methods applies.
    cv_basis_ : {'loo', 'ritz', 'fold'} or None
        How the selection's estimate got its bases: the closed-form leave-one-out error in
        the training set's basis, K folds by Rayleigh-Ritz or decomposed anew (``cv_basis``;
        ``'fold'`` also where ``'auto'`` refitted with fold bases), None without
        cross-validation or on the Nyström basis.
    n_components_ : int
        The selected dimension D.
    dual_coef_ : ndarray (n_fit,) or (n_classes, n_fit)
        Kernel expansion coefficients (one per row of ``X_fit_``), ``f(x) = dual_coef_ @ k(X_fit_, x) + intercept_``.
    intercept_ : float or ndarray (n_classes,)
    eigenvalues_ : ndarray
        Eigenvalues of the (winning kernel's) training kernel matrix, up to the rank.
    kernel_ : Kernel
        The kernel used (the winner of a list).
    kernel_index_ : int
        Its position in the list (0 for a single kernel).
    formulation_ : {'paper', 'svm'}
        The formulation fitted (``formulation`` with ``'auto'`` resolved).
    C_ : float or None
        ``formulation_='svm'``: the chosen C (None for the paper's KPM).
    c_selection_curve_ : dict of ndarray or None
        ``c_selection='two-stage'`` with CV: stage one's pooled CV 0-1 error (``cv_error``)
        per ``kernel`` index and ``C`` (with ``C=None``: the grid, then
        ``kpm.machine.C_EXTENSION``; NaN for a C not tried); None otherwise.
        ``selection_curve_`` then holds the models of the chosen C only.
    X_fit_ : ndarray
        The points of the kernel expansion: the training samples (those of positive weight),
        or the landmarks on the Nyström basis.
    selection_curve_ : dict of ndarray
        Per model (D, and ``kernel`` index for a list): ``D``, ``kernel``, ``cv_error``
        (pooled CV 0-1 error, NaN when no CV was run), ``hinge_risk`` (training
        :math:`R_n(f_D)`), ``clipped_risk`` (:math:`R_n(\operatorname{clip} f_D)`), ``train_error`` (the training
        0-1 error), ``criterion`` (``clipped_risk + penalty_ * D``, NaN without a penalty);
        with ``formulation='svm'`` also ``C``: the models are the (kernel, C, D) triples, in
        that order. The training risks and errors are NaN where the full-data path was not
        solved; with sample weights all of them are weighted means.
    penalty_ : float or None
        The ``lam`` used by the penalty or slope rule.
    slope_lambda_ : float or None
        ``lam_jump`` of the slope heuristic.
    path_dims_ : ndarray of int
        ``keep_paths=True`` only (as ``coef_path_`` and ``intercept_path_``): the
        dimensions of the stored full-data path of the winning kernel. For
        ``selection='cv'`` it ends at the selected D (the rest of ``selection_curve_``'s
        training risks is NaN until :meth:`extend_path` solves further).
    coef_path_ : list of ndarray
        ``beta`` at every D of ``path_dims_`` (one array per one-vs-rest problem); with
        ``intercept_path_`` the whole path is kept (see :meth:`decision_function_path`).
    fit_time_ : float
        Seconds spent in :meth:`fit`.
    timings_ : dict
        Seconds per phase of the fit: ``data`` (validation), ``cv`` (bases, folds and their
        paths), ``final_fit`` (the full-data paths the rule needs) and ``total``.
    lp_fallbacks_ : int
        Paths (folds and full data) on which ``lp_solver='auto'`` handed the LP to HiGHS
        after the specialised simplex reported numerical trouble.
    lp_failures_ : list of dict
        The paths that ended early because no solver solved the LP at some dimension
        (empty when every LP was solved): ``path`` ('full data' or 'fold k'), ``problem``
        (the one-vs-rest problem), ``kernel`` (its index), ``dim`` (the D not solved) and
        ``error`` (the solvers' statuses). The selection then ran over the dimensions below
        the smallest such D, and :meth:`fit` warned (``ConvergenceWarning``): nearly
        separable data, where the optimal coefficients exceed 1e9.

    See Also
    --------
    NystroemKPM : The KPM on Nyström eigenfunctions, for large n.
    KernelPCRClassifier : Least squares instead of the hinge loss on the same subspaces,
        with the dimension from the relevant-dimension criterion.
    KernelProjection : The kernel PCA coordinates, for any linear model.
    sklearn.svm.SVC : The support vector machine the KPM is compared with.
    sklearn.calibration.CalibratedClassifierCV : Class probabilities from the decision
        values (the user guide's "Probabilities").

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kpm import KernelProjectionMachine
    >>> X, y = make_moons(200, noise=0.2, random_state=0)
    >>> clf = KernelProjectionMachine(sigma=0.5, random_state=0).fit(X, y)
    >>> clf.formulation_, clf.n_components_, clf.C_  # the SVM in S_D; D and C by leave-one-out
    ('svm', 124, 1.0)
    >>> X_test, y_test = make_moons(1000, noise=0.2, random_state=1)
    >>> print(f"{clf.score(X_test, y_test):.3f}")
    0.961

    The papers' KPM (the hinge LP in ``S_D``):

    >>> paper = KernelProjectionMachine(sigma=0.5, formulation="paper", random_state=0).fit(X, y)
    >>> paper.n_components_           # kernel PCA directions chosen by 5-fold CV
    6
    >>> print(f"{paper.score(X_test, y_test):.3f}")
    0.965
    """

    _name = "KernelProjectionMachine"
    _path_state = ("_curves", "_model_kp", "_subspace", "_Y", "_weights", "_grid_used", "path_dims_", "coef_path_",
                   "intercept_path_")
    # (the kernel's parameters are checked by kpm.kernels.make_kernel, which builds the kernel)
    _parameter_constraints = {
        **SELECTION_PARAMETERS,
        "max_components": [Integer(1), None],
        "n_components_grid": [Options("auto"), IntegerGrid(1), None],
        "early_stopping": [Boolean(), Options("auto")],
        "loss": [Options(*LOSSES)],
        "cv": [Integer(2), Splitter(), Options("auto", "loo")],
        "cv_basis": [Options("auto", "ritz", "fold")],
        "centered": [Boolean()],
        "lp_solver": [Options(*LP_SOLVERS)],
        "cv_duplicates": [Options("warn", "split", "group")],
        "eigen_solver": [Options(*EIGEN_SOLVERS)],
        "random_state": [RandomState()],
        "basis": [Options(*BASES)],
        "n_landmarks": [Integer(1)],
        "landmarks": [Options(*LANDMARK_RULES)],
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
        basis="auto",
        n_landmarks=1000,
        landmarks="uniform",
        selection="cv",
        cv="auto",
        penalty="cv",
        slope_factor=2.0,
        max_components=None,
        n_components_grid=None,
        early_stopping="auto",
        centered=False,
        lp_solver="auto",
        cv_duplicates="warn",
        eigen_solver="auto",
        formulation="auto",
        C=None,
        c_selection="two-stage",
        loss="squared_hinge",
        cv_basis="auto",
        class_weight=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
        keep_paths=False,
    ):
        store_init_params(self, locals())

    def fit(self, X, y, sample_weight=None):
        r"""Fit the path of every D, select D, and keep the selected function.

        First the basis (``basis``; ``basis_`` records it). On the exact basis: for each kernel
        the eigenvector basis of the kernel matrix and the CV folds' paths (:meth:`_family`),
        then the full-data paths the rule needs and the rule, then the coefficients of the
        chosen model (the skeleton of :class:`kpm.machine.base.BaseKPM`); on the Nyström basis
        the same steps on the landmarks' eigenfunctions (:class:`NystroemKPM`).

        Parameters
        ----------
        X : array-like (n_samples, n_features), or (n_samples, n_samples) kernel
            matrix for ``kernel='precomputed'``.
        y : array-like (n_samples,)
            Class labels (two or more classes; more: one-vs-rest).
        sample_weight : array-like (n_samples,), optional
            Non-negative weights of the samples, multiplied by ``class_weight``'s. A sample
            of weight 0 is left out. The basis is that of the training set with each sample
            repeated :math:`w_i` times: the eigenvectors of :math:`W^{1/2} K W^{1/2}`, divided
            row by row by :math:`\sqrt{w_i}` (``centered=False`` only); the papers' LP weighs
            each slack (:math:`\sum_i w_i \xi_i`), the SVM gives each sample :math:`C w_i`, and the CV and training
            errors count each sample with its weight. With a fixed D (no cross-validation)
            an integer weight is therefore exactly the same fit as that many copies of the
            sample; with cross-validation the folds of the weighted and of the repeated data
            differ (copies fall in different folds), unless the same splits are given as
            ``cv``.

        Returns
        -------
        self

        Raises
        ------
        KernelMemoryError
            With ``basis='exact'`` (or ``'auto'`` where the Nyström basis cannot take the
            kernel: a list, ``'precomputed'``, raw inputs, ``centered=True``), when the n x n
            kernel matrix exceeds ``kpm.get_config()['max_kernel_bytes']``.
        """
        validate_params(self)
        basis = resolve_basis(self, X)
        if basis == "nystroem":
            self._clear_fitted()
            fit_nystroem(self, X, y, sample_weight)
        else:
            super().fit(X, y, sample_weight)
        self.basis_ = basis
        return self

    # ------------------------------------------------------------------ the fit's parts
    def _is_precomputed(self):
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _early_stopping(self, plan):
        if self.early_stopping != "auto":
            return self.early_stopping
        return plan.formulation == "svm"

    def _training_data(self, X, y, plan, sample_weight=None):
        X, y = validate_kernel_input_y(self, X, y, y_numeric=False, min_samples=2)
        X_all, y_all = X, y
        sample_weight, keep = positive_weights(sample_weight, y, who=self._name)
        self._kept = None if keep is None else np.flatnonzero(keep)
        if keep is not None:
            X, y, sample_weight = self._take(X, self._kept), y[self._kept], sample_weight[self._kept]
        self.classes_, codes, Y = one_vs_rest(y, "the Kernel Projection Machine")
        weights = fit_weights(sample_weight, self.class_weight, y, self.classes_, who=self._name)
        if weights is not None and self.centered:
            raise ValueError(
                "sample_weight and class_weight need centered=False: the weighted basis is the uncentred "
                "one of the samples repeated by their weights"
            )
        if self._is_precomputed():
            X = check_kernel_matrix(X)
        self.X_fit_ = X
        groups = duplicate_groups(X)
        splits = cv_total = None
        loo = False
        if plan.rule.needs_cv:
            grouped = groups is not None and self.cv_duplicates == "group"
            loo = uses_loo(self.cv, plan, codes, self._loo_groups(groups), self._name)
            if groups is not None and self.cv_duplicates == "warn" and not loo:
                _warn_duplicates(groups, len(y))
            cv = DEFAULT_FOLDS if isinstance(self.cv, str) else self.cv
            if loo:
                cv_total = len(y) if weights is None else float(weights.sum())
            elif keep is None:
                splits = make_splits(y, cv, self.random_state, len(self.classes_), X=X,
                                     groups=groups if grouped else None, who=self._name, stacklevel=6)
            else:  # the folds of the samples of positive weight (a splitter sees them all)
                splits = make_splits(y_all, cv, self.random_state, len(self.classes_), X=X_all,
                                     groups=duplicate_groups(X_all) if grouped else None, keep=keep,
                                     who=self._name, stacklevel=6)
            if splits is not None:
                cv_total = validation_total(splits, weights)
        self._progress(f"{len(y)} samples, {len(self.classes_)} classes"
                       + ("" if splits is None else f", {len(splits)} cross-validation folds")
                       + (", the leave-one-out error" if loo else ""))
        return _ExactData(X, y, codes, Y, ExactBases(self).kernels(X, weights), groups, splits, weights, cv_total, loo,
                          self._loo_groups(groups) if loo else None)

    def _loo_groups(self, groups):
        """The groups the leave-one-out error leaves out together: the copies of a sample
        (``groups``), unless ``cv_duplicates='split'`` (one copy at a time: None)."""
        return None if self.cv_duplicates == "split" else groups

    def _take(self, X, rows):
        """The samples ``rows`` of X (rows and columns of a precomputed kernel matrix)."""
        if self._is_precomputed():
            return np.asarray(X)[np.ix_(rows, rows)]
        return X[rows] if isinstance(X, np.ndarray) else [X[i] for i in rows]

    def _family(self, data, plan):
        bases = ExactBases(self, plan)
        self.cv_basis_ = bases.estimate_basis(data)
        settings = EngineSettings(self._early_stopping(plan),
                                  SVM_MAX_COMPONENTS if self.max_components is None else None,
                                  self.n_jobs, self._prefer, self._progress)
        return build_family(bases(data), data, plan, settings)

    def _set_solution(self, kp, D, data):
        self.eigenvalues_ = kp.basis.eigenvalues
        self.dual_coef_, self.intercept_ = ExactBases(self).expansion(kp, D)
        self._Y = data.Y
        self._weights = data.weights
        self._grid_used = kp.dims
        self._subspace = kp.basis
        self._model_kp = kp
        self._set_path(kp.full)

    def _set_model(self, family, choice, data, plan):
        k, _ = family.members[choice.kernel_index]
        self.kernel_, self.kernel_index_ = data.kernels[k], k
        super()._set_model(family, choice, data, plan)

    def _warn_degenerate(self, family, data):
        kp = self._model_kp
        if kp.degeneracy is not None:
            warn_degenerate_kernel(kp.degeneracy, self._name, stacklevel=5)
        F = self._training_scores()
        predictions = self.classes_[predict_codes(F)]
        if data.weights is None:
            warn_if_degenerate_model(predictions, data.y, self.classes_, self._name, stacklevel=5)
        else:
            warn_weighted_degenerate(predictions, data.y, data.weights, self.classes_, self._name, stacklevel=6)
        self._warn_self_similarity(F, data)

    def _training_scores(self):
        """The chosen model's decision values at the training points, (n, n_problems)."""
        D = self.n_components_
        V = self._subspace.V[:, :D]
        return np.stack([V @ beta + b for beta, b in (p.coef_at(D) for p in self._model_kp.full.paths)], axis=1)

    def _refit(self, X, y, sample_weight, data):
        """``cv_basis='auto'``: the default's selection refitted with fold bases
        (:func:`kpm.machine.basis_choice.fit_fold_bases`) where the self-similarity check
        finds that its estimate, which keeps every point in the basis, overrates the model."""
        if self.cv_basis != "auto" or (isinstance(self.cv, str) and self.cv == "loo"):
            return False
        if self._self_similarity_check(data) is None:
            return False
        return fit_fold_bases(self, X, y, sample_weight) > 0

    def _self_similarity_check(self, data, F=None):
        """The default's selection read in the training set's basis (leave-one-out, or Ritz
        folds) against the training values without the self-similarity
        (:mod:`kpm.machine.self_similarity`; ``F``: the training values, computed where not
        given): ``(error, excess, estimate, what, total)`` where the estimate overrates the
        model, else None (also where the points are not far apart: no excess was kept)."""
        excess = self._model_kp.excess
        if excess is None:
            return None
        F = self._training_scores() if F is None else F
        dual = np.atleast_2d(self.dual_coef_).T
        if dual.shape[0] != F.shape[0]:
            return None
        error = excluded_error(excess, F, dual, data.codes, data.weights)
        estimate, what = selection_estimate(self._curves, self._model_member, self.n_components_)
        total = len(data.codes) if data.weights is None else float(np.sum(data.weights))
        if not self_similarity_overrates(error, estimate, total):
            return None
        return error, excess, estimate, what, total

    def _warn_self_similarity(self, F, data):
        """A rule of the papers (their LP, or the penalty, slope or a fixed D) against the
        training values without the self-similarity (:mod:`kpm.machine.self_similarity`): the
        training error those rules read, or the CV error of the LP, overrates the model on
        high-dimensional data. The default (the SVM in S_D, C and D by leave-one-out) is the
        reference the warning names. The default itself refits with fold bases where its
        estimate overrates it (:meth:`_refit`); with ``cv_basis='ritz'`` or ``cv='loo'`` the
        warning names them."""
        if self._default_advice() is None:
            check = self._self_similarity_check(data, F)
            if check is not None:
                warn_if_self_similarity_overrates(
                    self._name, *check, "Estimate C and D with each fold's basis decomposed without its "
                    "validation points instead (K folds and cv_basis='fold'; cv_basis='auto' does so where "
                    "every class has two samples), or use a wider kernel (a larger sigma).", stacklevel=6)
            return
        dual = np.atleast_2d(self.dual_coef_).T
        if dual.shape[0] != F.shape[0]:
            return
        if self._is_precomputed():
            if self.centered:  # the centred rows need every column of the user's matrix
                return
            K = self.X_fit_
        else:
            K = self._kernel_rows(self.X_fit_)
        self._warn_self_similarity_of(K, F, dual, data.codes, data.weights, stacklevel=6)

    def _own_exact_model(self):
        return own_model(self, centered=self.centered, loss=self.loss)

    def _default_advice(self):
        if self.formulation_ == "svm" and isinstance(self.selection, str) and self.selection == "cv":
            return None  # the default's formulation and rule: the reference itself
        return ("The default KernelProjectionMachine() (the soft-margin SVM in S_D, C and D by leave-one-out) "
                "is the better choice on such data.")

    # ------------------------------------------------------------------ predict
    def _kernel_rows(self, X):
        check_is_fitted(self)
        X = validate_kernel_input(self, X, reset=False)
        if self.kernel_.is_precomputed:
            kept = getattr(self, "_kept", None)
            if kept is not None and X.shape[1] == self.n_features_in_:
                X = X[:, kept]  # the columns of the samples of positive weight
            if X.shape[1] != self.X_fit_.shape[0]:
                raise ValueError(
                    f"a precomputed kernel for prediction must have {self.X_fit_.shape[0]} columns, got {X.shape[1]}"
                )
            return X
        return self.kernel_(X, self.X_fit_)

    def _scores(self, X):
        A, b = np.atleast_2d(self.dual_coef_).T, np.atleast_1d(self.intercept_)[None, :]
        if self.basis_ == "nystroem":  # m landmarks: the kernel rows in blocks of block_rows_
            X = validate_kernel_input(self, X, reset=False)
            return expansion_scores(X, self.X_fit_, A, self.kernel_, self.block_rows_) + b
        return self._kernel_rows(X) @ A + b

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._is_precomputed()
        return tags


def _warn_duplicates(groups, n):
    import warnings

    warnings.warn(
        f"X holds duplicated samples ({len(np.unique(groups))} distinct of {n}): copies "
        "fall in both training and validation folds, which biases the cross-validation "
        "error towards large D. Set cv_duplicates='group' to keep the copies of a sample in "
        "one fold, or cv_duplicates='split' where duplicates are part of the data's "
        "distribution (e.g. discrete features; the papers' protocol) to silence this.",
        UserWarning,
        stacklevel=5,
    )
