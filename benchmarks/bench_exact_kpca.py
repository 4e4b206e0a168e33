"""Benchmark: exact kernel PCA of large n without the kernel matrix, against scikit-learn.

Problem: Breiman's twonorm (:func:`kpm.datasets.make_twonorm`, 20 features, seed 0), RBF
kernel with the median heuristic ``sigma = median_sigma(X, max_samples=2000,
random_state=0)`` (as ``kpm reproduce scale``), the ``--k`` leading eigenpairs of the
centred kernel matrix.

Methods, each in its own subprocess (so that its peak memory is its own); scikit-learn
under an address-space limit of ``--mem-limit-gib`` (``resource.setrlimit(RLIMIT_AS)``,
set after the imports), kpm under it too with ``--limit-kpm`` (by default it is only
measured: its peak resident and peak virtual memory are reported):

* ``kpm matrix-free``: ``KernelProjection(k, eigen_solver='matrix-free',
  eigen_tol=--eigen-tol)`` fit; its Ritz residuals (the certificate, float64,
  ``||K~ u - lambda u|| / lambda_1``), products, and where the time went: the Nyström start,
  kernel evaluation and the products with the vectors (thread-seconds, per precision),
  orthogonalisation and Rayleigh-Ritz (seconds);
* ``sklearn KernelPCA``: ``KernelPCA(k, kernel='rbf', gamma=...)`` fit with its default
  solver, and ``eigen_solver='arpack'`` at the small sizes (``--sklearn-max-n``); at
  every larger size the default is run too, to record how it fails (exception and time to
  fail) and the memory its n x n float64 kernel matrix alone needs.

Where both ran, scikit-learn's eigenvectors are certified with the same float64 blockwise
operator (:class:`kpm.spectral.operator.KernelOperator`) and the eigenvalues compared.

Each child reports its wall time, CPU time (user + system, all threads) and peak resident
memory (``VmHWM``); the load average is recorded before and after every child (the
machine may be shared).

Usage::

    python benchmarks/bench_exact_kpca.py [--sizes 10000 100000] [--k 50] [--eigen-tol 1e-6]
        [--sklearn-max-n 10000] [--mem-limit-gib 4] [--out kpm-results]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SEED = 0


def _problem(n):
    from kpm.datasets import make_twonorm
    from kpm.kernels import median_sigma

    X, _ = make_twonorm(n, random_state=SEED)
    sigma = float(median_sigma(X, max_samples=2000, random_state=0))
    return X, sigma, 1.0 / (2.0 * sigma**2)


def _vm(field="VmHWM"):
    """Peak resident (``VmHWM``) or peak virtual (``VmPeak``) memory of this process, bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _limit_memory(gib):
    if gib:
        limit = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _cpu_s():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


# ------------------------------------------------------------------------------- children
def child_kpm(n, k, eigen_tol, mem_gib, save):
    from kpm.decomposition.projection import KernelProjection

    X, sigma, gamma = _problem(n)
    _limit_memory(mem_gib)
    out = {"sigma": sigma, "gamma": gamma}
    t0, c0 = time.perf_counter(), _cpu_s()
    kp = KernelProjection(k, kernel="rbf", gamma=gamma, eigen_solver="matrix-free",
                          eigen_tol=eigen_tol, random_state=SEED).fit(X)
    out.update(wall_s=time.perf_counter() - t0, cpu_s=_cpu_s() - c0, peak_rss_bytes=_vm(),
               peak_virtual_bytes=_vm("VmPeak"), memory_limit_gib=mem_gib)
    info = kp.eigen_solver_info_
    res = kp.ritz_residuals_
    w = kp.eigenvalues_
    out.update(
        status="ok", max_residual=float(res.max()),
        max_residual_own_eigenvalue=float(np.max(res * w[0] / w)),
        n_float32_products=info["n_fast"], n_float64_products=info["n_exact"],
        block_size=info["block_size"], history=info["history"], start_s=info["start_s"],
        rr_s=info["rr_s"], timings=info["timings"], eigenvalues=w.tolist(),
    )
    if save:
        np.save(save, kp.eigenvectors_)
    return out


def child_sklearn(n, k, solver, mem_gib, save):
    from sklearn.decomposition import KernelPCA

    X, sigma, gamma = _problem(n)
    out = {"sigma": sigma, "gamma": gamma, "solver": solver,
           "kernel_matrix_bytes": 8 * n * n}
    _limit_memory(mem_gib)
    t0, c0 = time.perf_counter(), _cpu_s()
    try:
        est = KernelPCA(k, kernel="rbf", gamma=gamma, eigen_solver=solver, random_state=SEED).fit(X)
    except MemoryError as exc:
        out.update(status="failed", error=f"{type(exc).__name__}: {exc}")
    else:
        out.update(status="ok", eigenvalues=np.sort(est.eigenvalues_)[::-1].tolist())
        if save:
            order = np.argsort(est.eigenvalues_)[::-1]
            np.save(save, est.eigenvectors_[:, order])
    out.update(wall_s=time.perf_counter() - t0, cpu_s=_cpu_s() - c0, peak_rss_bytes=_vm(), peak_virtual_bytes=_vm("VmPeak"))
    return out


