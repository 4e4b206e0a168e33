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
runs only the missing tasks; a stored result that is malformed (not an object, a field that
does not match the task's ``schema``, or an impossible value: see :class:`Range` and
``Task.check``) is reported and computed again, and a file that is not a results file at
all is an error naming the file and what is wrong (:class:`ResultsFileError`). A file that
holds finished results is replaced only with ``overwrite=True``; without it or ``resume``
the run is refused (:class:`ExistingResultsError`), so finished work is never lost
silently. Local worker processes (``jobs > 1``), busy or idle, and the resource trackers of
joblib/loky and multiprocessing exit when the process that started them dies, even by
SIGKILL (:mod:`kpm_reproduce.experiments.reaper`); temporary files of a killed writer are
removed by the next run.

Results file layout::

    {"format": "kpm-runner/1", "config": {...}, "complete": false,
     "n_tasks": 600, "n_done": 123, "updated": "2026-...Z",
     "results": {"<task key>": {...task result...,
                                 "_elapsed_s": 1.23, "_worker": "host:pid"}}}

Example
-------
>>> from kpm_reproduce.experiments.runner import Task, run_tasks
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
    "Range",
    "ResultsFile",
    "ResultsFileError",
    "ExistingResultsError",
    "SchedulerUnavailableError",
    "check_result",
    "check_replace",
    "cap_realizations",
    "print_stderr",
    "warn",
    "run_tasks",
    "load_results",
    "atomic_write_json",
    "to_jsonable",
]

FORMAT = "kpm-runner/1"


class SchedulerUnavailableError(ConnectionError):
    """The Dask scheduler given by its address did not answer in time."""


class ResultsFileError(ValueError):
    """A results file that cannot be used; the message names the file and the problem."""


class ExistingResultsError(ValueError):
    """A run would replace finished results without being asked to (neither ``resume`` nor
    ``overwrite``); the message names the file and both ways on."""


