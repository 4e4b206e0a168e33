"""Eigendecompositions of symmetric PSD kernel matrices: dense, partial and centring helpers.

All functions return eigenvalues in *decreasing* order with the matching unit
eigenvectors as columns, and a deterministic sign convention (the entry of
largest magnitude of each eigenvector is positive).

Solvers of :func:`top_eigh`
---------------------------
``'dense'``
    LAPACK ``eigh`` (``subset_by_index`` when only the top k are wanted).
``'arpack'``
    :func:`scipy.sparse.linalg.eigsh` (implicitly restarted Lanczos, one vector at
    a time).
``'randomized'``
    A randomized *block Krylov* (block Lanczos) method with full
    re-orthogonalisation and thick restarts (:func:`block_krylov_eigh`). It
    starts from a Gaussian block, works with matrix-matrix products only
    (BLAS-3, which is what makes it fast on a dense kernel matrix) and stops on
    the *Ritz residuals*: every returned pair satisfies
    ``||K v - lambda v|| <= rtol * lambda_max``, checked explicitly at the end, so
    the accuracy is guaranteed rather than hoped for (by the Davis-Kahan theorem
    the sine of the largest principal angle to the exact invariant subspace is at
    most ``||R||_2 / gap``).

``'matrix-free'``
    Subspace iteration with Rayleigh-Ritz on a wide block (:func:`subspace_eigh`). On a
    :class:`kpm.spectral.operator.KernelOperator` -- the kernel matrix evaluated block by
    block, never formed -- it starts from a Nyström block and runs on float32 kernel
    values first; the returned pairs always pass the Ritz-residual test in float64. On a
    stored matrix it runs on its float64 products.

Centring without copies: :func:`top_eigh` accepts ``center=True``, in which case
it works on ``H K H`` (``H = I - 11^T/n``) through ``H K H V = H (K (H V))``
without forming the centred matrix.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.utils import check_random_state

from kpm.blas_threads import one_blas_thread
from kpm.validation import check_bool, check_int, check_option, check_real

__all__ = [
    "center_gram",
    "center_cross_gram",
    "top_eigh",
    "fix_signs",
    "block_krylov_eigh",
    "choose_solver",
    "operator_eigh",
    "dense_eigh",
    "arpack_eigh",
    "randomized_eigh",
    "matrix_free_eigh",
    "subspace_eigh",
    "EIGENSOLVERS",
    "SOLVERS",
]

def center_gram(K, *, copy=True):
    """Double-centre a Gram matrix: ``H K H`` with ``H = I - 11^T/n``.

    Parameters
    ----------
    K : ndarray (n, n)
    copy : bool, default=True
        If False and ``K`` is a float64 ndarray, centre it in place (no extra
        n x n array is allocated).

    Returns
    -------
    Kc : ndarray (n, n)
    col_means : ndarray (n,)
        ``K 1 / n`` (needed to centre kernel vectors of new points).
    total_mean : float
        ``1^T K 1 / n^2``.
    """
    K = np.asarray(K, dtype=float)
    col_means = K.mean(axis=0)
    total_mean = float(col_means.mean())
    if copy:
        Kc = K - col_means[None, :]
    else:
        Kc = K
        Kc -= col_means[None, :]
    Kc -= col_means[:, None]
    Kc += total_mean
    return Kc, col_means, total_mean


def center_cross_gram(K_new, col_means, total_mean):
    """Centre kernel rows of new points: row i is ``H (kappa(x_i) - K1/n)``.

    ``K_new`` has shape (n_new, n_train).
    """
    K_new = np.asarray(K_new, dtype=float)
    return K_new - K_new.mean(axis=1, keepdims=True) - col_means[None, :] + total_mean


def fix_signs(V):
    """Flip columns so that each column's largest-magnitude entry is positive."""
    if V.size == 0:
        return V
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


# ARPACK was measured (table below) for k = 50; beyond ~100 components it falls behind.
_ARPACK_MAX_K = 100


