"""Row sources of the constraint generation: where the points of a hinge LP live.

The constraint generation (:mod:`kpm.hinge.constraint_generation`) touches all n points only
through a *row source*: the violation search of each round (the hinge sum and the violated
points outside the working set), the draw of the initial working set (:meth:`InMemoryRows.take`),
the next columns of the working points (:meth:`InMemoryRows.columns`) and, with aggregation,
the passes of :mod:`kpm.hinge.aggregation`. :class:`InMemoryRows` holds a feature matrix in
memory; :class:`kpm.machine.dask_data.DaskRowSource` has the same methods for features that
stay on Dask workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.hinge.aggregation import compensated_sums, line_derivatives

__all__ = ["Violations", "InMemoryRows", "hinge_objective", "top_violations"]


def hinge_objective(F, y, coef, intercept, rows=None):
    """``sum_i max(0, 1 - y_i (F_i[:D] . coef + intercept))`` (D = len(coef))."""
    D = len(coef)
    f = F[:, :D] @ coef + intercept
    m = y * f
    if rows is not None:
        m = m[rows]
    return float(np.maximum(0.0, 1.0 - m).sum())


@dataclass
class Violations:
    """One violation search of the constraint generation (:meth:`InMemoryRows.search`).

    ``objective``: the hinge sum over all the problem's points; ``n_violated``: points
    outside the working set with ``1 - y_i f(x_i) > tol``; ``index``: the global indices
    of those added (all of them, or the ``max_add`` most violated), increasing; ``viol``
    their ``1 - y_i f(x_i)``; ``features`` and ``labels`` their rows (the first D columns,
    those of the search) and labels; ``aggregated`` tells which of them were in A (none
    without a :class:`Reference`; their ``viol`` is then ``y_i f(x_i) - 1``), and with its
    ``sums``, ``sums`` and ``n_aggregated`` are A's ``sum_i y_i [1, F_i[:D]]`` (as the two
    rows of :func:`compensated_sums`) and size, and ``aggregated_weight`` the sum of its
    points' weights (its size without weights). With weights the hinge sum and A's sums
    weigh each point by its weight.
    """

    objective: float
    n_violated: int
    index: np.ndarray
    viol: np.ndarray
    features: np.ndarray
    labels: np.ndarray
    aggregated: np.ndarray
    sums: np.ndarray | None = None
    n_aggregated: int = 0
    aggregated_weight: float | None = None

    def __post_init__(self):
        if self.aggregated_weight is None:
            self.aggregated_weight = float(self.n_aggregated)


def top_violations(viol, max_add):
    """Positions of the ``max_add`` largest ``viol`` (all when ``max_add`` is None), increasing.

    Ties at the threshold go to the lowest positions, so that the top of a concatenation of
    parts (in order) equals the top of the parts' tops: the choice does not depend on how
    the points are split into chunks."""
    if max_add is None or len(viol) <= max_add:
        return np.arange(len(viol))
    t = np.partition(viol, len(viol) - max_add)[len(viol) - max_add]  # the max_add-th largest
    above = np.flatnonzero(viol > t)
    ties = np.flatnonzero(viol == t)[: max_add - len(above)]
    return np.sort(np.concatenate([above, ties]))


class InMemoryRows:
    """The points of a hinge LP held in memory: a row source of the constraint generation.

    Parameters
    ----------
    F : ndarray (n_samples, n_columns)
    y : ndarray (n_samples,) in {-1, +1}
    rows : ndarray of int, optional
        The problem's points (a cross-validation fold), increasing; default all.
    weights : ndarray (n_samples,) of positive floats, optional
        The weight of each point's hinge term (every row of ``F``; default 1): the hinge
        sums and the aggregated sums weigh the points, the counts (violated points, the
        band) do not.
    """

    def __init__(self, F, y, rows=None, weights=None):
        self.F, self.y = F, y
        self.rows = np.arange(F.shape[0]) if rows is None else rows
        self.weights = weights
        self.shape = F.shape
        self.n_rows = len(self.rows)

    def total_weight(self):
        """The sum of the weights of the problem's points (their number without weights)."""
        return float(self.n_rows) if self.weights is None else float(self.weights[self.rows].sum())

    def weights_of(self, index):
        """The weights of the points of global indices ``index`` (None without weights)."""
        return None if self.weights is None else self.weights[index]

    def take(self, positions, n_cols):
        """``(index, features, labels)`` of the problem's points at ``positions`` (increasing):
        the first ``n_cols`` columns of their rows."""
        idx = self.rows[positions]
        return idx, self.F[idx, :n_cols], self.y[idx]

    def columns(self, index, start, stop):
        """``F[index, start:stop]`` (``index``: global indices, any order)."""
        return self.F[index, start:stop]

    def search(self, coef, intercept, working, tol, max_add=None, ref=None, rows_up_to=None) -> Violations:
        """The hinge sum of ``f = F[:, :D] coef + intercept`` over the problem's points and
        its violated points outside ``working`` (global indices).

        Without ``ref`` a point outside ``working`` is violated when ``1 - y_i f(x_i) > tol``.
        With a :class:`Reference`, that holds for the points of S; a point of A is violated
        when ``y_i f(x_i) - 1 > tol`` (its hinge term is no longer the linear one the
        aggregated LP counts). ``viol`` is then the size of that discrepancy.
        With ``rows_up_to``, the found points' features are left out (zero columns) when there
        are more than ``rows_up_to`` of them.
        """
        D = len(coef)
        viol = self._restrict(1.0 - self.y * self._values(coef, intercept))  # hinge before clipping
        w = self._point_weights()
        objective = float(np.maximum(viol, 0.0).sum() if w is None else np.maximum(viol, 0.0) @ w)
        outside = self._outside(working)
        agg = np.zeros(len(viol), dtype=bool) if ref is None else outside & self._aggregated(ref)
        amount = np.where(agg, -viol, viol)
        cand = np.flatnonzero(outside & (amount > tol))
        n_violated = len(cand)
        cand = cand[top_violations(amount[cand], max_add)]
        idx = self.rows[cand]
        with_rows = rows_up_to is None or len(idx) <= rows_up_to
        found = Violations(objective, n_violated, idx, amount[cand], self.F[idx, :D if with_rows else 0], self.y[idx],
                           aggregated=agg[cand])
        if ref is not None and ref.sums:
            A = self.rows[agg]
            y_A = self.y[A][:, None]
            if self.weights is not None:
                y_A = y_A * self.weights[A][:, None]
            found.sums = compensated_sums(np.hstack([y_A, y_A * self.F[A, :D]]))
            found.n_aggregated = len(A)
            found.aggregated_weight = float(len(A)) if self.weights is None else float(self.weights[A].sum())
        return found

    def along(self, ref, direction, working, k):
        """The (at most ``k``) points of the aggregated set A with the most negative
        ``y_i [1, F_i[:D]] . direction`` (``D = len(direction) - 1``):
        ``(index, features, labels, scores, count of A's points with a negative product)``."""
        D = len(direction) - 1
        score = -self._restrict(self.y * self._values(direction[1:], direction[0]))
        cand = np.flatnonzero(self._outside(working) & self._aggregated(ref) & (score > 0))
        n_found = len(cand)
        cand = cand[top_violations(score[cand], k)]
        idx = self.rows[cand]
        return idx, self.F[idx, :D], self.y[idx], score[cand], n_found

    def margin_counts(self, coef, intercept, widths):
        """How many of the problem's points have ``|y_i f(x_i) - 1| < w`` for each of the
        increasing ``widths`` (``f = F[:, :D] coef + intercept``): int64 counts, which add
        over parts of the points."""
        d = np.abs(self._restrict(self.y * self._values(coef, intercept)) - 1.0)
        # a point counts for every width above its distance: those from its position on
        return np.cumsum(np.bincount(np.searchsorted(widths, d, side="right"), minlength=len(widths) + 1))[:-1]

    def column_range(self):
        """``[[min, max] of F[:, 0] over the points of class +1], [the same over class -1]]``
        (``+inf, -inf`` for a class without points)."""
        u, y = self._first_column()
        return np.array([[u[c].min(), u[c].max()] if c.any() else [np.inf, -np.inf] for c in (y > 0, y < 0)])

    def line_derivatives(self, slopes, lo, width, n_bins):
        """The derivatives in ``b`` of the hinge sum of ``f = s F[:, 0] + b`` at edges of ``b``
        (:func:`line_derivatives`, weighted with weights), one row per slope ``s``."""
        return line_derivatives(*self._first_column(), slopes, lo, width, n_bins, weights=self._point_weights())

    def line_hinge(self, slopes, intercepts):
        """Hinge sums of ``f = s_j F[:, 0] + b_j`` over the problem's points, as the
        ``(hi, lo)`` rows of :func:`compensated_sums` (one column per pair)."""
        u, y = self._first_column()
        margins = y[:, None] * (u[:, None] * np.asarray(slopes)[None, :] + np.asarray(intercepts)[None, :])
        hinge = np.maximum(0.0, 1.0 - margins)
        w = self._point_weights()
        return compensated_sums(hinge if w is None else hinge * w[:, None])

    def _first_column(self):
        """``(F[:, 0], y)`` at the problem's points (the one-feature passes of D = 1)."""
        return self._restrict(self.F[:, 0]), self._restrict(self.y)

    def _point_weights(self):
        """The weights at the problem's points (None without weights)."""
        return None if self.weights is None else self._restrict(self.weights)

    def _values(self, coef, intercept):
        """``F[:, :D] coef + intercept`` at every row of ``F``."""
        D = len(coef)
        return self.F[:, :D] @ coef + intercept if D else np.full(self.F.shape[0], float(intercept))

    def _restrict(self, v):
        """``v`` (one entry per row of ``F``) at the problem's points."""
        return v if self.n_rows == self.F.shape[0] else v[self.rows]

    def _outside(self, working):
        """Which of the problem's points are outside ``working`` (global indices)."""
        outside = np.ones(self.F.shape[0], dtype=bool)
        outside[working] = False
        return self._restrict(outside)

    def _aggregated(self, ref):
        """Which of the problem's points the reference puts below its margin (A before W)."""
        return self._restrict(ref.holds(self.F, self.y))
