"""Smoke test of benchmarks/bench_dask_kpm.py (tiny n on a 2-process LocalCluster)."""

import json

import pytest


@pytest.mark.slow
def test_bench_dask_kpm_small(tmp_path):
    pytest.importorskip("distributed")
    import bench_dask_kpm

    bench_dask_kpm.main(["--n", "3000", "--landmarks", "60", "--max-components", "4", "--n-test", "2000",
                         "--memory-limit", "1GiB", "--out", str(tmp_path)])
    res = json.loads((tmp_path / "dask_kpm.json").read_text())["results"]
    assert res["test_error"] < 0.06  # Bayes error 2.3 %
    assert len(res["worker_peak_rss_gib"]) == 2 and min(res["worker_peak_rss_gib"]) > 0.05
    assert "| test error |" in (tmp_path / "dask_kpm.md").read_text()
