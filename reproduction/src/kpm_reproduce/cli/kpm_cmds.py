"""CLI commands of the Kernel Projection Machine: ``kpm plot-selection`` and the demo body.

:func:`run_kpm_demo` is the KPM part of ``kpm demo``: KPM with its three selection rules
versus a CV-tuned SVC on scikit-learn's breast-cancer data and a synthetic banana-shaped
(two-moons) set, as a rich table, plus the selection-curve figure.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import typer

from kpm_reproduce.cli.common import err_console, fraction, options, run_command, show_warning
from kpm_reproduce.cli.inputs import load_split


#: What ``--cv-duplicates`` accepts (the estimator's ``cv_duplicates``).
CV_DUPLICATES = ("warn", "split", "group")


def register(app, reproduce):
    """Add this module's commands to the ``kpm`` app and its ``reproduce`` group."""

    @app.command("plot-selection")
    def plot_selection(
        dataset: str = typer.Argument(..., help="Rätsch dataset name (e.g. flare_solar) or a CSV file."),
        realization: int = typer.Option(1, "--realization", "-r", min=1,
                                        help="Rätsch realization (1-based)."),
        sigma: Optional[str] = typer.Option(
            None, "--sigma",
            help="RBF width sigma, or 'median'. Default: the paper's sigma for the Rätsch sets, "
                 "else median."),
        selection: str = typer.Option("cv", "--selection",
                                      help="cv, penalty, slope, or an integer D."),
        max_dim: Optional[int] = typer.Option(None, "--max-dim", min=1,
                                              help="Largest D (default: the rank)."),
        cv: int = typer.Option(5, "--cv", min=2, help="Cross-validation folds."),
        cv_duplicates: str = typer.Option(
            "warn", "--cv-duplicates",
            help="Duplicated samples in cross-validation: split (copies may fall on both sides "
                 "of a fold: the papers' protocol), group (the copies of a sample stay in one "
                 "fold), warn (split, with a warning when there are duplicates)."),
        label_column: int = typer.Option(-1, "--label-column", help="CSV: the label column."),
        test_size: float = typer.Option(0.3, "--test-size", callback=fraction, help="CSV: test fraction."),
        seed: int = options.seed(0, "Random seed (CV shuffling, CSV split)"),
        show_dim: Optional[int] = typer.Option(None, "--show-dim", min=1,
                                               help="Last D drawn (default: all)."),
        out: Path = options.out("figure kpm_selection_<name>.png"),
        data_dir: Optional[Path] = options.data_dir(),
    ):
        """Draw the KPM selection curve (Blanchard et al. 2004, Figure 1) and save it as PNG."""
        if sigma is None or sigma == "median":
            s = sigma
        else:
            try:
                s = float(sigma)
            except ValueError:
                raise typer.BadParameter(f"must be a number or 'median', got {sigma!r}",
                                         param_hint="--sigma") from None
        if not (selection in ("cv", "penalty", "slope") or selection.isdigit()):
            raise typer.BadParameter(f"must be cv, penalty, slope or an integer, got {selection!r}",
                                     param_hint="--selection")
        if cv_duplicates not in CV_DUPLICATES:
            raise typer.BadParameter(f"must be one of {', '.join(CV_DUPLICATES)}, got "
                                     f"{cv_duplicates!r}", param_hint="--cv-duplicates")
        sel = int(selection) if selection.isdigit() else selection
        name, err, model, path = run_command(lambda: _plot_selection(
            dataset, realization, s, sel, max_dim, cv, label_column, test_size, seed, show_dim,
            out, None if data_dir is None else str(data_dir), cv_duplicates))
        err_console().print(
            f"[bold]{name}[/]: selected D = {model.n_components_}, test error {100 * err:.2f} %, "
            f"fit {model.fit_time_:.1f} s -> {path}")


def _duplicates_warning(name, message):
    """The estimator's warning about duplicated samples, in terms of this command's options."""
    import re

    m = re.search(r"\((\d+) distinct of (\d+)\)", message)
    count = f" ({m.group(1)} distinct of {m.group(2)})" if m else ""
    return (f"{name} holds duplicated samples{count}: the cross-validation folds split their "
            "copies, which biases the CV error towards large D. Pass --cv-duplicates group to "
            "keep the copies of a sample in one fold, or --cv-duplicates split (the papers' "
            "protocol) to accept this without the warning")


