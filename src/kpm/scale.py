"""The Kernel Projection Machine for very large n: Nyström eigenfunctions, exact
hinge-loss LPs by constraint generation, cross-validation over D, and Dask.

Method
------
1. *Landmarks.* ``m = n_landmarks`` training points, drawn uniformly, by
   k-means++ seeding or by randomly pivoted Cholesky (the last two on a uniform
   subsample of at most ``20 m`` points, so that they cost ``O(m^2 d)`` and
   ``O(m^3)`` rather than ``O(n m d)`` and ``O(n m^2)``; :mod:`kpm.landmarks`).
2. *Approximate eigenfunctions.* The landmark Gram matrix ``W = K(Z, Z) = U Λ Uᵀ``
   (uncentred, as in the KPM of Blanchard, Massart, Vert & Zwald, 2004). The
   Nyström extension of the j-th eigenvector, normalised to unit mean square on the landmarks, is
   ``φ_j(x) = sqrt(m) / λ_j · Σ_l U_lj k(z_l, x)``; ``φ_j`` converges to the
   eigenfunction of the kernel integral operator ``T_k`` of the paper's §2.2, of
   which the exact KPM's Gram eigenvectors are the n-point version. Directions
   with ``λ_j <= eig_tol · λ_1`` are dropped.
3. *Features for all n points* ``F = K(X, Z) P`` with ``P = sqrt(m) U_D Λ_D^{-1}``,
   computed block by block: at no time is more than ``memory_budget`` bytes of
   kernel values (an ``rows × m`` block and its temporaries) held, and the
   ``n × m`` matrix is never formed; only the ``n × max_components`` features are
   kept.
4. *Hinge-loss ERM over S_D = span{1, φ_1..φ_D}* -- the KPM's LP (Blanchard,
   Massart, Vert & Zwald 2004, Section 3) -- solved exactly for every D of the
   grid by constraint generation with HiGHS, warm-started along D
   (:mod:`kpm._constraint_generation`).
5. *Selection of D* by k-fold cross-validation of the 0-1 error over the D
   grid, ties to the smaller D (the exact KPM's ``cv`` rule); the folds run in
   parallel (joblib threads, or Dask tasks when a ``client`` is given).
6. The final machine is ``f(x) = Σ_l a_l k(z_l, x) + b`` with ``a = P_D β``: an
   ``m``-term kernel expansion, so prediction costs ``O(m)`` kernel evaluations.

Dask
----
``X`` may be a :class:`dask.array.Array`; the features are then computed
blockwise as Dask tasks (``map_blocks``). With ``client=`` (a
``distributed.Client``) the feature blocks *and* the per-fold LP paths run on
the cluster's workers. If the client loses its scheduler or workers mid-run,
``fit`` raises :class:`DaskClientError` and the estimator is left unfitted —
never a partially fitted model.
"""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ._base import KernelParamsMixin
from ._config import get_config
from ._constraint_generation import ConstraintGenerationHingeLP
from .exceptions import LPSolverError
from .landmarks import LANDMARK_RULES, select_landmarks
from .validation import (
    check_estimator_data,
    check_int,
    check_kernel_matrix,
    check_option,
    check_real,
    check_samples,
    warn_if_degenerate_kernel,
    warn_if_degenerate_model,
)

__all__ = ["NystroemKPM", "DaskClientError", "nystroem_eigenfunctions"]  # select_landmarks: kpm.landmarks

_FITTED = (
    "classes_",
    "landmarks_",
    "landmark_indices_",
    "kernel_",
    "eigenvalues_",
    "n_components_grid_",
    "cv_error_",
    "cv_errors_",
    "n_components_",
    "coef_",
    "intercept_",
    "dual_coef_",
    "projection_",
    "train_risk_",
    "lp_stats_",
    "lp_failures_",
    "timings_",
    "n_features_in_",
    "feature_names_in_",
    "block_rows_",
)


class DaskClientError(RuntimeError):
    """The Dask client or cluster failed during ``fit``; no model was fitted."""


def _is_dask_array(X) -> bool:
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is a dependency
        return False
    return isinstance(X, da.Array)


