"""Benchmark: the default KPM at the user's default BLAS threads against one thread, and inside
scikit-learn's parallel tools.

Measured, on standardised features (a ``StandardScaler`` fitted on the training part):

* the fit of ``KernelProjectionMachine()`` (every default) at the **default threads** (this
  process drops ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` before
  numpy loads, and sets no limit: BLAS runs on its default threads, the library limits its own
  small work, :mod:`kpm.blas_threads`) and at **one thread**
  (``threadpoolctl.threadpool_limits(1)`` around the fit), ``--repeats`` times each,
  interleaved (default, one, default, one, ...), on scikit-learn's ``breast_cancer`` (all 569
  points), ``digits`` (the panel's split: 1,257 training images,
  ``train_test_split(test_size=0.3, stratify=y, random_state=0)``) and
  ``make_classification(4000, 20, random_state=0)`` (all 4,000 points); the row's ratio is the
  median default-thread time over the median one-thread time;
* ``GridSearchCV(KernelProjectionMachine(), {'sigma': s * [0.5, 1, 2, 4]})`` (``s`` the median
  heuristic, ``cv=5``) on the digits at ``n_jobs=2`` against ``n_jobs=1``, at the default
  threads, interleaved: the ratio n_jobs=2 / n_jobs=1 (loky's workers run on ``cores // 2``
  BLAS threads each; they are started, and warmed up by a small search, before the timed ones).

``--background-load N`` runs N processes spinning on the cores (pure-Python busy loops,
:mod:`kpm_reproduce.experiments.background_load`) for the whole run: the times of a busy
machine. The 1-minute load average is recorded around every fit. The D and C of every KPM fit
are recorded: they must not depend on the threads.

Output: ``<out>/bench_threads.json`` and ``<out>/bench_threads.md`` (default ``./kpm-results``;
the committed report only with ``--out docs/results``).

Usage::

    python benchmarks/bench_threads.py [--sets breast_cancer digits classification]
        [--repeats 3] [--background-load 2] [--no-grid] [--max-n N] [--out kpm-results]
"""

from __future__ import annotations

import os

#: The environment variables dropped before numpy loads (the default threads are the libraries').
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
if __name__ == "__main__":
    DROPPED = {v: os.environ.pop(v) for v in THREAD_VARIABLES if v in os.environ}
else:  # imported (the tests): the environment is the importer's
    DROPPED = {}

import argparse  # noqa: E402
import contextlib  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

TITLE = "The default KPM at the default BLAS threads and at one thread"
RESULTS_NAME = "bench_threads"
SETS = ("breast_cancer", "digits", "classification")
MODES = ("default", "one")
#: The widths of the grid search, in units of the median heuristic.
GRID_FACTORS = (0.5, 1.0, 2.0, 4.0)


def load(name, max_n=None):
    """``(X, y)`` of a set, standardised (digits: its training part), at most ``max_n`` points
    (the first ones of a stratified shuffle)."""
    from sklearn import datasets as skd
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    if name == "breast_cancer":
        X, y = skd.load_breast_cancer(return_X_y=True)
    elif name == "digits":
        X, y = skd.load_digits(return_X_y=True)
        X, _, y, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    elif name == "classification":
        X, y = skd.make_classification(4000, 20, random_state=0)
    else:
        raise ValueError(f"unknown set {name!r}; expected one of {', '.join(SETS)}")
    if max_n is not None and max_n < len(y):
        X, _, y, _ = train_test_split(X, y, train_size=max_n, stratify=y, random_state=0)
    return StandardScaler().fit_transform(np.asarray(X, dtype=float)), y


def blas_threads():
    """The largest thread count of the loaded BLAS libraries."""
    from threadpoolctl import threadpool_info

    return max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=None)


