"""Smoke test of benchmarks/bench_dask_kpm.py (tiny n on a 2-process LocalCluster)."""

import json

import pytest


@pytest.mark.slow
def test_bench_dask_kpm_small(tmp_path):
    pytest.importorskip("distributed")
    import bench_dask_kpm

    bench_dask_kpm.main(["--n", "3000", "--landmarks", "60", "--max-components", "4", "--n-test", "2000",
                         "--memory-limit", "1GiB", "--configs", "none:200", "0.9:300", "0.9:300:150", "--out", str(tmp_path)])
    results = json.loads((tmp_path / "dask_kpm.json").read_text())["results"]
    assert [(r["aggregate_below"], r["init_working_set"], r["band_size"]) for r in results] == [
        (None, 200, None), (0.9, 300, None), (0.9, 300, 150)]
    for res in results:
        assert res["test_error"] < 0.06  # Bayes error 2.3 %
        assert len(res["worker_peak_rss_gib"]) == 2 and min(res["worker_peak_rss_gib"]) > 0.05
    # the same LP optima: the same chosen D and test predictions' error
    assert len({r["D"] for r in results}) == 1 and len({r["test_error"] for r in results}) == 1
    text = (tmp_path / "dask_kpm.md").read_text()
    assert "| test error |" in text and "aggregate_below=0.9, init_working_set=300" in text
    assert "init_working_set=300, band_size=150" in text
