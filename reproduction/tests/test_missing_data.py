"""Tests that need the benchmark data skip where the data are missing, with one summary line
saying how to get them, and fail instead under KPM_REQUIRE_DATA=1 (as CI runs them)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEST = "reproduction/tests/test_splice.py::test_decode_splice_matches_raw_sequences"


def _pytest(tmp_path, **env):
    env = {**os.environ, "KPM_DATA": str(tmp_path / "nowhere"), "KPM_REQUIRE_DATA": "", **env}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", TEST],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_missing_data_skip_with_one_line_naming_the_remedy(tmp_path):
    res = _pytest(tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = [line for line in res.stdout.splitlines() if "benchmark data" in line]
    assert len(lines) == 1, res.stdout
    assert lines[0].startswith("1 test skipped") and "kpm data fetch" in lines[0] and "KPM_DATA" in lines[0]
    assert "1 skipped" in res.stdout.splitlines()[-1]


@pytest.mark.slow
def test_missing_data_fail_when_required(tmp_path):
    res = _pytest(tmp_path, KPM_REQUIRE_DATA="1")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "KPM_REQUIRE_DATA is set" in res.stdout and "1 error" in res.stdout.splitlines()[-1]
