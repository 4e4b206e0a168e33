"""Benchmark: Kernel Projection Machine (5-fold CV over D) versus SVC (5-fold CV over C).

Same run, same data, same folds, same Gaussian kernel: Rätsch realizations 1-3 of
banana (sigma = 0.7071), german (sigma = 5.2440) and image (sigma = the median
heuristic, :func:`kpm.kernels.median_sigma` of each training set).

* SVC: ``GridSearchCV(SVC(kernel='rbf', gamma=1/(2 sigma^2)), C = logspace(-2, 3, 100), cv=folds)``.
* KPM ``default``: ``KernelProjectionMachine(sigma, cv=folds)``, the estimator's defaults:
  with ``selection='cv'`` the SVM restricted to S_D (beyond the papers), C by CV of the
  SVM at the largest D over ``logspace(-2, 3, 11)``, then D by CV at that C.
* KPM ``exact``: ``KernelProjectionMachine(sigma, selection='cv', cv=folds,
  formulation='paper')``, the papers' KPM -- every
  D from 1 to the first D at which the fold's training hinge risk is 0 (beyond it
  every D has the same solution and the CV curve is flat; ties go to the smaller D,
  so no larger D can be selected), capped by the numerical rank.
* KPM ``highs``: ``exact`` with ``lp_solver='highs'`` (one warm-started HiGHS model per
  path) instead of the default specialised simplex of :mod:`kpm.hinge.simplex`.
* KPM ``grid``: the same with ``n_components_grid='auto'`` (every D <= 20, then steps of 10 %).
* KPM ``early``: every D, with ``early_stopping=True`` (the folds advance together; the
  sweep stops at the first D > 2 D_best + 20 -- a heuristic, not a proof).
* KPM ``fast``: both, ``n_components_grid='auto'`` and ``early_stopping=True``.
* KPM ``svm``: ``formulation='svm'`` (beyond the papers: the soft-margin SVM restricted to
  S_D, (D, C) chosen jointly by the same CV over its default D grid and C in
  {0.1, 0.3, 1, 3, 10}).
* KPM ``svm-two-stage``: ``formulation='svm'`` with ``c_selection='two-stage'`` over
  ``C = logspace(-2, 3, 11)`` (C by CV of the SVM at the largest D, then D by CV at that C).

Both use the same shuffled ``StratifiedKFold(5, random_state=0)`` folds and one
process (n_jobs=1) with one BLAS thread (threadpoolctl). Times: wall clock (``perf_counter``) and CPU (``process_time``,
all threads of the process). Results are appended to a JSON file (resumable) and
summarised in markdown.

Usage::

    python benchmarks/bench_kpm.py [--datasets banana german image] [--realizations 1 2 3]
                                   [--variants exact grid] [--out docs/results]
"""

from __future__ import annotations

import os

# one BLAS/OpenMP thread for both competitors, set before numpy/scipy load their BLAS:
# on a shared 2-core machine multithreaded OpenBLAS spins and inflates the CPU and wall
# time of the eigendecompositions many-fold (measured: 0.04 s -> 0.3-1.3 s for n = 560)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kpm_reproduce.experiments.kpm_tables import SIGMAS as PAPER_SIGMAS  # noqa: E402
from kpm_reproduce.experiments.provenance import header  # noqa: E402

#: The C rule of the ``svm-two-stage`` variant.
SIGMA = {"banana": PAPER_SIGMAS["banana"], "german": PAPER_SIGMAS["german"], "image": "median"}


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _variant_params(variant):
    """The estimator parameters of a KPM variant beyond ``sigma``, ``cv`` and the seeds."""
    if variant == "default":
        return {}
    if variant.startswith("svm"):
        # (each C rule with its default grid, kpm.machine.exact.DEFAULT_C)
        return dict(formulation="svm", c_selection="two-stage" if variant == "svm-two-stage" else "joint")
    return dict(formulation="paper", selection="cv", n_components_grid="auto" if variant in ("grid", "fast") else None,
                early_stopping=variant in ("early", "fast"), lp_solver="highs" if variant == "highs" else "auto")


def run_one(name, realization, variants, data_dir=None):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    from kpm_reproduce.datasets import load_raetsch
    from kpm.kernels import median_sigma
    from kpm import KernelProjectionMachine

    split = load_raetsch(name, realization, data_dir=data_dir)
    X, y, Xt, yt = split.X_train, split.y_train, split.X_test, split.y_test
    sigma = SIGMA[name]
    if sigma == "median":
        sigma = median_sigma(X)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    rec = {
        "dataset": name,
        "realization": realization,
        "sigma": float(sigma),
        "n_train": len(X),
        "n_test": len(Xt),
        "load_before": os.getloadavg()[0],
    }
    svc, wall, cpu = _timed(
        lambda: GridSearchCV(
            SVC(kernel="rbf", gamma=1.0 / (2 * sigma**2)),
            {"C": np.logspace(-2, 3, 100)},
            cv=folds,
            n_jobs=1,
        ).fit(X, y)
    )
    rec["svc"] = {
        "test_error": float(np.mean(svc.predict(Xt) != yt)),
        "C": float(svc.best_params_["C"]),
        "wall_s": wall,
        "cpu_s": cpu,
    }
    for variant in variants:
        kpm, wall, cpu = _timed(
            lambda: KernelProjectionMachine(sigma=sigma, cv=folds, random_state=0, cv_duplicates="split",
                                            **_variant_params(variant)).fit(X, y)
        )
        rec[f"kpm_{variant}"] = {
            "test_error": float(np.mean(kpm.predict(Xt) != yt)),
            "D": int(kpm.n_components_),
            "largest_D_solved": int(kpm.selection_curve_["D"].max()),
            "rank": int(len(kpm.eigenvalues_)),
            "lp_fallbacks": int(kpm.lp_fallbacks_),
            "C": None if kpm.C_ is None else float(kpm.C_),
            "wall_s": wall,
            "cpu_s": cpu,
        }
    rec["load_after"] = os.getloadavg()[0]
    return rec