def choose_solver(n, k, *, grow=False):
    """Solver for the k leading eigenpairs of an n x n kernel matrix ('auto').

    ``k=None``: the whole spectrum (``'dense'``). ``grow=True``: a leading part of
    unknown size, grown until it holds a given fraction of the spectrum: ``'dense'`` up
    to n = 2000 (one LAPACK call is cheaper than a few partial ones there), else
    ``'randomized'``. Otherwise ``'dense'`` for k >= n - 1, n <= 300 or k > n // 5,
    ``'arpack'`` up to 100 components (``_ARPACK_MAX_K``), and the block Krylov solver
    (``'randomized'``) for more. The timings behind these crossovers are in
    ``docs/results/notes/code_measurements.md``.
    """
    if grow:
        return "dense" if n <= _DENSE_ONE_THREAD_MAX_N else "randomized"
    if k is None or k >= n - 1:
        return "dense"
    if n <= 300 or k > n // 5:
        return "dense"
    if k <= _ARPACK_MAX_K:
        return "arpack"
    # Many components: ARPACK's restarted Lanczos slows down badly (k = 256, n = 3000 took
    # minutes), while the block Krylov solver took 4.9 s CPU against 12.5 s for dense eigh.
    return "randomized"


# ARPACK runs on one BLAS thread below this order: its products are memory-bound
# matrix-vector products, and a multi-threaded OpenBLAS busy-waits on shared cores.
_ARPACK_MAX_N = 3500

# Dense eigendecompositions up to this order run on one BLAS thread: they gain little from
# threads, and a multi-threaded OpenBLAS busy-waits badly on shared cores (measured: a
# 1000 x 1000 ``eigh`` 10-30x slower with 2 threads than with 1 on a loaded 2-core machine).
_DENSE_ONE_THREAD_MAX_N = 2000


def _centered_matmat(K, center):
    if not center:
        return lambda V: K @ V

    def matmat(V):
        HV = V - V.mean(axis=0)
        KV = K @ HV
        KV -= KV.mean(axis=0)
        return KV

    return matmat


def top_eigh(K, n_components=None, *, solver="auto", random_state=None, tol=0.0, center=False,
             magnitude=None, check_finite=True):
    """Top eigenpairs of a symmetric matrix.

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric matrix (a kernel matrix). Never modified.
    n_components : int or None
        Number of leading eigenpairs; ``None`` for all.
    solver : {'auto', 'dense', 'arpack', 'randomized'}
        A name of :data:`EIGENSOLVERS`, or ``'auto'``: ``'dense'`` for n <= 300 or
        ``n_components > n/5``, ``'arpack'`` for up to 100 components, else the block Krylov
        solver ``'randomized'`` (see :func:`choose_solver` for the measurements behind these
        thresholds).
    random_state : int, RandomState or None
        Seeds the partial solvers' starting vectors.
    tol : float
        Convergence tolerance of the partial solvers. ``'arpack'``: ARPACK's
        relative tolerance (0 = machine precision). ``'randomized'``: relative
        Ritz-residual tolerance ``||K v - lambda v|| <= tol * lambda_max``
        (0 = the default ``1e-10``).
    center : bool, default=False
        Work on ``H K H`` (double centring) instead of K. The partial solvers do
        this implicitly, without an n x n copy.
    magnitude : float, optional
        The size of the entries whose rounding errors K carries (default ``max|K|``;
        for a matrix centred by the caller, ``max`` of the uncentred one): a partial
        solver treats an operator at that rounding level as zero.
    check_finite : bool, default=True
        Check that K is finite (one pass over it). False only for a matrix the caller has
        checked already (e.g. a kernel matrix it centred itself, see
        :func:`kpm.spectral.eigen_basis`).

    Returns
    -------
    eigenvalues : ndarray (k,), decreasing
    eigenvectors : ndarray (n, k)
    """
    K = _check_square(K, check_finite=check_bool(check_finite, "check_finite"))
    n = K.shape[0]
    k = n if n_components is None else check_int(n_components, "n_components", minimum=1, maximum=n)
    solver = check_option(solver, "solver", SOLVERS)
    tol = check_real(tol, "tol", low=0.0)
    center = check_bool(center, "center")
    if solver == "auto":
        solver = choose_solver(n, None if n_components is None else k)
    if solver == "dense" or k >= n - 1:
        A = center_gram(K)[0] if center else K
        return _finish(*dense_eigh(A, None, n, k))
    matmat = _centered_matmat(K, center)
    # |trace| / n <= ||K||_2: a large trace proves the operator nonzero without the probe
    pairs = _zero_operator_eigh(matmat, K, k, magnitude=magnitude,
                                trace=None if center else float(np.trace(K)))
    if pairs is not None:
        return pairs
    A = None if center else K  # ARPACK's matrix-vector products read one triangle of it
    return _finish(*EIGENSOLVERS[solver](A, matmat, n, k, random_state=random_state, tol=tol))


