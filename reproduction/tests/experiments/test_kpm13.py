"""Smoke test of ``kpm reproduce kpm-13`` (two small sets, two realizations, small grids)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from kpm_reproduce.experiments import kpm13

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def report(tmp_path_factory, data_dir):
    out = tmp_path_factory.mktemp("kpm13")
    st = kpm13.Settings(datasets=["heart", "titanic"], n_realizations=2,
                        C_grid=np.logspace(-1, 2, 4), max_dim=8, out=out, progress=False)
    return out, kpm13.run_kpm13(st)


def test_structure(report):
    out, data = report
    assert [r["dataset"] for r in data["rows"]] == ["heart", "titanic"]
    assert all(r["n"] == 2 and r["realizations"] == [1, 2] for r in data["rows"])
    assert data["complete"] is False and data["failures"] == {}
    md = (out / "kpm_13.md").read_text()
    assert "PARTIAL RESULTS" in md and "| heart" in md and "| titanic" in md
    assert json.loads((out / "kpm_13.json").read_text())["rows"] == data["rows"]


def test_cell_recomputed_from_json(report):
    out, _ = report
    data = json.loads((out / "kpm_13.json").read_text())
    row = data["rows"][0]
    per = data["per_realization"]["heart"]
    # D by CV = first minimiser of the stored CV path; its error = the test path at D
    for p in per:
        cvp = np.asarray(p["kpm_cv_error_path"], dtype=float)
        D = int(np.flatnonzero(cvp == np.nanmin(cvp))[0]) + 1
        assert p["kpm"]["cv"]["D"] == D
        assert p["kpm"]["cv"]["error"] == pytest.approx(p["kpm_test_error_path"][D - 1])
    e = [p["kpm"]["cv"]["error"] for p in per]
    assert row["cv"]["mean"] == pytest.approx(np.mean(e))
    assert row["cv"]["se"] == pytest.approx(np.std(e, ddof=1) / math.sqrt(len(e)))
    s = [p["svm"]["error"] for p in per]
    assert row["svm"]["mean"] == pytest.approx(np.mean(s))
    assert row["oracle"]["mean"] == pytest.approx(np.mean([min(p["kpm_test_error_path"])
                                                           for p in per]))


def test_svm_formulation_column(report):
    out, data = report
    st = kpm13.Settings(datasets=["heart", "titanic"], n_realizations=2, out=out, progress=False)
    results = json.loads(kpm13.svm_results_path(st, "joint").read_text())["results"]
    per_set = data["svm_formulation_rows"]["joint"]
    assert [r["dataset"] for r in per_set] == ["heart", "titanic"]
    for row in per_set:
        errs = [results[f"kpm13svm/{row['dataset']}/r{r:03d}"]["error"] for r in (1, 2)]
        assert row["n"] == 2 and row["kpm_svm"]["mean"] == pytest.approx(np.mean(errs))
        svm = [p["svm"]["error"] for p in data["per_realization"][row["dataset"]]]
        assert row["gap"][0] == pytest.approx(np.mean(errs) - np.mean(svm))
    md = (out / "kpm_13.md").read_text()
    assert "C rule `joint`)" in md and "C rule `two-stage`; the estimator default with D by CV)" in md
    assert set(data["svm_formulation_rows"]) == {"joint", "two-stage"}


@pytest.mark.usefixtures("data_dir")
def test_svm_formulation_task_matches_the_estimator():
    from kpm_reproduce.datasets import load_raetsch
    from kpm import KernelProjectionMachine

    res = kpm13.svm_formulation_task("titanic", 3, kpm13.SIGMAS["titanic"])
    s = load_raetsch("titanic", 3)
    # the task's default C rule is the joint one, with its grid; its 5 folds
    m = KernelProjectionMachine(sigma=kpm13.SIGMAS["titanic"], formulation="svm", c_selection="joint",
                                C=kpm13.SVM_FORMULATION_C, cv=5, random_state=3,
                                cv_duplicates="split").fit(s.X_train, s.y_train)
    assert (res["D"], res["C"]) == (m.n_components_, m.C_)
    assert res["error"] == pytest.approx(100 * np.mean(m.predict(s.X_test) != s.y_test))


@pytest.mark.usefixtures("data_dir")
def test_two_stage_column_has_its_own_file_and_matches_the_estimator(tmp_path):
    from kpm_reproduce.datasets import load_raetsch
    from kpm import KernelProjectionMachine

    st = kpm13.Settings(datasets=["titanic"], n_realizations=1, out=tmp_path, progress=False,
                        svm_c_rules=("joint", "two-stage"))
    assert kpm13.svm_results_path(st, "joint") != kpm13.svm_results_path(st, "two-stage")
    res = kpm13.svm_formulation_task("titanic", 3, kpm13.SIGMAS["titanic"], c_rule="two-stage")
    s = load_raetsch("titanic", 3)
    m = KernelProjectionMachine(sigma=kpm13.SIGMAS["titanic"], formulation="svm", c_selection="two-stage",
                                C=np.logspace(-2, 3, 11), cv=5, random_state=3,
                                cv_duplicates="split").fit(s.X_train, s.y_train)
    assert (res["D"], res["C"]) == (m.n_components_, m.C_)
    assert res["error"] == pytest.approx(100 * np.mean(m.predict(s.X_test) != s.y_test))
    with pytest.raises(ValueError, match="svm_c_rules"):
        kpm13.Settings(datasets=["titanic"], svm_c_rules=("one-se",))


def test_report_only_rebuilds_the_same_rows(report):
    out, data = report
    st = kpm13.Settings(datasets=["heart", "titanic"], n_realizations=2,
                        C_grid=np.logspace(-1, 2, 4), max_dim=8, out=out, progress=False,
                        report_only=True)
    assert kpm13.run_kpm13(st)["rows"] == data["rows"]


def test_sigmas_are_the_braun_table_widths():
    # the table's widths are medians of distances computed from BLAS inner products
    # (|x|^2 + |y|^2 - 2 x.y, which loses digits to cancellation), whose last digits move with
    # the CPU: its regeneration on another machine moved them by up to 2e-8 relative (thyroid)
    rows = json.loads((ROOT / "docs" / "results" / "braun_table.json").read_text())["rows"]
    assert set(kpm13.SIGMAS) <= set(rows)
    for d, sigma in kpm13.SIGMAS.items():
        assert sigma == pytest.approx(rows[d]["sigma"], rel=1e-6), d


@pytest.mark.usefixtures("data_dir")  # the settings count the realizations of each set
def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="unknown data set"):
        kpm13.Settings(datasets=["nope"])
    with pytest.raises(ValueError, match="n_realizations"):
        kpm13.Settings(n_realizations=0)
    with pytest.raises(ValueError, match="svm_realizations"):
        kpm13.Settings(svm_realizations=-1)


def test_gap_evidence_by_hand():
    per = [{"kpm": {"cv": {"error": 5.0, "D": 3}}, "svm": {"error": 2.0},
            "kpm_test_error_path": [9.0, 4.0, 5.0, 6.0]},
           {"kpm": {"cv": {"error": 7.0, "D": 1}}, "svm": {"error": 4.0},
            "kpm_test_error_path": [7.0, 6.0, 3.0]}]
    data = {"rows": [{"dataset": "x", "trails_svm": True}, {"dataset": "y", "trails_svm": False}],
            "per_realization": {"x": per, "y": []}}
    (e,) = kpm13.gap_evidence(data)
    assert e["dataset"] == "x" and e["n"] == 2
    assert e["gap"][0] == pytest.approx(3.0) and e["gap"][1] == pytest.approx(0.0)
    assert e["selection_loss"][0] == pytest.approx((1.0 + 4.0) / 2)
    assert e["path_gap"][0] == pytest.approx((2.0 - 1.0) / 2)
    assert (e["D_cv_median"], e["D_oracle_median"], e["D_end_median"]) == (2.0, 2.5, 3.5)
    assert (e["cv_below_oracle"], e["cv_above_oracle"]) == (1, 1)
    assert e["path_end_error"][0] == pytest.approx(4.5)