def warn(message):
    """Tell the user something they should know, as one ``warning:`` line on standard error."""
    print_stderr(f"warning: {message}")


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
    schema : mapping, optional
        What a stored result must hold to be reused (see :func:`check_result`), e.g.
        ``{"error": Range(float, 0, 100), "D": Range(int, 1), "path": [float]}``.
    check : callable, optional
        ``check(result) -> str or None``: the relations between fields that a result must
        satisfy (e.g. a path as long as its ``max_dim``), run after ``schema`` matched;
        it returns why the result is impossible, or None. It is not sent to the workers.
    """

    key: str
    fn: Callable[..., Mapping[str, Any]]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    schema: Mapping[str, Any] = field(default_factory=dict)
    check: Callable[[Mapping[str, Any]], Any] | None = None


@dataclass(frozen=True)
class Range:
    """A schema kind: a number of type ``kind`` (``float``: finite, or ``int``) within
    ``[lo, hi]`` (None: no bound on that side).

    Example: ``{"error": Range(float, 0, 100), "D": Range(int, 1)}`` -- a percentage and a
    positive dimension.
    """

    kind: type = float
    lo: float | None = None
    hi: float | None = None

    def __post_init__(self):
        if self.kind not in (float, int):
            raise ValueError(f"Range kind must be float or int, got {self.kind!r}")
        if self.lo is not None and self.hi is not None and self.lo > self.hi:
            raise ValueError(f"Range needs lo <= hi, got [{self.lo}, {self.hi}]")

    def describe(self):
        if self.hi is None:
            return f">= {self.lo:g}"
        if self.lo is None:
            return f"<= {self.hi:g}"
        return f"in [{self.lo:g}, {self.hi:g}]"


def _kind_problem(value, kind):
    """Why ``value`` is not of schema ``kind`` (None if it is)."""
    if isinstance(kind, tuple):  # alternatives, e.g. (float, None)
        probs = [_kind_problem(value, k) for k in kind]
        return None if any(p is None for p in probs) else probs[0]
    if kind is None:
        return None if value is None else f"is {value!r}, not null"
    if isinstance(kind, Range):
        p = _kind_problem(value, kind.kind)
        if p is not None:
            return p
        if (kind.lo is not None and value < kind.lo) or (kind.hi is not None and value > kind.hi):
            return f"is {value!r}, not {kind.describe()}"
        return None
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return None if ok else f"is {value!r}, not a number"
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else f"is {value!r}, not an integer"
    if kind is bool:
        return None if isinstance(value, bool) else f"is {value!r}, not true/false"
    if kind is str:
        return None if isinstance(value, str) else f"is {value!r}, not a string"
    if isinstance(kind, list):
        if not isinstance(value, list):
            return f"is {value!r:.40}, not a list"
        for i, v in enumerate(value):
            p = _kind_problem(v, kind[0])
            if p is not None:
                return f"[{i}] {p}"
        return None
    if isinstance(kind, Mapping):
        p = check_result(value, kind)
        return None if p is None else p
    raise TypeError(f"unknown schema kind {kind!r}")


def check_result(result, schema=None, check=None):
    """Why a stored task result is unusable, or None if it is fine.

    Parameters
    ----------
    result : object
        A result as read from a results file.
    schema : mapping, optional
        ``{field: kind}``; a kind is ``float`` (a finite number), ``int``, ``bool``, ``str``,
        ``None`` (null), a :class:`Range` (a number within bounds), a tuple of
        alternatives, ``[kind]`` (a list of that kind) or a nested mapping. Fields not
        named are not checked.
    check : callable, optional
        ``check(result) -> str or None``, the relations between fields (see :class:`Task`);
        called only when ``schema`` matched.

    Returns
    -------
    str or None
        A short description of the first problem found (``"field 'error' is 'abc', not a
        number"``, ``"field 'error' is -5, not in [0, 100]"``), None when the result matches.
    """
    if not isinstance(result, Mapping):
        return f"is {result!r:.40}, not an object"
    if not result:
        return "is empty"
    for name, kind in (schema or {}).items():
        if name not in result:
            return f"has no field {name!r}"
        p = _kind_problem(result[name], kind)
        if p is not None:
            return p if p.startswith("field ") else f"field {name!r} {p}"
    if check is not None:
        return check(result)
    return None


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


def _tmp_prefix(path):
    return f"{path.name}.{socket.gethostname()}.{os.getpid()}."


def atomic_write_text(path, text):
    """Write ``text`` to ``path`` atomically (temp file in the same folder + ``os.replace``).

    The temporary file is named ``<name>.<host>.<pid>.<random>.tmp``; one left by a writer
    that was killed is removed by :func:`remove_stale_temporaries`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(path), suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; results are ordinary files
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_json(path, data):
    """Write ``data`` as JSON to ``path`` atomically (see :func:`atomic_write_text`)."""
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=False, allow_nan=False))


def remove_stale_temporaries(path):
    """Remove temporary files of ``path`` left by dead writers on this host; return them."""
    path = Path(path)
    host = socket.gethostname()
    removed = []
    for tmp in path.parent.glob(f"{path.name}.*.tmp"):
        parts = tmp.name[len(path.name) + 1:].split(".")
        try:
            pid = int(parts[-3])
        except (IndexError, ValueError):
            pid = None
        legacy = pid is None  # the old naming <name>.<random>.tmp carried no pid
        if legacy or (".".join(parts[:-3]) == host and not _pid_alive(pid)):
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def read_json(path):
    """Read a JSON file; a missing, unreadable, binary or malformed file is a
    :class:`ResultsFileError` whose message names the file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ResultsFileError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsFileError(
            f"{path}: not a text file (byte {exc.start} is not UTF-8); it is damaged or not a "
            "results file -- delete it or choose another --out") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            "delete it or choose another --out") from None


def load_results(path):
    """Read a results file written by :func:`run_tasks` and check its structure.

    The individual task results are not checked here (see :func:`check_result`).

    Raises
    ------
    ResultsFileError
        The file is missing, not valid JSON, or not a runner results file (the message
        names the file and the problem).
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ResultsFileError(f"{path}: not a kpm runner results file (format {FORMAT!r} expected)")
    for name in ("config", "results", "errors"):
        if name == "errors" and name not in data:
            continue
        if not isinstance(data.get(name), dict):
            raise ResultsFileError(
                f"{path}: {name!r} is {json.dumps(data.get(name))[:40]}, not an object of "
                f"{'settings' if name == 'config' else 'task entries'}; the file is damaged -- "
                "delete it or choose another --out")
    return data


