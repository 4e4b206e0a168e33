"""The warm-started HiGHS path of the KPM linear programme against cold scipy solves."""

import numpy as np
import pytest
from scipy.optimize import linprog

from helpers import hinge_lp_reference as _cold  # the cold scipy/HiGHS solve (asserts success)
from kpm.hinge.lp_path import LPSolverError, hinge_lp_path


def _problem(n=60, m=25, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.8 * rng.normal(size=n) > 0.3, 1.0, -1.0)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    w, V = np.linalg.eigh(K)
    return V[:, ::-1][:, :m], y


def _decision_range(Z, y, D, opt, w):
    """min and max of w . f over the optimal face (f = Z beta + b on the training points)."""
    n = len(y)
    cw = np.concatenate([Z[:, :D].T @ w, [w.sum()], np.zeros(n)])
    A = -np.hstack([y[:, None] * Z[:, :D], y[:, None], np.eye(n)])
    A = np.vstack([A, np.concatenate([np.zeros(D + 1), np.ones(n)])])
    b = np.concatenate([-np.ones(n), [opt + 1e-9]])
    bounds = [(None, None)] * (D + 1) + [(0, None)] * n
    lo = linprog(cw, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    hi = linprog(-cw, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if lo.status != 0 or hi.status != 0:  # unbounded face: not unique
        return -np.inf, np.inf
    return lo.fun, -hi.fun


@pytest.mark.parametrize("solver, strategy", [("highs", "primal"), ("highs", "dual"), ("simplex", "primal")])
def test_path_matches_cold_linprog(solver, strategy):
    Z, y = _problem()
    path = hinge_lp_path(Z, y, 25, solver=solver, strategy=strategy, stop_at_zero=False)
    assert path.fallbacks == 0
    rng = np.random.default_rng(1)
    n_unique = 0
    for D in (1, 2, 3, 5, 8, 13, 20, 25):
        res = _cold(Z, y, D)
        assert path.objective[D - 1] == pytest.approx(res.fun, rel=1e-9, abs=1e-9)
        beta, b = path.coef_at(D)
        f_path = Z[:, :D] @ beta + b
        f_cold = Z[:, :D] @ res.x[:D] + res.x[D]
        # our solution is optimal: its hinge loss equals the optimum
        assert np.maximum(0, 1 - y * f_path).sum() == pytest.approx(res.fun, rel=1e-7, abs=1e-7)
        w = rng.normal(size=len(y))
        lo, hi = _decision_range(Z, y, D, res.fun, w)
        if hi - lo < 1e-6:  # the decision values are unique on the optimal face
            n_unique += 1
            np.testing.assert_allclose(f_path, f_cold, atol=1e-6)
    assert n_unique >= 4  # the comparison of decision values really happened


@pytest.mark.parametrize("solver", ["highs", "simplex"])
def test_hinge_risk_non_increasing_and_early_stop(solver):
    Z, y = _problem(n=50, m=50, seed=3)
    path = hinge_lp_path(Z, y, solver=solver)
    r = path.hinge_risk
    assert len(r) == 50
    assert np.all(np.diff(r) <= 1e-12)
    # stopped at the first zero: everything after reuses that solution
    assert path.objective[-1] <= 1e-9 * 50
    assert path.n_solved < 50
    assert np.all(path.objective[:-1] > 1e-9 * 50)
    D = path.n_solved + 3
    beta, b = path.coef_at(D)
    assert np.all(beta[path.n_solved :] == 0)
    f = Z[:, :D] @ beta + b
    assert np.all(y * f >= 1 - 1e-7)  # still optimal (zero risk) at D
    F = path.decision_values(Z)
    assert F.shape == (50, 50)
    np.testing.assert_allclose(F[:, D - 1], f)


def test_solver_failure_reports_highs_status():
    Z, y = _problem()
    with pytest.raises(LPSolverError, match="Iteration limit"):
        hinge_lp_path(Z, y, 10, iteration_limit=0, solver="highs")


def test_bad_input():
    Z, y = _problem(n=20, m=5)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        hinge_lp_path(Z, np.where(y > 0, 1.0, 0.0))
    Zn = Z.copy()
    Zn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        hinge_lp_path(Zn, y)
    with pytest.raises(ValueError, match="max_dim"):
        hinge_lp_path(Z, y, 6)
    with pytest.raises(ValueError, match="strategy"):
        hinge_lp_path(Z, y, 2, strategy="barrier")
    with pytest.raises(ValueError, match="solver"):
        hinge_lp_path(Z, y, 2, solver="cplex")
    with pytest.raises(ValueError, match="D must be"):
        hinge_lp_path(Z, y, 3).coef_at(4)


@pytest.mark.parametrize("solver", ["highs", "simplex"])
def test_grid_path_matches_every_d_path(solver):
    Z, y = _problem()
    every = hinge_lp_path(Z, y, 25, stop_at_zero=False, solver=solver)
    grid = hinge_lp_path(Z, y, 25, dims=[3, 7, 12, 25], stop_at_zero=False, solver=solver)
    np.testing.assert_allclose(grid.objective, every.objective[[2, 6, 11, 24]], rtol=1e-9, atol=1e-9)
    assert grid.decision_values(Z).shape == (60, 4)
    with pytest.raises(ValueError, match="dimensions"):
        grid.coef_at(5)
    with pytest.raises(ValueError, match="increasing"):
        hinge_lp_path(Z, y, 25, dims=[3, 3, 7])


def test_failed_warm_start_recovers_with_a_cold_solve():
    from kpm.hinge.lp_path import IncrementalHingeLP

    Z, y = _problem()
    lp = IncrementalHingeLP(y)
    lp.add_columns(Z[:, :3])
    lp.solve()
    lp.add_columns(Z[:, 3:8])
    # sabotage the warm model only: its next run stops at once ('Iteration limit')
    lp._h.setOptionValue("simplex_iteration_limit", 0)
    beta, b, obj, _ = lp.solve()
    assert lp.restarts == 1
    assert obj == pytest.approx(_cold(Z, y, 8).fun, rel=1e-9, abs=1e-9)
    lp.add_columns(Z[:, 8:12])  # and it goes on warm in the fresh model
    assert lp.solve()[2] == pytest.approx(_cold(Z, y, 12).fun, rel=1e-9, abs=1e-9)


def test_cold_restarts_have_a_time_limit():
    from kpm.hinge.lp_path import IncrementalHingeLP

    Z, y = _problem(n=200, m=60, seed=5)
    lp = IncrementalHingeLP(y, restart_time_limit=1e-9)
    lp.add_columns(Z[:, :20])
    lp._h.setOptionValue("simplex_iteration_limit", 0)  # the warm run fails at once
    with pytest.raises(LPSolverError, match="Time limit.*Time limit"):
        lp.solve()
    assert lp.restarts == 2


def test_warm_runs_have_the_time_limit_too():
    # a warm HiGHS run on a degenerate path once ran for more than ten minutes (an unseeded
    # KPM fit of breast_cancer, formulation='paper'): without a time_limit, each warm run is
    # bounded by restart_time_limit as the cold re-solves are, and one that hits it is
    # solved again from scratch
    from kpm.hinge.lp_path import IncrementalHingeLP

    Z, y = _problem(n=200, m=60, seed=5)
    lp = IncrementalHingeLP(y, restart_time_limit=1e-9)
    lp.add_columns(Z[:, :20])
    assert lp._h.getOptionValue("time_limit")[1] == pytest.approx(1e-9)
    with pytest.raises(LPSolverError, match="'Time limit reached' / 'Time limit reached'"):
        lp.solve()
    assert lp.restarts == 2


def test_time_limit_failure_lists_every_attempt():
    Z, y = _problem(n=200, m=60, seed=5)
    with pytest.raises(LPSolverError, match="Time limit"):
        hinge_lp_path(Z, y, 60, time_limit=1e-9, solver="highs")


def _duplicated_problem(seed=0):
    """Distinct points, some repeated with both labels: (Z on all rows, y, groups).

    Gaussian features (well conditioned: the test is about the floor, not about the
    rank-deficient bases of real kernels); the 30 distinct points can be fitted
    exactly with D = 29, so the path reaches its floor at some D < 30.
    """
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(30, 30))
    y = np.where(Z[:, 0] + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    rep = np.array([0, 0, 0, 1, 1, 2, 3, 3])  # points 0-3 repeated
    flip = np.array([1, 1, 0, 1, 0, 1, 0, 0], dtype=bool)  # some copies get the other label
    ya = np.concatenate([y, np.where(flip, -y[rep], y[rep])])
    groups = np.concatenate([np.arange(30), rep])
    return np.vstack([Z, Z[rep]]), ya, groups


def test_floor_of_conflicting_duplicates():
    from kpm.hinge.lp_path import HingeLP

    V, y, groups = _duplicated_problem()
    # point 0: 3 copies + 1 original; labels: original y0, copies -y0, -y0, y0 -> 2 and 2
    # point 1: original y1, copies -y1, y1 -> 1 against 2; point 3: all the same label
    counts = {}
    for g, lab in zip(groups, y):
        counts.setdefault(g, [0, 0])[int(lab > 0)] += 1
    expected = sum(2 * min(c) for c in counts.values())
    assert expected == 2 * 2 + 2 * 1 + 2 * 1  # points 0, 1, 2
    assert HingeLP(y, groups=groups).floor == expected
    assert HingeLP(y).floor == 0.0  # duplicates unknown: the floor is 0


@pytest.mark.parametrize("solver", ["simplex", "highs"])
def test_path_stops_at_the_floor_of_conflicting_duplicates(solver):
    # no function does better than the floor, so the path stops where it reaches it,
    # and the optimum of every larger D (a cold solve of the full LP) equals it
    V, y, groups = _duplicated_problem()
    path = hinge_lp_path(V, y, 30, solver=solver, groups=groups)
    D0 = path.last_dim_solved
    assert path.floor == 8.0
    assert D0 < 30
    assert path.objective[-1] == pytest.approx(path.floor, abs=1e-9 * len(y))
    assert np.all(path.objective[:-1] > path.floor + 1e-9 * len(y))
    for D in (D0, 30):
        assert _cold(V, y, D).fun == pytest.approx(path.floor, abs=1e-7)
    full = hinge_lp_path(V, y, 30, solver=solver, groups=groups, stop_at_zero=False)
    np.testing.assert_allclose(full.objective[D0 - 1 :], path.floor, atol=1e-7)


def test_conflicting_duplicates_must_have_identical_rows():
    from kpm.hinge.lp_path import HingeLP

    y = np.array([1.0, -1.0, 1.0])
    lp = HingeLP(y, groups=np.array([0, 0, 1]))  # one point with both labels: no merged row
    assert lp.floor == 2.0
    with pytest.raises(ValueError, match="identical"):
        lp.add_columns(np.array([[0.1], [0.2], [0.3]]))


def test_a_path_that_no_solver_can_continue_stops_with_the_reason(monkeypatch):
    from kpm.hinge import lp_path as _lp_path

    Z, y = _problem()
    real = _lp_path.HingeLP._solve_exact

    def failing(self):
        if self.n_cols >= 4:
            raise LPSolverError("simulated: every solver failed")
        return real(self)

    monkeypatch.setattr(_lp_path.HingeLP, "_solve_exact", failing)
    with pytest.raises(LPSolverError, match="simulated"):
        hinge_lp_path(Z, y, 10)
    path = hinge_lp_path(Z, y, 10, on_failure="stop")
    assert path.n_solved == path.n_valid == 3
    assert path.failed_dim == 4
    assert path.failure.startswith("simulated: every solver failed [the largest coefficient at D=3 was")
    full = hinge_lp_path(Z, y, 3)
    np.testing.assert_array_equal(path.coef, full.coef)
    with pytest.raises(ValueError, match="on_failure"):
        hinge_lp_path(Z, y, 10, on_failure="ignore")


def test_failed_solvers_candidate_at_the_floor_is_accepted(monkeypatch):
    # separable data: once every solver fails, a point a failed run ended at whose hinge
    # loss is 0 to the rounding of its margins is the optimum (the floor is a lower bound)
    from kpm.hinge import lp_path as _lp_path

    rng = np.random.default_rng(1)
    Z = np.linalg.qr(rng.normal(size=(40, 6)))[0]
    beta = rng.normal(size=6)
    y = np.where(Z @ beta > 0, 1.0, -1.0)
    scale = 1.0 / np.min(np.abs(Z @ beta))
    lp = _lp_path.HingeLP(y, solver="highs")
    lp.add_columns(Z)

    def failing(self):
        self._lp.candidates = [(2.0 * scale * beta, 0.0), (np.zeros(6), 0.3)]
        raise LPSolverError("simulated")

    monkeypatch.setattr(_lp_path.HingeLP, "_solve_exact", failing)
    b_hat, b0, obj, _ = lp.solve()
    np.testing.assert_allclose(b_hat, 2.0 * scale * beta)
    assert obj == 0.0 and lp.at_floor(obj)
    # a candidate above the floor certifies nothing: the failure stands
    lp2 = _lp_path.HingeLP(y, solver="highs")
    lp2.add_columns(Z)

    def failing_far(self):
        self._lp.candidates = [(0.5 * scale * beta, 0.0)]
        raise LPSolverError("simulated")

    monkeypatch.setattr(_lp_path.HingeLP, "_solve_exact", failing_far)
    with pytest.raises(LPSolverError, match="simulated"):
        lp2.solve()


def test_candidate_with_unresolvable_margins_certifies_nothing(monkeypatch):
    from kpm.hinge import lp_path as _lp_path

    rng = np.random.default_rng(1)
    Z = np.linalg.qr(rng.normal(size=(40, 6)))[0]
    beta = rng.normal(size=6)
    y = np.where(Z @ beta > 0, 1.0, -1.0)
    lp = _lp_path.HingeLP(y, solver="highs")
    lp.add_columns(Z)

    def failing(self):
        self._lp.candidates = [(1e25 * beta, 0.0)]  # zero loss, margins known to ~1e10
        raise LPSolverError("simulated")

    monkeypatch.setattr(_lp_path.HingeLP, "_solve_exact", failing)
    with pytest.raises(LPSolverError, match="simulated"):
        lp.solve()


def test_one_column_hinge_lp_is_the_lp_optimum():
    # the vertex enumeration (the last resort on one column) against HiGHS, with weights and
    # tied values
    from kpm.hinge.lp_path import one_column_hinge_lp

    rng = np.random.default_rng(0)
    for t in range(60):
        n = int(rng.integers(5, 60))
        z = rng.normal(size=n)
        if t % 3 == 0:
            z = np.round(z, 1)
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        c = rng.uniform(0.5, 2.0, n)
        A = np.zeros((n, 2 + n))
        A[:, 0], A[:, 1] = -y * z, -y
        A[np.arange(n), 2 + np.arange(n)] = -1.0
        ref = linprog(np.r_[0.0, 0.0, c], A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * 2 + [(0, None)] * n,
                      method="highs")
        beta, b, obj, _ = one_column_hinge_lp(z, y, c)
        assert obj == pytest.approx(ref.fun, rel=1e-12, abs=1e-12)
        assert obj == pytest.approx(c @ np.maximum(0.0, 1.0 - y * (beta[0] * z + b)), rel=1e-12, abs=1e-12)


def test_badly_scaled_first_column_is_solved_not_a_crash():
    # a centred polynomial kernel of degree 43: a fold's first eigenvector is one value near 1
    # and the others 1e-9 to 1e-2; every LP solver failed on D = 1 (LPSolverError out of
    # fit); the two-unknown LP is solved on its vertices
    import warnings

    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler

    from kpm import KernelProjectionMachine

    X, y = make_blobs(128, centers=2, n_features=2, cluster_std=1.5, random_state=1)
    X = StandardScaler().fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the kernel's degeneracy is warned about
        m = KernelProjectionMachine(random_state=0, selection="penalty", cv=3, centered=True, max_components=None,
                                    kernel="poly", degree=43).fit(X, y)
    assert m.n_components_ >= 1 and np.isfinite(m.decision_function(X)).all()
