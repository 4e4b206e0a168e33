"""The Kernel Projection Machine for very large n: Nyström eigenfunctions, exact
hinge-loss LPs by constraint generation, the KPM's selection rules, and Dask.

Method
------
1. *Landmarks.* ``m = n_landmarks`` training points, drawn uniformly, by
   k-means++ seeding or by randomly pivoted Cholesky (the last two on a uniform
   subsample of at most ``20 m`` points, so that they cost ``O(m^2 d)`` and
   ``O(m^3)`` rather than ``O(n m d)`` and ``O(n m^2)``; :mod:`kpm.spectral.landmarks`).
2. *Approximate eigenfunctions.* The landmark Gram matrix ``W = K(Z, Z) = U Λ Uᵀ``
   (uncentred, as in the KPM of Blanchard, Massart, Vert & Zwald, 2004). The
   Nyström extension of the j-th eigenvector, normalised to unit mean square on the landmarks, is
   ``φ_j(x) = sqrt(m) / λ_j · Σ_l U_lj k(z_l, x)``; ``φ_j`` converges to the
   eigenfunction of the kernel integral operator ``T_k`` of the paper's §2.2, of
   which the exact KPM's Gram eigenvectors are the n-point version. Directions
   at or below the package's rank tolerance (:func:`kpm.spectral.numerical_rank`) are dropped.
3. *Features for all n points* ``F = K(X, Z) P`` with ``P = sqrt(m) U_D Λ_D^{-1}``,
   computed block by block: at no time is more than ``memory_budget`` bytes of
   kernel values (an ``rows × m`` block and its temporaries) held, and the
   ``n × m`` matrix is never formed; only the ``n × max_components`` features are
   kept.
4. *Hinge-loss ERM over S_D = span{1, φ_1..φ_D}* -- the KPM's LP (Blanchard,
   Massart, Vert & Zwald 2004, Section 3) -- solved exactly for every D of the
   grid by constraint generation with HiGHS, warm-started along D
   (:mod:`kpm.hinge.constraint_generation`).
5. *Selection of D* by the exact KPM's engine (:mod:`kpm.machine.engine`), the
   constraint generation being its path solver: the same path loop (which stops at
   zero training hinge risk, beyond which every D has the same solution), the same
   curves, the same rules (:mod:`kpm.machine.rules`: k-fold CV of the 0-1 error, the
   penalty ``lam D`` on the clipped hinge risk with ``lam`` given or cross-validated,
   the slope heuristic, a fixed D; ties to the smaller D), the same tie rule in
   prediction and one-vs-rest for more than two classes. The CV folds keep the
   eigenfunctions of the landmarks (the exact KPM decomposes each training fold's
   kernel matrix anew); they run in parallel (joblib threads, or Dask tasks when a
   ``client`` is given).
6. The final machine is ``f(x) = Σ_l a_l k(z_l, x) + b`` with ``a = P_D β``: an
   ``m``-term kernel expansion, so prediction costs ``O(m)`` kernel evaluations.

With every training point a landmark (``n_landmarks = n``) the features are
``F = sqrt(n) V``, V the eigenvectors of the (uncentred) kernel matrix: the exact
KPM's basis, each column scaled by ``sqrt(n)``. Scaling a column rescales its
coefficient and leaves the hinge LP's optimal functions unchanged, so the
full-data paths, and every rule that reads only them (penalty with a given
``lam``, slope, fixed D), give the exact KPM's model.

Dask
----
``X`` may be a :class:`dask.array.Array`; without a client its features are computed
blockwise by Dask's local scheduler and held in memory. With ``client=`` (a
``distributed.Client``) the training data stay on the cluster
(:mod:`kpm.hinge.dask_rows`): the features, class codes and CV folds are persisted on
the workers in row chunks, and every pass over all n points -- the constraint
generation's violation searches, the initial working sets, the curves of the paths --
runs as one task per chunk; the client holds the LPs, their working sets' rows and
``O(chunks)`` numbers. The result equals the in-memory fit on the same data and folds
(with ``cv`` an int the folds are drawn chunk by chunk, see :mod:`kpm.hinge.dask_rows`). A
lost worker's chunks are recomputed from the graph; if the client loses its scheduler
or the cluster mid-run, ``fit`` raises :class:`DaskClientError` and the estimator is
left unfitted -- never a partially fitted model.
"""

from __future__ import annotations

import contextlib
import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils.validation import check_is_fitted

from kpm.base import KernelParamsMixin
from kpm.config import get_config
from kpm.hinge.constraint_generation import ConstraintGenerationPath
from kpm.machine.engine import (
    FoldCurves,
    FullPath,
    KernelPaths,
    check_rule_answerable,
    check_selection_params,
    curve_sums,
    cv_extent,
    model_curves,
    one_vs_rest,
    predict_codes,
    select_model,
    selection_curve,
)
from kpm.hinge.lp_path import grow_path
from kpm.hinge.svm_path import TWO_STAGE_MAX_SWEEPS, SVMFullPath, c_selection_curve, check_svm_params, max_sweeps_of
from kpm.hinge.svm_path import resolve_formulation, svm_c_errors, svm_c_grid, svm_fold_curves
from kpm.exceptions import LPSolverError
from kpm.spectral.landmarks import LANDMARK_RULES, select_landmarks
from kpm.machine.rules import as_rule
from kpm.validation import (
    check_estimator_data,
    check_int,
    check_kernel_matrix,
    check_option,
    check_real,
    check_samples,
    warn_if_degenerate_kernel,
    warn_if_degenerate_counts,
    warn_if_degenerate_model,
)