def usable_results(data, tasks, path):
    """The stored results of ``data`` that ``tasks`` may reuse, and the malformed ones.

    Returns
    -------
    good : dict
        ``{key: result}`` of well-formed entries (entries of keys outside ``tasks`` are kept
        if they are non-empty objects).
    bad : dict
        ``{key: problem}`` of the entries that will be recomputed.
    """
    by_key = {t.key: t for t in tasks}
    good, bad = {}, {}
    for key, res in data["results"].items():
        t = by_key.get(key)
        problem = check_result(res, None if t is None else t.schema, None if t is None else t.check)
        if problem is None:
            good[key] = res
        else:
            bad[key] = problem
    return good, bad


def require_results(path, tasks):
    """Stored results of ``tasks`` for a report (no computation): a malformed entry is a
    :class:`ResultsFileError` naming the file, the task and the problem."""
    data = load_results(path)
    good, bad = usable_results(data, tasks, path)
    if bad:
        key, problem = next(iter(bad.items()))
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise ResultsFileError(
            f"{path}: the result of task {key!r} {problem}{more}; rerun with --resume to "
            "compute the damaged tasks again")
    return data, good


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


def print_stderr(message):
    """The default ``notify``: ``message`` as one line on standard error."""
    import sys

    print(message, file=sys.stderr, flush=True)


def cap_realizations(n, available, *, option="-n", notify=None):
    """How many realizations of each data set a run uses: ``n``, or all where there are fewer.

    Parameters
    ----------
    n : int or None
        The number asked for (None: all).
    available : dict
        ``{dataset: number of realizations}``.
    option : str
        How the user gave ``n`` (named in the warning).
    notify : callable, optional
        Receives one ``warning:`` line naming the data sets that have fewer than ``n``
        realizations and their number (default: standard error).

    Returns
    -------
    dict
        ``{dataset: count}``.
    """
    if n is None:
        return dict(available)
    short = {d: R for d, R in available.items() if R < int(n)}
    if short:
        (notify or print_stderr)(
            f"warning: {option} {int(n)} is more than the number of realizations of "
            + ", ".join(f"{d} ({R})" for d, R in short.items()) + "; using all of them")
    return {d: min(int(n), R) for d, R in available.items()}


def _previous(path, cfg, tasks, notify):
    """The reusable results of the file ``path`` for a resumed run (see ``run_tasks``)."""
    old = load_results(path)
    if old["config"] != cfg:
        raise ValueError(
            f"{path} was written with different settings ({_config_changes(old['config'], cfg)}); "
            "--resume continues a run with the same settings only. Run with --overwrite instead "
            "of --resume to compute everything again with the new settings (the finished "
            "results in that file are replaced), or choose another --out to keep them."
        )
    good, bad = usable_results(old, tasks, path)
    if notify is not None:
        keys = {t.key for t in tasks}
        reused = sum(k in good for k in keys)
        if reused:
            notify(f"resuming {path}: {reused} of {len(keys)} tasks already done")
        if bad:
            shown = "; ".join(f"{k} {p}" for k, p in list(bad.items())[:3])
            more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
            notify(f"warning: {path}: {len(bad)} stored result(s) are malformed (a missing "
                   f"field, a wrong type or an impossible value) and will be computed again: "
                   f"{shown}{more}")
    return good


def _config_changes(old, new, shown=4):
    """The settings that differ between two run configurations, as ``name: old -> new``."""
    keys = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    parts = [f"{k}: {old.get(k, '(not set)')!r} -> {new.get(k, '(not set)')!r}" for k in keys[:shown]]
    more = f"; and {len(keys) - shown} more" if len(keys) > shown else ""
    return "; ".join(parts) + more


