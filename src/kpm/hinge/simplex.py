"""A specialised exact solver for the KPM hinge-loss LP path (Blanchard, Massart, Vert & Zwald 2004, Section 3).

The LP of dimension D,

    min_{w}  f(w) = sum_i max(0, 1 - a_i^T w),   a_i = y_i (1, Z_i1, ..., Z_iD),

has ``p = D + 1`` free variables and ``n >> p`` kinks. A generic LP solver
(HiGHS) sees n rows and n slack columns; after every added feature column it
refactorises a basis whose dense part is p x p and takes 50-70 primal simplex
iterations, one breakpoint each. This module solves the same LP by the simplex
method *on the kinks* (the Barrodale-Roberts idea for L1 regression, written for
the one-sided hinge):

* a vertex is a set ``B`` of p rows with ``a_i^T w = 1`` (the "basis"), kept with
  the explicit inverse of ``A_B`` (p x p, Sherman-Morrison updates, refactorised
  every ``refactor_every`` pivots; the vertex itself is recomputed from it with a
  step of iterative refinement whenever it is reported);
* optimality: with ``g`` the sum of the violated rows (``a_i^T w < 1``), the
  multipliers ``t = -A_B^{-T} g`` certify optimality when ``0 <= t <= 1``; this
  is the LP's dual feasibility (``t_i`` is the dual value of row i);
* a pivot drops a row whose multiplier is out of ``[0, 1]`` and moves along the
  edge that frees it; the line search passes *every* breakpoint at which the
  piecewise-linear objective still decreases (a "long step", one pivot for what
  costs a generic primal simplex one iteration per breakpoint), O(n p) per pivot;
* a new feature column adds a free variable: the current vertex becomes a line,
  which is searched the same way to reach a vertex of the larger problem, and the
  pivots resume from there (the warm start);
* degeneracy: the pivots run on the right-hand side ``1 + eps_i`` (``eps_i`` up to
  1e-7, fixed seed), which breaks the ties between kinks (the intercept-only start
  puts a whole class on its kink; duplicated points share kinks) that make a plain
  simplex stall or cycle. Every reported solution is the vertex of the final basis
  for the exact right-hand side, checked for optimality there (rows on their kink
  may take either status); if the check fails, pivots continue on the exact problem.

The pivot loop is compiled with numba (:mod:`kpm.hinge.simplex_loops`); the rest is
numpy.

It is exact in the same sense as the simplex method: it stops at a vertex that
satisfies the optimality conditions to ``tol``; :func:`kpm.hinge.lp_path.hinge_lp_path`
validates it against HiGHS in the tests (objectives equal to 1e-9 along whole
paths), and any numerical trouble (a singular basis, a pivot cap) raises
:class:`SimplexFailure` so that the caller can fall back to HiGHS.
"""

from __future__ import annotations

import numpy as np

from kpm.hinge.simplex_loops import OPTIMAL, SMALL_PIVOT, UNBOUNDED, move, pivot_loop, ratio_test

__all__ = ["HingeSimplex", "SimplexFailure"]


class SimplexFailure(RuntimeError):
    """The specialised solver hit numerical trouble; solve this path with HiGHS instead."""