def summarise(records, variants):
    lines = []
    datasets = list(dict.fromkeys(r["dataset"] for r in records))
    head = "| dataset | σ | realizations | SVC error % | " + " | ".join(
        f"KPM {v} error % | KPM {v} D | {v} wall ratio | {v} CPU ratio" for v in variants
    ) + " |"
    lines.append(head)
    lines.append("|" + "---|" * (4 + 4 * len(variants)))
    for d in datasets:
        rs = [r for r in records if r["dataset"] == d]
        svc_err = np.array([r["svc"]["test_error"] for r in rs]) * 100
        sig = rs[0]["sigma"] if d != "image" else np.mean([r["sigma"] for r in rs])
        cells = [
            d,
            f"{sig:.4g}" + (" (median, mean)" if d == "image" else ""),
            ",".join(str(r["realization"]) for r in rs),
            f"{svc_err.mean():.2f} ± {svc_err.std(ddof=1) if len(rs) > 1 else 0:.2f}",
        ]
        for v in variants:
            if not all(f"kpm_{v}" in r for r in rs):
                cells += ["-"] * 4
                continue
            e = np.array([r[f"kpm_{v}"]["test_error"] for r in rs]) * 100
            D = [r[f"kpm_{v}"]["D"] for r in rs]
            wr = sum(r[f"kpm_{v}"]["wall_s"] for r in rs) / sum(r["svc"]["wall_s"] for r in rs)
            cr = sum(r[f"kpm_{v}"]["cpu_s"] for r in rs) / sum(r["svc"]["cpu_s"] for r in rs)
            cells += [
                f"{e.mean():.2f} ± {e.std(ddof=1) if len(rs) > 1 else 0:.2f}",
                ",".join(map(str, D)),
                f"{wr:.2f}",
                f"{cr:.2f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Per realization (seconds; ratio = KPM / SVC):")
    lines.append("")
    lines.append("| dataset | r | SVC err % | C | SVC wall | SVC CPU | " + " | ".join(
        f"{v} err % | {v} D (largest solved) | {v} wall | {v} CPU" for v in variants) + " | load avg |")
    lines.append("|" + "---|" * (7 + 4 * len(variants)))
    for r in records:
        s = r["svc"]
        cells = [r["dataset"], str(r["realization"]), f"{100 * s['test_error']:.2f}", f"{s['C']:.3g}",
                 f"{s['wall_s']:.1f}", f"{s['cpu_s']:.1f}"]
        for v in variants:
            k = r.get(f"kpm_{v}")
            if k is None:
                cells += ["-"] * 4
                continue
            cells += [f"{100 * k['test_error']:.2f}", f"{k['D']} ({k['largest_D_solved']})",
                      f"{k['wall_s']:.1f}", f"{k['cpu_s']:.1f}"]
        cells.append(f"{r['load_before']:.1f} / {r['load_after']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["banana", "german", "image"])
    ap.add_argument("--realizations", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument(
        "--variants", nargs="+", default=["default", "exact"],
        choices=["default", "exact", "highs", "grid", "early", "fast", "svm", "svm-two-stage"]
    )
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (the committed results: docs/results)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--tag", default="", help="suffix of the output file names")
    ap.add_argument("--resume", action="store_true",
                    help="keep the records already in the JSON file and run only the missing ones")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_info

    blas = {i["internal_api"]: i["num_threads"] for i in threadpool_info()}
    print(f"thread pools: {blas}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    json_path = args.out / f"kpm_speed{args.tag}.json"
    records = json.loads(json_path.read_text()) if args.resume and json_path.exists() else []
    if records:
        print(f"resuming: {len(records)} records from {json_path}", flush=True)
    done = {(r["dataset"], r["realization"]) for r in records}
    for name in args.datasets:
        for r in args.realizations:
            if (name, r) in done:
                continue
            rec = run_one(name, r, args.variants, args.data_dir)
            rec["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}"
            records.append(rec)
            json_path.write_text(json.dumps(records, indent=1))
            k = ", ".join(
                f"{v}: {100 * rec[f'kpm_{v}']['test_error']:.2f}% D={rec[f'kpm_{v}']['D']} "
                f"{rec[f'kpm_{v}']['wall_s']:.1f}s/{rec[f'kpm_{v}']['cpu_s']:.1f}cpu"
                for v in args.variants
            )
            print(
                f"{name} r{r}: SVC {100 * rec['svc']['test_error']:.2f}% C={rec['svc']['C']:.3g} "
                f"{rec['svc']['wall_s']:.1f}s/{rec['svc']['cpu_s']:.1f}cpu | {k}",
                flush=True,
            )
    table = summarise([r for r in records if r["dataset"] in args.datasets], args.variants)
    (args.out / f"kpm_speed{args.tag}_table.md").write_text("\n".join(header()) + "\n" + table + "\n")
    print(table)


if __name__ == "__main__":
    main()
