"""Smoke tests of the KPM benchmark scripts (small inputs; the full runs are in docs/results)."""

import pytest


@pytest.mark.slow
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


def test_compare_kpm_solvers(tmp_path):
    import compare_kpm_solvers

    compare_kpm_solvers.main(["--realizations", "1", "--datasets", "heart", "--out", str(tmp_path)])
    text = (tmp_path / "kpm_solvers_table2_check.md").read_text()
    assert "| heart | 1 | 1 |" in text
