"""``kpm reproduce reduced-set-usps``: reduced-set SVMs on USPS (Schölkopf et al. 1999)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def _ints(spec: str, name: str):
    try:
        vals = tuple(int(v) for v in spec.split(",") if v.strip())
    except ValueError:
        raise typer.BadParameter(f"{name} must be comma-separated integers, got {spec!r}")
    if any(v <= 0 for v in vals):
        raise typer.BadParameter(f"{name} values must be positive, got {spec!r}")
    return vals


def register(app, reproduce):
    """Add ``reduced-set-usps`` to ``kpm reproduce``."""

    @reproduce.command("reduced-set-usps")
    def reduced_set_usps(
        grid: str = typer.Option("10,20,25,50,100,200,300", "--grid",
                                 help="Average vectors per machine of the RSS-n / RSS-L1-n rows."),
        construct_grid: str = typer.Option("10,20,25,50,100", "--construct-grid",
                                           help="Vectors per machine of the RSC-n rows."),
        gradient_grid: str = typer.Option("10,25,50", "--gradient-grid",
                                          help="RSC-n rows followed by the joint gradient phase."),
        gradient_maxiter: int = typer.Option(200, "--gradient-maxiter", min=1),
        shared_grid: str = typer.Option("250,500", "--shared-grid",
                                        help="Total shared vectors of the RSS-L1-shared-N rows."),
        methods: str = typer.Option(
            "select,select-l1,construct,construct+grad,select-l1-shared", "--methods",
            help="Subset of select, select-l1, construct, construct+grad, select-l1-shared."),
        C: float = typer.Option(10.0, "--C", help="SVM box constraint."),
        c: float = typer.Option(128.0, "--c", help="Gaussian width c in exp(-|x-y|^2/c)."),
        c_values: str = typer.Option("128,241.76,512", "--c-values",
                                     help="Widths c for the full-SVM SV-count/error table."),
        n_train: Optional[int] = typer.Option(None, "--n-train", min=20,
                                              help="Use the first N training images (smoke runs)."),
        n_test: Optional[int] = typer.Option(None, "--n-test", min=1, help="Use the first N test images."),
        repeats: int = typer.Option(5, "--repeats", min=1, help="Timing repeats (best of)."),
        restarts: int = typer.Option(3, "--restarts", min=1, help="Fixed-point starts per constructed vector."),
        resume: bool = typer.Option(False, "--resume", help="Keep finished rows of a previous run."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Do not read/write ~/.cache/kpm."),
        data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Data folder (holding usps/)."),
        out: Path = typer.Option(Path("docs/results"), "--out", help="Output folder."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ):
        """Ten one-vs-rest Gaussian SVMs on USPS, reduced by selection and construction:
        error versus number of vectors and decision_function speed-up over SVC."""
        from rich.console import Console

        from kpm.experiments.reduced_set import Settings, run_usps

        console = Console()
        try:
            cv = tuple(float(v) for v in c_values.split(",") if v.strip())
        except ValueError:
            raise typer.BadParameter(f"--c-values must be comma-separated numbers, got {c_values!r}")
        st = Settings(
            C=C, c=c, grid=_ints(grid, "--grid"), construct_grid=_ints(construct_grid, "--construct-grid"),
            gradient_grid=_ints(gradient_grid, "--gradient-grid"), gradient_maxiter=gradient_maxiter,
            shared_grid=_ints(shared_grid, "--shared-grid"),
            methods=tuple(m.strip() for m in methods.split(",") if m.strip()),
            c_values=cv, n_train=n_train, n_test=n_test, n_restarts=restarts, repeats=repeats,
            data_dir=str(data_dir) if data_dir else None, out=str(out), resume=resume,
            progress=not quiet, use_cache=not no_cache,
        )
        try:
            report = run_usps(st)
        except (ValueError, FileNotFoundError) as exc:
            console.print(f"[red]error:[/red] {exc}")
            raise typer.Exit(2)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted[/yellow]: finished rows are saved; rerun with --resume")
            raise typer.Exit(130)
        o = report["original"]
        console.print(f"wrote {out / 'reduced_set.md'} and {out / 'reduced_set.json'}"
                      + ("" if report["complete"] else " (PARTIAL)"))
        console.print(f"  SVM: mean #SV {o['mean_n_sv']:.1f}, error {o['error']:.2f} %"
                      f"   (paper approx. 254 SVs, 4.4 %)")
        for r in report["rows"]:
            console.print(f"  {r['name']:20s} {r['mean_n_vectors']:6.1f} vectors/machine  "
                          f"error {r['error']['mean']:5.2f} %  speed-up {r['speedup']:5.1f}x")
