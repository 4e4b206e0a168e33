"""``kpm reproduce reduced-set-usps``: reduced-set SVMs on USPS (Schölkopf et al. 1999)."""

from __future__ import annotations

import os
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


def _require_usps(data_dir):
    """Fail early, with the reason, when the USPS file is not there."""
    from kpm_reproduce.datasets import load_usps

    load_usps(data_dir)


def _pairs(text):
    """``'C:c,C:c'`` -> ((C, c), ...); a bad item is a usage error naming it."""
    out = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        try:
            C, c = (float(v) for v in item.split(":"))
        except ValueError:
            raise typer.BadParameter(f"{item!r} is not 'C:c' (two numbers)", param_hint="--also-at") from None
        if C <= 0 or c <= 0:
            raise typer.BadParameter(f"{item!r}: C and c must be positive", param_hint="--also-at")
        out.append((C, c))
    return tuple(out)


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
        gradient_maxiter: int = typer.Option(200, "--gradient-maxiter", min=1,
                                             help="Iterations of the joint gradient phase."),
        long_gradient_maxiter: int = typer.Option(
            1000, "--gradient-maxiter-long", min=1,
            help="Iterations of the joint phase of the -long rows."),
        shared_grid: str = typer.Option("250,500", "--shared-grid",
                                        help="Total shared vectors of the RSS-L1-shared-N rows."),
        shared_construct_grid: str = typer.Option(
            "10,25,50", "--shared-construct-grid",
            help="Vectors per machine on average of the RSC-shared rows (10 n shared in all)."),
        data_grid: str = typer.Option(
            "10", "--data-grid",
            help="Vectors per machine of the +data rows (joint phase fitting the decision "
                 "values on the training set; beyond the paper)."),
        data_maxiter: int = typer.Option(1000, "--data-maxiter", min=1,
                                         help="Iterations of the data-fitted joint phase."),
        data_seeds: str = typer.Option(
            "1,2", "--data-seeds",
            help="Further random states of the +data rows, for their spread; empty: none."),
        methods: str = typer.Option(
            "select,select-l1,construct,construct+grad,burges,select-l1-shared,construct-shared,"
            "burges-shared,construct+grad+data,burges+data,construct-shared+data,"
            "construct+grad-long,construct-shared-long",
            "--methods",
            help="Subset of select, select-l1, construct, construct+grad, burges, "
                 "select-l1-shared, construct-shared, burges-shared, construct+grad+data, burges+data, "
                 "construct-shared+data, construct+grad-long, construct-shared-long (on the data "
                 "grid, --gradient-maxiter-long iterations)."),
        also_at: str = typer.Option(
            "", "--also-at",
            help="Further protocols 'C:c' (comma-separated), each with a table of the select, "
                 "construct, construct+grad, burges and construct-shared rows on the construct "
                 "grid (or --also-grid); empty: none."),
        also_grid: str = typer.Option(
            "", "--also-grid",
            help="Vectors per machine of the --also-at tables; empty: the construct grid."),
        C: float = typer.Option(10.0, "--C", callback=positive,
                                help="SVM box constraint C."),
        c: float = typer.Option(128.0, "--kernel-c", callback=positive,
                                help="Gaussian kernel width c in exp(-|x-y|^2/c)."),
        c_values: str = typer.Option("128,241.76,512", "--kernel-c-values",
                                     help="Widths c for the full-SVM SV-count/error table."),
        n_train: Optional[int] = typer.Option(None, "--n-train", min=20,
                                              help="Use the first N training images (smoke runs)."),
        n_test: Optional[int] = typer.Option(None, "--n-test", min=1,
                                             help="Use the first N test images."),
        repeats: int = typer.Option(5, "--repeats", min=1, help="Timing repeats (best of)."),
        restarts: int = typer.Option(3, "--restarts", min=1,
                                     help="Fixed-point starts per constructed vector."),
        cache_dir: Optional[Path] = typer.Option(
            None, "--cache-dir", file_okay=False,
            help="Keep the fitted SVMs and reduced sets in this folder and reuse them (default: "
                 "no cache)."),
        out: Path = options.out("report reduced_set.* and the task results"),
        data_dir: Optional[Path] = options.data_dir(),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        quiet: bool = options.quiet(),
    ):
        """Ten one-vs-rest Gaussian SVMs on USPS, reduced by selection and construction:
        error versus number of vectors and decision_function speed-up over SVC."""
        from kpm_reproduce.experiments.reduced_set import Settings, run_usps

        check_write_mode(resume, overwrite)
        st = Settings(
            C=C, c=c, grid=parse_numbers(grid, "--grid", int),
            construct_grid=parse_numbers(construct_grid, "--construct-grid", int),
            gradient_grid=parse_numbers(gradient_grid, "--gradient-grid", int),
            gradient_maxiter=gradient_maxiter, long_gradient_maxiter=long_gradient_maxiter,
            shared_grid=parse_numbers(shared_grid, "--shared-grid", int),
            shared_construct_grid=parse_numbers(shared_construct_grid, "--shared-construct-grid", int),
            also_at=_pairs(also_at),
            also_grid=parse_numbers(also_grid, "--also-grid", int) if also_grid.strip() else None,
            data_grid=parse_numbers(data_grid, "--data-grid", int), data_maxiter=data_maxiter,
            data_seeds=parse_numbers(data_seeds, "--data-seeds", int, positive=False, allow_empty=True),
            methods=tuple(m.strip() for m in methods.split(",") if m.strip()),
            c_values=parse_numbers(c_values, "--kernel-c-values"), n_train=n_train,
            n_test=n_test, n_restarts=restarts, repeats=repeats,
            data_dir=data_dir_str(data_dir), out=str(out), resume=resume, overwrite=overwrite,
            progress=not quiet, use_cache=cache_dir is not None,
        )

        def body():
            _require_usps(st.data_dir)
            saved = os.environ.get("KPM_CACHE")
            if cache_dir is not None:
                os.environ["KPM_CACHE"] = str(cache_dir)  # the experiment's cache folder
            try:
                return run_usps(st)
            finally:
                if saved is None:
                    os.environ.pop("KPM_CACHE", None)
                else:
                    os.environ["KPM_CACHE"] = saved

        report = run_command(body, resumable=True, out=out)
        err = err_console()
        o = report["original"]
        err.print(f"wrote {out / 'reduced_set.md'} and {out / 'reduced_set.json'}"
                  + ("" if report["complete"] else " (PARTIAL)"))
        err.print(f"  SVM: mean #SV {o['mean_n_sv']:.1f}, error {o['error']:.2f} %"
                  f"   (paper approx. 254 SVs, 4.4 %)", highlight=False)
        for r in report["rows"]:
            err.print(f"  {r['name']:20s} {r['cost_per_machine']:6.1f} vectors/machine  "
                      f"error {r['error']['mean']:5.2f} %  speed-up {r['speedup']:5.1f}x",
                      highlight=False)
