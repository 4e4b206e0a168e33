"""What every ``kpm`` command shares: the options with one spelling and one help text, and
one way to end (errors, Ctrl-C).

Conventions (tested in ``tests/cli/test_cli.py``):

* every command writes under ``--out`` (default :data:`DEFAULT_OUT`, a folder in the
  current directory; the committed results are refreshed only by an explicit
  ``--out docs/results``);
* earlier results are reused only with ``--resume``, and the command says so;
* ``--report-only`` rebuilds a report from saved results and computes nothing;
* a user's mistake (bad option value, missing data, damaged results file) prints one
  ``error:`` line and exits with status 2; an interrupted run (Ctrl-C) prints one line and
  exits with 130; a failed computation prints one ``error:`` line and exits with 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import click
import typer

__all__ = ["DEFAULT_OUT", "USER_ERRORS", "run_command", "console", "err_console", "options",
           "parse_numbers", "positive", "fraction", "check_jobs", "data_dir_str"]

#: Default output folder of every command (relative to the current directory).
DEFAULT_OUT = Path("kpm-results")

#: Exceptions that mean the user asked for something impossible (exit status 2; so does a
#: Dask scheduler that does not answer at the given address).
USER_ERRORS = (ValueError, FileNotFoundError, NotADirectoryError)


def console():
    """The rich console of standard output."""
    from rich.console import Console

    return Console()


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
        return body()
    except KeyboardInterrupt:
        if resumable:
            err.print(f"[yellow]interrupted[/yellow]: finished tasks are saved in {out}; run "
                      "the same command with --resume to continue")
        else:
            err.print("[yellow]interrupted[/yellow]")
        raise typer.Exit(130)
    except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
        raise  # typer's own ways out (usage errors print their message, exit 2)
    except _user_errors() as exc:
        err.print(f"[red]error:[/red] {_escape(exc)}")
        raise typer.Exit(2)
    except _runtime_errors() as exc:
        err.print(f"[red]error:[/red] {_escape(exc)}")
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
                 "settings (without it, everything is computed again).")

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
