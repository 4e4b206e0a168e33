"""Provenance of a generated report: which code, which command, which machine, when.

Every report a reproduction writes starts with :func:`header`, so that a table in
``docs/results/`` says how to get it again and what it was computed with;
:func:`write_report` writes a run's record and report beside each other.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

__all__ = ["command_line", "code_version", "machine", "header", "write_report", "CODE_PATHS", "UNCOMMITTED"]


def command_line(argv=None):
    """The command as typed: ``kpm`` and its arguments (or the Python program's)."""
    argv = list(sys.argv if argv is None else argv)
    prog = Path(argv[0]).name if argv else "python"
    if prog in ("kpm", "__main__.py"):
        return shlex.join(["kpm", *argv[1:]])
    if prog.endswith(".py"):  # a script, e.g. python benchmarks/bench_projection.py
        return shlex.join(["python", argv[0], *argv[1:]])
    return shlex.join([prog, *argv[1:]])


#: The files whose uncommitted changes can change a report's numbers: the library, the
#: reproduction package and the benchmark scripts, and the packaging that installs them.
#: Documentation, tests and the reports themselves do not count.
CODE_PATHS = ("src", "reproduction/src", "benchmarks", "pyproject.toml", "reproduction/pyproject.toml")


def code_version(where=None):
    """``kpm <version>``, plus the git commit when kpm runs from a git checkout.

    The commit is asked of git in the folder ``where`` (default: that of the installed
    package, an editable install of a clone). Where the checkout has uncommitted changes to
    the code that computes the numbers (:data:`CODE_PATHS`), the line says so and names the
    changed files: ``kpm 0.1.0, commit 0123456789 with uncommitted changes to
    src/kpm/x.py``. Changes elsewhere (documentation, tests, the reports a run writes into
    ``docs/results``) do not change a report's numbers and are not mentioned. A report whose
    line names uncommitted changes is not to be committed: regenerate it from committed code.
    Where HEAD moved on while the process ran (a commit during a long run), the commit named
    is the one HEAD was at when the process started, the code it imported.
    """
    import kpm

    version = f"kpm {kpm.__version__}"
    where = Path(kpm.__file__).resolve().parent if where is None else Path(where)
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=where,
                             capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return version
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                  *(f":(top){p}" for p in CODE_PATHS)],
                                 cwd=where, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return version
    line = f"{version}, commit {sha.stdout.strip()}"
    started = _commit_at_start(where)
    if started and started != sha.stdout.strip():
        line = f"{version}, commit {started} (HEAD when the run started; {sha.stdout.strip()} when it ended)"
    files = [entry[3:].strip() for entry in changed.stdout.splitlines() if entry.strip()]
    if files:
        more = f" and {len(files) - 3} more" if len(files) > 3 else ""
        line += f" {UNCOMMITTED} " + ", ".join(files[:3]) + more
    return line


def _process_start():
    """When this process started, in seconds since the epoch (Linux's ``/proc``), else None."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime (clock ticks after boot)
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _commit_at_start(where):
    """The commit HEAD was at when this process started (the last commit before then on
    HEAD's first-parent line): a long run during which the checkout moved on computed its
    numbers with the code it imported then, not with the new HEAD. None where unknown."""
    start = _process_start()
    if start is None:
        return None
    try:
        out = subprocess.run(["git", "rev-list", "-1", "--first-parent", f"--before={int(start)}", "HEAD"],
                             cwd=where, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()[:10] if out.returncode == 0 and out.stdout.strip() else None


#: What :func:`code_version` says of a checkout whose code has uncommitted changes.
UNCOMMITTED = "with uncommitted changes to"


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


def machine():
    """CPU model, core count, memory and OS in one line."""
    mem = _memory_gib()
    return (f"{_cpu_model()}, {os.cpu_count()} cores"
            + (f", {mem:.0f} GiB" if mem else "")
            + f", {platform.system()} {platform.release()}, Python {platform.python_version()}")


def header(command=None, *, when=None, code=None):
    """Markdown lines that open a report: command, code version, machine and date.

    Parameters
    ----------
    command : str, optional
        The command line that produced the report (default: :func:`command_line`).
    when : datetime, optional
        Default: now (UTC).
    code : str, optional
        The code version the run started with (:func:`code_version` then; default: now). A
        run that saves its record as it goes makes the checkout dirty by the time it writes
        its report, when it writes into ``docs/results``.

    Returns
    -------
    list of str
    """
    when = when or _dt.datetime.now(_dt.timezone.utc)
    return [
        f"> Generated by `{command or command_line()}` with {code or code_version()}, "
        f"on {machine()}, {when.strftime('%Y-%m-%d %H:%M UTC')}.",
        "",
    ]


def write_report(json_path, result, md_path=None, lines=None):
    """Write a run's record ``result`` to ``json_path`` (JSON) and, given ``md_path``, its
    report ``lines`` (Markdown) there; print the paths written. A benchmark calls it with the
    record alone to save a run in progress."""
    json_path = Path(json_path)
    json_path.write_text(json.dumps(result, indent=1) + "\n")
    if md_path is None:
        return
    Path(md_path).write_text("\n".join(lines) + "\n")
    print(f"{md_path}\n{json_path}")
