"""``kpm reproduce kpm-table2 | kpm-table1 | sfds-table | kpm-13`` (the KPM papers' tables
and the KPM versus the SVM on all 13 Rätsch sets)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kpm_reproduce.cli.common import (
    check_jobs,
    check_write_mode,
    data_dir_str,
    err_console,
    options,
    run_command,
)


def _c_grid(spec: str):
    import numpy as np

    try:
        lo, hi, n = spec.split(":")
        lo, hi, n = float(lo), float(hi), int(n)
    except ValueError:
        raise typer.BadParameter(f"must be LO:HI:N (e.g. 1e-2:1e3:100), got {spec!r}",
                                 param_hint="--C-grid") from None
    if not (0 < lo <= hi) or n < 1:
        raise typer.BadParameter("needs 0 < LO <= HI and N >= 1", param_hint="--C-grid")
    return np.logspace(np.log10(lo), np.log10(hi), n)


def _summary(which, report, out):
    err = err_console()
    name = which.replace("-", "_")
    err.print(f"wrote {Path(out) / (name + '.md')} and {Path(out) / (name + '.json')}"
              + ("" if report["complete"] else " (PARTIAL: not every realization is done)"))
    for c in report["cells"]:
        d = c["dataset"]
        line = (f"  {d:14s} {c['method']:20s} n={c['n']:3d}  "
                + ("—" if c["mean"] is None else f"{c['mean']:6.2f} ± {c['std']:5.2f}")
                + f"   paper {c['paper_mean']:.2f} ± {c['paper_std']:.2f}")
        if c["delta_paper_std"] is not None:
            line += f"   Δ = {c['delta_paper_std']:+.2f} std"
        err.print(line, highlight=False)


def _run(which, command, **kw):
    from kpm_reproduce.experiments import kpm_tables as kt

    st = kt.Settings(**kw, command=command)
    fn = {"kpm-table2": kt.run_table2, "kpm-table1": kt.run_table1, "sfds-table": kt.run_sfds}
    return fn[which](st)


def register(app, reproduce):
    """Add the three KPM reproduction commands to ``kpm reproduce``."""

    def make(which, doc):
        def command(
            realizations: Optional[int] = typer.Option(
                None, "--realizations", "-n", min=1,
                help="Use realizations 1..N of each data set (default: all)."),
            datasets: Optional[str] = typer.Option(
                None, "--datasets",
                help="Comma-separated subset of banana, breast_cancer, diabetis, flare_solar, "
                     "german, heart (default: all six)."),
            c_grid: str = typer.Option("1e-2:1e3:100", "--C-grid",
                                       help="SVM C grid LO:HI:N (N log-spaced values)."),
            kpm_max_dim: Optional[int] = typer.Option(
                None, "--kpm-max-dim", min=1,
                help="Largest D of the KPM path (default 60; the D grid is 1..min(this, rank))."),
            no_figure: bool = typer.Option(False, "--no-figure",
                                           help="Skip Figure 1 (kpm-table2 only)."),
            out: Path = options.out("report, its figure and the task results (runs/)"),
            data_dir: Optional[Path] = options.data_dir(),
            resume: bool = options.resume(),
            overwrite: bool = options.overwrite(),
            report_only: bool = options.report_only(),
            jobs: int = options.jobs(),
            scheduler: Optional[str] = options.scheduler(),
            scheduler_timeout: float = options.scheduler_timeout(),
            quiet: bool = options.quiet(),
        ):
            from kpm_reproduce.experiments.provenance import command_line

            grid = _c_grid(c_grid)
            check_jobs(jobs)
            check_write_mode(resume, overwrite, report_only)
            report = run_command(
                lambda: _run(which, command_line(),
                             datasets=[d.strip() for d in datasets.split(",")] if datasets else None,
                             n_realizations=realizations, C_grid=grid,
                             data_dir=data_dir_str(data_dir), out=out, jobs=jobs,
                             scheduler=scheduler, resume=resume, overwrite=overwrite,
                             progress=not quiet,
                             figure=not no_figure, report_only=report_only,
                             scheduler_timeout=scheduler_timeout, kpm_max_dim=kpm_max_dim),
                resumable=True, out=out)
            _summary(which, report, out)

        command.__doc__ = doc
        reproduce.command(which)(command)

    make("kpm-table2", "Blanchard et al. (NIPS 2004), Table 2: KPM (D by 5-fold CV) vs SVM "
         "(C by 5-fold CV) on six IDA benchmarks; also draws Figure 1.")
    make("kpm-table1", "Blanchard et al. (NIPS 2004), Table 1: Rätsch's protocol (median of "
         "the CV choices on realizations 1-5, then fixed).")
    make("sfds-table", "Zwald & Blanchard (2005): SVM, KPM with the λ·D penalty (λ by CV), "
         "KPM with the slope heuristic.")
    register_kpm13(reproduce)


def _summary13(data, out):
    err = err_console()
    err.print(f"wrote {Path(out) / 'kpm_13.md'} and {Path(out) / 'kpm_13.json'}"
              + ("" if data["complete"] else " (PARTIAL: not every realization is done)"))
    default = {row["dataset"]: row for row in data["svm_formulation_rows"].get("two-stage", [])}
    for r in data["rows"]:
        if not r["n"]:
            continue
        cells = "  ".join(f"{k} {r[k]['mean']:6.2f}" for k in ("cv", "penalty", "slope"))
        d = default.get(r["dataset"])
        kpm_default = f"{d['kpm_svm']['mean']:6.2f} (R={d['n']})" if d and d["n"] else "     —"
        err.print(f"  {r['dataset']:14s} n={r['n']:3d}  papers' KPM: {cells}  |  default KPM "
                  f"{kpm_default}  |  SVM {r['svm']['mean']:6.2f}", highlight=False)


def register_kpm13(reproduce):
    """Add ``kpm reproduce kpm-13`` (the KPM versus the SVM on all 13 Rätsch sets)."""

    @reproduce.command("kpm-13")
    def kpm13(
        realizations: Optional[int] = typer.Option(
            None, "--realizations", "-n", min=1,
            help="Use realizations 1..N of each data set (default: all)."),
        datasets: Optional[str] = typer.Option(
            None, "--datasets", help="Comma-separated subset of the 13 sets (default: all)."),
        c_grid: str = typer.Option("1e-2:1e3:100", "--C-grid",
                                   help="SVM C grid LO:HI:N (N log-spaced values)."),
        max_dim: Optional[int] = typer.Option(
            None, "--max-dim", min=1, help="Largest D of the KPM path (default: the rank)."),
        svm_realizations: Optional[int] = typer.Option(
            None, "--svm-realizations", min=0,
            help="Realizations 1..N for the column of the KPM's formulation='svm' (default: "
                 "those of the other columns; 0: none)."),
        svm_c_rules: str = typer.Option(
            "two-stage,joint", "--svm-c-rules",
            help="Comma-separated C rules of the formulation='svm' columns, one column each: "
                 "two-stage (the estimator's default), joint."),
        out: Path = options.out("report and the task results (runs/)"),
        data_dir: Optional[Path] = options.data_dir(),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        report_only: bool = options.report_only(),
        jobs: int = options.jobs(),
        quiet: bool = options.quiet(),
    ):
        """The KPM (D by CV, λ·D penalty, slope) versus the CV-tuned SVM on all 13 Rätsch
        sets (Blanchard et al. 2004's Table-2 protocol), Braun et al. (2008)'s kPCR / KRR /
        SVM beside."""
        from kpm_reproduce.experiments import kpm13 as k13
        from kpm_reproduce.experiments.provenance import command_line

        grid = _c_grid(c_grid)
        check_jobs(jobs)
        check_write_mode(resume, overwrite, report_only)
        cmd = command_line()
        data = run_command(
            lambda: k13.run_kpm13(k13.Settings(
                datasets=[d.strip() for d in datasets.split(",")] if datasets else None,
                n_realizations=realizations, C_grid=grid, max_dim=max_dim, out=out,
                svm_realizations=svm_realizations,
                svm_c_rules=[c.strip() for c in svm_c_rules.split(",") if c.strip()],
                data_dir=data_dir_str(data_dir), jobs=jobs, resume=resume, overwrite=overwrite,
                progress=not quiet, report_only=report_only, command=cmd)),
            resumable=True, out=out)
        _summary13(data, out)
