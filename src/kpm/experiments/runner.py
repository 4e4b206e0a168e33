"""A small, reusable runner for experiment *tasks* (dataset × realization × method).

A :class:`Task` is a key plus a picklable top-level function and its keyword arguments;
the function returns a JSON-serialisable ``dict``. :func:`run_tasks` executes a list of
tasks

* sequentially in this process (``jobs=1``),
* in parallel on this machine with joblib (``jobs=N`` or ``-1``),
* or on a Dask distributed cluster (``scheduler="tcp://host:port"``; plain
  ``distributed.Client`` futures, no scheduler of our own),

shows a rich progress bar with ETA, and writes every finished task to a JSON results file
as soon as it finishes. Each write is atomic (a temporary file in the same directory, then
``os.replace``), so the file is always a consistent snapshot, also after Ctrl-C or a crash.
The file's ``complete`` flag is true only when every task of the run has a result.
``resume=True`` keeps the finished results of a previous run with the same ``config`` and
runs only the missing tasks.

Results file layout::

    {"format": "kpm-runner/1", "config": {...}, "complete": false,
     "n_tasks": 600, "n_done": 123, "updated": "2026-...Z",
     "results": {"<task key>": {...task result...,
                                 "_elapsed_s": 1.23, "_worker": "host:pid"}}}

Example
-------
>>> from kpm.experiments.runner import Task, run_tasks
>>> tasks = [Task(f"sq/{i}", pow, {"base": i, "exp": 2}) for i in range(3)]  # doctest: +SKIP
>>> run_tasks(tasks, "out.json", jobs=2)                                       # doctest: +SKIP

(the task functions must return dicts; ``pow`` here is only for illustration.)
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

__all__ = [
    "Task",
    "ResultsFile",
    "SchedulerUnavailableError",
    "run_tasks",
    "load_results",
    "atomic_write_json",
    "to_jsonable",
]

FORMAT = "kpm-runner/1"


class SchedulerUnavailableError(ConnectionError):
    """The Dask scheduler given by its address did not answer in time."""


@dataclass(frozen=True)
class Task:
    """One unit of work.

    Parameters
    ----------
    key : str
        Unique, stable identifier (used for resuming), e.g. ``"svm_cv/heart/r007"``.
    fn : callable
        A module-level (picklable) function ``fn(**kwargs) -> dict``.
    kwargs : mapping
        Keyword arguments; must be picklable (for joblib / Dask).
    """

    key: str
    fn: Callable[..., Mapping[str, Any]]
    kwargs: Mapping[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- JSON helpers
def to_jsonable(obj):
    """Recursively convert numpy scalars/arrays, tuples and paths to JSON types.

    Non-finite floats become ``None`` (JSON has no NaN).
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, Path):
        return str(obj)
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"result value of type {type(obj).__name__} is not JSON-serialisable")


