"""The eigensolvers of :class:`kpm.KernelProjection`: which one runs, and its fit.

:func:`choose_solver` resolves ``eigen_solver`` (``'auto'`` included) for n training points;
a :class:`SpectralFitter`, built from the estimator's settings, runs one of the three fits and
returns a :class:`SpectralFit`, from which the estimator sets its fitted attributes:

* :meth:`SpectralFitter.dense` -- the (centred) n x n kernel matrix, formed or given
  precomputed, eigendecomposed by a solver of :func:`kpm.spectral.eigen_basis` (Kwak 2013,
  Algorithm 1);
* :meth:`SpectralFitter.matrix_free` -- leading eigenpairs without the matrix
  (:func:`kpm.spectral.operator.matrix_free_basis`);
* :meth:`SpectralFitter.nystroem` -- the exact map of the data projected onto the span of
  the landmarks' feature vectors (:func:`kpm.spectral.nystroem_basis`; Williams & Seeger 2001).

The number of components kept by each fit is :func:`kpm.decomposition.components.count_components`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from kpm.config import get_config
from kpm.decomposition.components import count_components, grow_partial
from kpm.kernels import check_kernel_budget
from kpm.spectral.basis import EIGEN_SOLVERS, EigenBasis, eigen_basis, nystroem_basis, resolve_solver
from kpm.spectral.landmarks import select_landmarks
from kpm.spectral.operator import DEFAULT_EIGEN_TOL, matrix_free_basis
from kpm.validation import check_kernel_matrix, warn_if_degenerate_kernel

__all__ = ["PROJECTION_SOLVERS", "DEFAULT_LANDMARKS", "SpectralFit", "SpectralFitter", "choose_solver",
           "landmark_kernel"]

#: The values of ``KernelProjection(eigen_solver=...)`` besides ``'auto'``.
PROJECTION_SOLVERS = (*EIGEN_SOLVERS, "nystroem")
#: The number of landmarks of the Nyström variant when ``n_landmarks`` is not given.
DEFAULT_LANDMARKS = 1000


def can_go_matrix_free(kernel):
    """Whether ``kernel`` can be evaluated block by block by the matrix-free solver (a
    built-in kernel on feature vectors other than the indefinite sigmoid)."""
    return not (kernel.is_precomputed or kernel.raw_input or kernel.user_defined or kernel.name == "sigmoid")


def choose_solver(eigen_solver, n_landmarks, n_components, n, kernel):
    """The solver that runs (``eigen_solver='auto'`` resolved) for n training points and the
    validated ``n_components`` (an int, a float fraction or None); errors for the
    combinations that cannot run."""
    if eigen_solver == "nystroem" or (eigen_solver == "auto" and n_landmarks is not None):
        return "nystroem"
    nc = n_components
    fraction = isinstance(nc, float)
    if eigen_solver == "auto":
        solver = resolve_solver("auto", n, None if fraction else nc, grow=fraction,
                                matrix_free=can_go_matrix_free(kernel))
        if solver == "matrix-free" and nc is None:  # over the budget: this raises
            check_kernel_budget(n, n, f"the {n} x {n} kernel matrix",
                                "n_components=None asks for its whole spectrum: give an integer or float "
                                "n_components (the matrix-free solver then computes the leading eigenpairs "
                                "without the matrix) or n_landmarks (Nyström).")
        return solver
    if eigen_solver == "matrix-free" and nc is None:
        raise ValueError(
            "eigen_solver='matrix-free' computes leading eigenpairs: give an integer or float "
            "n_components, got None"
        )
    if nc is None and eigen_solver in ("arpack", "randomized"):
        raise ValueError(
            f"eigen_solver={eigen_solver!r} computes a few leading eigenpairs: give an "
            "integer or float n_components, or use eigen_solver='dense' for the full rank"
        )
    return eigen_solver


def landmark_kernel(kernel, X, X_fit, idx):
    """Kernel values of the rows of X against the landmarks ``X_fit[idx]`` (n, m), in blocks;
    for a precomputed kernel, the columns ``idx`` of X."""
    if kernel.is_precomputed:
        return X[:, idx]
    Z = X_fit[idx]
    out = np.empty((X.shape[0], len(idx)))
    for rows, block in kernel.blocks(X, Z):
        out[rows] = block
    return out


@dataclass
class SpectralFit:
    """The outcome of a fit of :class:`SpectralFitter`: the estimator's fitted attributes.

    Attributes
    ----------
    basis : kpm.spectral.basis.EigenBasis
        Truncated to the ``n_components`` kept.
    rank : int
        The rank found (``rank_``).
    n_components : int
        The number of components kept (``n_components_``).
    dual_coef : ndarray
        ``dual_coef_``.
    coordinates : ndarray (n, n_components)
        The training coordinates.
    diag_c : ndarray (n,) or None
        The diagonal of the decomposed (centred) kernel matrix, for the residual coordinate
        (None on the Nyström variant without ``residual``).
    col_means, mean : ndarray (n,) and float, or None
        ``kernel_col_means_`` and ``kernel_mean_`` (None on the Nyström variant).
    ritz_residuals, solver_info : ndarray and dict, or None
        The matrix-free solver's certificate and record.
    landmark_indices, nystroem_offset : ndarray, or None
        The Nyström variant's landmarks and offset.
    """

    basis: EigenBasis
    rank: int
    n_components: int
    dual_coef: np.ndarray
    coordinates: np.ndarray
    diag_c: np.ndarray | None
    col_means: np.ndarray | None = None
    mean: float | None = None
    ritz_residuals: np.ndarray | None = None
    solver_info: dict | None = None
    landmark_indices: np.ndarray | None = None
    nystroem_offset: np.ndarray | None = None


class SpectralFitter:
    """The eigendecomposition of :meth:`kpm.KernelProjection.fit`, with its settings.

    Parameters
    ----------
    kernel : kpm.kernels.Kernel
        The fitted kernel.
    n_components : int, float or None
        Validated (the relevant dimension resolved to an int).
    rde : bool
        Whether ``n_components`` is the relevant dimension (then capped at the rank).
    centered, rank_tol, eigen_tol, random_state, n_landmarks, landmarks, residual
        The estimator's parameters of the same names.
    """

    def __init__(self, kernel, n_components, *, rde, centered, rank_tol, eigen_tol, random_state,
                 n_landmarks, landmarks, residual):
        self.kernel = kernel
        self.n_components = n_components
        self.rde = rde
        self.centered = centered
        self.rank_tol = rank_tol
        self.eigen_tol = DEFAULT_EIGEN_TOL if eigen_tol is None else eigen_tol
        self.random_state = random_state
        self.n_landmarks = n_landmarks
        self.landmarks = landmarks
        self.residual = residual

    def _count(self, basis, matrix):
        """``(rank, number of components kept)`` of ``basis`` (``matrix`` names it in errors)."""
        return count_components(basis, self.n_components, centered=self.centered, rde=self.rde, matrix=matrix)

    def _kernel_matrix_name(self):
        return (f"{'centred ' if self.centered else ''}kernel matrix (eigenvalues above "
                f"rank_tol={self.rank_tol:g} times the largest)")

    def _centring(self, basis, diag, n):
        """``(diag_c, col_means, mean)``: the decomposed matrix's diagonal and the centring terms."""
        if not self.centered:
            return diag, np.zeros(n), 0.0
        return diag - 2.0 * basis.col_means + basis.total_mean, basis.col_means, basis.total_mean

    def _basis(self, K, n_components, solver, rs, name, copy):
        """:func:`kpm.spectral.eigen_basis` of K with these settings."""
        return eigen_basis(K, n_components, center=self.centered, solver=solver, random_state=rs,
                           rtol=self.rank_tol, copy=copy, name=name, eigen_tol=self.eigen_tol)

    def dense(self, X, solver, what, where):
        """Fit on the kernel matrix (formed, or given precomputed as X) with ``solver``;
        ``what`` names a user-supplied matrix in errors, ``where`` the model in warnings."""
        precomputed = self.kernel.is_precomputed
        n = X.shape[0]
        K = X if precomputed else self.kernel(X)
        if what is not None and not precomputed:
            K = check_kernel_matrix(K, f"the {what}", psd=False)
        warn_if_degenerate_kernel(K, where, stacklevel=5)
        # diagonal of the decomposed matrix (for float n_components and the residual), from
        # the column means that centring computes anyway (one pass less over K)
        diag = np.diag(K).copy()
        nc = self.n_components
        fraction = isinstance(nc, float)
        # the matrix decomposed, in errors about a user-supplied one
        name = None if what is None else f"the {'centred ' if self.centered else ''}{what}"
        rs = check_random_state(self.random_state)
        if fraction and solver != "dense":
            # trace(H K H) = trace(K) - 1^T K 1 / n
            mass = float(diag.sum()) - (n * float(K.mean()) if self.centered else 0.0)
            basis = grow_partial(lambda k: self._basis(K, k, solver, rs, name, copy=True), nc, mass, n)
        else:
            # K is the estimator's own array here (kernel_ or check_kernel_matrix made it):
            # centred in place
            basis = self._basis(K, None if fraction else nc, solver, rs, name, copy=False)
        diag_c, col_means, mean = self._centring(basis, diag, n)
        del K
        rank, k = self._count(basis, self._kernel_matrix_name())
        basis = basis.truncate(k)
        return SpectralFit(basis=basis, rank=rank, n_components=k, dual_coef=basis.eigenvectors / np.sqrt(basis.eigenvalues),
                           coordinates=basis.coordinates(), diag_c=diag_c, col_means=col_means, mean=mean)

    def matrix_free(self, X, where):
        """Fit by :func:`kpm.spectral.operator.matrix_free_basis` (no n x n matrix)."""
        if self.kernel.is_precomputed:
            raise ValueError(
                "eigen_solver='matrix-free' evaluates the kernel on feature vectors; a precomputed "
                "kernel matrix is already formed: use eigen_solver='dense', 'arpack' or 'randomized'"
            )
        n = X.shape[0]
        rs = check_random_state(self.random_state)
        # the degenerate-kernel diagnosis on a sample of at most 1000 points (and within the
        # memory budget)
        size = min(n, 1000, max(2, int(np.sqrt(get_config()["max_kernel_bytes"] / 8))))
        sample = X if size == n else X[np.sort(rs.choice(n, size, replace=False))]
        warn_if_degenerate_kernel(self.kernel(sample), f"{where} (a sample of the kernel matrix)",
                                  stacklevel=5)
        nc = self.n_components

        def solve(k):
            basis, info = matrix_free_basis(self.kernel, X, k, center=self.centered,
                                            eigen_tol=self.eigen_tol, rtol=self.rank_tol,
                                            random_state=rs)
            solve.info = info
            return basis

        basis = grow_partial(solve, nc, None, n) if isinstance(nc, float) else solve(nc)
        info = solve.info
        diag_c, col_means, mean = self._centring(basis, self.kernel.diag(X), n)
        rank, k = self._count(basis, self._kernel_matrix_name())
        basis = basis.truncate(k)
        return SpectralFit(basis=basis, rank=rank, n_components=k, dual_coef=basis.eigenvectors / np.sqrt(basis.eigenvalues),
                           coordinates=basis.coordinates(), diag_c=diag_c, col_means=col_means, mean=mean,
                           ritz_residuals=info["residuals"][:k], solver_info=info)

    def nystroem(self, X, what, where):
        """Fit the Nyström variant: landmarks chosen by the ``landmarks`` rule, then the exact
        map of the features projected onto their span."""
        precomputed = self.kernel.is_precomputed
        n = X.shape[0]
        m = min(n, self.n_landmarks if self.n_landmarks is not None else DEFAULT_LANDMARKS)
        rs = check_random_state(self.random_state)
        idx = select_landmarks(X, m, self.landmarks, rs, kernel=self.kernel)
        if precomputed:
            Kmm = X[np.ix_(idx, idx)]
        else:
            Kmm = self.kernel(X[idx])
            if what is not None:
                Kmm = check_kernel_matrix(Kmm, f"the landmark block of the {what}", psd=False)
        warn_if_degenerate_kernel(Kmm, f"{where} (landmark kernel matrix)", stacklevel=5)
        Kxz = landmark_kernel(self.kernel, X, X, idx)
        basis = nystroem_basis(Kmm, Kxz, center=self.centered, rtol=self.rank_tol, landmark_indices=idx,
                               name=None if what is None else f"the landmark block of the {what}")
        rank, k = self._count(basis, f"Nyström approximation of the kernel matrix ({m} landmarks)")
        basis = basis.truncate(k)
        ny = basis.nystroem
        M, fbar, V = ny.landmark_map, ny.feature_mean, ny.rotation
        diag_c = None
        if self.residual:
            Fx = Kxz @ M  # uncentred landmark features
            F = Fx - fbar
            dk = self.kernel.diag(X)
            diag_c = np.maximum(dk - np.einsum("ij,ij->i", Fx, Fx), 0.0) + np.einsum(
                "ij,ij->i", F, F
            )
        return SpectralFit(basis=basis, rank=rank, n_components=k, dual_coef=M @ V, coordinates=basis.coordinates(),
                           diag_c=diag_c, landmark_indices=idx, nystroem_offset=fbar @ V)
