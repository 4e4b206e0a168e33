"""How many coordinates :class:`kpm.KernelProjection` keeps (``n_components``).

* :func:`relevant_dimension` -- ``n_components='rde'``: the relevant dimension of labelled
  data (Braun, Buhmann & Müller 2008), by :class:`kpm.RelevantDimension`;
* :func:`count_components` -- the rank of a computed eigen basis and the number of its
  leading eigenpairs that ``n_components`` keeps (all, an int, or a fraction of the variance);
* :func:`grow_partial` -- partial eigenpairs in growing numbers until they hold a fraction of
  the variance (a float ``n_components`` with an iterative solver).

References
----------
M. L. Braun, J. M. Buhmann, K.-R. Müller, "On relevant dimensions in kernel feature spaces",
JMLR 9, 2008.
"""

from __future__ import annotations

import numpy as np

__all__ = ["count_components", "grow_partial", "relevant_dimension"]


def relevant_dimension(kernel, X, y, random_state):
    """``n_components='rde'``: the relevant dimension of (X, y), the ``n_components_`` of
    :class:`kpm.RelevantDimension` with ``kernel``; an error without labels."""
    # imported on use: only n_components='rde' needs kpm.relevance
    from kpm.relevance.dimension import RelevantDimension

    if y is None:
        raise ValueError(
            "n_components='rde' is the relevant dimension of labelled data: fit(X, y) needs y"
        )
    rd = RelevantDimension(kernel=kernel, random_state=random_state)
    return int(rd.fit(X, y).n_components_)


def count_components(basis, n_components, *, centered, rde, matrix):
    """``(rank, D)``: the basis's rank (eigenvalues above ``rank_tol`` times the largest and
    above the rounding level) and the number D of components kept by ``n_components``.

    None: the rank; an int: itself, at most the rank (the relevant dimension, ``rde``, is
    capped at the rank; another int above it is an error); a float: the fewest leading
    eigenvalues whose shares of the basis's trace sum to at least that fraction, at most the
    rank. ``matrix`` names the matrix in errors; a rank of 0 is an error.
    """
    w = basis.eigenvalues
    rank = basis.rank
    if rank == 0:
        w_max = float(w[0]) if w.size else 0.0
        what = (
            "all training samples are identical in feature space (kernel PCA needs at least "
            "two distinct ones)"
            if centered
            else "every training sample has a zero feature vector"
        )
        raise ValueError(
            f"the {'centred ' if centered else ''}kernel matrix has rank 0: its largest "
            f"eigenvalue {w_max:.3g} is at the rounding level {basis.floor:.3g} of its entries, "
            f"so {what}"
        )
    nc = n_components
    if nc is None:
        return rank, rank
    if isinstance(nc, int):
        if nc > rank:
            if rde:
                return rank, rank
            raise ValueError(f"n_components={nc} is larger than the rank {rank} of the {matrix}")
        return rank, nc
    # the same arithmetic as explained_variance_ratio_: its cumulative sum reaches nc at D
    csum = np.cumsum(np.clip(w[:rank] / basis.trace, 0.0, None))
    return rank, int(min(np.searchsorted(csum, nc, side="left") + 1, rank))


def grow_partial(solve, frac, mass, n):
    """Partial eigenpairs (``solve(k)``, a basis) until they hold ``frac`` of the trace
    (float n_components); ``mass``: the trace, default the basis's."""
    k = min(n - 2, 32)
    while True:
        basis = solve(k)
        w = basis.eigenvalues
        total = basis.trace if mass is None else mass
        if np.sum(np.clip(w, 0, None)) >= frac * total or k >= n - 2 or basis.rank < len(w):
            return basis
        k = min(n - 2, 2 * k)
