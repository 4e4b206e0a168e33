"""Smoke test of benchmarks/bench_large_n.py (tiny n, the exact basis's budget lowered so that the
default KPM takes the Nyström basis; the 10^5 run is the benchmark's default)."""

import json

import pytest


def test_bench_large_n_tiny(tmp_path):
    import bench_large_n

    bench_large_n.main(["--n", "1100", "--n-test", "1000", "--pipeline-C", "1", "--max-kernel-bytes",
                        str(8 * 1000 * 1000), "--out", str(tmp_path)])
    res = json.loads((tmp_path / "bench_large_n.json").read_text())
    k = res["kpm"]
    assert k["basis"] == "nystroem"  # 8 * 1100^2 bytes are over the lowered budget
    assert k["D"] in range(1, 1001) and k["C"] in bench_large_n.PIPELINE_CS
    assert k["test_error"] < 0.2 and k["cpu_s"] > 0 and k["peak_rss_gib"] >= res["rss_after_data_gib"]
    p = res["pipeline"]
    assert p["n_part"] == 880 and p["grid_fits"] == 55
    assert p["grid_wall_s_estimate"] == pytest.approx(55 * p["one_fit"]["wall_s"])
    assert [e["C"] for e in p["errors"]] == [1.0] and p["errors"][0]["test_error"] < 0.2
    text = (tmp_path / "bench_large_n.md").read_text()
    assert f"| nystroem | {k['D']} | {k['C']:.4g} | {100 * k['test_error']:.2f} % |" in text
