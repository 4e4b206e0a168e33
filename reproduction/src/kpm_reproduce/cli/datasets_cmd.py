"""``kpm datasets``: list the benchmark data available in the data directory."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kpm_reproduce.cli.common import console, data_dir_str, options, run_command


def _table(data_dir):
    from rich.table import Table

    from kpm_reproduce import datasets as ds

    root = ds.data_dir(data_dir)
    names = ds.list_datasets(root)
    usps_file = root / "usps" / "usps.npz"
    missing = [f"raetsch/{n}.npz" for n in ds.RAETSCH_DATASETS if n not in names]
    missing += [] if usps_file.is_file() else ["usps/usps.npz"]
    if not names and not usps_file.is_file():
        raise FileNotFoundError(
            f"no benchmark data in {root}: missing {', '.join(missing)}; "
            f"`kpm data fetch --to {root}` downloads them from their public sources")
    table = Table(title=f"Rätsch benchmarks in {root}")
    for col in ("dataset", "features", "train", "test", "realizations", "published"):
        table.add_column(col, justify="left" if col == "dataset" else "right")
    bad = 0
    for name in names:
        try:
            s = ds.load_raetsch(name, 1, data_dir=root)
            table.add_row(name, str(s.X_train.shape[1]), str(len(s.y_train)),
                          str(len(s.y_test)), str(ds.n_realizations(name, root)),
                          str(ds.n_published(name, root)))
        except ValueError as exc:
            bad += 1
            table.add_row(name, "[red]unreadable[/red]", "", "", "", str(exc)[:60])
    try:
        Xtr, _, Xte, _ = ds.load_usps(root)
        usps = f"USPS: train {Xtr.shape}, test {Xte.shape}"
    except (FileNotFoundError, ValueError) as exc:
        usps = f"USPS: not available ({exc})"
    if missing:
        usps += (f"\nmissing: {', '.join(missing)} (`kpm data fetch --to {root}` downloads "
                 "them)")
    return table, usps, bad


def register(app, reproduce):
    """Add ``kpm datasets`` to the app."""

    @app.command("datasets")
    def datasets(data_dir: Optional[Path] = options.data_dir()):
        """List the available data sets with shapes, realizations and published splits."""
        table, usps, bad = run_command(lambda: _table(data_dir_str(data_dir)))
        con = console()
        con.print(table)
        con.print(usps, markup=False, highlight=False)
        if bad:
            raise typer.Exit(1)
