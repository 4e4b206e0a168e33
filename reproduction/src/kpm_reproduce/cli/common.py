"""What every ``kpm`` command shares: the options with one spelling and one help text, and
one way to end (errors, Ctrl-C).

Conventions (tested in ``tests/cli/test_cli.py``):

* every command writes under ``--out`` (default :data:`DEFAULT_OUT`, a folder in the
  current directory; the committed results are refreshed only by an explicit
  ``--out docs/results``);
* earlier results are reused only with ``--resume``, and the command says so; finished
  results are replaced only with ``--overwrite`` (a run with neither is refused);
* ``--report-only`` rebuilds a report from saved results and computes nothing (a folder
  without them is an error);
* a user's mistake (bad option value, unknown option, missing argument, missing data,
  damaged results file) prints one ``error:`` line and exits with status 2
  (:class:`Group` turns the command-line parser's own errors into that line too); an
  interrupted run (Ctrl-C) prints one line and exits with 130; a failed computation
  prints one ``error:`` line and exits with 1; a warning is one ``warning:`` line;
* tables on standard output are not wrapped when it is not a terminal.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

__all__ = ["DEFAULT_OUT", "USER_ERRORS", "Group", "run_command", "console", "err_console",
           "options", "parse_numbers", "positive", "fraction", "check_jobs", "check_write_mode",
           "data_dir_str", "show_warning", "rule", "RULE_WIDTH"]

#: Default output folder of every command (relative to the current directory).
DEFAULT_OUT = Path("kpm-results")

#: Exceptions that mean the user asked for something impossible (exit status 2; so does a
#: Dask scheduler that does not answer at the given address).
USER_ERRORS = (ValueError, FileNotFoundError, NotADirectoryError)


#: Console width when standard output is not a terminal (a file, a pipe): wide enough that
#: no table is wrapped (rich would otherwise assume 80 columns). Rules, which fill the
#: console's width, are drawn by :func:`rule` at :data:`RULE_WIDTH` there instead.
PIPE_WIDTH = 10_000

#: Width of a rule (a section heading line) when standard output is not a terminal.
RULE_WIDTH = 80


def console():
    """The rich console of standard output; not a terminal (and no ``$COLUMNS``): no
    wrapping at 80 columns."""
    from rich.console import Console

    con = Console()
    if not con.is_terminal and not os.environ.get("COLUMNS"):
        con.width = PIPE_WIDTH
    return con


def rule(con, title=""):
    """Print a section rule with ``title`` on ``con``: the terminal's width, or
    :data:`RULE_WIDTH` columns in a file or a pipe (where the console is :data:`PIPE_WIDTH`
    wide so that tables are not wrapped)."""
    from rich.rule import Rule

    con.print(Rule(title), width=None if con.is_terminal else min(con.width, RULE_WIDTH))


def err_console():
    """The rich console of standard error (messages, errors); long lines are not broken."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def _user_errors():
    from kpm_reproduce.experiments.runner import SchedulerUnavailableError

    # the scheduler's address is an option the user gave
    return (*USER_ERRORS, SchedulerUnavailableError)


def _runtime_errors():
    from kpm.exceptions import KernelMemoryError, LPSolverError

    return (RuntimeError, KernelMemoryError, LPSolverError, OSError)


# the command-line parser's exceptions (click's, vendored by recent typer versions): found
# through typer's public BadParameter, whatever click it is built on
_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def _one_line(text):
    return " ".join(str(text).split())


def _usage_message(exc):
    """The one line of a parser error: its message, then where to read the options."""
    msg = _one_line(exc.format_message())
    if msg[:1].isupper() and msg[1:2].islower():
        msg = msg[0].lower() + msg[1:]
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        msg += f" (see '{ctx.command_path} --help')"
    return msg


@contextlib.contextmanager
def _parser_errors():
    """Turn an error of the command-line parser into one ``error:`` line and its exit status
    (2 for a usage error); a bare ``kpm`` (no arguments: help) is left to typer."""
    try:
        yield
    except _CLICK_ERROR as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            raise
        err_console().print(f"[red]error:[/red] {_escape(_usage_message(exc))}", highlight=False)
        raise typer.Exit(exc.exit_code) from None


class Group(TyperGroup):
    """The ``kpm`` command group: every parser error (a bad option value, an unknown option
    or command, a missing argument), and every ``typer.BadParameter`` a command raises,
    ends with one ``error:`` line and exit status 2 instead of typer's boxed message."""

    def make_context(self, info_name, args, parent=None, **extra):
        with _parser_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx):
        with _parser_errors():
            return super().invoke(ctx)


def show_warning(message, category=None, filename=None, lineno=None, file=None, line=None):
    """A warning as one ``warning:`` line on standard error (a ``warnings.showwarning``)."""
    err_console().print(f"[yellow]warning:[/yellow] {_escape(_one_line(message))}",
                        highlight=False)


