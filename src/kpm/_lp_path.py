"""The hinge-loss LP path of the Kernel Projection Machine (SPEC §3.2-3.3).

For every dimension ``D = 1..max_dim`` the KPM solves the linear programme

    min_{beta, b, xi}  sum_i xi_i
    s.t.  y_i (sum_{j<=D} beta_j Z_ij + b) >= 1 - xi_i,   xi_i >= 0,

where the columns of ``Z`` are the leading eigenvectors of the kernel matrix.
The subspaces are nested, so the optimum for D (padded with ``beta_{D+1} = 0``)
is feasible for D+1: the whole path is solved in **one** HiGHS model, adding one
column per D and resuming the primal simplex from the previous optimal basis.

Early stop (``stop_at_zero``): once the optimal hinge risk is 0 at some D0, the
padded D0 solution is feasible with objective 0 for every D >= D0, hence optimal
(the objective is non-negative). The path therefore *defines* the solution for
D >= D0 as the D0 solution and stops solving; every D >= D0 has the same
decision function, so no selection rule with ties broken towards the smaller D
can prefer a D > D0 (see :mod:`kpm.selection`).

HiGHS (``highspy``) does all the linear algebra; nothing here is a hand-written
simplex.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LPSolverError", "HingePath", "hinge_lp_path"]


class LPSolverError(RuntimeError):
    """HiGHS did not return an optimal solution; the message carries its status."""


@dataclass
class HingePath:
    """The LP solutions for ``D = 1..n_dims`` (``n_dims`` may be < max_dim after an early stop).

    Attributes
    ----------
    coef : ndarray (n_solved, max_dim)
        Row ``D-1`` holds ``beta`` for dimension D (zeros beyond column D).
    intercept : ndarray (n_solved,)
    objective : ndarray (n_solved,)
        ``sum_i xi_i`` at the optimum (``n *`` the empirical hinge risk).
    max_dim : int
        The requested last dimension; ``D > n_solved`` reuses the last solution
        (the LP optimum is 0 there, see the module docstring).
    n_samples : int
    iterations : ndarray (n_solved,)
        Simplex iterations spent on each D (diagnostics).
    restarts : int
        Number of D at which the warm start failed numerically and HiGHS solved
        the LP again from scratch (with presolve).
    """

    coef: np.ndarray
    intercept: np.ndarray
    objective: np.ndarray
    max_dim: int
    n_samples: int
    iterations: np.ndarray
    restarts: int = 0

    @property
    def n_solved(self) -> int:
        return len(self.intercept)

    @property
    def hinge_risk(self) -> np.ndarray:
        """Empirical hinge risk ``R_n(f_D)`` for ``D = 1..max_dim`` (extended by the last value)."""
        return _extend(self.objective / self.n_samples, self.max_dim)

    def coef_at(self, D: int) -> tuple[np.ndarray, float]:
        """``(beta[:D], b)`` of dimension D (``D > n_solved``: the last solution, padded)."""
        if not 1 <= D <= self.max_dim:
            raise ValueError(f"D must be in [1, {self.max_dim}], got {D}")
        k = min(D, self.n_solved) - 1
        beta = np.zeros(D)
        beta[: k + 1] = self.coef[k, : k + 1]
        return beta, float(self.intercept[k])

    def decision_values(self, Z_new) -> np.ndarray:
        """Decision values of every D on new features: shape (n_new, max_dim).

        ``Z_new`` holds the (extended) eigenvector features of the new points, at
        least ``n_solved`` columns.
        """
        Z_new = np.asarray(Z_new, dtype=float)
        m = self.coef.shape[1]
        F = Z_new[:, :m] @ self.coef.T + self.intercept[None, :]
        return _extend_cols(F, self.max_dim)


def _extend(v, length):
    if len(v) >= length:
        return v[:length]
    return np.concatenate([v, np.full(length - len(v), v[-1])])


def _extend_cols(F, length):
    if F.shape[1] >= length:
        return F[:, :length]
    return np.concatenate([F, np.repeat(F[:, -1:], length - F.shape[1], axis=1)], axis=1)


def _status_error(h, D):
    status = h.getModelStatus()
    return LPSolverError(
        f"HiGHS did not solve the KPM linear programme for D={D}: model status "
        f"'{h.modelStatusToString(status)}' ({status})"
    )


def hinge_lp_path(
    Z,
    y,
    max_dim: int | None = None,
    *,
    stop_at_zero: bool = True,
    zero_tol: float = 1e-9,
    strategy: str = "primal",
    time_limit: float | None = None,
    iteration_limit: int | None = None,
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
    stop_at_zero : bool, default=True
        Stop once the optimal objective is ``<= zero_tol * n`` (see module docstring).
    zero_tol : float
        Tolerance on the hinge risk for the early stop.
    strategy : {'primal', 'dual', 'auto'}
        HiGHS simplex strategy for the warm-started re-solves. Adding a column keeps
        the previous basis primal feasible, so ``'primal'`` is the natural choice.
    time_limit, iteration_limit : optional
        Passed to HiGHS (a limit hit raises :class:`LPSolverError`).

    Returns
    -------
    HingePath

    Raises
    ------
    LPSolverError
        If HiGHS returns any status other than optimal, with that status.
    """
    import highspy

    Z = np.asarray(Z, dtype=float)
    y = np.asarray(y, dtype=float)
    if Z.ndim != 2 or y.ndim != 1 or len(y) != len(Z):
        raise ValueError(f"Z must be (n, m) and y (n,); got {Z.shape} and {y.shape}")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must contain only -1 and +1")
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z contains NaN or infinite values")
    n, m = Z.shape
    if max_dim is None:
        max_dim = m
    if not 1 <= int(max_dim) <= m:
        raise ValueError(f"max_dim must be in [1, {m}] (the number of columns of Z), got {max_dim}")
    max_dim = int(max_dim)

    inf = highspy.kHighsInf
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("threads", 1)
    strat = {"auto": 0, "dual": 1, "primal": 4}.get(strategy)
    if strat is None:
        raise ValueError(f"strategy must be 'primal', 'dual' or 'auto', got {strategy!r}")
    h.setOptionValue("simplex_strategy", strat)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if iteration_limit is not None:
        h.setOptionValue("simplex_iteration_limit", int(iteration_limit))

    # columns 0..n-1: xi (cost 1, >= 0); column n: b (free)
    costs = np.concatenate([np.ones(n), [0.0]])
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
    coef = np.zeros((max_dim, max_dim))
    intercept = np.zeros(max_dim)
    objective = np.zeros(max_dim)
    iterations = np.zeros(max_dim, dtype=np.int64)
    n_solved = 0
    it_prev = 0
    restarts = 0
    for D in range(1, max_dim + 1):
        h.addCol(0.0, -inf, inf, n, rows, y * Z[:, D - 1])
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal and iteration_limit is None:
            # the warm start ran into numerical trouble (HiGHS reports 'Unknown' on some
            # highly degenerate paths): solve this D again from scratch, then go on warm
            restarts += 1
            h.clearSolver()
            h.setOptionValue("simplex_strategy", 1)
            h.setOptionValue("presolve", "on")
            h.run()
            h.setOptionValue("presolve", "off")
            h.setOptionValue("simplex_strategy", strat)
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise _status_error(h, D)
        x = np.asarray(h.getSolution().col_value)
        coef[D - 1, :D] = x[n + 1 :]
        intercept[D - 1] = x[n]
        # the objective from the primal values (robust to HiGHS's tolerance)
        objective[D - 1] = max(float(h.getInfo().objective_function_value), 0.0)
        it = int(h.getInfo().simplex_iteration_count)
        iterations[D - 1] = it - it_prev if it >= it_prev else it
        it_prev = it
        n_solved = D
        if stop_at_zero and objective[D - 1] <= zero_tol * n:
            break
    return HingePath(
        coef=coef[:n_solved, :n_solved],
        intercept=intercept[:n_solved],
        objective=objective[:n_solved],
        max_dim=max_dim,
        n_samples=n,
        iterations=iterations[:n_solved],
        restarts=restarts,
    )