def _dask_failure_types():
    import asyncio
    import concurrent.futures

    types = [OSError, TimeoutError, asyncio.TimeoutError, concurrent.futures.CancelledError]
    try:
        from distributed import KilledWorker
        from distributed.client import FutureCancelledError
        from distributed.comm.core import CommClosedError

        types += [CommClosedError, KilledWorker, FutureCancelledError]
    except ImportError:  # pragma: no cover
        pass
    return tuple(types)


def _check_client(client):
    if client is None:
        return None
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover
        raise ValueError("client= needs the 'distributed' package") from exc
    if not isinstance(client, Client):
        raise ValueError(f"client must be a distributed.Client or None, got {type(client).__name__}")
    if client.status != "running":
        raise DaskClientError(
            f"the Dask client is not connected (status {client.status!r}); no model was fitted"
        )
    return client


# --------------------------------------------------------------------------- pieces
def _seed(random_state):
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.Generator)):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    raise ValueError(f"random_state must be None, an int or a RandomState, got {random_state!r}")


def nystroem_eigenfunctions(kernel, Z, *, max_components=None, eig_tol=None):
    """Approximate eigenfunctions from the landmark Gram matrix.

    The Nyström extension (Williams & Seeger 2001) of the eigenvectors of ``K(Z, Z)``,
    from its :class:`kpm.spectral.EigenBasis` (uncentred, cut at the package's rank
    tolerance): ``phi_j(x) = sqrt(m) / lambda_j * sum_l U_lj k(z_l, x)``, normalised to
    unit mean square on the landmarks.

    Parameters
    ----------
    kernel : kpm.kernels.Kernel
        A kernel on feature vectors (not ``'precomputed'``).
    Z : array-like (m, n_features)
        The landmarks.
    max_components : int, optional
        Most eigenfunctions returned (default: all up to the rank).
    eig_tol : float in (0, 1), optional
        Relative rank tolerance replacing :data:`kpm.spectral.RANK_RTOL` (``1e-10``, the
        default): eigenvalues at or below ``eig_tol * λ_1``, or at the rounding level
        ``m eps max|K(Z, Z)|``, are dropped.

    Returns
    -------
    eigenvalues : ndarray (r,)
        Eigenvalues of ``K(Z, Z)`` above the rank cut (decreasing), at most
        ``max_components`` of them.
    projection : ndarray (m, r)
        ``P = sqrt(m) U Λ^{-1}``: the features of x are ``K(x, Z) @ P``.

    Warns
    -----
    DegenerateKernelWarning
        When ``K(Z, Z)`` is numerically the identity or constant (a kernel width far
        from the scale of the data).
    """
    from .kernels import Kernel
    from .spectral import RANK_RTOL, eigen_basis

    if not isinstance(kernel, Kernel) or kernel.is_precomputed:
        raise ValueError(
            "kernel must be a kpm.kernels.Kernel on feature vectors (see kpm.make_kernel), got "
            f"{kernel!r}"
        )
    if eig_tol is not None:
        eig_tol = check_real(eig_tol, "eig_tol", low=0, high=1, low_open=True, high_open=True)
    Z = check_samples(Z, "Z")
    m = len(Z)
    k = m if max_components is None else min(m, check_int(max_components, "max_components"))
    Wm = kernel(Z, Z)
    if kernel.user_defined:  # the built-in kernels are symmetric by construction
        Wm = check_kernel_matrix(Wm, f"the landmark kernel matrix K(Z, Z) of the {kernel.name} kernel")
    warn_if_degenerate_kernel(Wm, "NystroemKPM: the landmark kernel matrix K(Z, Z)")
    # only the top k (LAPACK subset eigh)
    basis = eigen_basis(Wm, None if k == m else k, solver="dense",
                        rtol=RANK_RTOL if eig_tol is None else eig_tol)
    if not basis.eigenvalues[0] > 0:
        raise ValueError("the landmark kernel matrix K(Z, Z) has no positive eigenvalue")
    basis = basis.truncate()
    lam = basis.eigenvalues
    return lam, basis.eigenvectors * (np.sqrt(m) / lam)[None, :]


def _feature_block(Xb, Z, P, kernel):
    """``K(Xb, Z) @ P`` (kernel values checked: overflow is a clear error)."""
    return kernel.matvec(Xb, P, Z)


