"""The Nyström KPM's SVM beyond the memory of its features: selection on a subsample, the final
fit streamed.

:class:`~kpm.machine.nystroem.NystroemKPM` with ``formulation='svm'`` and the squared hinge
(the default of :class:`~kpm.machine.exact.KernelProjectionMachine` on the Nyström basis) holds
the features ``F = K(X, Z) P`` of its training points in memory, and the fit about
:data:`FEATURE_COPIES` arrays of that size (the features, the SVM's scaled copy, the solvers'
temporaries: 2.3 GiB beyond the data at n = 10^5, m = 1000). Beyond :data:`SELECTION_BYTES`
(1 GiB) for those arrays (:func:`selection_rows`):

1. C and D are chosen exactly as in memory -- the same basis (landmarks and eigenfunctions of
   all the training points), the same selection path -- on a uniform, stratified subsample
   of :func:`selection_rows` points;
2. the SVM at the chosen ``(D, C)`` is fitted on **all** the points by the finite Newton
   method of Keerthi & DeCoste (2005, JMLR 6) on the same objective as
   :class:`kpm.hinge.squared_hinge.SquaredHingeSVM`,

   .. math::

       \\tfrac12 (|w|^2 + b^2 / B^2) + C \\sum_i w_i \\max(0, 1 - y_i (w \\cdot \\Phi_i + b))^2,
       \\qquad \\Phi_i = K(x_i, Z)\\, P_D\\, \\operatorname{diag}(s_D),

   ``s`` the SVM's scale ``sqrt(lambda_j / m)`` of the eigenfunctions, warm-started from the
   subsample's solution. Each Newton step reads the data in row blocks twice: once for the
   sums of ``a_i a_i^T`` and of the gradient over the points in the loss (``a_i = [Phi_i, B]``,
   only those rows' features are made), once for the margins of the step, on which the line
   search is exact (the objective is piecewise quadratic along it). It stops where the
   gradient vanishes (``TOL``), where the Newton decrement is at rounding level
   (:data:`DECREMENT_TOL`), or where a full step keeps the set of points in the loss (the
   step was then exact). One kernel block serves every one-vs-rest problem. The features of
   the points in the loss are made as the in-memory fit makes them, ``K(x_i, Z) M``, and
   their Gram matrix by a symmetric rank-k update: at n = 10^6, m = D = 1000 five steps from
   the subsample's solution (the memory grows by 0.86 GiB beyond the data, the selection's
   subsample included).

The rows come from a :class:`RowSource`: the data in memory, or a Dask array whose chunks are
read on the workers (``client=``, :class:`DaskRowSource`), only per-chunk sums and ``n``
decision values per problem travelling to the client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import blas

from kpm.blas_threads import small_blas
from kpm.hinge.squared_hinge import MAX_ITER, TOL, weighted_line_search
from kpm.hinge.svm_path import BIAS_SCALE
from kpm.machine.dask_data import is_dask_array
from kpm.machine.nystroem_data import expansion_scores, feature_block

__all__ = ["FEATURE_COPIES", "SELECTION_BYTES", "DECREMENT_TOL", "selection_rows", "selection_subsample", "StreamedFit", "streamed_fit",
           "RowSource", "DASK_CHUNKS", "persisted", "DaskRowSource",
           "chunk_sums", "streamed_svm"]

#: The in-memory SVM fit holds about this many ``n x cols`` float64 arrays (features, their
#: scaled copy, the solvers' temporaries): 2.3 GiB beyond the data at n = 10^5, cols = 1000.
FEATURE_COPIES = 3
#: The most bytes of those arrays: beyond, C and D are chosen on a subsample and the final fit
#: streamed. A constant of its own, not a share of ``max_kernel_bytes`` (which tests and users
#: lower to reach the Nyström basis at small n): the growth of the fit beyond the data stays
#: below 2 GiB at n = 10^6, m = 1000.
SELECTION_BYTES = 2**30


#: The streamed Newton method also stops where the Newton decrement ``-grad . step`` is below
#: this times ``1 + |theta|^2``: the objective's Hessian is at least the identity, so
#: ``theta`` is then within about ``1e-8 (1 + |theta|)`` of the minimiser (the gradient test
#: ``TOL`` may be out of reach of the sums' rounding on a million rows).
DECREMENT_TOL = 1e-16


def selection_rows(n, cols):
    """The points on which C and D are chosen, or None where the fit runs in memory.

    In memory while the in-memory fit's ``FEATURE_COPIES * 8 * n * cols`` bytes fit
    :data:`SELECTION_BYTES` (1 GiB: 44,739 points at ``cols = 1000``); beyond, that many
    points (the final fit is then streamed over all ``n``).
    """
    rows = int(SELECTION_BYTES // (FEATURE_COPIES * 8 * max(int(cols), 1)))
    return None if n <= rows else max(rows, 2)


def selection_subsample(codes, rows, seed):
    """``rows`` indices (sorted) of a uniform draw stratified by the class ``codes`` (every index
    when ``rows >= n``)."""
    n = len(codes)
    if rows >= n:
        return np.arange(n)
    from sklearn.model_selection import train_test_split

    idx, _ = train_test_split(np.arange(n), train_size=rows, stratify=codes, random_state=seed)
    return np.sort(idx)


def chunk_sums(X, weights, residuals, Z, kernel, M, B, rows):
    """The Newton sums of a chunk of rows: ``(G, g)`` with, for each problem ``c``,
    ``G_c = sum_i weights[i, c] a_i a_i^T`` and ``g_c = sum_i residuals[i, c] a_i``
    (``a_i = [K(x_i, Z) M, B]``), only the rows of some positive weight read, in blocks of
    ``rows`` rows."""
    P, d = weights.shape[1], M.shape[1]
    G = np.zeros((P, d + 1, d + 1))
    g = np.zeros((P, d + 1))
    for start in range(0, len(X), rows):
        sl = slice(start, min(start + rows, len(X)))
        w, r = weights[sl], residuals[sl]
        used = np.flatnonzero(np.any(w > 0, axis=1))
        if not len(used):
            continue
        A = np.empty((len(used), d + 1))
        A[:, :d] = feature_block(X[sl][used], Z, M, kernel)
        A[:, d] = B
        for c in range(P):
            inside = np.flatnonzero(w[used, c] > 0)
            Ac = A[inside]
            g[c] += Ac.T @ r[used[inside], c]
            # the upper triangle of Ac^T W Ac (a symmetric rank-k update: half a product's flops)
            G[c] = blas.dsyrk(1.0, (Ac * np.sqrt(w[used[inside], c])[:, None]).T, c=G[c], beta=1.0, trans=0,
                              overwrite_c=1)
    upper = np.triu_indices(d + 1, 1)
    for c in range(P):
        G[c][(upper[1], upper[0])] = G[c][upper]
    return G, g


@dataclass
class StreamedFit:
    """All the training points of a fit whose C and D are chosen on the subsample
    ``selection`` (sorted indices): their rows (a :class:`RowSource`), the one-vs-rest
    targets and the samples' weights (None: unweighted)."""

    source: RowSource
    Y: np.ndarray
    weights: np.ndarray | None
    selection: np.ndarray

    def refit(self, basis, D, C, coef, intercept):
        """``(coef, intercept, steps)``: the SVM at ``(D, C)`` on every point
        (:func:`streamed_svm`), from the subsample's ``coef`` (n_problems, >= D) in the
        coordinates of the Nyström ``basis``'s eigenfunctions and ``intercept``."""
        scale = basis.svm_scale[:D]
        W, b, steps = streamed_svm(self.source, self.Y, self.weights, basis.landmarks, basis.kernel,
                                   basis.projection[:, :D] * scale, C, coef[:, :D] / scale, intercept)
        return W * scale, b, steps


