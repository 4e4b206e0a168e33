"""The Kernel Projection Machine for very large n: Nyström eigenfunctions, exact hinge-loss
LPs by constraint generation, the KPM's selection rules, and Dask.

The fit is the skeleton of :mod:`kpm.machine.base` on the basis of
:mod:`kpm.machine.nystroem_data`:

1. *Landmarks*: ``m = n_landmarks`` training points, drawn uniformly, by k-means++ seeding
   or by randomly pivoted Cholesky (:mod:`kpm.spectral.landmarks`).
2. *Approximate eigenfunctions*: the Nyström extension of the eigenvectors of the landmark
   Gram matrix (:func:`kpm.machine.nystroem_data.nystroem_eigenfunctions`), and the
   features ``F = K(X, Z) P`` of all n points, block by block within ``memory_budget``.
3. *Hinge-loss ERM over S_D = span{1, φ_1..φ_D}* -- the KPM's LP -- solved exactly for
   every D of the grid by constraint generation with HiGHS, warm-started along D
   (:mod:`kpm.hinge.constraint_generation`); or the SVM in ``S_D`` (``formulation='svm'``).
4. *Selection of D* by the exact KPM's engine and rules (:mod:`kpm.machine.engine`); the CV
   folds keep the landmarks' eigenfunctions (the exact KPM decomposes each fold anew).
5. The machine is ``f(x) = Σ_l a_l k(z_l, x) + b`` with ``a = P_D β``: an ``m``-term
   kernel expansion.

With every training point a landmark the features are ``sqrt(n) V``, V the eigenvectors of
the (uncentred) kernel matrix: the full-data paths, and every rule that reads only them,
give the exact KPM's model. ``X`` may be a :class:`dask.array.Array`; with ``client=`` the
training data stay on the cluster (:mod:`kpm.machine.dask_data`) and the result equals the
in-memory fit on the same data and folds. The user guide ("Large scale") gives the method,
the memory it needs and the measurements.
"""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from kpm.base import store_init_params
from kpm.hinge.constraint_generation import ConstraintGenerationOptions
from kpm.machine.base import SELECTION_PARAMETERS, BaseKPM
from kpm.machine.dask_data import check_client, dask_errors, is_dask_array, labels_block
from kpm.machine.default_rule import own_model
from kpm.machine.engine import one_vs_rest, predict_codes
from kpm.machine.family import BasisFit, EngineSettings, build_family
from kpm.machine.folds import DEFAULT_FOLDS, make_splits, uses_loo, validation_total
from kpm.machine.formulation import LOSSES
from kpm.machine.grids import SVM_MAX_COMPONENTS
from kpm.machine import streamed
from kpm.machine.nystroem_dask import check_training_data, dask_accuracy, dask_scores, dask_training_data
from kpm.machine.nystroem_data import (
    RESIDUAL_ROWS,
    ROW_BLOCK,
    block_rows,
    ConstraintGenerationFullPath,
    InMemoryData,
    cv_error_table,
    expansion_scores,
    lp_stats,
    nystroem_basis,
    svm_stats,
)
from kpm.machine.weights import fit_weights, positive_weights, warn_weighted_degenerate
from kpm.spectral import LANDMARK_RULES
from kpm.validation import (
    Boolean,
    InstanceOf,
    Integer,
    IntegerGrid,
    Options,
    RandomState,
    Real,
    Splitter,
    duplicate_groups,
    check_estimator_data,
    check_int,
    check_samples,
    warn_if_degenerate_counts,
    warn_if_degenerate_model,
)

__all__ = ["NystroemKPM", "CLIENT_SOLVER_OPTIONS", "LANDMARK_RESIDUAL_WARN", "RESIDUAL_ROWS"]

#: A fit whose landmarks' span leaves out more than this share of the training data's variance
#: in feature space (``landmark_residual_``) warns: most of the data's variation is then out of
#: reach of every D, and the landmarks, not D, limit the model (the shares measured on
#: benchmark data and noise: ``docs/results/notes/code_measurements.md``).
LANDMARK_RESIDUAL_WARN = 0.5

#: Features per persisted chunk on the workers (whole row blocks): fewer, larger chunks mean
#: fewer tasks per violation search.
DASK_CHUNK_BYTES = 64 * 2**20
#: The constraint generation's settings with ``client=`` and ``solver_options=None``: the
#: points of clear hinge loss aggregated and at most 5000 points in the aggregation's band,
#: which keeps the working sets -- held by the client -- small. Twonorm on a 2-worker
#: LocalCluster, n = 2 * 10^6 (``docs/results/dask_kpm_2e6*.md``): the client grew by 0.45 GiB
#: (1.08 GiB with the aggregation alone, 1.86 GiB with neither), for a fit 1.6 times as long
#: as with the aggregation alone (495 s against 312 s), the same D and test error.
CLIENT_SOLVER_OPTIONS = {"aggregate_below": 0.9, "band_size": 5000}