def _lp_path(cg, dims):
    """Solve ``cg`` (a :class:`ConstraintGenerationHingeLP`) for each D of ``dims``;
    the path ends where no LP solver solves a dimension.

    Returns ``(solutions, failure)`` with ``failure = (D, message)`` or None.
    """
    path = []
    for D in dims:
        try:
            path.append(cg.solve(D))
        except LPSolverError as exc:
            return path, (int(D), str(exc))
    return path, None


def _fold_job(F, y, train, val, grid, lp_params):
    """CV work of one fold: the LP path on ``train``, 0-1 error on ``val`` per D.

    The path ends where no LP solver solves a dimension (the errors of that D and
    beyond are NaN, the failure is returned).
    """
    t0 = time.perf_counter()
    cg = ConstraintGenerationHingeLP(F, y, rows=train, **lp_params)
    path, failure = _lp_path(cg, grid)
    errs = np.full(len(grid), np.nan)
    Fv = F[val]
    for k, res in enumerate(path):
        f = Fv[:, : res.n_components] @ res.coef + res.intercept
        errs[k] = np.mean(np.where(f >= 0, 1.0, -1.0) != y[val])
    return errs, time.perf_counter() - t0, len(cg.working_set), failure


def _select_cv(grid, cv_error):
    """The exact KPM's cv rule (:func:`kpm.selection.select_cv`): smallest mean CV
    0-1 error, ties to the smaller D."""
    from .selection import select_cv

    return int(np.asarray(grid)[select_cv(grid, cv_error)])