class HingeSimplex:
    """The hinge LP of :mod:`kpm.hinge.lp_path`, grown one feature column at a time.

    Same interface as :class:`kpm.hinge.lp_path.IncrementalHingeLP`: ``add_columns(Zc)``
    then ``solve() -> (beta, b, objective, pivots)``.

    Parameters
    ----------
    y : ndarray (n,)
        Labels in {-1, +1}.
    weights : ndarray (n,), optional
        Positive row weights: the loss is ``sum_i weights_i max(0, 1 - a_i^T w)``
        (duplicated rows merged into one; default all 1).
    tol : float, default=1e-9
        Optimality tolerance on the multipliers; rows within ``10 tol`` of their
        kink count as tied in the final check.
    refactor_every : int, default=100
        Pivots between two refactorisations of the basis inverse.
    max_pivots : int, optional
        Pivots allowed per solve before :class:`SimplexFailure` (default ``10 (n + p)``).
    perturbation : float, default=1e-7
        Size of the right-hand-side perturbation of the pivoting phase.
    """

    def __init__(self, y, *, weights=None, tol=1e-9, refactor_every=100, max_pivots=None, perturbation=1e-7):
        y = np.asarray(y, dtype=float)
        if y.ndim != 1 or len(y) < 1 or not np.all(np.isin(y, (-1.0, 1.0))):
            raise ValueError("y must be a 1-D array containing only -1 and +1")
        n = len(y)
        self.y = y
        self.n = n
        if weights is None:
            self._c = np.ones(n)
        else:
            self._c = np.asarray(weights, dtype=float)
            if self._c.shape != (n,) or not np.all(np.isfinite(self._c)) or np.any(self._c <= 0):
                raise ValueError("weights must be n positive finite numbers")
        self.tol = float(tol)
        self._tie_tol = 10.0 * self.tol
        self.refactor_every = int(refactor_every)
        self.max_pivots = max_pivots
        self.n_cols = 0  # feature columns added (the caller's D)
        self.restarts = 0  # interface parity with IncrementalHingeLP
        self._pos = []  # position of each feature column in A (-1: dependent, beta = 0)
        self._pending = []  # added columns not yet brought into the vertex
        self._last = None  # the solution reported last (w over the columns then)
        self.zero_level = 0.0
        self._A = np.empty((n, 16))
        self._A[:, 0] = y  # the intercept column
        self._p = 1
        self._row_max = np.ones(n)  # max_j |A_ij| per row, for the rounding bound
        self._row_max_sum = float(self._c.sum())
        # the pivots run on the right-hand side 1 + eps_i (eps_i ~ U(0, perturbation),
        # fixed seed): ties between kinks (the intercept-only start puts a whole class
        # on its kink; duplicated points) make the plain simplex stall or cycle. The
        # exact right-hand side is restored for the final check of every solve.
        rng = np.random.default_rng(0)
        self._rhs_work = 1.0 + float(perturbation) * rng.random(n)
        self._probe = rng.uniform(-1.0, 1.0, size=n + 2)  # for the inverse check
        self._rhs = self._rhs_work
        b = 1.0 if np.sum(self._c[y > 0]) >= np.sum(self._c[y < 0]) else -1.0
        i0 = int(np.flatnonzero(y == b)[0])
        self._B = np.array([i0], dtype=np.int64)
        # row status: +1 violated (counted in g), -1 satisfied, 0 in the basis
        self._st = np.full(n, -1.0)
        self._st[i0] = 0.0
        self._refresh(invert=True)

    # ----------------------------------------------------------------- state
    def _Ap(self):
        return self._A[:, : self._p]

    def _refresh(self, invert=False, keep_ties=False):
        """Recompute w, residuals, row status and ``g`` from the basis.

        ``invert`` refactorises the basis inverse (O(p^3)); otherwise one step of
        iterative refinement on ``A_B w = rhs_B`` (O(p^2)). ``keep_ties``: rows
        within ``10 tol`` of their kink keep their status (both are valid
        subgradients there).
        """
        if invert:
            AB = self._Ap()[self._B]
            try:
                self._set_inverse(np.linalg.inv(AB.T).T)  # Fortran order: contiguous columns
            except np.linalg.LinAlgError as exc:
                raise SimplexFailure("the basis became singular") from exc
            self._since_refactor = 0
        self._w, self._r, self._st, self._g = self._vertex(self._rhs, keep_ties)

    def _set_inverse(self, Binv):
        """The basis inverse and its squared column norms (the steepest-edge weights)."""
        self._Binv = Binv
        self._norms = np.einsum("ij,ij->j", Binv, Binv)

    def _vertex(self, rhs, keep_ties):
        """The basis's vertex for right-hand side ``rhs``: ``(w, r, status, g)``."""
        Ap = self._Ap()
        AB = Ap[self._B]
        rhs_B = rhs[self._B]
        w = self._Binv @ rhs_B
        w += self._Binv @ (rhs_B - AB @ w)  # one step of iterative refinement
        if not np.all(np.isfinite(w)):
            raise SimplexFailure("the basis is numerically singular")
        self._margins = Ap @ w  # kept for the loss of this vertex (rhs = 1)
        r = self._margins - rhs
        r[self._B] = 0.0
        st = np.where(r < 0.0, 1.0, -1.0)
        if keep_ties:
            tied = (np.abs(r) <= self._tie_tol) & (self._st != 0.0)
            st[tied] = self._st[tied]
        st[self._B] = 0.0
        return w, r, st, ((st > 0) * self._c) @ Ap

    def _grow(self, col):
        if self._p == self._A.shape[1]:
            A = np.empty((self.n, 2 * self._A.shape[1]))
            A[:, : self._p] = self._A[:, : self._p]
            self._A = A
        self._A[:, self._p] = col
        self._p += 1
        np.maximum(self._row_max, np.abs(col), out=self._row_max)
        self._row_max_sum = float(self._row_max @ self._c)

    # ------------------------------------------------------------------ pivots
    def _add_column_vertex(self, col):
        """Bring a new free variable into the vertex (the warm start)."""
        Ap_old = self._Ap()
        u = self._Binv @ col[self._B]  # the new variable moves w by -u per unit
        q = col - Ap_old @ u
        q[self._B] = 0.0
        if not np.any(np.abs(q) > 1e-10 * max(1.0, float(np.max(np.abs(col))))):
            return False  # the column is in the span of the others on every row
        cv = (self._st > 0) * self._c
        gq = -float(q @ cv)  # slope along +q counting violated rows
        cand = np.empty(self.n, dtype=np.int64)
        ratio = np.empty(self.n)
        best = None
        for s in (1.0, -1.0):
            j, alpha, crossed = ratio_test(self._st, s * q, self._r, self._c, s * gq, cand, ratio)
            if j >= 0 and (best is None or s * gq < best[0]):
                best = (s * gq, s, j, alpha, crossed)
        if best is None:
            return False
        _, s, j, alpha, crossed = best
        self._g = np.append(self._g, float(col @ cv))
        self._grow(col)
        move(self._A, self._p, self._st, self._r, self._g, self._c, alpha, s * q, crossed, j)
        self._w = np.append(self._w - alpha * s * u, alpha * s)
        # bordered inverse of [[A_B, c_B], [a_j, c_j]]; its Schur complement is q_j
        sigma = q[j]
        v = Ap_old[j] @ self._Binv
        p = self._p
        Binv = np.empty((p, p), order="F")
        Binv[:-1, :-1] = self._Binv + np.outer(u / sigma, v)
        Binv[:-1, -1] = -u / sigma
        Binv[-1, :-1] = -v / sigma
        Binv[-1, -1] = 1.0 / sigma
        self._set_inverse(Binv)
        self._B = np.append(self._B, j)
        self._since_refactor += 1
        return True

    def _run(self, cap, pivots):
        """Pivot to an optimal vertex (compiled loop); refactorise every ``refactor_every``.

        Raises :class:`SimplexFailure` past ``cap`` pivots in this solve, or when a
        pivot fails (no breakpoint, tiny pivot element) again right after a
        refactorisation.
        """
        retried = False
        while True:
            budget = min(max(1, self.refactor_every - self._since_refactor), cap + 1 - pivots)
            done, code = pivot_loop(
                self._A, self._p, self._Binv, self._B, self._st, self._r, self._g,
                self._w, self._norms, self._c, self.tol, budget,
            )
            pivots += done
            self._since_refactor += done
            if code == OPTIMAL:
                return pivots
            if code in (UNBOUNDED, SMALL_PIVOT):
                # rounding in the updated inverse or in g: refactorise and retry once
                if retried:
                    what = "unbounded edge" if code == UNBOUNDED else "pivot element ~ 0"
                    raise SimplexFailure(f"{what} in the hinge LP after a refactorisation (numerical trouble)")
                retried = True
                self._refresh(invert=True, keep_ties=self._rhs is not self._rhs_work)
                continue
            retried = False
            if pivots > cap:
                raise SimplexFailure(f"no optimum after {pivots} pivots")
            if self._since_refactor >= self.refactor_every:
                self._refresh(invert=True)

    # -------------------------------------------------------------- interface
    def add_columns(self, Zc):
        """Append feature columns ``Zc`` (n, k) as free coefficients ``beta``."""
        Zc = np.asarray(Zc, dtype=float)
        if Zc.ndim == 1:
            Zc = Zc[:, None]
        if Zc.ndim != 2 or Zc.shape[0] != self.n:
            raise ValueError(f"the new columns have {Zc.shape[0]} rows, expected {self.n}")
        if not np.all(np.isfinite(Zc)):
            raise ValueError("Z contains NaN or infinite values")
        for j in range(Zc.shape[1]):
            self._pending.append(self.y * Zc[:, j])
        self.n_cols += Zc.shape[1]

    def solve(self):
        """Optimise; return ``(beta, b, objective, pivots)``."""
        pivots = 0
        cap = self.max_pivots if self.max_pivots is not None else 10 * (self.n + self._p + len(self._pending))

        if self._rhs is not self._rhs_work:
            self._rhs = self._rhs_work
            self._refresh()
        for col in self._pending:
            self._pos.append(self._p - 1 if self._add_column_vertex(col) else -1)
            pivots = self._run(cap, pivots)
        self._pending = []
        pivots = self._run(cap, pivots)
        if not self._inverse_ok():
            # Sherman-Morrison drift on a badly conditioned basis: refactorise, and
            # pivot on if the fresh state is not optimal
            self._refresh(invert=True)
            pivots = self._run(cap, pivots)
        # candidates, their hinge losses always recomputed from scratch, each with the
        # rounding level of its margins (rho): the perturbed optimum; the previous D's
        # solution, padded (feasible here, so the objective cannot go up); and the
        # vertex of the final basis for the exact right-hand side
        w_pert = self._w
        cands = [self._candidate(w_pert)]
        if self._last is not None:
            # same margins as when it was reported: same loss and rounding level
            last = np.concatenate([self._last, np.zeros(self._p - len(self._last))])
            cands.append((last, self._last_loss, self._last_rho))
        best = min(cands, key=lambda c: c[1])
        if best[1] > best[2]:
            best = self._separating(cands) or best
        if best[1] <= best[2]:
            # zero hinge loss to the rounding of the margins: the global minimum, no
            # certificate needed (the loss is reported as computed, with that level).
            # Where the perturbed problem is separable its optimum has margins
            # >= 1 + eps_i, while on the badly conditioned bases of nearly separable
            # data (coefficients ~1e10) the exact-rhs vertex can be far off
            return self._report(best[0], best[1], pivots, best[2], best[2])
        # the exact right-hand side: the vertex of the final basis and its optimality
        # check, tied rows keeping the status of the perturbed run. Nearly always the
        # perturbed optimal basis is optimal: the working state is kept as it is
        ones = np.ones(self.n)
        w, r, st, g = self._vertex(ones, keep_ties=True)
        certified = self._certified(st, g)
        if not certified:
            # otherwise pivot on the exact problem (the next solve switches back)
            self._rhs = ones
            self._w, self._r, self._st, self._g = w, r, st, g
            for _ in range(3):
                before = pivots
                pivots = self._run(cap, pivots)
                self._refresh(keep_ties=True)
                if pivots == before:
                    break
            certified = self._certified(self._st, self._g)
            w = self._w
        vertex = self._candidate(w, self._margins)
        best = min(cands + [vertex], key=lambda c: c[1])
        if best[1] > best[2]:
            best = self._separating([vertex]) or best
        if best[1] <= best[2]:
            return self._report(best[0], best[1], pivots, best[2], best[2])
        if not certified:
            raise SimplexFailure("no certified optimum on the exact right-hand side")
        # the certified vertex is optimal; another candidate can only beat it by rounding
        # (else the certificate was wrong, on a too badly conditioned basis)
        if best[1] < vertex[1] - 1e-9 * max(1.0, vertex[1]) - vertex[2] - best[2]:
            raise SimplexFailure(
                f"the certified vertex (hinge loss {vertex[1]:.6g}) is beaten by another "
                f"solution ({best[1]:.6g}): the basis is too badly conditioned"
            )
        return self._report(best[0], best[1], pivots, 0.0, best[2])

    def _candidate(self, w, margins=None):
        """``(w, hinge loss, rounding level)`` of a solution, from scratch.

        The rounding level ``1e-15 sum_i |a_i|.|w|`` bounds the error of the computed
        margins; it is evaluated only when the loss is below a cheap upper bound of it.
        """
        Ap = self._Ap()
        if margins is None:
            margins = Ap @ w
        loss = _hinge_sum(margins, self._c)
        rho = 1e-15 * self._row_max_sum * float(np.abs(w).sum())  # >= the level below
        if loss <= rho:
            rho = 1e-15 * float(self._c @ (np.abs(Ap) @ np.abs(w)))
        return w, loss, rho

    def _separating(self, cands):
        """A candidate that classifies every row correctly, scaled to hinge loss 0.

        Where all margins ``a_i^T w`` are positive the training set is separable and
        the LP's minimum is 0; ``s w`` with ``s (m_min - e) >= 1`` attains it (``e``
        bounds the rounding of a computed margin). This settles the nearly separable
        D at which the path reaches zero risk: there the optimal vertices have
        coefficients ~1e10, their margins are known to ~1e-5 only, and a loss at the
        rounding level of the margins is otherwise a coin flip between "zero" and an
        uncertifiable basis. Returns ``(s w, loss, rho)`` with the loss recomputed from
        scratch, or None.
        """
        Ap = self._Ap()
        row_max = float(np.max(self._row_max))
        for w, _, _ in cands:
            m_min = float(np.min(Ap @ w))
            e = 1e-15 * row_max * float(np.abs(w).sum())  # >= |rounding| of any margin
            if not m_min > 2.0 * e:
                continue
            cand = self._candidate(((1.0 + 1e-12) / (m_min - 2.0 * e)) * w)
            if cand[1] <= cand[2]:
                return cand
        return None

    def _report(self, w, objective, pivots, zero_level, rho):
        """The reported solution; ``zero_level`` is the rounding level of its margins
        when it was accepted as optimal for a hinge loss below it (0 otherwise)."""
        self.zero_level = zero_level
        self._last = w.copy()
        self._last_loss = objective
        self._last_rho = rho
        beta = np.zeros(self.n_cols)
        pos = np.asarray(self._pos, dtype=int)
        live = pos >= 0
        beta[live] = w[pos[live]]
        return beta, float(w[0]), objective, pivots

    def _inverse_ok(self):
        """Is ``Binv`` still an inverse of ``A_B`` to 1e-9 (checked on a fixed random vector)?"""
        v = self._probe[: self._p]
        AB = self._Ap()[self._B]
        return float(np.max(np.abs(AB @ (self._Binv @ v) - v))) <= 1e-9

    def _certified(self, st, g):
        """The optimality certificate: multipliers ``t = -A_B^{-T} g`` in ``[0, c_B]``."""
        if not np.any(st > 0):
            return True  # no violated row: hinge loss 0, the global minimum
        t = -(g @ self._Binv)
        return float(np.max(np.maximum(-t, t - self._c[self._B]))) <= self.tol


def _hinge_sum(margins, c):
    return float(c @ np.maximum(0.0, 1.0 - margins))