def operator_eigh(matmat, n, k, *, solver="randomized", random_state=None, tol=0.0):
    """Top k eigenpairs of a symmetric operator known by its products ``matmat(V) = A V``.

    The matrix-free entry of :data:`EIGENSOLVERS` (a backend that never forms ``A``,
    e.g. one computing kernel values block by block, plugs in here): ``solver`` is a
    partial solver (``'arpack'`` or ``'randomized'``; ``'auto'`` is ``'randomized'``,
    whose block products stream the operator the fewest times).

    Returns
    -------
    eigenvalues : ndarray (k,), decreasing
    eigenvectors : ndarray (n, k)
    """
    n = check_int(n, "n", minimum=1)
    k = check_int(k, "k", minimum=1, maximum=n)
    solver = check_option(solver, "solver", SOLVERS)
    tol = check_real(tol, "tol", low=0.0)
    if not callable(matmat):
        raise ValueError(f"matmat must be a callable V -> A @ V, got {type(matmat).__name__}")
    if solver == "dense":
        raise ValueError("solver='dense' needs the matrix: an operator takes 'arpack' or 'randomized'")
    if solver == "auto":
        solver = "randomized"
    return _finish(*EIGENSOLVERS[solver](None, matmat, n, k, random_state=random_state, tol=tol))


def _finish(w, V):
    """Decreasing order and the sign convention of :func:`fix_signs`."""
    order = np.argsort(w)[::-1]
    return w[order], fix_signs(V[:, order])


def dense_eigh(A, matmat, n, k, *, random_state=None, tol=0.0):
    """The top k eigenpairs of the symmetric matrix ``A`` by LAPACK (increasing order).

    ``matmat``, ``random_state`` and ``tol`` are not used (the registry's common
    signature). Orders up to 2000 run on one BLAS thread (see ``_DENSE_ONE_THREAD_MAX_N``).
    """
    if A is None:
        raise ValueError("the dense eigensolver needs the matrix, not only its products")
    with _one_thread() if A.shape[0] <= _DENSE_ONE_THREAD_MAX_N else contextlib.nullcontext():
        return _dense_eigh(A, k)


def arpack_eigh(A, matmat, n, k, *, random_state=None, tol=0.0):
    """The top k eigenpairs of a symmetric operator by ARPACK (implicitly restarted Lanczos).

    ``tol``: ARPACK's relative tolerance (0 = machine precision). With the symmetric
    matrix ``A`` (float64, contiguous) of order n >= 1000 the matrix-vector products are
    BLAS ``dsymv``, which reads one triangle of ``A``: half the memory traffic of
    ``A @ v``. Below, ``A @ v``, whose rounding small orders keep (measurements:
    ``docs/results/notes/code_measurements.md``).
    """
    v0 = check_random_state(random_state).uniform(-1, 1, n)
    matvec = _symmetric_matvec(A) if n >= _SYMV_MIN_N else None
    if matvec is None and A is not None:
        matvec = A.dot
    if matvec is None:
        def matvec(v):
            return matmat(v.reshape(-1, 1)).ravel()
    op = LinearOperator((n, n), matvec=matvec, matmat=matmat, dtype=float)
    with _one_thread() if n < _ARPACK_MAX_N else contextlib.nullcontext():
        return eigsh(op, k=k, which="LA", v0=v0, tol=tol)


# ARPACK's products use dsymv from this order on (see arpack_eigh)
_SYMV_MIN_N = 1000


def _symmetric_matvec(A):
    """``v -> A v`` by BLAS ``dsymv`` (one triangle of the symmetric ``A``), or None when
    ``A`` is None or not a contiguous float64 matrix."""
    if A is None or A.dtype != np.float64 or A.ndim != 2:
        return None
    if A.flags.c_contiguous:
        At = A.T  # Fortran-ordered view, no copy: the same symmetric matrix
    elif A.flags.f_contiguous:
        At = A
    else:
        return None
    symv = linalg.blas.dsymv
    return lambda v: symv(1.0, At, v, lower=1)


def randomized_eigh(A, matmat, n, k, *, random_state=None, tol=0.0):
    """The top k eigenpairs of a symmetric PSD operator by :func:`block_krylov_eigh`.

    Uses the products ``matmat`` only (``A`` is not used); ``tol``: relative
    Ritz-residual tolerance (0 = the default ``1e-10``).
    """
    w, V, _ = block_krylov_eigh(
        matmat, n, k, rtol=tol if tol > 0 else 1e-10, random_state=random_state
    )
    return w, V


