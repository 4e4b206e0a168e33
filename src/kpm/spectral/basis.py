"""The spectral basis of a kernel matrix: one eigendecomposition pipeline for every estimator.

Kernel PCA (Schölkopf, Smola & Müller 1998, "Nonlinear component analysis as a kernel
eigenvalue problem", Neural Computation 10(5)) diagonalises the (centred) kernel matrix,
``K~ = U Lambda U^T`` with ``K~ = H K H``, ``H = I - 11^T/n`` (their Section 2 and
their appendix on centring in feature space). Every estimator of the package that works on kernel principal directions
-- the explicit feature map :class:`kpm.KernelProjection`, the Kernel Projection
Machine, the kernel PCA denoiser, the relevant dimension and kernel PCR -- starts from
the same object, an :class:`EigenBasis`, built by :func:`eigen_basis` from a kernel
matrix, by :func:`operator_basis` from the products of a kernel operator (the entry of
a matrix-free backend), or by :func:`nystroem_basis` from landmarks (Williams & Seeger
2001, "Using the Nyström method to speed up kernel machines", NIPS 13).

Coordinates and features
------------------------
With the eigenpairs ``(lambda_j, u_j)`` above the numerical rank cut:

* the coordinates of the training points are ``Y^T = U Lambda^{1/2}`` (so that
  ``Y^T Y = K~``), whitened ``U``;
* a new point with kernel row ``kappa(x) = (k(x_1, x), ..., k(x_n, x))`` has the
  features ``y_j(x) = u_j^T k~(x) / sqrt(lambda_j)`` (Schölkopf et al. 1998, Section 2:
  the projection onto the j-th unit principal direction), whitened
  ``u_j^T k~(x) / lambda_j``, with the centred row
  ``k~(x) = H (kappa(x) - K 1/n)`` (their appendix; uncentred: ``k~ = kappa``). On a
  training point the features are its coordinates.

The rank tolerance
------------------
An eigenvalue counts as zero -- it is never inverted, and it is outside the numerical
rank -- when it is at most

    ``max(RANK_RTOL * lambda_1, n * eps * max|K|)``,   ``RANK_RTOL = 1e-10``.

The second term is the rounding level of an eigendecomposition of an n x n matrix with
entries up to ``max|K|`` (LAPACK's backward error bound, up to a modest constant): below
it an "eigenvalue" is rounding noise whatever the relative tolerance, which matters for a
centred matrix whose spectrum is small against its entries (nearly identical samples).
The first term is the one that acts in practice. ``1e-10`` keeps every direction whose
features ``u^T k~ / sqrt(lambda)`` keep a relative rounding error of roughly
``eps / sqrt(1e-10) ~ 2e-11`` (:doc:`/user_guide/feature_map` tells what the common cut
changed in the published results). The same rule cuts the landmark matrix of a Nyström
approximation (:func:`landmark_map`). It is the only rank tolerance of the package:
:func:`numerical_rank` applies it, and an estimator's ``rank_tol`` parameter
(:class:`kpm.KernelProjection`, :class:`kpm.KernelPCAL1`) only replaces ``RANK_RTOL``.

Eigensolvers
------------
``eigen_solver`` parameters take the names of the registry :data:`EIGENSOLVERS`
(``'dense'``, ``'arpack'``, ``'randomized'``, ``'matrix-free'``; the backends live in
:mod:`kpm.spectral.eigensolvers`, and a new one is one function and one entry there) or
``'auto'``, resolved by :func:`resolve_solver` with the measured crossovers of
:func:`kpm.spectral.eigensolvers.choose_solver`, and with the memory budget: a caller that
can evaluate its kernel block by block (``matrix_free=True``) gets ``'matrix-free'`` when
the dense n x n matrix would exceed ``kpm.get_config()['max_kernel_bytes']``
(:func:`dense_matrix_fits`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from kpm.config import get_config
from kpm.spectral.eigensolvers import (
    EIGENSOLVERS,
    SOLVERS,
    center_gram,
    choose_solver,
    fix_signs,
    operator_eigh,
    top_eigh,
)
from kpm.validation import (
    Callable,
    check_bool,
    check_int,
    check_kernel_matrix,
    check_option,
    check_param,
    check_psd_spectrum,
    check_real,
)

__all__ = [
    "RANK_RTOL",
    "EIGEN_SOLVERS",
    "EIGENSOLVERS",
    "EigenBasis",
    "NystroemMap",
    "eigen_basis",
    "operator_basis",
    "nystroem_basis",
    "numerical_rank",
    "rounding_level",
    "landmark_map",
    "resolve_solver",
    "dense_matrix_fits",
    "check_eigen_solver",
]

#: Relative rank tolerance: eigenvalues ``<= RANK_RTOL * lambda_1`` count as zero.
RANK_RTOL = 1e-10

#: The names every ``eigen_solver`` parameter accepts (``'auto'`` and the registry's).
EIGEN_SOLVERS = SOLVERS


def rounding_level(n, magnitude):
    """``n * eps * magnitude``: eigenvalues of an n x n matrix with entries up to
    ``magnitude`` below this are rounding errors."""
    return float(n) * np.finfo(float).eps * float(magnitude)


def numerical_rank(eigenvalues, *, floor=0.0, rtol=RANK_RTOL) -> int:
    r"""Number of eigenvalues (decreasing) above :math:`\max(\text{rtol}\cdot\lambda_1, \text{floor})`.

    Parameters
    ----------
    eigenvalues : array-like, decreasing
    floor : float, default=0
        Absolute level below which an eigenvalue is rounding noise, usually
        :func:`rounding_level` of the decomposed matrix. A largest eigenvalue at or
        below it (or at or below 0) gives rank 0.
    rtol : float, default=RANK_RTOL

    Returns
    -------
    int
    """
    w = np.asarray(eigenvalues, dtype=float)
    if w.size == 0 or not w[0] > max(float(floor), 0.0):
        return 0
    return int(np.count_nonzero(w > max(rtol * float(w[0]), float(floor))))


def landmark_map(K_zz, *, rtol=RANK_RTOL, name=None):
    r"""The landmark feature map of a Nyström approximation (Williams & Seeger 2001).

    With :math:`K(Z, Z) = W S W^\top` cut at its numerical rank r (:func:`numerical_rank`
    with the rounding level of :math:`K(Z, Z)`), :math:`M = W_r S_r^{-1/2}`: the landmark
    features of a point x are :math:`f(x) = M^\top \kappa_Z(x)`, and
    :math:`f(x)^\top f(x') = \kappa_Z(x)^\top K(Z, Z)^+ \kappa_Z(x')` is the Nyström
    approximation of :math:`k(x, x')`.

    Parameters
    ----------
    K_zz : ndarray (m, m)
        Kernel matrix of the landmarks, finite and symmetric.
    rtol : float, default=RANK_RTOL
        Relative rank tolerance (module docstring).
    name : str, optional
        For a user-supplied kernel, the name of ``K_zz`` in errors: it must then be
        positive semi-definite (checked on its spectrum).

    Returns
    -------
    M : ndarray (m, r)

    Raises
    ------
    ValueError
        When the rank is 0 (every landmark has a zero feature vector).
    """
    K_zz = np.asarray(K_zz, dtype=float)
    if K_zz.ndim != 2 or K_zz.shape[0] != K_zz.shape[1] or K_zz.shape[0] == 0:
        raise ValueError(f"K_zz must be a non-empty square matrix, got shape {K_zz.shape}")
    if not np.all(np.isfinite(K_zz)):
        raise ValueError("the landmark kernel matrix contains NaN or infinite values")
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, high_open=True)
    m = K_zz.shape[0]
    magnitude = float(max(K_zz.max(), -K_zz.min()))
    s, W = top_eigh(K_zz, None, solver="dense")
    if name is not None:
        check_psd_spectrum(s, name)
    r = numerical_rank(s, floor=rounding_level(m, magnitude), rtol=rtol)
    if r == 0:
        raise ValueError(
            f"the landmark kernel matrix is numerically zero (largest eigenvalue {s[0]:.3g}): "
            "every landmark has a zero feature vector"
        )
    return W[:, :r] / np.sqrt(s[:r])


def check_eigen_solver(solver, name="eigen_solver"):
    """Validate an ``eigen_solver`` parameter (a name of :data:`EIGEN_SOLVERS`)."""
    return check_option(solver, name, EIGEN_SOLVERS)


def dense_matrix_fits(n):
    """Whether an n x n float64 kernel matrix fits ``kpm.get_config()['max_kernel_bytes']``."""
    n = check_int(n, "n", minimum=0)
    return 8 * n * n <= get_config()["max_kernel_bytes"]


def resolve_solver(solver, n, n_components=None, *, grow=False, matrix_free=False):
    """The eigensolver that computes ``n_components`` leading eigenpairs of an n x n matrix.

    ``'auto'`` follows :func:`kpm.spectral.eigensolvers.choose_solver` (``'dense'`` for the whole
    spectrum or small matrices, ARPACK for a few pairs of a matrix that fits in the
    cache, the block Krylov solver beyond); ``grow=True`` when the number of pairs is
    not known in advance. With ``matrix_free=True`` (the caller can evaluate its kernel
    block by block, :func:`kpm.spectral.operator.matrix_free_basis`), ``'auto'`` is
    ``'matrix-free'`` when the dense matrix does not fit the memory budget
    (:func:`dense_matrix_fits`), whatever the number of pairs. A partial solver asked for
    the whole spectrum is ``'dense'``.
    """
    solver = check_eigen_solver(solver)
    matrix_free = check_bool(matrix_free, "matrix_free")
    if solver == "auto":
        if matrix_free and not dense_matrix_fits(n):
            return "matrix-free"
        return choose_solver(n, None if grow else n_components, grow=grow)
    if n_components is None and not grow:
        return "dense"
    return solver


@dataclass(frozen=True)
class NystroemMap:
    r"""How a Nyström basis maps a new point's landmark kernel row :math:`\kappa_Z(x)`.

    :math:`f(x) = M^\top \kappa_Z(x)` are the landmark features (:math:`M = W S^{-1/2}` from
    :math:`K(Z, Z) = W S W^\top` cut at the rank), centred by ``feature_mean`` and rotated by
    ``rotation`` onto the eigenvectors of the features' scatter matrix.
    """

    landmark_indices: np.ndarray | None
    landmark_map: np.ndarray
    feature_mean: np.ndarray
    rotation: np.ndarray


@dataclass(frozen=True)
class EigenBasis:
    r"""Leading eigenpairs of a (centred) kernel matrix and the feature map they define.

    Attributes
    ----------
    eigenvalues : ndarray (k,)
        The computed eigenvalues, decreasing (all n of them when ``complete``).
    eigenvectors : ndarray (n, k)
        Matching unit eigenvectors (training coordinates up to scale; largest-magnitude
        entry positive).
    rank : int
        Eigenvalues above the rank cut (module docstring). When the basis is not
        ``complete`` only the computed ones are counted: a lower bound of the rank.
    col_means : ndarray (n,) or None
        :math:`K \mathbf 1 / n` of a centred basis (None: uncentred).
    total_mean : float or None
        :math:`\mathbf 1^\top K \mathbf 1 / n^2` of a centred basis.
    complete : bool
        The whole spectrum was computed.
    floor : float
        The rounding level used in the rank cut.
    nystroem : NystroemMap or None
        For a Nyström basis (:func:`nystroem_basis`): the kernel rows of new points are
        taken against the landmarks and mapped by it.
    trace : float or None
        The trace of the decomposed matrix (the sum of all its eigenvalues, the total
        variance of the training points in feature space), where known: the dense and
        matrix-free bases have it; for a Nyström basis it is the trace of the (centred)
        approximation. None for :func:`operator_basis`.
    """

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    rank: int
    col_means: np.ndarray | None = None
    total_mean: float | None = None
    complete: bool = True
    floor: float = 0.0
    nystroem: NystroemMap | None = None
    trace: float | None = None

    def truncate(self, n_components=None):
        """The basis restricted to its ``n_components`` leading pairs (default: the rank)."""
        m = self._n(n_components)
        ny = self.nystroem
        if ny is not None:
            ny = replace(ny, rotation=ny.rotation[:, :m])
        return replace(self, eigenvalues=self.eigenvalues[:m], eigenvectors=self.eigenvectors[:, :m],
                       rank=min(self.rank, m), nystroem=ny)

    def coordinates(self, n_components=None, *, whiten=False):
        r"""Coordinates of the training points: :math:`U \Lambda^{1/2}` (whitened: :math:`U`), (n, m)."""
        m = self._n(n_components)
        U = self.eigenvectors[:, :m]
        return U if whiten else U * np.sqrt(self.eigenvalues[:m])

    def features(self, K_new, n_components=None, *, whiten=False):
        r"""Features of new points from their kernel rows.

        Parameters
        ----------
        K_new : ndarray (n_new, n)
            Kernel values of the new points against the training points (against the
            landmarks for a Nyström basis).
        n_components : int, optional
            Number of leading features (default: the rank).
        whiten : bool, default=False
            :math:`u^\top \tilde k / \lambda` (unit scatter on the training data) instead of
            :math:`u^\top \tilde k / \sqrt\lambda`.

        Returns
        -------
        ndarray (n_new, n_components)
        """
        m = self._n(n_components)
        check_bool(whiten, "whiten")
        K_new = np.asarray(K_new, dtype=float)
        ny = self.nystroem
        width = self.eigenvectors.shape[0] if ny is None else ny.landmark_map.shape[0]
        if K_new.ndim != 2 or K_new.shape[1] != width:
            raise ValueError(
                f"K_new must hold kernel rows against the {width} "
                f"{'landmarks' if ny is not None else 'training points'}, got shape {K_new.shape}"
            )
        w = self.eigenvalues[:m]
        if ny is not None:
            V = ny.rotation[:, :m]
            Y = K_new @ (ny.landmark_map @ V) - ny.feature_mean @ V
            return Y / np.sqrt(w) if whiten else Y
        U = self.eigenvectors[:, :m]
        Y = K_new @ U
        if self.col_means is not None:
            # the centred rows H (kappa(x) - K 1/n) (kpm.spectral.eigensolvers.center_cross_gram) times
            # U, without the centred (n_new, n) copy: the centring terms are rank one
            u_sum = U.sum(axis=0)
            Y -= self.col_means @ U
            Y -= np.outer(K_new.mean(axis=1) - self.total_mean, u_sum)
        return Y / (w if whiten else np.sqrt(w))

    def _n(self, n_components):
        if n_components is None:
            return self.rank
        return check_int(n_components, "n_components", minimum=0, maximum=self.rank)


def eigen_basis(K, n_components=None, *, center=False, solver="auto", random_state=None,
                rtol=RANK_RTOL, copy=True, name=None, eigen_tol=0.0):
    r"""The :class:`EigenBasis` of a kernel matrix (Schölkopf, Smola & Müller 1998).

    Parameters
    ----------
    K : ndarray (n, n)
        Symmetric kernel matrix, uncentred.
    n_components : int or None, default=None
        Leading eigenpairs to compute; None: all (the rank is then exact).
    center : bool, default=False
        Decompose the centred ``H K H`` (kernel PCA), formed explicitly (see ``copy``);
        the centring statistics are kept for the features of new points.
    solver : str, default='auto'
        A name of :data:`EIGEN_SOLVERS` (see :func:`resolve_solver`).
    random_state : int, RandomState or None
        Seeds the partial solvers.
    rtol : float, default=RANK_RTOL
        Relative rank tolerance (module docstring).
    copy : bool, default=True
        False: a centred decomposition centres ``K`` in place (a float64 ndarray the
        caller owns and no longer needs), so that no second n x n array is allocated.
    name : str, optional
        For a user-supplied matrix (precomputed or a callable kernel's), its name in
        errors: the decomposed matrix must then be positive semi-definite (checked on
        the whole spectrum, or by a Cholesky factorisation before a partial one).
    eigen_tol : float, default=0.0
        Convergence tolerance of a partial solver (:func:`top_eigh`'s ``tol``: for ARPACK
        the relative residual :math:`\|A v - \theta v\| \le \epsilon |\theta|`, :math:`\epsilon` = ``eigen_tol``, 0 = machine
        precision); unused by the dense solver.

    Returns
    -------
    EigenBasis
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"the kernel matrix must be a non-empty square matrix, got shape {K.shape}")
    kmax, kmin = float(K.max()), float(K.min())
    if not (np.isfinite(kmax) and np.isfinite(kmin)):
        raise ValueError("the kernel matrix contains NaN or infinite values")
    n = K.shape[0]
    center = check_bool(center, "center")
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, high_open=True)
    k = n if n_components is None else check_int(n_components, "n_components", minimum=1, maximum=n)
    solver = resolve_solver(solver, n, None if k == n else k)
    magnitude = max(kmax, -kmin)
    col_means = total_mean = None
    A = K
    if center:
        A, col_means, total_mean = center_gram(K, copy=copy)
    scale = magnitude if center else None
    if name is not None and k < n:
        check_kernel_matrix(A, name, scale=scale)
    # K was checked finite above; its centred entries are at most 4 max|K|
    w, U = top_eigh(A, None if k == n else k, solver=solver, random_state=random_state, tol=eigen_tol,
                    magnitude=magnitude, check_finite=4.0 * magnitude > np.finfo(float).max)
    if name is not None and k == n:
        check_psd_spectrum(w, name, scale=scale)
    floor = rounding_level(n, magnitude)
    return EigenBasis(w, U, numerical_rank(w, floor=floor, rtol=rtol), col_means, total_mean,
                      complete=len(w) == n, floor=floor, trace=float(np.trace(A)))