__all__ = ["NystroemKPM", "DaskClientError", "nystroem_eigenfunctions"]  # select_landmarks: kpm.spectral.landmarks

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
    "selection_curve_",
    "penalty_",
    "slope_lambda_",
    "penalty_cv_curve_",
    "lp_fallbacks_",
    "formulation_",
    "C_",
    "c_selection_curve_",
    "_curves",
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
    from its :class:`kpm.spectral.basis.EigenBasis` (uncentred, cut at the package's rank
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
    from kpm.kernels import Kernel
    from kpm.spectral.basis import RANK_RTOL, eigen_basis

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


def _feature_block_f(Xb, Z, P, kernel):
    """:func:`_feature_block` in Fortran order (the constraint generation slices columns)."""
    return np.asfortranarray(_feature_block(Xb, Z, P, kernel))


_DASK_CHUNK_BYTES = 64 * 2**20  # features per persisted chunk on the workers (whole row blocks):
# fewer, larger chunks mean fewer tasks per violation search


def _dask_codes(y, chunks):
    """``(classes, codes)``: the sorted classes and a Dask array of class codes with the
    features' row chunks; a Dask y stays on the workers (only its distinct values travel)."""
    import dask.array as da
    from sklearn.utils.multiclass import check_classification_targets

    from kpm.hinge.dask_rows import code_array

    if _is_dask_array(y):
        classes = np.unique(np.asarray(da.unique(y).compute()))
        check_classification_targets(classes)
        codes = code_array(y.rechunk((chunks,)), classes)
    else:
        classes, codes_np, _ = one_vs_rest(y, "NystroemKPM")
        codes = da.from_array(codes_np.astype(np.int64), chunks=(chunks,))
    if len(classes) < 2:
        raise ValueError(f"y has only one class ({classes[0]!r}); NystroemKPM needs samples of at least 2 classes")
    return classes, codes


def _check_fold(k, train_classes, n_classes, n_val):
    """Fold ``k`` has a validation point and training points of every class."""
    if train_classes < n_classes:
        raise ValueError(
            f"cross-validation fold {k} has training samples of only {train_classes} of the "
            f"{n_classes} classes; use fewer folds (cv) or more samples of the smaller class"
        )
    if n_val == 0:
        raise ValueError(f"cross-validation fold {k} has an empty validation set")


def _check_dask_folds(data, n_classes):
    """:func:`_check_fold` for every fold of the points on the workers (from their counts)."""
    for k in range(data.n_folds):
        _check_fold(k, np.count_nonzero(data.fold_class_counts(k, "train")), n_classes,
                    data.fold_class_counts(k, "val").sum())


@contextlib.contextmanager
def _dask_errors(client):
    """Dask failures (a lost scheduler, cancelled futures) as :class:`DaskClientError`."""
    try:
        yield
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


def _labels_block(F, classes):
    """Class labels of a block of decision values (n, n_problems)."""
    return classes[predict_codes(F)]


_ROW_BLOCK = 1024  # rows of decision values evaluated at once (all D of the grid); 8192 raised the
# peak memory of a fit with n = 3e5 by 0.3 GiB (blocks of MBs allocated in the fold threads)


def _grow_paths(solvers, columns, grid):
    """One path per solver (one-vs-rest problem) on the grid, grown by the KPM's path loop
    (:func:`kpm.hinge.lp_path.grow_path`): ``(paths, solvers)``."""
    return [grow_path(s, columns, grid, n_samples=s.n_samples) for s in solvers], solvers


@dataclass
class _InMemoryData:
    """The training features ``F``, one-vs-rest targets ``Y``, class codes and CV splits
    in memory; :class:`kpm.hinge.dask_rows.DaskRows` has the same methods for features on
    Dask workers."""

    F: np.ndarray
    Y: np.ndarray
    codes: np.ndarray
    splits: list | None

    @property
    def columns(self):
        return self.F

    @property
    def n_problems(self):
        return self.Y.shape[1]

    def solvers(self, lp_params, fold=None):
        """Constraint-generation path solvers of every problem (a fold's training points)."""
        rows = None if fold is None else self.splits[fold][0]
        return [ConstraintGenerationPath(self.F, self.Y[:, c], rows=rows, **lp_params) for c in range(self.Y.shape[1])]

    def fold_sizes(self, fold):
        """Training and validation points of a fold."""
        return len(self.splits[fold][0]), len(self.splits[fold][1])

    def fold_curve_sums(self, paths, fold):
        """Misclassified validation points and ``n_train *`` the clipped training risk of a
        fold's paths on their grid."""
        train, val = self.splits[fold]
        errors, _ = curve_sums(paths, self.F, self.Y, self.codes, val, _ROW_BLOCK)
        _, clipped = curve_sums(paths, self.F, self.Y, None, train, _ROW_BLOCK)
        return errors, clipped

    def full_path(self, paths, grid, Y):
        return FullPath.from_paths(paths, self.F, grid, Y, row_block=_ROW_BLOCK)

    def fold_rows(self, fold):
        """``(train, val)`` of a fold for :func:`kpm.hinge.svm_path.svm_fold_curves`: ``(F, Y)``
        of its training rows and ``(F, Y, codes)`` of its validation rows."""
        tr, va = self.splits[fold]
        return (self.F[tr], self.Y[tr]), (self.F[va], self.Y[va], self.codes[va])


def _fold_job(data, grid, lp_params, k):
    """CV work of fold ``k``: its paths on its training points and their curves.

    Returns ``(FoldCurves, seconds, working-set size)``: the validation errors and the
    clipped training risks on the grid; the paths end where no LP solver solves a
    dimension (the curves say where, ``failures`` why).
    """
    t0 = time.perf_counter()
    try:
        paths, solvers = _grow_paths(data.solvers(lp_params, k), data.columns, grid)
    except LPSolverError as exc:
        raise LPSolverError(
            f"NystroemKPM: no LP solver solved the smallest dimension D={grid[0]} of "
            f"cross-validation fold {k}: {exc}"
        ) from exc
    errors, clipped = data.fold_curve_sums(paths, k)
    curves = FoldCurves.from_paths(paths, errors, clipped / data.fold_sizes(k)[0], len(grid), f"fold {k}")
    return curves, time.perf_counter() - t0, sum(len(s.cg.working_set) for s in solvers)


@dataclass
class _FullPathCG:
    """The full-data paths by constraint generation on the training data (in memory or on
    Dask workers): a ``(grid, Y) -> FullPath`` solver for
    :class:`kpm.machine.engine.KernelPaths`; keeps the last solvers (their statistics become
    ``lp_stats_``)."""

    data: object
    lp_params: dict
    solvers: list = field(default_factory=list)

    def __call__(self, grid, Y):
        paths, self.solvers = _grow_paths(self.data.solvers(self.lp_params), self.data.columns, grid)
        return self.data.full_path(paths, grid, Y)


def _svm_fold_job(data, scale, grid, Cs, max_sweeps, k):
    """``formulation='svm'``: the SVM paths of fold ``k`` for every C on the fold's training
    rows of the features (the landmarks' eigenfunctions, not re-decomposed):
    ``([FoldCurves per C], seconds)``."""
    t0 = time.perf_counter()
    train, val = data.fold_rows(k)
    curves = svm_fold_curves(train, val, scale, grid, Cs, len(grid), f"fold {k}", max_sweeps=max_sweeps,
                             block=_ROW_BLOCK)
    return curves, time.perf_counter() - t0


def _svm_stage_one_job(data, scale, Cs, k):
    """``c_selection='two-stage'``: fold ``k``'s misclassified validation points of the SVM
    at the largest D of the grid, per C."""
    train, val = data.fold_rows(k)
    return svm_c_errors(train, val, scale, Cs, max_sweeps=TWO_STAGE_MAX_SWEEPS)


def _svm_stats(paths, folds):
    """``lp_stats_`` of ``formulation='svm'``: the dual coordinate descent's sweeps over the
    points at each D of the full-data path (one list per one-vs-rest problem with several
    classes), and the folds' seconds."""
    sweeps = [p.iterations.tolist() for p in paths]
    return {"sweeps": sweeps[0] if len(sweeps) == 1 else sweeps,
            "cv_fold_seconds": [o[1] for o in folds or []]}


def _cv_error_table(kp, val_sizes, n):
    """``(cv_errors_, cv_error_)``: each fold's validation error rate and the pooled CV error
    on the grid, NaN from the first dimension a fold's paths did not reach; None without CV."""
    if kp.folds is None:
        return None, None
    n_grid = len(kp.grid)
    per_fold = np.vstack([
        np.where(np.arange(n_grid) < f.n_valid, f.errors / nv, np.nan) for f, nv in zip(kp.folds, val_sizes)
    ])
    ok = np.arange(n_grid) < min(f.n_valid for f in kp.folds)
    return per_fold, np.where(ok, sum(f.errors for f in kp.folds) / n, np.nan)


def _lp_stats(solvers, folds):
    """``lp_stats_``: working sets, rounds, certificate gaps and iterations of the full-data
    path (lists over its dimensions; one list per one-vs-rest problem with several classes),
    and the folds' seconds and working-set sizes."""
    keys = ("n_working", "n_aggregated", "n_rounds", "gap", "simplex_iterations")
    per_problem = {key: [[getattr(r, key) for r in s.results] for s in solvers] for key in keys}
    stats = {key: v[0] if len(v) == 1 else v for key, v in per_problem.items()}
    stats["cv_fold_seconds"] = [o[1] for o in folds or []]
    stats["cv_fold_working_set"] = [o[2] for o in folds or []]
    return stats


@dataclass
class _NystroemBasis:
    """Landmarks, kernel and Nyström eigenfunctions (``K(x, Z) @ projection``) with the D grid."""

    indices: np.ndarray
    landmarks: np.ndarray
    kernel: object
    eigenvalues: np.ndarray
    projection: np.ndarray
    grid: np.ndarray

    @property
    def svm_scale(self):
        """``sqrt(lambda_j / m)``: the eigenfunction columns scaled by it have the Nyström
        kernel ``K(x, Z) U Λ^{-1} U^T K(Z, x')`` as their inner product (``formulation='svm'``)."""
        return np.sqrt(self.eigenvalues[: self.projection.shape[1]] / len(self.indices))


@dataclass
class _Family:
    """The models of a fit: one :class:`KernelPaths` for the paper's LP, one per C for
    ``formulation='svm'`` (``Cs[i]`` the C of ``paths[i]``; ``[None]`` for the LP), and
    stage one's pooled CV errors per C of ``c_selection='two-stage'`` (over ``all_Cs``)."""

    paths: list
    Cs: object
    stage_one: np.ndarray | None = None
    all_Cs: object = None

    def c_selection_curve(self):
        """``c_selection_curve_``: stage one's CV error per C (None without stage one)."""
        return c_selection_curve(self.all_Cs, None if self.stage_one is None else [(0, self.stage_one)])


# --------------------------------------------------------------------------- estimator
class NystroemKPM(KernelParamsMixin, ClassifierMixin, BaseEstimator):
    """Kernel Projection Machine on Nyström eigenfunctions, for very large n.

    The exact KPM (:class:`KernelProjectionMachine`) with the eigenvectors of the
    kernel matrix replaced by Nyström eigenfunctions of ``m`` landmarks and the hinge
    LPs solved by constraint generation over the points: the same selection rules,
    tie rule and one-vs-rest multi-class. See the module docstring for the method.

    ``formulation='svm'`` goes beyond the KPM papers, as the exact KPM's option of that
    name does (user guide, "Beyond the papers"): in each ``S_D`` it fits the soft-margin
    SVM (intercept = the weight of a constant feature of value 1) on the eigenfunctions
    scaled to ``sqrt(lambda_j / m) phi_j``, whose inner product is the Nyström kernel
    ``k̃(x, x') = K(x, Z) U Λ^{-1} U^T K(Z, x')``: at D = the rank of ``K(Z, Z)`` (if
    ``max_components`` reaches it) it is the kernel SVM with the kernel ``k̃ + 1``, and
    with every training point a landmark, where ``k̃`` is ``k`` on the training points,
    the kernel SVM with ``k + 1``. The paths along D are solved
    in memory by warm-started dual coordinate descent (:mod:`kpm.hinge.svm_path`), and (D, C)
    are chosen by the same CV. The default stays the paper's LP: its constraint generation
    keeps only a working set of the points in the LPs and is what scales to millions of
    points and to a Dask cluster; the SVM's descent sweeps over all the points, holds the
    n x D features in memory, and is not available with ``client=``.

    Parameters
    ----------
    n_landmarks : int, default=1000
        Number m of landmark points, capped at the number of training samples.
    landmarks : {'uniform', 'kmeans++', 'rpcholesky'}, default='uniform'
        How the landmarks are drawn from the training set
        (:func:`kpm.spectral.landmarks.select_landmarks`): uniformly, by k-means++ seeding, or by
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
    selection : {'cv', 'penalty', 'slope'}, int or SelectionRule, default='cv'
        How D is chosen, as in :class:`KernelProjectionMachine`: K-fold CV of the 0-1
        error (ties -> smaller D); the penalised clipped hinge risk ``R_n(clip f_D) +
        lam D`` with ``lam = penalty`` (Zwald & Blanchard 2005, eq. 3); the slope
        heuristic (``lam = slope_factor * lam_jump``); or a fixed D. Or a rule object
        of :mod:`kpm.machine.rules`; :meth:`select_dim` tells which model another rule picks
        from a fitted model's curves.
    cv : int or CV splitter, default=5
        Folds for ``selection='cv'`` and ``penalty='cv'``. An int gives a shuffled
        :class:`~sklearn.model_selection.StratifiedKFold` seeded from ``random_state``.
    penalty : float or 'cv', default='cv'
        ``lam`` for ``selection='penalty'``; ``'cv'`` chooses it by cross-validation
        over the exact breakpoints of the folds' penalty paths.
    slope_factor : float, default=2.0
        Factor of the slope heuristic (Birgé-Massart's 2).
    formulation : {'paper', 'svm', 'auto'}, default='paper'
        ``'paper'``: the KPM's hinge LP in every ``S_D``, by constraint generation (the
        default here, unlike :class:`KernelProjectionMachine`: constraint generation is
        what scales to millions of points and to a Dask cluster).
        ``'svm'``: the soft-margin SVM restricted to ``S_D`` (beyond the papers; see above),
        in memory, on the same D grid; ``lp_tol`` and ``init_working_set`` are then unused,
        and ``client`` must be None. With several ``C`` the selection must be ``'cv'`` (the
        penalty and slope rules compare training risks, which always favour the largest
        C); with one C every rule works, on the curves of that C. ``'auto'``: as in
        :class:`KernelProjectionMachine`, ``'svm'`` when D is chosen by CV (and no
        ``client`` is given), ``'paper'`` otherwise; ``formulation_`` tells which ran.
    C : float, sequence of float or None, default=None
        ``formulation='svm'`` only: the weights of the hinge loss among which CV chooses
        (sorted). None: the C rule's grid, as in :class:`KernelProjectionMachine`
        (``numpy.logspace(-2, 3, 11)`` for ``'two-stage'``, ``(0.1, 0.3, 1, 3, 10)`` for
        ``'joint'``). The CV rule's ties go to the smaller D, then to the smaller C. Unused
        by ``'paper'``.
    c_selection : {'two-stage', 'joint'}, default='two-stage'
        ``formulation='svm'`` with CV: how C is chosen, as in
        :class:`KernelProjectionMachine`. ``'joint'``: (D, C) minimise the pooled CV error
        over the whole grid. ``'two-stage'``: first C by the pooled CV error of the SVM at
        the largest D of the grid (one solve per C and fold, warm-started along C; ties ->
        the smaller C), then D by CV along the path of that C only; its paths allow
        ``kpm.machine.exact.TWO_STAGE_MAX_SWEEPS`` (200) sweeps of the dual
        coordinate descent per D instead of 20. Meant for a wide C grid such as
        ``numpy.logspace(-2, 3, 11)``.
    n_jobs : int, optional
        Folds run in parallel in joblib threads (HiGHS and BLAS release the GIL).
    memory_budget : int, optional
        Bytes of kernel values (an ``rows × m`` block with its temporaries, and
        the ``m × m`` landmark Gram matrix) held at any time. Default:
        ``kpm.get_config()['block_bytes']``. Too small for one row of ``m``
        kernel values or for the landmark matrix -> ``ValueError``.
    eig_tol : float in (0, 1), optional
        Relative rank tolerance of the landmark Gram matrix, replacing
        :data:`kpm.spectral.RANK_RTOL` (``1e-10``, the default of every estimator).
    lp_tol : float, default=1e-9
        Termination tolerance of the constraint generation and HiGHS feasibility
        tolerance.
    init_working_set : int, default=5000
        Initial working-set size of the constraint generation; with ``aggregate_below``,
        the size of the random sample whose hinge LP gives the reference solutions, and
        the most points a round adds to the working set.
    aggregate_below : float below 1, optional
        Aggregate the points of clear hinge loss in the constraint generation: at each D,
        the training points outside the working set whose margin under a reference
        solution (the optimum of a sample's LP or the previous dimension's optimum, whichever
        has the lower hinge sum; at D = 1 the full data's, found by passes over the points)
        is below this value enter the LP as one linear term instead of a column
        each (a lower bound of the hinge sum; the termination certificate still checks
        every point, so the optimum is the same). The working set then holds the points
        near the margin only, which keeps the LP small when most points have margin below
        1 (the first dimensions on large data). ``None`` (default): one column per
        violated point. See the user guide's constraint-generation section.
    band_size : int, optional
        With ``aggregate_below``: at most this many points in the band around the margin
        that joins the working set at each reference solution (the band narrows from
        ``[aggregate_below, 2 - aggregate_below)`` to hold them, by one pass over the
        points). Each reference then starts the working set from at most this many points
        however many training points there are (a round still adds up to
        ``init_working_set`` violated points); the band ``[aggregate_below,
        2 - aggregate_below)`` holds a fixed fraction of them. ``None`` (default): no limit.
    client : distributed.Client, optional
        Keep the training data on this client's cluster: features, labels and folds
        persisted on the workers, the violation searches and curves computed there;
        only working-set rows and per-chunk sums reach the client. With ``cv`` an int
        the folds are stratified chunk by chunk (not scikit-learn's StratifiedKFold);
        a CV splitter must put every point in exactly one validation set.
        ``formulation='paper'`` only (``'svm'`` with a client is a ``ValueError``).
    random_state : int, RandomState or None
        Seeds the landmarks, the folds and the initial working sets.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    landmarks_ : ndarray (m, n_features)
    landmark_indices_ : ndarray (m,)
    kernel_ : kpm.kernels.Kernel
    eigenvalues_ : ndarray (r,)
        Landmark Gram eigenvalues kept (``r <= max_components``).
    n_components_grid_ : ndarray
    cv_error_ : ndarray or None
        Pooled CV 0-1 error (misclassified validation points of all folds / n) for
        each D of the grid (with ``formulation='svm'``: at the chosen C); NaN from the
        first D a fold's path did not reach; None when the rule runs no CV.
    cv_errors_ : ndarray (n_folds, len(grid)) or None
        Each fold's validation error rate (NaN likewise).
    n_components_ : int
        The selected D.
    selection_curve_ : dict of ndarray
        Per model (D of the grid up to the CV sweep's end): ``D``, ``kernel`` (0),
        ``cv_error``, ``hinge_risk`` and ``clipped_risk`` (training risks of the
        full-data path, NaN where it was not solved), ``criterion`` (``clipped_risk +
        penalty_ * D``), as in :class:`KernelProjectionMachine`; with
        ``formulation='svm'`` also ``C``: the models are the (C, D) pairs, in that order.
    formulation_ : {'paper', 'svm'}
        The formulation fitted (``formulation`` with ``'auto'`` resolved).
    C_ : float or None
        ``formulation='svm'``: the chosen C (None for the paper's LP).
    c_selection_curve_ : dict of ndarray or None
        ``c_selection='two-stage'`` with CV: stage one's pooled CV 0-1 error
        (``cv_error``) per ``C`` (``kernel``: 0); None otherwise. ``selection_curve_``
        then holds the models of the chosen C only.
    penalty_ : float or None
        The ``lam`` used by the penalty or slope rule.
    slope_lambda_ : float or None
        ``lam_jump`` of the slope heuristic.
    penalty_cv_curve_ : dict
        ``penalty='cv'`` only: the candidate ``lam`` and their pooled CV errors.
    coef_ : ndarray (D,) or (n_classes, D)
        ``β`` in eigenfunction coordinates (one row per one-vs-rest problem; with
        ``formulation='svm'``, ``β_j = sqrt(λ_j / m) w_j`` for the SVM's weights ``w``).
    intercept_ : float or ndarray (n_classes,)
    projection_ : ndarray (m, max D of the grid)
        ``P = sqrt(m) U Λ^{-1}``: eigenfunction features are ``K(x, Z) @ P``.
    dual_coef_ : ndarray (m,) or (n_classes, m)
        ``a = P_D β``: ``f(x) = Σ_l a_l k(z_l, x) + b``.
    train_risk_ : ndarray
        Training hinge risk (averaged over the one-vs-rest problems) for each D of
        the grid up to ``n_components_`` (the full-data path).
    lp_stats_ : dict
        Working-set sizes, aggregated points (``aggregate_below``), rounds, certificate
        gaps and simplex iterations of the full-data path (lists over its dimensions; one list per one-vs-rest problem
        for more than two classes), and the CV folds' seconds and working-set sizes.
        With ``formulation='svm'``: ``sweeps``, the dual coordinate descent's sweeps over
        the points at each D of the chosen C's full-data path (per problem likewise), and
        ``cv_fold_seconds``.
    lp_failures_ : list of dict
        Paths that ended because no LP solver solved a dimension (HiGHS's dual
        simplex warm and cold, its interior point method, then the exact KPM's path
        solver): ``{'path': 'fold k' or 'full data', 'problem': one-vs-rest problem,
        'dim': D, 'error': message}``. Empty on ordinary data; otherwise :meth:`fit`
        warned (``ConvergenceWarning``) and selected D below the first failure.
    lp_fallbacks_ : int
        Working-set LPs solved by the exact KPM's path solver after HiGHS failed.
    timings_ : dict
        Seconds spent in each phase.

    See Also
    --------
    KernelProjectionMachine : The exact KPM (the eigenvectors of the whole kernel
        matrix, recomputed on each CV training fold), with the same selection rules.
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

    The penalty rule of Zwald & Blanchard, here with ``lam`` chosen by CV: such a fit
    holds every curve and answers the other rules without re-fitting (the slope
    heuristic, which needs no CV, picks a much smaller D on these data):

    >>> pen = NystroemKPM(n_landmarks=200, sigma="median", max_components=30,
    ...                   selection="penalty", penalty="cv", random_state=0).fit(X, y)
    >>> pen.n_components_, pen.select_dim("cv").dim, pen.select_dim("slope").dim
    (14, 14, 2)

    More than two classes: one-vs-rest, a score per class.

    >>> y3 = (X[:, 0] > 0.3).astype(int) + (X[:, 1] > 0)
    >>> clf3 = NystroemKPM(n_landmarks=200, sigma="median", max_components=30,
    ...                    random_state=0).fit(X, y3)
    >>> clf3.decision_function(X_test).shape, clf3.dual_coef_.shape
    ((10000, 3), (3, 200))
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
        selection="cv",
        cv=5,
        penalty="cv",
        slope_factor=2.0,
        formulation="paper",
        C=None,
        c_selection="two-stage",
        n_jobs=None,
        memory_budget=None,
        eig_tol=None,
        lp_tol=1e-9,
        init_working_set=5000,
        aggregate_below=None,
        band_size=None,
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
        self.selection = selection
        self.cv = cv
        self.penalty = penalty
        self.slope_factor = slope_factor
        self.formulation = formulation
        self.C = C
        self.c_selection = c_selection
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.eig_tol = eig_tol
        self.lp_tol = lp_tol
        self.init_working_set = init_working_set
        self.aggregate_below = aggregate_below
        self.band_size = band_size
        self.client = client
        self.random_state = random_state

    # ------------------------------------------------------------------ helpers
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
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
        check_selection_params(self.selection, self.penalty, self.slope_factor)
        if isinstance(self.cv, numbers.Integral) or isinstance(self.cv, (float, str)):
            check_int(self.cv, "cv", minimum=2)
        check_int(self.n_jobs, "n_jobs", minimum=None, allow_none=True)
        if self.eig_tol is not None:
            check_real(self.eig_tol, "eig_tol", low=0, high=1, low_open=True, high_open=True)
        check_real(self.lp_tol, "lp_tol", low=0, high=1, low_open=True, high_open=True)
        if self.aggregate_below is not None:
            check_real(self.aggregate_below, "aggregate_below", high=1, high_open=True)
        if self.band_size is not None:
            check_int(self.band_size, "band_size")
            if self.aggregate_below is None:
                raise ValueError("band_size limits the band of the aggregation: set aggregate_below too")
        check_svm_params(self.formulation, self.C, self.c_selection)
        if self.formulation == "svm" and self.client is not None:
            raise ValueError(
                "formulation='svm' is not supported with client= (the distributed fit solves the "
                "paper's hinge LP by constraint generation); fit the SVM in memory (client=None; "
                "a Dask X is then computed into memory) or use formulation='paper'"
            )

    def _C_grid(self, rule):
        """The C values of ``formulation='svm'`` (``[None]`` for the paper's LP)."""
        return svm_c_grid(self.C, self.c_selection, rule, self.selection) if self.formulation_ == "svm" else [None]

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

    def _feature_array(self, X, basis, rows):
        """``K(X, Z) P`` as a lazy Dask array of row blocks of ``rows`` (Fortran-ordered blocks)."""
        import dask.array as da

        if _is_dask_array(X):
            Xd = X.rechunk((rows, X.shape[1]))
        else:
            Xd = da.from_array(X, chunks=(rows, X.shape[1]))
        D = basis.projection.shape[1]
        return Xd.map_blocks(_feature_block_f, basis.landmarks, basis.projection, basis.kernel, dtype=float,
                             chunks=(Xd.chunks[0], (D,)))

    def _features(self, X, basis, rows):
        """``K(X, Z) P`` in memory, blockwise (a numpy loop, or Dask tasks for a Dask X)."""
        if _is_dask_array(X):
            return np.asfortranarray(self._feature_array(X, basis, rows).compute())
        n = X.shape[0]
        F = np.empty((n, basis.projection.shape[1]), order="F")
        for start in range(0, n, rows):
            sl = slice(start, min(start + rows, n))
            F[sl] = _feature_block(X[sl], basis.landmarks, basis.projection, basis.kernel)
        return F

    def _check_data(self, X, y, distributed=False):
        """``(X, y, n_features_in)``: numpy X in canonical form, or a checked dask array
        (``distributed``: a Dask y stays a Dask array)."""
        if not _is_dask_array(X) and not (distributed and _is_dask_array(y)):
            X, y = check_estimator_data(self, X, y, min_samples=2)
            return X, y, X.shape[1]
        if not _is_dask_array(X):
            X = check_samples(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}")
        if np.isnan(X.shape[0]):
            raise ValueError("X must have known chunk sizes (call X.compute_chunk_sizes())")
        if _is_dask_array(y) and not distributed:
            y = y.compute()
        y = y if _is_dask_array(y) else np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with {X.shape[0]} entries, got shape {y.shape}")
        return X, y, X.shape[1]

    def _splits(self, codes, n_classes, seed):
        """The CV folds: a shuffled stratified K-fold seeded from ``random_state`` (``cv``
        an int), or the folds of the given splitter."""
        cv = self.cv
        if isinstance(cv, numbers.Integral):
            if len(codes) < cv:
                raise ValueError(f"cv={cv} folds need at least {cv} samples, got {len(codes)}")
            cv = StratifiedKFold(int(cv), shuffle=True, random_state=seed)
        cv = check_cv(cv, codes, classifier=True)
        splits = list(cv.split(np.zeros(len(codes)), codes))
        for k, (train, val) in enumerate(splits):
            _check_fold(k, len(np.unique(codes[train])), n_classes, len(val))
        return splits

    def _basis(self, X, seeds, rule):
        """Landmarks, kernel and Nyström eigenfunctions, with the D grid (:class:`_NystroemBasis`)."""
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
        grid = self._fixed_grid(rule.fixed_dim, len(lam)) if rule.fixed_dim is not None else self._grid(len(lam))
        return _NystroemBasis(idx, np.asarray(Z, dtype=float), kernel, lam, P[:, : grid[-1]], grid)

    def _fixed_grid(self, d, r):
        """The grid of a fixed D: the grid's dimensions below it, then D."""
        if d > r:
            raise ValueError(
                f"selection={self.selection} (a fixed D) is larger than the {r} eigenfunctions kept "
                f"(max_components={self.max_components}, eigenvalues above eig_tol * lambda_1 of the "
                "landmark Gram matrix)"
            )
        grid = self._grid(r)
        grid = grid[grid < d]
        return np.append(grid, d).astype(int)

    def _cross_validate(self, data, n_folds, grid, lp_params):
        """The folds' curves: ``[(FoldCurves, seconds, working-set size)]`` (:func:`_fold_job`),
        in joblib threads (with Dask data each fold's searches run on the workers)."""
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_fold_job)(data, grid, lp_params, k) for k in range(n_folds)
        )

    def _dask_data(self, X, y, rule, seeds, basis, block_rows, client):
        """``(classes, data, val_sizes)`` with the features persisted on the workers."""
        from kpm.hinge.dask_rows import DaskRows, fold_array

        F = self._feature_array(X, basis, block_rows)
        chunk = block_rows * max(1, _DASK_CHUNK_BYTES // (8 * F.shape[1] * block_rows))
        F = F.rechunk((chunk, F.shape[1]))
        classes, codes = _dask_codes(y, F.chunks[0])
        folds, n_folds = None, 0
        if rule.needs_cv:
            if isinstance(self.cv, numbers.Integral):
                n_folds = int(self.cv)
                folds = fold_array(codes, n_folds, int(seeds[2]))
            else:
                folds, n_folds = self._splitter_folds(codes, len(classes), int(seeds[2]))
        data = DaskRows(client, F, codes, len(classes), folds, n_folds)
        val_sizes = None
        if rule.needs_cv:
            _check_dask_folds(data, len(classes))
            val_sizes = [data.fold_sizes(k)[1] for k in range(n_folds)]
        return classes, data, val_sizes

    def _splitter_folds(self, codes, n_classes, seed):
        """The folds of a CV splitter as a Dask array of fold ids (the splitter reads the
        class codes on the client: ``n`` integers); its validation sets must partition the points."""
        import dask.array as da

        splits = self._splits(codes.compute(), n_classes, seed)
        fold = np.full(codes.shape[0], -1, dtype=np.int16)
        for k, (_, va) in enumerate(splits):
            if np.any(fold[va] >= 0):
                raise ValueError("with a Dask client the cv splitter's validation sets must not overlap")
            fold[va] = k
        if np.any(fold < 0):
            raise ValueError("with a Dask client every point must be in one validation set of the cv splitter")
        return da.from_array(fold, chunks=(codes.chunks[0],)), len(splits)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Fit: landmarks, eigenfunctions, features, the paths the rule needs, the rule.

        The algorithm is the exact KPM's (:mod:`kpm.machine.engine`) on the Nyström basis:
        the CV folds' paths (when the rule needs them), the full-data paths, the rule,
        the chosen model's coefficients.

        Parameters
        ----------
        X : array-like or dask array (n_samples, n_features)
        y : array-like or dask array (n_samples,)
            Class labels (two or more classes; more: one-vs-rest). A Dask ``y`` stays on
            the workers with ``client=``.

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
        rule = as_rule(self.selection, self.penalty, self.slope_factor)
        # (the distributed fit is the constraint-generation LP)
        self.formulation_ = resolve_formulation(self.formulation, rule, lp_only=self.client is not None)
        Cs = self._C_grid(rule)
        client = _check_client(self.client)
        t_all = time.perf_counter()
        X, y, n_features_in = self._check_data(X, y, distributed=client is not None)
        seeds = np.random.default_rng(_seed(self.random_state)).integers(2**31 - 1, size=4)
        block_rows = self._block_rows(min(self.n_landmarks, X.shape[0]), self.max_components)
        dask = client is not None or _is_dask_array(X)
        with _dask_errors(client) if dask else contextlib.nullcontext():
            classes, data, fam, choice, out, val_sizes, timings = self._fit_paths(X, y, rule, Cs, seeds,
                                                                                  block_rows, client)
            timings["total"] = time.perf_counter() - t_all
            self.classes_ = classes
            self._set_model(fam, choice, X.shape[0], val_sizes)
            kp = fam.paths[choice.kernel_index]
            self.lp_stats_ = (_lp_stats(kp.solve_path.solvers, out) if self.formulation_ == "paper"
                              else _svm_stats(kp.full.paths, out))
            self.timings_ = timings
            self.block_rows_ = block_rows
            self.n_features_in_ = n_features_in
            self._warn_fit(data, y)
        return self

    def _fit_paths(self, X, y, rule, Cs, seeds, block_rows, client):
        """Basis, features (in memory, or on the workers with a client), the CV folds' curves,
        the full-data paths the rule needs and its choice:
        ``(classes, data, _Family, choice, fold outputs, validation sizes, timings)``."""
        if client is None:
            classes, codes, Y = one_vs_rest(y, "NystroemKPM")
            splits = self._splits(codes, len(classes), int(seeds[2])) if rule.needs_cv else None
        t = time.perf_counter()
        basis = self._basis(X, seeds, rule)
        timings = {"landmarks_eigen": time.perf_counter() - t}
        t = time.perf_counter()
        if client is None:
            data = _InMemoryData(self._features(X, basis, block_rows), Y, codes, splits)
            val_sizes = None if splits is None else [len(va) for _, va in splits]
        else:
            classes, data, val_sizes = self._dask_data(X, y, rule, seeds, basis, block_rows, client)
            # select_model reads only the length of Y: the targets stay on the workers
            Y = np.broadcast_to(np.float64(0.0), (X.shape[0], data.n_problems))
        timings["features"] = time.perf_counter() - t
        lp_params = dict(init_size=self.init_working_set, tol=self.lp_tol, lp_tol=self.lp_tol,
                         random_state=int(seeds[3]), aggregate_below=self.aggregate_below,
                         band_size=self.band_size,
                         max_add=None if self.aggregate_below is None else self.init_working_set)
        t = time.perf_counter()
        if self.formulation_ == "svm":
            fam, out = self._svm_family(data, basis, Cs, val_sizes)
        else:
            out = None if val_sizes is None else self._cross_validate(data, len(val_sizes), basis.grid, lp_params)
            kp = KernelPaths(basis=basis, grid=basis.grid, n_used=len(basis.grid),
                             solve_path=_FullPathCG(data, lp_params))
            if out is not None:
                kp.folds = [o[0] for o in out]
                kp.n_used = cv_extent(kp.folds)
            fam = _Family([kp], Cs)
        timings["cv"] = time.perf_counter() - t
        t = time.perf_counter()
        choice = select_model(fam.paths, rule, Y)
        timings["final_fit"] = time.perf_counter() - t
        return classes, data, fam, choice, out, val_sizes, timings

    def _svm_family(self, data, basis, Cs, val_sizes):
        """``formulation='svm'``: one :class:`KernelPaths` per C (with ``c_selection='two-stage'``
        and CV: one, for the C of stage one), with the folds' curves when the rule runs CV:
        ``(_Family, fold outputs)``."""
        from joblib import Parallel, delayed

        scale, grid, sweeps = basis.svm_scale, basis.grid, max_sweeps_of(self.c_selection)
        n_folds = 0 if val_sizes is None else len(val_sizes)
        stage_one, all_Cs = None, Cs
        if n_folds and self.c_selection == "two-stage":
            stage_one = sum(Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(_svm_stage_one_job)(data, scale, Cs, k) for k in range(n_folds)
            )) / data.F.shape[0]
            Cs = Cs[[int(np.argmin(stage_one))]]  # first minimum: ties -> the smaller C
        kps = [KernelPaths(basis=basis, grid=grid, n_used=len(grid), solve_path=SVMFullPath(data.F, scale, C, sweeps, _ROW_BLOCK))
               for C in Cs]
        out = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_svm_fold_job)(data, scale, grid, Cs, sweeps, k) for k in range(n_folds)
        )
        for i, kp in enumerate(kps if n_folds else []):
            kp.folds = [o[0][i] for o in out]
            kp.n_used = cv_extent(kp.folds)
        return _Family(kps, Cs, stage_one, all_Cs), out or None

    def _set_model(self, fam, choice, n, val_sizes):
        """The fitted attributes: the basis, the curves, the rule's outputs, the chosen model."""
        kp = fam.paths[choice.kernel_index]
        basis, full, D = kp.basis, kp.full, choice.dim
        self.landmark_indices_ = basis.indices
        self.landmarks_ = basis.landmarks
        self.kernel_ = basis.kernel
        self.eigenvalues_ = basis.eigenvalues
        self.projection_ = basis.projection
        self.n_components_grid_ = kp.grid
        self._curves = curves = model_curves(fam.paths, n)
        self.cv_errors_, self.cv_error_ = _cv_error_table(kp, val_sizes, n)
        self.lp_failures_ = kp.failures
        self.lp_fallbacks_ = int(kp.fallbacks)
        C = fam.Cs[choice.kernel_index]
        self.C_ = None if C is None else float(C)
        self.c_selection_curve_ = fam.c_selection_curve()
        self.penalty_ = choice.penalty
        self.slope_lambda_ = choice.slope_lambda
        if choice.penalty_cv_curve is not None:
            self.penalty_cv_curve_ = choice.penalty_cv_curve
        self.selection_curve_ = selection_curve(curves, self.penalty_)
        if self.formulation_ == "svm":
            self.selection_curve_["kernel"] = np.zeros(len(curves.D), dtype=int)
            self.selection_curve_["C"] = np.asarray(fam.Cs, dtype=float)[curves.kernel]
        self.n_components_ = D
        coefs = [p.coef_at(D) for p in full.paths]
        coef = np.array([beta for beta, _ in coefs])
        intercept = np.array([b for _, b in coefs])
        dual = coef @ basis.projection[:, :D].T
        binary = len(coefs) == 1
        self.coef_ = coef[0] if binary else coef
        self.intercept_ = float(intercept[0]) if binary else intercept
        self.dual_coef_ = dual[0] if binary else dual
        self.train_risk_ = full.hinge_risk[: int(np.searchsorted(full.dims, D)) + 1]

    def _warn_fit(self, data, y):
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
        coef, b = np.atleast_2d(self.coef_), np.atleast_1d(self.intercept_)
        if not isinstance(data, _InMemoryData):  # features on the workers: counts travel
            warn_if_degenerate_counts(*data.prediction_counts(coef, b), self.classes_, "NystroemKPM", stacklevel=5)
            return
        f_train = data.F[:, : self.n_components_] @ coef.T + b[None, :]
        predictions = self.classes_[predict_codes(f_train)]
        warn_if_degenerate_model(predictions, y, self.classes_, "NystroemKPM", stacklevel=5)

    def select_dim(self, rule):
        """The model another selection rule picks from this fit's curves, without re-fitting.

        As :meth:`kpm.KernelProjectionMachine.select_dim`: the rule is applied to the
        curves the fit computed. :class:`~kpm.machine.rules.CV` and ``Penalty('cv')`` need a fit
        that ran CV; the other rules the training risk of every model (a fit with
        ``selection='cv'`` solves the full-data path only up to the selected D; a fit
        with ``selection='penalty', penalty='cv'`` holds every curve).

        Parameters
        ----------
        rule : SelectionRule, {'cv', 'penalty', 'slope'} or int
            A rule of :mod:`kpm.machine.rules`, or a ``selection`` value (``'penalty'`` and
            ``'slope'`` with this model's ``penalty`` and ``slope_factor``).

        Returns
        -------
        Choice
            ``dim`` and ``index`` (the row of ``selection_curve_``) of the chosen model,
            with the rule's ``penalty`` / ``slope_lambda``; with ``formulation='svm'``,
            ``kernel_index`` is the position of the model's C among the fit's C values.
        """
        check_is_fitted(self)
        rule = as_rule(rule, self.penalty, self.slope_factor)
        check_rule_answerable(rule, self._curves, self.selection)
        return rule.select(self._curves)

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """``f(x) = Σ_l a_l k(z_l, x) + b``: shape (n,) for two classes (positive ->
        ``classes_[1]``), (n, n_classes) otherwise (one-vs-rest scores). A Dask array X
        gives a lazy Dask array (computed blockwise where X's chunks are)."""
        check_is_fitted(self)
        if _is_dask_array(X):
            F = self._dask_scores(X)
        else:
            X = check_estimator_data(self, X, reset=False)
            A = np.atleast_2d(self.dual_coef_).T  # (m, n_problems)
            F = np.empty((len(X), A.shape[1]))
            step = self.block_rows_
            for start in range(0, len(X), step):
                sl = slice(start, min(start + step, len(X)))
                F[sl] = _feature_block(X[sl], self.landmarks_, A, self.kernel_)
            F = F + np.atleast_1d(self.intercept_)[None, :]
        return F[:, 0] if F.shape[1] == 1 else F

    def _dask_scores(self, X):
        """The decision values (n, n_problems) of a Dask X, lazily."""
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1] if X.ndim == 2 else X.shape} features, expected {self.n_features_in_}"
            )
        A = np.atleast_2d(self.dual_coef_).T
        Xd = X.rechunk((self.block_rows_, X.shape[1]))
        fd = Xd.map_blocks(_feature_block, self.landmarks_, A, self.kernel_, dtype=float,
                           chunks=(Xd.chunks[0], (A.shape[1],)))
        return fd + np.atleast_1d(self.intercept_)[None, :]

    def predict(self, X):
        """Class labels: the exact KPM's rule (:func:`kpm.machine.engine.predict_codes`):
        ``classes_[1]`` where ``f(x) > 0`` for two classes, the largest one-vs-rest score
        otherwise, decision values rounded to 9 decimals (ties to the first class). A Dask
        array X gives a lazy Dask array of labels."""
        if _is_dask_array(X):
            check_is_fitted(self)
            return self._dask_scores(X).map_blocks(_labels_block, self.classes_, dtype=self.classes_.dtype,
                                                   drop_axis=1)
        F = self.decision_function(X)
        return self.classes_[predict_codes(F[:, None] if F.ndim == 1 else F)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on ``(X, y)``. For a Dask X the comparison runs blockwise where
        the data are (on the workers with ``client``) and only the number travels back."""
        if not _is_dask_array(X):
            return super().score(X, y, sample_weight=sample_weight)
        import dask.array as da

        pred = self.predict(X)
        y = y if _is_dask_array(y) else da.from_array(np.asarray(y), chunks=pred.chunks)
        if y.shape != pred.shape:
            raise ValueError(f"y has shape {y.shape}, expected {pred.shape}")
        hit = pred == y.rechunk(pred.chunks)
        if sample_weight is None:
            acc = hit.mean()
        else:
            w = sample_weight if _is_dask_array(sample_weight) else da.from_array(np.asarray(sample_weight, float),
                                                                                    chunks=pred.chunks)
            acc = (w.rechunk(pred.chunks) * hit).sum() / w.sum()
        return float(self.client.compute(acc).result() if self.client is not None else acc.compute())

    def transform_eigenfunctions(self, X, n_components=None):
        """The Nyström eigenfunction features ``φ_1..φ_D`` of X (default D = ``n_components_``)."""
        check_is_fitted(self)
        X = check_estimator_data(self, X, reset=False)
        D = self.n_components_ if n_components is None else n_components
        D = check_int(D, "n_components", maximum=self.projection_.shape[1])
        return self.kernel_.matvec(X, self.projection_[:, :D], self.landmarks_)
