"""Selection rules of the KPM: CV ties, penalty, exact penalty path and slope heuristic."""

import numpy as np
import pytest

from kpm.machine.selection import (
    candidate_penalties,
    penalty_path,
    select_cv,
    select_penalty,
    slope_heuristic,
)


def _brute_selected(dims, risks, lam):
    crit = risks + lam * dims
    cand = np.flatnonzero(np.isclose(crit, crit.min(), rtol=0, atol=1e-12))
    return cand[np.argmin(dims[cand])]


def test_select_cv_ties_to_smaller_dimension():
    dims = np.arange(1, 7)
    err = np.array([0.3, 0.2, 0.1, 0.1, 0.25, 0.1])
    assert select_cv(dims, err) == 2
    # joint family: same D repeated, the smaller D wins then the earlier model
    dims2 = np.array([1, 2, 3, 1, 2, 3])
    err2 = np.array([0.3, 0.1, 0.1, 0.2, 0.1, 0.05])
    assert select_cv(dims2, err2) == 5
    err2[5] = 0.1
    assert select_cv(dims2, err2) == 1


def test_hand_made_hull():
    # points (D, R): hull vertices D = 1, 2, 4, 5, 6 (D = 3 lies above the chord 2-4)
    dims = np.arange(1, 7)
    risks = np.array([1.0, 0.6, 0.5, 0.2, 0.15, 0.14])
    path = penalty_path(dims, risks)
    np.testing.assert_array_equal(dims[path.vertices], [1, 2, 4, 5, 6])
    np.testing.assert_allclose(path.breakpoints, [0.4, 0.2, 0.05, 0.01])
    np.testing.assert_array_equal(path.jumps, [1, 2, 1, 1])
    idx, lam_jump, _ = slope_heuristic(dims, risks, 2.0)
    assert lam_jump == pytest.approx(0.2)
    # lam = 0.4: criteria 1.4, 1.4, 1.7, 1.8, ... -> tie between D=1 and D=2 -> D=1
    assert dims[idx] == 1
    idx, lam_jump, _ = slope_heuristic(dims, risks, 1.5)
    assert dims[idx] == 2  # lam = 0.3: 1.3, 1.2, 1.4, 1.4, ...


def test_slope_heuristic_picks_the_elbow():
    # steep decrease until D = 10, then a slow linear decrease: the largest jump of
    # D(lam) goes from the elbow to the end; twice that slope selects the elbow
    dims = np.arange(1, 41)
    first = 1.0 - 0.08 * dims + 1e-4 * dims**2  # strictly convex: jumps of 1
    second = 0.2 - 0.004 * (dims - 10) + 0.001 * np.sin(np.pi * (dims - 10) / 30)  # above its chord
    risks = np.where(dims <= 10, first - first[9] + 0.2, second)
    idx, lam_jump, path = slope_heuristic(dims, risks, 2.0)
    assert path.jumps.max() == 30
    assert lam_jump == pytest.approx(0.004)
    assert dims[idx] == 10


def test_penalty_path_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(20):
        dims = np.arange(1, 31)
        risks = np.sort(rng.uniform(0, 1, 30))[::-1] + rng.uniform(0, 0.05, 30)
        path = penalty_path(dims, risks)
        for lam in np.concatenate([path.breakpoints, np.geomspace(1e-4, 2, 60)]):
            assert path.selected(lam) == _brute_selected(dims, risks, lam)
            assert select_penalty(dims, risks, lam) == _brute_selected(dims, risks, lam)


def test_candidate_penalties_cover_every_combination():
    rng = np.random.default_rng(1)
    paths, curves = [], []
    for _ in range(3):
        dims = np.arange(1, 21)
        risks = np.sort(rng.uniform(0, 1, 20))[::-1]
        curves.append((dims, risks))
        paths.append(penalty_path(dims, risks))
    cands = candidate_penalties(paths)
    seen = {tuple(p.selected(lam) for p in paths) for lam in cands}
    fine = {tuple(p.selected(lam) for p in paths) for lam in np.geomspace(1e-6, 10, 20000)}
    fine.add(tuple(p.selected(0.0) for p in paths))
    assert fine <= seen


def test_bad_input():
    with pytest.raises(ValueError, match="finite"):
        select_cv([1, 2], [0.1, np.nan])
    with pytest.raises(ValueError, match="same length"):
        select_penalty([1, 2, 3], [0.1, 0.2], 0.1)
    with pytest.raises(ValueError, match=">= 0"):
        select_penalty([1, 2], [0.1, 0.2], -1.0)
    with pytest.raises(ValueError, match="slope_factor"):
        slope_heuristic([1, 2], [0.2, 0.1], 0.0)
    with pytest.raises(ValueError, match="empty"):
        penalty_path([], [])



def test_candidate_penalties_and_rules_name_bad_input():
    # candidate_penalties([1, 2]) was an AttributeError
    with pytest.raises(ValueError, match="paths must hold PenaltyPath objects.*got int 1"):
        candidate_penalties([1, 2])
    with pytest.raises(ValueError, match="paths must be an iterable of PenaltyPath"):
        candidate_penalties(3)
    path = penalty_path([1, 2, 3], [0.5, 0.2, 0.1])
    np.testing.assert_array_equal(candidate_penalties(path), candidate_penalties([path]))
    with pytest.raises(ValueError, match="the penalty lam must be finite"):
        path.selected(np.nan)
    with pytest.raises(ValueError, match="atol must be >= 0"):
        select_cv([1, 2], [0.1, 0.2], atol=-1.0)
    with pytest.raises(ValueError, match="the penalty lam must be a real number"):
        select_penalty([1, 2], [0.1, 0.2], "0.1")
    with pytest.raises(ValueError, match="slope_factor must be finite"):
        slope_heuristic([1, 2], [0.2, 0.1], np.inf)
    with pytest.raises(ValueError, match="dims must be an array of real numbers"):
        select_cv(["a", "b"], [0.1, 0.2])


@pytest.mark.parametrize("dims", [[-3, -2, -1], [1.5, 2.5, 3.5]])
def test_dims_must_be_non_negative_integers(dims):
    risks = [0.3, 0.2, 0.1]
    for f in (lambda: select_cv(dims, risks), lambda: select_penalty(dims, risks, 0.01),
              lambda: penalty_path(dims, risks), lambda: slope_heuristic(dims, risks)):
        with pytest.raises(ValueError, match="dims must be non-negative integers"):
            f()


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_candidate_penalties_at_extreme_magnitudes(scale):
    # the geometric means overflowed to inf (1e300) or underflowed to 0 (1e-300)
    dims = np.arange(1, 8)
    risks = scale * np.array([0.9, 0.5, 0.3, 0.2, 0.15, 0.12, 0.11])
    c = candidate_penalties(penalty_path(dims, risks))
    assert np.all(np.isfinite(c)) and c[-1] == 0.0
    assert np.all(np.diff(c) < 0)
    ref = candidate_penalties(penalty_path(dims, risks / scale)) * scale
    np.testing.assert_allclose(c[1:-1], ref[1:-1], rtol=1e-12)
