"""Aggregating the points of clear hinge loss in the constraint generation.

Outside the working set W, a set A of points is held at ``alpha_i = 1`` without LP
columns: their hinge terms become the linear ``1 - y_i f(x_i)``, which only moves the
dual rows' right-hand side to ``-g = -sum_A y_i [1, F_i]`` (:func:`aggregate_sums`). A is
defined by a reference solution (:class:`Reference`); at D = 1 the reference is the full
data's minimiser of the one-feature hinge sum, found by passes over the points
(:func:`line_minimiser`, with the integer counts of :func:`line_derivatives`). Sums over
the points are compensated (:func:`compensated_sums`, :func:`merge_compensated`) so that
they are the same numbers in memory and over any chunking of the points on Dask workers.
The derivation is in the user guide (large scale, "Aggregating the points of clear hinge
loss").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "Reference",
    "line_derivatives",
    "line_minimiser",
    "aggregate_sums",
    "compensated_sums",
    "merge_compensated",
]


@dataclass
class Reference:
    """The reference solution of an aggregated working-set LP.

    The points outside the working set whose margin ``y_i f_ref(x_i)`` under
    ``f_ref = F[:, :len(coef)] coef + intercept`` is below ``below`` form the aggregated
    set A; the others outside it form S. With ``sums`` the search also returns
    ``sum_A y_i [1, F_i[:D]]`` and ``|A|`` (D: the searched solution's dimension).
    """

    coef: np.ndarray
    intercept: float
    below: float
    sums: bool = False

    def holds(self, F, y):
        """Which of the points ``(F, y)`` have reference margin below ``below`` (A, before
        the working set is taken out)."""
        D = len(self.coef)
        f = F[:, :D] @ self.coef + self.intercept if D else np.full(len(y), float(self.intercept))
        return y * f < self.below


def line_derivatives(u, y, slopes, lo, width, n_bins, weights=None):
    """For ``f = s u + b`` at each slope ``s_j``: the derivative in ``b`` of the hinge sum at
    the ``n_bins + 1`` edges ``lo_j + k width_j``, as integer counts (with ``weights``, the
    points' weights summed instead, as float64).

    The hinge term of a point of class +1 is ``max(0, v - b)`` with ``v = 1 - s u``, that of
    class -1 is ``max(0, b - v)`` with ``v = -1 - s u``; with the points placed in bins of
    ``v``, the derivative at edge ``k`` is ``N - P``: the points of class -1 below the edge
    minus those of class +1 at or above it. Returns ``(len(slopes), n_bins + 1)`` int32
    (sums over parts of the points are the numbers of their union, whatever the split)."""
    pos = y > 0
    out = np.zeros((len(slopes), n_bins + 1), dtype=np.int32 if weights is None else np.float64)
    w_pos = None if weights is None else weights[pos]
    w_neg = None if weights is None else weights[~pos]
    for j, (s, lo_j, w_j) in enumerate(zip(slopes, lo, width)):
        # bin t = 0: v below the first edge; t = k + 1: v in [edge k, edge k + 1); n_bins + 1: above the last
        t = np.clip(np.floor((y - s * u - lo_j) / w_j), -1, n_bins).astype(np.int64) + 1
        P = np.bincount(t[pos], weights=w_pos, minlength=n_bins + 2)[::-1].cumsum()[::-1][1:]
        N = np.bincount(t[~pos], weights=w_neg, minlength=n_bins + 2).cumsum()[:-1]
        out[j] = N - P
    return out


def _line_intercepts(source, slopes, bounds, n_bins=64, levels=3):
    """For each slope ``s``, an intercept within ``(hi - lo) / n_bins^levels`` of a minimiser of
    the hinge sum of ``f = s F[:, 0] + b`` over ``b`` (``hi - lo``: the range of the bends of
    its terms): the edge where the derivative (:func:`line_derivatives`) turns non-negative,
    located by ``levels`` passes over the points, each binning the last bin finer."""
    slopes = np.asarray(slopes, float)
    (pmin, pmax), (nmin, nmax) = bounds
    ends = np.stack([1.0 - slopes * pmin, 1.0 - slopes * pmax, -1.0 - slopes * nmin, -1.0 - slopes * nmax])
    lo, hi = ends.min(axis=0), ends.max(axis=0)
    width = np.maximum(hi - lo, 1e-300) / n_bins
    for _ in range(levels):
        up = source.line_derivatives(slopes, lo, width, n_bins) >= 0
        k = np.where(up.any(axis=1), np.argmax(up, axis=1), n_bins)  # the first edge where it is >= 0
        lo = lo + np.maximum(k - 1, 0) * width
        width = width / n_bins
    return lo + width * n_bins / 2


def line_minimiser(source, slope, n_slopes=9, levels=6, max_expand=40):
    """A minimiser ``(s, b)`` of the hinge sum of the one-feature model ``f = s F[:, 0] + b``
    over the points of a row source, found by passes over them (no LP).

    ``g(s) = min_b H(s, b)`` is convex. Each level evaluates it at ``n_slopes`` equispaced
    slopes of a bracket (the intercepts by :func:`_line_intercepts`, the sums compensated so
    that they do not depend on how the points are split) and keeps the two intervals around
    the smallest value (ties: the lowest slope); a smallest value at an end of the bracket
    moves and widens it instead (at most ``max_expand`` times). ``levels`` shrinks the
    bracket by ``((n_slopes - 1) / 2) ** levels`` around the start ``slope`` and its
    scale. Equal values at all the slopes end the search: a convex function equal at
    equispaced points is constant between them, and a convex function constant on an
    interval is minimal there."""
    bounds = source.column_range()
    half = max(abs(float(slope)), 1.0)
    lo, hi = float(slope) - half, float(slope) + half
    done = expanded = 0
    while done < levels:
        slopes = np.linspace(lo, hi, n_slopes)
        b = _line_intercepts(source, slopes, bounds)
        hs = source.line_hinge(slopes, b)
        values = hs[0] + hs[1]
        k = int(np.argmin(values))
        if np.all(values == values[k]):  # g is constant on the bracket, so minimal there (convexity):
            break  # e.g. a constant first feature
        if k in (0, n_slopes - 1) and expanded < max_expand:
            expanded += 1
            half = 2.0 * (hi - lo)
            lo, hi = slopes[k] - half, slopes[k] + half
            continue
        lo, hi = slopes[max(k - 1, 0)], slopes[min(k + 1, n_slopes - 1)]
        done += 1
    return float(slopes[k]), float(b[k])


def aggregate_sums(F, y):
    """``sum_i y_i [1, F_i]`` of a set of points (the aggregated LP's right-hand side)."""
    return np.concatenate([[y.sum()], y @ F]) if len(y) else np.zeros(F.shape[1] + 1)


def compensated_sums(V):
    """Column sums of ``V`` as ``(hi, lo)`` rows with ``hi + lo`` within about
    ``n u^2 sum |V|`` of the exact sums (pairwise Knuth TwoSum; u the unit roundoff).

    Rounded, ``hi + lo`` is then the correctly rounded sum in all but vanishingly rare
    cases, whatever the order of the terms or how they are split into parts
    (:func:`merge_compensated`): the aggregated LP's right-hand side is the same number
    in memory and over any chunking of the points on Dask workers."""
    V = np.asarray(V, dtype=float)
    lo = np.zeros(V.shape[1:])
    while V.shape[0] > 1:
        if V.shape[0] % 2:
            V = np.concatenate([V, np.zeros((1,) + V.shape[1:])])
        a, b = V[0::2], V[1::2]
        V = a + b
        bb = V - a
        lo = lo + ((a - (V - bb)) + (b - bb)).sum(axis=0)
    hi = V[0] if V.shape[0] else np.zeros(V.shape[1:])
    return np.stack([hi, lo])


def merge_compensated(parts):
    """The :func:`compensated_sums` of the union of parts from those of the parts."""
    parts = np.asarray(parts, dtype=float)
    total = compensated_sums(parts[:, 0])
    total[1] += parts[:, 1].sum(axis=0)
    return total
