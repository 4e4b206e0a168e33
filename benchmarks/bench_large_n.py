"""Benchmark: the default Kernel Projection Machine beyond the exact basis's memory, against
the scikit-learn pipeline a user would run at that size.

Data: ``make_classification(n + n_test, 20, n_informative=10, random_state=0)``, standardised
by a ``StandardScaler`` fitted on the training part (the first ``n`` rows; the last ``n_test``
are the test set), the RBF width ``sigma = kpm.median_sigma`` of the standardised training set.

* ``KernelProjectionMachine(sigma=sigma, random_state=0)``: every other parameter at its
  default, so ``basis='auto'`` -- the exact basis while the n x n kernel matrix fits
  ``kpm.get_config()['max_kernel_bytes']`` (n of about 23,000 at the 4 GiB default), the
  Nyström eigenfunctions of 1,000 landmarks beyond -- and the SVM in ``S_D`` with C and D by the
  closed-form leave-one-out error. Recorded: the wall and CPU seconds of the fit (CPU: all the
  process's threads), the basis, D, C, the test error and the process's peak resident memory.
  At the **default threads** (this process drops ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``
  and ``MKL_NUM_THREADS`` before numpy loads), and with ``--one-thread`` also at one BLAS
  thread (``threadpool_limits(1)``).
* The pipeline ``make_pipeline(Nystroem(n_components=1000, gamma=1 / (2 sigma^2),
  random_state=0), LinearSVC(C))``: one fit timed on ``0.8 n`` training rows (a 5-fold CV
  training part) at ``C = 1``, times 55 for the estimated cost of the 11-value
  (``numpy.logspace(-2, 3, 11)``), 5-fold grid search; and its test error at each C of
  ``--pipeline-C`` (default 1 and 100) fitted on the whole training set.

* With ``--dask-workers N`` the same model through a Dask ``LocalCluster`` of N single-threaded
  worker processes (``NystroemKPM(formulation='svm', client=...)`` with the default KPM's
  parameters, X a Dask array of row chunks): the wall and CPU seconds of the client, D, C,
  the test error, the client's peak memory and each worker's; ``--no-kpm`` skips the in-memory
  fit, so that the client's peak is its own.

Beyond 1 GiB for the in-memory SVM's features (``kpm.machine.streamed.SELECTION_BYTES``: about
45,000 points at m = 1000) C and D are chosen on a stratified subsample and the final SVM is
streamed over all the points; the table says on how many points C and D were chosen, and the
growth of the peak memory beyond that after the data.

The machine may be shared: the 1-minute load average is recorded before each fit, and the CPU
seconds alongside the wall seconds.

Output: ``<out>/bench_large_n.json`` and ``<out>/bench_large_n.md`` (default ``./kpm-results``); at
another ``--n``, ``bench_large_n_<n>.*``, with ``--no-kpm`` (the Dask fit alone) ``..._dask.*``.

Usage::

    python benchmarks/bench_large_n.py [--n 100000] [--n-test 20000] [--one-thread]
        [--pipeline-C 1 100] [--no-pipeline] [--dask-workers N] [--no-kpm] [--out kpm-results]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import time
import warnings
from pathlib import Path

#: The environment variables dropped before numpy loads (the default threads are the libraries').
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
DROPPED = {v: os.environ.pop(v) for v in THREAD_VARIABLES if v in os.environ} if __name__ == "__main__" else {}

import numpy as np  # noqa: E402 (numpy loads after the thread variables are dropped)

TITLE = "The default KPM at large n against Nystroem + LinearSVC"
RESULTS_NAME = "bench_large_n"
#: The default training size: its report is ``bench_large_n``; another n's is ``bench_large_n_<n>``
#: (and ``..._dask`` for a run whose only KPM fit is the Dask one), so each size keeps its report.
DEFAULT_N = 100_000


def results_name(n, dask_only=False):
    """The report's file name (without suffix) of a run at ``n`` training points."""
    name = RESULTS_NAME if n == DEFAULT_N else f"{RESULTS_NAME}_{n}"
    return f"{name}_dask" if dask_only else name
