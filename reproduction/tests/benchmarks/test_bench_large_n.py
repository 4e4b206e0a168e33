"""Smoke test of benchmarks/bench_large_n.py (tiny n, the exact basis's budget lowered so that the
default KPM takes the Nyström basis; the 10^5 run is the benchmark's default)."""

import json

import pytest


def test_bench_large_n_tiny(tmp_path):
    import bench_large_n

    bench_large_n.main(["--n", "1100", "--n-test", "1000", "--pipeline-C", "1", "--max-kernel-bytes",
                        str(8 * 1000 * 1000), "--out", str(tmp_path)])
    res = json.loads((tmp_path / "bench_large_n_1100.json").read_text())
    k = res["kpm"]
    assert k["basis"] == "nystroem" and k["n_selection_samples"] == 1100  # 8 * 1100^2 bytes over the budget
    assert k["D"] in range(1, 1001) and k["C"] in bench_large_n.PIPELINE_CS
    assert k["test_error"] < 0.2 and k["cpu_s"] > 0 and k["peak_rss_gib"] >= res["rss_after_data_gib"]
    p = res["pipeline"]
    assert p["n_part"] == 880 and p["grid_fits"] == 55
    assert p["grid_wall_s_estimate"] == pytest.approx(55 * p["one_fit"]["wall_s"])
    assert [e["C"] for e in p["errors"]] == [1.0] and p["errors"][0]["test_error"] < 0.2
    assert bench_large_n.results_name(100_000) == "bench_large_n"  # the default size's report keeps its name
    text = (tmp_path / "bench_large_n_1100.md").read_text()
    assert f"| nystroem | 1,100 | {k['D']} | {k['C']:.4g} | {100 * k['test_error']:.2f} % |" in text


def test_bench_large_n_dask_tiny(tmp_path):
    """--dask-workers: the default KPM's model through a LocalCluster (the final SVM streamed over
    the workers' chunks), the client's memory alone with --no-kpm."""
    pytest.importorskip("distributed")
    import bench_large_n

    bench_large_n.main(["--n", "1100", "--n-test", "1000", "--no-pipeline", "--no-kpm", "--dask-workers", "1",
                        "--out", str(tmp_path)])
    res = json.loads((tmp_path / "bench_large_n_1100_dask.json").read_text())
    assert "kpm" not in res and "pipeline" not in res
    d = res["dask"]
    assert d["basis"] == "nystroem (Dask)" and d["workers"] == 1 and d["n_selection_samples"] == 1100
    assert d["D"] in range(1, 1001) and d["C"] in bench_large_n.PIPELINE_CS and d["test_error"] < 0.2
    assert len(d["worker_peak_rss_gib"]) == 1 and d["worker_peak_rss_gib"][0] > 0
    assert d["rss_growth_gib"] == pytest.approx(d["peak_rss_gib"] - res["rss_after_data_gib"])
    assert "streamed_fit" in d["timings"]
    text = (tmp_path / "bench_large_n_1100_dask.md").read_text()
    assert f"| nystroem (Dask) | 1,100 | {d['D']} | {d['C']:.4g} | {100 * d['test_error']:.2f} % |" in text
