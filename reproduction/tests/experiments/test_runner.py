"""Tests for kpm_reproduce.experiments.runner: local / joblib / Dask execution, atomic resumable files."""

import json
import os
import socket
import sys

import cloudpickle
import numpy as np
import pytest

from kpm_reproduce.experiments.runner import (
    ExistingResultsError,
    Range,
    SchedulerUnavailableError,
    Task,
    load_results,
    run_tasks,
    to_jsonable,
)

# workers (loky, Dask) receive this module's functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def square(x, log=None):
    if log is not None:
        with open(log, "a") as fh:
            fh.write(f"{x}\n")
    return {"y": x * x, "arr": np.arange(2) * x, "f": np.float32(0.5)}


def interrupt_at(x, at, log):
    if x == at:
        raise KeyboardInterrupt
    return square(x, log)


def _tasks(n, fn=square, **kw):
    return [Task(f"sq/{i:02d}", fn, dict(x=i, **kw)) for i in range(n)]


def _calls(log):
    return [int(v) for v in log.read_text().split()] if log.exists() else []


def test_sequential_run_writes_complete_file(tmp_path):
    path = tmp_path / "r.json"
    res = run_tasks(_tasks(4), path, config={"a": 1}, progress=False)
    assert [res[f"sq/{i:02d}"]["y"] for i in range(4)] == [0, 1, 4, 9]
    data = load_results(path)
    assert data["complete"] is True and data["n_done"] == 4 and data["config"] == {"a": 1}
    assert data["results"]["sq/03"]["arr"] == [0, 3]
    assert "_elapsed_s" in data["results"]["sq/00"]
    assert not list(tmp_path.glob("*.tmp"))  # no temporary file left behind


def test_joblib_matches_sequential(tmp_path):
    a = run_tasks(_tasks(5), tmp_path / "a.json", jobs=1, progress=False)
    b = run_tasks(_tasks(5), tmp_path / "b.json", jobs=2, progress=False)
    strip = lambda r: {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")}
                       for k, v in r.items()}
    assert strip(a) == strip(b)


def test_interrupt_leaves_consistent_file_and_resume_skips_done(tmp_path):
    path, log = tmp_path / "r.json", tmp_path / "calls.txt"
    with pytest.raises(KeyboardInterrupt):
        run_tasks(_tasks(6, interrupt_at, at=3, log=str(log)), path, config={"v": 1},
                  progress=False)
    data = json.loads(path.read_text())  # valid JSON
    assert data["complete"] is False and data["n_done"] == 3
    assert sorted(data["results"]) == ["sq/00", "sq/01", "sq/02"]
    assert _calls(log) == [0, 1, 2]
    res = run_tasks(_tasks(6, square, log=str(log)), path, config={"v": 1}, resume=True,
                    progress=False)
    assert _calls(log) == [0, 1, 2, 3, 4, 5]  # finished ones were not rerun
    assert len(res) == 6 and load_results(path)["complete"] is True


def test_resume_refuses_other_config_and_overwrite_recomputes(tmp_path):
    path, log = tmp_path / "r.json", tmp_path / "calls.txt"
    run_tasks(_tasks(2, log=str(log)), path, config={"grid": 3}, progress=False)
    with pytest.raises(ValueError, match="different settings"):
        run_tasks(_tasks(2), path, config={"grid": 4}, resume=True, progress=False)
    run_tasks(_tasks(2, log=str(log)), path, config={"grid": 3}, overwrite=True, progress=False)
    assert _calls(log) == [0, 1, 0, 1]


def test_resume_with_other_settings_names_them_and_its_advice_works(tmp_path):
    """The refusal names what changed and a way on that is not refused in turn: the same
    command with --overwrite in place of --resume (dropping --resume alone is refused)."""
    path = tmp_path / "r.json"
    run_tasks(_tasks(2), path, config={"grid": 3, "seed": 0}, progress=False)
    with pytest.raises(ValueError) as err:
        run_tasks(_tasks(2), path, config={"grid": 4, "seed": 0}, resume=True, progress=False)
    msg = str(err.value)
    assert "grid: 3 -> 4" in msg and "seed" not in msg and "--overwrite instead of --resume" in msg
    assert "drop --resume" not in msg
    with pytest.raises(ExistingResultsError, match="--overwrite"):
        run_tasks(_tasks(2), path, config={"grid": 4, "seed": 0}, progress=False)
    res = run_tasks(_tasks(2), path, config={"grid": 4, "seed": 0}, overwrite=True, progress=False)
    assert len(res) == 2 and load_results(path)["config"] == {"grid": 4, "seed": 0}