def atomic_write_json(path, data):
    """Write ``data`` as JSON to ``path`` atomically (temp file + ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; results are ordinary files
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=1, sort_keys=False, allow_nan=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_results(path):
    """Read a results file written by :func:`run_tasks`.

    Raises
    ------
    ValueError
        If the file is not valid JSON or not a runner results file.
    """
    path = Path(path)
    try:
        with open(path) as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a valid results file (bad JSON: {exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT or "results" not in data:
        raise ValueError(f"{path}: not a kpm runner results file (format {FORMAT!r} expected)")
    return data


def _now():
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class ResultsFile:
    """The on-disk state of one run; every :meth:`add` rewrites the file atomically."""

    def __init__(self, path, config, keys, previous=None):
        self.path = Path(path)
        self.config = to_jsonable(dict(config or {}))
        self.keys = list(keys)
        self.results = dict(previous or {})
        self.errors = {}

    @property
    def complete(self):
        return all(k in self.results for k in self.keys)

    def snapshot(self):
        return {
            "format": FORMAT,
            "config": self.config,
            "complete": self.complete,
            "n_tasks": len(self.keys),
            "n_done": sum(k in self.results for k in self.keys),
            "updated": _now(),
            "errors": self.errors,
            "results": self.results,
        }

    def write(self):
        atomic_write_json(self.path, self.snapshot())

    def add(self, key, result):
        self.results[key] = result
        self.errors.pop(key, None)
        self.write()

    def fail(self, key, message):
        self.errors[key] = message
        self.write()


# --------------------------------------------------------------------------- lock
def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _acquire_lock(path):
    """Create ``<results>.lock`` so that two runs never write the same results file.

    A lock left by a dead process on this host is taken over.
    """
    lock = Path(str(path) + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    me = f"{socket.gethostname()} {os.getpid()}"
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                host, pid = lock.read_text().split()
                pid = int(pid)
            except (OSError, ValueError):
                host, pid = None, None
            if host == socket.gethostname() and pid is not None and not _pid_alive(pid):
                lock.unlink(missing_ok=True)  # stale
                continue
            raise RuntimeError(
                f"{path} is being written by another run ({lock.read_text().strip() if lock.exists() else '?'}); "
                f"wait for it to finish, or delete {lock} if that run is gone"
            )
        with os.fdopen(fd, "w") as fh:
            fh.write(me)
        return lock
    raise RuntimeError(f"could not lock {path}")


# --------------------------------------------------------------------------- execution
def _call(fn, kwargs, threads=1):
    """Run one task (in whatever process) and annotate it with time and worker.

    BLAS/OpenMP thread pools are limited to ``threads`` during the task (None: no limit):
    on a loaded machine multi-threaded OpenBLAS can be 20x slower than one thread.
    """
    t0 = time.perf_counter()
    if threads is None:
        out = fn(**kwargs)
    else:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=int(threads)):
            out = fn(**kwargs)
    if not isinstance(out, Mapping):
        raise TypeError(f"task function {getattr(fn, '__name__', fn)} must return a dict")
    out = to_jsonable(dict(out))
    out["_elapsed_s"] = time.perf_counter() - t0
    out["_worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return out


def _keyed_call(key, fn, kwargs, threads=1, record_errors=False):
    if not record_errors:
        return key, _call(fn, kwargs, threads)
    try:
        return key, _call(fn, kwargs, threads)
    except Exception as exc:  # recorded in the results file; KeyboardInterrupt passes
        return key, {"_error": f"{type(exc).__name__}: {exc}"}


def _connect(scheduler, timeout):
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - distributed is a dependency
        raise RuntimeError("--scheduler needs the 'distributed' package") from exc
    if not isinstance(scheduler, str) or "://" not in scheduler:
        raise ValueError(
            f"scheduler address must look like 'tcp://host:port', got {scheduler!r}"
        )
    try:
        return Client(scheduler, timeout=f"{float(timeout)}s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise SchedulerUnavailableError(
            f"the Dask scheduler at {scheduler} did not answer within {timeout:g} s "
            f"({type(exc).__name__}: {exc}); start one with `dask scheduler` and workers with "
            "`dask worker <address>`, or run locally with --jobs"
        ) from exc


def _iter_local(todo, jobs, threads, rec):
    if jobs == 1:
        for t in todo:
            yield _keyed_call(t.key, t.fn, t.kwargs, threads, rec)
        return
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=jobs, return_as="generator_unordered")
    yield from par(delayed(_keyed_call)(t.key, t.fn, t.kwargs, threads, rec) for t in todo)


def _iter_dask(todo, client, threads, rec):
    from distributed import as_completed

    futures = [
        client.submit(_keyed_call, t.key, t.fn, t.kwargs, threads, rec,
                      key=f"kpm-{t.key}-{os.getpid()}", pure=False)
        for t in todo
    ]
    try:
        for fut in as_completed(futures, loop=client.loop):
            yield fut.result()
    finally:
        # on Ctrl-C / error: stop the rest of the work on the cluster
        client.cancel([f for f in futures if not f.done()])


def run_tasks(
    tasks,
    results_path,
    *,
    jobs=1,
    scheduler=None,
    resume=False,
    config=None,
    progress=True,
    description="tasks",
    scheduler_timeout=10.0,
    on_result=None,
    threads_per_task=1,
    on_error="raise",
):
    """Run tasks locally (joblib) or on Dask, saving each result as it finishes.

    Parameters
    ----------
    tasks : list of Task
        Keys must be unique.
    results_path : str or Path
        JSON results file (created with its parent directories).
    jobs : int, default=1
        Local parallelism (joblib ``n_jobs``; 1 = in this process, -1 = all cores).
        Ignored when ``scheduler`` is given.
    scheduler : str, optional
        Dask scheduler address ``tcp://host:port``; the tasks are submitted as futures.
    resume : bool, default=False
        Keep the finished results found in ``results_path`` (its ``config`` must equal
        ``config``) and run only the others. When False an existing file is overwritten.
    config : dict, optional
        The run's settings (recorded in the file; a resume with a different config is
        refused, so results of different protocols are never mixed).
    progress : bool, default=True
        Show a rich progress bar with ETA.
    description : str
        Label of the progress bar.
    scheduler_timeout : float, default=10
        Seconds to wait for the scheduler before failing.
    on_result : callable, optional
        ``on_result(key, result)`` called in this process after each task is saved.
    threads_per_task : int or None, default=1
        BLAS/OpenMP threads inside each task (``threadpoolctl``); parallelism comes from
        running tasks side by side. None leaves the thread pools alone.
    on_error : {'raise', 'record'}, default='raise'
        ``'record'``: a task that raises is written to the file's ``errors`` (message) and
        the run goes on; it is not a result, the file stays incomplete, and ``resume``
        retries it. The returned dict then lacks that key.

    Returns
    -------
    dict
        ``{key: result}`` for every task of ``tasks`` that succeeded (all of them unless
        ``on_error='record'``).

    Raises
    ------
    ValueError
        Duplicate keys, bad arguments, resuming a file with another config.
    SchedulerUnavailableError
        The scheduler did not answer within ``scheduler_timeout``.
    KeyboardInterrupt
        Re-raised after the file is left in a consistent (incomplete) state.
    """
    tasks = list(tasks)
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        dup = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"duplicate task keys: {dup[:5]}")
    for t in tasks:
        if not isinstance(t, Task):
            raise ValueError(f"tasks must be Task instances, got {type(t).__name__}")
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    rec = on_error == "record"
    if scheduler is None:
        if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0 or jobs < -1:
            raise ValueError(f"jobs must be a positive int or -1, got {jobs!r}")
    path = Path(results_path)
    cfg = to_jsonable(dict(config or {}))

    previous = {}
    if resume and path.exists():
        old = load_results(path)
        if old.get("config") != cfg:
            raise ValueError(
                f"{path} was written with different settings; cannot resume it "
                f"(file: {old.get('config')}, now: {cfg}). Use another --out or drop --resume."
            )
        # results of tasks outside this run are kept too (same config, still valid)
        previous = dict(old["results"])

    # connect before touching the file, so a dead scheduler leaves old results alone
    client = _connect(scheduler, scheduler_timeout) if scheduler is not None else None
    try:
        lock = _acquire_lock(path)
    except BaseException:
        if client is not None:
            client.close()
        raise
    if resume and path.exists():  # re-read under the lock
        previous = dict(load_results(path)["results"])
    state = ResultsFile(path, cfg, keys, previous)
    todo = [t for t in tasks if t.key not in state.results]

    prog = None
    stream = None
    try:
        state.write()
        if progress and todo:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                            transient=False)
            prog.start()
            bar = prog.add_task(description, total=len(todo))
        stream = (_iter_dask(todo, client, threads_per_task, rec) if client is not None
                  else _iter_local(todo, jobs, threads_per_task, rec))
        for key, result in stream:
            if "_error" in result:
                state.fail(key, result["_error"])
            else:
                state.add(key, result)
            if prog is not None:
                prog.advance(bar)
            if on_result is not None:
                on_result(key, result)
        state.write()
    except BaseException:
        state.write()  # consistent, complete=False unless everything was done
        raise
    finally:
        if stream is not None:
            stream.close()  # cancels the remaining Dask futures / joblib work
        if prog is not None:
            prog.stop()
        if client is not None:
            client.close()
        lock.unlink(missing_ok=True)
    return {k: state.results[k] for k in keys if k in state.results}
