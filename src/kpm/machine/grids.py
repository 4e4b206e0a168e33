"""The D and C grids of a KPM fit, for every basis.

The Kernel Projection Machine (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005)
solves its problem in the nested subspaces ``S_D`` for the D of a grid and chooses among
them; :func:`dim_grid` is that grid from the estimator's ``n_components_grid`` and the
largest usable D (the rank of the basis, or ``max_components``), whatever the basis -- the
eigenvectors of the kernel matrix or Nyström eigenfunctions. The C grid of the SVM in
``S_D`` is :data:`kpm.machine.formulation.DEFAULT_C`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["auto_dim_grid", "dim_grid", "SVM_DIM_DENSE", "SVM_DIM_RATIO", "SVM_MAX_COMPONENTS",
           "SVM_LOO_WHOLE_SPECTRUM_N", "SVM_EIGEN_TOL", "LP_DIM_DENSE", "LP_DIM_STEPS"]

#: D grid of ``formulation='svm'`` by default: every D up to :data:`SVM_DIM_DENSE`, then
#: steps of 25 %.
SVM_DIM_RATIO = 1.25
#: ... and the largest D up to which the default SVM grid holds every D.
SVM_DIM_DENSE = 5
#: ``formulation='svm'`` with ``cv_basis='ritz'``: the largest D by default (with
#: ``max_components=None``), so that the basis is a partial eigendecomposition; a D chosen at
#: this edge warns. With the leave-one-out error, the D at which stage one of
#: ``c_selection='two-stage'`` compares the C values, at most.
SVM_MAX_COMPONENTS = 512
#: ... except with the leave-one-out error (no fold bases) up to this n, where LAPACK computes
#: the whole spectrum anyway (more than n / 5 eigenvectors, :func:`kpm.spectral.top_eigh`):
#: the D grid then reaches the rank, and stage one of ``c_selection='two-stage'`` compares C at
#: ``D = min(rank, SVM_MAX_COMPONENTS)``.
SVM_LOO_WHOLE_SPECTRUM_N = 5 * SVM_MAX_COMPONENTS
#: ... and the block Krylov solver's relative residual for that partial basis (with
#: ``eigen_solver='auto'``, which takes LAPACK's subset driver below n = 2560 and the block
#: Krylov solver above, :func:`kpm.spectral.eigensolvers.choose_solver`): the SVM needs the
#: leading subspace, not eigenvalues to the last bit.
SVM_EIGEN_TOL = 1e-6
#: The papers' LP on the Nyström basis by default (constraint generation costs a few LPs per
#: D): every D up to :data:`LP_DIM_DENSE`, then :data:`LP_DIM_STEPS` log-spaced values.
LP_DIM_DENSE = 10
LP_DIM_STEPS = 20


def auto_dim_grid(max_components: int, dense: int = 20, ratio: float = 1.1) -> np.ndarray:
    """Every D up to ``dense``, then geometric steps of ``ratio`` up to ``max_components``."""
    dims = list(range(1, min(dense, max_components) + 1))
    while dims[-1] < max_components:
        dims.append(min(max_components, max(dims[-1] + 1, int(round(dims[-1] * ratio)))))
    return np.asarray(dims)


def _log_grid(largest):
    """Every D up to :data:`LP_DIM_DENSE`, then about :data:`LP_DIM_STEPS` log-spaced values."""
    g = list(range(1, min(LP_DIM_DENSE, largest) + 1))
    if largest > LP_DIM_DENSE:
        g += list(np.unique(np.round(np.geomspace(LP_DIM_DENSE, largest, LP_DIM_STEPS)).astype(int)))
    return np.unique(np.asarray(g, dtype=int))


def dim_grid(n_components_grid, largest, formulation, *, every_lp_dim=True, what=None):
    """The D grid of a fit.

    Parameters
    ----------
    n_components_grid : None, 'auto' or sequence of int
        The estimator's parameter. None: for the SVM every D up to :data:`SVM_DIM_DENSE`,
        then steps of :data:`SVM_DIM_RATIO` up to ``largest`` (so that ``largest``, the
        kernel SVM at the rank, is a candidate); for the papers' LP every D (``every_lp_dim``,
        the papers' protocol) or, where each D costs a constraint generation, every D up to
        :data:`LP_DIM_DENSE` and :data:`LP_DIM_STEPS` log-spaced values. ``'auto'``: every D
        up to 20, then steps of 10 % (:func:`auto_dim_grid`). A sequence: its values up to
        ``largest``.
    largest : int
        The largest usable D.
    formulation : {'svm', 'paper'}
    every_lp_dim : bool, default=True
        The papers' LP's default grid: every D, or the log-spaced one.
    what : str, optional
        What bounds ``largest``, for the error on a grid beyond it.
    """
    g = n_components_grid
    if g is None:
        if formulation == "svm":
            return auto_dim_grid(largest, dense=SVM_DIM_DENSE, ratio=SVM_DIM_RATIO)
        return np.arange(1, largest + 1) if every_lp_dim else _log_grid(largest)
    if isinstance(g, str):
        return auto_dim_grid(largest)
    grid = np.unique(np.asarray(g, dtype=np.int64))
    grid = grid[grid <= largest]
    if len(grid) == 0:
        raise ValueError(what or f"no dimension of n_components_grid is <= the largest usable D = {largest}")
    return grid
