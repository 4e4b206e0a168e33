"""Benchmark: decision_function of ten one-vs-rest USPS SVCs versus their reduced sets.

Times, on the 2007 USPS test images, the ten ``sklearn.svm.SVC.decision_function`` calls
(libsvm) against ``ReducedSetSVC.decision_function`` of the reduced system at each n,
best of ``--repeats`` interleaved runs, one thread each (``threadpoolctl``), plus the full
expansion in kpm's own engine (to separate the speed-up due to fewer vectors from the one
due to numpy/BLAS versus libsvm). The reduced machines are taken from the cache written by
``kpm reproduce reduced-set-usps --cache-dir DIR`` (run this with ``KPM_CACHE=DIR``) when
present, else built here (RSS-n always; RSC-n only with ``--build``; RSC-n+grad only from the
cache). The machine load (``uptime``) is recorded before and after.

Run: ``nice -n 10 .venv/bin/python benchmarks/bench_reduced_set.py [--grid 10,25,50,100]``
Writes ``kpm-results/bench_reduced_set.{md,json}`` (``--out docs/results`` for the committed
report).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import joblib
import numpy as np

from kpm.experiments.reduced_set import (
    _key,
    _uptime,
    cache_dir,
    fit_ovr_svms,
    load_usps_pm1,
    time_decision,
)
from kpm.experiments.provenance import header
from kpm.experiments.runner import atomic_write_json, to_jsonable
from kpm.reduced_set import reduce_svc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default="10,25,50,100,200")
    ap.add_argument("--methods", default="select,construct")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--C", type=float, default=10.0)
    ap.add_argument("--c", type=float, default=128.0)
    ap.add_argument("--out", default="kpm-results", help="output folder (the committed results: docs/results)")
    ap.add_argument("--build", action="store_true", help="Build uncached RSC-n machines here.")
    args = ap.parse_args(argv)
    grid = [int(v) for v in args.grid.split(",")]
    methods = [m.strip() for m in args.methods.split(",")]

    load_before = _uptime()
    Xtr, ytr, Xte, yte = load_usps_pm1()
    classes, svms, _ = fit_ovr_svms(Xtr, ytr, C=args.C, gamma=1.0 / args.c)
    mean_nsv = float(np.mean([s.n_support_.sum() for s in svms]))
    key = _key(Xtr, ytr, args.C, 1.0 / args.c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        full = reduce_svc(svms, 1.0, X=Xtr, y=ytr, threshold="keep")
    D = np.column_stack([s.decision_function(Xte) for s in svms])
    err_svc = float(np.mean(classes[D.argmax(1)] != yte) * 100)

    def svc_all():
        return [s.decision_function(Xte) for s in svms]

    rows = []
    for method in methods:
        for n in grid:
            path = cache_dir() / "reduced" / f"{key}_{method}_{n}.joblib"
            source = "cache"
            if path.is_file():
                red = joblib.load(path)
            elif method not in ("select", "select-l1", "construct") or (
                method == "construct" and not args.build
            ):
                print(f"{method} n={n}: not in the cache (run kpm reproduce reduced-set-usps, or "
                      "--build for construct), skipped", flush=True)
                continue
            else:
                source = "built"
                nv = min(1.0, n / mean_nsv) if method in ("select", "select-l1") else n
                red = reduce_svc(svms, nv, method=method, X=Xtr, y=ytr, random_state=0)
            t_svc, t_full, t_red = time_decision(
                [svc_all, lambda: full.decision_function(Xte), lambda: red.decision_function(Xte)],
                args.repeats,
            )
            err = float(np.mean(red.predict(Xte) != yte) * 100)
            rows.append({
                "method": method, "n": n, "source": source,
                "mean_n_vectors": float(np.mean(red.n_vectors_)),
                "n_distinct": int(red.n_expansion_vectors_),
                "error": err, "t_svc": t_svc, "t_full_numpy": t_full, "t_reduced": t_red,
                "speedup_vs_svc": t_svc / t_red, "speedup_vs_full_numpy": t_full / t_red,
            })
            r = rows[-1]
            print(f"{method:10s} n={n:4d} vectors/machine {r['mean_n_vectors']:6.1f} distinct "
                  f"{r['n_distinct']:5d} error {err:5.2f} %  SVC {t_svc * 1e3:7.1f} ms  full(numpy) "
                  f"{t_full * 1e3:6.1f} ms  reduced {t_red * 1e3:6.2f} ms  speed-up "
                  f"{r['speedup_vs_svc']:6.1f}x (vs full numpy {r['speedup_vs_full_numpy']:5.1f}x)",
                  flush=True)
    load_after = _uptime()
    report = {
        "svc_error": err_svc, "mean_n_sv": mean_nsv, "n_distinct_sv": int(full.n_expansion_vectors_),
        "n_test": int(len(yte)), "repeats": args.repeats, "rows": rows,
        "uptime_before": load_before, "uptime_after": load_after,
    }
    out = Path(args.out)
    atomic_write_json(out / "bench_reduced_set.json", to_jsonable(report))
    L = [
        "# Benchmark: SVC.decision_function versus reduced-set machines (USPS)",
        "",
        *header(),
        f"Ten one-vs-rest SVCs (mean {mean_nsv:.1f} SVs, {full.n_expansion_vectors_} distinct; "
        f"ten-class error {err_svc:.2f} %), decision values of all ten machines on the "
        f"{len(yte)} test images; best of {args.repeats} interleaved runs, one thread each. "
        "'full (numpy)' = the unreduced expansions evaluated by `ReducedSetSVC` (kpm's engine).",
        "",
        f"Machine: 2 cores shared with other jobs; `uptime` before: `{load_before}`, after: `{load_after}`.",
        "",
        "| method | n | vectors/machine | distinct | error % | SVC ms | full (numpy) ms | reduced ms | "
        "speed-up vs SVC | vs full (numpy) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        L.append(f"| {r['method']} | {r['n']} | {r['mean_n_vectors']:.1f} | {r['n_distinct']} | "
                 f"{r['error']:.2f} | {r['t_svc'] * 1e3:.1f} | {r['t_full_numpy'] * 1e3:.1f} | "
                 f"{r['t_reduced'] * 1e3:.2f} | {r['speedup_vs_svc']:.1f} | {r['speedup_vs_full_numpy']:.1f} |")
    (out / "bench_reduced_set.md").write_text("\n".join(L) + "\n")
    print(f"wrote {out / 'bench_reduced_set.md'}")


if __name__ == "__main__":
    main()