def test_resume_keeps_results_outside_this_run(tmp_path):
    path = tmp_path / "r.json"
    run_tasks(_tasks(3), path, progress=False)
    run_tasks(_tasks(1), path, resume=True, progress=False)
    data = load_results(path)
    assert data["n_tasks"] == 1 and data["complete"] and len(data["results"]) == 3


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="duplicate"):
        run_tasks(_tasks(2) + _tasks(1), tmp_path / "r.json", progress=False)
    with pytest.raises(ValueError, match="jobs"):
        run_tasks(_tasks(1), tmp_path / "r.json", jobs=0, progress=False)
    with pytest.raises(ValueError, match="tcp://host:port"):
        run_tasks(_tasks(1), tmp_path / "r.json", scheduler="localhost", progress=False)
    (tmp_path / "bad.json").write_text("{ not json")
    with pytest.raises(ValueError, match="bad.json: not valid JSON"):
        run_tasks(_tasks(1), tmp_path / "bad.json", resume=True, progress=False)
    with pytest.raises(TypeError, match="not JSON"):
        to_jsonable({"a": object()})


def test_dead_scheduler_fails_fast_and_leaves_file_alone(tmp_path):
    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "r.json"
    run_tasks(_tasks(2), path, progress=False)
    before = path.read_text()
    with pytest.raises(SchedulerUnavailableError, match="did not answer within 2 s"):
        run_tasks(_tasks(3), path, scheduler=f"tcp://127.0.0.1:{port}", scheduler_timeout=2,
                  resume=True, progress=False)
    assert path.read_text() == before


def test_dask_localcluster_matches_local(tmp_path):
    from distributed import LocalCluster

    local = run_tasks(_tasks(4), tmp_path / "l.json", progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                      host="127.0.0.1", scheduler_port=0,
                      dashboard_address=None) as cluster:
        dist = run_tasks(_tasks(4), tmp_path / "d.json", scheduler=cluster.scheduler_address,
                         progress=False)
    for k in local:
        assert local[k]["y"] == dist[k]["y"] and local[k]["arr"] == dist[k]["arr"]
    assert load_results(tmp_path / "d.json")["complete"]


def blas_threads():
    from threadpoolctl import threadpool_info

    return {"n": [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]}


def test_tasks_run_with_one_blas_thread(tmp_path):
    import numpy  # noqa: F401  (loads the BLAS)

    res = run_tasks([Task("t", blas_threads)], tmp_path / "r.json", progress=False)
    assert res["t"]["n"] and all(n == 1 for n in res["t"]["n"])


def boom(x):
    if x == 1:
        raise RuntimeError("solver failed")
    return {"y": x}


def test_on_error_record_keeps_going_and_resume_retries(tmp_path):
    path = tmp_path / "r.json"
    tasks = [Task(f"b/{i}", boom, {"x": i}) for i in range(3)]
    with pytest.raises(RuntimeError, match="solver failed"):
        run_tasks(tasks, path, progress=False)
    res = run_tasks(tasks, path, progress=False, on_error="record", overwrite=True)
    assert sorted(res) == ["b/0", "b/2"]
    data = load_results(path)
    assert data["complete"] is False and "solver failed" in data["errors"]["b/1"]
    with pytest.raises(ValueError, match="on_error"):
        run_tasks(tasks, path, progress=False, on_error="ignore")


def test_lock_prevents_two_writers_and_stale_lock_is_taken_over(tmp_path):
    path = tmp_path / "r.json"
    lock = tmp_path / "r.json.lock"
    lock.write_text(f"{socket.gethostname()} {os.getpid()}")  # a live run (this process)
    with pytest.raises(RuntimeError, match="being written by another run"):
        run_tasks(_tasks(1), path, progress=False)
    lock.write_text(f"{socket.gethostname()} 999999999")  # a dead run
    run_tasks(_tasks(1), path, progress=False)
    assert not lock.exists() and load_results(path)["complete"]