def timed(fn, threads):
    """``fn()`` at ``threads`` ('default': no limit; 'one': ``threadpool_limits(1)``), timed:
    ``(result, record)``."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1) if threads == "one" else contextlib.nullcontext():
        rec = {"blas_threads": blas_threads(), "load_before": os.getloadavg()[0]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w0, c0 = time.perf_counter(), time.process_time()
            out = fn()
            rec.update(wall_s=time.perf_counter() - w0, cpu_s=time.process_time() - c0)
    rec["load_after"] = os.getloadavg()[0]
    return out, rec


def kpm_fits(name, repeats, max_n=None):
    """The default KPM on set ``name`` at both thread settings, interleaved: the set's record."""
    from kpm import KernelProjectionMachine

    X, y = load(name, max_n)
    runs = {m: [] for m in MODES}
    for _ in range(repeats):
        for mode in MODES:
            model, rec = timed(lambda: KernelProjectionMachine().fit(X, y), mode)
            rec.update(D=int(model.n_components_), C=None if model.C_ is None else float(model.C_))
            runs[mode].append(rec)
            print(f"{name} ({len(y)} x {X.shape[1]}), {'default threads' if mode == 'default' else 'one thread'} "
                  f"({rec['blas_threads']} BLAS): "
                  f"{rec['wall_s']:.2f} s, D={rec['D']} C={rec['C']} (load {rec['load_before']:.1f})", flush=True)
    med = {m: float(np.median([r["wall_s"] for r in runs[m]])) for m in MODES}
    return {"set": name, "n": len(y), "features": X.shape[1], "classes": len(np.unique(y)), "runs": runs,
            "median_s": med, "ratio": med["default"] / med["one"],
            "same_selection": len({(r["D"], r["C"]) for m in MODES for r in runs[m]}) == 1}


def grid_fits(repeats, max_n=None, cv=5):
    """``GridSearchCV`` of the default KPM over four widths on the digits, n_jobs=2 against 1."""
    from sklearn.model_selection import GridSearchCV

    from kpm import KernelProjectionMachine, median_sigma

    X, y = load("digits", max_n)
    sigmas = [float(f * median_sigma(X)) for f in GRID_FACTORS]
    with warnings.catch_warnings():  # loky's two workers started and warmed up, not timed
        warnings.simplefilter("ignore")
        small = load("digits", 100)
        GridSearchCV(KernelProjectionMachine(), {"sigma": sigmas[:2]}, cv=2, n_jobs=2).fit(*small)
    runs = {1: [], 2: []}
    for _ in range(repeats):
        for jobs in (1, 2):
            search, rec = timed(lambda: GridSearchCV(KernelProjectionMachine(), {"sigma": sigmas}, cv=cv,
                                                     n_jobs=jobs).fit(X, y), "default")
            rec["best_sigma"] = float(search.best_params_["sigma"])
            runs[jobs].append(rec)
            print(f"GridSearchCV on digits ({len(y)}), n_jobs={jobs}: {rec['wall_s']:.2f} s "
                  f"(load {rec['load_before']:.1f})", flush=True)
    med = {j: float(np.median([r["wall_s"] for r in runs[j]])) for j in runs}
    return {"n": len(y), "sigmas": sigmas, "cv": cv, "runs": {str(j): r for j, r in runs.items()},
            "median_s": {str(j): t for j, t in med.items()}, "ratio": med[2] / med[1]}