def _plot_selection(dataset, realization, sigma, sel, max_dim, cv, label_column, test_size,
                    seed, show_dim, out, data_dir, cv_duplicates="warn"):
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from kpm.plotting import plot_selection_curve as selection_curve
    from kpm import KernelProjectionMachine

    name, X, y, Xt, yt, paper_sigma = load_split(dataset, realization, label_column,
                                                 test_size, seed, data_dir)
    if sigma is None:
        sigma = paper_sigma if paper_sigma is not None else "median"
    with err_console().status(f"fitting the KPM on {name} ({len(y)} points)"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = KernelProjectionMachine(
            sigma=sigma, selection=sel, max_components=max_dim, cv=cv, random_state=seed,
            formulation="paper", cv_duplicates=cv_duplicates, keep_paths=True,
        ).fit(X, y)
        err = float(np.mean(model.predict(Xt) != yt))
        model.extend_path(show_dim)
    for w in caught:  # after the status line is gone; the estimator's names are not options
        text = str(w.message)
        if "cv_duplicates" in text:
            text = _duplicates_warning(name, text)
        text = re.sub(r"\(max_components=(\d+)\)", r"(--max-dim \1)", text.replace("(max_components)", "(--max-dim)"))
        show_warning(text.replace("Raise max_components", "Raise --max-dim"))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    selection_curve(
        model, ax, X_test=Xt, y_test=yt, max_components=show_dim,
        title=f"KPM on {name} (σ={model.kernel_.sigma:.4g}): D={model.n_components_}, "
              f"test error {100 * err:.2f}%",
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"kpm_selection_{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return name, err, model, path


def _banana(n, random_state):
    """The synthetic banana-shaped set: two interleaving half-moons with Gaussian noise 0.3."""
    from sklearn.datasets import make_moons

    return make_moons(n, noise=0.3, random_state=random_state)


def run_kpm_demo(console, out_dir, *, seed: int = 0):
    """KPM (cv, penalty, slope) versus a CV-tuned SVC on breast-cancer and banana data.

    Prints a rich table (test error, chosen D or C, fit time) and saves the
    selection-curve figure of KPM/CV on the banana set to
    ``out_dir/kpm_selection_curve.png``.

    Parameters
    ----------
    console : rich.console.Console
    out_dir : path-like
        Folder of the figure (created if needed).
    seed : int
        Seed of the data splits and CV shuffling.

    Returns
    -------
    list of dict
        One row per (dataset, method).
    """
    import time
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from rich.table import Table
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import GridSearchCV, train_test_split
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from kpm.kernels import median_sigma
    from kpm.plotting import plot_selection_curve as selection_curve
    from kpm import KernelProjectionMachine

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # numba compiles the LP path's kernels on first use (seconds, once per process): a
    # warm-up fit on a tiny problem keeps that out of the timings below
    Xw, yw = _banana(80, seed)
    with warnings.catch_warnings():  # its models are not shown; only the compilation matters
        warnings.simplefilter("ignore")
        for sel in ("cv", "penalty", "slope"):
            KernelProjectionMachine(sigma=0.5, selection=sel, max_components=8, random_state=seed,
                                    formulation="paper").fit(Xw, yw)

    Xb, yb = load_breast_cancer(return_X_y=True)
    Xb_tr, Xb_te, yb_tr, yb_te = train_test_split(Xb, yb, test_size=0.3, random_state=seed, stratify=yb)
    scaler = StandardScaler().fit(Xb_tr)
    Xb_tr, Xb_te = scaler.transform(Xb_tr), scaler.transform(Xb_te)
    Xm_tr, ym_tr = _banana(500, seed)
    Xm_te, ym_te = _banana(5000, seed + 1)
    datasets = [
        ("breast-cancer (sklearn)", Xb_tr, yb_tr, Xb_te, yb_te, median_sigma(Xb_tr)),
        ("banana (two moons, noise 0.3)", Xm_tr, ym_tr, Xm_te, ym_te, 0.5),
    ]
    rows = []
    curve_model = None
    for name, X, y, Xt, yt, sigma in datasets:
        console.print(f"[bold]{name}[/]: n_train={len(X)}, n_test={len(Xt)}, RBF σ={sigma:.3g}")
        for label, sel in (("KPM / CV", "cv"), ("KPM / penalty (λ by CV)", "penalty"), ("KPM / slope", "slope")):
            t = time.perf_counter()
            m = KernelProjectionMachine(sigma=sigma, selection=sel, random_state=seed, formulation="paper",
                                        keep_paths=True).fit(X, y)
            dt = time.perf_counter() - t
            err = float(np.mean(m.predict(Xt) != yt))
            extra = f"D={m.n_components_}" + (f", λ={m.penalty_:.3g}" if m.penalty_ is not None else "")
            rows.append({"dataset": name, "method": label, "test_error": err, "chosen": extra, "fit_s": dt})
            if sel == "cv" and name.startswith("banana"):
                curve_model = (m, Xt, yt, name)
        t = time.perf_counter()
        svc = GridSearchCV(
            SVC(kernel="rbf", gamma=1.0 / (2 * sigma**2)), {"C": np.logspace(-2, 3, 30)}, cv=5
        ).fit(X, y)
        dt = time.perf_counter() - t
        err = float(np.mean(svc.predict(Xt) != yt))
        rows.append(
            {
                "dataset": name,
                "method": "SVC (5-fold CV over 30 C in [1e-2, 1e3])",
                "test_error": err,
                "chosen": f"C={svc.best_params_['C']:.3g}",
                "fit_s": dt,
            }
        )

    table = Table(title="Kernel Projection Machine vs CV-tuned SVC (same RBF kernel)",
                  caption="fit times after a warm-up fit (numba's one-off compilation excluded)")
    for col in ("dataset", "method", "test error %", "chosen D / C", "fit time (s)"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["dataset"], r["method"], f"{100 * r['test_error']:.2f}", r["chosen"], f"{r['fit_s']:.2f}")
    console.print(table)

    m, Xt, yt, name = curve_model
    m.extend_path()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    selection_curve(m, ax, X_test=Xt, y_test=yt, max_components=min(80, int(m.selection_curve_["D"].max())),
                    title=f"KPM selection curve, {name}")
    fig.tight_layout()
    fig_path = out_dir / "kpm_selection_curve.png"
    fig.savefig(fig_path, dpi=120)
    plt.close(fig)
    console.print(f"selection-curve figure: {fig_path}")
    return rows