#: The pipeline's C grid (LinearSVC's C), and its folds: 55 fits for the grid's estimate.
PIPELINE_CS = tuple(float(c) for c in np.logspace(-2, 3, 11))
PIPELINE_FOLDS = 5
N_COMPONENTS = 1000


def peak_rss_gib():
    """The process's peak resident memory so far, in GiB (Linux: ``ru_maxrss`` in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def blas_threads():
    """The BLAS threads numpy runs on now."""
    from threadpoolctl import threadpool_info

    return max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=None)


def make_data(n, n_test):
    """``(X_train, y_train, X_test, y_test, sigma)``: the standardised classification set."""
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    import kpm

    X, y = make_classification(n + n_test, 20, n_informative=10, random_state=0)
    scaler = StandardScaler().fit(X[:n])
    X_train, X_test = scaler.transform(X[:n]), scaler.transform(X[n:])
    return X_train, y[:n], X_test, y[n:], float(kpm.median_sigma(X_train))


def timed(fn, one_thread=False):
    """``fn()`` timed: ``(result, record)`` with wall and CPU seconds, the BLAS threads and
    the load average before."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1) if one_thread else contextlib.nullcontext():
        rec = {"blas_threads": blas_threads(), "load_before": os.getloadavg()[0]}
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        rec["wall_s"], rec["cpu_s"] = time.perf_counter() - t, time.process_time() - c
    return out, rec


def kpm_fit(data, one_thread=False):
    """The default KPM's fit: its record (times, basis, D, C, test error, peak memory)."""
    from kpm import KernelProjectionMachine

    X, y, X_test, y_test, sigma = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf, rec = timed(lambda: KernelProjectionMachine(sigma=sigma, random_state=0).fit(X, y), one_thread)
    rec.update(basis=clf.basis_, D=int(clf.n_components_), C=clf.C_, test_error=float(1 - clf.score(X_test, y_test)),
               peak_rss_gib=peak_rss_gib(), n_selection_samples=int(getattr(clf, "n_selection_samples_", len(y))),
               streamed_steps=getattr(clf, "streamed_steps_", None),
               timings={k: float(v) for k, v in clf.timings_.items()},
               warnings=sorted({str(w.message)[:200] for w in caught}))
    return rec