def streamed_fit(X, Y, codes, weights, cols, rows, seed, client=None):
    """The :class:`StreamedFit` of training data ``X`` (numpy, or Dask on ``client``'s
    workers) with ``cols`` features per point, read in blocks of ``rows`` rows; None where the
    fit runs in memory (:func:`selection_rows`; with ``client`` always streamed, on a
    subsample of every point below the bytes). The subsample is drawn with ``seed``."""
    sub = selection_rows(X.shape[0], cols)
    if sub is None and client is None:
        return None
    source = RowSource(X, rows) if client is None else DaskRowSource(X, rows, client)
    idx = selection_subsample(codes, X.shape[0] if sub is None else sub, seed)
    return StreamedFit(source, Y, weights, idx)


class RowSource:
    """Training rows in memory, read in blocks of ``rows`` rows: the decision values of a
    kernel expansion on the landmarks (:meth:`scores`) and the Newton sums (:meth:`sums`)."""

    def __init__(self, X, rows):
        self.X, self.rows = X, int(rows)

    def scores(self, Z, kernel, A):
        """``K(X, Z) @ A`` (n, A's columns)."""
        return expansion_scores(self.X, Z, A, kernel, self.rows)

    def sums(self, weights, residuals, Z, kernel, M, B):
        """:func:`chunk_sums` of all the rows."""
        return chunk_sums(self.X, weights, residuals, Z, kernel, M, B, self.rows)


#: Chunks of a numpy ``X`` given with ``client=`` (:func:`persisted`).
DASK_CHUNKS = 8


