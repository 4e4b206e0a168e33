"""Stop the processes a run leaves behind when the run itself is killed.

A parallel run (:func:`kpm_reproduce.experiments.runner.run_tasks` with ``jobs > 1``) starts
joblib's loky workers, which keep idling for minutes after their last task, and resource
trackers (loky's and :mod:`multiprocessing`'s), which live as long as any process that could
still register a resource with them. A run killed by SIGKILL has no chance to stop them:
they are re-parented and go on. :func:`watch_descendants` starts, once per process, a small
watchdog process (``python -m kpm_reproduce.experiments.reaper``) that

* notes the descendants of the run every :data:`PERIOD` seconds while it lives, and marks
  every process started after it through an environment variable (:data:`TOKEN_VAR`),
  which children inherit;
* as soon as the run is gone (its pipe to the watchdog closes, or its process is no longer
  there), sends SIGTERM to every process it noted or that carries the mark, waits
  :data:`GRACE` seconds (the resource trackers ignore SIGTERM, but exit on their own, after
  cleaning up, once the last process using them is gone) and sends SIGKILL to what is left.

A process is identified by its pid and start time, so a pid reused by an unrelated process is
never signalled.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import uuid

__all__ = ["TOKEN_VAR", "PERIOD", "GRACE", "watch_descendants", "reap"]

#: Environment variable marking the processes started by a watched run.
TOKEN_VAR = "KPM_RUNNER_TOKEN"
#: Seconds between two looks at the run's descendants.
PERIOD = 0.5
#: Seconds the leftover processes get to exit after SIGTERM before SIGKILL.
GRACE = 5.0

_WATCHER = {}


def watch_descendants():
    """Start the watchdog of this process (once; later calls do nothing).

    Returns
    -------
    subprocess.Popen
        The watchdog process.
    """
    if _WATCHER.get("pid") == os.getpid() and _WATCHER["proc"].poll() is None:
        return _WATCHER["proc"]
    token = f"{os.getpid()}-{uuid.uuid4().hex}"
    os.environ[TOKEN_VAR] = token  # inherited by every process started from now on
    proc = subprocess.Popen(
        [sys.executable, "-m", "kpm_reproduce.experiments.reaper", str(os.getpid()), token],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=os.name == "posix",  # Ctrl-C in the terminal is not for it
    )
    _WATCHER.update(pid=os.getpid(), proc=proc)
    return proc


def _identity(proc):
    import psutil

    try:
        return proc.pid, proc.create_time()
    except psutil.Error:
        return None


def _marked(token, me):
    """Processes carrying ``token`` in their environment (the run's, wherever they are)."""
    import psutil

    found = []
    for p in psutil.process_iter(["environ"], ad_value=None):
        env = p.info.get("environ")
        if p.pid != me and env and env.get(TOKEN_VAR) == token:
            found.append(p)
    return found


def reap(processes, grace=GRACE):
    """SIGTERM ``processes`` (psutil.Process), then SIGKILL those alive after ``grace`` s."""
    import psutil

    alive = []
    for p in processes:
        try:
            p.send_signal(signal.SIGTERM)
            alive.append(p)
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(alive, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=grace)


def _watch(parent_pid, token, period=PERIOD):
    import psutil

    me = os.getpid()
    try:
        parent = psutil.Process(parent_pid)
    except psutil.Error:
        parent = None
    seen = {}  # (pid, start time) -> Process
    stdin = sys.stdin.fileno()
    while parent is not None:
        try:
            for p in parent.children(recursive=True):
                ident = _identity(p)
                if ident is not None and p.pid != me:
                    seen.setdefault(ident, p)
        except psutil.Error:
            break  # the run is gone
        if not parent.is_running():
            break
        ready, _, _ = select.select([stdin], [], [], period)
        if ready and not os.read(stdin, 4096):
            break  # the run closed its end of the pipe: it exited, or was killed
    time.sleep(0.05)  # let a normal exit finish its own shutdown
    targets = {}
    for ident, p in seen.items():
        if _identity(p) == ident:  # still the same process (not a reused pid)
            targets[ident] = p
    for p in _marked(token, me):
        ident = _identity(p)
        if ident is not None:
            targets.setdefault(ident, p)
    reap(list(targets.values()))


if __name__ == "__main__":  # pragma: no cover - run as the watchdog process
    _watch(int(sys.argv[1]), sys.argv[2])