def report_lines(result):
    from kpm_reproduce.experiments.provenance import header

    loads = [r[k] for s in result["sets"] for m in MODES for r in s["runs"][m] for k in ("load_before", "load_after")]
    if result.get("grid"):
        loads += [r[k] for rs in result["grid"]["runs"].values() for r in rs for k in ("load_before", "load_after")]
    lines = [f"# {TITLE}", "", *header(result["command"])]
    lines += [
        "The fit of `KernelProjectionMachine()` (every default) on standardised features at the default "
        "threads (no OMP_NUM_THREADS / OPENBLAS_NUM_THREADS / MKL_NUM_THREADS, no limit) and at one thread "
        f"(`threadpool_limits(1)` around the fit), {result['repeats']} runs of each, interleaved; ratio = "
        "median default-thread wall time / median one-thread wall time. The library: "
        f"`{result['kpm']}`.", "",
        f"- BLAS threads at the default: {result['default_blas_threads']}"
        + (f" (the variables {', '.join(f'{k}={v}' for k, v in result['dropped'].items())} were dropped)"
           if result["dropped"] else "") + ".",
        "- Background load: " + (f"{result['background_load']} process{'es' if result['background_load'] > 1 else ''}"
                                 " spinning on the cores for the whole run (`--background-load`)"
                                 if result["background_load"] else "none") + ".",
        f"- Load (1-minute average, around every fit): min {min(loads):.1f}, median {np.median(loads):.1f}, "
        f"max {max(loads):.1f} on {os.cpu_count()} cores." if loads else "- Load: –",
        "", "| set | n | features | classes | default threads s (median) | one thread s (median) | "
        "ratio default / one | runs default | runs one | D, C the same in every run |",
        "|" + "---|" * 10,
    ]
    for s in result["sets"]:
        runs = {m: ", ".join(f"{r['wall_s']:.2f}" for r in s["runs"][m]) for m in MODES}
        lines.append(f"| {s['set']} | {s['n']} | {s['features']} | {s['classes']} | {s['median_s']['default']:.2f} | "
                     f"{s['median_s']['one']:.2f} | {s['ratio']:.2f} | {runs['default']} | {runs['one']} | "
                     f"{'yes' if s['same_selection'] else '**no**'} |")
    g = result.get("grid")
    if g:
        lines += ["", f"`GridSearchCV(KernelProjectionMachine(), {{'sigma': [{', '.join(f'{x:.3g}' for x in g['sigmas'])}]}}, "
                  f"cv={g['cv']}, n_jobs=...)` on the digits ({g['n']} points) at the default threads: n_jobs=2 "
                  f"{g['median_s']['2']:.2f} s against n_jobs=1 {g['median_s']['1']:.2f} s (medians of "
                  f"{len(g['runs']['1'])}), ratio {g['ratio']:.2f}."]
    return lines


def main(argv=None):
    from kpm_reproduce.experiments.background_load import BackgroundLoad
    from kpm_reproduce.experiments.provenance import command_line, write_report

    import kpm

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS, help="the sets (none: the grid search only)")
    ap.add_argument("--repeats", type=int, default=3, help="fits per set and thread setting (default 3)")
    ap.add_argument("--background-load", type=int, default=0, metavar="N",
                    help="N processes spinning on the cores during the run (default 0)")
    ap.add_argument("--no-grid", action="store_true", help="skip the GridSearchCV timing")
    ap.add_argument("--max-n", type=int, default=None, help="at most this many points per set (smoke tests)")
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (the committed results: docs/results)")
    args = ap.parse_args(argv)
    for name, v, lo in (("--repeats", args.repeats, 1), ("--background-load", args.background_load, 0),
                        ("--max-n", args.max_n, 20)):
        if v is not None and v < lo:
            ap.error(f"{name} must be at least {lo}, got {v}")
    result = {"title": TITLE, "command": command_line(None if argv is None else ["bench_threads.py", *argv]),
              "kpm": os.path.dirname(kpm.__file__), "dropped": DROPPED, "repeats": args.repeats,
              "background_load": args.background_load, "default_blas_threads": blas_threads(), "sets": []}
    # warm up: numba compiles or loads its cache, the modules import (at neither setting's cost)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = load("digits", 200)
        kpm.KernelProjectionMachine().fit(X, y)
        kpm.KernelProjectionMachine().fit(X, y % 2)
    with BackgroundLoad(args.background_load) as busy:
        result["background_pids"] = busy.pids
        for name in args.sets:
            result["sets"].append(kpm_fits(name, args.repeats, args.max_n))
        if not args.no_grid:
            result["grid"] = grid_fits(args.repeats, args.max_n, cv=2 if args.max_n else 5)
    args.out.mkdir(parents=True, exist_ok=True)
    write_report(args.out / f"{RESULTS_NAME}.json", result, args.out / f"{RESULTS_NAME}.md", report_lines(result))
    return result


if __name__ == "__main__":
    main()
