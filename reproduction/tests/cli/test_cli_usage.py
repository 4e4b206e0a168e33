"""The ``kpm`` command as a new user meets it: no process left behind by a killed parallel
run."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

KPM = str(Path(sys.executable).with_name("kpm"))


# ------------------------------------------------------------- SIGKILL of a parallel run
def _alive(proc):
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.slow
def test_sigkilled_parallel_reproduction_leaves_no_process_behind(tmp_path, data_dir):
    """``kpm reproduce kpm-table2 -j 2`` killed by SIGKILL: its loky workers (the busy one
    and the idle one), the loky and multiprocessing resource trackers, every descendant, is
    gone within a bounded time (without the watchdog they lived for minutes)."""
    import psutil

    cmd = [KPM, "reproduce", "kpm-table2", "--datasets", "heart", "-n", "1", "--C-grid",
           "1e-2:1e3:3000", "--kpm-max-dim", "6", "--no-figure", "--quiet", "-j", "2",
           "--data-dir", str(data_dir), "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    me = psutil.Process(proc.pid)
    seen = {}
    deadline = time.monotonic() + 120
    settled = None
    try:
        # wait for both workers (one task: one of them stays idle), then a second more
        while settled is None or time.monotonic() < settled:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, f"workers never started: {list(seen.values())}"
            for p in me.children(recursive=True):
                try:
                    seen.setdefault(p.pid, (p, " ".join(p.cmdline())))
                except psutil.Error:
                    pass
            if settled is None and sum("LokyProcess" in c for _, c in seen.values()) >= 2:
                settled = time.monotonic() + 1.0
            time.sleep(0.1)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert any("resource_tracker" in c for _, c in seen.values()), list(seen.values())
    deadline = time.monotonic() + 30
    while any(_alive(p) for p, _ in seen.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [c for p, c in seen.values() if _alive(p)]
    assert not left, left
