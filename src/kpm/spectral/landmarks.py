"""Landmark rules for Nyström approximations: uniform, k-means++ and randomly pivoted Cholesky.

A Nyström approximation of a kernel matrix ``K`` from the landmark rows ``S`` is
``K^ = K[:, S] K[S, S]^+ K[S, :]``; the residual ``K - K^`` is positive
semi-definite, so its trace norm is its trace, ``sum_i (K_ii - K^_ii)``
(:func:`nystroem_trace_error`).

* ``'uniform'``: ``m`` rows drawn without replacement.
* ``'kmeans++'``: scikit-learn's k-means++ seeding in input space.
* ``'rpcholesky'``: randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber 2023,
  Algorithm 1). Each pivot is drawn with probability proportional to the diagonal of
  the current residual ``K - K^`` -- the kernel-space distance of each point to the
  span of the pivots already chosen -- and the residual is updated by one partial
  Cholesky step. It reads ``m`` kernel columns and the diagonal, ``O(n m)`` kernel
  entries (never the ``n x n`` matrix), and costs ``O(n m^2)`` flops. Its expected
  trace error is within a factor ``1 + epsilon`` of the best rank-``r`` error once
  ``m >= r / epsilon + r log(1 / (epsilon eta))`` (their main error bound, ``eta`` the
  relative best rank-``r`` error).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from kpm.spectral.basis import RANK_RTOL, landmark_map
from kpm.validation import InstanceOf, Integer, check_int, check_option, check_param, check_samples

__all__ = ["LANDMARK_RULES", "select_landmarks", "rpcholesky", "nystroem_trace_error"]

LANDMARK_RULES = ("uniform", "kmeans++", "rpcholesky")
#: the k-means++ and RPCholesky rules run on a uniform subsample of this many times m rows
POOL_FACTOR = 20


def _is_dask_array(X) -> bool:
    """Whether X is a Dask array (without importing Dask: only a caller that imported it can
    hold one)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


#: the seeds the landmark rules take
_SEEDS = [None, Integer(0), InstanceOf(np.random.Generator, "a numpy Generator"),
          InstanceOf(np.random.RandomState, "a RandomState")]


def _generator(random_state):
    """A numpy Generator from None, an int, a Generator or a RandomState."""
    random_state = check_param(random_state, "random_state", _SEEDS)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(2**31 - 1)))
    return np.random.default_rng(random_state)


def _check_kernel(kernel, method):
    from kpm.kernels import Kernel

    if kernel is None:
        raise ValueError(
            f"landmarks={method!r} evaluates the kernel: pass kernel= (a kpm.kernels.Kernel, e.g. "
            "from kpm.kernels.make_kernel)"
        )
    return check_param(kernel, "kernel", [InstanceOf(Kernel, "a kpm.kernels.Kernel")])


def select_landmarks(X, n_landmarks, method="uniform", random_state=None, *, kernel=None):
    """Indices of ``n_landmarks`` landmark rows of X (sorted).

    Parameters
    ----------
    X : ndarray or dask array (n_samples, n_features), or (n_samples, n_samples)
        The samples, or the kernel matrix itself when ``kernel`` is ``'precomputed'``.
    n_landmarks : int
        At most ``n_samples``.
    method : {'uniform', 'kmeans++', 'rpcholesky'}, default='uniform'
        ``'uniform'``: drawn without replacement. ``'kmeans++'``: scikit-learn's
        k-means++ seeding in input space. ``'rpcholesky'``: randomly pivoted Cholesky
        on the kernel matrix (:func:`rpcholesky`; Chen, Epperly, Tropp & Webber 2023),
        which needs ``kernel``. Both non-uniform rules run on a uniform subsample of
        ``min(n, 20 n_landmarks)`` rows (all rows when ``n <= 20 n_landmarks``).
    random_state : int, Generator, RandomState or None
        Seeds the draw; the same seed gives the same landmarks.
    kernel : kpm.kernels.Kernel, optional
        The kernel (``'rpcholesky'`` only).

    Returns
    -------
    idx : ndarray of int (n_landmarks,)
    """
    method = check_option(method, "landmarks", LANDMARK_RULES)
    if method == "rpcholesky":
        kernel = _check_kernel(kernel, method)
    precomputed = kernel is not None and kernel.is_precomputed
    if not _is_dask_array(X):
        X = _check_input(X, kernel)
    elif X.ndim != 2:
        raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}")
    n = X.shape[0]
    n_landmarks = check_int(n_landmarks, "n_landmarks")
    if n_landmarks > n:
        raise ValueError(
            f"n_landmarks={n_landmarks} is larger than the number of samples n={n}: "
            "use at most n landmarks"
        )
    rng = _generator(random_state)
    if method == "uniform":
        return np.sort(rng.choice(n, int(n_landmarks), replace=False))
    n_pool = min(n, POOL_FACTOR * int(n_landmarks))
    pool = np.arange(n) if n_pool == n else np.sort(rng.choice(n, n_pool, replace=False))
    if precomputed:
        Xp = X[np.ix_(pool, pool)]
    else:
        Xp = X[pool]
        if _is_dask_array(Xp):
            Xp = check_samples(Xp.compute())
    if method == "kmeans++":
        from sklearn.cluster import kmeans_plusplus

        if precomputed or (kernel is not None and kernel.raw_input):
            raise ValueError(
                "landmarks='kmeans++' needs numeric feature vectors (not a precomputed kernel "
                "matrix or raw inputs such as strings)"
            )
        _, idx = kmeans_plusplus(Xp, int(n_landmarks), random_state=int(rng.integers(2**31 - 1)))
    else:
        idx = rpcholesky(kernel, Xp, int(n_landmarks), random_state=rng)[0]
    return np.sort(pool[idx])


