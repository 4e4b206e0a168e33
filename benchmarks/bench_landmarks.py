"""Benchmark: Nyström landmark rules (uniform, k-means++, randomly pivoted Cholesky).

For twonorm, ringnorm (Breiman's generators, ``kpm.datasets.make_twonorm`` /
``make_ringnorm``, 20 features, ``--n-train`` training and ``--n-test`` test points)
and USPS (``kpm_reproduce.datasets.load_usps``, 7291 / 2007 points, 256 pixels; for the
classifier the binary task digits 0-4 against 5-9), with the RBF kernel of the median
heuristic width (``kpm.kernels.median_sigma`` of the training set, 2000 samples):

1. **Approximation error** of the Nyström approximation ``K^ = K[:, S] K[S, S]^+ K[S, :]``
   of the training kernel matrix, for every rule, ``m`` in ``--m`` and seed in
   ``--seeds``: the trace norm of ``K - K^`` (PSD, so its trace) on a fixed uniform sample
   T of ``--sample`` training rows, relative to the trace of ``K`` on T
   (:func:`kpm.spectral.landmarks.nystroem_trace_error`).
2. **Landmarks needed**: the smallest number r of RPCholesky pivots whose error reaches
   the median error of ``max(m)`` uniform landmarks (RPCholesky is sequential: the first
   r pivots of a run are the run with r landmarks, so one run gives the whole curve;
   the r found is checked with :func:`kpm.spectral.landmarks.nystroem_trace_error`).
3. **Downstream**: test error of ``NystroemKPM`` (5-fold CV over D, seed 0) with each
   rule at equal m, and RPCholesky at the smaller ``--m-small`` too.

Usage::

    python benchmarks/bench_landmarks.py [--out kpm-results]     # ~15 min on 2 shared cores
    python benchmarks/bench_landmarks.py --out docs/results        # refresh the committed report
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from kpm_reproduce.datasets import load_usps
from kpm.datasets import make_ringnorm, make_twonorm
from kpm_reproduce.experiments.provenance import header
from kpm.kernels import make_kernel, median_sigma
from kpm.spectral.landmarks import nystroem_trace_error, rpcholesky, select_landmarks
from kpm import NystroemKPM

RULES = ("uniform", "kmeans++", "rpcholesky")


def _uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def load(name, n_train, n_test):
    """``(X_train, y_train, X_test, y_test)``; USPS: digits 0-4 (-1) against 5-9 (+1)."""
    if name == "twonorm":
        X, y = make_twonorm(n_train, random_state=0)
        Xt, yt = make_twonorm(n_test, random_state=1)
    elif name == "ringnorm":
        X, y = make_ringnorm(n_train, random_state=0)
        Xt, yt = make_ringnorm(n_test, random_state=1)
    elif name == "usps":
        X, d, Xt, dt = load_usps()
        y, yt = np.where(d >= 5, 1, -1), np.where(dt >= 5, 1, -1)
    else:
        raise ValueError(f"unknown data set {name!r}")
    return X, y, Xt, yt


def prefix_errors(kernel, X, F, T):
    """Trace errors on T of the first r RPCholesky pivots, r = 1..F.shape[1]."""
    diag = kernel.diag(X[T])
    captured = np.cumsum((F[T] ** 2).sum(axis=0))
    return (diag.sum() - captured) / diag.sum()


def run_dataset(name, ms, seeds, m_small, n_train, n_test, n_sample, log=print):
    X, y, Xt, yt = load(name, n_train, n_test)
    sigma = median_sigma(X, max_samples=2000, random_state=0)
    kernel = make_kernel("rbf", sigma=sigma)
    T = np.sort(np.random.default_rng(12345).choice(len(X), min(n_sample, len(X)), replace=False))
    out = {"dataset": name, "n_train": len(X), "n_test": len(Xt), "sigma": float(sigma),
           "sample": len(T), "approx": {r: {str(m): [] for m in ms} for r in RULES},
           "select_s": {r: {str(m): [] for m in ms} for r in RULES}, "needed": []}
    m_max = max(ms)
    for seed in seeds:
        t0 = time.perf_counter()
        pivots, F, _ = rpcholesky(kernel, X, m_max, random_state=seed)
        t_rpc = time.perf_counter() - t0
        curve = prefix_errors(kernel, X, F, T)
        for m in ms:
            for rule in RULES:
                t0 = time.perf_counter()
                if rule == "rpcholesky" and 20 * m >= len(X):
                    idx = np.sort(pivots[:m])  # = select_landmarks(X, m, rule, seed, kernel=kernel)
                    dt = t_rpc if m == m_max else float("nan")
                else:
                    idx = select_landmarks(X, m, rule, seed, kernel=kernel)
                    dt = time.perf_counter() - t0
                err = nystroem_trace_error(kernel, X, idx, sample=T)
                out["approx"][rule][str(m)].append(err)
                out["select_s"][rule][str(m)].append(dt)
                log(f"{name} seed={seed} m={m} {rule}: error {err:.4e} ({dt:.1f} s)  load "
                    f"{os.getloadavg()[0]:.1f}")
        out.setdefault("curves", []).append(curve.tolist())
    target = statistics.median(out["approx"]["uniform"][str(m_max)])
    for seed, curve in zip(seeds, out["curves"]):
        below = np.flatnonzero(np.asarray(curve) <= target)
        r = int(below[0]) + 1 if below.size else None
        check = None
        if r is not None:
            pivots = rpcholesky(kernel, X, r, random_state=seed)[0]
            check = nystroem_trace_error(kernel, X, np.sort(pivots), sample=T)
        out["needed"].append({"seed": seed, "r": r, "error_at_r": check})
        log(f"{name} seed={seed}: RPCholesky reaches the m={m_max} uniform error {target:.4e} "
            f"with {r} pivots (checked: {check})")
    out.pop("curves")
    out["downstream"] = []
    down = [(rule, m) for m in ms for rule in RULES] + [("rpcholesky", m) for m in m_small]
    for rule, m in down:
        t0 = time.perf_counter()
        est = NystroemKPM(n_landmarks=m, landmarks=rule, sigma=sigma, max_components=64, cv=5,
                          n_jobs=1, random_state=0).fit(X, y)
        wall = time.perf_counter() - t0
        err = float(np.mean(est.predict(Xt) != yt))
        out["downstream"].append({"rule": rule, "m": m, "test_error": err, "D": int(est.n_components_),
                                  "fit_s": wall})
        log(f"{name} NystroemKPM {rule} m={m}: test error {100 * err:.3f} % (D={est.n_components_}, "
            f"{wall:.1f} s)  load {os.getloadavg()[0]:.1f}")
    return out


def report(results, meta):
    ms = meta["m"]
    lines = [
        "# Nyström landmarks: uniform, k-means++ and randomly pivoted Cholesky",
        "",
        *header(),
        f"- Load (`uptime`) before: {meta['uptime_before']}; after: {meta['uptime_after']} "
        "(2 shared cores; the timings are inflated by the other jobs, the errors are not).",
        f"- Data: twonorm and ringnorm from Breiman's generators (`kpm.datasets.make_twonorm` / "
        f"`make_ringnorm`, 20 features, {meta['n_train']} training points seed 0, {meta['n_test']} "
        "test points seed 1); USPS (`kpm_reproduce.datasets.load_usps`, 7291 training / 2007 test digits, 256 "
        "pixels; for the classifier: digits 0-4 against 5-9).",
        "- Kernel: RBF with the median-heuristic width of the training set "
        "(`kpm.kernels.median_sigma`, 2000 samples, seed 0), the same for every rule.",
        "- Rules (`kpm.spectral.landmarks.select_landmarks`): `uniform` (without replacement), `kmeans++` "
        "(scikit-learn's k-means++ seeding in input space on a uniform pool of min(n, 20 m) rows), "
        "`rpcholesky` (randomly pivoted Cholesky, Chen, Epperly, Tropp & Webber 2023, Algorithm 1; "
        "here the pool is every row, since 20 m >= n).",
        f"- Approximation error: trace norm of K - K^ (K^ = K[:, S] K[S, S]^+ K[S, :], PSD "
        f"residual, so the trace norm is the trace) on a fixed uniform sample T of "
        f"{meta['sample']} training rows, relative to trace(K) on T: "
        "sum_T (K_ii - K^_ii) / sum_T K_ii (`kpm.spectral.landmarks.nystroem_trace_error`). Median (min-max) "
        f"over seeds {meta['seeds']}.",
        "",
        "## Approximation error (relative trace norm of K - K^ on the sample)",
        "",
        "| data set | sigma | m | uniform | k-means++ | RPCholesky | RPCholesky / uniform |",
        "|---|---|---|---|---|---|---|",
    ]

    def cell(v):
        return f"{statistics.median(v):.3e} ({min(v):.2e}-{max(v):.2e})"

    for res in results:
        for m in ms:
            a = {r: res["approx"][r][str(m)] for r in RULES}
            ratio = statistics.median(a["rpcholesky"]) / statistics.median(a["uniform"])
            lines.append(f"| {res['dataset']} | {res['sigma']:.3g} | {m} | {cell(a['uniform'])} | "
                         f"{cell(a['kmeans++'])} | {cell(a['rpcholesky'])} | {ratio:.2f} |")
    m_max = max(ms)
    lines += [
        "",
        f"## Landmarks RPCholesky needs to reach the error of m = {m_max} uniform landmarks",
        "",
        f"Target: the median approximation error of {m_max} uniform landmarks (table above). "
        "r = smallest number of RPCholesky pivots (prefix of one run per seed) with an error "
        "at or below it; the error of those r landmarks recomputed by `nystroem_trace_error`.",
        "",
        "| data set | target (uniform, m = %d) | r per seed | error at r |" % m_max,
        "|---|---|---|---|",
    ]
    for res in results:
        target = statistics.median(res["approx"]["uniform"][str(m_max)])
        rs = ", ".join(str(d["r"]) for d in res["needed"])
        errs = ", ".join("—" if d["error_at_r"] is None else f"{d['error_at_r']:.3e}"
                         for d in res["needed"])
        lines.append(f"| {res['dataset']} | {target:.3e} | {rs} | {errs} |")
    lines += [
        "",
        "## Downstream: NystroemKPM test error at equal m (seed 0)",
        "",
        "`NystroemKPM(n_landmarks=m, landmarks=rule, sigma=<median>, max_components=64, cv=5, "
        "random_state=0)`; one seed, so differences of a few tenths of a point are within the "
        "noise of the landmark draw and the CV folds.",
        "",
        "| data set | m | uniform | k-means++ | RPCholesky | D chosen (u / k / r) |",
        "|---|---|---|---|---|---|",
    ]
    for res in results:
        d = {(x["rule"], x["m"]): x for x in res["downstream"]}
        for m in sorted({x["m"] for x in res["downstream"]}):
            row = [d.get((r, m)) for r in RULES]
            errs = " | ".join("—" if x is None else f"{100 * x['test_error']:.2f} %" for x in row)
            dims = " / ".join("—" if x is None else str(x["D"]) for x in row)
            lines.append(f"| {res['dataset']} | {m} | {errs} | {dims} |")
        ref = d[("uniform", m_max)]["test_error"]
        ok = sorted(x["m"] for x in res["downstream"]
                    if x["rule"] == "rpcholesky" and x["test_error"] <= ref)
        lines.append("")
        lines.append(f"{res['dataset']}: uniform m = {m_max} test error {100 * ref:.2f} %; "
                     f"RPCholesky at or below it with m = {ok[0] if ok else 'none of the m tried'}"
                     f"{'' if not ok else ' landmarks'}.")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["twonorm", "ringnorm", "usps"])
    ap.add_argument("--m", type=int, nargs="+", default=[500, 1000, 2000])
    ap.add_argument("--m-small", type=int, nargs="*", default=[100, 250])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--n-train", type=int, default=7400)
    ap.add_argument("--n-test", type=int, default=10000)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (default ./kpm-results; the committed report: docs/results)")
    args = ap.parse_args(argv)
    meta = {"m": args.m, "seeds": args.seeds, "n_train": args.n_train, "n_test": args.n_test,
            "sample": args.sample, "uptime_before": _uptime()}
    print(meta["uptime_before"], flush=True)
    results = [run_dataset(name, args.m, args.seeds, args.m_small, args.n_train, args.n_test,
                           args.sample, log=lambda s: print(s, flush=True))
               for name in args.datasets]
    meta["uptime_after"] = _uptime()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "landmarks.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    text = report(results, meta)
    (args.out / "landmarks.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
