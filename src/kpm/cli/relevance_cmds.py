"""CLI: relevant dimensions (``kpm plot-relevance``) and ``kpm reproduce braun-table``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def _datasets(value):
    from kpm.experiments.braun_table import DATASETS

    if value is None or value.strip() in ("", "all"):
        return list(DATASETS)
    names = [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in DATASETS]
    if bad:
        raise typer.BadParameter(f"unknown datasets {bad}; choose from {', '.join(DATASETS)}")
    return names


def register(app, reproduce):
    """Add this module's commands to the ``kpm`` app and its ``reproduce`` group."""

    @app.command("plot-relevance")
    def plot_relevance_cmd(
        dataset: str = typer.Argument(..., help="Rätsch benchmark name, e.g. banana."),
        realization: int = typer.Option(1, "--realization", "-r", help="1-based realization."),
        sigma: Optional[float] = typer.Option(
            None, "--sigma",
            help="RBF width exp(-|x-y|^2/(2 sigma^2)); default: the likelihood choice over "
            "sigma_med * 2^(k/2), k=-6..4."),
        out: Path = typer.Option(Path("docs/results"), "--out", help="Output folder."),
        data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Data folder (else KPM_DATA)."),
    ):
        """Plot |s_i| = |u_i^T y| with the fitted two-component split, and -log l(d)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
        from rich.console import Console

        from kpm.datasets import load_raetsch
        from kpm.experiments.braun_table import width_grid
        from kpm.relevance import RelevantDimension, plot_relevance, select_kernel

        dd = str(data_dir) if data_dir else None
        try:
            sp = load_raetsch(dataset, realization, data_dir=dd)
        except (ValueError, FileNotFoundError) as exc:
            raise typer.BadParameter(str(exc)) from exc
        y = sp.y_train.astype(float)
        if sigma is None:
            _, grid = width_grid(dataset, dd)
            ranking = select_kernel([{"kernel": "rbf", "sigma": s} for s in grid], sp.X_train, y)
            sigma = ranking[0].candidate["sigma"]
        elif sigma <= 0:
            raise typer.BadParameter("--sigma must be > 0")
        model = RelevantDimension(sigma=sigma).fit(sp.X_train, y)
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
        plot_relevance(model, ax=axes[0])
        axes[0].set_title(f"{dataset} r{realization}: RBF σ={sigma:.3g}, d̂={model.dim_}")
        d = np.arange(1, len(model.neg_log_likelihood_) + 1)
        axes[1].plot(d, model.neg_log_likelihood_, lw=1)
        axes[1].axvline(model.dim_, color="C3", lw=1)
        axes[1].set_xscale("log")
        axes[1].set_xlabel("d")
        axes[1].set_ylabel(r"$-\log \ell(d)$ (up to constants)")
        fig.tight_layout()
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"relevance_{dataset}_r{realization}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        Console().print(
            f"{dataset} r{realization}: sigma={sigma:.4g} dim={model.dim_} "
            f"sigma1^2={model.sigma1_sq_:.4g} sigma2^2={model.sigma2_sq_:.4g}; wrote {path}"
        )

    @reproduce.command("braun-table")
    def braun_table_cmd(
        datasets: Optional[str] = typer.Option(
            None, "--datasets", help="Comma-separated subset of the 13 datasets (default: all)."),
        realizations: Optional[int] = typer.Option(
            None, "--realizations", help="First N realizations of each dataset (default: all)."),
        select_realizations: int = typer.Option(
            5, "--select-realizations", help="Training sets used for the width selection."),
        splice_encodings: bool = typer.Option(
            True, "--splice-encodings/--no-splice-encodings",
            help="Also compare splice's encodings (naive, one-hot, weighted degree)."),
        sensitivity: bool = typer.Option(
            True, "--sensitivity/--no-sensitivity",
            help="Also run the two sensitivity checks (null space of K kept as noise; squared CV loss)."),
        sensitivity_realizations: int = typer.Option(
            20, "--sensitivity-realizations", help="Realizations per dataset for the checks."),
        jobs: int = typer.Option(1, "--jobs", "-j", help="Local parallel jobs (-1: all cores)."),
        scheduler: Optional[str] = typer.Option(
            None, "--scheduler", help="Dask scheduler address tcp://host:port."),
        resume: bool = typer.Option(False, "--resume", help="Keep finished tasks of a previous run."),
        summarize_only: bool = typer.Option(
            False, "--summarize-only",
            help="Only rebuild the table from the runs file (e.g. of an interrupted run)."),
        out: Path = typer.Option(Path("docs/results"), "--out", help="Output folder."),
        data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Data folder (else KPM_DATA)."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ):
        """Braun/Buhmann/Müller: dim, dim(cv), est. error, kPCR, KRR, SVM on 13 benchmarks."""
        from rich.console import Console

        from kpm.experiments.braun_table import run_braun_table, summarize_runs

        names = _datasets(datasets)
        dd = str(data_dir) if data_dir else None
        console = Console()
        if summarize_only:
            summarize_runs(out, data_dir=dd, datasets=names)
        else:
            if realizations is not None and realizations < 1:
                raise typer.BadParameter("--realizations must be >= 1")
            if select_realizations < 1:
                raise typer.BadParameter("--select-realizations must be >= 1")
            run_braun_table(
                out, datasets=names, realizations=realizations,
                select_realizations=select_realizations, splice_encodings=splice_encodings,
                sensitivity=sensitivity, sensitivity_realizations=sensitivity_realizations,
                jobs=jobs, scheduler=scheduler, resume=resume, data_dir=dd, progress=not quiet,
            )
        if splice_encodings and "splice" in names:
            from kpm.experiments.braun_table import splice_spectra_figure

            try:
                console.print(f"wrote {splice_spectra_figure(out, data_dir=dd)}")
            except ValueError as exc:  # no encoding results (e.g. an old runs file)
                console.print(f"no splice spectra figure: {exc}")
        console.print((out / "braun_table.md").read_text())
        console.print(f"wrote {out / 'braun_table.md'} and {out / 'braun_table.json'}")