# ----------------------------------------------------------------- damaged results files
SCHEMA = {"y": float, "arr": [float]}


def _schema_tasks(n):
    return [Task(f"sq/{i:02d}", square, {"x": i}, schema=SCHEMA) for i in range(n)]


def _damage(path, how):
    data = json.loads(path.read_text())
    if how == "results-null":
        data["results"] = None
    elif how == "entry-empty":
        data["results"]["sq/01"] = {}
    elif how == "entry-string":
        data["results"]["sq/01"] = "oops"
    elif how == "number-abc":
        data["results"]["sq/01"]["y"] = "abc"
    elif how == "list-item-abc":
        data["results"]["sq/01"]["arr"][1] = "abc"
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("how", ["entry-empty", "entry-string", "number-abc", "list-item-abc"])
def test_resume_recomputes_a_malformed_entry_and_says_so(tmp_path, how):
    path = tmp_path / "r.json"
    run_tasks(_schema_tasks(3), path, progress=False)
    _damage(path, how)
    said = []
    res = run_tasks(_schema_tasks(3), path, progress=False, resume=True, notify=said.append)
    assert res["sq/01"]["y"] == 1 and load_results(path)["complete"]
    assert any("sq/01" in m and "malformed" in m and str(path) in m for m in said), said


@pytest.mark.parametrize("how", ["entry-empty", "entry-string", "number-abc"])
def test_require_results_names_file_task_and_problem(tmp_path, how):
    from kpm_reproduce.experiments.runner import ResultsFileError, require_results

    path = tmp_path / "r.json"
    run_tasks(_schema_tasks(3), path, progress=False)
    _damage(path, how)
    with pytest.raises(ResultsFileError, match=r"r\.json: the result of task 'sq/01' "):
        require_results(path, _schema_tasks(3))


def test_results_null_is_a_clear_error(tmp_path):
    from kpm_reproduce.experiments.runner import ResultsFileError

    path = tmp_path / "r.json"
    run_tasks(_schema_tasks(2), path, progress=False)
    _damage(path, "results-null")
    with pytest.raises(ResultsFileError, match=r"r\.json: 'results' is null, not an object"):
        run_tasks(_schema_tasks(2), path, progress=False, resume=True)


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\x00\xff\xfe garbage", b"{not json",
                                     b'["a list"]', b""])
def test_garbage_file_is_a_clear_error_naming_the_file(tmp_path, content):
    from kpm_reproduce.experiments.runner import ResultsFileError

    path = tmp_path / "r.json"
    path.write_bytes(content)
    with pytest.raises(ResultsFileError, match=r"r\.json: not (a text file|valid JSON|a kpm)"):
        run_tasks(_tasks(2), path, progress=False, resume=True)
    assert path.read_bytes() == content  # left alone
    assert not (tmp_path / "r.json.lock").exists()


def test_check_result_kinds():
    from kpm_reproduce.experiments.runner import check_result

    schema = {"e": float, "D": int, "ok": bool, "p": [float], "sub": {"e": float}, "o": (float, None)}
    good = {"e": 1, "D": 2, "ok": True, "p": [1.5], "sub": {"e": 0.5}, "o": None}
    assert check_result(good, schema) is None
    assert check_result({**good, "D": 2.5}, schema) == "field 'D' is 2.5, not an integer"
    assert check_result({**good, "e": True}, schema) == "field 'e' is True, not a number"
    assert check_result({**good, "sub": {"e": "x"}}, schema) == "field 'e' is 'x', not a number"
    assert check_result({k: v for k, v in good.items() if k != "D"}, schema) == "has no field 'D'"
    assert check_result([], schema) == "is [], not an object"


