"""A background load for the timing benchmarks: processes spinning on the cores.

``BackgroundLoad(n)`` starts ``n`` Python processes, each a pure-Python busy loop (no BLAS, no
threads: one core's worth of work each), to time a library as it runs on a busy machine --
where a multithreaded BLAS waits for cores it does not get. The processes are bounded three
ways: :meth:`BackgroundLoad.stop` (the ``with`` block's end, an exception or Ctrl-C included)
terminates them, then kills those still alive; each ends by itself once its parent process is
gone (it checks its parent's pid a few times a second); and each ends after ``max_seconds``
whatever happens. A ``SIGTERM`` to the benchmark is turned into ``SystemExit`` while the load
runs, so that the ``with`` block's end stops the load then too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

__all__ = ["BackgroundLoad", "SPIN", "MAX_SECONDS"]

#: The busy loop of one process: arguments the parent's pid and the seconds at most.
SPIN = """
import os, sys, time
parent, end = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
n = 0
while time.monotonic() < end and os.getppid() == parent:
    for _ in range(200000):
        n += 1
"""
#: The default bound on each process's life (seconds).
MAX_SECONDS = 24 * 3600.0


class BackgroundLoad:
    """``n`` busy processes while the ``with`` block runs (none for ``n = 0``).

    Parameters
    ----------
    n : int
        Processes to start.
    max_seconds : float, default=:data:`MAX_SECONDS`
        Each process ends after this many seconds at most.

    Attributes
    ----------
    pids : list of int
        The processes' ids (kept after :meth:`stop`, to check that they are gone).
    """

    def __init__(self, n, max_seconds=MAX_SECONDS):
        if int(n) != n or n < 0:
            raise ValueError(f"the background load is a number of processes >= 0, got {n!r}")
        self.n, self.max_seconds = int(n), float(max_seconds)
        self.pids: list[int] = []
        self._procs: list[subprocess.Popen] = []
        self._old_sigterm = None

    def start(self):
        for _ in range(self.n):
            proc = subprocess.Popen([sys.executable, "-c", SPIN, str(os.getpid()), str(self.max_seconds)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            self._procs.append(proc)
            self.pids.append(proc.pid)
        if self.n and threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)
        return self

    def stop(self):
        """Terminate the processes, kill those still alive after 5 s, and reap them all."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self._procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs = []
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()


def _exit_on_sigterm(signum, frame):
    raise SystemExit(128 + signum)