def matrix_free_eigh(A, matmat, n, k, *, random_state=None, tol=0.0):
    """The top k eigenpairs of a symmetric PSD operator by :func:`subspace_eigh`.

    Uses the products ``matmat`` only (``A`` is not used). When ``matmat`` is a
    :class:`kpm.spectral.operator.KernelOperator` (the kernel matrix evaluated block by
    block, never formed), its float32 products and its Nyström starting block are used;
    for any other operator the iteration starts from a Gaussian block in float64. ``tol``:
    relative Ritz-residual tolerance (0 = the default ``1e-10``).
    """
    w, V, _ = subspace_eigh(matmat, n, k, rtol=tol if tol > 0 else 1e-10,
                            random_state=random_state, **operator_hints(matmat, k, random_state))
    return w, V


def operator_hints(matmat, k, random_state):
    """``fast_matmat``, ``start`` and ``block_size`` for :func:`subspace_eigh` from an
    operator that offers them (``fast_matmat`` and ``start_block`` attributes), else
    nothing."""
    hints = {}
    fast = getattr(matmat, "fast_matmat", None)
    if callable(fast):
        hints["fast_matmat"] = fast
    start_block = getattr(matmat, "start_block", None)
    if callable(start_block):
        hints["start"] = start_block(k, random_state)
        hints["block_size"] = hints["start"].shape[1]
    return hints


#: The eigensolvers, name -> function ``(A, matmat, n, k, *, random_state, tol) ->
#: (eigenvalues, eigenvectors)`` (``A`` the matrix or None, ``matmat`` its products
#: ``V -> A V``): the one registry behind every ``eigen_solver`` parameter; ``'auto'``
#: is resolved by :func:`choose_solver`. A new backend (e.g. a GPU Lanczos) is one
#: function and one entry here.
EIGENSOLVERS = {"dense": dense_eigh, "arpack": arpack_eigh, "randomized": randomized_eigh,
                "matrix-free": matrix_free_eigh}

#: Names accepted by every ``eigen_solver`` parameter.
SOLVERS = ("auto", *EIGENSOLVERS)


# Above order _SUBSET_KEPT_MAX_N, LAPACK's subset drivers are used for at most
# n / _SUBSET_MAX_SHARE eigenpairs; at and below it, for any k < n (_dense_eigh)
_SUBSET_MAX_SHARE = 5
_SUBSET_KEPT_MAX_N = 300


def _dense_eigh(A, k):
    """The top k eigenpairs of a symmetric A by LAPACK (increasing order).

    LAPACK's subset driver ``syevr`` fails on exactly repeated eigenvalues (e.g. the
    centred identity ``I - 11^T/n``, whose spectrum is 1 n - 1 times): scipy then
    raises "Internal Error" or silently returns no eigenpairs. ``syevx`` is used then, and
    where it too returns fewer than k (seen on a nearly identity centred Gaussian kernel
    matrix: eigenvalues 1 + 5e-5, then 1 repeated), the whole spectrum.

    The subset drivers pay for each eigenvector they return; above ``n / 5`` of them the
    whole spectrum is cheaper (one BLAS thread, wall seconds, k = 512: n = 700, 0.26 subset
    against 0.07 whole; n = 1300, 0.66 against 0.40; n = 2000, 1.54 against 1.54; k = 256,
    n = 1000: 0.27 against 0.22; k = 128: 0.17 against 0.23), so it is computed then, by
    divide and conquer (``evd``): the whole-spectrum ``evr`` (MRRR) slows down on the large
    clusters of eigenvalues that duplicated samples make (the centred kernel matrix of
    Rätsch's image training set at the width 0.89: 2.5 s ``evr``, 0.6 s ``evd``, 0.78 s the
    subset). The whole spectrum (k = n) goes the same way, for the same reason. Orders up to ``_SUBSET_KEPT_MAX_N`` keep the subset driver (and
    ``evr`` for the whole spectrum): a few hundredths of a second either way, and the bases
    computed there (e.g. the papers' KPM on the small Rätsch sets, D <= 60) keep their
    rounding.
    """
    n = A.shape[0]
    if k == n and n <= _SUBSET_KEPT_MAX_N:
        return linalg.eigh(A, check_finite=False)
    if k > n // _SUBSET_MAX_SHARE and n > _SUBSET_KEPT_MAX_N:
        w, V = linalg.eigh(A, check_finite=False, driver="evd")
        return w[n - k:], V[:, n - k:]
    for driver in ("evr", "evx"):
        try:
            w, V = linalg.eigh(A, subset_by_index=(n - k, n - 1), check_finite=False, driver=driver)
        except linalg.LinAlgError:
            continue
        if len(w) == k:
            return w, V
    w, V = linalg.eigh(A, check_finite=False)
    return w[n - k:], V[:, n - k:]


