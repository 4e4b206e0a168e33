"""Smoke test of benchmarks/bench_landmarks.py (small n and m; the full run is in docs/results)."""

import json
import statistics


def test_bench_landmarks_small(tmp_path):
    import bench_landmarks

    bench_landmarks.main(["--datasets", "twonorm", "--m", "20", "40", "--m-small", "10",
                          "--seeds", "0", "1", "--n-train", "400", "--n-test", "300",
                          "--sample", "200", "--out", str(tmp_path)])
    res = json.loads((tmp_path / "landmarks.json").read_text())["results"][0]
    for rule in ("uniform", "kmeans++", "rpcholesky"):
        a = res["approx"][rule]
        assert statistics.median(a["40"]) < statistics.median(a["20"])
    # the prefix curve and the recomputed error agree: r pivots reach the uniform target
    target = statistics.median(res["approx"]["uniform"]["40"])
    for need in res["needed"]:
        assert need["r"] is not None and need["r"] <= 40
        assert need["error_at_r"] <= target * (1 + 1e-8)
    assert {(d["rule"], d["m"]) for d in res["downstream"]} >= {("rpcholesky", 10), ("uniform", 40)}
    text = (tmp_path / "landmarks.md").read_text()
    assert "| twonorm |" in text and "RPCholesky at or below it" in text
