"""Smoke test of benchmarks/svm_c_rule.py (one small realization; the full run is in the notes)."""

import json

import numpy as np
import pytest


def test_centred_scale_and_rule_params():
    import svm_c_rule as s

    K = np.eye(4)  # centred trace 4 - 4/4 = 3
    assert s.centred_scale(K) == pytest.approx(4 / 3)
    assert s.rule_params("joint-scaled", K)["C"] == pytest.approx([c * 4 / 3 for c in s.DEFAULT_C])
    assert s.rule_params("two-stage", K) == {"C": s.WIDE_C, "c_selection": "two-stage"}
    with pytest.raises(ValueError, match="rule must be one of"):
        s.rule_params("smallest", K)


@pytest.mark.usefixtures("data_dir")
def test_one_realization_reads_the_reference_and_tabulates(tmp_path):
    import svm_c_rule as s

    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps({"results": {"kpm13/heart/r001": {"svm": {"error": 12.5, "C": 3.0}}}}))
    s.main(["--datasets", "heart", "--realizations", "1", "1", "--rules", "joint", "two-stage",
            "--svc-reference", str(ref), "--out", str(tmp_path)])
    rec = json.loads((tmp_path / "svm_c_rule.json").read_text())[0]
    assert rec["svc"] == {"error": 12.5, "C": 3.0, "source": str(ref)}
    assert rec["kpm"]["two-stage"]["C"] in s.WIDE_C and rec["kpm"]["joint"]["C"] in s.DEFAULT_C
    assert 1 <= rec["kpm"]["two-stage"]["D"] <= rec["kpm"]["two-stage"]["rank"]
    gaps = [rec["kpm"][r]["error"] - 12.5 for r in ("joint", "two-stage")]
    row = [line for line in (tmp_path / "svm_c_rule.md").read_text().splitlines() if line.startswith("| heart")]
    assert row == [f"| heart | kpm13 | 1–1 (1) | {rec['kpm']['joint']['error']:.2f} | "
                   f"{rec['kpm']['two-stage']['error']:.2f} | 12.50 | {gaps[0]:+.2f} | {gaps[1]:+.2f} | "
                   f"{rec['kpm']['two-stage']['C']:.3g} |"]


def test_one_se_choice_by_hand():
    import svm_c_rule as s

    curve = {"C": np.array([0.1, 0.1, 1.0, 1.0, 10.0]), "D": np.array([1, 5, 1, 5, 5]),
             "cv_error": np.array([0.30, 0.26, 0.24, 0.20, 0.19])}
    # n = 100: SE = sqrt(0.19 * 0.81 / 100) = 0.039 -> threshold 0.229: first is (C=1, D=5)
    assert s.one_se_choice(curve, 100) == (1.0, 5)
    # n = 10000: SE = 0.0039 -> only the minimum
    assert s.one_se_choice(curve, 10000) == (10.0, 5)