# --------------------------------------------------------------------------- estimator
class NystroemKPM(KernelParamsMixin, ClassifierMixin, BaseEstimator):
    """Kernel Projection Machine on Nyström eigenfunctions, for very large n.

    Binary classifier. See the module docstring for the method.

    Parameters
    ----------
    n_landmarks : int, default=1000
        Number m of landmark points, capped at the number of training samples.
    landmarks : {'uniform', 'kmeans++', 'rpcholesky'}, default='uniform'
        How the landmarks are drawn from the training set
        (:func:`kpm.landmarks.select_landmarks`): uniformly, by k-means++ seeding, or by
        randomly pivoted Cholesky on the kernel matrix (Chen, Epperly, Tropp & Webber
        2023), which reads ``O(n m)`` kernel entries and gives a smaller Nyström error.
    kernel : str or callable, default='rbf'
    sigma, gamma : float or str, optional
        RBF width (``sigma`` as in the KPM papers, or ``'median'``); see
        :func:`kpm.kernels.make_kernel`. Data-dependent defaults are computed
        on a uniform subsample of at most 10 000 rows.
    degree, coef0 : float
        Polynomial / sigmoid parameters.
    kernel_params : dict, optional
    max_components : int, default=100
        Largest D considered (capped by the numerical rank of the landmark Gram
        matrix); the features matrix is ``n × max_components``.
    n_components_grid : array-like of int, optional
        The D grid. Default: every D up to 10, then about 20 log-spaced values up
        to ``max_components``. Values above the rank are dropped.
    cv : int, default=5
        Number of stratified folds for the choice of D.
    n_jobs : int, optional
        Folds run in parallel in joblib threads (HiGHS and BLAS release the GIL).
    memory_budget : int, optional
        Bytes of kernel values (an ``rows × m`` block with its temporaries, and
        the ``m × m`` landmark Gram matrix) held at any time. Default:
        ``kpm.get_config()['block_bytes']``. Too small for one row of ``m``
        kernel values or for the landmark matrix -> ``ValueError``.
    eig_tol : float, default=1e-10
        Relative eigenvalue threshold of the landmark Gram matrix.
    lp_tol : float, default=1e-9
        Termination tolerance of the constraint generation and HiGHS feasibility
        tolerance.
    init_working_set : int, default=5000
        Initial working-set size of the constraint generation.
    client : distributed.Client, optional
        Run the feature blocks and the folds as Dask tasks on this client.
    random_state : int, RandomState or None
        Seeds the landmarks, the folds and the initial working sets.

    Attributes
    ----------
    classes_ : ndarray (2,)
    landmarks_ : ndarray (m, n_features)
    landmark_indices_ : ndarray (m,)
    kernel_ : kpm.kernels.Kernel
    eigenvalues_ : ndarray (r,)
        Landmark Gram eigenvalues kept (``r <= max_components``).
    n_components_grid_ : ndarray
    cv_error_ : ndarray
        Mean CV 0-1 error for each D of the grid.
    cv_errors_ : ndarray (cv, len(grid))
    n_components_ : int
        The selected D.
    coef_ : ndarray (D,)
        ``β`` in eigenfunction coordinates.
    intercept_ : float
    projection_ : ndarray (m, max D of the grid)
        ``P = sqrt(m) U Λ^{-1}``: eigenfunction features are ``K(x, Z) @ P``.
    dual_coef_ : ndarray (m,)
        ``a = P_D β``: ``f(x) = Σ_l a_l k(z_l, x) + b``.
    train_risk_ : ndarray
        Mean training hinge loss for each D of the grid up to ``n_components_``
        (the final path on all data).
    lp_stats_ : dict
        Working-set sizes, rounds, certificate gaps of the final path.
    lp_failures_ : list of dict
        Paths that ended because no LP solver solved a dimension (HiGHS's dual
        simplex warm and cold, its interior point method, then the exact KPM's path
        solver): ``{'path': 'fold k'
        or 'final', 'dim': D, 'error': message}``. Empty on ordinary data; otherwise
        :meth:`fit` warned (``ConvergenceWarning``) and selected D below the first
        failure.
    timings_ : dict
        Seconds spent in each phase.

    See Also
    --------
    KernelProjectionMachine : The exact KPM (every training point a landmark, the
        eigenvectors of the whole kernel matrix), with all three selection rules.
    KernelProjection : Kernel PCA coordinates, with a Nyström mode, for any linear model.
    sklearn.kernel_approximation.Nystroem : Nyström features for a linear model.

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
    """

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
        cv=5,
        n_jobs=None,
        memory_budget=None,
        eig_tol=1e-10,
        lp_tol=1e-9,
        init_working_set=5000,
        client=None,
        random_state=None,
    ):
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.max_components = max_components
        self.n_components_grid = n_components_grid
        self.cv = cv
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.eig_tol = eig_tol
        self.lp_tol = lp_tol
        self.init_working_set = init_working_set
        self.client = client
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.pairwise = False
        return tags

    def _budget(self):
        if self.memory_budget is None:
            return int(get_config()["block_bytes"])
        return check_int(self.memory_budget, "memory_budget (bytes)")

    def _block_rows(self, m, D):
        budget = self._budget()
        per_row = 8 * (3 * m + D)  # distances/kernel block (+ temporaries) and the feature row
        rows = budget // per_row
        if rows < 1:
            raise ValueError(
                f"memory_budget={budget} bytes is too small for one block: one row of {m} kernel "
                f"values needs {per_row} bytes; raise memory_budget or lower n_landmarks"
            )
        if 8 * 2 * m * m > budget:
            raise ValueError(
                f"memory_budget={budget} bytes is too small for the {m} x {m} landmark Gram matrix "
                f"and its eigenvectors ({16 * m * m} bytes); raise memory_budget or lower n_landmarks"
            )
        return int(rows)

    def _validate_params(self):
        check_option(self.landmarks, "landmarks", LANDMARK_RULES)
        check_int(self.n_landmarks, "n_landmarks")
        for name in ("max_components", "init_working_set"):
            check_int(getattr(self, name), name)
        check_int(self.cv, "cv", minimum=2)
        check_int(self.n_jobs, "n_jobs", minimum=None, allow_none=True)
        for name in ("eig_tol", "lp_tol"):
            check_real(getattr(self, name), name, low=0, high=1, low_open=True, high_open=True)

    def _grid(self, r):
        if self.n_components_grid is None:
            g = list(range(1, min(10, r) + 1))
            if r > 10:
                g += list(np.unique(np.round(np.geomspace(10, r, 20)).astype(int)))
            grid = np.unique(np.asarray(g, dtype=int))
        else:
            grid = np.asarray(self.n_components_grid)
            if grid.ndim != 1 or grid.size == 0 or not np.issubdtype(grid.dtype, np.integer):
                raise ValueError("n_components_grid must be a non-empty 1-D sequence of integers")
            if np.any(grid < 1):
                raise ValueError("n_components_grid values must be >= 1")
            grid = np.unique(grid)
            grid = grid[grid <= r]
            if grid.size == 0:
                raise ValueError(
                    f"every value of n_components_grid exceeds the rank {r} of the landmark Gram matrix"
                )
        return grid

    def _features(self, X, Z, P, kernel, rows, client):
        """``K(X, Z) @ P`` blockwise (numpy loop, Dask tasks, or on a client)."""
        n = X.shape[0]
        D = P.shape[1]
        if client is None and not _is_dask_array(X):
            F = np.empty((n, D), order="F")
            for start in range(0, n, rows):
                sl = slice(start, min(start + rows, n))
                F[sl] = _feature_block(X[sl], Z, P, kernel)
            return F
        import dask.array as da

        if _is_dask_array(X):
            Xd = X.rechunk((rows, X.shape[1]))
        else:
            Xd = da.from_array(X, chunks=(rows, X.shape[1]))
        Fd = Xd.map_blocks(_feature_block, Z, P, kernel, dtype=float, chunks=(Xd.chunks[0], (D,)))
        if client is None:
            Fl = Fd.compute()
        else:
            Fl = client.compute(Fd).result()
        return np.asfortranarray(Fl)

    def _check_data(self, X, y):
        """``(X, y, n_features_in)``: numpy X in canonical form, or a checked dask array."""
        if not _is_dask_array(X):
            X, y = check_estimator_data(self, X, y, min_samples=2)
            return X, y, X.shape[1]
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}")
        if np.isnan(X.shape[0]):
            raise ValueError("X must have known chunk sizes (call X.compute_chunk_sizes())")
        if _is_dask_array(y):
            y = y.compute()
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != X.shape[0]:
            raise ValueError(f"y must be 1-D with {X.shape[0]} entries, got shape {y.shape}")
        return X, y, X.shape[1]

    def _binary_targets(self, y):
        """``(classes, y in {-1, +1})``; exactly two classes."""
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError(
                f"y has only one class ({classes[0]!r}); NystroemKPM needs exactly 2 classes"
            )
        if len(classes) > 2:
            raise ValueError(
                "Only binary classification is supported. NystroemKPM is a binary classifier: "
                f"y must have exactly 2 classes, got {len(classes)}"
            )
        if len(y) < self.cv:
            raise ValueError(f"cv={self.cv} folds need at least {self.cv} samples, got {len(y)}")
        return classes, np.where(y == classes[1], 1.0, -1.0)

    def _basis(self, X, seeds):
        """Landmarks, kernel and Nyström eigenfunctions: ``(idx, Z, kernel, lam, P, grid)``."""
        n = X.shape[0]
        dask_X = _is_dask_array(X)
        m = min(self.n_landmarks, n)
        sub = np.arange(n)
        if n > m:  # data-dependent widths from a uniform subsample
            sub = np.sort(np.random.default_rng(int(seeds[1])).choice(n, min(n, 10000), replace=False))
        Xs = X[sub]
        if dask_X:
            Xs = check_samples(Xs.compute())
        kernel = self._make_kernel(Xs)
        if kernel.is_precomputed:
            raise ValueError("NystroemKPM needs feature vectors: kernel='precomputed' is not supported")
        idx = select_landmarks(X, m, self.landmarks, int(seeds[0]), kernel=kernel)
        Z = X[idx]
        if dask_X:
            Z = check_samples(Z.compute())
        lam, P = nystroem_eigenfunctions(kernel, Z, max_components=self.max_components, eig_tol=self.eig_tol)
        grid = self._grid(len(lam))
        return idx, Z, kernel, lam, P[:, : grid[-1]], grid

    def _cross_validate(self, F, ypm, grid, lp_params, seed, client):
        """The folds' 0-1 errors per D of the grid: ``[(errors, seconds, |W|, failure)]``."""
        skf = StratifiedKFold(self.cv, shuffle=True, random_state=seed)
        folds = list(skf.split(np.zeros(len(ypm)), ypm))
        for k, (train, _) in enumerate(folds):
            if len(np.unique(ypm[train])) < 2:
                raise ValueError(
                    f"cross-validation fold {k} has training samples of only one class; use fewer "
                    "folds (cv) or more samples of the smaller class"
                )
        if client is not None:
            _check_client(client)
            Ff = client.scatter(F, broadcast=False)
            yf = client.scatter(ypm, broadcast=False)
            futs = [
                client.submit(_fold_job, Ff, yf, tr, va, grid, lp_params, pure=False) for tr, va in folds
            ]
            return client.gather(futs)
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_fold_job)(F, ypm, tr, va, grid, lp_params) for tr, va in folds
        )

    def _features_and_cv(self, X, Z, P, kernel, block_rows, ypm, grid, lp_params, seed, client):
        """Features and CV, with Dask failures turned into :class:`DaskClientError`."""
        timings = {}
        try:
            t = time.perf_counter()
            F = self._features(X, Z, P, kernel, block_rows, client)
            timings["features"] = time.perf_counter() - t
            t = time.perf_counter()
            out = self._cross_validate(F, ypm, grid, lp_params, seed, client)
            timings["cv"] = time.perf_counter() - t
        except DaskClientError:
            raise
        except _dask_failure_types() as exc:
            raise DaskClientError(
                f"the Dask computation failed ({type(exc).__name__}: {exc}); the client or its "
                "cluster disconnected during fit - no model was fitted"
            ) from exc
        except Exception as exc:
            if client is not None and client.status != "running":
                raise DaskClientError(
                    f"the Dask client disconnected during fit ({type(exc).__name__}: {exc}); "
                    "no model was fitted"
                ) from exc
            raise
        if client is not None and client.status != "running":
            raise DaskClientError("the Dask client disconnected during fit; no model was fitted")
        return F, out, timings

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit: landmarks, eigenfunctions, features, CV over D, final LP path.

        Parameters
        ----------
        X : array-like or dask array (n_samples, n_features)
        y : array-like (n_samples,), two classes

        Returns
        -------
        self

        Warns
        -----
        ConvergenceWarning
            When no LP solver solved some dimension of a path: D is then selected
            among the dimensions below it (see ``lp_failures_``).
        DegenerateKernelWarning
            When the landmark kernel matrix is numerically the identity or constant.
        DegenerateModelWarning
            When the fitted function predicts one class on all training samples.
        """
        for a in _FITTED:  # never leave a stale model from an earlier fit
            if a in self.__dict__:
                delattr(self, a)
        self._validate_params()
        client = _check_client(self.client)
        t_all = time.perf_counter()
        X, y, n_features_in = self._check_data(X, y)
        classes, ypm = self._binary_targets(y)
        n = X.shape[0]

        t = time.perf_counter()
        block_rows = self._block_rows(min(self.n_landmarks, n), self.max_components)
        seeds = np.random.default_rng(_seed(self.random_state)).integers(2**31 - 1, size=4)
        idx, Z, kernel, lam, P, grid = self._basis(X, seeds)
        timings = {"landmarks_eigen": time.perf_counter() - t}
        lp_params = dict(init_size=self.init_working_set, tol=self.lp_tol, lp_tol=self.lp_tol,
                         random_state=int(seeds[3]))
        F, out, more = self._features_and_cv(X, Z, P, kernel, block_rows, ypm, grid, lp_params,
                                             int(seeds[2]), client)
        timings.update(more)

        failures = [
            {"path": f"fold {k}", "dim": o[3][0], "error": o[3][1]} for k, o in enumerate(out) if o[3]
        ]
        cv_errors = np.vstack([o[0] for o in out])
        n_valid = int(np.sum(np.all(np.isfinite(cv_errors), axis=0)))
        if n_valid == 0:
            raise LPSolverError(
                f"NystroemKPM: no LP solver solved the smallest dimension D={grid[0]} of a "
                f"cross-validation fold: {failures[0]['error']}"
            )
        cv_error = cv_errors.mean(axis=0)
        D_hat = _select_cv(grid[:n_valid], cv_error[:n_valid])

        t = time.perf_counter()
        path, failure = _lp_path(ConstraintGenerationHingeLP(F, ypm, **lp_params), grid[grid <= D_hat])
        if failure is not None:
            failures.append({"path": "final", "dim": failure[0], "error": failure[1]})
            if not path:
                raise LPSolverError(f"NystroemKPM: no LP solver solved D={failure[0]} on all data: {failure[1]}")
            D_hat = path[-1].n_components
        res = path[-1]
        timings["final_fit"] = time.perf_counter() - t
        timings["total"] = time.perf_counter() - t_all

        self.classes_ = classes
        self.landmark_indices_ = idx
        self.landmarks_ = np.asarray(Z, dtype=float)
        self.kernel_ = kernel
        self.eigenvalues_ = lam
        self.n_components_grid_ = grid
        self.cv_errors_ = cv_errors
        self.cv_error_ = cv_error
        self.n_components_ = D_hat
        self.coef_ = res.coef
        self.intercept_ = float(res.intercept)
        self.dual_coef_ = P[:, :D_hat] @ res.coef
        self.projection_ = P
        self.train_risk_ = np.array([p.objective / n for p in path])
        self.lp_failures_ = failures
        self.lp_stats_ = {
            "n_working": [p.n_working for p in path],
            "n_rounds": [p.n_rounds for p in path],
            "gap": [p.gap for p in path],
            "simplex_iterations": [p.simplex_iterations for p in path],
            "cv_fold_seconds": [o[1] for o in out],
            "cv_fold_working_set": [o[2] for o in out],
        }
        self.timings_ = timings
        self.block_rows_ = block_rows
        self.n_features_in_ = n_features_in
        self._warn_fit(F[:, :D_hat] @ res.coef + res.intercept, y)
        return self

    def _warn_fit(self, f_train, y):
        """The fit's warnings: failed LPs and a one-class model."""
        if self.lp_failures_:
            first = min(self.lp_failures_, key=lambda r: r["dim"])
            warnings.warn(
                f"NystroemKPM: no LP solver solved the hinge LP at D={first['dim']} ({first['path']}); "
                f"D was selected among the dimensions below it (D = {self.n_components_}). This "
                "happens where the training data are nearly separable in the span of the "
                "eigenfunctions only with huge coefficients (rough eigenfunctions of tiny "
                f"eigenvalues: lower max_components or raise eig_tol). Cause: {first['error']}",
                ConvergenceWarning,
                stacklevel=3,
            )
        predictions = self.classes_[(f_train >= 0).astype(int)]
        warn_if_degenerate_model(predictions, y, self.classes_, "NystroemKPM", stacklevel=4)

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """``f(x) = Σ_l a_l k(z_l, x) + b`` (positive -> ``classes_[1]``)."""
        check_is_fitted(self)
        a = self.dual_coef_[:, None]
        if _is_dask_array(X):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1] if X.ndim == 2 else X.shape} features, expected {self.n_features_in_}"
                )
            Xd = X.rechunk((self.block_rows_, X.shape[1]))
            fd = Xd.map_blocks(
                _feature_block, self.landmarks_, a, self.kernel_, dtype=float, chunks=(Xd.chunks[0], (1,))
            )
            f = self.client.compute(fd).result() if self.client is not None else fd.compute()
            return np.asarray(f).ravel() + self.intercept_
        X = check_estimator_data(self, X, reset=False)
        out = np.empty(len(X))
        step = self.block_rows_
        for start in range(0, len(X), step):
            sl = slice(start, min(start + step, len(X)))
            out[sl] = _feature_block(X[sl], self.landmarks_, a, self.kernel_).ravel()
        return out + self.intercept_

    def predict(self, X):
        """Class labels: ``classes_[1]`` where ``f(x) >= 0``."""
        f = self.decision_function(X)
        return self.classes_[(f >= 0).astype(int)]

    def transform_eigenfunctions(self, X, n_components=None):
        """The Nyström eigenfunction features ``φ_1..φ_D`` of X (default D = ``n_components_``)."""
        check_is_fitted(self)
        X = check_estimator_data(self, X, reset=False)
        D = self.n_components_ if n_components is None else n_components
        D = check_int(D, "n_components", maximum=self.projection_.shape[1])
        return self.kernel_.matvec(X, self.projection_[:, :D], self.landmarks_)
