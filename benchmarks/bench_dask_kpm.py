"""NystroemKPM on a Dask LocalCluster: twonorm generated and kept on the workers.

The training set is a Dask array generated block by block on the workers (it never
exists on the client); :class:`kpm.NystroemKPM` with ``client=`` persists its features
there and runs the constraint generation's violation searches per chunk
(:mod:`kpm.machine.dask_data`). Measured: wall time of the fit, the client process's peak
resident memory (``ru_maxrss``; with a LocalCluster the scheduler runs in the client
process and counts in it), each worker's peak resident memory (its own ``ru_maxrss``,
asked through ``client.run``), the bytes of every result the client received during the
fit, and the test error on held-out points against the Bayes error (2.275 %).

Each configuration of the constraint generation (``--configs``: ``aggregate_below``,
``init_working_set`` and optionally ``band_size``, e.g. ``none:5000`` for one LP column per
violated point, ``0.9:20000:20000`` for a band of at most 20 000 points) runs in a
fresh process with its own LocalCluster, so that every peak is its own; the report puts
them side by side.

Usage::

    python benchmarks/bench_dask_kpm.py                         # n = 1e6, both configs -> kpm-results/
    python benchmarks/bench_dask_kpm.py --n 10000000 --memory-limit 8GiB   # the 1e7 run
    python benchmarks/bench_dask_kpm.py --out docs/results        # refresh the committed report
"""

from __future__ import annotations

import argparse
import json
import pickle
import resource
import sys
import time
from pathlib import Path

import numpy as np

SEED_TRAIN, SEED_TEST = 0, 1


def twonorm_block(rows, seed, block):
    """``(X, y)`` of one block of twonorm rows, from a generator seeded with ``(seed, block)``."""
    from kpm.datasets import make_twonorm

    return make_twonorm(rows, random_state=np.random.default_rng([seed, block]))


def dask_twonorm(n, block_rows, seed):
    """Twonorm as Dask arrays ``(X, y)`` generated on the workers, ``block_rows`` per block."""
    import dask
    import dask.array as da

    sizes = [min(block_rows, n - s) for s in range(0, n, block_rows)]
    parts = [dask.delayed(twonorm_block, pure=True)(r, seed, b) for b, r in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(p[0], (r, 20), float) for p, r in zip(parts, sizes)])
    y = da.concatenate([da.from_delayed(p[1], (r,), np.int64) for p, r in zip(parts, sizes)])
    return X, y


def _loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return ""


def _rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def run(n, landmarks, n_test, workers, memory_limit, max_components=64, aggregate_below=0.9,
        init_working_set=20000, band_size=None, selection="cv"):
    """Fit on n generated points through a LocalCluster; a JSON-ready dict of the measurements."""
    from distributed import Client, LocalCluster

    from kpm import NystroemKPM
    from kpm.datasets import bayes_error, make_twonorm
    from kpm.kernels import median_sigma

    t0 = time.perf_counter()
    out = {"n": n, "m": landmarks, "max_components": max_components, "n_test": n_test, "workers": workers,
           "memory_limit": memory_limit, "aggregate_below": aggregate_below,
           "init_working_set": init_working_set, "band_size": band_size, "selection": selection, "bayes_error": bayes_error("twonorm"), "load_start": _loadavg()}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                      host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
        out["cluster_start_s"] = time.perf_counter() - t0
        X, y = dask_twonorm(n, 100_000, SEED_TRAIN)
        sigma = median_sigma(X[:2000].compute(), max_samples=2000, random_state=0)
        received = []
        gather = client._gather

        async def recording_gather(futures, *args, **kwargs):  # every result the client receives
            res = await gather(futures, *args, **kwargs)
            received.append(len(pickle.dumps(res, protocol=5)))
            return res

        client._gather = recording_gather
        rss_before = _rss_kib()
        t = time.perf_counter()
        est = NystroemKPM(n_landmarks=landmarks, sigma=sigma, max_components=max_components, cv=5, n_jobs=2,
                          selection=selection, random_state=0, client=client,
                          solver_options=dict(aggregate_below=aggregate_below, init_size=init_working_set,
                                              band_size=band_size)).fit(X, y)
        out["fit_s"] = time.perf_counter() - t
        del client._gather
        out["client_peak_rss_gib"] = _rss_kib() / 2**20
        out["client_rss_before_fit_gib"] = rss_before / 2**20
        peaks = client.run(resource.getrusage, resource.RUSAGE_SELF)
        out["worker_peak_rss_gib"] = sorted(p.ru_maxrss / 2**20 for p in peaks.values())
        out["received_bytes_total"] = int(sum(received))
        out["received_bytes_largest"] = int(max(received))
        out["received_count"] = len(received)
        out["feature_matrix_bytes"] = int(n * est.n_components_grid_[-1] * 8)  # the features: n x the largest D
        out["sigma"] = float(sigma)
        out["D"] = int(est.n_components_)
        out["timings"] = est.timings_
        out["working_set_full_path"] = est.lp_stats_["n_working"]
        out["cv_fold_working_set"] = est.lp_stats_["cv_fold_working_set"]
    Xt, yt = make_twonorm(n_test, random_state=SEED_TEST)
    out["test_error"] = float(np.mean(est.predict(Xt) != yt))
    out["wall_s"] = time.perf_counter() - t0
    out["load_end"] = _loadavg()
    return out


SELECTIONS = {"cv": "5-fold CV (chunk-wise stratified folds)",
              "slope": "the slope heuristic (no cross-validation: one path on all the training points)"}
# the same, short, for the report's title (reports of the same n differ by it)
SELECTION_TITLES = {"cv": "D by 5-fold CV", "slope": "D by the slope heuristic"}


