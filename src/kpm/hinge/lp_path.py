"""The hinge-loss LP path of the Kernel Projection Machine.

Blanchard, Massart, Vert & Zwald (2004), Section 3.

For every dimension ``D = 1..max_dim`` the KPM solves the linear programme

    min_{beta, b, xi}  sum_i xi_i
    s.t.  y_i (sum_{j<=D} beta_j Z_ij + b) >= 1 - xi_i,   xi_i >= 0,

where the columns of ``Z`` are the leading eigenvectors of the kernel matrix.
The subspaces are nested, so the optimum for D (padded with ``beta_{D+1} = 0``)
is feasible for D+1: the whole path is solved in **one** HiGHS model, adding one
column per D and resuming the primal simplex from the previous optimal basis.

Early stop (``stop_at_zero``): once the optimal hinge risk reaches its floor at
some D0, the padded D0 solution is feasible with that objective for every
D >= D0, hence optimal. The floor is 0, or, where duplicated samples carry both
labels (``groups``), the loss those force on *any* function: a point repeated
``n+`` times with label +1 and ``n-`` times with -1 costs at least
``min_f n+ max(0, 1 - f) + n- max(0, 1 + f) = 2 min(n+, n-)``. The path therefore
*defines* the solution for D >= D0 as the D0 solution and stops solving; every
D >= D0 has the same decision function, so no selection rule with ties broken
towards the smaller D can prefer a D > D0 (see :mod:`kpm.machine.selection`). Beyond the
floor the LPs only choose among optima, on ever worse conditioned bases (the
heavily duplicated breast_cancer and flare_solar folds reach it at D ~ 40-60,
far below their ranks).

Two solvers (``solver=``): ``'highs'`` keeps one HiGHS model per path
(:class:`IncrementalHingeLP`); ``'simplex'`` is the specialised simplex of
:mod:`kpm.hinge.simplex` (pivots on the kinks of the hinge loss, p x p basis,
compiled pivot loop), faster than HiGHS on the paths of ``benchmarks/bench_kpm.py``
(``docs/results/notes/code_measurements.md``); ``'auto'`` (the default) runs
the specialised simplex and, should it report numerical trouble, solves the path
again with HiGHS from that D on (:class:`HingeLP`; ``fallbacks`` counts it).

Where the path nears the floor on nearly separable data, the optimal coefficients
grow past 1e9 (the last points are separated only along directions on which they
differ by ~1e-9), the margins they give carry rounding errors of the size of the
solvers' tolerances, and every solver can fail (HiGHS: 'Unbounded', 'Solve error',
'Not Set' on an LP that is bounded). Two things follow. A candidate solution whose
hinge loss, recomputed from scratch, is within the rounding level of its margins of
the floor is optimal to that level, the floor being a lower bound
(:meth:`HingeLP.solve`). Otherwise the LP at that D cannot be solved in double
precision: ``hinge_lp_path(..., on_failure='stop')`` ends the path at the last solved
D and says why (``HingePath.failure``), and the KPM selects D among the solved ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kpm.blas_threads import small_blas
from kpm.hinge.highs import new_highs
from kpm.exceptions import LPSolverError
from kpm.validation import check_sample_weight

__all__ = [
    "LPSolverError",
    "HingePath",
    "HingeLP",
    "IncrementalHingeLP",
    "PathSolver",
    "PathGrower",
    "one_column_hinge_lp",
    "ONE_COLUMN_VERTEX_MAX_ROWS",
    "grow_path",
    "hinge_lp_path",
    "check_dims",
]

SOLVERS = ("auto", "simplex", "highs")
_STRATEGIES = {"auto": 0, "dual": 1, "primal": 4}  # HiGHS simplex_strategy codes


def _strategy_code(strategy):
    if strategy not in _STRATEGIES:
        raise ValueError(f"strategy must be 'primal', 'dual' or 'auto', got {strategy!r}")
    return _STRATEGIES[strategy]


@dataclass
class HingePath:
    r"""The LP solutions at the dimensions of a grid (by default every ``D = 1..max_dim``).

    Attributes
    ----------
    dims : ndarray of int (n_grid,)
        The grid of dimensions (increasing).
    coef : ndarray (n_solved, m)
        Row ``k`` holds ``beta`` for ``dims[k]`` (zeros beyond column ``dims[k]``).
        ``n_solved <= n_grid``: after an early stop at zero risk the remaining grid
        dimensions reuse the last solution (see the module docstring).
    intercept : ndarray (n_solved,)
    objective : ndarray (n_solved,)
        :math:`\sum_i \xi_i` at the optimum (``n *`` the empirical hinge risk).
    n_samples : int
    iterations : ndarray (n_solved,)
        Simplex iterations (HiGHS) or pivots (specialised simplex) spent on each
        solve (diagnostics).
    restarts : int
        Number of solves at which the warm start failed numerically and HiGHS
        solved the LP again from scratch (with presolve).
    fallbacks : int
        1 when the specialised simplex reported numerical trouble and HiGHS took
        over the path (``solver='auto'``), else 0.
    zero_level : float
        When the path stopped at a zero of the hinge risk found by the specialised
        simplex below the rounding level of its margins: that level (the reported
        last objective is the hinge loss as computed, at most this); else 0.
    floor : float
        The least objective any function attains on these samples (0, or the loss
        forced by duplicated samples with both labels; see the module docstring).
    failure : str or None
        Why the path ended early when no solver could solve the LP at the next grid
        dimension (``on_failure='stop'``); None when it ended at its last grid
        dimension or at the floor. Only the first :attr:`n_valid` grid dimensions
        are defined then.
    """

    dims: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    objective: np.ndarray
    n_samples: int
    iterations: np.ndarray
    restarts: int = 0
    fallbacks: int = 0
    zero_level: float = 0.0
    floor: float = 0.0
    failure: str | None = None

    @property
    def max_dim(self) -> int:
        return int(self.dims[-1])

    @property
    def n_solved(self) -> int:
        return len(self.intercept)

    @property
    def n_valid(self) -> int:
        """Grid dimensions at which the path is defined: all of them, unless it failed
        (then the solved ones; the padding beyond the floor is valid, beyond a failure not)."""
        return len(self.dims) if self.failure is None else self.n_solved

    @property
    def failed_dim(self) -> int | None:
        """The grid dimension at which no solver solved the LP (None if none failed)."""
        return None if self.failure is None else int(self.dims[self.n_solved])

    @property
    def last_dim_solved(self) -> int:
        return int(self.dims[self.n_solved - 1])

    @property
    def hinge_risk(self) -> np.ndarray:
        """Empirical hinge risk ``R_n(f_D)`` at every grid dimension."""
        return _extend(self.objective / self.n_samples, len(self.dims))

    def coef_at(self, D: int) -> tuple[np.ndarray, float]:
        """``(beta[:D], b)`` of a grid dimension D."""
        hit = np.flatnonzero(self.dims == D)
        if len(hit) == 0:
            raise ValueError(f"D must be one of the path's dimensions (1..{self.max_dim} on its grid), got {D}")
        k = min(int(hit[0]), self.n_solved - 1)
        beta = np.zeros(D)
        d = min(D, self.coef.shape[1])
        beta[:d] = self.coef[k, :d]
        return beta, float(self.intercept[k])

    def decision_values(self, Z_new) -> np.ndarray:
        """Decision values at every grid dimension on new features: (n_new, n_grid).

        ``Z_new`` holds the (extended) eigenvector features of the new points, at
        least ``coef.shape[1]`` columns.
        """
        Z_new = np.asarray(Z_new, dtype=float)
        m = self.coef.shape[1]
        F = Z_new[:, :m] @ self.coef.T + self.intercept[None, :]
        return _extend_cols(F, len(self.dims))


def _extend(v, length):
    if len(v) >= length:
        return v[:length]
    return np.concatenate([v, np.full(length - len(v), v[-1])])


def _extend_cols(F, length):
    if F.shape[1] >= length:
        return F[:, :length]
    return np.concatenate([F, np.repeat(F[:, -1:], length - F.shape[1], axis=1)], axis=1)


def check_dims(dims, max_dim: int) -> np.ndarray:
    """Validate a grid of dimensions: increasing positive ints ``<= max_dim``."""
    if dims is None:
        return np.arange(1, max_dim + 1)
    d = np.asarray(dims)
    if d.ndim != 1 or len(d) == 0 or not np.issubdtype(d.dtype, np.integer):
        raise ValueError(f"dims must be a non-empty 1-D array of ints, got {dims!r}")
    if np.any(np.diff(d) <= 0) or d[0] < 1 or d[-1] > max_dim:
        raise ValueError(f"dims must be strictly increasing ints in [1, {max_dim}], got {dims!r}")
    return d.astype(int)


def _status_error(h, D):
    status = h.getModelStatus()
    return LPSolverError(
        f"HiGHS did not solve the KPM linear programme for D={D}: model status "
        f"'{h.modelStatusToString(status)}' ({status})"
    )


class IncrementalHingeLP:
    """One HiGHS model of the hinge LP that grows one feature column at a time.

    ``add_columns(Zc)`` appends feature columns (the next eigenvectors);
    ``solve()`` re-optimises from the previous optimal basis (which stays primal
    feasible: the new columns enter at 0) and returns ``(beta, b, objective,
    iterations)``. Used by :func:`hinge_lp_path` and by the KPM's cross-validation,
    which advances the paths of all folds together.

    Parameters
    ----------
    y : ndarray (n,)
        Labels in {-1, +1}.
    weights : ndarray (n,), optional
        Costs of the slacks (row weights; default 1).
    strategy : {'primal', 'dual', 'auto'}
    time_limit, iteration_limit : optional
        HiGHS limits (hitting one raises :class:`LPSolverError`).
    restart_time_limit : float, default=60
        Time limit (seconds) of each HiGHS run when ``time_limit`` is not given (else the
        smaller of the two): on nearly separable, badly conditioned paths HiGHS can
        otherwise run for hours. A warm start that hits it is solved again from scratch
        (the cold re-solves, under the same limit); a cold re-solve that hits it raises
        :class:`LPSolverError`.
    """

    def __init__(self, y, *, weights=None, strategy="primal", time_limit=None, iteration_limit=None,
                 restart_time_limit=60.0):
        import highspy

        self._highspy = highspy
        y = np.asarray(y, dtype=float)
        if y.ndim != 1 or not np.all(np.isin(y, (-1.0, 1.0))):
            raise ValueError("y must be a 1-D array containing only -1 and +1")
        strat = _strategy_code(strategy)
        self.y = y
        self.n = len(y)
        self._weights = np.ones(self.n) if weights is None else np.asarray(weights, dtype=float)
        self.n_cols = 0
        self.restarts = 0
        self._strat = strat
        self._iteration_limit = iteration_limit
        self._inf = highspy.kHighsInf
        self._time_limit = time_limit
        self._restart_time_limit = float(restart_time_limit)
        self._columns = []
        self.candidates = []  # points of the failed runs of the last solve
        self._h = self._new_model(presolve="off", strategy=strat)

    def _new_model(self, presolve, strategy, solver=None):
        """A fresh HiGHS model holding the xi, b columns, the rows and the columns so far."""
        n, y, inf = self.n, self.y, self._inf
        h = new_highs()
        h.setOptionValue("presolve", presolve)
        h.setOptionValue("threads", 1)
        h.setOptionValue("simplex_strategy", strategy)
        if solver is not None:
            h.setOptionValue("solver", solver)
        h.setOptionValue("time_limit", self._run_time_limit())
        if self._iteration_limit is not None:
            h.setOptionValue("simplex_iteration_limit", int(self._iteration_limit))
        # columns 0..n-1: xi (cost 1, >= 0); column n: b (free)
        costs = np.concatenate([self._weights, [0.0]])
        lower = np.concatenate([np.zeros(n), [-inf]])
        upper = np.full(n + 1, inf)
        h.addCols(n + 1, costs, lower, upper, 0, np.zeros(n + 1, dtype=np.int32),
                  np.zeros(0, dtype=np.int32), np.zeros(0))
        # rows: xi_i + y_i b >= 1
        starts = np.arange(0, 2 * n, 2, dtype=np.int32)
        idx = np.empty(2 * n, dtype=np.int32)
        idx[0::2] = np.arange(n)
        idx[1::2] = n
        vals = np.empty(2 * n)
        vals[0::2] = 1.0
        vals[1::2] = y
        h.addRows(n, np.ones(n), np.full(n, inf), 2 * n, starts, idx, vals)
        rows = np.arange(n, dtype=np.int32)
        for col in self._columns:
            h.addCol(0.0, -inf, inf, n, rows, col)
        return h

    def add_columns(self, Zc):
        """Append feature columns ``Zc`` (n, k) as free coefficients ``beta``."""
        Zc = np.asarray(Zc, dtype=float)
        if Zc.ndim == 1:
            Zc = Zc[:, None]
        if Zc.shape[0] != self.n:
            raise ValueError(f"the new columns have {Zc.shape[0]} rows, expected {self.n}")
        if not np.all(np.isfinite(Zc)):
            raise ValueError("Z contains NaN or infinite values")
        rows = np.arange(self.n, dtype=np.int32)
        for j in range(Zc.shape[1]):
            col = self.y * Zc[:, j]
            self._columns.append(col)
            self._h.addCol(0.0, -self._inf, self._inf, self.n, rows, col)
        self.n_cols += Zc.shape[1]

    def _keep_candidate(self, h):
        """Keep the point a failed run ended at (``(beta, b)``, if HiGHS has a finite one):
        :class:`HingeLP` may still certify it as a solution at the floor."""
        x = np.asarray(h.getSolution().col_value, dtype=float)
        if x.shape == (self.n + 1 + self.n_cols,) and np.all(np.isfinite(x)):
            self.candidates.append((x[self.n + 1 :].copy(), float(x[self.n])))

    def _run_time_limit(self):
        """The time limit of every run: ``restart_time_limit``, or ``time_limit`` when smaller."""
        if self._time_limit is None:
            return self._restart_time_limit
        return min(self._restart_time_limit, float(self._time_limit))

    def solve(self, cold=False):
        """Optimise; return ``(beta, b, objective, iterations)``.

        ``cold``: this run starts from no basis (all columns added at once); every run,
        warm or cold, is bounded by the same time limit (``restart_time_limit``).
        """
        h, hs = self._h, self._highspy
        self.candidates = []
        h.run()
        optimal = hs.HighsModelStatus.kOptimal
        if h.getModelStatus() != optimal:
            self._keep_candidate(h)
        if h.getModelStatus() != optimal and self._iteration_limit is None:
            # the warm start ran into numerical trouble (HiGHS reports 'Unknown' or a
            # solve error on some highly degenerate paths): solve this D from scratch
            # in a fresh model -- dual simplex with presolve, then interior point with
            # crossover -- and continue warm from the fresh model's basis
            failed = [h.modelStatusToString(h.getModelStatus())]
            for solver in ("simplex", "ipm"):
                self.restarts += 1
                h = self._new_model(presolve="on", strategy=1, solver=solver)
                h.run()
                if h.getModelStatus() == optimal:
                    h.setOptionValue("presolve", "off")
                    h.setOptionValue("solver", "choose")
                    h.setOptionValue("simplex_strategy", self._strat)
                    self._h = h
                    break
                self._keep_candidate(h)
                failed.append(h.modelStatusToString(h.getModelStatus()))
            else:
                raise LPSolverError(
                    f"HiGHS did not solve the KPM linear programme for D={self.n_cols}: "
                    f"model status {' / '.join(repr(f) for f in failed)} (warm start, cold "
                    "dual simplex, interior point)"
                )
        if h.getModelStatus() != optimal:
            raise _status_error(h, self.n_cols)
        x = np.asarray(h.getSolution().col_value)
        info = h.getInfo()
        return (
            x[self.n + 1 :].copy(),
            float(x[self.n]),
            max(float(info.objective_function_value), 0.0),
            int(info.simplex_iteration_count),
        )


#: Largest rounding level of the margins (per sample) at which a candidate solution can
#: still be certified at the floor: beyond it the computed hinge loss means nothing.
_MAX_MARGIN_ROUNDING = 1e-6


class HingeLP:
    r"""The hinge LP path with the solver of choice (see the module docstring).

    Same interface as :class:`IncrementalHingeLP` (``add_columns``, ``solve``,
    ``n_cols``, ``restarts``) plus ``fallbacks``, ``floor`` and :meth:`at_floor`. ``strategy``,
    ``time_limit`` and ``iteration_limit`` are HiGHS options (with ``'auto'`` they
    apply to the fallback).

    ``groups`` (one label per row) marks duplicated samples, whose feature rows are
    identical: the rows of a group with the same label are merged into one row
    weighted by their number, an equivalent LP with fewer rows and none of the
    degeneracy of identical kinks. The added columns are checked to be constant on
    each merged set. A group with both labels sets the ``floor`` of the objective:
    ``2 min(n+, n-)`` (see the module docstring).

    ``sample_weight`` (non-negative) weighs the slacks: the objective is
    :math:`\sum_i w_i \xi_i`. Rows of zero weight leave the LP, merged rows weigh the sum of
    their weights (an integer weight is the same LP as that many copies of the row), and
    the floor is ``2 min(W+, W-)`` over the weights ``W+-`` of a group's labels.
    """

    def __init__(self, y, *, solver="auto", groups=None, strategy="primal", time_limit=None,
                 iteration_limit=None, sample_weight=None):
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
        _strategy_code(strategy)  # validated here: HiGHS may only be built on a fallback
        self._highs_options = {"strategy": strategy, "time_limit": time_limit, "iteration_limit": iteration_limit}
        y = np.asarray(y, dtype=float)
        self.n = len(y)  # samples (the LP may hold fewer, merged rows)
        self._rows = self._group_rows = self._group_inverse = None
        weights = None
        self.floor = 0.0
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, len(y), who="the hinge LP")
        if groups is not None:
            groups = np.asarray(groups).ravel()
            if groups.shape != y.shape:
                raise ValueError(f"groups must have one entry per sample ({len(y)}), got {groups.shape}")
            _, g_first, g = np.unique(groups, return_index=True, return_inverse=True)
            g = g.ravel()
            if len(g_first) < len(g):
                self._group_rows, self._group_inverse = g_first, g
        if sample_weight is not None:
            # rows of zero weight leave the LP; the others (merged per group and label) are weighted
            g = np.arange(self.n) if groups is None else g
            c = sample_weight
            n_pos = np.bincount(g, weights=np.where(y > 0, c, 0.0))
            n_neg = np.bincount(g, weights=np.where(y < 0, c, 0.0))
            self.floor = float(2.0 * np.minimum(n_pos, n_neg).sum())
            live = np.flatnonzero(c > 0)
            keys = 2 * g[live] + (y[live] > 0)
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            self._rows = live[first]
            y, weights = y[self._rows], np.bincount(inverse.ravel(), weights=c[live])
        elif groups is not None:
            n_pos = np.bincount(g, weights=(y > 0).astype(float))
            n_neg = np.bincount(g, weights=(y < 0).astype(float))
            self.floor = float(2.0 * np.minimum(n_pos, n_neg).sum())
            keys = 2 * g + (y > 0)
            _, first, counts = np.unique(keys, return_index=True, return_counts=True)
            if counts.max() > 1:
                self._rows = first
                y, weights = y[first], counts.astype(float)
        self.y = y
        self.solver = solver
        self.fallbacks = 0
        self._weights = weights
        self._cols = []  # columns the HiGHS fallback has not seen yet
        self._all_cols = []  # every (merged) column, for checking candidate solutions
        self._last = None  # the last reported (beta, b)
        self._rescue_level = 0.0
        self._failed_candidates = []  # points the failed HiGHS fallbacks ended at
        if solver == "highs":
            self._lp = IncrementalHingeLP(y, weights=weights, **self._highs_options)
        else:
            from kpm.hinge.simplex import HingeSimplex

            self._lp = HingeSimplex(y, weights=weights)

    @property
    def n_cols(self):
        return self._lp.n_cols

    @property
    def restarts(self):
        return self._lp.restarts

    @property
    def zero_level(self):
        """Rounding level of the margins of the last solution when it was accepted as
        reaching the floor at that level (the specialised simplex's zero of the hinge
        loss, or a solution checked after every solver failed); else 0."""
        return max(getattr(self._lp, "zero_level", 0.0), self._rescue_level)

    def at_floor(self, objective, zero_tol=1e-9):
        """Has ``objective`` (from the last solve) reached the floor of the hinge risk?

        ``objective <= floor + zero_tol * n`` (the floor is 0 unless duplicated
        samples carry both labels), or ``objective <= floor + zero_level``: within the
        rounding level of the margins of a solution accepted at that level (near
        separability, where coefficients reach 1e10, the computed hinge loss of an
        exact zero is rounding noise of that size).
        """
        return objective <= self.floor + max(zero_tol * self.n, self.zero_level)

    def add_columns(self, Zc):
        Zc = np.asarray(Zc, dtype=float).reshape(self.n, -1)
        if self._group_rows is not None and not np.array_equal(Zc[self._group_rows][self._group_inverse], Zc):
            raise ValueError("the feature rows of duplicated samples (groups) must be identical")
        if self._rows is not None:
            Zc = Zc[self._rows]
        self._lp.add_columns(Zc)
        self._all_cols.append(Zc)
        if not isinstance(self._lp, IncrementalHingeLP):
            self._cols.append(Zc)

    def solve(self):
        """Optimise; return ``(beta, b, objective, iterations)``.

        Raises
        ------
        LPSolverError
            When every solver failed and no candidate solution (the previous
            dimension's, padded, or a point a failed HiGHS run ended at) is at the
            floor of the hinge loss to the rounding level of its margins. On one column
            (and at most :data:`ONE_COLUMN_VERTEX_MAX_ROWS` rows) the LP is then solved
            exactly on its vertices instead (:func:`one_column_hinge_lp`).
        """
        self._rescue_level = 0.0
        self._failed_candidates = []
        try:
            result = self._solve_exact()
        except LPSolverError as exc:
            Z = np.hstack(self._all_cols)
            if Z.shape[1] == 1 and len(self.y) <= ONE_COLUMN_VERTEX_MAX_ROWS:
                # two unknowns: the exact optimum among the vertices (e.g. a column of values
                # 1e-9 apart, whose optimal coefficient of 1e9 fails the solvers' tolerances)
                result = one_column_hinge_lp(Z[:, 0], self.y, self._weights)
            else:
                result = self._floor_candidate(exc)
        self._last = result[:2]
        return result

    def _floor_candidate(self, exc):
        """After every solver failed: a candidate at the floor to its rounding level.

        Near the floor the optimal coefficients grow to 1e9 and more, the margins they
        give are known to ~1e-7 only, and the solvers' fixed tolerances fail. The floor
        is a proven lower bound of the objective, so a candidate whose hinge loss,
        computed from scratch, is within the rounding level of its margins of the floor
        is optimal to that level.
        """
        Z = np.hstack(self._all_cols)
        cands = list(getattr(self._lp, "candidates", [])) + self._failed_candidates
        if self._last is not None:
            beta, b = self._last
            cands.append((np.concatenate([beta, np.zeros(Z.shape[1] - len(beta))]), b))
        c = np.ones(len(self.y)) if self._weights is None else self._weights
        best = None
        for beta, b in cands:
            beta = np.asarray(beta, dtype=float)
            if len(beta) > Z.shape[1]:
                continue
            # a candidate of a smaller D (a failed run of the path replayed from D = 1): its
            # coefficients on the columns added since are 0, a point of this D's feasible set
            beta = np.concatenate([beta, np.zeros(Z.shape[1] - len(beta))])
            loss = float(c @ np.maximum(0.0, 1.0 - self.y * (Z @ beta + b)))
            level = 1e-15 * float(c @ (np.abs(Z) @ np.abs(beta) + abs(b)))
            if level > _MAX_MARGIN_ROUNDING * self.n:
                continue  # margins too uncertain for any statement about the loss
            if loss <= self.floor + max(1e-9 * self.n, level) and (best is None or loss < best[2]):
                best = (beta, b, loss, level)
        if best is None:
            raise exc
        self._rescue_level = best[3]
        return best[0].copy(), float(best[1]), best[2], 0

    def _solve_exact(self):
        if isinstance(self._lp, IncrementalHingeLP):
            return self._lp.solve()
        from kpm.hinge.simplex import SimplexFailure

        try:
            return self._lp.solve()
        except SimplexFailure as exc:
            if self.solver == "simplex":
                raise LPSolverError(
                    f"the specialised simplex did not solve the KPM linear programme for "
                    f"D={self._lp.n_cols}: {exc} (solver='auto' falls back to HiGHS)"
                ) from exc
            self.fallbacks += 1
            cols = np.hstack(self._cols)
            lp = IncrementalHingeLP(self.y, weights=self._weights, **self._highs_options)
            lp.add_columns(cols)
            try:
                result = lp.solve(cold=True)
            except LPSolverError as cold_exc:
                cold_candidates = lp.candidates
                # where the LP reaches the floor of its hinge risk the bases turn rank
                # deficient and a cold HiGHS solve can fail too ('Not Set', flare_solar):
                # replay the warm-started HiGHS path from D = 1, which walks in from the
                # nondegenerate side
                lp = IncrementalHingeLP(self.y, weights=self._weights, **self._highs_options)
                try:
                    for j in range(cols.shape[1]):
                        lp.add_columns(cols[:, j])
                        result = lp.solve()
                except LPSolverError as replay_exc:
                    self._failed_candidates = lp.candidates + cold_candidates
                    raise LPSolverError(
                        f"no solver solved the KPM linear programme for D={cols.shape[1]}: "
                        f"the specialised simplex ({exc}), HiGHS from scratch ({cold_exc}) "
                        f"and the HiGHS path replayed from D=1 ({replay_exc})"
                    ) from replay_exc
            self._lp, self._cols = lp, []
            return result



class PathSolver(Protocol):
    """What :class:`PathGrower` needs of the solver of one path (:class:`HingeLP` is one).

    A path solver holds the hinge LP over the feature columns added so far and
    re-optimises after each addition; another solver (constraint generation over the
    points, say) plugs into the same loop by offering these members.
    """

    n_cols: int  #: feature columns added so far
    floor: float  #: least objective any function attains (see the module docstring)
    zero_level: float  #: rounding level at which the last solution was accepted at the floor
    fallbacks: int  #: times the solver handed the path to another solver
    restarts: int  #: warm starts that failed and were solved again from scratch

    def add_columns(self, Zc) -> None:
        """Append feature columns ``Zc`` (n, k)."""

    def solve(self) -> tuple[np.ndarray, float, float, int]:
        """Optimise; ``(beta, b, objective, iterations)``, or raise :class:`LPSolverError`."""

    def at_floor(self, objective: float, zero_tol: float = 1e-9) -> bool:
        """Has ``objective`` (of the last solve) reached the floor of the hinge risk?"""


class PathGrower:
    """Grows one hinge-LP path along increasing dimensions: the one loop behind
    :func:`hinge_lp_path` and the KPM's cross-validation, which advances the paths of
    all folds together, one dimension at a time.

    Each :meth:`step` adds the feature columns up to D, solves, and records the
    solution. The path stops at the floor of the hinge risk (``stop_at_zero``:
    :attr:`at_floor`; every larger D has the same solution, see the module docstring)
    or where no solver solves the LP (:attr:`failure`).

    Parameters
    ----------
    lp : PathSolver
        The solver of this path (e.g. :class:`HingeLP`), holding no columns yet.
    columns : ndarray (n, m)
        The feature columns in order (the eigenvectors ``V_1..V_m``); :meth:`step`
        hands the solver ``columns[:, n_cols:D]``.
    n_samples : int, optional
        Samples of the LP (default ``len(columns)``): a solver that holds the rows of
        a subset of ``columns`` (a cross-validation fold, say) gets all of them.
    stop_at_zero : bool, default=True
    zero_tol : float, default=1e-9
    on_failure : {'raise', 'stop'}, default='stop'
        When no solver solves the LP at some D after the first: raise, or end the path
        there (:attr:`failure` says why). A failure at the first D always raises.
    """

    def __init__(self, lp: PathSolver, columns, *, n_samples=None, stop_at_zero=True, zero_tol=1e-9,
                 on_failure="stop"):
        self.lp = lp
        self._columns = columns
        self.n_samples = len(columns) if n_samples is None else int(n_samples)
        self._stop_at_zero = stop_at_zero
        self._zero_tol = zero_tol
        self._raise = on_failure == "raise"
        self.dims: list[int] = []  # the dimensions solved
        self._coefs: list[np.ndarray] = []
        self._intercepts: list[float] = []
        self._objectives: list[float] = []
        self._iterations: list[int] = []
        self.at_floor = False
        self.zero_level = 0.0
        self.error: str | None = None  # the solvers' message when a step failed
        self.failure: str | None = None  # the same, with the size of the last coefficients

    @property
    def last(self) -> tuple[np.ndarray, float]:
        """``(beta, b)`` of the last dimension solved."""
        return self._coefs[-1], self._intercepts[-1]

    def step(self, D: int) -> bool:
        """Add the columns up to D and solve there; False when no solver solved it."""
        lp = self.lp
        if lp.n_cols < D:
            lp.add_columns(self._columns[:, lp.n_cols : D])
        try:
            beta, b, obj, it = lp.solve()
        except LPSolverError as exc:
            if self._raise or not self.dims:
                raise
            self.error = str(exc)
            self.failure = (
                f"{exc} [the largest coefficient at D={self.dims[-1]} was "
                f"{np.max(np.abs(self._coefs[-1]), initial=abs(self._intercepts[-1])):.2g}]"
            )
            return False
        self.dims.append(D)
        self._coefs.append(beta)
        self._intercepts.append(b)
        self._objectives.append(obj)
        self._iterations.append(it)
        if self._stop_at_zero and lp.at_floor(obj, self._zero_tol):
            self.at_floor = True
            n = self.n_samples
            self.zero_level = 0.0 if obj <= lp.floor + self._zero_tol * n else float(lp.zero_level)
        return True

    def path(self, grid) -> HingePath:
        """The solutions as a :class:`HingePath` on ``grid`` (whose first dimensions were solved)."""
        n_solved = len(self.dims)
        coef = np.zeros((n_solved, self.dims[-1]))
        for k, beta in enumerate(self._coefs):
            coef[k, : self.dims[k]] = beta
        return HingePath(
            dims=grid,
            coef=coef,
            intercept=np.asarray(self._intercepts, dtype=float),
            objective=np.asarray(self._objectives, dtype=float),
            n_samples=self.n_samples,
            iterations=np.asarray(self._iterations, dtype=np.int64),
            restarts=self.lp.restarts,
            fallbacks=self.lp.fallbacks,
            zero_level=self.zero_level,
            floor=self.lp.floor,
            failure=self.failure,
        )


def grow_path(lp: PathSolver, columns, grid, *, n_samples=None, stop_at_zero=True, zero_tol=1e-9,
              on_failure="stop") -> HingePath:
    """The path of ``lp`` on the dimensions of ``grid``: a :class:`PathGrower` stepped
    along the grid until the floor (``stop_at_zero``) or a dimension no solver solved."""
    grower = PathGrower(lp, columns, n_samples=n_samples, stop_at_zero=stop_at_zero, zero_tol=zero_tol,
                        on_failure=on_failure)
    with small_blas(int(grid[-1]) + 1):  # the simplex's (D + 1) x (D + 1) bases
        for D in grid:
            if not grower.step(int(D)) or grower.at_floor:
                break
    return grower.path(grid)


#: Rows up to which the one-column hinge LP falls back on its vertices after every solver
#: failed (:func:`one_column_hinge_lp`: about ``2 n^3`` operations, a second at 500 rows).
ONE_COLUMN_VERTEX_MAX_ROWS = 500

#: Candidate points x rows evaluated at once by :func:`one_column_hinge_lp`.
_VERTEX_BLOCK = 2**21


def one_column_hinge_lp(z, y, weights=None):
    """The hinge LP ``min_{beta, b} sum_i c_i max(0, 1 - y_i (beta z_i + b))`` on one column,
    exactly: ``([beta], b, objective, 0)``.

    The objective is convex and piecewise linear in its two unknowns, with kinks along the
    lines ``b = y_i - beta z_i``; its minimum is attained at a vertex, where two kinks of
    different slopes cross (``z_i != z_j``), or -- all ``z_i`` equal -- at ``beta = 0`` on a
    kink ``b = y_i``. Every such point is evaluated, whatever the scale of ``beta``: the LP
    solvers' tolerances fail where the optimum separates values ``1e-9`` apart with
    ``beta ~ 1e9``.
    """
    z = np.asarray(z, dtype=float)
    y = np.asarray(y, dtype=float)
    c = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)

    def objective(beta, b):  # (k,) candidate points -> (k,) objectives
        return np.maximum(0.0, 1.0 - y[None, :] * (np.multiply.outer(beta, z) + b[:, None])) @ c

    labels = np.unique(y)
    obj = objective(np.zeros(len(labels)), labels)
    k = int(np.argmin(obj))
    best = (0.0, float(labels[k]), float(obj[k]))
    keys = np.unique(np.column_stack([z, y]), axis=0)  # one kink per (value, label)
    i, j = np.triu_indices(len(keys), k=1)
    keep = keys[i, 0] != keys[j, 0]  # kinks of different slopes cross once
    i, j = i[keep], j[keep]
    step = max(1, _VERTEX_BLOCK // max(len(y), 1))
    for start in range(0, len(i), step):
        a, b_ = i[start:start + step], j[start:start + step]
        beta = (keys[a, 1] - keys[b_, 1]) / (keys[a, 0] - keys[b_, 0])
        b = keys[a, 1] - beta * keys[a, 0]
        obj = objective(beta, b)
        k = int(np.argmin(obj))
        if obj[k] < best[2]:
            best = (float(beta[k]), float(b[k]), float(obj[k]))
    return np.array([best[0]]), best[1], best[2], 0


def _check_path_inputs(Z, y, max_dim, dims, on_failure):
    """``Z`` and ``y`` as float arrays and the grid of dimensions, validated."""
    if on_failure not in ("raise", "stop"):
        raise ValueError(f"on_failure must be 'raise' or 'stop', got {on_failure!r}")
    Z = np.asarray(Z, dtype=float)
    y = np.asarray(y, dtype=float)
    if Z.ndim != 2 or y.ndim != 1 or len(y) != len(Z):
        raise ValueError(f"Z must be (n, m) and y (n,); got {Z.shape} and {y.shape}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must contain only -1 and +1")
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z contains NaN or infinite values")
    m = Z.shape[1]
    if max_dim is None:
        max_dim = m
    if not 1 <= int(max_dim) <= m:
        raise ValueError(f"max_dim must be in [1, {m}] (the number of columns of Z), got {max_dim}")
    return Z, y, check_dims(dims, int(max_dim))


def hinge_lp_path(
    Z,
    y,
    max_dim: int | None = None,
    *,
    dims=None,
    stop_at_zero: bool = True,
    zero_tol: float = 1e-9,
    solver: str = "auto",
    groups=None,
    strategy: str = "primal",
    time_limit: float | None = None,
    iteration_limit: int | None = None,
    on_failure: str = "raise",
    sample_weight=None,
) -> HingePath:
    """Solve the KPM hinge-loss LP for ``D = 1..max_dim`` with warm starts.

    Parameters
    ----------
    Z : ndarray (n, m)
        Feature columns in order (the eigenvectors ``V_1..V_m``).
    y : ndarray (n,)
        Labels in {-1, +1}.
    max_dim : int, optional
        Last dimension (default ``m``).
    dims : array of int, optional
        Solve only at these dimensions (increasing, ``<= max_dim``; default every
        ``D = 1..max_dim``). Between two of them the columns are added without solving.
    stop_at_zero : bool, default=True
        Stop once the optimal objective reaches its floor, to ``zero_tol * n``: 0,
        or with ``groups`` the loss forced by duplicated samples with both labels
        (see the module docstring).
    zero_tol : float
        Tolerance on the hinge risk for the early stop.
    solver : {'auto', 'simplex', 'highs'}, default='auto'
        The specialised simplex (with a HiGHS fallback for ``'auto'``) or HiGHS.
    groups : array (n,), optional
        Duplicated samples (equal labels = identical rows of ``Z``): merged into
        weighted rows, an equivalent LP (see :class:`HingeLP`).
    strategy : {'primal', 'dual', 'auto'}
        HiGHS simplex strategy for the warm-started re-solves. Adding a column keeps
        the previous basis primal feasible, so ``'primal'`` is the natural choice.
    time_limit, iteration_limit : optional
        Passed to HiGHS (a limit hit raises :class:`LPSolverError`); HiGHS options,
        used by ``solver='highs'`` and the fallback of ``'auto'``.
    on_failure : {'raise', 'stop'}, default='raise'
        When no solver solves the LP at some grid dimension: raise, or end the path
        at the last solved dimension and record why in ``HingePath.failure``.
    sample_weight : array (n,), optional
        Non-negative weights of the slacks (see :class:`HingeLP`); the path's
        ``hinge_risk`` is then the weighted mean (``n_samples``: the sum of the weights).

    Returns
    -------
    HingePath

    Raises
    ------
    LPSolverError
        With ``on_failure='raise'``, when no solver returns an optimal solution (the
        message carries their statuses), e.g. ``solver='simplex'`` reporting
        numerical trouble.
    """
    Z, y, grid = _check_path_inputs(Z, y, max_dim, dims, on_failure)
    lp = HingeLP(y, solver=solver, groups=groups, strategy=strategy, time_limit=time_limit,
                 iteration_limit=iteration_limit, sample_weight=sample_weight)
    n_samples = None if sample_weight is None else float(np.sum(sample_weight))
    return grow_path(lp, Z, grid, n_samples=n_samples, stop_at_zero=stop_at_zero, zero_tol=zero_tol,
                     on_failure=on_failure)