def persisted(X, client):
    """``X`` persisted on ``client``'s workers (a numpy ``X`` as :data:`DASK_CHUNKS` row
    chunks): the landmarks, the subsample and every Newton pass then read it there, the data
    sent once."""
    if not is_dask_array(X):
        import dask.array as da  # the optional dependency, imported where it is used

        X = da.from_array(X, chunks=(-(-X.shape[0] // DASK_CHUNKS), X.shape[1]))
    return client.persist(X)


class DaskRowSource(RowSource):
    """Training rows of a Dask array ``X`` on ``client``'s workers (persisted there): each chunk
    read where it is, the per-chunk sums and the decision values gathered by the client."""

    def __init__(self, X, rows, client):
        super().__init__(persisted(X, client), rows)
        self.client = client
        self.bounds = np.concatenate([[0], np.cumsum(self.X.chunks[0])]).astype(int)

    def scores(self, Z, kernel, A):
        A = np.asarray(A, dtype=float)
        out = self.X.map_blocks(expansion_scores, Z, A, kernel, self.rows, dtype=float,
                                chunks=(self.X.chunks[0], (A.shape[1],)))
        return np.asarray(self.client.compute(out).result())

    def sums(self, weights, residuals, Z, kernel, M, B):
        import dask

        parts = self.X.to_delayed().ravel()
        lo, hi = self.bounds[:-1], self.bounds[1:]
        tasks = [dask.delayed(chunk_sums)(part, weights[a:b], residuals[a:b], Z, kernel, M, B, self.rows)
                 for part, a, b in zip(parts, lo, hi)]
        results = self.client.compute(tasks, sync=True)
        return sum(G for G, _ in results), sum(g for _, g in results)


def streamed_svm(source, Y, weights, Z, kernel, M, C, W, b, *, B=BIAS_SCALE, tol=TOL, max_iter=MAX_ITER):
    """The squared-hinge SVMs of every one-vs-rest problem on all the rows of ``source``, by
    streamed Newton steps (the module docstring).

    Parameters
    ----------
    source : RowSource
    Y : ndarray (n, P)
        The targets in {-1, +1}.
    weights : ndarray (n,) or None
        The samples' weights (each point's ``C w_i``).
    Z, kernel : ndarray (m, n_features), Kernel
        The landmarks and the kernel.
    M : ndarray (m, D)
        ``P_D diag(s_D)``: the features are ``K(x, Z) M``.
    C : float
    W, b : ndarray (P, D), ndarray (P,)
        The warm start: the weights of the features and the intercepts.

    Returns
    -------
    W, b : ndarray (P, D), ndarray (P,)
        The solutions.
    steps : int
        Newton steps taken (the largest over the problems); each read the rows twice.
    """
    n, P = Y.shape
    d = M.shape[1]
    cw = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    theta = np.hstack([np.asarray(W, dtype=float), (np.asarray(b, dtype=float) / B)[:, None]])  # (P, d + 1)
    margins = Y * (source.scores(Z, kernel, M @ theta[:, :d].T) + B * theta[:, d][None, :])
    todo = np.ones(P, dtype=bool)
    steps = 0
    C2 = 2.0 * float(C)
    for _ in range(max_iter):
        active = (margins < 1.0) & todo[None, :]
        wts = np.where(active, cw[:, None], 0.0)
        res = np.where(active, cw[:, None] * Y * (1.0 - margins), 0.0)
        G, g = source.sums(wts, res, Z, kernel, M, B)
        step = np.zeros_like(theta)
        for c in np.flatnonzero(todo):
            grad = theta[c] - C2 * g[c]
            if np.linalg.norm(grad) <= tol * (1.0 + np.linalg.norm(theta[c])):
                todo[c] = False
                continue
            H = C2 * G[c]
            H[np.diag_indices_from(H)] += 1.0
            with small_blas(d + 1):
                step[c] = -linalg.cho_solve(linalg.cho_factor(H, check_finite=False), grad, check_finite=False)
            if -float(grad @ step[c]) <= DECREMENT_TOL * (1.0 + float(theta[c] @ theta[c])):
                todo[c], step[c] = False, 0.0  # within rounding of the minimiser
        if not todo.any():
            break
        steps += 1
        q = Y * (source.scores(Z, kernel, M @ step[:, :d].T) + B * step[:, d][None, :])
        for c in np.flatnonzero(todo):
            t = weighted_line_search(float(theta[c] @ step[c]), float(step[c] @ step[c]), margins[:, c],
                                     np.ascontiguousarray(q[:, c]), C2, cw)
            theta[c] += t * step[c]
            new = margins[:, c] + t * q[:, c]
            if abs(t - 1.0) <= 1e-12 and np.array_equal(new < 1.0, margins[:, c] < 1.0):
                todo[c] = False  # the step reached the minimiser of the piece it started on: exact
            margins[:, c] = new
        if not todo.any():
            break
    return theta[:, :d], B * theta[:, d], steps
