"""The data that ``kpm plot-selection`` and ``kpm plot-relevance`` take: a Rätsch benchmark by
name (one realization), or a CSV file of numbers with the labels in one column.

Both commands accept the same inputs through these functions (a DATASET argument and
``--label-column``); a bad input is a ``typer.BadParameter`` naming it.
"""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["is_csv", "read_csv", "load_split", "load_training"]

_HINT = "DATASET"


def is_csv(dataset: str) -> bool:
    """Whether DATASET names a CSV file (a ``.csv`` name, or any existing file)."""
    path = Path(dataset)
    return path.suffix.lower() == ".csv" or path.is_file()


def read_csv(path, label_column: int):
    """Features and labels of a numeric CSV file (a header row is skipped).

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,)
    """
    import numpy as np

    path = Path(path)
    if not path.is_file():
        raise typer.BadParameter(f"no such CSV file: {path}", param_hint=_HINT)
    data = np.genfromtxt(path, delimiter=",", dtype=float)
    if data.ndim != 2 or data.shape[1] < 2:
        raise typer.BadParameter(f"{path}: the CSV must have at least two numeric columns "
                                 "(features and a label)", param_hint=_HINT)
    if np.isnan(data).all(axis=1).any():  # header row
        data = data[~np.isnan(data).all(axis=1)]
    if np.isnan(data).any():
        raise typer.BadParameter(f"{path}: the CSV holds missing or non-numeric values (NaN)",
                                 param_hint=_HINT)
    if not -data.shape[1] <= label_column < data.shape[1]:
        raise typer.BadParameter(f"{path} has {data.shape[1]} columns; no column "
                                 f"{label_column}", param_hint="--label-column")
    y = data[:, label_column]
    X = np.delete(data, label_column % data.shape[1], axis=1)
    return X, y


def load_split(dataset: str, realization: int, label_column: int, test_size: float, seed: int,
               data_dir=None):
    """A training and a test set: the Rätsch realization, or a stratified split of the CSV.

    Returns
    -------
    name, X_train, y_train, X_test, y_test, paper_sigma
        ``paper_sigma``: the KPM papers' kernel width for that benchmark, else None.
    """
    if is_csv(dataset):
        from sklearn.model_selection import train_test_split

        X, y = read_csv(dataset, label_column)
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=test_size, random_state=seed, stratify=y
        )
        return Path(dataset).stem, X_tr, y_tr, X_te, y_te, None
    from kpm_reproduce.datasets import load_raetsch
    from kpm_reproduce.experiments.kpm_tables import SIGMAS  # the KPM papers' kernel widths

    split = load_raetsch(dataset, realization, data_dir=data_dir)
    return dataset, split.X_train, split.y_train, split.X_test, split.y_test, SIGMAS.get(dataset)


def load_training(dataset: str, realization: int, label_column: int, data_dir=None):
    """One training set: the Rätsch realization's, or every row of the CSV.

    Two-class labels are coded -1/+1 (the Rätsch benchmarks' coding); other labels are
    taken as real-valued targets.

    Returns
    -------
    name, X, y (float), is_csv
    """
    import numpy as np

    if is_csv(dataset):
        X, y = read_csv(dataset, label_column)
        classes = np.unique(y)
        if classes.size == 2:
            y = np.where(y == classes[1], 1.0, -1.0)
        return Path(dataset).stem, X, y.astype(float), True
    from kpm_reproduce.datasets import load_raetsch

    sp = load_raetsch(dataset, realization, data_dir=data_dir)
    return dataset, sp.X_train, sp.y_train.astype(float), False
