"""``kpm reproduce kpm-table2 | kpm-table1 | sfds-table`` (the KPM papers' tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def _c_grid(spec: str):
    import numpy as np

    try:
        lo, hi, n = spec.split(":")
        lo, hi, n = float(lo), float(hi), int(n)
    except ValueError:
        raise typer.BadParameter(f"--c-grid must be LO:HI:N (e.g. 1e-2:1e3:100), got {spec!r}")
    if not (0 < lo <= hi) or n < 1:
        raise typer.BadParameter("--c-grid needs 0 < LO <= HI and N >= 1")
    return np.logspace(np.log10(lo), np.log10(hi), n)


def _run(which, realizations, jobs, scheduler, resume, data_dir, out, datasets, c_grid,
         kpm_max_dim, no_figure, report_only, quiet, scheduler_timeout):
    from rich.console import Console

    from kpm.experiments import kpm_tables as kt
    from kpm.experiments.runner import SchedulerUnavailableError

    console = Console()
    try:
        st = kt.Settings(
            datasets=[d.strip() for d in datasets.split(",")] if datasets else None,
            n_realizations=realizations, C_grid=_c_grid(c_grid), data_dir=data_dir, out=out,
            jobs=jobs, scheduler=scheduler, resume=resume, progress=not quiet,
            figure=not no_figure, report_only=report_only, scheduler_timeout=scheduler_timeout,
            kpm_max_dim=kpm_max_dim)
        fn = {"kpm-table2": kt.run_table2, "kpm-table1": kt.run_table1,
              "sfds-table": kt.run_sfds}[which]
        report = fn(st)
    except (ValueError, FileNotFoundError, SchedulerUnavailableError, RuntimeError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/yellow]: finished tasks are saved; rerun with "
                      "--resume to continue")
        raise typer.Exit(130)
    name = which.replace("-", "_")
    console.print(f"wrote {Path(out) / (name + '.md')} and {Path(out) / (name + '.json')}"
                  + ("" if report["complete"] else " (PARTIAL)"))
    for c in report["cells"]:
        d = c["delta_paper_std"]
        console.print(f"  {c['dataset']:14s} {c['method']:20s} n={c['n']:3d}  "
                      + ("—" if c["mean"] is None else f"{c['mean']:6.2f} ± {c['std']:5.2f}")
                      + f"   paper {c['paper_mean']:.2f} ± {c['paper_std']:.2f}"
                      + ("" if d is None else f"   Δ = {d:+.2f} std"))


def register(app, reproduce):
    """Add the three KPM reproduction commands to ``kpm reproduce``."""

    def make(which, doc):
        def command(
            realizations: Optional[int] = typer.Option(
                None, "--realizations", "-n", min=1,
                help="Use realizations 1..N of each data set (default: all)."),
            jobs: int = typer.Option(1, "--jobs", "-j", help="Local parallel jobs (joblib; -1 = all cores)."),
            scheduler: Optional[str] = typer.Option(
                None, "--scheduler", help="Dask scheduler address tcp://host:port."),
            resume: bool = typer.Option(False, "--resume", help="Skip the tasks already finished."),
            data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Data folder."),
            out: Path = typer.Option(Path("docs/results"), "--out", help="Output folder."),
            datasets: Optional[str] = typer.Option(
                None, "--datasets", help="Comma-separated subset of the six data sets."),
            c_grid: str = typer.Option("1e-2:1e3:100", "--c-grid",
                                       help="SVM C grid LO:HI:N (log-spaced)."),
            kpm_max_dim: Optional[int] = typer.Option(
                None, "--kpm-max-dim", min=1,
                help="Largest D of the KPM path (default 60; the D grid is 1..min(this, rank))."),
            no_figure: bool = typer.Option(False, "--no-figure", help="Skip Figure 1."),
            report_only: bool = typer.Option(
                False, "--report-only", help="Compute nothing; tabulate the finished runs."),
            quiet: bool = typer.Option(False, "--quiet", help="No progress bars."),
            scheduler_timeout: float = typer.Option(
                10.0, "--scheduler-timeout", help="Seconds to wait for the Dask scheduler."),
        ):
            _run(which, realizations, jobs, scheduler, resume, data_dir, out, datasets, c_grid,
                 kpm_max_dim, no_figure, report_only, quiet, scheduler_timeout)

        command.__doc__ = doc
        reproduce.command(which)(command)

    make("kpm-table2", "NIPS 2004 Table 2: KPM (D by 5-fold CV) vs SVM (C by 5-fold CV).")
    make("kpm-table1", "NIPS 2004 Table 1: Rätsch's protocol (median of the CV choices on "
         "realizations 1-5, then fixed).")
    make("sfds-table", "SFdS 2005: SVM, KPM with λ·D penalty (λ by CV), KPM slope heuristic.")
