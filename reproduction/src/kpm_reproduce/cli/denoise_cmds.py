"""``kpm reproduce denoise-gaussians | denoise-2d | denoise-usps | denoise-causes``: kernel PCA denoising
(Schölkopf et al. 1999, Section VI-A; Mika et al. 1999)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kpm_reproduce.cli.common import (
    check_write_mode,
    data_dir_str,
    err_console,
    options,
    parse_numbers,
    positive,
    run_command,
)


def _run(fn, settings):
    check_write_mode(settings.resume, settings.overwrite)
    run_command(lambda: fn(settings), resumable=True, out=settings.out)
    err_console().print(f"results written to {settings.out}")


def register(app, reproduce):
    """Add the four denoising reproductions to ``kpm reproduce``."""

    @reproduce.command("denoise-gaussians")
    def denoise_gaussians(
        sigmas: str = typer.Option("0.05,0.1,0.2,0.4,0.8", "--sigmas",
                                   help="Noise standard deviations (comma-separated)."),
        components: str = typer.Option("1,2,3,4,5,6,7,8,9", "--components",
                                       help="Numbers of components (comma-separated)."),
        seeds: str = typer.Option("0,1,2,3,4", "--seeds",
                                  help="Random seeds, results averaged (comma-separated)."),
        n_train: int = typer.Option(100, "--n-train", min=2, help="Training points per Gaussian."),
        n_test: int = typer.Option(33, "--n-test", min=1, help="Test points per Gaussian."),
        c_factor: float = typer.Option(20.0, "--kernel-c-factor", callback=positive,
                                       help="Kernel width c = factor * sigma^2 in exp(-|x-y|^2/c)."),
        extra_c_factors: str = typer.Option(
            "2", "--extra-kernel-c-factors",
            help="Further factors for the effect-of-c tables ('' for none)."),
        out: Path = options.out("report and figure denoise_gaussians.*"),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        quiet: bool = options.quiet(),
    ):
        """11 Gaussians in R^10: ratio of linear-PCA to kernel-PCA denoising MSE (Table I)."""
        from kpm_reproduce.experiments.denoise import GaussiansSettings, run_gaussians

        st = GaussiansSettings(
            sigmas=parse_numbers(sigmas, "--sigmas"),
            components=parse_numbers(components, "--components", int),
            seeds=parse_numbers(seeds, "--seeds", int, positive=False), n_train=n_train,
            n_test=n_test, c_factor=c_factor,
            extra_c_factors=parse_numbers(extra_c_factors, "--extra-kernel-c-factors",
                                          allow_empty=True),
            out=str(out), progress=not quiet, resume=resume, overwrite=overwrite,
        )
        _run(run_gaussians, st)

    @reproduce.command("denoise-2d")
    def denoise_2d(
        n_points: int = typer.Option(150, "--n-points", min=10, help="Points per curve."),
        noise: float = typer.Option(0.1, "--noise", min=0.0,
                                    help="Gaussian noise standard deviation."),
        seed: int = options.seed(0, "Random seed of the noise"),
        n_components: int = typer.Option(4, "--n-components", min=1,
                                         help="Kernel PCA components."),
        c_grid: str = typer.Option("0.05,0.1,0.2,0.5,1,2,4,8,16,32", "--kernel-c-grid",
                                   help="Kernel widths c tried (comma-separated)."),
        alpha_grid: str = typer.Option("0.001,0.01,0.1,1", "--alpha-grid",
                                       help="Ridge alphas tried for the learned pre-image."),
        out: Path = options.out("report and figure denoise_2d.*"),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        quiet: bool = options.quiet(),
    ):
        """Half circle and square: kernel PCA, linear PCA and the learned pre-image in one figure."""
        from kpm_reproduce.experiments.denoise import TwoDSettings, run_2d

        st = TwoDSettings(n_points=n_points, noise=noise, seed=seed, n_components=n_components,
                          c_grid=parse_numbers(c_grid, "--kernel-c-grid"),
                          alpha_grid=parse_numbers(alpha_grid, "--alpha-grid"),
                          out=str(out), progress=not quiet, resume=resume, overwrite=overwrite)
        _run(run_2d, st)

    @reproduce.command("denoise-usps")
    def denoise_usps(
        n_train: int = typer.Option(300, "--n-train-per-digit", min=2,
                                    help="Training images per digit."),
        n_test: int = typer.Option(50, "--n-test-per-digit", min=1,
                                   help="Test images per digit."),
        seed: int = options.seed(0, "Random seed (subset and noise)"),
        c: Optional[float] = typer.Option(
            None, "--kernel-c", callback=positive,
            help="Kernel width c (default: 2 x mean pixel variance x 256)."),
        extra_c: str = typer.Option("128", "--extra-kernel-c",
                                    help="Further widths c (effect of c; '' for none)."),
        kpca_components: str = typer.Option("1,2,4,8,16,32,64,128,256,512,1024,2048",
                                            "--kpca-components",
                                            help="Kernel PCA component counts of the MSE curves."),
        linear_components: str = typer.Option("1,2,4,8,16,32,64,128,256", "--linear-components",
                                              help="Linear PCA component counts of the MSE curves."),
        grid_components: str = typer.Option("1,4,16,64,256", "--grid-components",
                                            help="Component counts shown in the digit grid."),
        learned_components: str = typer.Option(
            "", "--learned-components",
            help="Counts for the learned-pre-image comparison (default: kernel PCA's optimal "
                 "count, Gaussian noise)."),
        learned_alphas: str = typer.Option("0.1,1", "--learned-alphas",
                                           help="Ridge alphas of the learned pre-image."),
        gradient_images: int = typer.Option(
            50, "--gradient-images", min=0,
            help="Images denoised by the gradient pre-image too (0: skip)."),
        perf_images: int = typer.Option(1000, "--perf-images", min=0,
                                        help="Images in the timing run (0: skip)."),
        perf_components: int = typer.Option(256, "--perf-components", min=1,
                                            help="Components of the timing run."),
        stages: str = typer.Option("linear,kernel,perf,learned,gradient,widths", "--stages",
                                   help="Stages to run (saved one by one; see --resume)."),
        out: Path = options.out("report and figures denoise_usps*"),
        data_dir: Optional[Path] = options.data_dir(),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        quiet: bool = options.quiet(),
    ):
        """USPS digits with Gaussian and speckle noise: digit grid, MSE curves, ratios, c, timings."""
        from kpm_reproduce.experiments.denoise import USPSSettings, run_usps

        st = USPSSettings(
            n_train_per_digit=n_train, n_test_per_digit=n_test, seed=seed, c=c,
            extra_c=parse_numbers(extra_c, "--extra-kernel-c", allow_empty=True),
            kpca_components=parse_numbers(kpca_components, "--kpca-components", int),
            linear_components=parse_numbers(linear_components, "--linear-components", int),
            grid_components=parse_numbers(grid_components, "--grid-components", int),
            learned_components=parse_numbers(learned_components, "--learned-components", int,
                                             allow_empty=True),
            learned_alphas=parse_numbers(learned_alphas, "--learned-alphas"),
            gradient_images=gradient_images, perf_images=perf_images,
            perf_components=perf_components, data_dir=data_dir_str(data_dir), out=str(out),
            progress=not quiet, resume=resume, overwrite=overwrite,
            stages=tuple(x.strip() for x in stages.split(",") if x.strip()),
        )
        _run(run_usps, st)

    @reproduce.command("denoise-causes")
    def denoise_causes(
        seeds: str = typer.Option("1,2", "--seeds", help="Further USPS subset seeds."),
        c_values: str = typer.Option("64,128,512", "--kernel-c-values",
                                     help="Further widths c (the baseline uses the paper's rule)."),
        kpca_components: str = typer.Option("16,32,64,128,256,512,1024", "--kpca-components",
                                            help="Kernel PCA component counts."),
        n_train: int = typer.Option(300, "--n-train-per-digit", min=2,
                                    help="Training images per digit."),
        n_test: int = typer.Option(50, "--n-test-per-digit", min=1,
                                   help="Test images per digit."),
        out: Path = options.out("report denoise_causes.*"),
        data_dir: Optional[Path] = options.data_dir(),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        quiet: bool = options.quiet(),
    ):
        """Candidate causes of the USPS denoising gaps (subset, MSE normalisation, speckle
        model, width) varied one at a time, and the 2-D square's width/components/metric."""
        from kpm_reproduce.experiments.denoise import CausesSettings, run_causes

        st = CausesSettings(
            n_train_per_digit=n_train, n_test_per_digit=n_test,
            seeds=parse_numbers(seeds, "--seeds", int, allow_empty=True),
            c_values=parse_numbers(c_values, "--kernel-c-values", allow_empty=True),
            kpca_components=parse_numbers(kpca_components, "--kpca-components", int),
            data_dir=data_dir_str(data_dir), out=str(out), progress=not quiet, resume=resume,
            overwrite=overwrite,
        )
        _run(run_causes, st)