def _columns(kernel, X, precomputed):
    """``(diag, column(s))``: the kernel diagonal and a function returning column s."""
    if precomputed:
        return np.array(np.diag(X), dtype=float), lambda s: np.asarray(X[:, s], dtype=float)
    X_sq = kernel.sq_norms(X)
    diag = np.asarray(kernel.diag(X), dtype=float)

    def column(s):
        col = kernel.block(X, X[s : s + 1], X_sq, None if X_sq is None else X_sq[s : s + 1])
        return np.asarray(col, dtype=float).ravel()

    return diag, column


def rpcholesky(kernel, X, n_landmarks, *, random_state=None):
    r"""Randomly pivoted Cholesky: pivots and the Nyström factor of a kernel matrix.

    Algorithm 1 of Chen, Epperly, Tropp & Webber (2023). Starting from
    :math:`d = \operatorname{diag}(K)` and an empty factor :math:`F`, each step draws a pivot
    :math:`s` with probability :math:`d_s / \sum_i d_i`, evaluates the kernel column
    :math:`g = K_{:,s} - F F_{s,:}^\top`, appends :math:`g / \sqrt{g_s}` to :math:`F` and
    updates :math:`d \leftarrow d - g^2 / g_s` (elementwise). After m steps
    :math:`F F^\top` is the Nyström approximation :math:`K_{:,S} K_{S,S}^+ K_{S,:}` of the
    pivots :math:`S`, and :math:`d` the diagonal of the residual. Only ``m`` columns and the diagonal of
    ``K`` are evaluated.

    Parameters
    ----------
    kernel : kpm.kernels.Kernel
        The kernel; ``'precomputed'``: X is the (n, n) kernel matrix (only its diagonal
        and ``m`` columns are read).
    X : ndarray (n_samples, n_features), or (n_samples, n_samples) if precomputed
    n_landmarks : int
        Number of pivots m, at most n_samples. When the kernel matrix has numerical rank
        ``r < m`` (the residual trace falls to the rounding level of ``trace(K)``), the
        ``m - r`` remaining pivots are drawn uniformly from the other rows, with a
        ``UserWarning``.
    random_state : int, Generator, RandomState or None
        The same seed gives the same pivots.

    Returns
    -------
    pivots : ndarray of int (m,)
        In the order drawn.
    F : ndarray (n_samples, r)
        The Nyström factor (:math:`\hat K = F F^\top`), :math:`r \le m` columns (the numerical rank).
    residual : ndarray (n_samples,)
        :math:`\operatorname{diag}(K - F F^\top)`, clipped at 0.

    References
    ----------
    Y. Chen, E. N. Epperly, J. A. Tropp and R. J. Webber, "Randomly pivoted Cholesky:
    Practical approximation of a kernel matrix with few entry evaluations",
    arXiv:2207.06503 (2022, revised 2023); Communications on Pure and Applied Mathematics, 2025.
    """
    kernel = _check_kernel(kernel, "rpcholesky")
    precomputed = kernel.is_precomputed
    X = kernel(X) if precomputed else _check_input(X, kernel)
    n = X.shape[0]
    if precomputed and X.shape != (n, n):
        raise ValueError(f"a precomputed kernel matrix must be square, got shape {X.shape}")
    m = check_int(n_landmarks, "n_landmarks")
    if m > n:
        raise ValueError(f"n_landmarks={m} is larger than the number of samples n={n}")
    rng = _generator(random_state)
    d, column = _columns(kernel, X, precomputed)
    if np.any(d < 0) or not np.all(np.isfinite(d)):
        raise ValueError("the kernel diagonal k(x, x) must be finite and non-negative")
    floor = n * np.finfo(float).eps * max(float(d.sum()), np.finfo(float).tiny)
    F = np.zeros((n, m), order="F")
    pivots = []
    r = 0
    while r < m:
        total = float(d.sum())
        if total <= floor:
            break
        s = int(np.searchsorted(np.cumsum(d), rng.random() * total, side="right"))
        s = min(s, n - 1)
        g = column(s)
        if r:
            g -= F[:, :r] @ F[s, :r]
        if g[s] <= floor / n:  # a pivot already spanned (rounding): drop its mass
            d[s] = 0.0
            continue
        F[:, r] = g / np.sqrt(g[s])
        d -= F[:, r] ** 2
        np.maximum(d, 0.0, out=d)
        d[s] = 0.0
        pivots.append(s)
        r += 1
    if r < m:
        warnings.warn(
            f"the kernel matrix has numerical rank {r} < n_landmarks={m}: randomly pivoted "
            f"Cholesky found {r} pivots, the other {m - r} landmarks are drawn uniformly",
            UserWarning, stacklevel=2,
        )
        rest = np.setdiff1d(np.arange(n), pivots)
        pivots += list(rng.choice(rest, m - r, replace=False))
    return np.asarray(pivots, dtype=int), F[:, :r], d


