"""Exactness of the constraint-generation hinge LP against the full LP."""

import numpy as np
import pytest

from helpers import hinge_lp_reference
from kpm.hinge.constraint_generation import ConstraintGenerationHingeLP
from kpm.hinge.rows import InMemoryRows, hinge_objective
from kpm.hinge.aggregation import line_derivatives, line_minimiser


def full_lp_objective(F, y, D):
    """Reference: the whole hinge LP (all n rows) with scipy's HiGHS interface."""
    return hinge_lp_reference(F, y, D).fun


def problem(n, d, seed=0, noise=0.4, quad=0.7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    f = X[:, 0] + quad * X[:, 1] ** 2 - 0.5 + noise * rng.standard_normal(n)
    y = np.where(f > 0, 1.0, -1.0)
    return np.asfortranarray(X), y


@pytest.mark.slow
@pytest.mark.parametrize("lp_solver", ["simplex", "ipm", "auto"])
def test_path_matches_full_lp(lp_solver):
    F, y = problem(3000, 12)
    cg = ConstraintGenerationHingeLP(
        F, y, init_size=300, lp_solver=lp_solver, ipm_min_points=500, random_state=1
    )
    Ds = [1, 2, 4, 8, 12]
    results = cg.path(Ds)
    for res in results:
        ref = full_lp_objective(F, y, res.n_components)
        assert abs(res.objective - ref) <= 1e-7 * max(1.0, abs(ref))
        # the reported objective is the true hinge loss of the returned solution
        assert np.isclose(res.objective, hinge_objective(F, y, res.coef, res.intercept), rtol=1e-12)
        # certificate: lower bound (working-set LP) and objective agree
        assert abs(res.gap) <= 1e-7 * max(1.0, ref)
        # termination: no point outside the working set has a positive hinge loss
        f = F[:, : res.n_components] @ res.coef + res.intercept
        outside = np.ones(len(y), bool)
        outside[cg.working_set] = False
        assert np.all(1 - y[outside] * f[outside] <= 1e-9)
    # the objective is non-increasing along the nested path
    obj = [r.objective for r in results]
    assert all(b <= a + 1e-7 for a, b in zip(obj, obj[1:]))


def test_working_set_is_smaller_than_n_when_classes_are_easy():
    F, y = problem(4000, 6, noise=0.05, quad=0.0)
    cg = ConstraintGenerationHingeLP(F, y, init_size=200, random_state=0)
    res = cg.solve(6)
    ref = full_lp_objective(F, y, 6)
    assert abs(res.objective - ref) <= 1e-7 * max(1.0, ref)
    assert res.n_working < len(y) // 2
    assert res.n_rounds >= 2  # the initial set was not enough: constraints were generated


def test_warm_path_equals_cold_solves_and_rows_subset():
    F, y = problem(2000, 8, seed=3)
    rows = np.arange(0, 2000, 3)
    warm = ConstraintGenerationHingeLP(F, y, rows=rows, init_size=100).path([2, 5, 8])
    for res in warm:
        cold = ConstraintGenerationHingeLP(
            np.asfortranarray(F[rows]), y[rows], init_size=100
        ).solve(res.n_components)
        assert abs(res.objective - cold.objective) <= 1e-7 * max(1.0, cold.objective)
        assert np.isclose(
            res.objective, hinge_objective(F, y, res.coef, res.intercept, rows=rows), rtol=1e-12
        )


def test_bad_input():
    F, y = problem(200, 4)
    with pytest.raises(ValueError, match="labels"):
        ConstraintGenerationHingeLP(F, np.where(y > 0, 1.0, 0.0))
    Fn = F.copy()
    Fn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ConstraintGenerationHingeLP(Fn, y)
    with pytest.raises(ValueError, match="rows"):
        ConstraintGenerationHingeLP(F, y[:-1])
    with pytest.raises(ValueError, match="lp_solver"):
        ConstraintGenerationHingeLP(F, y, lp_solver="barrier")
    cg = ConstraintGenerationHingeLP(F, y)
    cg.solve(3)
    with pytest.raises(ValueError, match="non-decreasing"):
        cg.solve(2)
    with pytest.raises(ValueError, match="D must be"):
        cg.solve(5)
    with pytest.raises(ValueError, match="increasing"):
        ConstraintGenerationHingeLP(F, y).path([2, 2])


def test_constraint_generation_grows_the_kpm_path_of_a_fold():
    """As a PathSolver of the KPM's path loop, over the rows of a fold without copying F:
    the path of the exact solver on those rows (objectives, risks, decision values)."""
    from kpm.hinge.constraint_generation import ConstraintGenerationPath
    from kpm.hinge.lp_path import grow_path, hinge_lp_path

    rng = np.random.default_rng(0)
    F = np.asfortranarray(rng.standard_normal((400, 10)))
    y = np.where(F[:, 0] + F[:, 1] ** 2 - 1 + 0.8 * rng.standard_normal(400) > 0, 1.0, -1.0)
    rows, other = np.arange(0, 400, 2), np.arange(1, 400, 2)
    grid = np.array([1, 2, 4, 7, 10])
    lp = ConstraintGenerationPath(F, y, rows=rows, init_size=50, random_state=0)
    mine = grow_path(lp, F, grid, n_samples=lp.n_samples)
    ref = hinge_lp_path(F[rows], y[rows], dims=grid, solver="highs")
    assert mine.n_solved == ref.n_solved == len(grid) and lp.n_cols == 10
    np.testing.assert_allclose(mine.objective, ref.objective, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mine.hinge_risk, ref.hinge_risk, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mine.decision_values(F[other]), ref.decision_values(F[other]), atol=1e-7)
    with pytest.raises(ValueError, match="next columns of F"):
        lp.add_columns(F[:, :1])


def nearly_constant_first(n, d, seed=0):
    """Features whose first column is nearly constant (as a Gaussian kernel's first
    eigenfunction): at D = 1 almost every point has margin below 1."""
    F, y = problem(n, d, seed=seed)
    first = 1.0 + 0.02 * F[:, 0] + 0.01 * np.random.default_rng(seed + 1).standard_normal(n)
    return np.asfortranarray(np.column_stack([first, F])), y


def assert_exact_and_certified(cg, F, y, results):
    for res in results:
        ref = full_lp_objective(F, y, res.n_components)
        assert abs(res.objective - ref) <= 1e-7 * max(1.0, abs(ref))
        assert np.isclose(res.objective, hinge_objective(F, y, res.coef, res.intercept), rtol=1e-12)
        assert abs(res.gap) <= 1e-7 * max(1.0, ref)


@pytest.mark.parametrize("below", [0.5, 0.9])
def test_aggregated_path_matches_full_lp_with_small_working_sets(below):
    F, y = nearly_constant_first(3000, 8, seed=1)
    plain = ConstraintGenerationHingeLP(F, y, init_size=300, random_state=1).path([1, 2, 5, 9])
    cg = ConstraintGenerationHingeLP(F, y, init_size=300, max_add=300, aggregate_below=below, random_state=1)
    results = cg.path([1, 2, 5, 9])
    assert_exact_and_certified(cg, F, y, results)
    # without aggregation most points are columns at D = 1; with it, far fewer
    assert plain[0].n_working > 0.75 * len(y)
    assert results[0].n_working < 0.6 * plain[0].n_working
    assert results[0].n_aggregated > 0.2 * len(y)
    # the last D's termination: outside W, the points of A are not beyond the margin and
    # the others not inside it
    res, ref = results[-1], cg._ref
    f = F[:, : res.n_components] @ res.coef + res.intercept
    f_ref = F[:, : len(ref.coef)] @ ref.coef + ref.intercept
    outside = np.ones(len(y), bool)
    outside[cg.working_set] = False
    in_A = outside & (y * f_ref < below)
    assert in_A.sum() == res.n_aggregated
    assert np.all(y[in_A] * f[in_A] - 1 <= 1e-9)
    assert np.all(1 - y[outside & ~in_A] * f[outside & ~in_A] <= 1e-9)


def test_aggregation_from_a_bad_reference_adds_points_along_the_farkas_ray(monkeypatch):
    """A reference that puts every point in A (f = 0) makes the aggregated LP infeasible:
    points of A enter W along HiGHS's ray until it is feasible, and the reference moves to
    the better solutions found; the optimum is unchanged."""
    from kpm.hinge.constraint_generation import HingeLPResult

    F, y = nearly_constant_first(2000, 6, seed=2)

    class ZeroReference:
        def solve(self, D):
            return HingeLPResult(D, np.zeros(D), 0.0, 0.0, 0.0, 0.0, 0, 0)

    cg = ConstraintGenerationHingeLP(F, y, init_size=100, max_add=100, aggregate_below=0.9, random_state=0)
    monkeypatch.setattr(cg, "_sample_lp", ZeroReference)
    results = cg.path([1, 3, 7])
    assert cg.ray_rounds > 0
    assert cg.moves > 0  # the LP's minimiser beat f = 0 and became the reference
    assert cg.dissolved == 0
    assert_exact_and_certified(cg, F, y, results)


@pytest.mark.parametrize("seed", [1, 2])
def test_line_minimiser_reaches_the_one_feature_optimum(seed):
    """The passes over the points find the minimum of the hinge sum of f = s F[:, 0] + b
    (nearly flat: F[:, 0] is nearly constant) from near and far starting slopes."""
    F, y = nearly_constant_first(3000, 8, seed=seed)
    best = full_lp_objective(F, y, 1)
    for start, rtol in ((0.0, 1e-6), (30.0, 1e-6), (-500.0, 2e-5)):  # the optimum's slope is about 60
        s, b = line_minimiser(InMemoryRows(F, y), start)
        assert hinge_objective(F, y, np.array([s]), b) <= best * (1 + rtol)


def test_line_minimiser_stops_at_once_on_a_constant_feature():
    """A constant first feature makes the hinge sum's minimum over b the same at every slope:
    one level of passes, no widening of the bracket, and the aggregated LP stays exact."""
    F, y = problem(600, 3, seed=4)
    F = np.asfortranarray(np.column_stack([np.ones(len(y)), F]))

    class Counting(InMemoryRows):
        hinge_calls = 0

        def line_hinge(self, slopes, intercepts):
            Counting.hinge_calls += 1
            return super().line_hinge(slopes, intercepts)

    src = Counting(F, y)
    s, b = line_minimiser(src, 0.3)
    assert Counting.hinge_calls == 1
    # the intercept to a 64^-3 fraction of the bends' range (at b = 0 the sum would be 600)
    assert np.isclose(hinge_objective(F, y, np.array([s]), b), full_lp_objective(F, y, 1), rtol=1e-6)
    cg = ConstraintGenerationHingeLP(F, y, init_size=100, max_add=100, aggregate_below=0.9, random_state=0)
    assert_exact_and_certified(cg, F, y, cg.path([1, 2]))


def test_line_derivatives_count_the_bends_and_add_over_parts():
    rng = np.random.default_rng(0)
    u, y = rng.standard_normal(500), np.where(rng.random(500) < 0.4, 1.0, -1.0)
    slopes, lo, width, n_bins = np.array([-2.0, 0.0, 3.0]), np.array([-4.0, -1.5, -9.0]), np.array([0.5, 0.1, 1.0]), 16
    d = line_derivatives(u, y, slopes, lo, width, n_bins)
    for j, s in enumerate(slopes):
        v = y - s * u  # where the hinge terms bend along the intercept b
        for k in range(n_bins + 1):
            edge = lo[j] + k * width[j]
            # the derivative in b just above the edge: class -1 below it minus class +1 at or above it
            assert d[j, k] == np.sum((y < 0) & (v < edge)) - np.sum((y > 0) & (v >= edge))
    parts = sum(line_derivatives(u[p], y[p], slopes, lo, width, n_bins) for p in np.array_split(np.arange(500), 3))
    np.testing.assert_array_equal(parts, d)


def test_aggregated_lp_at_d1_starts_from_the_line_minimiser():
    """With the full data's one-feature minimiser as A's reference, the LP at D = 1 holds
    only the band around the margin and is optimal at its first solve (no ray, no move)."""
    F, y = nearly_constant_first(3000, 8, seed=3)
    cg = ConstraintGenerationHingeLP(F, y, init_size=300, max_add=300, aggregate_below=0.9, random_state=1)
    res = cg.solve(1)
    assert_exact_and_certified(cg, F, y, [res])
    assert (res.n_rounds, cg.ray_rounds, cg.moves) == (1, 0, 0)
    assert res.n_working < 0.1 * len(y)
    assert res.n_aggregated > 0.5 * len(y)


def test_aggregate_below_is_checked():
    F, y = problem(100, 3)
    for bad in (1.0, 2.0, np.nan):
        with pytest.raises(ValueError, match="aggregate_below"):
            ConstraintGenerationHingeLP(F, y, aggregate_below=bad)


def test_margin_counts_count_the_band_and_add_over_parts():
    F, y = problem(700, 4, seed=5)
    coef, b = np.array([0.8, 0.3, -0.2]), 0.1
    widths = np.array([1e-3, 0.01, 0.1, 0.5, 2.0])
    counts = InMemoryRows(F, y).margin_counts(coef, b, widths)
    d = np.abs(y * (F[:, :3] @ coef + b) - 1)
    np.testing.assert_array_equal(counts, [np.sum(d < w) for w in widths])
    assert counts[0] < counts[-1]  # the widths split the points (the brute force is not trivially 0 or n)
    rows = np.arange(0, 700, 3)
    parts = sum(InMemoryRows(F, y, p).margin_counts(coef, b, widths) for p in np.array_split(rows, 4))
    np.testing.assert_array_equal(parts, InMemoryRows(F, y, rows).margin_counts(coef, b, widths))


def test_band_size_narrows_the_band_and_keeps_the_optimum():
    """A band of at most band_size points around each reference's margin: the working set
    starts from it, and the path is still exact and certified."""
    F, y = nearly_constant_first(3000, 8, seed=1)
    wide = ConstraintGenerationHingeLP(F, y, init_size=300, max_add=300, aggregate_below=0.5, random_state=1)
    wide_results = wide.path([1, 2, 5, 9])
    cg = ConstraintGenerationHingeLP(F, y, init_size=300, max_add=300, aggregate_below=0.5, band_size=150,
                                     random_state=1)
    installed = []
    install = cg._install_reference

    def recording_install(coef, intercept):
        W = len(cg.working_set)
        objective = install(coef, intercept)
        ref = cg._ref
        margin = y * (F[:, : len(ref.coef)] @ ref.coef + ref.intercept)
        installed.append((1 - ref.below, np.sum(np.abs(margin - 1) < 1 - ref.below), len(cg.working_set) - W))
        return objective

    cg._install_reference = recording_install
    results = cg.path([1, 2, 5, 9])
    assert_exact_and_certified(cg, F, y, results)
    for width, in_band, joined in installed:
        assert in_band <= 150 and joined <= in_band
        assert width < 0.5  # narrower than [c, 2 - c): that band holds more than 150 points here
    assert results[0].n_working < wide_results[0].n_working / 2


def test_band_size_is_checked():
    F, y = problem(100, 3)
    with pytest.raises(ValueError, match="needs aggregate_below"):
        ConstraintGenerationHingeLP(F, y, band_size=100)
    with pytest.raises(ValueError, match="band_size must be >= 1"):
        ConstraintGenerationHingeLP(F, y, aggregate_below=0.9, band_size=0)
    with pytest.raises(ValueError, match="band_size must be an integer"):
        ConstraintGenerationHingeLP(F, y, aggregate_below=0.9, band_size=2.5)


def test_reference_is_the_previous_optimum_where_the_sample_is_worse(monkeypatch):
    """At a new D the reference of A is the previous dimension's optimum (beta_D = 0) when its
    hinge sum is below that of the sample's optimum (here f = 0, a hinge sum of n)."""
    from kpm.hinge.constraint_generation import HingeLPResult

    F, y = nearly_constant_first(2000, 6, seed=2)
    cg = ConstraintGenerationHingeLP(F, y, init_size=100, max_add=100, aggregate_below=0.9, random_state=0)
    first = cg.solve(2)
    rays = cg.ray_rounds

    class ZeroReference:
        def solve(self, D):
            return HingeLPResult(D, np.zeros(D), 0.0, 0.0, 0.0, 0.0, 0, 0)

    monkeypatch.setattr(cg, "_sample_lp", ZeroReference)
    coef, intercept = cg._reference(4)
    np.testing.assert_array_equal(coef, np.concatenate([first.coef, [0.0, 0.0]]))
    assert intercept == first.intercept
    results = [cg.solve(4), cg.solve(6)]
    assert_exact_and_certified(cg, F, y, [first] + results)
    # with f = 0 as the reference (every point in A) these two solves took 21 rounds along rays
    assert cg.ray_rounds - rays <= 2


@pytest.mark.parametrize("below", [None, 0.9])
def test_weighted_constraint_generation_is_the_weighted_lp(below):
    """Sample weights weigh the hinge terms: the path is that of the dense weighted LP and of
    the LP of the repeated rows, with and without the aggregated term; zero weights drop
    their rows."""
    from kpm.hinge.lp_path import hinge_lp_path

    F, y = problem(600, 6, seed=3)
    w = np.random.default_rng(0).integers(0, 4, len(y)).astype(float)
    Ds = [1, 3, 6]
    opts = dict(init_size=100, random_state=1)
    if below is not None:
        opts.update(aggregate_below=below, max_add=100)
    cg = ConstraintGenerationHingeLP(F, y, sample_weight=w, **opts)
    results = cg.path(Ds)
    dense = hinge_lp_path(F, y, max(Ds), dims=Ds, sample_weight=w)
    rep = w.astype(int)
    for res, D in zip(results, Ds):
        ref = full_lp_objective(np.repeat(F, rep, axis=0), np.repeat(y, rep), D)
        assert abs(res.objective - ref) <= 1e-7 * max(1.0, ref)
        assert abs(dense.objective[Ds.index(D)] - ref) <= 1e-7 * max(1.0, ref)
        f = F[:, :D] @ res.coef + res.intercept
        assert np.isclose(res.objective, float(w @ np.maximum(0.0, 1.0 - y * f)), rtol=1e-9)
        assert abs(res.gap) <= 1e-7 * max(1.0, ref)
    assert not np.isin(np.flatnonzero(w == 0), cg.working_set).any()
    if below is not None:
        assert max(r.n_aggregated for r in results) > 0
