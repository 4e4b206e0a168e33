"""The specialised simplex of the KPM hinge LP against HiGHS (kpm.hinge.simplex)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import assert_same_hinge_path as _assert_same_path
from helpers import hinge_loss_sum as _hinge
from kpm.hinge.simplex import HingeSimplex, SimplexFailure
from kpm.hinge.lp_path import LPSolverError, hinge_lp_path


def _rbf_eigvecs(X, gamma=0.5):
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    w, V = np.linalg.eigh(K)
    keep = w[::-1] > w.max() * len(X) * np.finfo(float).eps
    return V[:, ::-1][:, keep]


def test_balanced_classes_degenerate_start():
    # equal class sizes: every b in [-1, 1] is optimal at D = 0 and a whole class
    # sits on its kink at the start; the perturbed pivots must not stall
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = np.where(np.arange(80) % 2 == 0, 1.0, -1.0)
    _assert_same_path(_rbf_eigvecs(X)[:, :30], y)


def test_duplicated_points_with_conflicting_labels():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    X = np.vstack([X, X[:15], X[:15]])  # each of 15 points three times
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=len(X)) > 0, 1.0, -1.0)
    y[40:55] = -y[:15]  # the first copy disagrees with the original
    V = _rbf_eigvecs(X)
    # identical points get identical rows (as kpm's _tie_duplicates does)
    _, inv = np.unique(X, axis=0, return_inverse=True)
    V = np.vstack([V[inv == g].mean(axis=0) for g in range(inv.max() + 1)])[inv]
    _assert_same_path(V[:, :35], y)


def test_dependent_column_gets_zero_coefficient():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(50, 4))
    Z = np.column_stack([Z, Z[:, 0] - 2.0 * Z[:, 2], rng.normal(size=50)])
    y = np.where(Z[:, 1] + Z[:, 3] ** 2 - 0.5 + 0.3 * rng.normal(size=50) > 0, 1.0, -1.0)
    fast, _ = _assert_same_path(Z, y)
    assert np.all(fast.coef[4:, 4] == 0.0)  # the dependent column never enters


def test_separable_data_stops_at_zero_risk():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    V = _rbf_eigvecs(X, gamma=2.0)[:, :50]
    fast, ref = _assert_same_path(V, y, stop_at_zero=True)
    assert fast.objective[-1] <= 1e-9 * 60
    assert fast.n_solved == ref.n_solved < 50


def test_badly_scaled_columns():
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(70, 8)) * np.logspace(0, -6, 8)
    y = np.where(Z[:, 0] + 1e5 * Z[:, 5] + 0.5 * rng.normal(size=70) > 0, 1.0, -1.0)
    _assert_same_path(Z, y)


def test_separating_solution_is_scaled_to_zero_loss():
    # margins all positive but some below 1 (the hinge loss of a nearly separable
    # vertex known only to the rounding of its margins): scaled, the loss is exactly 0
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((60, 3))
    y = np.where(Z[:, 0] > 0, 1.0, -1.0)
    lp = HingeSimplex(y)
    lp.add_columns(Z)
    lp.solve()
    w = np.array([0.0, 1e-3, 0.0, 0.0]) * 7.0  # margins 7e-3 |z_0| in (0, 1)
    A = lp._Ap()
    assert np.all(A @ w > 0) and np.any(A @ w < 1)
    scaled, loss, rho = lp._separating([(w, 1.0, 0.0)])
    assert loss == 0.0 and np.all(A @ scaled >= 1.0)
    np.testing.assert_allclose(scaled / np.abs(scaled).sum(), w / np.abs(w).sum())
    # one row on the wrong side: no separating scaling
    w_bad = w.copy()
    w_bad[0] = -0.5 * np.max(np.abs(A @ w))
    assert np.any(A @ w_bad <= 0)
    assert lp._separating([(w_bad, 1.0, 0.0)]) is None


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 40),
    p=st.integers(1, 8),
    seed=st.integers(0, 2**31 - 1),
    repeat=st.booleans(),
    integer=st.booleans(),
)
def test_random_problems_match_highs(n, p, seed, repeat, integer):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p))
    if integer:  # many exact ties between rows and kinks
        Z = np.round(Z)
    if repeat:
        Z[: n // 2] = Z[n - n // 2 :][: n // 2]
    y = rng.choice([-1.0, 1.0], size=n)
    if np.all(y == y[0]):
        y[0] = -y[0]
    _assert_same_path(Z, y)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(4, 30), p=st.integers(1, 6), seed=st.integers(0, 2**31 - 1), copies=st.integers(2, 4))
def test_merged_duplicates_match_the_full_lp(n, p, seed, copies):
    # duplicated samples (identical rows, some with conflicting labels) merged into
    # weighted rows: the same optimal objective at every D as the full LP
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, p))
    reps = rng.integers(1, copies + 1, size=n)
    groups = np.repeat(np.arange(n), reps)
    Z = base[groups]
    y = rng.choice([-1.0, 1.0], size=len(groups))
    if np.all(y == y[0]):
        y[0] = -y[0]
    full = hinge_lp_path(Z, y, solver="highs", stop_at_zero=False)
    for solver in ("simplex", "highs"):
        merged = hinge_lp_path(Z, y, solver=solver, groups=groups, stop_at_zero=False)
        assert merged.fallbacks == 0
        np.testing.assert_allclose(merged.objective, full.objective, rtol=1e-9, atol=1e-9)
        for i in range(merged.n_solved):
            beta, b = merged.coef_at(int(merged.dims[i]))
            assert _hinge(Z, y, beta, b) == pytest.approx(merged.objective[i], rel=1e-9, abs=1e-8)


def test_groups_must_have_identical_rows():
    Z = np.array([[0.0, 1.0], [0.5, 1.0], [0.5, -1.0], [1.0, 0.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    # rows 1 and 2 share a group but not a label: not merged, no check
    assert hinge_lp_path(Z, y, groups=np.array([0, 1, 1, 2])).n_solved >= 1
    # rows 0 and 1 share a group and a label but differ
    with pytest.raises(ValueError, match="identical"):
        hinge_lp_path(Z, np.array([1.0, 1.0, 1.0, -1.0]), groups=np.array([0, 0, 1, 2]))
    with pytest.raises(ValueError, match="groups"):
        hinge_lp_path(Z, y, groups=np.array([0, 1]))


def _noisy_problem(seed, n=60, p=12):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, p))
    return Z, np.where(Z[:, 0] + rng.normal(size=n) > 0, 1.0, -1.0)


def _simplex_fails_on_solve(monkeypatch, k):
    """Make the k-th ``HingeSimplex.solve`` call raise; returns the call counter."""
    calls = {"n": 0}
    original = HingeSimplex.solve

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == k:
            raise SimplexFailure("simulated numerical trouble")
        return original(self)

    monkeypatch.setattr(HingeSimplex, "solve", flaky)
    return calls


def _assert_same_as_highs(path, Z, y):
    ref = hinge_lp_path(Z, y, Z.shape[1], stop_at_zero=False, solver="highs")
    np.testing.assert_allclose(path.objective, ref.objective, rtol=1e-9, atol=1e-9)


def test_auto_falls_back_to_highs(monkeypatch):
    Z, y = _noisy_problem(5)
    calls = _simplex_fails_on_solve(monkeypatch, 4)
    path = hinge_lp_path(Z, y, 12, stop_at_zero=False)
    assert path.fallbacks == 1
    _assert_same_as_highs(path, Z, y)
    calls["n"] = 0
    with pytest.raises(LPSolverError, match="specialised simplex.*D=4.*simulated"):
        hinge_lp_path(Z, y, 12, stop_at_zero=False, solver="simplex")


def test_auto_replays_the_highs_path_when_the_cold_solve_fails(monkeypatch):
    # flare_solar r94 (Table 2 protocol): at the D where the LP reaches the floor of its
    # hinge risk the simplex gives up and a cold HiGHS solve fails ('Not Set', a rank
    # deficient basis); the warm HiGHS path replayed from D = 1 solves it
    from kpm.hinge.lp_path import IncrementalHingeLP

    Z, y = _noisy_problem(6)
    calls = _simplex_fails_on_solve(monkeypatch, 5)
    original_highs = IncrementalHingeLP.solve

    def no_cold(self, cold=False):
        if cold:
            raise LPSolverError("simulated cold failure")
        return original_highs(self)

    monkeypatch.setattr(IncrementalHingeLP, "solve", no_cold)
    path = hinge_lp_path(Z, y, 12, stop_at_zero=False)
    assert path.fallbacks == 1
    _assert_same_as_highs(path, Z, y)

    def never(self, cold=False):
        raise LPSolverError("simulated HiGHS failure")

    monkeypatch.setattr(IncrementalHingeLP, "solve", never)
    calls["n"] = 0
    with pytest.raises(LPSolverError, match="D=5: the specialised simplex.*simulated numerical.*from scratch.*replayed"):
        hinge_lp_path(Z, y, 12, stop_at_zero=False)


def test_pivot_cap_raises_simplex_failure():
    rng = np.random.default_rng(6)
    Z = rng.normal(size=(100, 10))
    y = np.where(Z[:, 0] + rng.normal(size=100) > 0, 1.0, -1.0)
    lp = HingeSimplex(y, max_pivots=2)
    lp.add_columns(Z)
    with pytest.raises(SimplexFailure, match="pivots"):
        lp.solve()


def test_bad_input():
    with pytest.raises(ValueError, match="-1 and \\+1"):
        HingeSimplex(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="weights"):
        HingeSimplex(np.array([1.0, -1.0]), weights=np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="weights"):
        HingeSimplex(np.array([1.0, -1.0]), weights=np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="weights"):
        HingeSimplex(np.array([1.0, -1.0]), weights=np.ones(3))
    lp = HingeSimplex(np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="rows"):
        lp.add_columns(np.ones((2, 1)))
    with pytest.raises(ValueError, match="NaN"):
        lp.add_columns(np.array([[1.0], [np.nan], [0.0]]))


def test_deterministic():
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(80, 15))
    y = np.where(Z[:, 0] * Z[:, 1] + 0.2 * rng.normal(size=80) > 0, 1.0, -1.0)
    a = hinge_lp_path(Z, y, solver="simplex", stop_at_zero=False)
    b = hinge_lp_path(Z, y, solver="simplex", stop_at_zero=False)
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.intercept, b.intercept)
