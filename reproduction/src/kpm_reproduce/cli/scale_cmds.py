"""CLI: ``kpm reproduce scale``, the KPM at scale (:mod:`kpm_reproduce.experiments.scale`)."""

from __future__ import annotations

from pathlib import Path

import typer

from kpm_reproduce.cli.common import check_write_mode, err_console, options, parse_numbers, run_command


def register(app, reproduce):
    """Add this module's commands to the ``kpm`` app and its ``reproduce`` group."""

    @reproduce.command("scale")
    def scale(
        sizes: str = typer.Option("10000,100000,1000000", "--sizes",
                                  help="Training sizes n (comma-separated)."),
        methods: str = typer.Option("kpm,nys_linsvc,svc", "--methods",
                                    help="Comma-separated subset of kpm, nys_linsvc, svc."),
        landmarks: int = typer.Option(2000, "--landmarks", min=1,
                                      help="Landmarks m of both Nyström methods."),
        n_test: int = typer.Option(100_000, "--n-test", min=1, help="Held-out test points."),
        svc_timeout: int = typer.Option(600, "--svc-timeout", min=1,
                                        help="Seconds before an exact SVC run is killed."),
        timeout: int = typer.Option(3600, "--timeout", min=1,
                                    help="Seconds before any other run is killed."),
        out: Path = options.out("report scale.md, scale.json, the plot and the task results"),
        resume: bool = options.resume(),
        overwrite: bool = options.overwrite(),
        report_only: bool = options.report_only(),
        quiet: bool = options.quiet(),
    ):
        """Twonorm at n = 1e4..1e6: NystroemKPM vs Nystroem+LinearSVC vs SVC (time, memory,
        error), each run in its own process."""
        from kpm_reproduce.experiments.provenance import command_line
        from kpm_reproduce.experiments.scale import Settings, run_scale

        check_write_mode(resume, overwrite, report_only)
        n_list = parse_numbers(sizes, "--sizes", int)
        m_list = tuple(m.strip() for m in methods.split(",") if m.strip())
        summary = run_command(lambda: run_scale(Settings(
            sizes=n_list, methods=m_list, landmarks=landmarks, n_test=n_test,
            svc_timeout=svc_timeout, timeout=timeout, out=str(out), resume=resume,
            overwrite=overwrite,
            report_only=report_only, progress=not quiet, command=command_line())),
            resumable=True, out=out)
        err = err_console()
        for key, r in summary["results"].items():
            what = (f"test error {100 * r['test_error']:.3f} %, wall {r['wall_s']:.1f} s"
                    if "test_error" in r else r.get("note", "not run"))
            err.print(f"  {key:22s} {what}", highlight=False)
        err.print(f"wrote {out / 'scale.md'} and {out / 'scale.json'}")
