"""Smoke tests of the KPM benchmark scripts (small inputs; the full runs are in docs/results)."""

import numpy as np
import pytest


@pytest.mark.slow
@pytest.mark.usefixtures("data_dir")
def test_bench_kpm_one_realization():
    import bench_kpm

    rec = bench_kpm.run_one("banana", 1, ["exact", "highs"])
    for key in ("svc", "kpm_exact", "kpm_highs"):
        assert 0.0 <= rec[key]["test_error"] < 0.2
        assert rec[key]["wall_s"] > 0
    assert rec["kpm_exact"]["D"] == rec["kpm_highs"]["D"]
    assert rec["kpm_exact"]["lp_fallbacks"] == 0
    table = bench_kpm.summarise([rec], ["exact", "highs"])
    assert "| banana |" in table


@pytest.mark.usefixtures("data_dir")
def test_validate_hinge_simplex_config_and_referee():
    import validate_hinge_simplex as v

    rec = v.run_config("heart", 1, 1.0, False)
    assert len(rec["folds"]) == 5
    for f in rec["folds"]:
        assert f["simplex_error"] is None and f["highs_error"] is None
        assert f["max_rel_diff"] < 1e-9
    # the referee on a forced disagreement: cold HiGHS agrees with both paths there
    rec["folds"][0]["dims_over_1e-9"] = [3]
    v.adjudicate([rec])
    cold = rec["folds"][0]["cold"][0]
    assert cold["status"] == 0
    assert cold["simplex"] == pytest.approx(cold["cold"], rel=1e-9, abs=1e-9)
    assert "referee" in v.summarise([rec])


@pytest.mark.usefixtures("data_dir")
def test_compare_kpm_solvers(tmp_path):
    import compare_kpm_solvers

    compare_kpm_solvers.main(["--realizations", "1", "--datasets", "heart", "--out", str(tmp_path)])
    text = (tmp_path / "kpm_solvers_table2_check.md").read_text()
    assert "| heart | 1 | 1 |" in text


def test_svm_formulation_grid_rules_by_hand():
    import svm_formulation_grid as g

    E = np.full((len(g.SUPERSET), 3), 9.0)
    T = np.arange(len(g.SUPERSET) * 3, dtype=float).reshape(len(g.SUPERSET), 3)
    c30 = int(np.flatnonzero(g.SUPERSET == 30.0)[0])
    c1 = int(np.flatnonzero(g.SUPERSET == 1.0)[0])
    E[c30, 0] = 1.0  # the joint minimum, only in the grids holding C = 30
    E[c1, 2] = 5.0  # the best C at D = rank (the last column) among C <= 10
    E[c1, 1] = 2.0
    out = g.rule_errors(E, T)
    assert out["joint all 8"] == T[c30, 0]
    assert out["joint {0.1,0.3,1,3,10}"] == T[c1, 1]
    assert out["2-stage {0.1,0.3,1,3,10}"] == T[c1, 1]
    assert out["2-stage all 8"] == T[c1, 1]  # C = 30 is not the best at D = rank


@pytest.mark.slow
@pytest.mark.usefixtures("data_dir")
def test_bench_kpm_svm_variant():
    import bench_kpm

    rec = bench_kpm.run_one("banana", 1, ["svm", "default"])
    assert rec["kpm_svm"]["C"] in (0.1, 0.3, 1.0, 3.0, 10.0)
    assert np.isclose(rec["kpm_default"]["C"], np.logspace(-2, 3, 11)).any()  # the two-stage rule's grid
    assert rec["kpm_svm"]["D"] <= rec["kpm_svm"]["rank"]
    assert "| banana |" in bench_kpm.summarise([rec], ["svm"])
