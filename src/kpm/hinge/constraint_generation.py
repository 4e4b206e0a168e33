"""Exact hinge-loss ERM on a very large sample by constraint (row) generation.

For each dimension D the Kernel Projection Machine solves the hinge LP (Blanchard,
Massart, Vert & Zwald 2004, Section 3) ``min sum_i max(0, 1 - y_i (F_i[:D] . beta + b))``
over all n training points. Most points are classified with margin at least 1 at the
optimum, so the LP is solved on a *working set* W of points, which gives a lower bound,
and certified on all points: the full hinge sum at the working-set optimum is an upper
bound, and the two agree when no point outside W is violated (the termination test,
checked by the row source's violation search, :mod:`kpm.hinge.rows`); otherwise the most
violated points join W and the LP is re-solved from its previous basis. HiGHS solves the
working-set LP's dual (D + 1 equality rows, one bounded column per working point), warm
along D (the subspaces are nested). Optionally the points of clear hinge loss are
aggregated into one term (:mod:`kpm.hinge.aggregation`). The derivation, the warm starts
and the tolerances are in the user guide (large scale, "Linear programmes").

The expert settings of the method are one object, :class:`ConstraintGenerationOptions`.

Sample weights weigh the hinge terms, ``min sum_i w_i max(0, 1 - y_i f(x_i))``: in the dual
HiGHS solves, the box of a working point is ``0 <= alpha_i <= w_i``, an aggregated point
holds ``alpha_i = w_i``, and the hinge sums of the certificates are weighted; the test of a
violated point does not depend on its weight.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from kpm.exceptions import LPSolverError
from kpm.hinge.aggregation import Reference, aggregate_sums, line_minimiser
from kpm.hinge.highs import new_highs
from kpm.hinge.rows import InMemoryRows
from kpm.validation import Integer, Options, Real, check_param, check_sample_weight

__all__ = [
    "ConstraintGenerationOptions",
    "HingeLPResult",
    "ConstraintGenerationHingeLP",
    "ConstraintGenerationPath",
]


@dataclass(frozen=True)
class ConstraintGenerationOptions:
    """The settings of the constraint generation (:class:`ConstraintGenerationHingeLP`).

    Parameters
    ----------
    init_size : int, default=5000
        Size of the random initial working set; with ``aggregate_below``, the size of the
        random sample whose hinge LP gives the reference solutions.
    max_add : int or None, default=None
        Most points added per round (the most violated first). ``None``: every violated
        point (with ``aggregate_below``, the estimators pass ``init_size``).
    tol : float, default=1e-9
        A point outside the working set with ``1 - y_i f(x_i) > tol`` is a violated
        constraint: the returned objective exceeds the optimum by at most ``tol`` times
        the number of points accepted within it (the result's ``gap`` gives the excess).
    lp_tol : float, default=1e-9
        HiGHS's primal and dual feasibility tolerances.
    prune_margin : float or None, default=0.5
        Before each new D, drop working points with ``alpha_i = 0`` and margin above
        ``1 + prune_margin`` (``None``: never drop).
    lp_solver : {'auto', 'simplex', 'ipm'}, default='auto'
        How HiGHS solves each working-set LP: the dual simplex from the previous basis,
        the interior point method with crossover, or (``'auto'``) the interior point
        method when the working set has at least ``ipm_min_points`` points and D <= 10
        (many points at their bounds and few rows), the warm dual simplex otherwise.
        Only the speed depends on it.
    ipm_min_points : int, default=20000
        See ``lp_solver``.
    max_rounds : int, default=10000
        Most LP solves per dimension (:class:`~kpm.LPSolverError` when reached).
    aggregate_below : float below 1 or None, default=None
        Aggregate the points of clear hinge loss: outside the working set, the points whose
        margin under the reference solution is below this value enter the LP as one
        linear term. ``None``: every violated point is a column of the working set.
    band_size : int or None, default=None
        With ``aggregate_below``: at most this many points in the band around the margin
        that joins the working set at each reference (the band ``[c, 2 - c)``, ``c =
        aggregate_below``, narrows to ``[1 - w, 1 + w)`` to hold them), so that the working
        set does not grow with the number of points. ``None``: the band ``[c, 2 - c)``.
    """

    init_size: int = 5000
    max_add: int | None = None
    tol: float = 1e-9
    lp_tol: float = 1e-9
    prune_margin: float | None = 0.5
    lp_solver: str = "auto"
    ipm_min_points: int = 20000
    max_rounds: int = 10000
    aggregate_below: float | None = None
    band_size: int | None = None

    _constraints = {
        "init_size": [Integer(1)],
        "max_add": [Integer(1), None],
        "tol": [Real(0, None, "neither")],
        "lp_tol": [Real(0, 1, "neither")],
        "prune_margin": [Real(0, None), None],
        "lp_solver": [Options("auto", "simplex", "ipm")],
        "ipm_min_points": [Integer(1)],
        "max_rounds": [Integer(1)],
        "aggregate_below": [Real(None, 1, "left"), None],
        "band_size": [Integer(1), None],
    }

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, check_param(getattr(self, f.name), f.name, self._constraints[f.name]))
        if self.band_size is not None and self.aggregate_below is None:
            raise ValueError("band_size is the size of the aggregation's band: it needs aggregate_below")

    @classmethod
    def of(cls, options):
        """Options from ``None`` (the defaults), a dict of settings or an instance."""
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        if isinstance(options, dict):
            unknown = sorted(set(options) - {f.name for f in fields(cls)})
            if unknown:
                raise ValueError(
                    f"unknown constraint-generation options {unknown}; the settings are "
                    f"{[f.name for f in fields(cls)]}"
                )
            return cls(**options)
        raise ValueError(
            f"the constraint-generation options must be None, a dict or a ConstraintGenerationOptions, "
            f"got {options!r}"
        )


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


class ConstraintGenerationHingeLP:
    """Exact path of hinge-loss LPs over nested feature sets by row generation.

    Parameters
    ----------
    F : ndarray (n_samples, max_components), or a row source
        Feature columns (e.g. eigenfunctions), the first D used for dimension D.
        Fortran (column-major) order avoids copies when slicing ``F[:, :D]``. Or an
        object with the methods of :class:`kpm.hinge.rows.InMemoryRows` (``shape``,
        ``n_rows``, ``take``, ``columns``, ``search``) holding the points, their labels
        and the problem's rows (``y`` and ``rows`` then None): e.g. features that stay
        on Dask workers.
    y : ndarray (n_samples,)
        Labels in {-1, +1}.
    rows : ndarray of int, optional
        Restrict the problem to these rows of ``F`` (a cross-validation fold)
        without copying ``F``. Default: all rows.
    random_state : int or None
        Seeds the initial working set.
    sample_weight : ndarray (n_samples,), optional
        Non-negative weights of the hinge terms, one per row of ``F`` (default 1); rows of
        zero weight are not part of the problem. Only with ``F`` an array.
    **options
        The settings of :class:`ConstraintGenerationOptions` (``init_size``, ``tol``,
        ``aggregate_below``, ...).
    """

    def __init__(self, F, y, *, rows=None, random_state=0, sample_weight=None, **options):
        import highspy

        source = self._source(F, y, rows, sample_weight)
        opts = ConstraintGenerationOptions(**options)
        self.options = opts
        self.band_size = opts.band_size
        self.lp_solver = opts.lp_solver
        self.aggregate_below = opts.aggregate_below
        self.ipm_min_points = opts.ipm_min_points
        self.source = source
        self.shape = source.shape
        self.n_rows = source.n_rows
        self.init_size = opts.init_size
        self.max_add = opts.max_add
        self.tol = opts.tol
        self.prune_margin = opts.prune_margin
        self.max_rounds = opts.max_rounds
        self._rng = np.random.default_rng(random_state)
        self._hs = highspy
        lp_tol = opts.lp_tol

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
        self._weights = getattr(source, "weights", None)  # the points' weights (None: all 1)
        self._wW = None if self._weights is None else np.empty(0)  # the working points' weights
        self._D = 0
        self._fW = None  # decision values of the last solution at the working points
        self._ref = None  # the Reference of the aggregated set A (None: A is empty)
        self._g = np.zeros(1)  # sum_A y_i [1, F_i[:D]]
        self._nA = 0  # |A|
        self._wA = 0.0  # the sum of A's weights (|A| without weights)
        self._sample = None  # the exact LP of a sample (references of A)
        self.ray_rounds = 0  # rounds that added points of A along an infeasibility ray
        self.dissolved = 0  # times the aggregation was given up after a failed LP
        self.moves = 0  # times A's reference moved to a better solution within one D
        self.cold_restarts = 0  # aggregated LPs re-run from no basis after a failed warm run
        self.results: list[HingeLPResult] = []

    @staticmethod
    def _source(F, y, rows, sample_weight=None):
        """The row source: ``F`` itself (``y`` and ``rows`` None), or an :class:`InMemoryRows`
        over the checked ``F``, ``y``, ``rows`` and weights (rows of zero weight dropped)."""
        if all(hasattr(F, name) for name in ("search", "take", "columns")):
            if y is not None or rows is not None or sample_weight is not None:
                raise ValueError("a row source holds its labels, rows and weights: pass y=None, rows=None "
                                 "and sample_weight=None")
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
        if len(rows) and (rows[0] < 0 or rows[-1] >= F.shape[0]):
            raise ValueError("rows out of range")
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, len(y), who="the constraint generation")
            rows = rows[sample_weight[rows] > 0]
        if len(rows) == 0:
            raise ValueError("the hinge LP needs at least one sample (of positive weight)")
        return InMemoryRows(F, y, rows, sample_weight)

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
        wi = self.source.weights_of(idx) if self._weights is not None else None
        if aggregated is not None and aggregated.any():  # they leave A for W
            y_agg = yi[aggregated] if wi is None else yi[aggregated] * wi[aggregated]
            self._g = self._g - aggregate_sums(Fi[aggregated, :D], y_agg)
            self._nA -= int(aggregated.sum())
            self._wA -= float(aggregated.sum() if wi is None else wi[aggregated].sum())
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
        upper = np.ones(k) if wi is None else np.asarray(wi, dtype=float)
        h.addCols(k, -np.ones(k), np.zeros(k), upper, k * width, starts, ridx, vals.ravel())
        self._W = np.concatenate([self._W, idx])
        self._FW = np.asfortranarray(np.concatenate([self._FW, Fi]))
        self._yW = np.concatenate([self._yW, yi])
        if wi is not None:
            self._wW = np.concatenate([self._wW, wi])
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
        if self._wW is not None:
            self._wW = np.delete(self._wW, drop)

    def _run(self):
        """Solve the working-set LP: the warm HiGHS run (iteration-capped), then the exact
        KPM's path solver (:class:`kpm.hinge.lp_path.HingeLP`) if HiGHS fails;
        :class:`~kpm.LPSolverError` when both fail. Returns ``(duals, LP value, iterations)``,
        or None when the aggregated LP is infeasible (the caller adds points along a ray).
        The user guide (large scale, "When HiGHS fails") says why.
        """
        h = self._h
        use_ipm = self.lp_solver == "ipm" or (
            self.lp_solver == "auto" and len(self._W) >= self.ipm_min_points and self._D <= 10
        )
        h.setOptionValue("solver", "ipm" if use_ipm else "simplex")
        # a deterministic cap far above a healthy run's count (which is of the order of
        # the LP's rows + columns): a run from a degenerate basis can cycle
        h.setOptionValue("simplex_iteration_limit", 100 * (self._D + 1 + len(self._W)) + 10000)
        h.run()
        iters = int(h.getInfo().simplex_iteration_count)
        status = h.getModelStatus()
        M = self._hs.HighsModelStatus
        if status not in (M.kOptimal, M.kInfeasible, M.kUnboundedOrInfeasible) and self._ref is not None:
            # the aggregated LP's large right-hand side can end a warm dual simplex in a
            # 'Solve error' at high D; a cold run from no basis solves it
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
        # (alpha = w_i with weights)
        return pi, -float(info.objective_function_value) + self._wA, iters

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
        self._wA = float(found.aggregated_weight)
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
            ws = None if self._weights is None else self.source.weights_of(idx)
            self._sample = ConstraintGenerationHingeLP(Fs, ys, init_size=m0, tol=self.tol, random_state=0,
                                                       sample_weight=ws)
        return self._sample

    def _dissolve(self):
        """Give up the aggregation: A's points count as S (the searches add them back)."""
        self._ref, self._g, self._nA, self._wA = None, np.zeros(self._D + 1), 0, 0.0
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
        lp = HingeLP(self._yW, sample_weight=self._wW)
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
    F, y, rows, sample_weight, **options
        As for :class:`ConstraintGenerationHingeLP`.
    """

    floor = 0.0  # no duplicate handling: the least hinge loss is 0
    zero_level = 0.0
    restarts = 0

    def __init__(self, F, y=None, *, rows=None, sample_weight=None, **options):
        self.cg = ConstraintGenerationHingeLP(F, y, rows=rows, sample_weight=sample_weight, **options)
        self.n_cols = 0
        # the hinge risk's denominator: the points, or the sum of their weights
        self.n_samples = self.cg.n_rows if sample_weight is None else self.cg.source.total_weight()

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