def dask_fit(data, n_workers, rss_after_data):
    """The default KPM's fit through a Dask ``LocalCluster`` of ``n_workers`` single-threaded
    worker processes: a :class:`kpm.NystroemKPM` with the default KPM's parameters on the
    Nyström basis and ``formulation='svm'``, ``X`` a Dask array of row chunks (two per worker)
    on the workers, ``client=``. Its record: times, D, C, test error, the client's peak memory
    and its growth beyond the data, and each worker's peak resident memory."""
    import dask.array as da
    from distributed import Client, LocalCluster

    from kpm import KernelProjectionMachine, NystroemKPM
    from kpm.machine.basis_choice import NYSTROEM_PARAMETERS

    X, y, X_test, y_test, sigma = data
    default = KernelProjectionMachine(sigma=sigma, random_state=0)
    params = {name: getattr(default, name) for name in NYSTROEM_PARAMETERS}
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit=0,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        Xd = da.from_array(X, chunks=(-(-X.shape[0] // (2 * n_workers)), X.shape[1]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf, rec = timed(lambda: NystroemKPM(**dict(params, formulation="svm"), client=client).fit(Xd, y))
        workers = client.run(peak_rss_gib)
    rec.update(basis="nystroem (Dask)", workers=n_workers, D=int(clf.n_components_), C=clf.C_,
               test_error=float(1 - clf.score(X_test, y_test)), peak_rss_gib=peak_rss_gib(),
               rss_growth_gib=peak_rss_gib() - rss_after_data, worker_peak_rss_gib=sorted(workers.values()),
               n_selection_samples=int(clf.n_selection_samples_), streamed_steps=clf.streamed_steps_,
               timings={k: float(v) for k, v in clf.timings_.items()},
               warnings=sorted({str(w.message)[:200] for w in caught}))
    return rec


def pipeline(sigma, C):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    return make_pipeline(Nystroem(n_components=N_COMPONENTS, gamma=1.0 / (2.0 * sigma**2), random_state=0),
                         LinearSVC(C=C))


def pipeline_fits(data, Cs):
    """One pipeline fit on a 5-fold training part (0.8 n rows) at C = 1, timed (the grid's
    estimate: 55 of them), and the test error at each C of ``Cs`` on the whole training set."""
    X, y, X_test, y_test, sigma = data
    n_part = int(round(X.shape[0] * (PIPELINE_FOLDS - 1) / PIPELINE_FOLDS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LinearSVC's ConvergenceWarning at large C
        _, one = timed(lambda: pipeline(sigma, 1.0).fit(X[:n_part], y[:n_part]))
        errors = []
        for C in Cs:
            model, rec = timed(lambda: pipeline(sigma, C).fit(X, y))
            errors.append({"C": float(C), "test_error": float(1 - model.score(X_test, y_test)), **rec})
    grid = len(PIPELINE_CS) * PIPELINE_FOLDS
    return {"n_part": n_part, "one_fit": one, "grid_fits": grid, "grid_wall_s_estimate": grid * one["wall_s"],
            "grid_cpu_s_estimate": grid * one["cpu_s"], "errors": errors, "peak_rss_gib": peak_rss_gib()}


def title(result):
    """The report's title: :data:`TITLE` and the run's n (and its Dask cluster), each report's own."""
    where = f", {result['dask']['workers']} Dask workers" if result.get("dask") is not None and not result.get("kpm") else ""
    return f"{TITLE}: n = {result['n']:,}{where}"


def report_lines(result):
    from kpm_reproduce.experiments.provenance import header

    fits = [("KernelProjectionMachine()", r) for r in [result.get("kpm")] + result.get("kpm_one_thread", []) if r]
    if result.get("dask") is not None:
        fits.append((f"NystroemKPM(client=), {result['dask']['workers']} workers", result["dask"]))
    k = fits[0][1]

    lines = [
        f"# {title(result)}",
        "",
        *header(result.get("command"), code=result.get("code")),
        f"`make_classification({result['n'] + result['n_test']}, 20, n_informative=10, random_state=0)`, "
        f"standardised, the first {result['n']:,} rows for training and the last {result['n_test']:,} for test, "
        f"sigma = {result['sigma']:.4f} (`kpm.median_sigma` of the training set). {result['cpus']} CPUs; "
        f"BLAS threads at the default: {k['blas_threads']}. Peak resident memory after the data: "
        f"{result['rss_after_data_gib']:.2f} GiB.",
        "",
        "| fit | threads | wall s | CPU s | load before | basis | C, D chosen on | D | C | test error "
        "| peak RSS GiB | growth GiB |",
        "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, rec in fits:
        chosen_on = rec.get("n_selection_samples", result["n"])
        lines.append(f"| {name} | {rec['blas_threads']} | {rec['wall_s']:.1f} | {rec['cpu_s']:.1f} | "
                     f"{rec['load_before']:.2f} | {rec['basis']} | {chosen_on:,} | {rec['D']} | {rec['C']:.4g} | "
                     f"{100 * rec['test_error']:.2f} % | {rec['peak_rss_gib']:.2f} | "
                     f"{rec['peak_rss_gib'] - result['rss_after_data_gib']:.2f} |")
    for name, rec in fits:
        lines += ["", f"{name} phases (s): " + ", ".join(f"{p} {s:.1f}" for p, s in rec["timings"].items())]
        if rec.get("worker_peak_rss_gib"):
            lines.append("Workers' peak resident memory (GiB): "
                         + ", ".join(f"{g:.2f}" for g in rec["worker_peak_rss_gib"]))
    lines.append("")
    p = result.get("pipeline")
    if p is not None:
        one = p["one_fit"]
        lines += [
            f"Pipeline `Nystroem(n_components={N_COMPONENTS}) + LinearSVC(C)`: one fit on {p['n_part']:,} rows "
            f"(C = 1) took {one['wall_s']:.1f} s wall, {one['cpu_s']:.1f} s CPU ({one['blas_threads']} BLAS threads); "
            f"the {len(PIPELINE_CS)}-value, {PIPELINE_FOLDS}-fold grid, {p['grid_fits']} such fits: about "
            f"{p['grid_wall_s_estimate']:.0f} s wall ({p['grid_cpu_s_estimate']:.0f} s CPU). The KPM's fit is "
            f"{k['wall_s'] / p['grid_wall_s_estimate']:.2f} x that wall time.",
            "",
            "| pipeline C | test error | wall s (whole training set) |",
            "| ---: | ---: | ---: |",
        ]
        lines += [f"| {e['C']:g} | {100 * e['test_error']:.2f} % | {e['wall_s']:.1f} |" for e in p["errors"]]
    if k["warnings"]:
        lines += ["", "Warnings of the KPM fit: " + "; ".join(k["warnings"])]
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=TITLE)
    ap.add_argument("--n", type=int, default=DEFAULT_N,
                    help="training points (the report: bench_large_n, or bench_large_n_<n> at another n)")
    ap.add_argument("--n-test", type=int, default=20_000, help="test points")
    ap.add_argument("--one-thread", action="store_true", help="also fit the KPM at one BLAS thread")
    ap.add_argument("--pipeline-C", type=float, nargs="*", default=[1.0, 100.0],
                    help="the C values at which the pipeline's test error is measured")
    ap.add_argument("--no-pipeline", action="store_true", help="skip the pipeline")
    ap.add_argument("--dask-workers", type=int, default=None,
                    help="also fit through a Dask LocalCluster of this many worker processes")
    ap.add_argument("--no-kpm", action="store_true",
                    help="skip the in-memory KPM fit (with --dask-workers: the client's memory alone)")
    ap.add_argument("--max-kernel-bytes", type=int, default=None,
                    help="the exact basis's kernel budget (kpm.set_config; default: the library's)")
    ap.add_argument("--out", default="kpm-results")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    data = make_data(args.n, args.n_test)
    from kpm_reproduce.experiments.provenance import code_version, command_line

    result = {"command": command_line(), "code": code_version(), "n": args.n, "n_test": args.n_test, "sigma": data[4], "cpus": len(os.sched_getaffinity(0)),
              "dropped": DROPPED, "rss_after_data_gib": peak_rss_gib()}
    import kpm

    budget = {} if args.max_kernel_bytes is None else {"max_kernel_bytes": args.max_kernel_bytes}
    if args.no_kpm and args.dask_workers is None:
        ap.error("--no-kpm needs --dask-workers")
    with kpm.config_context(**budget):
        if not args.no_kpm:
            result["kpm"] = kpm_fit(data)
            print(f"KPM (default threads): {json.dumps(result['kpm'])}", flush=True)
        if args.dask_workers is not None:
            result["dask"] = dask_fit(data, args.dask_workers, result["rss_after_data_gib"])
            print(f"KPM (Dask): {json.dumps(result['dask'])}", flush=True)
        if args.one_thread and not args.no_kpm:
            result["kpm_one_thread"] = [kpm_fit(data, one_thread=True)]
            print(f"KPM (one thread): {json.dumps(result['kpm_one_thread'][0])}", flush=True)
    if not args.no_pipeline:
        result["pipeline"] = pipeline_fits(data, args.pipeline_C)
        print(f"pipeline: {json.dumps(result['pipeline'])}", flush=True)
    result["seconds"] = time.perf_counter() - t0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = results_name(args.n, dask_only=args.no_kpm)
    (out / f"{name}.json").write_text(json.dumps(result, indent=1))
    (out / f"{name}.md").write_text("\n".join(report_lines(result)) + "\n")
    print("\n".join(report_lines(result)))
    return result


if __name__ == "__main__":
    main()