def _seed(random_state):
    """An int, a Generator or None from ``random_state`` (a RandomState draws an int)."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    return random_state


class NystroemKPM(BaseKPM):
    r"""Kernel Projection Machine on Nyström eigenfunctions, for very large n.

    By default it is the papers' KPM (``formulation='paper'``; Blanchard, Massart, Vert &
    Zwald 2004; Zwald & Blanchard 2005) with the eigenvectors of the kernel matrix replaced
    by the Nyström eigenfunctions of m = 1000 landmarks drawn uniformly from the training
    set: for each D of the grid (every D up to 10, then about 20 log-spaced values up to
    ``max_components=100``) it minimises the empirical hinge loss over the span
    :math:`S_D` of the first D eigenfunctions, a linear programme solved by constraint
    generation over the points, and it chooses D by 5-fold cross-validation of the 0-1
    error (ties -> smaller D). The selection rules, tie rule and one-vs-rest multi-class
    are those of :class:`KernelProjectionMachine`; see the module docstring for the method.
    Constraint generation keeps only a working set of the points in the LPs, and scales
    to millions of points and to a Dask cluster (``client=``).

    ``formulation='svm'`` goes beyond the KPM papers, as the exact KPM's default does (user
    guide, "Beyond the papers"): in each :math:`S_D` it fits the soft-margin SVM on the
    eigenfunctions scaled to :math:`\sqrt{\lambda_j / m}\, \phi_j`, whose inner product is
    the Nyström kernel :math:`\tilde k(x, x') = K(x, Z)\, U \Lambda^{-1} U^\top K(Z, x')`.
    With the squared hinge, beyond 1 GiB for the in-memory fit's features and always with
    ``client=``, C and D are chosen on a stratified subsample and the SVM at that (D, C) is
    fitted on every point by streamed Newton steps (:mod:`kpm.machine.streamed`).

    Parameters
    ----------
    n_landmarks : int, default=1000
        Number m of landmark points, capped at the number of training samples.
    landmarks : {'uniform', 'kmeans++', 'rpcholesky'}, default='uniform'
        How the landmarks are drawn from the training set
        (:func:`kpm.spectral.select_landmarks`): uniformly, by k-means++ seeding, or by
        randomly pivoted Cholesky on the kernel matrix (Chen, Epperly, Tropp & Webber
        2023), which reads ``O(n m)`` kernel entries and gives a smaller Nyström error.
    kernel : str or callable, default='rbf'
    sigma, gamma : float or str, optional
        RBF width (``sigma`` as in the KPM papers, or ``'median'``); see
        :func:`kpm.kernels.make_kernel`. Data-dependent defaults are computed on a
        uniform subsample of at most 10 000 rows.
    degree, coef0 : float
        Polynomial / sigmoid parameters.
    kernel_params : dict, optional
    max_components : int or None, default=100
        Largest D considered (capped by the numerical rank of the landmark Gram matrix);
        the features matrix is ``n × max_components``. None: every eigenfunction up to that
        rank (``n × m`` features), as :class:`KernelProjectionMachine`'s default. A D chosen
        by cross-validation at ``max_components``, below that rank, warns where its CV error is
        below every smaller D's (a larger D may fit better) or no better than the majority
        class's -- not where the SVM's one-standard-error rule takes it among equal errors.
    n_components_grid : None, 'auto' or array-like of int, default=None
        The D grid, as in :class:`KernelProjectionMachine`
        (:func:`kpm.machine.grids.dim_grid`): None, for the papers' LP every D up to 10, then
        about 20 log-spaced values up to ``max_components`` (each D costs a constraint
        generation), for the SVM every D up to 5, then steps of 25 %; ``'auto'`` every D up
        to 20, then steps of 10 %; or the given values (those above the rank are dropped).
    selection : {'cv', 'penalty', 'slope'}, int or SelectionRule, default='cv'
        How D is chosen, as in :class:`KernelProjectionMachine`: K-fold CV of the 0-1
        error (ties -> smaller D); the penalised clipped hinge risk
        :math:`R_n(\operatorname{clip} f_D) + \lambda D` with :math:`\lambda` = ``penalty``
        (Zwald & Blanchard 2005, eq. 3); the slope heuristic (:math:`\lambda` =
        ``slope_factor`` :math:`\times\, \lambda_{\text{jump}}`); or a fixed D. Or a rule object of
        :mod:`kpm.machine.rules`; :meth:`select_dim` tells which model another rule picks
        from a fitted model's curves.
    cv : int, CV splitter, 'auto' or 'loo', default=5
        Folds for ``selection='cv'`` and ``penalty='cv'``. An int gives a shuffled
        :class:`~sklearn.model_selection.StratifiedKFold` seeded from ``random_state``.
        ``'loo'``: the closed-form leave-one-out error of the squared-hinge SVM on the
        eigenfunction features (``formulation='svm'``, ``loss='squared_hinge'``; in memory),
        as :class:`KernelProjectionMachine`'s default: one fit per C and D instead of one per
        fold. ``'auto'``: ``'loo'`` where it applies and every class has two samples or more,
        else 5 folds.
    penalty : float or 'cv', default='cv'
        :math:`\lambda` for ``selection='penalty'``; ``'cv'`` chooses it by cross-validation over
        the exact breakpoints of the folds' penalty paths.
    slope_factor : float, default=2.0
        Factor of the slope heuristic (Birgé-Massart's 2).
    formulation : {'paper', 'svm', 'auto'}, default='paper'
        ``'paper'``: the KPM's hinge LP in every ``S_D``, by constraint generation.
        ``'svm'``: the soft-margin SVM restricted to ``S_D`` (see above), on the same D grid;
        with ``client`` the squared hinge only, C and D chosen on a subsample in memory and the
        final fit streamed over the workers. With several ``C`` the selection must be
        ``'cv'``. ``'auto'``: as in :class:`KernelProjectionMachine`, ``'svm'`` when D is
        chosen by CV (and no ``client`` is given), ``'paper'`` otherwise; ``formulation_``
        tells which ran.
    C : float, sequence of float or None, default=None
        ``formulation='svm'`` only: the weights of the hinge loss among which CV chooses.
        None: the C rule's grid, as in :class:`KernelProjectionMachine`.
    c_selection : {'two-stage', 'joint'}, default='two-stage'
        ``formulation='svm'`` with CV: how C is chosen, as in
        :class:`KernelProjectionMachine`.
    loss : {'squared_hinge', 'hinge'}, default='squared_hinge'
        ``formulation='svm'``: the SVM's loss, as in :class:`KernelProjectionMachine`.
    early_stopping : bool or 'auto', default='auto'
        ``formulation='svm'`` with CV: stop the folds' paths along D at the first D > 2
        D_best + 20, D_best the CV minimiser so far (``'auto'``: True). The papers' LP always
        solves every D of the grid up to the floor of the training risk.
    n_jobs : int, optional
        Folds run in parallel in joblib threads (HiGHS and BLAS release the GIL;
        :class:`sklearn.utils.parallel.Parallel`, None: one job unless a
        ``joblib.parallel_backend`` context says otherwise). The small dense work of each
        fold runs on one BLAS thread (:mod:`kpm.blas_threads`).
    memory_budget : int, optional
        Bytes of kernel values (an ``rows × m`` block with its temporaries, and the ``m ×
        m`` landmark Gram matrix) held at any time. Default:
        ``kpm.get_config()['block_bytes']``. Too small for one row of ``m`` kernel values
        or for the landmark matrix -> ``ValueError``.
    rank_tol : float in (0, 1), optional
        Relative rank tolerance of the landmark Gram matrix, replacing
        :data:`kpm.spectral.RANK_RTOL` (the default of every estimator).
    solver_options : dict or ConstraintGenerationOptions, optional
        The constraint generation's settings (:class:`kpm.hinge.ConstraintGenerationOptions`:
        ``init_size``, ``tol``, ``lp_tol``, ``aggregate_below``, ``band_size``, ...). With
        ``aggregate_below`` the points of clear hinge loss enter the LP as one linear term,
        which keeps the working set, and the client's memory with ``client=``, small on
        large data (the user guide's "Aggregating the points of clear hinge loss"); the
        estimator then caps the points added per round at ``init_size``. None: the defaults
        of :class:`~kpm.hinge.ConstraintGenerationOptions` in memory, and with ``client=``
        :data:`CLIENT_SOLVER_OPTIONS` (``{'aggregate_below': 0.9, 'band_size': 5000}``: the
        memory-bounded constraint generation; at n = :math:`2 \times 10^6` the client grows by 0.45
        GiB). Unused by ``formulation='svm'``.
    cv_duplicates : {'warn', 'split', 'group'}, default='warn'
        With the leave-one-out error: ``'warn'`` and ``'group'`` leave the copies of a
        duplicated sample out together, ``'split'`` one copy at a time (as in
        :class:`KernelProjectionMachine`). The K folds ignore duplicates.
    client : distributed.Client, optional
        Keep the training data on this client's cluster: features, labels and folds
        persisted on the workers, the violation searches and curves computed there; only
        working-set rows and per-chunk sums reach the client. With ``cv`` an int the folds
        are stratified chunk by chunk (not scikit-learn's StratifiedKFold); a CV splitter
        must put every point in exactly one validation set. With ``formulation='svm'`` X stays
        on the workers, the labels and the selection's subsample come to the client (see
        above). Needs the ``dask`` extra.
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, as :class:`sklearn.svm.SVC` has them (a dict ``{label:
        weight}``, 1 for the classes it does not name, or ``'balanced'``: :math:`n / (n_{\text{classes}}\,
        n_c)`, the counts weighted by ``sample_weight``); they multiply ``sample_weight``
        (see :meth:`fit`). In memory only (not with ``client=``).
    random_state : int, RandomState, Generator or None
        Seeds the landmarks, the folds and the initial working sets.
    verbose : int, default=0
        Progress lines on stderr: 1 for the phases of the fit and each cross-validation
        fold, 2 also for each D of the folds' SVM paths.
    keep_paths : bool, default=False
        Keep, after :meth:`fit`, the curves of every model (training and CV folds) that
        :meth:`select_dim` reads (it raises ``AttributeError`` without them), and
        ``projection_`` up to the grid's largest D. False: the fitted model keeps what
        prediction needs (``dual_coef_`` on the landmarks, ``landmarks_``, ``kernel_``,
        ``intercept_``), the small diagnostics (``selection_curve_``, ``cv_error_``, ...)
        and ``projection_`` up to the selected D only. The fitted function is the same
        either way.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    landmarks_ : ndarray (m, n_features)
    landmark_indices_ : ndarray (m,)
    landmark_residual_ : float or None
        The share of the training data's variance in feature space outside the span of the
        landmarks (:func:`kpm.machine.nystroem_data.landmark_residual`, estimated on
        :data:`RESIDUAL_ROWS` training rows drawn uniformly): what no D can use. 0 when
        every training point is a landmark; None for a kernel not positive semi-definite on
        the landmarks. Above :data:`LANDMARK_RESIDUAL_WARN`, :meth:`fit` warns.
    kernel_ : kpm.kernels.Kernel
    eigenvalues_ : ndarray (r,)
        Landmark Gram eigenvalues kept (:math:`r \le` ``max_components``).
    n_components_grid_ : ndarray
    n_components_ : int
        The selected D.
    cv_error_ : ndarray or None
        Pooled CV 0-1 error (misclassified validation points of all folds / n) for each D
        of the grid (with ``formulation='svm'``: at the chosen C); NaN from the first D a
        fold's path did not reach; None when the rule runs no CV.
    cv_errors_ : ndarray (n_folds, len(grid)) or None
        Each fold's validation error rate (NaN likewise).
    selection_curve_ : dict of ndarray
        Per model: ``D``, ``kernel`` (0), ``cv_error``, ``hinge_risk``, ``clipped_risk``,
        ``train_error``, ``criterion``, as in :class:`KernelProjectionMachine`; with
        ``formulation='svm'`` also ``C``: the models are the (C, D) pairs, in that order.
    formulation_ : {'paper', 'svm'}
    C_ : float or None
        ``formulation='svm'``: the chosen C (None for the paper's LP).
    c_selection_curve_ : dict of ndarray or None
        ``c_selection='two-stage'`` with CV: stage one's pooled CV error per ``C`` (with
        ``C=None``: the grid, then ``kpm.machine.C_EXTENSION``; NaN for a C not tried).
    penalty_, slope_lambda_ : float or None
        The ``lam`` used by the penalty or slope rule, and ``lam_jump`` of the slope
        heuristic.
    penalty_cv_curve_ : dict
        ``penalty='cv'`` only: the candidate ``lam`` and their pooled CV errors.
    coef_ : ndarray (D,) or (n_classes, D)
        :math:`\beta` in eigenfunction coordinates (one row per one-vs-rest problem).
    intercept_ : float or ndarray (n_classes,)
    projection_ : ndarray (m, n_components_), or (m, max D of the grid) with ``keep_paths=True``
        :math:`P = \sqrt{m}\, U \Lambda^{-1}`: eigenfunction features are ``K(x, Z) @ P``.
    dual_coef_ : ndarray (m,) or (n_classes, m)
        :math:`a = P_D \beta`: :math:`f(x) = \sum_l a_l k(z_l, x) + b`.
    train_risk_ : ndarray
        Training hinge risk (averaged over the one-vs-rest problems) for each D of the grid
        up to ``n_components_``.
    lp_stats_ : dict
        Working-set sizes, aggregated points, rounds, certificate gaps and simplex
        iterations of the full-data path (lists over its dimensions; one list per
        one-vs-rest problem for more than two classes), and the CV folds' seconds and
        working-set sizes. With ``formulation='svm'``: ``sweeps`` of the dual coordinate
        descent at each D of the chosen C's full-data path, and ``cv_fold_seconds``.
    lp_failures_ : list of dict
        Paths that ended because no LP solver solved a dimension: ``{'path': 'fold k' or
        'full data', 'problem', 'kernel', 'dim', 'error'}``; :meth:`fit` then warned
        (``ConvergenceWarning``) and selected D below the first failure.
    lp_fallbacks_ : int
        Working-set LPs solved by the exact KPM's path solver after HiGHS failed.
    n_selection_samples_ : int
        The training points on which C and D were chosen (and on which the curves --
        ``cv_error_``, ``train_risk_``, ... -- are computed): all of them, or the subsample of a
        streamed fit.
    streamed_steps_ : int or None
        Newton steps of the streamed final fit on all the points (each reads the data twice;
        0: the subsample's solution was the minimiser); None in memory.
    timings_ : dict
        Seconds spent in each phase (``streamed_fit``: the streamed final fit).
    fit_time_ : float
        Seconds spent in :meth:`fit`.

    See Also
    --------
    KernelProjectionMachine : The KPM at every n: the exact basis within the memory budget,
        this Nyström basis beyond (``basis='auto'``), with the SVM and the leave-one-out
        error by default.
    KernelProjection : Kernel PCA coordinates, with a Nyström mode, for any linear model.
    sklearn.kernel_approximation.Nystroem : Nyström features for a linear model.
    sklearn.calibration.CalibratedClassifierCV : Class probabilities from the decision
        values (the user guide's "Probabilities").

    Examples
    --------
    >>> from kpm import NystroemKPM
    >>> from kpm.datasets import make_twonorm
    >>> X, y = make_twonorm(2000, random_state=0)
    >>> clf = NystroemKPM(n_landmarks=200, sigma="median", max_components=30,
    ...                   random_state=0).fit(X, y)
    >>> clf.n_components_              # eigenfunctions chosen by 5-fold CV
    14
    >>> clf.dual_coef_.shape           # f(x) = sum of 200 kernel terms + b
    (200,)
    >>> X_test, y_test = make_twonorm(10000, random_state=1)
    >>> print(f"{clf.score(X_test, y_test):.3f}")  # Bayes error: 2.3 %
    0.977

    The penalty rule of Zwald & Blanchard, here with ``lam`` chosen by CV: such a fit holds
    every curve and, with ``keep_paths=True``, answers the other rules without re-fitting:

    >>> pen = NystroemKPM(n_landmarks=200, sigma="median", max_components=30,
    ...                   selection="penalty", penalty="cv", keep_paths=True,
    ...                   random_state=0).fit(X, y)
    >>> pen.n_components_, pen.select_dim("cv").n_components, pen.select_dim("slope").n_components
    (14, 14, 2)

    More than two classes: one-vs-rest, a score per class.

    >>> y3 = (X[:, 0] > 0.3).astype(int) + (X[:, 1] > 0)
    >>> clf3 = NystroemKPM(n_landmarks=200, sigma="median", max_components=30,
    ...                    random_state=0).fit(X, y3)
    >>> clf3.decision_function(X_test).shape, clf3.dual_coef_.shape
    ((10000, 3), (3, 200))
    """

    _name = "NystroemKPM"
    _prefer = "threads"
    _parameter_constraints = {
        **SELECTION_PARAMETERS,
        "n_landmarks": [Integer(1)],
        "landmarks": [Options(*LANDMARK_RULES)],
        "max_components": [Integer(1), None],
        "n_components_grid": [Options("auto"), IntegerGrid(1), None],
        "cv": [Integer(2), Splitter(), Options("auto", "loo")],
        "cv_duplicates": [Options("warn", "split", "group")],
        "memory_budget": [Integer(1), None],
        "rank_tol": [Real(0, 1, "neither"), None],
        "loss": [Options(*LOSSES)],
        "early_stopping": [Boolean(), Options("auto")],
        "solver_options": [InstanceOf((dict, ConstraintGenerationOptions), "a dict or a ConstraintGenerationOptions"),
                           None],
        "random_state": [RandomState(), InstanceOf(np.random.Generator, "a numpy Generator")],
    }

    def __init__(
        self,
        n_landmarks=1000,
        *,
        landmarks="uniform",
        kernel="rbf",
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        max_components=100,
        n_components_grid=None,
        selection="cv",
        cv=5,
        penalty="cv",
        slope_factor=2.0,
        formulation="paper",
        C=None,
        c_selection="two-stage",
        loss="squared_hinge",
        early_stopping="auto",
        n_jobs=None,
        memory_budget=None,
        rank_tol=None,
        solver_options=None,
        cv_duplicates="warn",
        client=None,
        class_weight=None,
        random_state=None,
        verbose=0,
        keep_paths=False,
    ):
        store_init_params(self, locals())

    def fit(self, X, y, sample_weight=None):
        r"""Fit: landmarks, eigenfunctions, features, the paths the rule needs, the rule.

        The algorithm is the exact KPM's (:class:`kpm.machine.base.BaseKPM`) on the
        Nyström basis.

        Parameters
        ----------
        X : array-like or dask array (n_samples, n_features)
        y : array-like or dask array (n_samples,)
            Class labels (two or more classes; more: one-vs-rest). A Dask ``y`` stays on the
            workers with ``client=``.
        sample_weight : array-like (n_samples,), optional
            Non-negative weights of the samples, multiplied by ``class_weight``'s; in memory
            only (not with ``client=``). A sample of weight 0 is left out. The landmarks are
            drawn from the other samples without regard to the weights and carry their
            weights into the basis: the eigenfunctions of :math:`W^{1/2} K(Z, Z) W^{1/2}` (the
            landmark set with each landmark repeated :math:`w_l` times, for integer weights).
            The hinge LP weighs each hinge term (:math:`\sum_i w_i \xi_i`, in the constraint
            generation too), the SVM gives each sample :math:`C w_i`, and the CV and training errors count
            each sample with its weight. With every training sample a landmark and a fixed D,
            an integer weight is the same fit as that many copies of the sample; otherwise
            the landmark draws of the weighted and of the repeated data differ.

        Returns
        -------
        self
        """
        return super().fit(X, y, sample_weight)

    # ------------------------------------------------------------------ the fit's parts
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        return tags

    def _check_params(self):
        if self.formulation == "svm" and self.client is not None and self.loss != "squared_hinge":
            raise ValueError(
                "formulation='svm' with client= fits the squared hinge (the final fit streamed by Newton "
                "steps over the workers' chunks); use loss='squared_hinge', fit in memory (client=None), or "
                "use formulation='paper'"
            )
        ConstraintGenerationOptions.of(self.solver_options)
        check_client(self.client)

    def _lp_only(self):
        # with client=, 'auto' is the constraint-generation LP; formulation='svm' is streamed
        return self.client is not None and self.formulation != "svm"

    def _lp_reason(self):
        return "with client=" if self._lp_only() else None

    def _fit_context(self):
        return dask_errors(self.client)

    def _early_stopping(self):
        return True if self.early_stopping == "auto" else self.early_stopping

    def _loo_c_dim(self):
        """The D of stage one with the leave-one-out error: at most :data:`SVM_MAX_COMPONENTS`
        with ``max_components=None``, as the exact basis's; else the grid's largest."""
        return SVM_MAX_COMPONENTS if self.max_components is None else None

    def _cg_options(self, seed):
        """The constraint generation's settings: ``solver_options`` (None with a client:
        :data:`CLIENT_SOLVER_OPTIONS`), with the points added per round capped at
        ``init_size`` when aggregating, and the seed of its working sets."""
        options = self.solver_options
        if options is None and self.client is not None:
            options = CLIENT_SOLVER_OPTIONS
        opts = ConstraintGenerationOptions.of(options)
        settings = {f: getattr(opts, f) for f in opts.__dataclass_fields__}
        settings["random_state"] = seed
        if opts.aggregate_below is not None and opts.max_add is None:
            settings["max_add"] = opts.init_size
        return settings

    def _training_data(self, X, y, plan, sample_weight=None):
        client = self.client
        if client is not None and (sample_weight is not None or self.class_weight is not None):
            raise ValueError(
                "sample_weight and class_weight are not supported with client= (the distributed constraint "
                "generation weighs every point alike); fit in memory (client=None) to weigh the samples"
            )
        svm_client = client is not None and plan.formulation == "svm"  # selection in memory, the final fit streamed
        X, y, self.n_features_in_ = check_training_data(self, X, y, distributed=client is not None)
        if svm_client:  # X persisted on the workers once, the n labels on the client
            X, y = streamed.persisted(X, client), np.asarray(y.compute() if is_dask_array(y) else y)
        weights = keep = None
        y_all = y
        if client is None or svm_client:
            sample_weight, keep = positive_weights(sample_weight, y, who=self._name)
            if keep is not None:
                kept = np.flatnonzero(keep)
                X, y, sample_weight = X[kept], y[kept], sample_weight[kept]
            self.classes_, codes, Y = one_vs_rest(y, "NystroemKPM")
            weights = fit_weights(sample_weight, self.class_weight, y, self.classes_, who=self._name)
        seeds = np.random.default_rng(_seed(self.random_state)).integers(2**31 - 1, size=4)
        m = min(self.n_landmarks, X.shape[0])
        self.block_rows_ = rows = block_rows(self.memory_budget, m, m if self.max_components is None else self.max_components)
        t = time.perf_counter()
        basis = nystroem_basis(self, X, seeds, plan, weights)
        self.landmark_residual_ = basis.residual
        phases = {"landmarks_eigen": time.perf_counter() - t}
        self._progress(f"{len(basis.indices)} landmarks, {len(basis.eigenvalues)} eigenfunctions; the features of "
                       f"{X.shape[0]} points")
        t = time.perf_counter()
        self.n_selection_samples_ = X.shape[0]
        if client is None or svm_client:
            stream = None
            if svm_client or (plan.formulation == "svm" and plan.loss == "squared_hinge"):
                stream = streamed.streamed_fit(X, Y, codes, weights, basis.projection.shape[1], rows, int(seeds[2]),
                                               client if svm_client else None)
            if stream is not None:  # C and D chosen on a subsample, the final fit streamed
                idx = stream.selection
                X = check_samples(X[idx].compute()) if svm_client else X[idx]
                y = y_all = np.asarray(y)[idx]
                codes, Y, keep, weights = codes[idx], Y[idx], None, None if weights is None else weights[idx]
                self.n_selection_samples_ = len(idx)
            splits = cv_total = groups = None
            if plan.rule.needs_cv and isinstance(self.cv, str) and self.cv_duplicates != "split":
                groups = duplicate_groups(X)  # the copies the leave-one-out error leaves out together
            loo = plan.rule.needs_cv and uses_loo(self.cv, plan, codes, groups, self._name)
            if loo:
                cv_total = len(y) if weights is None else float(weights.sum())
            elif plan.rule.needs_cv:  # with keep: the folds of the samples of positive weight (a splitter
                # sees them all); by the labels, which a too-small class's warning names
                cv = DEFAULT_FOLDS if isinstance(self.cv, str) else self.cv
                splits = make_splits(np.asarray(y_all), cv, int(seeds[2]), len(self.classes_), keep=keep,
                                     who=self._name, stacklevel=6)
                cv_total = validation_total(splits, weights)
            F = basis.features(X, rows, order="C" if loo else "F")
            phases["features"] = time.perf_counter() - t
            return InMemoryData(F, Y, codes, splits, basis.grid, basis.svm_scale, self._cg_options(int(seeds[3])),
                                weights, basis, cv_total, loo, groups if loo else None, phases, stream)
        self.classes_, data = dask_training_data(X, y, self.cv, plan.rule, seeds, basis, rows, client,
                                                 self._cg_options(int(seeds[3])), phases, t, DASK_CHUNK_BYTES)
        return data

    def _family(self, data, plan):
        basis = data.basis
        settings = EngineSettings(self._early_stopping(), self._loo_c_dim(), self.n_jobs, self._prefer, self._progress)
        fit = BasisFit(basis, basis.grid, basis.capped, data.columns, basis.svm_scale,
                       ConstraintGenerationFullPath(data), data if data.n_folds else None, row_block=ROW_BLOCK)
        return build_family([fit], data, plan, settings)

    def _set_solution(self, kp, D, data):
        basis, full = kp.basis, kp.full
        self.landmark_indices_ = basis.indices
        self.landmarks_ = basis.landmarks
        self.kernel_ = basis.kernel
        self.eigenvalues_ = basis.eigenvalues
        self.projection_ = basis.projection
        self.n_components_grid_ = kp.grid
        self.cv_errors_, self.cv_error_ = cv_error_table(kp, data.val_sizes(),
                                                         data.n if data.cv_total is None else data.cv_total)
        coefs = [p.coef_at(D) for p in full.paths]
        coef = np.array([beta for beta, _ in coefs])
        intercept = np.array([b for _, b in coefs])
        self.streamed_steps_ = None
        if getattr(data, "stream", None) is not None:  # the SVM at the chosen (D, C) on every training point
            t = time.perf_counter()
            coef, intercept, self.streamed_steps_ = data.stream.refit(basis, D, self.C_, coef, intercept)
            data.phases["streamed_fit"] = time.perf_counter() - t
        dual = coef @ basis.projection[:, :D].T
        binary = len(coefs) == 1
        self.coef_ = coef[0] if binary else coef
        self.intercept_ = float(intercept[0]) if binary else intercept
        self.dual_coef_ = dual[0] if binary else dual
        self.train_risk_ = full.hinge_risk[: int(np.searchsorted(full.dims, D)) + 1]
        self.lp_stats_ = (lp_stats(kp.solve_path.solvers, kp.folds) if self.formulation_ == "paper"
                          else svm_stats(full.paths, kp.folds))

    def _drop_paths(self):
        """Also ``projection_`` beyond the selected D (what :meth:`transform_eigenfunctions`
        reads for a larger D)."""
        super()._drop_paths()
        self.projection_ = np.ascontiguousarray(self.projection_[:, : self.n_components_])

    def _failure_hint(self):
        return ("This happens where the training data are nearly separable in the span of the "
                "eigenfunctions only with huge coefficients (rough eigenfunctions of tiny "
                "eigenvalues: lower max_components or raise rank_tol).")

    def _warn_fit(self, family, data):
        super()._warn_fit(family, data)
        if isinstance(data, InMemoryData) and data.stream is None:  # streamed: the landmarks are
            # a small share of a large training set, whose features and labels are not all in memory
            self._warn_self_similarity(data)
        share = self.landmark_residual_
        if share is not None and share > LANDMARK_RESIDUAL_WARN:
            warnings.warn(
                f"{self._name}: the span of the {len(self.landmark_indices_)} landmarks leaves out "
                f"{share:.0%} of the training data's variance in feature space (landmark_residual_): "
                "no D can use it, so the landmarks, not D, limit this model. Raise n_landmarks (or fit "
                "the exact KernelProjectionMachine where n allows).",
                UserWarning,
                stacklevel=4,
            )

    def _warn_self_similarity(self, data):
        """The landmarks' training values without their self-similarity against the estimate
        the selection read (:mod:`kpm.machine.self_similarity`): the CV folds keep every
        landmark's eigenfunction, the validation points' own among them."""
        idx = data.basis.indices
        coef, b = np.atleast_2d(self.coef_), np.atleast_1d(self.intercept_)
        scores = data.F[idx, : self.n_components_] @ coef.T + b[None, :]
        weights = None if data.weights is None else data.weights[idx]
        self._warn_self_similarity_of(self.kernel_(self.landmarks_), scores, np.atleast_2d(self.dual_coef_).T,
                                      data.codes[idx], weights, stacklevel=5)

    def _default_reference(self, X):
        if is_dask_array(X) or self.client is not None:
            return None
        return super()._default_reference(X)

    def _own_exact_model(self):
        if len(self.landmarks_) < self.n_selection_samples_:  # a basis of fewer points than the data's
            return None
        return own_model(self, centered=False, loss=self.loss)

    def _default_advice(self):
        return ("KernelProjectionMachine() (its default: the soft-margin SVM in S_D, C and D by leave-one-out) "
                "is the better choice on such data.")

    def _warn_degenerate(self, family, data):
        coef, b = np.atleast_2d(self.coef_), np.atleast_1d(self.intercept_)
        if not isinstance(data, InMemoryData):  # features on the workers: counts travel
            warn_if_degenerate_counts(*data.prediction_counts(coef, b), self.classes_, self._name, stacklevel=6)
            return
        f_train = data.F[:, : self.n_components_] @ coef.T + b[None, :]
        predictions = self.classes_[predict_codes(f_train)]
        if data.weights is None:
            warn_if_degenerate_model(predictions, self.classes_[data.codes], self.classes_, self._name, stacklevel=6)
        else:
            warn_weighted_degenerate(predictions, self.classes_[data.codes], data.weights, self.classes_, self._name,
                                     stacklevel=7)

    # ------------------------------------------------------------------ data and basis
    # ------------------------------------------------------------------ predict
    def _scores(self, X):
        X = check_estimator_data(self, X, reset=False)
        A = np.atleast_2d(self.dual_coef_).T  # (m, n_problems)
        return expansion_scores(X, self.landmarks_, A, self.kernel_, self.block_rows_) + np.atleast_1d(
            self.intercept_)[None, :]

    def decision_function(self, X):
        r""":math:`f(x) = \sum_l a_l k(z_l, x) + b`, rounded to 9 decimals as :meth:`predict` reads
        it: shape (n,) for two classes (positive -> ``classes_[1]``), (n, n_classes)
        otherwise. A Dask array X gives a lazy Dask array (computed blockwise where X's
        chunks are)."""
        if not is_dask_array(X):
            return super().decision_function(X)
        check_is_fitted(self)
        F = dask_scores(X, self).round(9)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X):
        """Class labels (:meth:`kpm.machine.base.BaseKPM.predict`); a Dask array X gives a lazy
        Dask array of labels."""
        if is_dask_array(X):
            check_is_fitted(self)
            return dask_scores(X, self).map_blocks(labels_block, self.classes_, dtype=self.classes_.dtype,
                                                   drop_axis=1)
        return super().predict(X)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on ``(X, y)``. For a Dask X the comparison runs blockwise where the
        data are (on the workers with ``client``) and only the number travels back."""
        if not is_dask_array(X):
            return super().score(X, y, sample_weight=sample_weight)
        return dask_accuracy(self.predict(X), y, sample_weight, self.client)

    def transform_eigenfunctions(self, X, n_components=None):
        """The Nyström eigenfunction features ``φ_1..φ_D`` of X (default D = ``n_components_``;
        a larger D needs a fit with ``keep_paths=True``)."""
        check_is_fitted(self)
        X = check_estimator_data(self, X, reset=False)
        D = self.n_components_ if n_components is None else n_components
        if not self._has_paths() and isinstance(D, numbers.Integral) and D > self.projection_.shape[1]:
            raise ValueError(f"n_components={D} is above the selected D = {self.n_components_}: the eigenfunctions "
                             "beyond it are kept by a fit with keep_paths=True")
        D = check_int(D, "n_components", maximum=self.projection_.shape[1])
        return self.kernel_.matvec(X, self.projection_[:, :D], self.landmarks_)
