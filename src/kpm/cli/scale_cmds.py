"""CLI: ``kpm reproduce scale`` runs the scale benchmark (benchmarks/bench_scale.py)."""

from __future__ import annotations

from pathlib import Path

import typer


def _bench_script() -> Path:
    import kpm

    return Path(kpm.__file__).resolve().parents[2] / "benchmarks" / "bench_scale.py"


def register(app, reproduce):
    """Add this module's commands to the ``kpm`` app and its ``reproduce`` group."""

    @reproduce.command("scale")
    def scale(
        out: Path = typer.Option(Path("docs/results"), help="Folder for scale.md, scale.json, the plot."),
        sizes: str = typer.Option("10000,100000,1000000", help="Comma-separated training sizes."),
        methods: str = typer.Option(
            "exactness,kpm,nys_linsvc,svc", help="Comma-separated: exactness, kpm, nys_linsvc, svc."
        ),
        svc_timeout: int = typer.Option(600, help="Seconds before an exact SVC run is killed."),
        report_only: bool = typer.Option(False, help="Only rewrite scale.md and the plot from scale.json."),
        landmarks: int = typer.Option(2000, help="Number of landmarks m."),
        n_test: int = typer.Option(100000, help="Number of held-out test points."),
    ):
        """Twonorm at n = 1e4..1e6: NystroemKPM vs Nystroem+LinearSVC vs SVC (time, memory, error).

        Resumable: runs already in OUT/scale.json are skipped.
        """
        import subprocess
        import sys

        script = _bench_script()
        if not script.is_file():
            raise typer.BadParameter(f"benchmark script not found at {script} (needs a source checkout)")
        cmd = [sys.executable, str(script), "--out", str(out), "--sizes", sizes, "--methods", methods,
               "--svc-timeout", str(svc_timeout), "--m", str(landmarks), "--n-test", str(n_test)]
        if report_only:
            cmd.append("--report-only")
        raise typer.Exit(subprocess.call(cmd))
