"""The Kernel Projection Machine for very large n: Nyström eigenfunctions, exact
hinge-loss LPs by constraint generation, cross-validation over D, and Dask.

Method
------
1. *Landmarks.* ``m = n_landmarks`` training points, drawn uniformly or by
   k-means++ seeding (on a uniform subsample of at most ``20 m`` points, so that
   the seeding costs ``O(m^2 d)`` rather than ``O(n m d)``).
2. *Approximate eigenfunctions.* The landmark Gram matrix ``W = K(Z, Z) = U Λ Uᵀ``
   (uncentred, as the KPM paper, SPEC §3.1). The Nyström extension of the j-th
   eigenvector, normalised to unit mean square on the landmarks, is
   ``φ_j(x) = sqrt(m) / λ_j · Σ_l U_lj k(z_l, x)``; ``φ_j`` converges to the
   eigenfunction of the kernel integral operator ``T_k`` of the paper's §2.2, of
   which the exact KPM's Gram eigenvectors are the n-point version. Directions
   with ``λ_j <= eig_tol · λ_1`` are dropped.
3. *Features for all n points* ``F = K(X, Z) P`` with ``P = sqrt(m) U_D Λ_D^{-1}``,
   computed block by block: at no time is more than ``memory_budget`` bytes of
   kernel values (an ``rows × m`` block and its temporaries) held, and the
   ``n × m`` matrix is never formed; only the ``n × max_components`` features are
   kept.
4. *Hinge-loss ERM over S_D = span{1, φ_1..φ_D}* — the KPM's LP (SPEC §3.2) —
   solved exactly for every D of the grid by constraint generation with HiGHS,
   warm-started along D (:mod:`kpm._constraint_generation`).
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

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import KernelParamsMixin
from ._config import get_config
from ._constraint_generation import ConstraintGenerationHingeLP

__all__ = ["NystroemKPM", "DaskClientError", "select_landmarks", "nystroem_eigenfunctions"]

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
def select_landmarks(X, n_landmarks, method="uniform", random_state=None):
    """Indices of ``n_landmarks`` landmark rows of X (sorted).

    Parameters
    ----------
    X : ndarray or dask array (n_samples, n_features)
    n_landmarks : int
    method : {'uniform', 'kmeans++'}
        ``'kmeans++'`` runs scikit-learn's k-means++ seeding on a uniform
        subsample of ``min(n, 20 n_landmarks)`` rows.
    random_state : int, RandomState or None
    """
    n = X.shape[0]
    if isinstance(n_landmarks, bool) or not isinstance(n_landmarks, numbers.Integral) or n_landmarks < 1:
        raise ValueError(f"n_landmarks must be a positive integer, got {n_landmarks!r}")
    if n_landmarks > n:
        raise ValueError(
            f"n_landmarks={n_landmarks} is larger than the number of samples n={n}: "
            "use at most n landmarks"
        )
    rng = np.random.default_rng(_seed(random_state))
    if method == "uniform":
        return np.sort(rng.choice(n, int(n_landmarks), replace=False))
    if method == "kmeans++":
        from sklearn.cluster import kmeans_plusplus

        n_sub = min(n, 20 * int(n_landmarks))
        sub = np.sort(rng.choice(n, n_sub, replace=False))
        Xs = X[sub]
        if _is_dask_array(Xs):
            Xs = Xs.compute()
        _, idx = kmeans_plusplus(
            np.asarray(Xs, dtype=float), int(n_landmarks), random_state=int(rng.integers(2**31 - 1))
        )
        return np.sort(sub[idx])
    raise ValueError(f"landmarks must be 'uniform' or 'kmeans++', got {method!r}")


def _seed(random_state):
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.Generator)):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    raise ValueError(f"random_state must be None, an int or a RandomState, got {random_state!r}")


def nystroem_eigenfunctions(kernel, Z, *, max_components=None, eig_tol=1e-10):
    """Approximate eigenfunctions from the landmark Gram matrix.

    Returns
    -------
    eigenvalues : ndarray (r,)
        Eigenvalues of ``K(Z, Z)`` above ``eig_tol * λ_1`` (decreasing), at most
        ``max_components`` of them.
    projection : ndarray (m, r)
        ``P = sqrt(m) U Λ^{-1}``: the features of x are ``K(x, Z) @ P``.
    """
    from ._eigensolvers import top_eigh

    m = len(Z)
    Wm = kernel(Z, Z)
    k = m if max_components is None else min(m, int(max_components))
    lam, U = top_eigh(Wm, k, solver="dense")  # only the top k (LAPACK subset eigh)
    if not np.all(np.isfinite(lam)) or lam[0] <= 0:
        raise ValueError("the landmark Gram matrix has no positive eigenvalue")
    keep = lam > eig_tol * lam[0]
    r = int(keep.sum())
    if max_components is not None:
        r = min(r, int(max_components))
    lam, U = lam[:r], U[:, :r]
    return lam, U * (np.sqrt(m) / lam)[None, :]


def _feature_block(Xb, Z, P, kernel, Z_sq=None):
    Xb = np.asarray(Xb, dtype=float)
    if not np.all(np.isfinite(Xb)):
        raise ValueError("X contains NaN or infinite values")
    Kb = kernel._block(Xb, Z, None, Z_sq)
    return Kb @ P


def _fold_job(F, y, train, val, grid, lp_params):
    """CV work of one fold: the LP path on ``train``, 0-1 error on ``val`` per D."""
    t0 = time.perf_counter()
    cg = ConstraintGenerationHingeLP(F, y, rows=train, **lp_params)
    errs = np.empty(len(grid))
    Fv = F[val]
    yv = y[val]
    for k, D in enumerate(grid):
        res = cg.solve(D)
        f = Fv[:, :D] @ res.coef + res.intercept
        pred = np.where(f >= 0, 1.0, -1.0)
        errs[k] = np.mean(pred != yv)
    return errs, time.perf_counter() - t0, len(cg.working_set)


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
        Number m of landmark points (must not exceed n).
    landmarks : {'uniform', 'kmeans++'}, default='uniform'
        How the landmarks are drawn from the training set.
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
    timings_ : dict
        Seconds spent in each phase.
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
        b = self.memory_budget
        if b is None:
            return int(get_config()["block_bytes"])
        if isinstance(b, bool) or not isinstance(b, numbers.Integral) or b <= 0:
            raise ValueError(f"memory_budget must be a positive integer number of bytes, got {b!r}")
        return int(b)

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
        if self.landmarks not in ("uniform", "kmeans++"):
            raise ValueError(f"landmarks must be 'uniform' or 'kmeans++', got {self.landmarks!r}")
        for name in ("max_components", "cv", "init_working_set"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.cv < 2:
            raise ValueError(f"cv must be >= 2 folds, got {self.cv}")
        for name in ("eig_tol", "lp_tol"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 < v < 1):
                raise ValueError(f"{name} must be a number in (0, 1), got {v!r}")

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
        Z_sq = np.einsum("ij,ij->i", Z, Z) if kernel.name in ("rbf", "imq") else None
        if client is None and not _is_dask_array(X):
            F = np.empty((n, D), order="F")
            for start in range(0, n, rows):
                sl = slice(start, min(start + rows, n))
                F[sl] = _feature_block(X[sl], Z, P, kernel, Z_sq)
            return F
        import dask.array as da

        if _is_dask_array(X):
            Xd = X.rechunk((rows, X.shape[1]))
        else:
            Xd = da.from_array(X, chunks=(rows, X.shape[1]))
        Fd = Xd.map_blocks(
            _feature_block, Z, P, kernel, Z_sq, dtype=float, chunks=(Xd.chunks[0], (D,))
        )
        if client is None:
            Fl = Fd.compute()
        else:
            Fl = client.compute(Fd).result()
        return np.asfortranarray(Fl)

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
        """
        for a in _FITTED:  # never leave a stale model from an earlier fit
            if a in self.__dict__:
                delattr(self, a)
        self._validate_params()
        client = _check_client(self.client)
        t_all = time.perf_counter()
        timings = {}

        dask_X = _is_dask_array(X)
        if dask_X:
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}")
            if np.isnan(X.shape[0]):
                raise ValueError("X must have known chunk sizes (call X.compute_chunk_sizes())")
            if _is_dask_array(y):
                y = y.compute()
            y = np.asarray(y)
            if y.ndim != 1 or len(y) != X.shape[0]:
                raise ValueError(f"y must be 1-D with {X.shape[0]} entries, got shape {y.shape}")
            n_features_in = X.shape[1]
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, order="C")
            n_features_in = X.shape[1]
        check_classification_targets(y)
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError("y has only 1 class; NystroemKPM needs exactly 2 classes")
        if len(classes) > 2:
            raise ValueError(
                "Only binary classification is supported. NystroemKPM is a binary classifier: "
                f"y must have exactly 2 classes, got {len(classes)}"
            )
        ypm = np.where(y == classes[1], 1.0, -1.0)
        n = X.shape[0]
        counts = np.array([(ypm < 0).sum(), (ypm > 0).sum()])
        if counts.min() < self.cv:
            raise ValueError(
                f"cv={self.cv} folds need at least {self.cv} samples of each class; the smallest "
                f"class has {counts.min()}"
            )

        # landmarks and kernel
        t = time.perf_counter()
        rs = np.random.default_rng(_seed(self.random_state))
        seeds = rs.integers(2**31 - 1, size=4)
        idx = select_landmarks(X, self.n_landmarks, self.landmarks, int(seeds[0]))
        m = len(idx)
        block_rows = self._block_rows(m, self.max_components)
        Z = X[idx]
        if dask_X:
            Z = np.asarray(Z.compute(), dtype=float)
            if not np.all(np.isfinite(Z)):
                raise ValueError("X contains NaN or infinite values")
        sub = idx
        if n > m:
            extra = np.sort(np.random.default_rng(int(seeds[1])).choice(n, min(n, 10000), replace=False))
            sub = extra
        Xs = X[sub]
        if dask_X:
            Xs = np.asarray(Xs.compute(), dtype=float)
        kernel = self._make_kernel(Xs)
        if kernel.is_precomputed:
            raise ValueError("NystroemKPM needs feature vectors: kernel='precomputed' is not supported")
        lam, P = nystroem_eigenfunctions(kernel, Z, max_components=self.max_components, eig_tol=self.eig_tol)
        r = len(lam)
        grid = self._grid(r)
        P = P[:, : grid[-1]]
        timings["landmarks_eigen"] = time.perf_counter() - t

        fail = _dask_failure_types()
        try:
            t = time.perf_counter()
            F = self._features(X, Z, P, kernel, block_rows, client)
            timings["features"] = time.perf_counter() - t

            t = time.perf_counter()
            skf = StratifiedKFold(self.cv, shuffle=True, random_state=int(seeds[2]))
            folds = list(skf.split(np.zeros(n), ypm))
            lp_params = dict(init_size=self.init_working_set, tol=self.lp_tol, lp_tol=self.lp_tol, random_state=int(seeds[3]))
            if client is not None:
                _check_client(client)
                Ff = client.scatter(F, broadcast=False)
                yf = client.scatter(ypm, broadcast=False)
                futs = [
                    client.submit(_fold_job, Ff, yf, tr, va, grid, lp_params, pure=False)
                    for tr, va in folds
                ]
                out = client.gather(futs)
            else:
                from joblib import Parallel, delayed

                out = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                    delayed(_fold_job)(F, ypm, tr, va, grid, lp_params) for tr, va in folds
                )
            timings["cv"] = time.perf_counter() - t
        except DaskClientError:
            raise
        except fail as exc:
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

        cv_errors = np.vstack([o[0] for o in out])
        cv_error = cv_errors.mean(axis=0)
        D_hat = _select_cv(grid, cv_error)

        # final path on all data up to D_hat
        t = time.perf_counter()
        cg = ConstraintGenerationHingeLP(F, ypm, **lp_params)
        path = [cg.solve(D) for D in grid[grid <= D_hat]]
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
        if dask_X:
            self.n_features_in_ = n_features_in
        return self

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """``f(x) = Σ_l a_l k(z_l, x) + b`` (positive -> ``classes_[1]``)."""
        check_is_fitted(self)
        if _is_dask_array(X):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1] if X.ndim == 2 else X.shape} features, expected {self.n_features_in_}"
                )
            import dask.array as da

            Xd = X.rechunk((self.block_rows_, X.shape[1]))
            a = self.dual_coef_[:, None]
            Z = self.landmarks_
            Z_sq = np.einsum("ij,ij->i", Z, Z) if self.kernel_.name in ("rbf", "imq") else None
            fd = Xd.map_blocks(
                _feature_block, Z, a, self.kernel_, Z_sq, dtype=float, chunks=(Xd.chunks[0], (1,))
            )
            if self.client is not None:
                f = self.client.compute(fd).result()
            else:
                f = fd.compute() if isinstance(fd, da.Array) else fd
            return np.asarray(f).ravel() + self.intercept_
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Z = self.landmarks_
        Z_sq = np.einsum("ij,ij->i", Z, Z) if self.kernel_.name in ("rbf", "imq") else None
        out = np.empty(len(X))
        a = self.dual_coef_[:, None]
        step = self.block_rows_
        for start in range(0, len(X), step):
            sl = slice(start, min(start + step, len(X)))
            out[sl] = _feature_block(X[sl], Z, a, self.kernel_, Z_sq).ravel()
        return out + self.intercept_

    def predict(self, X):
        """Class labels: ``classes_[1]`` where ``f(x) >= 0``."""
        f = self.decision_function(X)
        return self.classes_[(f >= 0).astype(int)]

    def transform_eigenfunctions(self, X, n_components=None):
        """The Nyström eigenfunction features ``φ_1..φ_D`` of X (default D = ``n_components_``)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        D = self.n_components_ if n_components is None else n_components
        if isinstance(D, bool) or not isinstance(D, numbers.Integral) or not 1 <= D <= self.projection_.shape[1]:
            raise ValueError(f"n_components must be an integer in [1, {self.projection_.shape[1]}], got {D!r}")
        return self.kernel_.matvec(X, self.projection_[:, :D], self.landmarks_)