def _check_square(K, check_finite=True):
    """A finite square float64 matrix (not copied when it is one already)."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"top_eigh needs a non-empty square matrix, got shape {K.shape}")
    # max/min propagate NaN and inf without an n x n temporary
    if check_finite and not (np.isfinite(K.max()) and np.isfinite(K.min())):
        raise ValueError("top_eigh needs a finite matrix: it contains NaN or infinite values")
    return K


def _zero_operator_eigh(matmat, K, k, n_probe=2, magnitude=None, trace=None):
    """Eigenpairs of a numerically zero operator, or None if it is not one.

    A zero operator -- e.g. the centred kernel matrix of identical samples -- would hand
    ARPACK a zero starting residual ("starting vector is zero") and keep the block Krylov
    solver from ever meeting its relative residual test. It is recognised by a product
    with ``n_probe`` random unit vectors that is at the rounding level of products with K,
    ``||A Q||_F <= n^{3/2} eps max|K| ||Q||_F``; every vector is then an eigenvector to
    rounding, and Rayleigh-Ritz on a random k-dimensional subspace returns k of them. The
    probe has its own fixed seed, so the caller's random stream is left as it was. With
    ``trace``, the operator's trace, the probe is skipped when ``|trace| / n`` (a lower
    bound of ``||A||_2``) is above the rounding level: an O(n) proof that A is not zero.
    """
    n = K.shape[0]
    if magnitude is None:
        magnitude = max(abs(float(K.max())), abs(float(K.min())))
    bound = n**1.5 * np.finfo(float).eps * float(magnitude)
    if trace is not None and abs(trace) > n * bound:
        return None
    rs = np.random.default_rng(0)
    P = _random_orthonormal(rs, n, min(n_probe, k))
    if float(np.linalg.norm(matmat(P))) > bound * np.sqrt(P.shape[1]):
        return None
    Q = _random_orthonormal(rs, n, k)
    KQ = matmat(Q)
    w, S = linalg.eigh((Q.T @ KQ + KQ.T @ Q) / 2, check_finite=False)
    order = np.argsort(w)[::-1]
    return w[order], fix_signs((Q @ S)[:, order])


def _random_orthonormal(rs, n, k):
    with _one_thread():
        return linalg.qr(rs.standard_normal((n, k)), mode="economic", check_finite=False)[0]


def _one_thread():
    """Run small LAPACK calls (QR of a tall block, eigh of the projected matrix) on one thread
    (:func:`kpm.blas_threads.one_blas_thread`).

    They are too small to gain from threads, and a multi-threaded OpenBLAS busy-waits badly
    when the machine's cores are shared (measured: a 5000 x 60 QR 36x slower with 2 threads
    than with 1 on a loaded 2-core machine). The big products ``K @ V`` keep all threads.
    """
    return one_blas_thread()


def _orthonormalize_against(W, B, rs, *, passes=2):
    """Orthonormalise the block W against the orthonormal columns of B (CGS2 + QR).

    Returns ``(Q, C, R)`` with ``W = B C + Q R`` (to rounding) and ``Q`` orthonormal and
    orthogonal to ``B``. Rank deficiency of W is repaired with random directions (then R
    is not square-invertible, but the relation still holds with those columns of R = 0).
    """
    with _one_thread():
        return _orthonormalize_against_1t(W, B, rs, passes)


def _orthonormalize_against_1t(W, B, rs, passes):
    C = np.zeros((B.shape[1], W.shape[1]))
    W = W.copy()
    norm0 = np.linalg.norm(W, axis=0)
    for _ in range(passes):
        if B.shape[1]:
            Ci = B.T @ W
            W -= B @ Ci
            C += Ci
    Q, R = linalg.qr(W, mode="economic", check_finite=False)
    # Breakdown: directions of W already (numerically) inside span(B).
    d = np.abs(np.diag(R))
    scale = max(float(norm0.max()) if norm0.size else 0.0, np.finfo(float).tiny)
    bad = d <= 1e-12 * scale
    if np.any(bad):
        Z = rs.standard_normal((W.shape[0], int(bad.sum())))
        for _ in range(2):
            if B.shape[1]:
                Z -= B @ (B.T @ Z)
            good = Q[:, ~bad]
            Z -= good @ (good.T @ Z)
        Zq, _ = linalg.qr(Z, mode="economic", check_finite=False)
        Q[:, bad] = Zq
        R[bad, :] = 0.0
    return Q, C, R


def block_krylov_eigh(
    matmat,
    n,
    k,
    *,
    block_size=None,
    rtol=1e-10,
    max_basis=None,
    max_matmats=None,
    random_state=None,
):
    """Top-k eigenpairs of a symmetric PSD operator by restarted block Lanczos.

    Randomized block Krylov method (block Lanczos with full re-orthogonalisation
    by classical Gram-Schmidt applied twice, Rayleigh-Ritz on the whole basis,
    thick restart keeping the leading Ritz vectors when the basis is full). Only
    products ``matmat(V) = A @ V`` with blocks of vectors are used.

    Convergence is declared when every one of the k leading Ritz pairs has a
    residual ``||A v - theta v|| <= rtol * theta_1``; the cheap Lanczos estimate
    of the residuals is confirmed by explicit residuals before returning.

    Parameters
    ----------
    matmat : callable
        ``V (n, b) -> A @ V``.
    n : int
        Order of A.
    k : int
        Number of leading eigenpairs.
    block_size : int, optional
        Block size b (default ``ceil(k/3)`` clipped to [8, 64], at most n): small blocks
        beat ``b > k`` (the usual randomized-SVD choice), whose fewer products each cost
        much more (measurements: ``docs/results/notes/code_measurements.md``).
    rtol : float, default=1e-10
        Relative residual tolerance.
    max_basis : int, optional
        Largest basis before a thick restart (default ``max(24 b, 3 k + 8 b)``,
        limited to about 512 MiB and to n).
    max_matmats : int, optional
        Cap on the number of block products (default 300); a
        ``RuntimeError`` is raised when it is reached without convergence.
    random_state : int, RandomState or None
        Seeds the starting block.

    Returns
    -------
    eigenvalues : ndarray (k,), decreasing
    eigenvectors : ndarray (n, k)
    info : dict
        ``n_matmat`` (block products), ``n_restarts``, ``residuals`` (explicit,
        relative to the largest eigenvalue), ``basis_size``.
    """
    rs = check_random_state(random_state)
    n = check_int(n, "n", minimum=1)
    k = check_int(k, "k", minimum=1, maximum=n)
    rtol = check_real(rtol, "rtol", low=0.0, low_open=True)
    block_size = check_int(block_size, "block_size", minimum=1, allow_none=True)
    max_basis = check_int(max_basis, "max_basis", minimum=1, allow_none=True)
    max_matmats = check_int(max_matmats, "max_matmats", minimum=1, allow_none=True)
    b = block_size if block_size is not None else max(8, min(64, -(-k // 3)))
    b = max(1, min(b, n))
    if max_basis is None:
        mem_cap = max(2 * b, int(2**29 // (16 * n)))
        max_basis = min(n, max(24 * b, 3 * k + 8 * b), mem_cap)
    max_basis = max(int(max_basis), min(n, k + 2 * b))
    max_matmats = 300 if max_matmats is None else int(max_matmats)

    B = np.empty((n, max_basis), order="F")  # orthonormal basis (contiguous columns)
    AB = np.empty((n, max_basis), order="F")  # A @ B
    T = np.zeros((max_basis, max_basis))  # B^T A B
    m = 0

    with _one_thread():
        Q, _ = linalg.qr(rs.standard_normal((n, b)), mode="economic", check_finite=False)
    n_matmat = 0
    n_restarts = 0
    next_rr = 0
    r_prev = np.inf
    theta = S = None
    while True:
        AQ = matmat(Q)
        n_matmat += 1
        nb = Q.shape[1]
        B[:, m : m + nb] = Q
        AB[:, m : m + nb] = AQ
        # New block column of T (the Lanczos coefficients), via the next block.
        W_basis = B[:, : m + nb]
        Qn, C, R = _orthonormalize_against(AQ, W_basis, rs)
        T[: m + nb, m : m + nb] = C
        T[m : m + nb, : m + nb] = C.T
        m += nb
        # Rayleigh-Ritz only once the basis can hold the k pairs with some slack (or a
        # restart / the end needs it): earlier ones cannot pass the test.
        need_rr = (
            (m >= min(n, k + b) and n_matmat >= next_rr)
            or m >= n
            or m + Qn.shape[1] > max_basis
            or n_matmat >= max_matmats
        )
        if not need_rr:
            Q = Qn[:, : min(Qn.shape[1], n - m)]
            continue
        Tm = T[:m, :m]
        with _one_thread():
            theta, S = linalg.eigh((Tm + Tm.T) / 2, check_finite=False)
        theta, S = theta[::-1], S[:, ::-1]
        scale = max(abs(theta[0]), np.finfo(float).tiny)
        kk = min(k, m)
        # Lanczos residual estimate: A B s - theta B s = Qn R s_last.
        est = np.linalg.norm(R @ S[m - nb : m, :kk], axis=0) / scale
        converged = kk == k and np.all(est <= rtol)
        # Skip Rayleigh-Ritz steps that cannot converge yet: extrapolate the geometric
        # decay of the largest residual estimate (at most 3 steps ahead, so a wrong guess
        # costs little).
        r_now = float(np.max(est)) if est.size else np.inf
        if kk == k and np.isfinite(r_prev) and 0 < r_now < r_prev and r_now > rtol:
            steps = np.log(rtol / r_now) / np.log(r_now / r_prev)
            next_rr = n_matmat + int(min(3, max(1, np.floor(steps))))
        else:
            next_rr = n_matmat + 1
        r_prev = r_now if kk == k else np.inf
        if converged or m >= n:
            V = B[:, :m] @ S[:, :k]
            AV = AB[:, :m] @ S[:, :k]
            res = np.linalg.norm(AV - V * theta[:k], axis=0) / scale
            if np.all(res <= max(rtol, 1e-13)) or m >= n:
                info = {
                    "n_matmat": n_matmat,
                    "n_restarts": n_restarts,
                    "residuals": res,
                    "basis_size": m,
                }
                return theta[:k], V, info
        if n_matmat >= max_matmats:
            raise RuntimeError(
                f"block Krylov eigensolver did not converge in {max_matmats} block products "
                f"(largest relative residual {float(np.max(est)):.3g} > rtol={rtol:g})"
            )
        Q = Qn
        if m + Q.shape[1] > max_basis:
            # Thick restart: keep the leading Ritz vectors (and their images).
            keep = min(m, max(k + b, max_basis - 2 * b))
            Sk = S[:, :keep]
            B[:, :keep] = B[:, :m] @ Sk
            AB[:, :keep] = AB[:, :m] @ Sk
            T[:] = 0.0
            T[np.arange(keep), np.arange(keep)] = theta[:keep]
            m = keep
            n_restarts += 1
            # Q is orthogonal to the old basis, hence to the kept Ritz vectors; re-orthogonalise
            # once more for safety against rounding.
            Q, _, _ = _orthonormalize_against(Q, B[:, :m], rs)
        Q = Q[:, : min(Q.shape[1], n - m)]
        if Q.shape[1] == 0:
            # The basis spans everything: the Rayleigh-Ritz above was exact.
            V = B[:, :m] @ S[:, :k]
            return theta[:k], V, {"n_matmat": n_matmat, "n_restarts": n_restarts,
                                  "residuals": np.zeros(k), "basis_size": m}


def subspace_eigh(matmat, n, k, *, block_size=None, start=None, fast_matmat=None, rtol=1e-10,
                  max_iter=100, random_state=None):
    """Top-k eigenpairs of a symmetric PSD operator by subspace iteration, in two precisions.

    Subspace iteration with Rayleigh-Ritz (Saad 2011, "Numerical Methods for Large
    Eigenvalue Problems", Algorithm 5.3): ``Q <- orth(A Q)`` on a block of
    ``p = block_size`` vectors; the k leading Ritz pairs converge at the rate
    ``lambda_{p+1} / lambda_k`` per product, so a block that reaches past a gap of the
    spectrum converges in a few products, each of which streams the operator once (the
    cost of a kernel operator evaluated block by block is mostly the kernel values, shared
    by all p columns).

    With ``fast_matmat`` (a lower-precision product, e.g. float32 kernel values) the
    iteration runs on it until its residuals reach ``rtol`` or stop decreasing (the
    rounding level of the fast product); then the k leading Ritz vectors are
    *certified* with one exact product: Rayleigh-Ritz on them and their explicit residuals
    ``||A v - theta v|| / theta_1``, all in float64. If the certificate fails the iteration
    goes on with exact products. The returned pairs always passed the exact test.

    Parameters
    ----------
    matmat : callable
        ``V (n, b) -> A @ V`` in float64 (the exact product).
    n, k : int
        Order of A and number of leading eigenpairs.
    block_size : int, optional
        p (default ``max(2 k, k + 10)``, or the width of ``start``; at most n).
    start : ndarray (n, b), optional
        Starting block (e.g. a Nyström approximation of the leading eigenvectors); padded
        with Gaussian columns up to p.
    fast_matmat : callable, optional
        A cheaper, less accurate ``V -> A @ V`` for the first iterations.
    rtol : float, default=1e-10
        Relative residual tolerance: ``||A v_j - theta_j v_j|| <= rtol * theta_1``.
    max_iter : int, default=100
        Cap on the products of each precision; a ``RuntimeError`` when it is reached.
    random_state : int, RandomState or None

    Returns
    -------
    eigenvalues : ndarray (k,), decreasing
    eigenvectors : ndarray (n, k)
    info : dict
        ``n_fast``, ``n_exact`` (products of each kind), ``residuals`` (the certificate:
        explicit, float64, relative to the largest eigenvalue), ``history`` (largest
        residual after each product, with its kind), ``block_size``, ``rr_s`` (seconds of
        orthogonalisation and Rayleigh-Ritz).
    """
    rs = check_random_state(random_state)
    n = check_int(n, "n", minimum=1)
    k = check_int(k, "k", minimum=1, maximum=n)
    rtol = check_real(rtol, "rtol", low=0.0, low_open=True)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    default_p = max(2 * k, k + 10) if start is None else np.shape(start)[1]
    p = min(n, max(k, check_int(block_size, "block_size", minimum=1, allow_none=True) or default_p))
    Q = _start_block(start, n, p, rs)
    info = {"n_fast": 0, "n_exact": 0, "history": [], "block_size": p, "rr_s": 0.0}
    stage = "fast" if fast_matmat is not None else "exact"
    r_prev, target = np.inf, rtol
    while True:
        W = np.asarray((fast_matmat if stage == "fast" else matmat)(Q), dtype=float)
        info["n_" + stage] += 1
        theta, X, res, Q, dt = _ritz_step(Q, W, k, rs)
        info["rr_s"] += dt
        r = float(res.max())
        info["history"].append((stage, r))
        if stage == "exact" and r <= rtol:
            info["residuals"] = res
            return theta, X, info
        stalled = r > 0.5 * r_prev or info["n_fast"] >= max_iter
        if stage == "fast" and (r <= target or stalled):
            found = _certify(matmat, X, rtol, rs, info)
            if found is not None:
                return found
            # fast residuals below rtol but exact ones above: the fast product's rounding
            # shows; go on with it (a certification costs a fraction of an exact iteration)
            # until it stalls, then iterate with exact products
            stage = "exact" if stalled else "fast"
            target = min(target, r) / 10
        r_prev = r
        if info["n_exact"] >= max_iter:
            raise RuntimeError(
                f"subspace iteration did not converge in {max_iter} exact products (largest "
                f"relative Ritz residual {r:.3g} > rtol={rtol:g})"
            )


def _start_block(start, n, p, rs):
    """An orthonormal (n, p) block: ``start`` padded with Gaussian columns."""
    W = rs.standard_normal((n, p))
    if start is not None:
        start = np.asarray(start, dtype=float)
        if start.ndim != 2 or start.shape[0] != n or not np.all(np.isfinite(start)):
            raise ValueError(f"start must be a finite (n, b) block with n = {n}, got shape {start.shape}")
        b = min(p, start.shape[1])
        W[:, :b] = start[:, :b]
    return _orthonormalize_against(W, np.zeros((n, 0)), rs)[0]


def _ritz_step(Q, W, k, rs):
    """Rayleigh-Ritz of ``W = A Q`` on the orthonormal Q: the k leading Ritz values and
    vectors, their relative residuals, the next block ``orth(W)`` and the seconds spent."""
    t0 = time.perf_counter()
    with _one_thread():
        H = Q.T @ W
        theta, S = linalg.eigh((H + H.T) / 2, check_finite=False)
        theta, S = theta[::-1], S[:, ::-1]
        X = Q @ S[:, :k]
        AX = W @ S[:, :k]
        scale = max(abs(float(theta[0])), np.finfo(float).tiny)
        res = np.linalg.norm(AX - X * theta[:k], axis=0) / scale
    Q_next = _orthonormalize_against(W, np.zeros((Q.shape[0], 0)), rs)[0]
    return theta[:k], X, res, Q_next, time.perf_counter() - t0


def _certify(matmat, X, rtol, rs, info):
    """One exact product on the k Ritz vectors X: Rayleigh-Ritz and the explicit
    residuals in float64. The pairs, eigenvectors and info if they pass ``rtol``, else None."""
    Xq = _orthonormalize_against(X, np.zeros((X.shape[0], 0)), rs)[0]
    W = np.asarray(matmat(Xq), dtype=float)
    info["n_exact"] += 1
    theta, V, res, _, dt = _ritz_step(Xq, W, X.shape[1], rs)
    info["rr_s"] += dt
    info["history"].append(("certify", float(res.max())))
    if float(res.max()) > rtol:
        return None
    info["residuals"] = res
    return theta, V, info