def operator_basis(matmat, n, n_components, *, center=False, solver="auto", random_state=None,
                   rtol=RANK_RTOL, magnitude=None):
    """The :class:`EigenBasis` of a kernel matrix known only by its products ``K V``.

    The entry of a matrix-free backend (kernel values computed block by block, on a GPU
    or out of core): only ``matmat(V) = K @ V`` for (n, b) blocks is used.

    Parameters
    ----------
    matmat : callable
        ``V (n, b) -> K @ V``.
    n : int
        Order of K.
    n_components : int
        Leading eigenpairs to compute.
    center : bool, default=False
        Decompose ``H K H``, by ``H (K (H V))``; the column means are ``matmat(1)/n``.
    solver : {'auto', 'arpack', 'randomized'}, default='auto'
        A partial solver of the registry (``'auto'``: ``'randomized'``).
    random_state : int, RandomState or None
    rtol : float, default=RANK_RTOL
    magnitude : float, optional
        ``max|K|`` for the rounding level of the rank cut (default: the largest computed
        eigenvalue, an upper bound of ``max|K|`` for an uncentred PSD K; pass it for a
        centred one).

    Returns
    -------
    EigenBasis
    """
    n = check_int(n, "n", minimum=1)
    k = check_int(n_components, "n_components", minimum=1, maximum=n)
    center = check_bool(center, "center")
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, high_open=True)
    solver = check_eigen_solver(solver)
    if solver == "dense":
        raise ValueError("operator_basis needs a partial solver: 'auto', 'arpack' or 'randomized'")
    check_param(matmat, "matmat", [Callable()])
    col_means = total_mean = None
    if center:
        col_means = np.asarray(matmat(np.ones((n, 1))), dtype=float).ravel() / n
        total_mean = float(col_means.mean())

    def centred(V):
        KV = matmat(V - V.mean(axis=0))
        return KV - KV.mean(axis=0)

    op = centred if center else matmat
    w, U = operator_eigh(op, n, k, solver=solver, random_state=random_state)
    if magnitude is None:
        magnitude = max(float(w[0]), 0.0)
    floor = rounding_level(n, magnitude)
    return EigenBasis(w, U, numerical_rank(w, floor=floor, rtol=rtol), col_means, total_mean,
                      complete=False, floor=floor)


