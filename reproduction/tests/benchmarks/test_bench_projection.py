"""Smoke test of benchmarks/bench_projection.py (small n; the full run is in docs/results)."""

import json


def test_bench_projection_small(tmp_path):
    import bench_projection

    bench_projection.main(["--sizes", "400", "700", "--repeats", "2", "1", "--dense-max-n", "400",
                           "--n-features", "12", "--threads", "1", "--out", str(tmp_path)])
    rows = json.loads((tmp_path / "projection_1thread.json").read_text())
    assert [r["n"] for r in rows] == [400, 700]
    assert [len(r["methods"]["kpm KernelProjection (auto)"]["times"]) for r in rows] == [2, 1]
    assert rows[0]["n_features"] == 12 and rows[0]["gamma"] == 1 / 12
    assert "sklearn KernelPCA default" in rows[0]["methods"]
    assert "sklearn KernelPCA default" not in rows[1]["methods"]  # above --dense-max-n
    for row in rows:
        kpm = row["methods"]["kpm KernelProjection (auto)"]
        assert kpm["residual"] < 1e-10
    assert rows[0]["methods"]["kpm KernelProjection (auto)"]["sin_angle_vs_dense"] < 1e-8
    text = (tmp_path / "projection.md").read_text()
    assert "fastest scikit-learn solver" in text and "| 700 |" in text
    assert "n_features=12" in text and "fastest accurate" in text


def test_bench_projection_repeats_must_match_sizes():
    import bench_projection
    import pytest

    with pytest.raises(ValueError, match="one per size"):
        bench_projection.run([400, 500, 600], [2, 1])