def nystroem_trace_error(kernel, X, landmarks, *, sample=None, rtol=RANK_RTOL):
    r"""Relative trace-norm error of the Nyström approximation on a sample of rows.

    :math:`K - \hat K` with :math:`\hat K = K_{:,S} K_{S,S}^+ K_{S,:}` is positive
    semi-definite, so its trace norm is its trace. On the rows :math:`T` of ``sample`` this
    returns

    .. math::

        \frac{\sum_{i \in T} (K_{ii} - \hat K_{ii})}{\sum_{i \in T} K_{ii}},

    the trace norm of the principal :math:`T \times T` block of :math:`K - \hat K` relative
    to that of :math:`K`. :math:`K_{S,S}^+` is the pseudo-inverse cut at the numerical rank
    (:func:`kpm.spectral.basis.landmark_map`). Costs ``|T| m`` kernel entries.

    Parameters
    ----------
    kernel : kpm.kernels.Kernel
        Not ``'precomputed'``.
    X : ndarray (n_samples, n_features)
    landmarks : array-like of int
        Row indices S of the landmarks.
    sample : array-like of int, optional
        Row indices T (default: every row).
    rtol : float, default=RANK_RTOL
        Relative rank tolerance of ``K[S, S]`` (:mod:`kpm.spectral.basis`).

    Returns
    -------
    float
    """
    kernel = _check_kernel(kernel, "the trace error")
    if kernel.is_precomputed:
        raise ValueError("nystroem_trace_error needs feature vectors, not a precomputed kernel")
    X = check_samples(X)
    n = X.shape[0]
    S = _check_indices(landmarks, n, "landmarks")
    T = np.arange(n) if sample is None else _check_indices(sample, n, "sample")
    M = landmark_map(kernel(X[S]), rtol=rtol)
    approx = np.zeros(len(T))
    for rows, block in kernel.blocks(X[T], X[S]):
        G = block @ M
        approx[rows] = np.einsum("ij,ij->i", G, G)
    diag = kernel.diag(X[T])
    return float(np.sum(np.maximum(diag - approx, 0.0)) / np.sum(diag))


def _check_input(X, kernel):
    """Numeric samples, or what a raw-input kernel (e.g. on strings) accepts."""
    if kernel is not None and kernel.raw_input:
        return kernel.check_input(X)
    return check_samples(X)


def _check_indices(idx, n, name):
    idx = np.asarray(idx)
    if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{name} must be a non-empty 1-D array of row indices")
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"{name} must be row indices in [0, {n - 1}]")
    return idx
