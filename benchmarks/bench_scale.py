"""Scale benchmark: KPM on Nyström eigenfunctions vs Nystroem + LinearSVC vs exact SVC.

Twonorm (Breiman; ``kpm.datasets.make_twonorm``), n in {1e4, 1e5, 1e6} training
points, 1e5 held-out test points, m = 2000 landmarks.

* ``kpm``: :class:`kpm.scale.NystroemKPM` (uniform landmarks, sigma = median
  heuristic, D chosen by 5-fold CV over the D grid, folds in 2 threads).
* ``nys_linsvc``: ``Nystroem(n_components=m, gamma=same) + LinearSVC`` with
  ``GridSearchCV`` over C (3 folds, C in {0.01, 0.1, 1, 10}). The n x m feature
  matrix is float64: 16 GB at n = 1e6, above the 8 GiB goal and near this
  machine's 23 GiB, so that run is refused up front and reported as such.
* ``svc``: exact ``SVC(rbf, same gamma)`` with GridSearchCV over C (3 folds,
  C in {0.1, 1, 10}); killed after ``--svc-timeout`` seconds (default 600).
* ``exactness``: constraint generation vs the full LP (scipy HiGHS) on the
  Nyström features of n = 20 000 twonorm points, for a few D.

Each run is a separate subprocess (``python bench_scale.py --one METHOD N``); its
peak resident memory is the VmHWM line of /proc/self/status read at its end.
Results accumulate in a JSON file (resumable: finished runs are skipped); the
markdown table and the log-log plot are written from it.

Usage::

    nice -n 10 python benchmarks/bench_scale.py --out docs/results
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

M = int(os.environ.get("KPM_BENCH_M", 2000))  # landmarks (--m sets it for the subprocesses)
N_TEST = int(os.environ.get("KPM_BENCH_NTEST", 100_000))
SIZES = (10_000, 100_000, 1_000_000)
SEED_TRAIN, SEED_TEST = 0, 12345


def vmhwm_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return -1


def loadavg() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def data(n):
    from kpm.datasets import make_twonorm

    X, y = make_twonorm(n, random_state=SEED_TRAIN)
    Xt, yt = make_twonorm(N_TEST, random_state=SEED_TEST)
    return X, y, Xt, yt


def sigma_of(X):
    from kpm.kernels import median_sigma

    return median_sigma(X, max_samples=2000, random_state=0)


def run_one(method, n):
    t0 = time.perf_counter()
    X, y, Xt, yt = data(n)
    sigma = sigma_of(X)
    gamma = 1.0 / (2 * sigma**2)
    t_data = time.perf_counter() - t0
    out = {"method": method, "n": n, "m": M, "sigma": sigma, "load_start": loadavg()}
    t = time.perf_counter()
    if method == "kpm":
        from kpm.scale import NystroemKPM

        est = NystroemKPM(
            n_landmarks=M, sigma=sigma, max_components=64, cv=5, n_jobs=2, random_state=0
        ).fit(X, y)
        out["fit_s"] = time.perf_counter() - t
        out["D"] = est.n_components_
        out["timings"] = est.timings_
        out["cv_error"] = dict(zip(map(int, est.n_components_grid_), map(float, est.cv_error_)))
        out["working_set_final"] = est.lp_stats_["n_working"][-1]
        out["cg_gap_final"] = est.lp_stats_["gap"][-1]
        t = time.perf_counter()
        err = float(np.mean(est.predict(Xt) != yt))
    elif method == "nys_linsvc":
        if n * M * 8 > 8 * 2**30:
            out["refused"] = (
                f"the {n} x {M} float64 Nystroem feature matrix needs {n * M * 8 / 2**30:.1f} GiB "
                "(above the 8 GiB goal; LinearSVC copies it to float64)"
            )
            return out
        from sklearn.kernel_approximation import Nystroem
        from sklearn.model_selection import GridSearchCV
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import LinearSVC

        pipe = make_pipeline(Nystroem(gamma=gamma, n_components=M, random_state=0), LinearSVC())
        gs = GridSearchCV(pipe, {"linearsvc__C": [0.01, 0.1, 1, 10]}, cv=3, n_jobs=1).fit(X, y)
        out["fit_s"] = time.perf_counter() - t
        out["C"] = gs.best_params_["linearsvc__C"]
        t = time.perf_counter()
        err = float(np.mean(gs.predict(Xt) != yt))
    elif method == "svc":
        from sklearn.model_selection import GridSearchCV
        from sklearn.svm import SVC

        gs = GridSearchCV(SVC(gamma=gamma, cache_size=1000), {"C": [0.1, 1, 10]}, cv=3, n_jobs=1).fit(X, y)
        out["fit_s"] = time.perf_counter() - t
        out["C"] = gs.best_params_["C"]
        out["n_support"] = int(gs.best_estimator_.n_support_.sum())
        t = time.perf_counter()
        err = float(np.mean(gs.predict(Xt) != yt))
    else:
        raise SystemExit(f"unknown method {method}")
    out["predict_s"] = time.perf_counter() - t
    out["test_error"] = err
    out["data_s"] = t_data
    out["wall_s"] = time.perf_counter() - t0
    out["peak_rss_bytes"] = vmhwm_bytes()
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu_s"] = ru.ru_utime + ru.ru_stime  # all threads of this process
    out["load_end"] = loadavg()
    return out


def run_exactness(n=20_000, Ds=(5, 20)):
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from kpm._constraint_generation import ConstraintGenerationHingeLP
    from kpm.kernels import make_kernel
    from kpm.scale import nystroem_eigenfunctions, select_landmarks

    X, y, _, _ = data(n)
    y = y.astype(float)
    k = make_kernel("rbf", sigma=sigma_of(X))
    Z = X[select_landmarks(X, 500, random_state=0)]
    _, P = nystroem_eigenfunctions(k, Z, max_components=max(Ds))
    F = np.asfortranarray(k(X, Z) @ P)
    rows = []
    cg = ConstraintGenerationHingeLP(F, y, random_state=0)
    for D in Ds:
        t = time.perf_counter()
        res = cg.solve(D)
        t_cg = time.perf_counter() - t
        A = sp.hstack([sp.csr_matrix(-y[:, None]), sp.csr_matrix(-y[:, None] * F[:, :D]), -sp.identity(n)])
        c = np.r_[np.zeros(D + 1), np.ones(n)]
        t = time.perf_counter()
        ref = linprog(c, A_ub=A.tocsr(), b_ub=-np.ones(n),
                      bounds=[(None, None)] * (D + 1) + [(0, None)] * n, method="highs")
        t_full = time.perf_counter() - t
        rows.append({
            "n": n, "m": 500, "D": D, "cg_objective": res.objective, "full_lp_objective": float(ref.fun),
            "rel_diff": abs(res.objective - ref.fun) / abs(ref.fun), "cg_working_set": res.n_working,
            "cg_rounds": res.n_rounds, "cg_s (warm path)": t_cg, "full_lp_s": t_full,
        })
    return {"method": "exactness", "rows": rows, "load": loadavg()}


def subprocess_run(method, n, timeout):
    cmd = [sys.executable, __file__, "--one", method, str(n)]
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "timed_out": True, "wall_s": time.perf_counter() - t,
                "note": f"killed after {timeout} s", "load_end": loadavg()}
    if p.returncode != 0:
        return {"method": method, "n": n, "failed": True, "stderr": p.stderr[-3000:], "load_end": loadavg()}
    return json.loads(p.stdout.strip().splitlines()[-1])


def write_report(res, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from kpm.datasets import bayes_error

    bayes = bayes_error("twonorm")
    names = {"kpm": "NystroemKPM (CV over D)", "nys_linsvc": f"Nystroem({M})+LinearSVC (CV over C)",
             "svc": "exact SVC (CV over C)"}
    lines = [
        f"# Scale benchmark: twonorm, m = {M} landmarks, {N_TEST:,} test points",
        "",
        f"Bayes error of twonorm (computed, `kpm.datasets.bayes_error`): {100 * bayes:.3f} %.",
        "Machine: 2 CPU cores shared with other jobs (load average recorded per run; the numbers "
        "are pessimistic wall-clock times on a loaded machine). Peak memory = VmHWM of the run's "
        "own process (data generation included).",
        "",
        "CPU = user + system seconds of the run's process, all threads (a load-independent measure "
        "of the work; on an idle 2-core machine the wall time is between CPU/2 and CPU).",
        "",
        "| method | n | wall (s) | fit (s) | CPU (s) | peak RSS (GiB) | test error (%) | chosen | load avg (start / end) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key in sorted(res, key=lambda k: (res[k].get("n", 0), k)):
        r = res[key]
        if r.get("method") == "exactness":
            continue
        name = names.get(r["method"], r["method"])
        if r.get("refused"):
            lines.append(f"| {name} | {r['n']:,} | not run | | | | | {r['refused']} | |")
            continue
        if r.get("timed_out"):
            lines.append(f"| {name} | {r['n']:,} | > {r['wall_s']:.0f} (killed) | | | | | | {r.get('load_end','')} |")
            continue
        if r.get("failed"):
            lines.append(f"| {name} | {r['n']:,} | failed | | | | | see JSON | |")
            continue
        chosen = f"D = {r['D']}" if "D" in r else f"C = {r.get('C')}"
        cpu = f"{r['cpu_s']:.0f}{r.get('cpu_note', '')}" if "cpu_s" in r else "n/a"
        lines.append(
            f"| {name} | {r['n']:,} | {r['wall_s']:.1f} | {r['fit_s']:.1f} | {cpu} "
            f"| {r['peak_rss_bytes'] / 2**30:.2f} | {100 * r['test_error']:.3f} | {chosen} "
            f"| {r.get('load_start', '')} / {r.get('load_end', '')} |"
        )
    if "exactness" in res:
        lines += ["", "## Exactness of the constraint generation (n = 20 000, Nyström features, m = 500)", "",
                  "| D | constraint generation | full LP (scipy HiGHS) | relative difference | working set | CG s | full LP s |",
                  "|---|---|---|---|---|---|---|"]
        for r in res["exactness"]["rows"]:
            lines.append(f"| {r['D']} | {r['cg_objective']:.9f} | {r['full_lp_objective']:.9f} | {r['rel_diff']:.1e} "
                         f"| {r['cg_working_set']} | {r['cg_s (warm path)']:.2f} | {r['full_lp_s']:.2f} |")
    kp = [res[k] for k in res if res[k].get("method") == "kpm" and "timings" in res[k]]
    if kp:
        lines += ["", "## NystroemKPM phase timings (s)", "", "| n | landmarks+eigen | features | CV | final fit | D |",
                  "|---|---|---|---|---|---|"]
        for r in sorted(kp, key=lambda r: r["n"]):
            t = r["timings"]
            lines.append(f"| {r['n']:,} | {t['landmarks_eigen']:.1f} | {t['features']:.1f} | {t['cv']:.1f} "
                         f"| {t['final_fit']:.1f} | {r['D']} |")
    lines += ["", "![wall time vs n](scale_time_vs_n.png)", ""]
    notes = out / "scale_notes.md"  # hand-written discussion of the numbers, appended verbatim
    if notes.exists():
        lines += [notes.read_text()]
    (out / "scale.md").write_text("\n".join(lines) + "\n")

    fig, ax = plt.subplots(figsize=(6, 4.2))
    for i, (meth, mk) in enumerate((("kpm", "o-"), ("nys_linsvc", "s-"), ("svc", "^-"))):
        pts = sorted((r["n"], r["wall_s"]) for r in res.values()
                     if r.get("method") == meth and "test_error" in r)
        if pts:
            ax.loglog(*zip(*pts), mk, color=f"C{i}", label=names[meth] + ", wall")
        cpu = sorted((r["n"], r["cpu_s"]) for r in res.values()
                     if r.get("method") == meth and "test_error" in r and "cpu_s" in r)
        if cpu:
            ax.loglog(*zip(*cpu), mk[0] + "--", color=f"C{i}", mfc="none", label=names[meth] + ", CPU")
    ax.set_xlabel("training points n")
    ax.set_ylabel("seconds, 2-core machine (load: see table)")
    ax.set_title(f"twonorm, m = {M} landmarks")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "scale_time_vs_n.png", dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2, metavar=("METHOD", "N"))
    ap.add_argument("--out", default="docs/results")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--methods", default="exactness,kpm,nys_linsvc,svc")
    ap.add_argument("--svc-timeout", type=int, default=600)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--m", type=int, default=None, help="landmarks (default 2000)")
    ap.add_argument("--n-test", type=int, default=None, help="test points (default 100000)")
    a = ap.parse_args()
    if a.m is not None:
        os.environ["KPM_BENCH_M"] = str(a.m)
    if a.n_test is not None:
        os.environ["KPM_BENCH_NTEST"] = str(a.n_test)
    if a.one:
        method, n = a.one
        res = run_exactness() if method == "exactness" else run_one(method, int(n))
        print(json.dumps(res, default=float))
        return
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    jpath = out / "scale.json"
    res = json.loads(jpath.read_text()) if jpath.exists() else {}
    if not a.report_only:
        methods = a.methods.split(",")
        todo = [("exactness", 20000)] if "exactness" in methods else []
        for n in map(int, a.sizes.split(",")):
            todo += [(m, n) for m in methods if m != "exactness"]
        for method, n in todo:
            key = "exactness" if method == "exactness" else f"{method}_{n}"
            if key in res and not res[key].get("failed"):
                continue
            if method == "svc" and any(
                r.get("method") == "svc" and r.get("timed_out") and r["n"] < n for r in res.values()
            ):
                res[key] = {"method": "svc", "n": n, "timed_out": True, "wall_s": a.svc_timeout,
                            "note": "not attempted: a smaller n already exceeded the limit"}
                continue
            print(f"[{time.strftime('%H:%M:%S')}] {key} (load {loadavg()})", flush=True)
            timeout = a.svc_timeout if method == "svc" else a.timeout
            res[key] = subprocess_run(method, n, timeout)
            print(json.dumps(res[key], default=float)[:600], flush=True)
            jpath.write_text(json.dumps(res, indent=1, default=float))
            write_report(res, out)
    write_report(res, out)


if __name__ == "__main__":
    main()
