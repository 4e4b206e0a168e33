"""Exact hinge-loss ERM on a very large sample by constraint (row) generation.

The Kernel Projection Machine fits, for each dimension D, the linear programme
(Blanchard, Massart, Vert & Zwald 2004, Section 3)::

    min_{beta, b, xi}  sum_i xi_i
    s.t.  y_i (F_i[:D] . beta + b) + xi_i >= 1,   xi_i >= 0,   i = 1..n,

where ``F`` holds the first D (approximate) eigenfunctions at the n training
points. For n = 10^6 this LP has a million rows; most of them are inactive at the
optimum (points classified with margin ``y_i f(x_i) >= 1`` have ``xi_i = 0``).

Constraint generation
---------------------
Let ``W`` be a *working set* of points and ``LP_W`` the programme above with the
sum and the constraints restricted to ``i in W``. Dropping the (non-negative)
terms of the points outside ``W`` can only lower the optimum, so::

    LP_W* <= LP*                                     (1: a lower bound)

For the minimiser ``theta_W = (beta_W, b_W)`` of ``LP_W`` the *full* objective,
in which every point outside ``W`` contributes its smallest feasible slack
``max(0, 1 - y_i f(x_i))``, is an upper bound::

    LP* <= H(theta_W) = LP_W* + sum_{i not in W} max(0, 1 - y_i f_W(x_i))    (2)

so the gap ``H(theta_W) - LP_W*`` is exactly the hinge loss of the points
outside the working set. When every point outside ``W`` has ``y_i f_W(x_i) >= 1``
the gap is zero and ``theta_W`` is an optimal solution of the full LP: that is
the termination test (the *certificate*), checked on all n points. Otherwise the
most violated outside points are added to ``W`` and ``LP_W`` is re-solved from
the previous basis. The loop terminates because ``W`` grows strictly within one
D and is bounded by n.

Which LP HiGHS sees. ``LP_W`` has ``|W|`` rows, so a simplex basis of order
``|W|``; HiGHS is instead given its LP dual (the SVM-like form)::

    max  sum_{i in W} alpha_i   s.t.  sum_{i in W} alpha_i y_i [1, F_i[:D]] = 0,
                                      0 <= alpha_i <= 1,

with D + 1 equality rows and one bounded column per working point: the basis
has order D + 1 whatever n is. ``(b, beta)`` is minus the row duals (HiGHS's
convention ``reduced cost = c - A^T pi`` with ``c = -1`` gives the reduced
cost ``y_i f(x_i) - 1`` of point i, so a column outside ``W`` prices out
exactly when ``y_i f(x_i) < 1``: constraint generation in the primal is column
generation in this dual). New points enter nonbasic at the bound their reduced
cost makes dual feasible (``alpha_i = 1`` when ``y_i f(x_i) < 1``), so the
basis stays dual feasible and the dual simplex resumes from it.

Warm start along D: the subspaces are nested, so the optimum for D is feasible
for D + 1 (with ``beta_{D+1} = 0``). Going from D to D' > D adds the new rows
(features) to the *same* HiGHS model, keeping the working set and the basis
(still dual feasible: the new rows' duals start at beta_j = 0); the dual
simplex resumes from it. Before a new D, points of ``W`` at ``alpha_i = 0``
with a large margin (``y_i f(x_i) > 1 + prune_margin``) are dropped from the
model to keep it small (never within one D, so termination is unaffected).

Where the points live. The loop touches all n points only in the violation search
(the decision values, the hinge sum, the violated points outside ``W``); everything
else reads the working set's own feature rows, which the solver keeps. The search and
the draw of the initial working set are the methods of a *row source*:
:class:`InMemoryRows` for a feature matrix in memory, or a source whose rows stay on
Dask workers (:class:`kpm.hinge.dask_rows.DaskRowSource`), where only the working set's rows
travel: the solver keeps them up to the current D and asks the source for the next
columns of its working points when D grows.

Aggregation (``aggregate_below``). Outside ``W``, a set A of points is held at
``alpha_i = 1`` without columns: their hinge terms become the linear
``1 - y_i f(x_i)``, which only moves the dual rows' right-hand side to
``-g = -sum_A y_i [1, F_i]``. Since ``max(0, t) >= t``, the LP is still a lower bound
(1), and it is tight at its minimiser when no point of A has margin above 1 and no
other outside point margin below 1: the termination test, with violated points of
either kind added to ``W`` (each addition raises the lower bound pointwise, so the loop
still terminates). A is defined by a *reference* solution (:class:`Reference`): the
optimum of the LP of a random sample of ``init_size`` points at the same D, or the
previous dimension's optimum where its hinge sum is lower, and at D = 1 the full data's
minimiser found by passes over the points (:func:`line_minimiser`: a sample's optimum
misplaces A where the first feature is nearly constant); a working-set minimiser with a
lower hinge sum replaces it within one D. Outside ``W``, A holds the points whose
reference margin is below ``aggregate_below`` (c), and those in the band ``[c, 2 - c)``
around the margin join ``W`` (with ``band_size``, a band ``[1 - w, 1 + w)`` narrowed to
hold at most that many points: c is then ``1 - w``); before a new reference, working
points outside the band at their side's bound leave ``W``. An infeasible dual (``W``
cannot balance ``g``: the lower bound is unbounded) brings the points of A along
HiGHS's Farkas ray into ``W``.
The derivation is in the user guide (large scale, aggregating the points of clear
hinge loss).

Tolerances: the termination test uses ``tol`` (a point outside ``W`` with
``1 - y_i f(x_i) <= tol`` is accepted), so the returned objective exceeds the
optimum by at most ``tol`` times the number of such points; the report's
``gap`` gives the exact value of that excess. HiGHS's primal/dual feasibility
tolerances are set to ``lp_tol``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kpm.hinge.highs import new_highs
from kpm.exceptions import LPSolverError
from kpm.validation import check_int

__all__ = [
    "HingeLPResult",
    "InMemoryRows",
    "Violations",
    "ConstraintGenerationHingeLP",
    "ConstraintGenerationPath",
    "hinge_objective",
]


@dataclass
class HingeLPResult:
    """Solution of the hinge-loss LP for one dimension D.

    Attributes
    ----------
    n_components : int
        D, the number of feature columns used.
    coef : ndarray (D,)
        ``beta``.
    intercept : float
        ``b``.
    objective : float
        ``sum_i max(0, 1 - y_i f(x_i))`` over *all* points of the problem (the
        full LP objective at the returned solution).
    lower_bound : float
        Optimal value of the working-set LP (a lower bound on the full optimum).
    gap : float
        ``objective - lower_bound``: hinge loss of the points outside the working
        set (bounded by ``tol`` times their number at termination) plus HiGHS's
        feasibility slack inside it.
    n_working : int
        Size of the working set at termination.
    n_rounds : int
        Number of LP solves for this D.
    simplex_iterations : int
        Simplex iterations spent on this D.
    """

    n_components: int
    coef: np.ndarray
    intercept: float
    objective: float
    lower_bound: float
    gap: float
    n_working: int
    n_rounds: int
    simplex_iterations: int = 0
    n_aggregated: int = 0
    history: list = field(default_factory=list)


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
    rows of :func:`compensated_sums`) and size.
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
    """

    def __init__(self, F, y, rows=None):
        self.F, self.y = F, y
        self.rows = np.arange(F.shape[0]) if rows is None else rows
        self.shape = F.shape
        self.n_rows = len(self.rows)

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
        objective = float(np.maximum(viol, 0.0).sum())
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
            found.sums = compensated_sums(np.hstack([y_A, y_A * self.F[A, :D]]))
            found.n_aggregated = len(A)
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
        (:func:`line_derivatives`), one row per slope ``s``."""
        return line_derivatives(*self._first_column(), slopes, lo, width, n_bins)

    def line_hinge(self, slopes, intercepts):
        """Hinge sums of ``f = s_j F[:, 0] + b_j`` over the problem's points, as the
        ``(hi, lo)`` rows of :func:`compensated_sums` (one column per pair)."""
        u, y = self._first_column()
        margins = y[:, None] * (u[:, None] * np.asarray(slopes)[None, :] + np.asarray(intercepts)[None, :])
        return compensated_sums(np.maximum(0.0, 1.0 - margins))

    def _first_column(self):
        """``(F[:, 0], y)`` at the problem's points (the one-feature passes of D = 1)."""
        return self._restrict(self.F[:, 0]), self._restrict(self.y)

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


