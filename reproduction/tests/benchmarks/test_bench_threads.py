"""Smoke test of benchmarks/bench_threads.py: a tiny run under one busy process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_tiny_run_times_both_thread_settings_and_stops_its_load(tmp_path):
    """Run as a program with OPENBLAS_NUM_THREADS=1 set: the variable is dropped (the default
    threads are OpenBLAS's own), the one-thread fits ran on one thread, the selection is the
    same at both, and the busy process is gone at the end."""
    others = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")  # e.g. set by make test
    env = {**{k: v for k, v in os.environ.items() if k not in others}, "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "reproduction" / "src")])}
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_threads.py"), "--sets", "breast_cancer",
                    "--max-n", "80", "--repeats", "1", "--background-load", "1", "--out", str(tmp_path)],
                   env=env, check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "bench_threads.json").read_text())
    assert result["dropped"] == {"OPENBLAS_NUM_THREADS": "1"}
    default = result["default_blas_threads"]
    assert default > 1 if len(os.sched_getaffinity(0)) > 1 else default == 1
    (row,) = result["sets"]
    assert (row["set"], row["n"]) == ("breast_cancer", 80)
    assert [r["blas_threads"] for r in row["runs"]["default"]] == [default]
    assert [r["blas_threads"] for r in row["runs"]["one"]] == [1]
    assert row["same_selection"]
    assert row["ratio"] == pytest.approx(row["runs"]["default"][0]["wall_s"] / row["runs"]["one"][0]["wall_s"])
    grid = result["grid"]
    assert len(grid["sigmas"]) == 4 and grid["ratio"] == pytest.approx(grid["median_s"]["2"] / grid["median_s"]["1"])
    assert len(result["background_pids"]) == 1
    for pid in result["background_pids"]:
        assert not os.path.exists(f"/proc/{pid}")  # stopped and reaped
    text = (tmp_path / "bench_threads.md").read_text()
    assert f"| breast_cancer | 80 | 30 | 2 | {row['median_s']['default']:.2f} | {row['median_s']['one']:.2f} | " \
           f"{row['ratio']:.2f} |" in text
    assert "1 process spinning on the cores" in text