def _spawn(args, log):
    """Run this script as a child; its JSON answer (the last line of its output)."""
    load = os.getloadavg()
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        out = {"status": "crashed", "returncode": proc.returncode, "error": " | ".join(tail)}
    else:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["load_before"], out["load_after"] = load, os.getloadavg()
    log(f"  {args[0]} n={args[1]} {args[3] if args[0] == 'sklearn' else ''}: "
        f"{out.get('status')} {out.get('wall_s', float('nan')):.1f} s "
        f"(load {out['load_before'][0]:.1f} -> {out['load_after'][0]:.1f})")
    return out


# -------------------------------------------------------------------------------- the run
def _certify_other(n, vecs_path, eigenvalues):
    """Residuals ``||K~ u - lambda u|| / lambda_1`` of another method's pairs (blockwise)."""
    from kpm.spectral.operator import KernelOperator
    from kpm.kernels import make_kernel

    X, _, gamma = _problem(n)
    U = np.load(vecs_path)
    U = U / np.linalg.norm(U, axis=0)
    w = np.asarray(eigenvalues)
    op = KernelOperator(make_kernel("rbf", gamma=gamma), X, center=True, precision="float64")
    return float(np.max(np.linalg.norm(op(U) - U * w, axis=0)) / w[0])


def _sin_angle(U, V):
    from scipy import linalg

    Qu, Qv = linalg.orth(U), linalg.orth(V)
    return float(linalg.norm(Qv - Qu @ (Qu.T @ Qv), 2))


def run(sizes, k, eigen_tol, sklearn_max_n, mem_gib, limit_kpm=False, log=print):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            small = n <= sklearn_max_n
            log(f"n = {n}")
            paths = {m: str(Path(tmp) / f"{m}_{n}.npy") if small else "" for m in ("kpm", "auto", "arpack")}
            kpm_gib = mem_gib if limit_kpm else 0
            row = {"n": n, "kpm": _spawn(["kpm", n, k, eigen_tol, kpm_gib, paths["kpm"]], log),
                   "sklearn": {}}
            for solver in ("auto", "arpack") if small else ("auto",):
                row["sklearn"][solver] = _spawn(["sklearn", n, k, solver, mem_gib, paths[solver]], log)
            if small:
                _compare(row, n, paths)
            rows.append(row)
    return rows


def _compare(row, n, paths):
    kpm = row["kpm"]
    for solver, res in row["sklearn"].items():
        if res.get("status") != "ok" or kpm.get("status") != "ok":
            continue
        w_ref, w = np.array(res["eigenvalues"]), np.array(kpm["eigenvalues"])
        res["max_residual"] = _certify_other(n, paths[solver], w_ref)
        res["max_rel_eigenvalue_diff_vs_kpm"] = float(np.max(np.abs(w - w_ref)) / w_ref[0])
        res["sin_angle_vs_kpm"] = _sin_angle(np.load(paths["kpm"]), np.load(paths[solver]))


# ------------------------------------------------------------------------------- reporting
def _gib(b):
    return f"{b / 2**30:.2f}"


def _load(r):
    return f"{r['load_before'][0]:.1f}→{r['load_after'][0]:.1f}"