def line_derivatives(u, y, slopes, lo, width, n_bins):
    """For ``f = s u + b`` at each slope ``s_j``: the derivative in ``b`` of the hinge sum at
    the ``n_bins + 1`` edges ``lo_j + k width_j``, as integer counts.

    The hinge term of a point of class +1 is ``max(0, v - b)`` with ``v = 1 - s u``, that of
    class -1 is ``max(0, b - v)`` with ``v = -1 - s u``; with the points placed in bins of
    ``v``, the derivative at edge ``k`` is ``N - P``: the points of class -1 below the edge
    minus those of class +1 at or above it. Returns ``(len(slopes), n_bins + 1)`` int32
    (sums over parts of the points are the numbers of their union, whatever the split)."""
    pos = y > 0
    out = np.zeros((len(slopes), n_bins + 1), dtype=np.int32)
    for j, (s, lo_j, w_j) in enumerate(zip(slopes, lo, width)):
        # bin t = 0: v below the first edge; t = k + 1: v in [edge k, edge k + 1); n_bins + 1: above the last
        t = np.clip(np.floor((y - s * u - lo_j) / w_j), -1, n_bins).astype(np.int64) + 1
        P = np.bincount(t[pos], minlength=n_bins + 2)[::-1].cumsum()[::-1][1:]
        N = np.bincount(t[~pos], minlength=n_bins + 2).cumsum()[:-1]
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


