"""``kpm demo``: a short demonstration of the explicit kernel feature map.

Two experiments on data bundled with scikit-learn (:func:`run_projection_demo`):

(a) SVM equivalence (Kwak 2013, IV-B): a *linear* SVM on the explicit coordinates
    ``Y = KernelProjection().fit_transform(X)`` and an RBF-kernel SVM on X (same C)
    give the same decision values (breast-cancer data).
(b) Kernel PCA-L1 versus kernel PCA under outliers (Kwak 2013, IV-D): a cluster of
    gross outliers is added to the wine data; in the (isometric) feature-space
    coordinates we measure the angle between each method's first axis and the first
    kernel principal axis of the inliers alone, and the fraction of the inliers'
    best-possible 2-D variance that each method's 2-D subspace captures.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from kpm_reproduce.cli.common import console, options, rule, run_command


def _angle_deg(u, v):
    import numpy as np

    c = abs(float(u @ v)) / (np.linalg.norm(u) * np.linalg.norm(v))
    return float(np.degrees(np.arccos(min(1.0, c))))


def _svm_equivalence(quick):
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from kpm.decomposition.projection import KernelProjection

    X, y = load_breast_cancer(return_X_y=True)
    if quick:
        X, y = X[:200], y[:200]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    sc = StandardScaler().fit(X_tr)
    X_tr, X_te = sc.transform(X_tr), sc.transform(X_te)
    gamma = 1.0 / X.shape[1]
    t0 = time.perf_counter()
    proj = KernelProjection(kernel="rbf", gamma=gamma)
    Y_tr = proj.fit_transform(X_tr)
    Y_te = proj.transform(X_te)
    t_map = time.perf_counter() - t0
    rbf = SVC(kernel="rbf", gamma=gamma, C=1.0, tol=1e-10).fit(X_tr, y_tr)
    lin = SVC(kernel="linear", C=1.0, tol=1e-10).fit(Y_tr, y_tr)
    d_rbf, d_lin = rbf.decision_function(X_te), lin.decision_function(Y_te)
    return {
        "dataset": f"breast cancer ({len(X_tr)} train / {len(X_te)} test, {X.shape[1]} features)",
        "rank": proj.n_components_,
        "map_seconds": t_map,
        "max_abs_decision_diff": float(np.max(np.abs(d_rbf - d_lin))),
        "max_abs_decision": float(np.max(np.abs(d_rbf))),
        "acc_rbf": float(rbf.score(X_te, y_te)),
        "acc_linear_on_Y": float(lin.score(Y_te, y_te)),
        "same_predictions": float(np.mean(rbf.predict(X_te) == lin.predict(Y_te))),
        "n_sv": (int(rbf.support_.size), int(lin.support_.size)),
    }


def _outlier_experiment(quick, fractions=(0.0, 0.05, 0.10)):
    import numpy as np
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    from kpm.kernels import median_sigma
    from kpm.decomposition.pca_l1 import PCAL1
    from kpm.decomposition.projection import KernelProjection

    X = StandardScaler().fit_transform(load_wine().data)
    if quick:
        X = X[::2]
    rng = np.random.RandomState(0)
    n_in = len(X)
    sigma = median_sigma(X)
    direction = rng.randn(X.shape[1])
    direction /= np.linalg.norm(direction)
    rows = []
    for frac in fractions:
        n_out = int(round(frac * n_in))
        # a tight cluster of gross outliers, 4 median distances away from the data
        out = 4.0 * sigma * direction + 0.1 * rng.randn(n_out, X.shape[1])
        Xa = np.vstack([X, out])
        Y = KernelProjection(kernel="rbf", sigma=sigma).fit_transform(Xa)
        Yin = Y[:n_in] - Y[:n_in].mean(axis=0)
        U = np.linalg.svd(Yin, full_matrices=False)[2][:2]  # inlier kernel PCs (2)
        best = np.sum((Yin @ U.T) ** 2)
        W2 = np.linalg.svd(Y, full_matrices=False)[2][:2]  # kernel PCA on all points
        W1 = PCAL1(2, centered=False, random_state=0).fit(Y).components_  # kernel PCA-L1
        for name, W in (("kernel PCA", W2), ("kernel PCA-L1", W1)):
            rows.append(
                {
                    "outlier_fraction": frac,
                    "n_outliers": n_out,
                    "method": name,
                    "angle_pc1_deg": _angle_deg(W[0], U[0]),
                    "inlier_variance_captured": float(np.sum((Yin @ W.T) ** 2) / best),
                }
            )
    return {"dataset": f"wine ({n_in} inliers, 13 features, RBF sigma = median distance)",
            "rows": rows}


def run_projection_demo(console, quick: bool = False) -> dict:
    """Print the explicit-map demonstration (SVM equivalence, PCA-L1 under outliers).

    Parameters
    ----------
    console : rich.console.Console
    quick : bool
        Smaller data (for smoke tests).

    Returns
    -------
    dict
        The measured numbers (``svm`` and ``outliers``).
    """
    from rich.table import Table

    rule(console, "[bold]Explicit kernel feature map (Kwak's nonlinear projection trick)")
    svm = _svm_equivalence(quick)
    t = Table(title=f"(a) linear SVM on Y vs RBF SVM on X — {svm['dataset']}")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("dimension of the explicit map (rank of K~)", str(svm["rank"]))
    t.add_row("max |decision(rbf, X) - decision(linear, Y)|", f"{svm['max_abs_decision_diff']:.2e}")
    t.add_row("  (largest |decision value|)", f"{svm['max_abs_decision']:.3f}")
    t.add_row("test accuracy, SVC(kernel='rbf') on X", f"{svm['acc_rbf']:.4f}")
    t.add_row("test accuracy, SVC(kernel='linear') on Y", f"{svm['acc_linear_on_Y']:.4f}")
    t.add_row("identical test predictions", f"{100 * svm['same_predictions']:.1f} %")
    t.add_row("support vectors (rbf, linear)", f"{svm['n_sv'][0]}, {svm['n_sv'][1]}")
    console.print(t)
    console.print(
        "[dim]Differences at the 1e-7 level come from libsvm's single-precision kernel cache; "
        "the two problems are identical (Y^T Y = K~).[/dim]"
    )

    res = _outlier_experiment(quick)
    t = Table(title=f"(b) kernel PCA vs kernel PCA-L1 with a cluster of outliers — {res['dataset']}")
    for col in ("outliers", "method", "angle of axis 1 to inlier kernel PC 1",
                "inlier variance captured (2-D)"):
        t.add_column(col, justify="right" if col != "method" else "left")
    for r in res["rows"]:
        t.add_row(
            f"{r['n_outliers']} ({100 * r['outlier_fraction']:.0f} %)",
            r["method"],
            f"{r['angle_pc1_deg']:.1f}°",
            f"{100 * r['inlier_variance_captured']:.1f} %",
        )
    console.print(t)
    console.print(
        "[dim]Angles are measured in feature space (the coordinates Y are isometric); 100 % "
        "= as much inlier variance as kernel PCA on the inliers alone.[/dim]"
    )
    return {"svm": svm, "outliers": res}


def register(app, reproduce):
    """Add ``kpm demo`` to the app."""

    @app.command("demo")
    def demo(
        quick: bool = typer.Option(
            False, "--quick", help="Only the explicit-map section, on small data (a few seconds)."
        ),
        out: Path = options.out("selection-curve figure kpm_selection_curve.png"),
    ):
        """The main job: the Kernel Projection Machine (three selection rules) versus a
        CV-tuned SVC, then the explicit kernel feature map (SVM equivalence, kernel PCA-L1
        versus kernel PCA under outliers)."""
        con = console()

        def body():
            if not quick:
                from kpm_reproduce.cli.kpm_cmds import run_kpm_demo

                rule(con, "Kernel Projection Machine")
                with con.status("KPM and SVC fits (about a minute)"):
                    run_kpm_demo(con, out)
            with con.status("explicit feature map"):
                run_projection_demo(con, quick=quick)

        run_command(body)
