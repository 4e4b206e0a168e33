"""Benchmark: the default KernelProjection past the kernel-matrix memory budget.

``KernelProjection(n_components=D)`` at its defaults (``eigen_solver='auto'``) on
``make_classification(n_samples=n, n_features=20, n_informative=10, random_state=0)``,
standardised, RBF kernel with ``gamma = 1/20``, under ``kpm.config_context(max_kernel_bytes=
budget)``: where the n x n kernel matrix exceeds the budget, 'auto' takes the matrix-free
solver, which never forms it. Each size runs in a fresh worker process, so that its peak
resident memory (``ru_maxrss``) is the fit's own; recorded: the solver 'auto' took, the
fit's wall time, the peak memory before and after the fit, and two certificates of the
eigenpairs -- the solver's own residuals and an independent check, the residuals
``max_j ||K~ u_j - lambda_j u_j|| / lambda_1`` of the returned pairs recomputed here from the
kernel in row blocks (``K~`` the centred kernel matrix; never formed).

Usage::

    python benchmarks/bench_projection_budget.py [--sizes 30000] [--budget-gib 1]
        [--components 50] [--out kpm-results]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time
from pathlib import Path

import numpy as np

RESULTS_NAME = "projection_budget"
TITLE = "KernelProjection past the kernel-matrix memory budget"
N_FEATURES = 20
#: rows of the kernel per block of the independent residual check
CHECK_BLOCK = 2048


def _data(n):
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X = make_classification(n_samples=n, n_features=N_FEATURES, n_informative=10, random_state=0)[0]
    return StandardScaler().fit_transform(X)


def check_residuals(kernel, X, U, lam, block=CHECK_BLOCK):
    """``||K~ u_j - lambda_j u_j|| / lambda_1`` per pair, with ``K~ = H K H`` applied by row
    blocks of ``kernel(X[rows], X)`` (``H`` the centring; memory O(block n))."""
    V = U - U.mean(axis=0)
    P = np.empty_like(U)
    for start in range(0, len(X), block):
        rows = slice(start, start + block)
        P[rows] = kernel(X[rows], X) @ V
    P -= P.mean(axis=0)
    return np.linalg.norm(P - U * lam, axis=0) / lam[0]


def fit_once(n, budget_bytes, n_components):
    """One fit in this process: a JSON-ready record (run it in a fresh process)."""
    from threadpoolctl import threadpool_info

    import kpm

    X = _data(n)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    with kpm.config_context(max_kernel_bytes=budget_bytes):
        est = kpm.KernelProjection(n_components=n_components, gamma=1.0 / N_FEATURES).fit(X)
    fit_s = time.perf_counter() - t0
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    lam = np.asarray(est.eigenvalues_, dtype=float)
    own = est.ritz_residuals_
    t0 = time.perf_counter()
    check = check_residuals(est.kernel_, X, np.asarray(est.eigenvectors_, dtype=float), lam)
    return {
        "n": n, "kernel_bytes": 8 * n * n, "budget_bytes": budget_bytes, "n_components": n_components,
        "solver": est.eigen_solver_, "fit_s": fit_s, "check_s": time.perf_counter() - t0,
        "peak_rss_before_gib": rss_before / 2**20, "peak_rss_after_gib": rss_after / 2**20,
        "own_residual_max": None if own is None else float(np.max(own)),
        "check_residual_max": float(np.max(check)), "eigenvalues": lam.tolist(),
        "threads": {i["internal_api"]: i["num_threads"] for i in threadpool_info()},
    }


def _worker(args):
    return fit_once(*args)


def run(sizes, budget_bytes, n_components, log=print):
    ctx = multiprocessing.get_context("spawn")
    records = []
    for n in sizes:
        with ctx.Pool(1) as pool:
            rec = pool.map(_worker, [(n, budget_bytes, n_components)])[0]
        log(f"n={n}: {rec['solver']}, fit {rec['fit_s']:.1f} s, peak memory {rec['peak_rss_after_gib']:.2f} GiB, "
            f"residual {rec['check_residual_max']:.2e}")
        records.append(rec)
    return records


def report_lines(result):
    from kpm_reproduce.experiments.provenance import header

    gib = result["budget_bytes"] / 2**30
    lines = [f"# {TITLE}", "", *header(result["command"]),
             f"`KernelProjection(n_components={result['n_components']})` at its defaults "
             f"(`eigen_solver='auto'`) under `kpm.config_context(max_kernel_bytes={result['budget_bytes']})` "
             f"({gib:g} GiB), on `make_classification(n, 20, n_informative=10, random_state=0)`, standardised, "
             "RBF kernel with gamma = 1/20. Each size in a fresh process: peak resident memory "
             "(`ru_maxrss`) after building the data and after the fit. Residuals: max_j "
             "||K~ u_j - lambda_j u_j|| / lambda_1 -- as the solver reports them, and recomputed "
             "independently from the kernel by row blocks (`check_residuals` in "
             "`benchmarks/bench_projection_budget.py`).", "",
             f"- BLAS threads of the fits: {result['records'][0]['threads']}. Run wall time "
             f"{result['run_wall_s'] / 60:.1f} min.", "",
             "| n | kernel matrix GiB | solver ('auto') | fit s | peak memory before / after fit GiB "
             "| residual (solver) | residual (independent) | largest eigenvalue |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["records"]:
        own = "–" if r["own_residual_max"] is None else f"{r['own_residual_max']:.1e}"
        lines.append(f"| {r['n']} | {r['kernel_bytes'] / 2**30:.1f} | {r['solver']} | {r['fit_s']:.1f} | "
                     f"{r['peak_rss_before_gib']:.2f} / {r['peak_rss_after_gib']:.2f} | {own} | "
                     f"{r['check_residual_max']:.1e} | {r['eigenvalues'][0]:.6g} |")
    return lines


def main(argv=None):
    from kpm_reproduce.experiments.provenance import command_line, write_report

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[30000])
    ap.add_argument("--budget-gib", type=float, default=1.0, help="max_kernel_bytes in GiB (default 1)")
    ap.add_argument("--components", type=int, default=50)
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (the committed results: docs/results)")
    args = ap.parse_args(argv)
    if min(args.sizes) < 2 or args.components < 1 or args.budget_gib <= 0:
        ap.error("--sizes must be at least 2, --components at least 1, --budget-gib positive")
    budget = int(args.budget_gib * 2**30)
    t0 = time.perf_counter()
    records = run(args.sizes, budget, args.components)
    result = {"command": command_line(argv if argv is None else ["bench_projection_budget.py", *argv]),
              "budget_bytes": budget, "n_components": args.components, "records": records,
              "run_wall_s": time.perf_counter() - t0}
    args.out.mkdir(parents=True, exist_ok=True)
    write_report(args.out / f"{RESULTS_NAME}.json", result, args.out / f"{RESULTS_NAME}.md", report_lines(result))
    return result


if __name__ == "__main__":
    main()