class ConstraintGenerationHingeLP:
    """Exact path of hinge-loss LPs over nested feature sets by row generation.

    Parameters
    ----------
    F : ndarray (n_samples, max_components), or a row source
        Feature columns (e.g. eigenfunctions), the first D used for dimension D.
        Fortran (column-major) order avoids copies when slicing ``F[:, :D]``. Or an
        object with the methods of :class:`InMemoryRows` (``shape``, ``n_rows``,
        ``take``, ``columns``, ``search``) holding the points, their labels and the problem's rows
        (``y`` and ``rows`` then None): e.g. features that stay on Dask workers.
    y : ndarray (n_samples,)
        Labels in {-1, +1}.
    rows : ndarray of int, optional
        Restrict the problem to these rows of ``F`` (a cross-validation fold)
        without copying ``F``. Default: all rows.
    init_size : int, default=5000
        Size of the random initial working set.
    max_add : int or None
        Most points added per round (the most violated first). ``None``: no cap
        (every violated point is added).
    tol : float, default=1e-9
        A point outside the working set with ``1 - y_i f(x_i) > tol`` is a
        violated constraint.
    lp_tol : float, default=1e-9
        HiGHS primal and dual feasibility tolerances.
    prune_margin : float or None, default=0.5
        Before each new D, drop working points with ``alpha_i = 0`` and margin
        above ``1 + prune_margin`` (``None``: never drop).
    lp_solver : {'auto', 'simplex', 'ipm'}, default='auto'
        How HiGHS solves each working-set LP. ``'simplex'``: dual simplex from
        the previous basis. ``'ipm'``: interior point followed by crossover to a
        basic (vertex) solution. ``'auto'``: the interior point method when the
        working set has at least ``ipm_min_points`` points and D <= 10 (many
        points at their bounds and few rows: there the dual simplex's bound
        flipping becomes slow while an IPM iteration costs O(|W| D^2)), the warm
        dual simplex otherwise. The choice only affects speed: the termination
        test and the certificate are the same.
    ipm_min_points : int, default=20000
        See ``lp_solver``.
    max_rounds : int, default=10000
        Safety cap on LP solves per dimension (:class:`~kpm.LPSolverError` when
        reached).
    aggregate_below : float or None, default=None
        Aggregate the points of clear hinge loss (see the module docstring): outside the
        working set, the points whose margin under the reference solution is below this
        value enter the LP as one constant term. ``None``: every violated point is a
        column of the working set.
    band_size : int or None, default=None
        With ``aggregate_below``: at most this many points in the band around the margin
        that joins the working set at each reference. The band ``[c, 2 - c)``
        (``c = aggregate_below``) narrows to ``[1 - w, 1 + w)``, ``w`` the widest of a
        geometric grid of widths below ``1 - c`` whose band holds at most ``band_size`` of
        the problem's points (counted by one pass over them), so that the working set
        does not grow with the number of points. ``None``: the band ``[c, 2 - c)``.
    random_state : int or None
        Seeds the initial working set.
    """

    def __init__(
        self,
        F,
        y,
        *,
        rows=None,
        init_size=5000,
        max_add=None,
        tol=1e-9,
        lp_tol=1e-9,
        prune_margin=0.5,
        lp_solver="auto",
        ipm_min_points=20000,
        max_rounds=10000,
        aggregate_below=None,
        band_size=None,
        random_state=0,
    ):
        import highspy

        source = self._source(F, y, rows)
        for name, v in (("tol", tol), ("lp_tol", lp_tol)):
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive number, got {v!r}")
        if int(init_size) < 1:
            raise ValueError(f"init_size must be >= 1, got {init_size!r}")
        if lp_solver not in ("auto", "simplex", "ipm"):
            raise ValueError(f"lp_solver must be 'auto', 'simplex' or 'ipm', got {lp_solver!r}")
        if aggregate_below is not None and not (np.isfinite(aggregate_below) and aggregate_below < 1):
            raise ValueError(f"aggregate_below must be None or a number below 1, got {aggregate_below!r}")
        if band_size is not None and aggregate_below is None:
            raise ValueError("band_size is the size of the aggregation's band: it needs aggregate_below")
        self.band_size = check_int(band_size, "band_size", allow_none=True)
        self.lp_solver = lp_solver
        self.aggregate_below = None if aggregate_below is None else float(aggregate_below)
        self.ipm_min_points = int(ipm_min_points)

        self.source = source
        self.shape = source.shape
        self.n_rows = source.n_rows
        self.init_size = int(init_size)
        self.max_add = max_add
        self.tol = float(tol)
        self.prune_margin = prune_margin
        self.max_rounds = int(max_rounds)
        self._rng = np.random.default_rng(random_state)
        self._hs = highspy

        self.exact_solves = 0  # working-set LPs solved by the KPM's path solver after HiGHS failed
        h = new_highs()
        h.setOptionValue("primal_feasibility_tolerance", float(lp_tol))
        h.setOptionValue("dual_feasibility_tolerance", float(lp_tol))
        h.setOptionValue("presolve", "off")  # keep bases between incremental solves
        h.setOptionValue("simplex_strategy", 1)  # dual simplex
        h.setOptionValue("threads", 1)
        h.setOptionValue("run_crossover", "on")  # a vertex (basis) also after the IPM
        # row 0: sum_i alpha_i y_i = 0 (the intercept b)
        h.addRow(0.0, 0.0, 0, np.array([], np.int32), np.array([], float))
        self._h = h
        self._W = np.empty(0, np.int64)  # point index of each LP column, in column order
        self._FW = np.empty((0, 0), order="F")  # their feature rows (the first _D columns)
        self._yW = np.empty(0)  # their labels
        self._D = 0
        self._fW = None  # decision values of the last solution at the working points
        self._ref = None  # the Reference of the aggregated set A (None: A is empty)
        self._g = np.zeros(1)  # sum_A y_i [1, F_i[:D]]
        self._nA = 0  # |A|
        self._sample = None  # the exact LP of a sample (references of A)
        self.ray_rounds = 0  # rounds that added points of A along an infeasibility ray
        self.dissolved = 0  # times the aggregation was given up after a failed LP
        self.moves = 0  # times A's reference moved to a better solution within one D
        self.cold_restarts = 0  # aggregated LPs re-run from no basis after a failed warm run
        self.results: list[HingeLPResult] = []

    @staticmethod
    def _source(F, y, rows):
        """The row source: ``F`` itself (``y`` and ``rows`` None), or an :class:`InMemoryRows`
        over the checked ``F``, ``y`` and ``rows``."""
        if all(hasattr(F, name) for name in ("search", "take", "columns")):
            if y is not None or rows is not None:
                raise ValueError("a row source holds its labels and rows: pass y=None and rows=None")
            return F
        F = np.asarray(F)
        if F.ndim != 2:
            raise ValueError(f"F must be a 2-D array (n_samples, n_components), got shape {F.shape}")
        if F.dtype != np.float64:
            F = np.asarray(F, dtype=np.float64, order="F")
        if not np.all(np.isfinite(F)):
            raise ValueError("F contains NaN or infinite values")
        y = np.asarray(y, dtype=np.float64).ravel()
        if len(y) != F.shape[0]:
            raise ValueError(f"F has {F.shape[0]} rows but y has {len(y)} entries")
        if not np.all(np.isin(y, (-1.0, 1.0))):
            raise ValueError("y must hold labels in {-1, +1}")
        if rows is None:
            rows = np.arange(F.shape[0])
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        rows = np.unique(rows.astype(np.int64))
        if len(rows) == 0:
            raise ValueError("the hinge LP needs at least one sample")
        if rows[0] < 0 or rows[-1] >= F.shape[0]:
            raise ValueError("rows out of range")
        return InMemoryRows(F, y, rows)

    # ------------------------------------------------------------------ model
    @property
    def working_set(self) -> np.ndarray:
        return self._W.copy()

    def _add_features(self, D_new):
        W = self._W
        k = D_new - self._D
        if k <= 0:
            return
        new = self.source.columns(W, self._D, D_new)  # (|W|, k)
        self._FW = np.asfortranarray(np.hstack([self._FW, new]))
        vals = self._yW[:, None] * new
        vals = np.ascontiguousarray(vals.T)  # row-major: one LP row per feature
        nW = len(W)
        idx = np.tile(np.arange(nW, dtype=np.int32), k)
        starts = (np.arange(k, dtype=np.int64) * nW).astype(np.int32)
        self._h.addRows(k, np.zeros(k), np.zeros(k), k * nW, starts, idx, vals.ravel())
        self._D = D_new

    def _add_points(self, idx, Fi, yi, at_upper, aggregated=None):
        k = len(idx)
        if k == 0:
            return
        D = self._D
        if aggregated is not None and aggregated.any():  # they leave A for W
            self._g = self._g - aggregate_sums(Fi[aggregated, :D], yi[aggregated])
            self._nA -= int(aggregated.sum())
            self._set_rhs()
        h = self._h
        width = D + 1
        vals = np.empty((k, width))
        vals[:, 0] = yi
        if D:
            vals[:, 1:] = yi[:, None] * Fi[:, :D]
        ridx = np.tile(np.arange(width, dtype=np.int32), k)
        starts = (np.arange(k, dtype=np.int64) * width).astype(np.int32)
        basis = h.getBasis() if self._W.size else None
        h.addCols(k, -np.ones(k), np.zeros(k), np.ones(k), k * width, starts, ridx, vals.ravel())
        self._W = np.concatenate([self._W, idx])
        self._FW = np.asfortranarray(np.concatenate([self._FW, Fi]))
        self._yW = np.concatenate([self._yW, yi])
        if basis is not None and basis.valid:
            # new columns nonbasic at their dual-feasible bound: the basis stays dual feasible
            S = self._hs.HighsBasisStatus
            status = list(basis.col_status)
            status += [S.kUpper if u else S.kLower for u in at_upper]
            basis.col_status = status
            h.setBasis(basis)

    def _prune(self):
        """Drop working points with alpha = 0 (nonbasic at lower) and a large margin; when
        aggregating, also those outside the reference's band ``[c, 2 - c)``: with alpha = 1
        and a margin below c, or alpha = 0 and a margin of at least ``2 - c``."""
        if self.prune_margin is None or self._fW is None or self._W.size == 0:
            return
        basis = self._h.getBasis()
        if not basis.valid:
            return
        S = self._hs.HighsBasisStatus
        status = basis.col_status
        at_lower = np.fromiter((s == S.kLower for s in status), dtype=bool, count=len(status))
        margin = self._yW * self._fW
        drop = at_lower & (margin > 1.0 + float(self.prune_margin))
        if self.aggregate_below is not None:  # outside the band, at the bound its side gives
            below = self.aggregate_below if self._ref is None else self._ref.below
            at_upper = np.fromiter((s == S.kUpper for s in status), dtype=bool, count=len(status))
            drop |= (at_upper & (margin < below)) | (at_lower & (margin >= 2.0 - below))
        drop = np.flatnonzero(drop)
        if drop.size == 0 or drop.size == self._W.size:
            return
        self._h.deleteCols(len(drop), drop.astype(np.int32))
        self._W = np.delete(self._W, drop)
        self._FW = np.delete(self._FW, drop, axis=0)
        self._yW = np.delete(self._yW, drop)
        self._fW = np.delete(self._fW, drop)

    def _run(self):
        """Solve the working-set LP: the warm HiGHS run, then the exact KPM's path solver.

        Where the hinge-optimal coefficients are huge (1e5 to 1e13: rough
        eigenfunctions of tiny eigenvalues on nearly collinear samples, e.g.
        one-dimensional data), HiGHS's warm dual simplex can end with a status
        'Unknown' and a basis whose unscaled primal infeasibility is far above its
        tolerance; cold HiGHS runs on such LPs were seen to fail too, and warm runs
        from the basis a failed run left to cycle for minutes on 100 points (hence an
        iteration cap, and no basis after a failure). The working-set LP is then
        solved by :class:`kpm.hinge.lp_path.HingeLP` (the specialised simplex of the exact
        KPM, with its own fallbacks), which does not depend on HiGHS's fixed
        tolerances; only when it fails is :class:`~kpm.LPSolverError` raised (the
        estimators end the path there, loudly).
        """
        h = self._h
        use_ipm = self.lp_solver == "ipm" or (
            self.lp_solver == "auto" and len(self._W) >= self.ipm_min_points and self._D <= 10
        )
        h.setOptionValue("solver", "ipm" if use_ipm else "simplex")
        # a deterministic cap far above a healthy run's count (which is of the order of
        # the LP's rows + columns); a run from a degenerate basis was seen to cycle
        h.setOptionValue("simplex_iteration_limit", 100 * (self._D + 1 + len(self._W)) + 10000)
        h.run()
        iters = int(h.getInfo().simplex_iteration_count)
        status = h.getModelStatus()
        M = self._hs.HighsModelStatus
        if status not in (M.kOptimal, M.kInfeasible, M.kUnboundedOrInfeasible) and self._ref is not None:
            # the aggregated LP's large right-hand side was seen to end a warm dual simplex in
            # a 'Solve error' at high D; a cold run from no basis solves it
            h.clearSolver()
            h.run()
            iters += max(int(h.getInfo().simplex_iteration_count), 0)
            status = h.getModelStatus()
            self.cold_restarts += 1
        if status != M.kOptimal:
            if self._ref is not None:
                if status in (M.kInfeasible, M.kUnboundedOrInfeasible):
                    return None  # A's term unbalanced: the caller adds points of A along a ray
                self._dissolve()  # the path solver below has no aggregated term
            h.clearSolver()  # the next round starts from no basis, not from this run's
            return self._run_exact_solver(repr(h.modelStatusToString(status)), iters)
        sol = h.getSolution()
        pi = -np.asarray(sol.row_dual)
        info = h.getInfo()
        # LP value of the working set: max sum alpha = -(min -sum alpha), plus A's alpha = 1
        return pi, -float(info.objective_function_value) + self._nA, iters

    # ------------------------------------------------------------------ aggregation
    def _set_rhs(self):
        """The dual rows' right-hand side ``-sum_A y_i [1, F_i]`` (zero without aggregation)."""
        k = self._D + 1
        g = self._g if self._ref is not None else np.zeros(k)
        self._h.changeRowsBounds(k, np.arange(k, dtype=np.int32), -g, -g)

    def _install_reference(self, coef, intercept):
        """Make ``(coef, intercept)`` the reference of A: one search at it, which also returns
        A's sums; the points of S in the band around the margin (margin in ``[c, 2 - c)``,
        ``c = aggregate_below``, or the narrower band of :meth:`_band_below`) join the working
        set, all of them. Returns the hinge sum at the reference."""
        coef, intercept = np.asarray(coef, float), float(intercept)
        ref = Reference(coef, intercept, self._band_below(coef, intercept), sums=True)
        # the band of S around the margin, [below, 2 - below): the points that may end at
        # 0 < alpha < 1 when the optimum is near the reference
        found = self.source.search(ref.coef, ref.intercept, self._W, ref.below - 1.0, None, ref=ref)
        ref.sums = False
        self._ref, self._g, self._nA = ref, found.sums[0] + found.sums[1], found.n_aggregated
        self._set_rhs()
        self._add_points(found.index, found.features, found.labels, np.ones(len(found.index), bool))
        return found.objective

    def _band_below(self, coef, intercept, n_widths=48):
        """The lower end ``1 - w`` of the band around the reference's margin: ``w = 1 - c``
        without ``band_size``, else the widest of ``(1 - c) 2^(-k/4)``, ``k < n_widths``,
        whose band ``|y_i f(x_i) - 1| < w`` holds at most ``band_size`` points (the
        narrowest when none does)."""
        if self.band_size is None:
            return self.aggregate_below
        # increasing, the last = 1 - c
        widths = (1.0 - self.aggregate_below) * 2.0 ** (-np.arange(n_widths)[::-1] / 4.0)
        fits = np.flatnonzero(self.source.margin_counts(coef, intercept, widths) <= self.band_size)
        return 1.0 - widths[fits[-1] if fits.size else 0]

    def _reference(self, D):
        """A's reference at ``D``: the sample's optimum, or the previous dimension's optimum
        (``beta_D = 0``) where its hinge sum over the problem's points is lower (one pass);
        at D = 1 the full data's minimiser found by passes (:func:`line_minimiser`: a
        sample's optimum misplaces A where the first feature is nearly constant)."""
        ref = self._sample_lp().solve(D)
        coef, intercept = ref.coef, ref.intercept
        if D == 1 and hasattr(self.source, "line_derivatives"):
            slope, intercept = line_minimiser(self.source, coef[0])
            return np.array([slope]), intercept
        prev = self.results[-1] if self.results else None
        if prev is not None and prev.n_components < D:
            sample_objective = self.source.search(coef, intercept, self._W, np.inf, 0).objective
            if prev.objective < sample_objective:
                return np.concatenate([prev.coef, np.zeros(D - prev.n_components)]), prev.intercept
        return coef, intercept

    def _sample_lp(self):
        """The exact hinge LP of a random sample of the problem's points (all columns), made
        once: its solutions are the references of A."""
        if self._sample is None:
            rng = np.random.default_rng(self._rng.integers(2**32))
            m0 = min(self.init_size, self.n_rows)
            idx, Fs, ys = self.source.take(np.sort(rng.choice(self.n_rows, m0, replace=False)), self.shape[1])
            self._sample = ConstraintGenerationHingeLP(Fs, ys, init_size=m0, tol=self.tol, random_state=0)
        return self._sample

    def _dissolve(self):
        """Give up the aggregation: A's points count as S (the searches add them back)."""
        self._ref, self._g, self._nA = None, np.zeros(self._D + 1), 0
        self._set_rhs()
        self.dissolved += 1

    def _add_along_ray(self):
        """The aggregated LP is infeasible (its primal unbounded): HiGHS's Farkas ray ``r``
        has ``r . g < 0`` and ``r . a_i <= 0`` summed over W too small to balance it
        (``a_i = y_i [1, F_i]``). The points of A with the most negative ``r . a_i`` join W:
        ``max_add`` of them, or without a cap as many as W has (at least ``init_size``);
        without a ray the aggregation is given up."""
        h = self._h
        has_ray, ray = h.getDualRay()[1:]
        if not has_ray and h.getOptionValue("solver")[1] != "simplex":
            h.setOptionValue("solver", "simplex")
            h.run()
            has_ray, ray = h.getDualRay()[1:]
        ray = np.asarray(ray, float)[: self._D + 1]
        direction = ray if float(ray @ self._g) < 0 else -ray
        if not has_ray or float(direction @ self._g) >= 0:
            self._dissolve()
            return
        k = self.max_add or max(self.init_size, len(self._W))
        idx, Fi, yi, _, _ = self.source.along(self._ref, direction, self._W, k)
        if len(idx) == 0:
            self._dissolve()
            return
        self._add_points(idx, Fi, yi, np.ones(len(idx), bool), np.ones(len(idx), bool))
        self.ray_rounds += 1

    def _run_exact_solver(self, status, iters):
        """The working-set LP by the exact KPM's path solver, after HiGHS failed."""
        from kpm.hinge.lp_path import HingeLP

        W, D = self._W, self._D
        lp = HingeLP(self._yW)
        lp.add_columns(self._FW[:, :D] if D else np.zeros((len(W), 0)))
        try:
            beta, b, objective, it = lp.solve()
        except LPSolverError as exc:
            raise LPSolverError(
                f"no solver solved the working-set hinge LP at D={D} ({len(W)} working points): "
                f"HiGHS's warm run (model status {status}), then the KPM's path solver ({exc})"
            ) from exc
        self.exact_solves += 1
        return np.concatenate([[b], beta]), float(objective), iters + int(it)

    # ------------------------------------------------------------------ solve
    def solve(self, D) -> HingeLPResult:
        """Solve the LP on the first ``D`` feature columns (D must not decrease)."""
        D = int(D)
        if D < 0 or D > self.shape[1]:
            raise ValueError(f"D must be in [0, {self.shape[1]}], got {D}")
        if D < self._D:
            raise ValueError(
                f"the path must be solved with non-decreasing D (warm start); got {D} after {self._D}"
            )
        if D > self._D:
            self._prune()
        self._add_features(D)
        ref_objective = np.inf  # the hinge sum at A's reference
        if self.aggregate_below is not None:
            ref_objective = self._install_reference(*self._reference(D))
        if len(self._W) == 0 and self._ref is None:  # (aggregated: W starts with the points near the margin)
            m0 = min(self.init_size, self.n_rows)
            # = rng.choice(rows, m0, replace=False), positions among the problem's points
            idx, Fi, yi = self.source.take(np.sort(self._rng.choice(self.n_rows, m0, replace=False)), D)
            # those in A leave it
            self._add_points(idx, Fi, yi, None, None if self._ref is None else self._ref.holds(Fi, yi))

        history = []
        iters = 0
        for rnd in range(1, self.max_rounds + 1):
            out = self._run()
            if out is None:
                self._add_along_ray()
                continue
            pi, lower, it = out
            iters += it
            b = float(pi[0])
            beta = pi[1 : D + 1].copy()
            self._fW = self._FW[:, :D] @ beta + b if D else np.full(len(self._W), b)
            found = self.source.search(beta, b, self._W, self.tol, self.max_add, ref=self._ref)
            history.append((len(self._W), lower, found.objective, found.n_violated))
            if found.n_violated == 0:
                return self._result(D, beta, b, found.objective, lower, rnd, iters, history)
            if self._ref is not None and found.objective < ref_objective - self.tol * max(1.0, ref_objective):
                # a better solution than the reference: move the reference there (finitely
                # often: the hinge sum at the references strictly decreases)
                self._prune()
                ref_objective = self._install_reference(beta, b)
                self.moves += 1
                continue
            # new points enter at alpha = 1 unless they leave A with a margin above 1
            self._add_points(found.index, found.features, found.labels, ~found.aggregated, found.aggregated)
        raise LPSolverError(
            f"constraint generation did not terminate in {self.max_rounds} rounds at D={D}"
        )

    def _result(self, D, beta, b, objective, lower, rnd, iters, history):
        res = HingeLPResult(
            n_components=D,
            coef=beta,
            intercept=b,
            objective=objective,
            lower_bound=lower,
            gap=objective - lower,
            n_working=len(self._W),
            n_rounds=rnd,
            simplex_iterations=iters,
            n_aggregated=self._nA,
            history=history,
        )
        self.results.append(res)
        return res

    def path(self, D_values):
        """Solve for each D of an increasing sequence, warm-starting; returns the results."""
        D_values = [int(d) for d in D_values]
        if any(b <= a for a, b in zip(D_values, D_values[1:])):
            raise ValueError("D_values must be strictly increasing")
        return [self.solve(D) for D in D_values]


