"""CLI: relevant dimensions (``kpm plot-relevance``) and ``kpm reproduce braun-table``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kpm_reproduce.cli.common import (
    check_jobs,
    check_write_mode,
    console,
    data_dir_str,
    err_console,
    options,
    positive,
    run_command,
)
from kpm_reproduce.cli.inputs import load_training


def _datasets(value):
    from kpm_reproduce.experiments.braun_table import DATASETS

    if value is None or value.strip() in ("", "all"):
        return list(DATASETS)
    names = [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in DATASETS]
    if bad:
        raise typer.BadParameter(f"unknown datasets {bad}; choose from {', '.join(DATASETS)}",
                                 param_hint="--datasets")
    return names


def _plot_relevance(dataset, realization, sigma, out, data_dir, label_column=-1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from kpm_reproduce.experiments.braun_table import WIDTH_FACTORS, width_grid
    from kpm.kernels import median_sigma
    from kpm.relevance.dimension import RelevantDimension, select_kernel
    from kpm.plotting import plot_relevance

    name, X, y, csv = load_training(dataset, realization, label_column, data_dir)
    label = name if csv else f"{name} r{realization}"
    with err_console().status("fitting the two-component model"):
        if sigma is None:
            # the braun-table grid: median width (of the first training set) x 2^(k/2)
            if csv:
                grid = [float(median_sigma(X) * f) for f in WIDTH_FACTORS]
            else:
                _, grid = width_grid(dataset, data_dir)
            ranking = select_kernel([{"kernel": "rbf", "sigma": s} for s in grid], X, y)
            sigma = ranking[0].candidate["sigma"]
        model = RelevantDimension(sigma=sigma).fit(X, y)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    plot_relevance(model, ax=axes[0])
    axes[0].set_title(f"{label}: RBF σ={sigma:.3g}, d̂={model.n_components_}")
    d = np.arange(1, len(model.neg_log_likelihood_) + 1)
    axes[1].plot(d, model.neg_log_likelihood_, lw=1)
    axes[1].axvline(model.n_components_, color="C3", lw=1)
    axes[1].set_xscale("log")
    axes[1].set_xlabel("d")
    axes[1].set_ylabel(r"$-\log \ell(d)$ (up to constants)")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / (f"relevance_{name}.png" if csv else f"relevance_{name}_r{realization}.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return label, sigma, model, path


def _print_summary(summary):
    from rich.table import Table

    from kpm_reproduce.experiments.braun_table import DATASETS, PAPER

    t = Table(title="Relevant dimension and kernel PCR (ours / slides; errors in %)")
    for col in ("dataset", "R", "dim", "kPCR", "KRR", "SVM"):
        t.add_column(col, justify="left" if col == "dataset" else "right")
    for d in DATASETS:
        r = summary["rows"].get(d)
        if r is None:
            continue
        p = PAPER[d]
        t.add_row(d, f"{r['n_realizations']}/{r['n_realizations_available']}",
                  f"{r['dim_median']:g} / {p[0]}",
                  *(f"{r[k][0]:.1f} / {p[i][0]:.1f}" for k, i in (("kpcr", 3), ("krr", 4),
                                                                  ("svm", 5))))
    console().print(t)


def register(app, reproduce):
    """Add this module's commands to the ``kpm`` app and its ``reproduce`` group."""

    @app.command("plot-relevance")
    def plot_relevance_cmd(
        dataset: str = typer.Argument(
            ..., help="Rätsch dataset name (e.g. banana) or a CSV file (all its rows are used; "
                      "two-class labels are coded -1/+1)."),
        realization: int = typer.Option(1, "--realization", "-r", min=1,
                                        help="Rätsch realization (1-based)."),
        sigma: Optional[float] = typer.Option(
            None, "--sigma", callback=positive,
            help="RBF width of exp(-|x-y|^2/(2 sigma^2)); default: the likelihood choice over "
            "sigma_med * 2^(k/2), k=-6..4."),
        label_column: int = typer.Option(-1, "--label-column", help="CSV: the label column."),
        out: Path = options.out("figure relevance_<dataset>_r<realization>.png (CSV: "
                                "relevance_<name>.png)"),
        data_dir: Optional[Path] = options.data_dir(),
    ):
        """Plot |u_i^T y| with the fitted two-component split, and -log l(d)."""
        label, sigma, model, path = run_command(
            lambda: _plot_relevance(dataset, realization, sigma, out, data_dir_str(data_dir),
                                    label_column))
        err_console().print(
            f"{label}: sigma={sigma:.4g} dim={model.n_components_} "
            f"sigma1^2={model.sigma1_sq_:.4g} sigma2^2={model.sigma2_sq_:.4g}; wrote {path}")

    @reproduce.command("braun-table")
    def braun_table_cmd(
        datasets: Optional[str] = typer.Option(
            None, "--datasets", help="Comma-separated subset of the 13 datasets (default: all)."),
        realizations: Optional[int] = typer.Option(
            None, "--realizations", "-n", min=1,
            help="Use realizations 1..N of each data set (default: all)."),
        select_realizations: int = typer.Option(
            5, "--select-realizations", min=1,
            help="Training sets used for the width selection."),
        splice_encodings: bool = typer.Option(
            True, "--splice-encodings/--no-splice-encodings",
            help="Also compare splice's encodings (naive, one-hot, weighted degree)."),
        sensitivity: bool = typer.Option(
            True, "--sensitivity/--no-sensitivity",
            help="Also run the two sensitivity checks (null space of K kept as noise; "
                 "squared CV loss)."),
        sensitivity_realizations: int = typer.Option(
            20, "--sensitivity-realizations", min=1,
            help="Realizations per dataset for the checks."),
        out: Path = options.out("report, its figure and the task results (runs/)"),
        data_dir: Optional[Path] = options.data_dir(),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        report_only: bool = options.report_only(),
        jobs: int = options.jobs(),
        scheduler: Optional[str] = options.scheduler(),
        quiet: bool = options.quiet(),
    ):
        """Braun, Buhmann & Müller: dim, dim(cv), est. error, kPCR, KRR, SVM on 13 benchmarks."""
        from kpm_reproduce.experiments import braun_table as bt
        from kpm_reproduce.experiments.provenance import command_line

        names = _datasets(datasets)
        check_jobs(jobs)
        check_write_mode(resume, overwrite, report_only)
        dd = data_dir_str(data_dir)

        def body():
            if report_only:
                summary = bt.summarize_runs(out, data_dir=dd, datasets=names,
                                            command=command_line())
            else:
                summary = bt.run_braun_table(
                    out, datasets=names, realizations=realizations,
                    select_realizations=select_realizations, splice_encodings=splice_encodings,
                    sensitivity=sensitivity, sensitivity_realizations=sensitivity_realizations,
                    jobs=jobs, scheduler=scheduler, resume=resume, overwrite=overwrite,
                    data_dir=dd,
                    progress=not quiet, command=command_line())
            figure = None
            if splice_encodings and "splice" in names and summary["splice_encodings"]:
                figure = bt.splice_spectra_figure(out, data_dir=dd)
            return summary, figure

        summary, figure = run_command(body, resumable=True, out=out)
        _print_summary(summary)
        if figure is not None:
            err_console().print(f"wrote {figure}")
        err_console().print(f"wrote {out / 'braun_table.md'} and {out / 'braun_table.json'}")
