"""Smoke test of benchmarks/bench_exact_kpca.py (tiny n; the full run is in docs/results)."""

import json


def test_bench_exact_kpca_small(tmp_path):
    import bench_exact_kpca

    bench_exact_kpca.main(["--sizes", "300", "--k", "5", "--sklearn-max-n", "300",
                           "--out", str(tmp_path)])
    data = json.loads((tmp_path / "exact_kpca.json").read_text())
    (row,) = data["rows"]
    kpm = row["kpm"]
    assert kpm["status"] == "ok" and kpm["max_residual"] <= 1e-6
    assert kpm["peak_rss_bytes"] > 0 and kpm["n_float64_products"] >= 1
    for solver in ("auto", "arpack"):
        sk = row["sklearn"][solver]
        assert sk["status"] == "ok"
        assert sk["max_rel_eigenvalue_diff_vs_kpm"] < 1e-6
        assert sk["sin_angle_vs_kpm"] < 1e-3
    text = (tmp_path / "exact_kpca.md").read_text()
    assert "| 300 | kpm matrix-free | ok |" in text and "Where the time" in text


def test_sklearn_failure_is_recorded():
    """Under an address-space limit below its n x n kernel matrix scikit-learn fails, and the
    benchmark records how instead of crashing."""
    import bench_exact_kpca

    out = bench_exact_kpca._spawn(["sklearn", 12000, 5, "auto", 1.0, ""], log=lambda *a: None)
    assert out["status"] == "failed" and "MemoryError" in out["error"]
    assert out["kernel_matrix_bytes"] == 8 * 12000**2
    line = bench_exact_kpca._sk_line(12000, "auto", out)
    assert "failed after" in line and "1.07 GiB" in line