def nystroem_basis(K_zz, K_xz, *, center=True, rtol=RANK_RTOL, landmark_indices=None, name=None):
    r"""The Nyström :class:`EigenBasis` from landmarks (Williams & Seeger 2001).

    The feature vectors are projected onto the span of the landmarks' ones, by the
    landmark features :math:`f(x) = M^\top \kappa_Z(x)` of :func:`landmark_map`; kernel PCA
    of the n points' (centred) features :math:`F` is then exact for the Nyström
    approximation of the kernel, through the r x r scatter matrix :math:`F^\top F` (memory
    O(n m)). With every point a
    landmark it is the exact basis.

    Parameters
    ----------
    K_zz : ndarray (m, m)
        Kernel matrix of the landmarks.
    K_xz : ndarray (n, m)
        Kernel rows of the n training points against the landmarks.
    center : bool, default=True
        Centre the features (kernel PCA of the centred approximate kernel).
    rtol : float, default=RANK_RTOL
        Relative rank tolerance, for ``K(Z, Z)`` and for the scatter matrix.
    landmark_indices : ndarray of int, optional
        Kept in the map, for the caller.
    name : str, optional
        For a user-supplied kernel, the name of ``K_zz`` in errors: it must then be
        positive semi-definite (checked on its spectrum).

    Returns
    -------
    EigenBasis
        ``eigenvectors`` are the n training points' unit coordinates; ``features``
        takes kernel rows against the landmarks.
    """
    K_zz = np.asarray(K_zz, dtype=float)
    K_xz = np.asarray(K_xz, dtype=float)
    if K_zz.ndim != 2 or K_zz.shape[0] != K_zz.shape[1] or K_zz.shape[0] == 0:
        raise ValueError(f"K_zz must be a non-empty square matrix, got shape {K_zz.shape}")
    m = K_zz.shape[0]
    if K_xz.ndim != 2 or K_xz.shape[1] != m or K_xz.shape[0] == 0:
        raise ValueError(f"K_xz must have shape (n, {m}) (kernel rows against the landmarks), got {K_xz.shape}")
    if not (np.all(np.isfinite(K_zz)) and np.all(np.isfinite(K_xz))):
        raise ValueError("the kernel matrices contain NaN or infinite values")
    center = check_bool(center, "center")
    rtol = check_real(rtol, "rtol", low=0.0, high=1.0, high_open=True)
    n = K_xz.shape[0]
    magnitude = float(max(K_zz.max(), -K_zz.min()))
    M = landmark_map(K_zz, rtol=rtol, name=name)
    r_m = M.shape[1]
    F = K_xz @ M
    fbar = F.mean(axis=0) if center else np.zeros(r_m)
    F -= fbar
    C = F.T @ F
    lam, V = top_eigh((C + C.T) / 2, None, solver="dense")
    floor = rounding_level(n, magnitude)
    rank = numerical_rank(lam, floor=floor, rtol=rtol)
    V = fix_signs(V[:, :rank])
    lam = lam[:rank]
    U = (F @ V) / np.sqrt(lam)
    # sign convention of the training coordinates (largest-magnitude entry positive)
    signs = np.sign(U[np.argmax(np.abs(U), axis=0), np.arange(rank)]) if rank else np.ones(0)
    signs[signs == 0] = 1.0
    ny = NystroemMap(landmark_indices, M, fbar, V * signs)
    # the trace of the approximation F F^T is that of the scatter matrix F^T F
    return EigenBasis(lam, U * signs, rank, complete=False, floor=floor, nystroem=ny,
                      trace=float(np.trace(C)))
