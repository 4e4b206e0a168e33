"""``kpm reproduce denoise-gaussians | denoise-2d | denoise-usps``: kernel PCA denoising
(Schölkopf et al. 1999 §VI-A)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def _nums(spec: str, name: str, cast=float):
    try:
        vals = tuple(cast(v) for v in spec.split(",") if v.strip())
    except ValueError:
        raise typer.BadParameter(f"{name} must be comma-separated numbers, got {spec!r}")
    if any(v <= 0 for v in vals):
        raise typer.BadParameter(f"{name} values must be positive, got {spec!r}")
    return vals


def _run(fn, settings):
    from rich.console import Console

    console = Console()
    try:
        fn(settings)
    except (ValueError, FileNotFoundError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2)
    console.print(f"results written to {settings.out}")


def register(app, reproduce):
    """Add the three denoising reproductions to ``kpm reproduce``."""

    @reproduce.command("denoise-gaussians")
    def denoise_gaussians(
        sigmas: str = typer.Option("0.05,0.1,0.2,0.4,0.8", "--sigmas", help="Noise standard deviations."),
        components: str = typer.Option("1,2,3,4,5,6,7,8,9", "--components", help="Component counts."),
        seeds: str = typer.Option("0,1,2,3,4", "--seeds", help="Random seeds (results averaged)."),
        n_train: int = typer.Option(100, "--n-train", min=2, help="Training points per Gaussian."),
        n_test: int = typer.Option(33, "--n-test", min=1, help="Test points per Gaussian."),
        c_factor: float = typer.Option(20.0, "--c-factor", help="Kernel width c = factor * sigma^2."),
        extra_c_factors: str = typer.Option("2", "--extra-c-factors",
                                            help="Further factors for the effect-of-c tables ('' for none)."),
        out: Path = typer.Option(Path("docs/results"), "--out", help="Output folder."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ):
        """11 Gaussians in R^10: ratio of linear-PCA to kernel-PCA denoising MSE (Table I)."""
        from kpm.experiments.denoise import GaussiansSettings, run_gaussians

        st = GaussiansSettings(
            sigmas=_nums(sigmas, "--sigmas"), components=_nums(components, "--components", int),
            seeds=tuple(int(s) for s in seeds.split(",") if s.strip()), n_train=n_train, n_test=n_test,
            c_factor=c_factor, extra_c_factors=_nums(extra_c_factors, "--extra-c-factors"),
            out=str(out), progress=not quiet,
        )
        _run(run_gaussians, st)

    @reproduce.command("denoise-2d")
    def denoise_2d(
        n_points: int = typer.Option(150, "--n-points", min=10, help="Points per curve."),
        noise: float = typer.Option(0.1, "--noise", min=0.0, help="Gaussian noise standard deviation."),
        seed: int = typer.Option(0, "--seed"),
        n_components: int = typer.Option(4, "--n-components", min=1, help="Kernel PCA components."),
        c_grid: str = typer.Option("0.05,0.1,0.2,0.5,1,2", "--c-grid", help="Kernel widths c tried."),
        alpha_grid: str = typer.Option("0.001,0.01,0.1,1", "--alpha-grid",
                                       help="Ridge alphas tried for the learned pre-image."),
        out: Path = typer.Option(Path("docs/results"), "--out", help="Output folder."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ):
        """Half circle and square: kernel PCA, linear PCA and the learned pre-image in one figure."""
        from kpm.experiments.denoise import TwoDSettings, run_2d

        st = TwoDSettings(n_points=n_points, noise=noise, seed=seed, n_components=n_components,
                          c_grid=_nums(c_grid, "--c-grid"), alpha_grid=_nums(alpha_grid, "--alpha-grid"),
                          out=str(out), progress=not quiet)
        _run(run_2d, st)

    @reproduce.command("denoise-usps")
    def denoise_usps(
        n_train: int = typer.Option(300, "--n-train-per-digit", min=2),
        n_test: int = typer.Option(50, "--n-test-per-digit", min=1),
        seed: int = typer.Option(0, "--seed"),
        c: Optional[float] = typer.Option(None, "--c", help="Kernel width c (default: 2 x mean pixel variance x 256)."),
        extra_c: str = typer.Option("128", "--extra-c", help="Further widths c (effect of c; '' for none)."),
        kpca_components: str = typer.Option("1,2,4,8,16,32,64,128,256,512,1024,2048", "--kpca-components"),
        linear_components: str = typer.Option("1,2,4,8,16,32,64,128,256", "--linear-components"),
        grid_components: str = typer.Option("1,4,16,64,256", "--grid-components",
                                            help="Component counts shown in the digit grid."),
        learned_components: str = typer.Option("", "--learned-components",
                                               help="Counts for the learned-pre-image comparison "
                                                    "(default: kernel PCA's optimal count, Gaussian noise)."),
        learned_alphas: str = typer.Option("0.1,1", "--learned-alphas"),
        gradient_images: int = typer.Option(50, "--gradient-images", min=0,
                                            help="Images denoised by the gradient pre-image too (0: skip)."),
        perf_images: int = typer.Option(1000, "--perf-images", min=0, help="Images in the timing run (0: skip)."),
        perf_components: int = typer.Option(256, "--perf-components", min=1),
        data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Data folder (holding usps/)."),
        out: Path = typer.Option(Path("docs/results"), "--out", help="Output folder."),
        stages: str = typer.Option("linear,kernel,perf,learned,gradient,widths", "--stages",
                                   help="Stages to run (saved one by one; see --resume)."),
        resume: bool = typer.Option(False, "--resume", help="Keep finished stages of an earlier run."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ):
        """USPS digits with Gaussian and speckle noise: digit grid, MSE curves, ratios, c, timings."""
        from kpm.experiments.denoise import USPSSettings, run_usps

        st = USPSSettings(
            n_train_per_digit=n_train, n_test_per_digit=n_test, seed=seed, c=c,
            extra_c=_nums(extra_c, "--extra-c"),
            kpca_components=_nums(kpca_components, "--kpca-components", int),
            linear_components=_nums(linear_components, "--linear-components", int),
            grid_components=_nums(grid_components, "--grid-components", int),
            learned_components=_nums(learned_components, "--learned-components", int),
            learned_alphas=_nums(learned_alphas, "--learned-alphas"),
            gradient_images=gradient_images, perf_images=perf_images, perf_components=perf_components,
            data_dir=str(data_dir) if data_dir else None, out=str(out), progress=not quiet,
        )
        stage_list = tuple(x.strip() for x in stages.split(",") if x.strip())
        _run(lambda settings: run_usps(settings, stages=stage_list, resume=resume), st)