def check_replace(path, config=None, *, resume=False, overwrite=False):
    """Refuse to start a run that would replace finished results it was not asked to replace.

    A run without ``resume`` rewrites its results file from scratch; where that file holds
    finished task results (or cannot be read as a results file, so its content is unknown),
    that needs ``overwrite=True``. Drivers that write several results files call this for
    each of them before computing anything.

    Parameters
    ----------
    path : path-like
        The results file the run would write.
    config : dict, optional
        The run's settings (to say whether the stored results are of the same settings).
    resume, overwrite : bool
        The run's mode; they exclude each other.

    Raises
    ------
    ValueError
        ``resume`` and ``overwrite`` both true.
    ExistingResultsError
        Neither is true and ``path`` holds finished results; the message names the file,
        how many results it holds and the options ``--resume`` and ``--overwrite``.
    """
    if resume and overwrite:
        raise ValueError("--resume and --overwrite exclude each other: --resume keeps the "
                         "finished results, --overwrite replaces them")
    path = Path(path)
    if resume or overwrite or not path.exists():
        return
    try:
        data = load_results(path)
    except ResultsFileError as exc:
        raise ExistingResultsError(
            f"{exc}; a run without --resume would replace it: add --overwrite to do so, or "
            "choose another --out") from None
    n = sum(1 for v in data["results"].values() if isinstance(v, Mapping) and v)
    if not n:
        return  # nothing finished: nothing to lose
    cfg = to_jsonable(dict(config or {}))
    if config is not None and data["config"] != cfg:
        raise ExistingResultsError(
            f"{path} holds {n} finished task(s) of an earlier run with other settings; add "
            "--overwrite to replace them, or choose another --out")
    raise ExistingResultsError(
        f"{path} holds {n} finished task(s) of an earlier run; add --resume to reuse them "
        "(only the missing tasks are computed) or --overwrite to compute everything again "
        "and replace them")


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


_WATCHDOG = []


def _exit_with_parent(parent_pid, period=0.5):
    """In a worker process: exit as soon as ``parent_pid`` is no longer our parent.

    Loky keeps idle workers for minutes and a busy one runs its task to the end; when the
    run that started them is killed (SIGKILL leaves it no chance to stop them) they are
    re-parented, which this daemon thread notices within ``period`` seconds.
    """
    import threading

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(period)
        os._exit(1)

    threading.Thread(target=watch, name="kpm-parent-watchdog", daemon=True).start()
    _WATCHDOG.append(parent_pid)


def _keyed_call(key, fn, kwargs, threads=1, record_errors=False, parent_pid=None):
    if parent_pid is not None and parent_pid != os.getpid() and not _WATCHDOG \
            and os.getppid() == parent_pid:
        _exit_with_parent(parent_pid)
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

    from kpm_reproduce.experiments.reaper import watch_descendants

    # idle workers and the resource trackers do not run _keyed_call's watchdog: a process
    # of its own stops them if this one is killed
    watch_descendants()
    par = Parallel(n_jobs=jobs, return_as="generator_unordered")
    me = os.getpid()
    yield from par(delayed(_keyed_call)(t.key, t.fn, t.kwargs, threads, rec, me) for t in todo)


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
    notify=None,
    overwrite=False,
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
        ``config``) and run only the others. When False, a file that holds finished
        results is replaced only with ``overwrite=True`` (see :func:`check_replace`).
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
    notify : callable, optional
        ``notify(message)`` receives what the user should know: how many results a resume
        reuses, which stored results are malformed and computed again, removed temporary
        files. Default: printed to standard error.
    overwrite : bool, default=False
        Replace the finished results of ``results_path`` (excludes ``resume``).

    Returns
    -------
    dict
        ``{key: result}`` for every task of ``tasks`` that succeeded (all of them unless
        ``on_error='record'``).

    Raises
    ------
    ValueError
        Duplicate keys, bad arguments, resuming a file with another config.
    ExistingResultsError
        Neither ``resume`` nor ``overwrite`` and ``results_path`` holds finished results.
    ResultsFileError
        ``resume=True`` and the existing file is not a usable results file (the message
        names the file and the problem).
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
    if notify is None:
        notify = print_stderr

    check_replace(path, cfg, resume=resume, overwrite=overwrite)
    if resume and path.exists():
        _previous(path, cfg, tasks, None)  # fail early, before connecting or locking

    # connect before touching the file, so a dead scheduler leaves old results alone
    client = _connect(scheduler, scheduler_timeout) if scheduler is not None else None
    try:
        lock = _acquire_lock(path)
    except BaseException:
        if client is not None:
            client.close()
        raise
    try:
        for tmp in remove_stale_temporaries(path):
            notify(f"removed {tmp.name}, a temporary file left by a run that was killed")
        # re-read under the lock; results of tasks outside this run are kept too
        previous = _previous(path, cfg, tasks, notify) if resume and path.exists() else {}
    except BaseException:
        lock.unlink(missing_ok=True)
        if client is not None:
            client.close()
        raise
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
