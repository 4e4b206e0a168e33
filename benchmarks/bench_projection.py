"""Benchmark: KernelProjection vs scikit-learn KernelPCA, fit + transform, D = 50, RBF.

Data: ``make_classification(n_samples=n, n_features=50, n_informative=10,
random_state=0)``, standardised; RBF kernel with ``gamma = 1/50`` (scikit-learn's
``'scale'`` for standardised data). For each n the competitors run interleaved
(round robin, ``--repeats`` times) in the same process; the table reports the median
and the minimum wall time of ``est.fit(X); est.transform(X)``.

Accuracy: the sine of the largest principal angle between each method's 50-dimensional
eigenvector subspace and the dense solution (scikit-learn's default solver is LAPACK
``eigh`` with ``subset_by_index``, i.e. the dense solution), and the largest relative
eigenvalue error.

Usage::

    python benchmarks/bench_projection.py [--sizes 1000 2000 5000] [--repeats 3]
        [--out docs/results/projection.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scipy import linalg
from sklearn.datasets import make_classification
from sklearn.decomposition import KernelPCA
from sklearn.preprocessing import StandardScaler

from kpm.projection import KernelProjection

D = 50
GAMMA = 1.0 / 50


def _load():
    return os.getloadavg()


def _sin_angle(U, V):
    Qu = linalg.orth(U)
    Qv = linalg.orth(V)
    return float(linalg.norm(Qv - Qu @ (Qu.T @ Qv), 2))


def _methods(seed=0):
    return {
        "kpm KernelProjection (auto)": lambda: KernelProjection(
            D, kernel="rbf", gamma=GAMMA, random_state=seed
        ),
        "sklearn KernelPCA default": lambda: KernelPCA(D, kernel="rbf", gamma=GAMMA),
        "sklearn KernelPCA arpack": lambda: KernelPCA(
            D, kernel="rbf", gamma=GAMMA, eigen_solver="arpack", random_state=seed
        ),
        "sklearn KernelPCA randomized": lambda: KernelPCA(
            D, kernel="rbf", gamma=GAMMA, eigen_solver="randomized", random_state=seed
        ),
    }


def run(sizes, repeats, log=print):
    results = []
    for n in sizes:
        X, _ = make_classification(
            n_samples=n, n_features=50, n_informative=10, random_state=0
        )
        X = StandardScaler().fit_transform(X)
        methods = _methods()
        times = {name: [] for name in methods}
        cpu = {name: [] for name in methods}
        fitted = {}
        load_before = _load()
        for rep in range(repeats):
            for name, make in methods.items():
                est = make()
                t0 = time.perf_counter()
                c0 = time.process_time()
                est.fit(X)
                est.transform(X)
                dt = time.perf_counter() - t0
                cpu[name].append(time.process_time() - c0)
                times[name].append(dt)
                fitted[name] = est
                log(f"n={n} rep={rep} {name}: {dt:.3f} s  (load {os.getloadavg()[0]:.2f})")
        load_after = _load()
        ref = fitted["sklearn KernelPCA default"]
        ref_vecs, ref_vals = ref.eigenvectors_, ref.eigenvalues_
        row = {"n": n, "load_before": load_before, "load_after": load_after, "methods": {}}
        for name, est in fitted.items():
            vecs = est.eigenvectors_
            vals = est.eigenvalues_
            row["methods"][name] = {
                "times": times[name],
                "cpu_times": cpu[name],
                "min_cpu_s": min(cpu[name]),
                "median_s": statistics.median(times[name]),
                "min_s": min(times[name]),
                "sin_angle_vs_dense": _sin_angle(vecs, ref_vecs),
                "max_rel_eigenvalue_error": float(
                    np.max(np.abs(np.sort(vals)[::-1] - np.sort(ref_vals)[::-1])) / ref_vals.max()
                ),
            }
        results.append(row)
    return results


def _cpu_info():
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} logical cores, {model}"


def write_report(results, out: Path, repeats: int, threads=None):
    import sklearn

    kpm_name = "kpm KernelProjection (auto)"
    lines = [
        "# KernelProjection vs scikit-learn KernelPCA: fit + transform time",
        "",
        "Produced by `python benchmarks/bench_projection.py` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).",
        "",
        f"- Machine: {_cpu_info()}; Python {platform.python_version()}, "
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}.",
        "- **The machine was shared with other jobs during the run**: the 1-minute load "
        "averages before/after each size are listed (2 cores: a load above 2 means the "
        "timings are inflated by contention, for all methods alike, since they ran "
        "interleaved in the same process).",
        "- Data: `make_classification(n_samples=n, n_features=50, n_informative=10, "
        "random_state=0)`, standardised; RBF kernel, gamma = 1/50; D = 50 components.",
        f"- Timing: `est.fit(X); est.transform(X)`, {repeats} interleaved repetitions; "
        "median (min) wall seconds; BLAS threads: "
        f"{threads if threads is not None else 'library default (OpenBLAS: 2)'}. "
        "The speed-up column is the ratio of medians.",
        "- Accuracy: sine of the largest principal angle between the 50-dimensional "
        "eigenvector subspace and the dense solution (scikit-learn's default solver = "
        "LAPACK `eigh`), and the largest eigenvalue error relative to the largest eigenvalue.",
        "- kpm 'auto' uses the randomized block Krylov solver (Ritz-residual tolerance 1e-10 "
        "relative) on the implicitly centred kernel matrix.",
        "",
        "| n | method | median s (min) | speed-up of kpm (median) | sin(max principal angle) "
        "| eigenvalue error | load before → after |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in results:
        kt = row["methods"][kpm_name]["median_s"]
        for name, m in row["methods"].items():
            ratio = "—" if name == kpm_name else f"{m['median_s'] / kt:.2f}×"
            lines.append(
                f"| {row['n']} | {name} | {m['median_s']:.3f} ({m['min_s']:.3f}) | {ratio} | "
                f"{m['sin_angle_vs_dense']:.1e} | {m['max_rel_eigenvalue_error']:.1e} | "
                f"{row['load_before'][0]:.1f} → {row['load_after'][0]:.1f} |"
            )
    lines.append("")
    last = results[-1]
    kt = last["methods"][kpm_name]["median_s"]
    default = last["methods"]["sklearn KernelPCA default"]["median_s"]
    fastest_name = min(
        (nm for nm in last["methods"] if nm.startswith("sklearn") and "default" not in nm),
        key=lambda nm: last["methods"][nm]["median_s"],
    )
    fastest = last["methods"][fastest_name]["median_s"]
    lines += [
        f"## Goal check at n = {last['n']}",
        "",
        f"- vs scikit-learn default: **{default / kt:.2f}×** (goal ≥ 2×)",
        f"- vs scikit-learn's fastest partial solver ({fastest_name.split()[-1]}): "
        f"**{fastest / kt:.2f}×** (goal ≥ 1.2×)",
        f"- principal-angle accuracy of kpm: "
        f"{last['methods'][kpm_name]['sin_angle_vs_dense']:.1e} (goal < 1e-6)",
        "",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    out.with_suffix(".json").write_text(json.dumps(results, indent=1))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("docs/results/projection.md"))
    ap.add_argument(
        "--threads", type=int, default=None,
        help="limit the BLAS threads of every method (default: the library default)",
    )
    args = ap.parse_args(argv)
    if args.threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
    print(f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    results = run(args.sizes, args.repeats, log=lambda s: print(s, flush=True))
    for row in results:
        row["blas_threads"] = args.threads or "default"
    print(f"uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(write_report(results, args.out, args.repeats, args.threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
