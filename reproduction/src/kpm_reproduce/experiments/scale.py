"""Protocol behind ``kpm reproduce scale``: the KPM at scale against its alternatives.

Twonorm (Breiman 1996; :func:`kpm.datasets.make_twonorm`), n training points for each n of
``sizes``, ``n_test`` held-out points, Gaussian kernel with σ from the median heuristic:

* ``kpm``: :class:`kpm.NystroemKPM` (``landmarks`` uniform landmarks, D chosen by 5-fold CV
  over D <= 64, folds in 2 threads);
* ``nys_linsvc``: scikit-learn's ``Nystroem(n_components=landmarks) + LinearSVC`` with C by
  3-fold ``GridSearchCV`` over {0.01, 0.1, 1, 10}. Its n × m float64 feature matrix is refused
  up front above 8 GiB (n = 10⁶, m = 2000: 15 GiB);
* ``svc``: exact ``SVC(kernel='rbf')``, C by 3-fold ``GridSearchCV`` over {0.1, 1, 10}, killed
  after ``svc_timeout`` seconds; not attempted at a larger n once a smaller n timed out.

Every (method, n) is one :class:`kpm_reproduce.experiments.runner.Task` whose function runs the fit
in a fresh Python process (``python -m kpm_reproduce.experiments.scale METHOD N ...``), so that its
peak resident memory (VmHWM) and CPU time are its own. Tasks run one at a time (timings
would otherwise compete for the cores). Results: ``<out>/runs/scale.json`` (resumable),
``<out>/scale.json`` (summary), ``<out>/scale.md`` and ``<out>/scale_time_vs_n.png``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from kpm_reproduce.experiments.provenance import header
from kpm_reproduce.experiments.runner import (
    Range,
    Task,
    atomic_write_json,
    atomic_write_text,
    load_results,
    require_results,
    run_tasks,
)

__all__ = ["METHODS", "Settings", "run_one", "scale_task", "run_scale", "write_report",
           "check_scale"]

METHODS = ("kpm", "nys_linsvc", "svc")
NAMES = {"kpm": "NystroemKPM (CV over D)", "nys_linsvc": "Nystroem + LinearSVC (CV over C)",
         "svc": "exact SVC (CV over C)"}
SEED_TRAIN, SEED_TEST = 0, 12345
#: What a stored result must hold to be reused (a run that was refused or timed out has a
#: ``note`` instead of a test error).
SCHEMA = {"method": str, "n": Range(int, 1), "wall_s": Range(float, 0)}


def check_scale(result):
    """Why a stored :func:`scale_task` result is impossible (None if it is not): a known
    method and, where it has one, a test error in [0, 1]."""
    if result["method"] not in METHODS:
        return f"has method {result['method']!r}, not one of {', '.join(METHODS)}"
    err = result.get("test_error")
    if err is not None and (isinstance(err, bool) or not isinstance(err, (int, float))
                            or not 0 <= err <= 1):
        return f"has test_error {err!r}, not a fraction in [0, 1]"
    return None


@dataclass
class Settings:
    """Settings of one run (defaults: the full benchmark).

    Parameters
    ----------
    sizes : tuple of int
        Training sizes n.
    methods : tuple of str
        Subset of :data:`METHODS`.
    landmarks : int
        Landmarks m of both Nyström methods.
    n_test : int
        Held-out test points.
    svc_timeout, timeout : int
        Seconds before an exact SVC run, or any other run, is killed.
    out : str
        Output folder.
    resume, overwrite, report_only, progress : bool
        See :func:`kpm_reproduce.experiments.runner.run_tasks`; ``report_only`` computes nothing.
    command : str, optional
        The command line recorded in the report's provenance header.
    """

    sizes: tuple = (10_000, 100_000, 1_000_000)
    methods: tuple = METHODS
    landmarks: int = 2000
    n_test: int = 100_000
    svc_timeout: int = 600
    timeout: int = 3600
    out: str = "kpm-results"
    resume: bool = False
    report_only: bool = False
    progress: bool = True
    command: str | None = None
    overwrite: bool = False

    def __post_init__(self):
        self.sizes = tuple(int(n) for n in self.sizes)
        self.methods = tuple(self.methods)
        bad = [m for m in self.methods if m not in METHODS]
        if bad:
            raise ValueError(f"unknown methods {bad}; choose from {', '.join(METHODS)}")
        if not self.sizes or min(self.sizes) < 50:
            raise ValueError(f"sizes must be at least 50 training points, got {self.sizes}")
        for name in ("landmarks", "n_test", "svc_timeout", "timeout"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.landmarks > min(self.sizes):
            raise ValueError(f"landmarks ({self.landmarks}) must not exceed the smallest size "
                             f"({min(self.sizes)})")

    def config(self):
        """What makes results comparable (a resume with other values is refused)."""
        return {"protocol": "scale/1", "landmarks": self.landmarks, "n_test": self.n_test,
                "svc_timeout": self.svc_timeout, "seeds": [SEED_TRAIN, SEED_TEST]}


def _vmhwm_bytes():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _loadavg():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return ""


def _fit(method, X, y, gamma, sigma, m):
    """The fitted model of one method and what it chose."""
    if method == "kpm":
        from kpm import NystroemKPM

        est = NystroemKPM(n_landmarks=m, sigma=sigma, max_components=64, cv=5, n_jobs=2,
                          random_state=0).fit(X, y)
        return est, {"D": int(est.n_components_), "timings": est.timings_}
    from sklearn.model_selection import GridSearchCV

    if method == "nys_linsvc":
        from sklearn.kernel_approximation import Nystroem
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import LinearSVC

        pipe = make_pipeline(Nystroem(gamma=gamma, n_components=m, random_state=0), LinearSVC())
        gs = GridSearchCV(pipe, {"linearsvc__C": [0.01, 0.1, 1, 10]}, cv=3).fit(X, y)
        return gs, {"C": gs.best_params_["linearsvc__C"]}
    from sklearn.svm import SVC

    gs = GridSearchCV(SVC(gamma=gamma, cache_size=1000), {"C": [0.1, 1, 10]}, cv=3).fit(X, y)
    return gs, {"C": gs.best_params_["C"],
                "n_support": int(gs.best_estimator_.n_support_.sum())}


def run_one(method, n, landmarks, n_test):
    """Fit and evaluate one method in this process; a JSON-ready dict."""
    import resource

    from kpm.datasets import make_twonorm
    from kpm.kernels import median_sigma

    t0 = time.perf_counter()
    X, y = make_twonorm(n, random_state=SEED_TRAIN)
    Xt, yt = make_twonorm(n_test, random_state=SEED_TEST)
    sigma = median_sigma(X, max_samples=2000, random_state=0)
    out = {"method": method, "n": n, "m": landmarks, "sigma": float(sigma),
           "load_start": _loadavg(), "data_s": time.perf_counter() - t0}
    if method == "nys_linsvc" and n * landmarks * 8 > 8 * 2**30:
        out["note"] = (f"not run: the {n} x {landmarks} float64 Nystroem feature matrix needs "
                       f"{n * landmarks * 8 / 2**30:.1f} GiB (above 8 GiB)")
        out["wall_s"] = time.perf_counter() - t0
        return out
    t = time.perf_counter()
    model, chosen = _fit(method, X, y, 1.0 / (2 * sigma**2), sigma, landmarks)
    out["fit_s"] = time.perf_counter() - t
    out.update(chosen)
    t = time.perf_counter()
    out["test_error"] = float(np.mean(model.predict(Xt) != yt))
    out["predict_s"] = time.perf_counter() - t
    out["wall_s"] = time.perf_counter() - t0
    out["peak_rss_bytes"] = _vmhwm_bytes()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu_s"] = ru.ru_utime + ru.ru_stime  # all threads of this process
    out["load_end"] = _loadavg()
    return out


def scale_task(method, n, landmarks, n_test, timeout):
    """One (method, n) in a fresh process (its own peak memory), killed after ``timeout`` s."""
    cmd = [sys.executable, "-m", "kpm_reproduce.experiments.scale", method, str(n), str(landmarks),
           str(n_test)]
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "wall_s": time.perf_counter() - t,
                "note": f"killed after {timeout} s", "timed_out": True, "load_end": _loadavg()}
    if p.returncode != 0:
        tail = p.stderr.strip().splitlines()[-1:] or ["(no message)"]
        raise RuntimeError(f"{method} at n = {n} failed: {tail[0]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def _tasks(st, n, done):
    tasks = []
    for method in st.methods:
        timed_out = any(r.get("method") == "svc" and r.get("timed_out") and r["n"] < n
                        for r in done.values())
        if method == "svc" and timed_out:
            continue  # a smaller n already exceeded the limit
        limit = st.svc_timeout if method == "svc" else st.timeout
        tasks.append(Task(f"{method}/{n}", scale_task,
                          {"method": method, "n": n, "landmarks": st.landmarks,
                           "n_test": st.n_test, "timeout": limit}, SCHEMA, check_scale))
    return tasks


def run_scale(st: Settings):
    """Run (or resume, or only report) the benchmark; returns the summary dict."""
    out = Path(st.out)
    runs = out / "runs" / "scale.json"
    if st.report_only:
        if not runs.exists():
            raise FileNotFoundError(f"{runs}: no such file; run `kpm reproduce scale` without "
                                    "--report-only first")
        data = load_results(runs)
        tasks = [Task(k, dict, {}, SCHEMA, check_scale) for k in data["results"]]
        data, done = require_results(runs, tasks)
        st = Settings(**{**asdict(st), "landmarks": data["config"].get("landmarks", st.landmarks),
                         "n_test": data["config"].get("n_test", st.n_test)})
    else:
        done = {}
        for i, n in enumerate(sorted(st.sizes)):
            done.update(run_tasks(_tasks(st, n, done), runs, resume=st.resume or i > 0,
                                  overwrite=st.overwrite and i == 0, config=st.config(), progress=st.progress,
                                  description=f"n = {n:,}", threads_per_task=None))
    return write_report(st, done)


def _row(r):
    name = NAMES[r["method"]]
    if "test_error" not in r:
        return f"| {name} | {r['n']:,} | {r.get('note', 'not run')} | | | | | | |"
    chosen = f"D = {r['D']}" if "D" in r else f"C = {r.get('C')}"
    rss = "n/a" if r.get("peak_rss_bytes") is None else f"{r['peak_rss_bytes'] / 2**30:.2f}"
    return (f"| {name} | {r['n']:,} | {r['wall_s']:.1f} | {r['fit_s']:.1f} | "
            f"{r.get('cpu_s', float('nan')):.0f} | {rss} | {100 * r['test_error']:.3f} | "
            f"{chosen} | {r.get('load_start', '')} / {r.get('load_end', '')} |")


def write_report(st, results):
    """Write ``scale.json``, ``scale.md`` and ``scale_time_vs_n.png`` from the results."""
    from kpm.datasets import bayes_error

    out = Path(st.out)
    rows = sorted(results.values(), key=lambda r: (r["n"], METHODS.index(r["method"])))
    summary = {"settings": {**st.config(), "sizes": list(st.sizes), "methods": list(st.methods)},
               "bayes_error": bayes_error("twonorm"),
               "results": {f"{r['method']}_{r['n']}": r for r in rows}}
    atomic_write_json(out / "scale.json", summary)
    lines = [f"# Scale benchmark: twonorm, m = {st.landmarks} landmarks, {st.n_test:,} test points",
             "", *header(st.command),
             f"Bayes error of twonorm (`kpm.datasets.bayes_error`): "
             f"{100 * summary['bayes_error']:.3f} %. Peak memory = VmHWM of the run's own "
             "process (data generation included); CPU = user + system seconds of that process, "
             "all threads; load average at the start / end of each run.", "",
             "| method | n | wall (s) | fit (s) | CPU (s) | peak RSS (GiB) | test error (%) "
             "| chosen | load avg |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [_row(r) for r in rows]
    kp = [r for r in rows if r["method"] == "kpm" and "timings" in r]
    if kp:
        lines += ["", "## NystroemKPM phase timings (s)", "",
                  "| n | landmarks+eigen | features | CV | final fit | D |",
                  "|---|---|---|---|---|---|"]
        for r in kp:
            t = r["timings"]
            lines.append(f"| {r['n']:,} | {t['landmarks_eigen']:.1f} | {t['features']:.1f} | "
                         f"{t['cv']:.1f} | {t['final_fit']:.1f} | {r['D']} |")
    lines += ["", "![wall time vs n](scale_time_vs_n.png)", ""]
    notes = out / "notes" / "scale.md"  # hand-written discussion kept beside the results
    if notes.exists():
        lines += [notes.read_text()]
    atomic_write_text(out / "scale.md", "\n".join(lines))
    _plot(st, rows, out / "scale_time_vs_n.png")
    return summary


def _plot(st, rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.2))
    for i, meth in enumerate(METHODS):
        pts = [r for r in rows if r["method"] == meth and "test_error" in r]
        if pts:
            ax.loglog([r["n"] for r in pts], [r["wall_s"] for r in pts], "os^"[i] + "-",
                      color=f"C{i}", label=NAMES[meth] + ", wall")
            ax.loglog([r["n"] for r in pts], [r["cpu_s"] for r in pts], "os^"[i] + "--",
                      color=f"C{i}", mfc="none", label=NAMES[meth] + ", CPU")
    ax.set_xlabel("training points n")
    ax.set_ylabel("seconds")
    ax.set_title(f"twonorm, m = {st.landmarks} landmarks")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":  # one run in this process (see scale_task)
    method, n, m, n_test = sys.argv[1], *map(int, sys.argv[2:5])
    print(json.dumps(run_one(method, n, m, n_test), default=float))