def report(rows, meta):
    from kpm_reproduce.experiments.provenance import header

    lines = [
        "# Exact kernel PCA without the kernel matrix (matrix-free) vs scikit-learn KernelPCA",
        "",
        *header(),
        f"Twonorm (20 features, seed {SEED}), RBF kernel, median-heuristic sigma, the "
        f"{meta['k']} leading eigenpairs of the centred kernel matrix. Each method runs in its own "
        f"process; scikit-learn under an address-space limit of {meta['mem_limit_gib']} GiB "
        f"(`RLIMIT_AS`, set after the imports), kpm {'under it too' if meta['limit_kpm'] else 'without it'}. "
        "Peak RSS is the process's `VmHWM` (kpm's peak virtual memory `VmPeak` in brackets), CPU "
        "is user + system time of all its threads. `kpm`: `KernelProjection(eigen_solver='matrix-free', "
        f"eigen_tol={meta['eigen_tol']:g})`; the residual is the float64 certificate "
        "`max_j ||K~ u_j - lambda_j u_j|| / lambda_1` (and relative to each pair's own eigenvalue).",
        "",
        "| n | method | status | wall s | CPU s | peak RSS GiB | max residual (/λ₁) | (/λⱼ) | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        kpm = row["kpm"]
        lines.append(_kpm_line(row["n"], kpm))
        for solver, r in row["sklearn"].items():
            lines.append(_sk_line(row["n"], solver, r))
    lines += ["", "## Where the time of the matrix-free solver goes", "",
              "Thread-seconds in kernel evaluation and in the products with the block of vectors "
              "(both threads together; with a loaded machine they include waiting for a core), "
              "seconds for the Nyström start and for orthogonalisation + Rayleigh-Ritz.", "",
              "| n | block p | float32 products | float64 products | Nyström start s | kernel f32 | "
              "products f32 | kernel f64 | products f64 | orth + RR s | residual history |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        kpm = row["kpm"]
        if kpm.get("status") != "ok":
            continue
        t = kpm["timings"]
        hist = ", ".join(f"{s[0]} {s[1]:.1e}" for s in kpm["history"])
        lines.append(
            f"| {row['n']} | {kpm['block_size']} | {kpm['n_float32_products']} | "
            f"{kpm['n_float64_products']} | {kpm['start_s']:.1f} | {t['kernel_s_float32']:.1f} | "
            f"{t['product_s_float32']:.1f} | {t['kernel_s_float64']:.1f} | "
            f"{t['product_s_float64']:.1f} | {kpm['rr_s']:.1f} | {hist} |"
        )
    lines += ["", *_ratio_lines(rows), ""]
    return "\n".join(lines)


def _kpm_line(n, r):
    if r.get("status") != "ok":
        return f"| {n} | kpm matrix-free | {r.get('status')}: {r.get('error', '')} | | | | | | {_load(r)} |"
    return (f"| {n} | kpm matrix-free | ok | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{_gib(r['peak_rss_bytes'])} ({_gib(r['peak_virtual_bytes'])}) | {r['max_residual']:.1e} | "
            f"{r['max_residual_own_eigenvalue']:.1e} | {_load(r)} |")


def _sk_line(n, solver, r):
    name = f"sklearn KernelPCA ({solver})"
    if r.get("status") != "ok":
        need = f"; its {n} x {n} float64 kernel matrix alone needs {_gib(r.get('kernel_matrix_bytes', 8 * n * n))} GiB"
        return (f"| {n} | {name} | {r.get('status')} after {r.get('wall_s', float('nan')):.2f} s: "
                f"`{r.get('error', '')}`{need} | | | {_gib(r.get('peak_rss_bytes', 0))} | | | {_load(r)} |")
    res = r.get("max_residual")
    return (f"| {n} | {name} | ok | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{_gib(r['peak_rss_bytes'])} | {'—' if res is None else f'{res:.1e}'} | | {_load(r)} |")


def _ratio_lines(rows):
    out = []
    for row in rows:
        kpm = row["kpm"]
        for solver, r in row["sklearn"].items():
            if "sin_angle_vs_kpm" in r:
                out.append(
                    f"n = {row['n']}: sklearn ({solver}) / kpm matrix-free wall time "
                    f"{r['wall_s'] / kpm['wall_s']:.2f}, peak memory {r['peak_rss_bytes'] / kpm['peak_rss_bytes']:.2f}; "
                    f"eigenvalues agree to {r['max_rel_eigenvalue_diff_vs_kpm']:.1e} (relative to λ₁), "
                    f"largest principal angle sine {r['sin_angle_vs_kpm']:.1e}."
                )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--eigen-tol", type=float, default=1e-6)
    parser.add_argument("--sklearn-max-n", type=int, default=10000)
    parser.add_argument("--mem-limit-gib", type=float, default=4.0)
    parser.add_argument("--limit-kpm", action="store_true",
                        help="run kpm under the address-space limit too")
    parser.add_argument("--out", default="kpm-results")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child)
    meta = {"k": args.k, "eigen_tol": args.eigen_tol, "mem_limit_gib": args.mem_limit_gib,
            "sklearn_max_n": args.sklearn_max_n, "limit_kpm": args.limit_kpm}
    rows = run(args.sizes, args.k, args.eigen_tol, args.sklearn_max_n, args.mem_limit_gib,
               args.limit_kpm)
    rows.sort(key=lambda row: row["n"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "exact_kpca.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (out / "exact_kpca.md").write_text(report(rows, meta))
    print(f"wrote {out / 'exact_kpca.md'}")
    return 0


def _child(spec):
    method, n, k = spec[0], int(spec[1]), int(spec[2])
    save = spec[5] if len(spec) > 5 else ""
    if method == "kpm":
        out = child_kpm(n, k, float(spec[3]), float(spec[4]), save)
    else:
        out = child_sklearn(n, k, spec[3], float(spec[4]), save)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
