"""The spectral basis: one eigendecomposition pipeline under every estimator.

* :mod:`kpm.spectral.basis` -- :class:`EigenBasis` of a kernel matrix (eigenvalues,
  eigenvectors, the rank cut :data:`RANK_RTOL`, features of new points) from a dense
  matrix, an operator or a Nyström approximation;
* :mod:`kpm.spectral.eigensolvers` -- the dense, ARPACK, block Krylov and matrix-free
  eigensolvers behind it, and centring in feature space;
* :mod:`kpm.spectral.operator` -- the kernel matrix as an operator evaluated block by
  block (matrix-free kernel PCA);
* :mod:`kpm.spectral.landmarks` -- landmark rules of Nyström approximations (uniform,
  k-means++, randomly pivoted Cholesky);
* :mod:`kpm.spectral.smoothers` -- closed-form leave-one-out errors of the linear smoothers
  of an eigenbasis (kernel ridge regression, kernel PCR).
"""

from kpm.spectral.basis import (
    EIGEN_SOLVERS,
    RANK_RTOL,
    EigenBasis,
    NystroemMap,
    check_eigen_solver,
    dense_matrix_fits,
    eigen_basis,
    landmark_map,
    nystroem_basis,
    numerical_rank,
    operator_basis,
    resolve_solver,
    rounding_level,
)
from kpm.spectral.landmarks import LANDMARK_RULES, nystroem_trace_error, rpcholesky, select_landmarks
from kpm.spectral.operator import KernelOperator, matrix_free_basis
from kpm.spectral.smoothers import loo_residuals, ridge_loo_errors

__all__ = [
    "RANK_RTOL",
    "EIGEN_SOLVERS",
    "EigenBasis",
    "NystroemMap",
    "eigen_basis",
    "operator_basis",
    "nystroem_basis",
    "landmark_map",
    "numerical_rank",
    "rounding_level",
    "resolve_solver",
    "dense_matrix_fits",
    "check_eigen_solver",
    "KernelOperator",
    "matrix_free_basis",
    "LANDMARK_RULES",
    "select_landmarks",
    "rpcholesky",
    "nystroem_trace_error",
    "loo_residuals",
    "ridge_loo_errors",
]