class ConstraintGenerationPath:
    """The constraint generation as a path solver of the KPM's path loop.

    Implements :class:`kpm.hinge.lp_path.PathSolver` over a
    :class:`ConstraintGenerationHingeLP`, so that :class:`kpm.hinge.lp_path.PathGrower` grows
    its path exactly as it grows the exact KPM's: the same floor stop, the same end of
    the path at a dimension no solver solved. The feature columns live in the LP's
    ``F`` (all training points, a fold selected by ``rows``); :meth:`add_columns` takes
    the next columns of that ``F`` and only counts them.

    Parameters
    ----------
    F, y, rows, **options
        As for :class:`ConstraintGenerationHingeLP`.
    """

    floor = 0.0  # no duplicate handling: the least hinge loss is 0
    zero_level = 0.0
    restarts = 0

    def __init__(self, F, y=None, *, rows=None, **options):
        self.cg = ConstraintGenerationHingeLP(F, y, rows=rows, **options)
        self.n_cols = 0
        self.n_samples = self.cg.n_rows

    @property
    def fallbacks(self):
        """Working-set LPs handed to the exact KPM's solver after HiGHS failed."""
        return self.cg.exact_solves

    @property
    def results(self) -> list:
        """The :class:`HingeLPResult` of every dimension solved."""
        return self.cg.results

    def add_columns(self, Zc):
        """Take the next ``Zc.shape[1]`` columns of ``F`` (``Zc`` are those columns)."""
        k = np.shape(Zc)[1] if np.ndim(Zc) == 2 else 1
        if np.shape(Zc)[0] != self.cg.shape[0] or self.n_cols + k > self.cg.shape[1]:
            raise ValueError(
                f"the columns must be the next columns of F {self.cg.shape}, got shape {np.shape(Zc)}"
            )
        self.n_cols += k

    def solve(self):
        """Solve at ``D = n_cols``: ``(beta, b, objective, iterations)``."""
        res = self.cg.solve(self.n_cols)
        return res.coef, float(res.intercept), res.objective, res.simplex_iterations

    def at_floor(self, objective, zero_tol=1e-9):
        return objective <= self.floor + zero_tol * self.n_samples