def run_command(body, *, resumable=False, out=None):
    """Run ``body()`` and turn the ways it can end into one line and an exit status.

    Parameters
    ----------
    body : callable
        The command's work.
    resumable : bool
        Whether finished work is saved as it goes (then Ctrl-C says how to continue).
    out : Path, optional
        The output folder, named in the interrupt message.

    Returns
    -------
    The value of ``body()``.
    """
    err = err_console()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning
            return body()
    except KeyboardInterrupt:
        if resumable:
            err.print(f"[yellow]interrupted[/yellow]: finished tasks are saved in {out}; run "
                      "the same command with --resume to continue")
        else:
            err.print("[yellow]interrupted[/yellow]")
        raise typer.Exit(130)
    except (typer.Exit, typer.Abort, _CLICK_ERROR):
        raise  # typer's own ways out (usage errors: one line, exit 2, by Group)
    except _user_errors() as exc:
        err.print(f"[red]error:[/red] {_escape(_one_line(exc))}", highlight=False)
        raise typer.Exit(2)
    except _runtime_errors() as exc:
        err.print(f"[red]error:[/red] {_escape(_one_line(exc))}", highlight=False)
        raise typer.Exit(1)


def _escape(exc):
    from rich.markup import escape

    return escape(str(exc))


def parse_numbers(spec: str, option: str, cast=float, *, positive=True, allow_empty=False):
    """Comma-separated numbers of an option (``"1,2,4"``), validated, as a tuple."""
    try:
        vals = tuple(cast(v) for v in spec.split(",") if v.strip())
    except ValueError:
        kind = "integers" if cast is int else "numbers"
        raise typer.BadParameter(f"must be comma-separated {kind}, got {spec!r}",
                                 param_hint=option) from None
    if not vals and not allow_empty:
        raise typer.BadParameter("needs at least one value", param_hint=option)
    if positive and any(v <= 0 for v in vals):
        raise typer.BadParameter(f"values must be positive, got {spec!r}", param_hint=option)
    return vals


class options:
    """The options shared by several commands (one spelling, one help text each)."""

    @staticmethod
    def out(what="results"):
        return typer.Option(
            DEFAULT_OUT, "--out", file_okay=False,
            help=f"Folder for the {what} (created if needed). `--out docs/results` refreshes "
                 "the results committed in a kpm checkout.")

    @staticmethod
    def data_dir():
        return typer.Option(
            None, "--data-dir", file_okay=False,
            help="Benchmark data folder (default: $KPM_DATA, else ../shared/data beside the "
                 "checkout).")

    @staticmethod
    def resume():
        return typer.Option(
            False, "--resume",
            help="Reuse the finished tasks saved in --out by an earlier run with the same "
                 "settings (without it or --overwrite, a run into a folder holding finished "
                 "tasks is refused).")

    @staticmethod
    def overwrite():
        return typer.Option(
            False, "--overwrite",
            help="Replace the finished tasks saved in --out by an earlier run with the same "
                 "settings (without it or --resume, a run into such a folder is refused).")

    @staticmethod
    def report_only():
        return typer.Option(
            False, "--report-only",
            help="Compute nothing: rebuild the report from the results saved in --out.")

    @staticmethod
    def jobs():
        return typer.Option(1, "--jobs", "-j",
                            help="Tasks run side by side on this machine (-1: all cores).")

    @staticmethod
    def scheduler():
        return typer.Option(None, "--scheduler",
                            help="Run the tasks on a Dask cluster: scheduler address "
                                 "tcp://host:port.")

    @staticmethod
    def scheduler_timeout():
        return typer.Option(10.0, "--scheduler-timeout", min=0.1,
                            help="Seconds to wait for the Dask scheduler to answer.")

    @staticmethod
    def quiet():
        return typer.Option(False, "--quiet", "-q", help="No progress bar.")

    @staticmethod
    def seed(default=0, what="Random seed"):
        return typer.Option(default, "--seed", help=f"{what}.")


def data_dir_str(path: Optional[Path]):
    """The data folder as the drivers take it (None: the default)."""
    return None if path is None else str(path)


def check_write_mode(resume: bool, overwrite: bool, report_only: bool = False):
    """``--resume``, ``--overwrite`` and ``--report-only`` exclude each other."""
    given = [name for name, on in (("--resume", resume), ("--overwrite", overwrite),
                                   ("--report-only", report_only)) if on]
    if len(given) > 1:
        raise typer.BadParameter(
            f"{' and '.join(given)} exclude each other (--resume keeps the finished tasks, "
            "--overwrite replaces them, --report-only computes nothing)",
            param_hint=given[0])


def check_jobs(jobs: int):
    """``--jobs`` must be a positive count or -1."""
    if jobs == 0 or jobs < -1:
        raise typer.BadParameter(f"must be a positive number or -1, got {jobs}",
                                 param_hint="--jobs")
    return jobs


def positive(ctx: typer.Context, param: typer.CallbackParam, value):
    """Option callback: the value (when given) must be > 0."""
    if value is not None and not value > 0:
        raise typer.BadParameter(f"must be > 0, got {value}")
    return value


def fraction(ctx: typer.Context, param: typer.CallbackParam, value):
    """Option callback: the value must lie strictly between 0 and 1."""
    if value is not None and not 0 < value < 1:
        raise typer.BadParameter(f"must lie strictly between 0 and 1, got {value}")
    return value
