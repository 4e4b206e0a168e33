"""Matrix-free kernel PCA: the kernel matrix as an operator evaluated block by block.

:class:`KernelOperator` computes products ``K V`` (or ``K~ V`` for the centred
``K~ = H K H``, ``H = I - 11^T/n``) of the n x n kernel matrix of the training data with a
block of vectors, never holding more than ``block_bytes`` (:func:`kpm.set_config`) of
kernel values: row blocks ``K[rows, :]`` are evaluated, multiplied by V and dropped, in
parallel threads. The centred product needs no n x n copy either:

    ``K~ V = H K H V = K V - 1 (1^T K V)/n - K1 (1^T V)/n + 1 (1^T K 1)(1^T V)/n^2``,

computed as ``H (K (H V))`` (a column-mean subtraction before and after the product); the
column sums ``K 1`` (needed to centre kernel rows of new points) come with the first
exact product, as one more column.

For the RBF kernel a product has a float32 variant: the exponent ``-gamma ||x - y||^2`` of
a block is one GEMM of augmented rows, ``[sqrt(2 gamma) x, -gamma |x|^2, 1] .
[sqrt(2 gamma) y, 1, -gamma |y|^2]`` (the data centred first, which the kernel does not
see, so that the norms are small), then ``exp`` in place. Its entries carry relative errors
of about ``1e-7``, so it only drives the first iterations; :func:`matrix_free_basis`
certifies the result with float64 products (:func:`kpm.spectral.eigensolvers.subspace_eigh`).

:func:`matrix_free_basis` is the exact kernel PCA of large n: the iteration starts from the
Nyström approximation of the leading eigenvectors (Williams & Seeger 2001) computed
blockwise from ``n_landmarks`` landmarks, whose eigenvalues also choose the block size.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import linalg
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from kpm.config import get_config
from kpm.spectral.eigensolvers import fix_signs, subspace_eigh, operator_hints
from kpm.exceptions import KernelMemoryError
from kpm.kernels import Kernel
from kpm.spectral.landmarks import select_landmarks
from kpm.spectral.basis import RANK_RTOL, EigenBasis, landmark_map, numerical_rank, rounding_level
from kpm.validation import (
    InstanceOf,
    check_bool,
    check_int,
    check_kernel_values,
    check_option,
    check_param,
    check_real,
)

__all__ = ["KernelOperator", "matrix_free_basis", "PRECISIONS", "DEFAULT_EIGEN_TOL"]

#: ``precision`` options: float32 products where the kernel has them, certified in float64;
#: or float64 throughout
PRECISIONS = ("mixed", "float64")

#: Default relative Ritz-residual tolerance of :func:`matrix_free_basis`
DEFAULT_EIGEN_TOL = 1e-10

# Cost of evaluating one block of kernel values, in units of the cost of multiplying it by
# one column; it weighs wide blocks (fewer products) against narrow ones in _choose_block.
# Measured on float32 RBF blocks of 256 x 100000, 20 features, one thread of a loaded
# machine: GEMM of the augmented rows 2.2 ns and exp 5.1 ns per value, against 0.068 ns per
# value and column for the product, i.e. about 107 columns. The symmetric products use each
# evaluated value twice, which makes the effective figure about half that; the constant
# has not been re-tuned since (on twonorm it chose p = 250 for k = 50, just past a gap of
# the spectrum).
_KERNEL_COST_COLUMNS = 120


class KernelOperator:
    """The (centred) kernel matrix of X as a linear operator, products computed blockwise.

    Parameters
    ----------
    kernel : kpm.kernels.Kernel
        A kernel evaluated on feature vectors (not ``'precomputed'``, not a callable's or
        a string kernel's: their matrices are checked as a whole elsewhere).
    X : array-like (n, n_features)
    center : bool, default=False
        Products with ``H K H`` instead of K.
    precision : {'mixed', 'float64'}, default='mixed'
        ``'mixed'``: offer float32 products (:attr:`fast_matmat`) for the RBF kernel.
    n_jobs : int, optional
        Threads computing row blocks (default: the number of CPUs). BLAS runs on one
        thread inside each.
    n_landmarks : int, optional
        Landmarks of the Nyström starting block (default ``max(1000, 5 k)``, at most n and
        at most what fits ``kpm.get_config()['max_kernel_bytes']`` as a matrix).

    Attributes
    ----------
    n : int
    timings : dict
        For each precision (suffix ``_float32``, ``_float64``): thread-seconds in kernel
        evaluation (``kernel_s_*``) and in the products with the vectors and their
        accumulation (``product_s_*``), and the number of passes over the matrix
        (``passes_*``).
    """

    def __init__(self, kernel, X, *, center=False, precision="mixed", n_jobs=None,
                 n_landmarks=None):
        check_param(kernel, "kernel", [InstanceOf(Kernel, "a kpm Kernel")])
        for flag, what in (("is_precomputed", "a precomputed kernel matrix"),
                           ("raw_input", "a kernel on non-numeric inputs"),
                           ("user_defined", "a callable kernel")):
            if getattr(kernel, flag):
                raise ValueError(
                    f"the matrix-free eigensolver evaluates the built-in kernels on feature "
                    f"vectors; it does not take {what} ({kernel!r}): use eigen_solver='dense', "
                    "'arpack' or 'randomized'"
                )
        X = kernel.check_input(X, "X")
        self.kernel = kernel
        # stationary kernels do not see a shift of the data: centred rows have small norms
        self.X = X - X.mean(axis=0) if kernel.is_stationary else X
        self.n = X.shape[0]
        self.center = check_bool(center, "center")
        self.precision = check_option(precision, "precision", PRECISIONS)
        self.n_jobs = check_int(n_jobs, "n_jobs", minimum=1, allow_none=True) or _cpus()
        self.n_landmarks = check_int(n_landmarks, "n_landmarks", minimum=1, allow_none=True)
        self._X_sq = kernel.sq_norms(self.X)
        self._k1 = None
        self._aug = _float32_factors(kernel, self.X) if self.has_fast_product else None
        self._lock = threading.Lock()
        #: float32 products ``V -> K V`` (centred: ``H K H V``), or None when the kernel has
        #: none (only the RBF kernel, with ``precision='mixed'``)
        self.fast_matmat = self._fast_matmat if self.has_fast_product else None
        self.timings = {f"{what}_{prec}": 0 for what in ("kernel_s", "product_s", "passes")
                        for prec in ("float32", "float64")}

    @property
    def has_fast_product(self):
        """Whether float32 products are offered (RBF kernel, ``precision='mixed'``)."""
        return self.precision == "mixed" and self.kernel.name == "rbf"

    @property
    def shape(self):
        return (self.n, self.n)

    def block_rows(self, itemsize=8):
        """Rows per block so that the blocks of all threads (with the evaluation's
        temporaries: two in float64, one in float32) fit ``block_bytes``."""
        budget = get_config()["block_bytes"]
        per_row = self.n * itemsize * (2 if itemsize == 8 else 1) * self.n_jobs
        rows = budget // per_row
        if rows < 1:
            raise KernelMemoryError(
                f"block_bytes={budget} is too small for one row of {self.n} kernel values per "
                f"thread ({self.n_jobs} threads need {per_row} bytes); raise it with "
                "kpm.set_config(block_bytes=...) or use fewer threads (n_jobs)"
            )
        return int(min(rows, self.n))

    # ------------------------------------------------------------------ products
    def __call__(self, V):
        """``K V`` (centred: ``H K H V``) in float64."""
        return self._centred(V, fast=False)

    def _fast_matmat(self, V):
        """``K V`` with float32 kernel values (RBF; see the module docstring)."""
        return self._centred(V, fast=True)

    @property
    def col_sums(self):
        """``K 1`` (float64; one pass over the matrix unless an exact product gave it)."""
        if self._k1 is None:
            self._k1 = self._product(np.ones((self.n, 1)), fast=False)[:, 0]
        return self._k1

    def _centred(self, V, fast):
        V = np.asarray(V, dtype=float)
        if V.ndim != 2 or V.shape[0] != self.n:
            raise ValueError(f"V must be an (n, b) block with n = {self.n}, got shape {V.shape}")
        if not self.center:
            return self._product(V, fast).astype(float, copy=False)
        HV = V - V.mean(axis=0)
        want_k1 = not fast and self._k1 is None
        if want_k1:
            HV = np.column_stack([HV, np.ones(self.n)])
        # float64 before centring: K V carries the large constant mode of K, which the
        # subtraction cancels (in float32 that would cost an order of magnitude of accuracy)
        KV = self._product(HV, fast).astype(float, copy=False)
        if want_k1:
            self._k1, KV = KV[:, -1].copy(), KV[:, :-1]
        return KV - KV.mean(axis=0)

    def _product(self, V, fast):
        """``K V`` from the upper triangle of K: the row block ``K[a:b, a:]`` is evaluated
        once and used twice, for ``out[a:b] = K[a:b, a:] V[a:]`` and, by symmetry, for
        the contributions ``K[a:b, b:]^T V[a:b]`` to the rows below it (accumulated in
        float64, one accumulator per thread). Blocks go round-robin to the threads and the
        accumulators are added in thread order, so the result does not depend on timing."""
        dtype = np.float32 if fast else np.float64
        V = np.ascontiguousarray(V, dtype=dtype)
        step = self.block_rows(np.dtype(dtype).itemsize)
        starts = list(range(0, self.n, step))
        jobs = min(self.n_jobs, len(starts))
        out = np.empty((self.n, V.shape[1]), dtype=dtype)
        with threadpool_limits(limits=1, user_api="blas"):
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                accs = list(pool.map(lambda t: self._thread_product(starts[t::jobs], step, V, out, fast),
                                     range(jobs)))
        mirror = accs[0]
        for acc in accs[1:]:
            mirror += acc
        self.timings["passes_float32" if fast else "passes_float64"] += 1
        return out + mirror

    def _thread_product(self, starts, step, V, out, fast):
        """One thread's row blocks: their rows of ``K V`` into ``out``, and the float64
        accumulator of their mirrored contributions (returned)."""
        dtype = V.dtype
        buf = np.empty(step * self.n, dtype=dtype)  # a contiguous block of any shape fits
        tmp = np.empty((self.n, V.shape[1]), dtype=dtype)
        acc = np.zeros((self.n, V.shape[1]))
        kernel_s = product_s = 0.0
        for a in starts:
            b = min(a + step, self.n)
            t0 = time.perf_counter()
            shape = (b - a, self.n - a)
            block = self._kernel_block(a, b, buf[: shape[0] * shape[1]].reshape(shape), fast)
            t1 = time.perf_counter()
            np.matmul(block, V[a:], out=out[a:b])
            if b < self.n:
                part = np.matmul(block[:, b - a :].T, V[a:b], out=tmp[: self.n - b])
                acc[b:] += part
            product_s += time.perf_counter() - t1
            kernel_s += t1 - t0
        prec = "float32" if fast else "float64"
        with self._lock:
            self.timings["kernel_s_" + prec] += kernel_s
            self.timings["product_s_" + prec] += product_s
        return acc

    def _kernel_block(self, a, b, buf, fast):
        """``K[a:b, a:]`` (into ``buf`` where the kernel computes in place)."""
        if fast:
            return _rbf_block_float32(self._aug, slice(a, b), slice(a, self.n), buf)
        X_sq = self._X_sq
        block = self.kernel.block(self.X[a:b], self.X[a:], None if X_sq is None else X_sq[a:b],
                                  None if X_sq is None else X_sq[a:], out=buf)
        return check_kernel_values(block, self.kernel)

    # ---------------------------------------------------------------- start block
    def start_block(self, k, random_state=None):
        """An (n, p) starting block for :func:`kpm.spectral.eigensolvers.subspace_eigh`: the p
        leading eigenvectors of the Nyström approximation of the (centred) kernel matrix,
        p chosen from its eigenvalues (:func:`_choose_block`)."""
        k = check_int(k, "k", minimum=1, maximum=self.n)
        rs = check_random_state(random_state)
        # the landmark kernel matrix within the memory budget of a formed matrix
        fits = int(np.sqrt(get_config()["max_kernel_bytes"] / 8))
        m = min(self.n, self.n_landmarks or max(1000, 5 * k), max(fits, 1))
        idx = select_landmarks(self.X, m, "uniform", rs)
        Z = self.X[idx]
        with threadpool_limits(limits=1, user_api="blas"):  # small: threads only busy-wait
            M = landmark_map(self.kernel(Z))
        C, fsum = self._landmark_scatter(Z, M)
        fbar = fsum / self.n if self.center else np.zeros(M.shape[1])
        with threadpool_limits(limits=1, user_api="blas"):
            lam, R = linalg.eigh(C - self.n * np.outer(fbar, fbar), check_finite=False)
        lam, R = lam[::-1], R[:, ::-1]
        p = _choose_block(lam, k, self.n)
        R = R[:, : min(p, R.shape[1])]
        start = np.zeros((self.n, p))
        for rows, Kb in self.kernel.blocks(self.X, Z):
            start[rows, : R.shape[1]] = (Kb @ M - fbar) @ R
        return start

    def _landmark_scatter(self, Z, M):
        """``F^T F`` and ``F^T 1`` of the landmark features ``F = K(X, Z) M`` (blockwise)."""
        C = np.zeros((M.shape[1], M.shape[1]))
        fsum = np.zeros(M.shape[1])
        for _, Kb in self.kernel.blocks(self.X, Z):
            F = Kb @ M
            C += F.T @ F
            fsum += F.sum(axis=0)
        return C, fsum


def _cpus():
    import os

    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _float32_factors(kernel, X):
    """The RBF kernel's augmented rows of X (:meth:`kpm.kernels.RBFKernel.augmented_rows`)
    in float32: ``A`` and ``B^T`` with ``A_i . B_j = -gamma ||x_i - x_j||^2``."""
    sq = np.einsum("ij,ij->i", X, X)
    A = kernel.augmented_rows(X, sq, side=0).astype(np.float32)
    B = kernel.augmented_rows(X, sq, side=1).astype(np.float32)
    return A, np.ascontiguousarray(B.T)


def _rbf_block_float32(aug, rows, cols, out):
    """``exp(-g ||x_i - x_j||^2)`` for ``rows`` x ``cols`` in float32, into ``out``.

    The exponent is not clipped at 0: near the diagonal it may come out at ``+1e-7``
    (rounding), an error of the size of float32's anyway."""
    A, Bt = aug
    G = np.matmul(A[rows], Bt[:, cols], out=out)
    return np.exp(G, out=G)


def _choose_block(lam, k, n):
    """Block size p of the subspace iteration from (Nyström) eigenvalue estimates.

    The iteration reduces the residuals by ``lam[p] / lam[k-1]`` per product, and a product
    costs ``_KERNEL_COST_COLUMNS + p`` column products: p minimises
    ``ceil(log(1e-8) / log(ratio)) * (_KERNEL_COST_COLUMNS + p)`` over ``k + 8 <= p <= 6 k``
    (within the estimates available and n).
    """
    hi = min(n, 6 * k, len(lam) - 1)
    lo = min(k + 8, hi)
    if hi <= k or lam[k - 1] <= 0:
        return min(n, max(2 * k, k + 10))
    best, best_cost = lo, np.inf
    for p in range(lo, hi + 1):
        ratio = min(max(lam[p], 0.0) / lam[k - 1], 0.999)
        iters = np.ceil(np.log(1e-8) / np.log(max(ratio, 1e-300)))
        cost = iters * (_KERNEL_COST_COLUMNS + p)
        if cost < best_cost:
            best, best_cost = p, cost
    return int(best)


def matrix_free_basis(kernel, X, n_components, *, center=True, eigen_tol=DEFAULT_EIGEN_TOL,
                      rtol=RANK_RTOL, precision="mixed", n_jobs=None, n_landmarks=None,
                      random_state=None):
    r"""Exact kernel PCA of X without forming the kernel matrix: an :class:`EigenBasis`.

    The ``n_components`` leading eigenpairs of :math:`\tilde K = H K H` (or K) by subspace iteration
    on a :class:`KernelOperator` started from a Nyström block, in float32 then float64
    (:func:`kpm.spectral.eigensolvers.subspace_eigh`). Every returned pair passed the float64
    certificate :math:`\|\tilde K u - \lambda u\| \le \epsilon \lambda_1` (:math:`\epsilon` =
    ``eigen_tol``).

    Parameters
    ----------
    kernel : kpm.kernels.Kernel
    X : ndarray (n, n_features)
    n_components : int
    center : bool, default=True
    eigen_tol : float, default=1e-10
        Relative Ritz-residual tolerance.
    rtol : float, default=RANK_RTOL
        Relative rank tolerance (:func:`kpm.spectral.numerical_rank`).
    precision : {'mixed', 'float64'}, default='mixed'
    n_jobs, n_landmarks : int, optional
        See :class:`KernelOperator`.
    random_state : int, RandomState or None

    Returns
    -------
    basis : EigenBasis
        With the centring statistics (``col_means = K 1 / n``) when centred.
    info : dict
        The solver's (products, ``residuals``, ``history``, ``block_size``, ``rr_s``)
        and the operator's ``timings``.
    """
    if getattr(kernel, "name", None) == "sigmoid":
        raise ValueError(
            "the matrix-free eigensolver needs a positive semi-definite kernel (subspace iteration "
            "finds the eigenvalues of largest magnitude); the sigmoid kernel's matrix is "
            "indefinite in general: use eigen_solver='dense', 'arpack' or 'randomized'"
        )
    op = KernelOperator(kernel, X, center=center, precision=precision, n_jobs=n_jobs,
                        n_landmarks=n_landmarks)
    k = check_int(n_components, "n_components", minimum=1, maximum=op.n)
    eigen_tol = check_real(eigen_tol, "eigen_tol", low=0.0, high=1.0, low_open=True, high_open=True)
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, high_open=True)
    rs = check_random_state(random_state)
    t0 = time.perf_counter()
    hints = operator_hints(op, k, rs)
    start_s = time.perf_counter() - t0
    w, U, info = subspace_eigh(op, op.n, k, rtol=eigen_tol, random_state=rs, **hints)
    order = np.argsort(w)[::-1]
    w, U = w[order], fix_signs(U[:, order])
    info["residuals"] = info["residuals"][order]
    info["start_s"] = start_s
    info["timings"] = dict(op.timings)
    diag = kernel.diag(X)
    magnitude = float(np.max(diag))
    floor = rounding_level(op.n, magnitude)
    col_means = total_mean = None
    trace = float(diag.sum())
    if center:
        col_means = op.col_sums / op.n
        total_mean = float(col_means.mean())
        trace -= op.n * total_mean  # trace(H K H) = trace(K) - 1^T K 1 / n
    basis = EigenBasis(w, U, numerical_rank(w, floor=floor, rtol=rtol), col_means, total_mean,
                       complete=False, floor=floor, trace=trace)
    return basis, info