def test_range_kinds_check_values():
    from kpm_reproduce.experiments.runner import Range, check_result

    schema = {"error": Range(float, 0, 100), "D": Range(int, 1), "t": Range(float, None, 5),
              "path": [Range(float, 0, 1)]}
    good = {"error": 12.5, "D": 3, "t": -1.0, "path": [0.0, 1.0]}
    assert check_result(good, schema) is None
    assert check_result({**good, "error": -5}, schema) == "field 'error' is -5, not in [0, 100]"
    assert check_result({**good, "D": 0}, schema) == "field 'D' is 0, not >= 1"
    assert check_result({**good, "D": 2.0}, schema) == "field 'D' is 2.0, not an integer"
    assert check_result({**good, "t": 6.0}, schema) == "field 't' is 6.0, not <= 5"
    assert check_result({**good, "path": [0.5, 1.5]}, schema) == "field 'path' [1] is 1.5, not in [0, 1]"
    with pytest.raises(ValueError, match="lo <= hi"):
        Range(float, 1, 0)
    with pytest.raises(ValueError, match="float or int"):
        Range(str)


def _square_check(result, x):
    return None if result["y"] == x * x else f"has y = {result['y']}, not {x}²"


def test_resume_recomputes_an_impossible_result_with_a_warning(tmp_path):
    from functools import partial

    path = tmp_path / "r.json"
    tasks = [Task(f"sq/{i:02d}", square, {"x": i}, {"y": Range(int, 0)}, partial(_square_check, x=i))
             for i in range(3)]
    run_tasks(tasks, path, progress=False)
    data = json.loads(path.read_text())
    data["results"]["sq/01"]["y"] = 5  # the right type, an impossible value
    data["results"]["sq/02"]["y"] = -4
    path.write_text(json.dumps(data))
    said = []
    res = run_tasks(tasks, path, progress=False, resume=True, notify=said.append)
    assert [res[f"sq/{i:02d}"]["y"] for i in range(3)] == [0, 1, 4]
    warning = [m for m in said if m.startswith("warning:")]
    assert warning == [f"warning: {path}: 2 stored result(s) are malformed (a missing field, a "
                       "wrong type or an impossible value) and will be computed again: sq/01 "
                       "has y = 5, not 1²; sq/02 field 'y' is -4, not >= 0"]


def test_stale_temporary_of_a_dead_writer_is_removed(tmp_path):
    path = tmp_path / "r.json"
    dead = tmp_path / f"r.json.{socket.gethostname()}.999999999.abcd1234.tmp"
    legacy = tmp_path / "r.json.k2j3h4.tmp"  # the naming of earlier versions
    dead.write_bytes(b"")
    legacy.write_bytes(b"")
    said = []
    run_tasks(_tasks(1), path, progress=False, notify=said.append)
    assert not list(tmp_path.glob("*.tmp")) and len(said) == 2


def test_failed_write_leaves_no_temporary(tmp_path, monkeypatch):
    from kpm_reproduce.experiments import runner

    path = tmp_path / "r.json"
    with pytest.raises(TypeError):
        runner.atomic_write_json(path, {"x": object()})
    assert not list(tmp_path.iterdir())


WORKER = r"""
import os, sys, time
from kpm_reproduce.experiments.runner import Task, run_tasks

def sleeper(i, folder):
    open(os.path.join(folder, f"worker-{os.getpid()}"), "w").close()
    time.sleep(120)
    return {"i": i}

if __name__ == "__main__":
    import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    folder = sys.argv[1]
    run_tasks([Task(f"s/{i}", sleeper, {"i": i, "folder": folder}) for i in range(4)],
              os.path.join(folder, "r.json"), jobs=2, progress=False)
"""


@pytest.mark.slow
def test_sigkilled_parallel_run_leaves_no_workers(tmp_path):
    """A SIGKILLed ``jobs=2`` run: its loky workers exit on their own (they would otherwise
    finish their 120 s tasks and idle for minutes), and the next run cleans up."""
    import signal
    import subprocess
    import time

    script = tmp_path / "run.py"
    script.write_text(WORKER)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)])
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("worker-*"))) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, "workers never started"
        time.sleep(0.2)
    pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    def alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        # a zombie is dead too (it waits only for init to reap it)
        try:
            with open(f"/proc/{pid}/stat") as fh:
                return fh.read().split(")")[-1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 60  # without the watchdog they live >= 120 s
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(alive(p) for p in pids)
    # the next run takes over the stale lock, keeps nothing and leaves no temporary file
    run_tasks(_tasks(1), tmp_path / "r.json", progress=False, resume=True)
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob("*.lock"))