def config_label(res):
    agg = res.get("aggregate_below")
    lab = "one column per point" if agg is None else f"aggregate_below={agg:g}"
    band = "" if res.get("band_size") is None else f", band_size={res['band_size']}"
    return f"{lab}, init_working_set={res.get('init_working_set', 5000)}{band}"


def report(results, command):
    """The Markdown report of one run (one column per configuration)."""
    from kpm_reproduce.experiments.provenance import header

    res0 = results[0]
    gib = res0["feature_matrix_bytes"] / 2**30

    def row(name, fmt):
        return f"| {name} | " + " | ".join(fmt(r) for r in results) + " |"

    lines = [f"# NystroemKPM on a Dask LocalCluster: twonorm, n = {res0['n']:,}, "
             f"{SELECTION_TITLES[res0.get('selection', 'cv')]}", ""]
    lines += header(command)
    lines += [
        f"{res0['workers']} worker processes (1 thread each, memory limit {res0['memory_limit']} each) and the "
        "client on the same machine; the training set is generated block by block on the workers and "
        f"never exists on the client. m = {res0['m']} uniform landmarks, max_components = "
        f"{res0['max_components']}, sigma = {res0['sigma']:.4f} (median heuristic), D by "
        f"{SELECTIONS[res0.get('selection', 'cv')]}, {res0['n_test']:,} held-out test points. Each column is a "
        "configuration of the constraint generation, fitted in its own process and LocalCluster, "
        "one after the other.",
        "",
        "| quantity | " + " | ".join(config_label(r) for r in results) + " |",
        "|---|" + "---|" * len(results),
        row("fit wall time", lambda r: f"{r['fit_s']:.1f} s"),
        row("total wall time (cluster start, data, fit, test)", lambda r: f"{r['wall_s']:.1f} s"),
        row("client peak RSS (includes the LocalCluster's scheduler)", lambda r: f"{r['client_peak_rss_gib']:.2f} GiB"),
        row("client RSS before the fit", lambda r: f"{r['client_rss_before_fit_gib']:.2f} GiB"),
        row("worker peak RSS", lambda r: ", ".join(f"{g:.2f}" for g in r["worker_peak_rss_gib"]) + " GiB"),
        row("bytes received by the client during the fit",
            lambda r: f"{r['received_bytes_total'] / 2**20:.1f} MiB in {r['received_count']} results"),
        row("largest single result received",
            lambda r: f"{r['received_bytes_largest'] / 2**20:.2f} MiB "
                      f"({r['received_bytes_largest'] / r['feature_matrix_bytes']:.2%} of the features)"),
        row("working set: full-data path largest; CV folds at their end (max)",
            lambda r: f"{max(r['working_set_full_path']):,}; "
                      + (f"{max(r['cv_fold_working_set']):,}" if r["cv_fold_working_set"] else "no folds")),
        row("chosen D", lambda r: str(r["D"])),
        row("test error", lambda r: f"{100 * r['test_error']:.3f} %"),
        row("phase timings (s)", lambda r: ", ".join(f"{k} {v:.1f}" for k, v in r["timings"].items())),
        "",
        f"n x D feature matrix (float64): {gib:.2f} GiB. Bayes error {100 * res0['bayes_error']:.3f} %.",
        "",
    ]
    for r in results:
        lines += [f"Working set of the full-data path along D ({config_label(r)}): {r['working_set_full_path']}.", ""]
    lines += [
        "Load average of the (shared, 2-core) machine at the start / end of each configuration: "
        + "; ".join(f"{r.get('load_start', '?')} / {r.get('load_end', '?')}" for r in results) + ".",
        "",
    ]
    return "\n".join(lines)


def _config(text):
    """``AGG:INIT[:BAND]`` -> ``(aggregate_below or None, init_working_set, band_size or None)``."""
    agg, _, rest = text.partition(":")
    init, _, band = rest.partition(":")
    return (None if agg == "none" else float(agg)), int(init or 5000), (int(band) if band else None)


def _run_in_process(kwargs):
    """:func:`run` in a fresh process (its own peak memory and LocalCluster)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as ex:
        return ex.submit(run, **kwargs).result()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="training points (the 1e7 run: 10000000)")
    ap.add_argument("--landmarks", type=int, default=2000)
    ap.add_argument("--max-components", type=int, default=64)
    ap.add_argument("--n-test", type=int, default=100_000)
    ap.add_argument("--configs", type=_config, nargs="+", default=[_config("none:5000"), _config("0.9:20000")],
                    help="constraint-generation configurations AGG:INIT[:BAND] (aggregate_below or 'none', "
                         "init_working_set, band_size), each fitted in its own process (default: none:5000 0.9:20000)")
    ap.add_argument("--selection", choices=sorted(SELECTIONS), default="cv",
                    help="how D is chosen: 5-fold CV (default) or the slope heuristic (one path, no folds)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="3GiB", help="per-worker memory limit (Dask's syntax)")
    ap.add_argument("--name", default="dask_kpm", help="report file names NAME.md and NAME.json (default dask_kpm)")
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (default ./kpm-results; the committed report: docs/results)")
    args = ap.parse_args(argv)
    results = [
        _run_in_process(dict(n=args.n, landmarks=args.landmarks, n_test=args.n_test, workers=args.workers,
                             memory_limit=args.memory_limit, max_components=args.max_components,
                             aggregate_below=agg, init_working_set=init, band_size=band,
                             selection=args.selection))
        for agg, init, band in args.configs
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/bench_dask_kpm.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(results, command)  # before any file is written: the provenance header reads git status
    (args.out / f"{args.name}.json").write_text(json.dumps({"command": command, "results": results}, indent=1))
    (args.out / f"{args.name}.md").write_text(text)
    print(text)
    return results


if __name__ == "__main__":
    main()
