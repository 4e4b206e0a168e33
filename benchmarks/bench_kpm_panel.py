"""Benchmark: the default KPM against the SVC grid a user runs, on a panel of data sets.

The two competitors, at the same Gaussian width ``s`` and on the same standardised features
(a ``StandardScaler`` fitted on the training part):

* ``KernelProjectionMachine(sigma=s, random_state=0)``: the estimator's defaults, model
  selection included;
* ``GridSearchCV(SVC(kernel='rbf', gamma=1 / (2 s^2)), {'C': numpy.logspace(-2, 3, 11)},
  cv=5)``: what a scikit-learn user runs (:data:`C_GRID`).

Each method's time is the wall time (and the CPU time) of its ``fit``: the whole model
selection plus the final fit. Recorded per split: the test error, the D and C the KPM chose
(``n_components_``, ``C_``) and the C the grid chose.

The width ``s`` (``--widths``):

* ``median``: :func:`kpm.median_sigma` of the standardised training set (every set);
* ``paper``: the width Blanchard, Massart, Vert & Zwald (2004) used for Rätsch's banana and
  german (:data:`kpm_reproduce.experiments.kpm_tables.SIGMAS`);
* ``likelihood``: the width chosen by the relevant-dimension likelihood of Braun, Buhmann &
  Müller (2008) for Rätsch's sets (:data:`kpm_reproduce.experiments.kpm13.SIGMAS`).

The tuned widths were chosen on Rätsch's files as distributed; they are carried to the
standardised features by the ratio of the median heuristics of the standardised and the raw
training set (a factor within 1 % of 1 on banana, german and image, whose files are already
standardised; 0.91 on splice, whose files hold the raw codes).

The panel (``--sets``; :data:`PANEL`):

* ``digits``: scikit-learn's digits, 10 classes, one fixed stratified split (1,257 training
  images, 540 test; ``train_test_split(test_size=0.3, stratify=y, random_state=0)``);
* ``classification``: ``make_classification(n, 20, n_informative=10, random_state=0)`` at
  each ``n`` of ``--sizes`` (default :data:`SIZES`), one stratified 70/30 split; the fit
  times give each method's cost growth exponent in n (a least-squares line through
  log wall time against log n_train);
* Rätsch's ``image``, ``splice``, ``banana`` and ``german`` (:func:`kpm_reproduce.datasets.load_raetsch`,
  the realizations of :data:`RAETSCH_REALIZATIONS` or ``--realizations``), at every width;
* ``breast_cancer``, ``wine`` (scikit-learn) and ``digits_3_8`` (the digits 3 and 8 of
  scikit-learn's digits, the pair most often confused), ``--splits`` stratified 70/30
  splits seeded 0, 1, ... (default :data:`N_SPLITS`);
* small wide sets: ``wide_200x60`` = ``make_classification(200, 60, n_informative=8,
  flip_y=0.05, random_state=0)`` and ``wide_150x120`` = ``make_classification(150, 120,
  n_informative=8, flip_y=0.05, random_state=0)``, the same splits.

Every fit runs twice, in a worker process started once and warmed up (a small fit of each
method, so that numba's compilation or cache loading is not timed): first at the **default
threads** -- what a user gets: the worker starts without ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` (removed from its environment) and no thread
limit is set around the fit, so that BLAS runs on its default threads and the library limits
its own small work (:mod:`kpm.blas_threads`) -- then at **one thread**
(``threadpoolctl.threadpool_limits(1)`` around the fit). The report gives both ratios per row,
the default threads' first. The worker is restarted after a fit that exceeded
``--time-limit`` (recorded as ``timeout``) or died. ``--background-load N`` runs N processes
spinning on the cores (pure-Python busy loops, :mod:`kpm_reproduce.experiments.background_load`)
for the whole run, stopped at its end (on an error or Ctrl-C too): the times of a busy machine.
``--kpm-max-n N`` skips the KPM on training sets larger than N (recorded as ``skipped``:
its dense eigendecompositions of every fold take long at tens of thousands of samples). The
1-minute load average is recorded before and after each fit: on a shared machine both
methods' times are inflated by other jobs, so the ratio of one split's two fits, run one
after the other, is what to compare.

Output: ``<out>/kpm_panel.json`` (every fit, the rows and the summary; written after each
fit, ``--resume`` continues an interrupted run) and ``<out>/kpm_panel.md``. The committed
report is written only with ``--out docs/results``.

Usage::

    python benchmarks/bench_kpm_panel.py [--sets digits wine ...] [--sizes 2000 5000]
        [--widths median likelihood] [--realizations 1 2] [--splits 30] [--kpm-max-n 10000]
        [--time-limit 1800] [--repeats 3] [--background-load 2] [--quick] [--resume]
        [--out docs/results]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

TITLE = "The default KPM against the SVC grid a user runs: the panel"
RESULTS_NAME = "kpm_panel"
#: The SVC's C grid: what ``GridSearchCV`` users commonly search.
C_GRID = np.logspace(-2, 3, 11)
#: ``make_classification`` sizes (before the 70/30 split).
SIZES = (2000, 5000, 10000, 20000)
#: ``--repeats``: a fit that takes longer than this (seconds) is not repeated.
REPEAT_BELOW_S = 60.0
#: The sizes of ``--quick``.
QUICK_SIZES = (300, 600)
TEST_SIZE = 0.3
#: Rätsch's sets and the realizations run by default.
RAETSCH_REALIZATIONS = {"image": (1, 2), "splice": (1, 2, 3), "banana": (1, 2, 3), "german": (1, 2, 3)}
#: Sets with random splits: their ``make_classification`` parameters (None: scikit-learn's data).
SPLIT_SETS = {
    "breast_cancer": None,
    "wine": None,
    "digits_3_8": None,
    "wide_200x60": dict(n_samples=200, n_features=60, n_informative=8, flip_y=0.05),
    "wide_150x120": dict(n_samples=150, n_features=120, n_informative=8, flip_y=0.05),
}
#: Random splits of each of :data:`SPLIT_SETS` by default. Their test sets are small (45 to
#: 171 points), so that over 5 splits the standard error of a row's mean gap was 1.5 to 1.8
#: points on the wide sets, more than the 1-point bar the rows are read against; over 30
#: splits it is about 0.5 (the splits cost under 1 s a fit).
N_SPLITS = 30
PANEL = ("digits", "classification", *RAETSCH_REALIZATIONS, *SPLIT_SETS)
WIDTHS = ("median", "paper", "likelihood")
METHODS = ("kpm", "svc")
#: The thread settings of every fit, in the order they run: the user's default threads (no
#: environment variable, no limit) and one thread (``threadpool_limits(1)`` around the fit).
DEFAULT_THREADS, ONE_THREAD = "default", "1"
THREADS = (DEFAULT_THREADS, ONE_THREAD)
#: The environment variables the worker starts without (the default threads are the libraries').
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: The targets the panel measures against (ratio = KPM time / SVC time; gap = KPM error -
#: SVC error in points).
TARGET_WORST_RATIO = 1.0
TARGET_MEDIAN_RATIO = 0.5
TARGET_WORST_GAP = 1.0
TARGET_MEAN_GAP = 0.3


# ----------------------------------------------------------------------------- data
def tuned_sigmas():
    """``{width: {set: sigma}}`` of the tuned widths (on Rätsch's files as distributed)."""
    from kpm_reproduce.experiments import kpm13, kpm_tables

    return {"paper": dict(kpm_tables.SIGMAS), "likelihood": dict(kpm13.SIGMAS)}


def widths_of(name, widths):
    """The widths of ``widths`` that apply to set ``name`` (the tuned ones to Rätsch's only)."""
    if name not in RAETSCH_REALIZATIONS:
        return ["median"] if "median" in widths else []
    tuned = tuned_sigmas()
    return [w for w in widths if w == "median" or name in tuned[w]]


def load_raw(name, split, *, n=None, data_dir=None):
    """``(X_train, X_test, y_train, y_test)`` of one split of a panel set, not yet scaled.

    ``split``: the realization (Rätsch's sets), the seed of the 70/30 split (the others;
    ``digits`` and ``classification`` use 0). ``n``: the size of ``classification``.
    """
    from sklearn import datasets as skd
    from sklearn.model_selection import train_test_split

    if name in RAETSCH_REALIZATIONS:
        from kpm_reproduce.datasets import load_raetsch

        s = load_raetsch(name, split, data_dir=data_dir)
        return s.X_train, s.X_test, s.y_train, s.y_test
    if name == "classification":
        if n is None:
            raise ValueError("the classification set needs its size n")
        X, y = skd.make_classification(n, 20, n_informative=10, random_state=0)
    elif name == "digits":
        X, y = skd.load_digits(return_X_y=True)
    elif name == "digits_3_8":
        X, y = skd.load_digits(return_X_y=True)
        keep = np.isin(y, (3, 8))
        X, y = X[keep], y[keep]
    elif name == "breast_cancer":
        X, y = skd.load_breast_cancer(return_X_y=True)
    elif name == "wine":
        X, y = skd.load_wine(return_X_y=True)
    elif name in SPLIT_SETS:
        X, y = skd.make_classification(**SPLIT_SETS[name], random_state=0)
    else:
        raise ValueError(f"unknown set {name!r}; expected one of {', '.join(PANEL)}")
    Xtr, Xte, ytr, yte = train_test_split(np.asarray(X, dtype=float), y, test_size=TEST_SIZE,
                                          stratify=y, random_state=split)
    return Xtr, Xte, ytr, yte


def prepare(name, split, width, *, n=None, data_dir=None):
    """One split, standardised on its training part, and its width.

    Returns ``(X_train, X_test, y_train, y_test, sigma)``.
    """
    from sklearn.preprocessing import StandardScaler

    from kpm import median_sigma

    if width not in WIDTHS:
        raise ValueError(f"width must be one of {WIDTHS}, got {width!r}")
    Xtr, Xte, ytr, yte = load_raw(name, split, n=n, data_dir=data_dir)
    scaler = StandardScaler().fit(Xtr)
    Ztr, Zte = scaler.transform(Xtr), scaler.transform(Xte)
    sigma = median_sigma(Ztr)
    if width != "median":
        table = tuned_sigmas()[width]
        if name not in table:
            raise ValueError(f"no {width} width for {name!r}: it has one for {', '.join(table)}")
        sigma = table[name] * sigma / median_sigma(Xtr)
    return Ztr, Zte, ytr, yte, float(sigma)


def make_estimator(method, sigma):
    """The default KPM or the user's SVC grid at width ``sigma``."""
    if method == "kpm":
        from kpm import KernelProjectionMachine

        return KernelProjectionMachine(sigma=sigma, random_state=0)
    if method == "svc":
        from sklearn.model_selection import GridSearchCV
        from sklearn.svm import SVC

        return GridSearchCV(SVC(kernel="rbf", gamma=1.0 / (2.0 * sigma**2)), {"C": C_GRID}, cv=5)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def _shorten(text, limit=300):
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _timed_fit(method, sigma, Xtr, ytr):
    """A fresh estimator fitted: ``(estimator, wall s, CPU s, warnings caught)``."""
    est = make_estimator(method, sigma)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w0, c0 = time.perf_counter(), time.process_time()
        est.fit(Xtr, ytr)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return est, wall, cpu, caught


def _blas_threads():
    """The largest thread count of the loaded BLAS libraries."""
    from threadpoolctl import threadpool_info

    return max((i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"), default=None)


def fit_one(name, split, width, method, n=None, data_dir=None, repeats=1, threads=DEFAULT_THREADS):
    """Prepare one split, fit one method on it (timed) and return its record.

    ``threads``: :data:`DEFAULT_THREADS` (no limit: the process's threads) or
    :data:`ONE_THREAD` (``threadpool_limits(1)`` around the fits); the record's
    ``blas_threads`` is the BLAS threads the fit started with.

    With ``repeats`` > 1 the fit is run that many times (each a fresh estimator; the fits are
    deterministic) unless one takes longer than :data:`REPEAT_BELOW_S`, and the shortest
    wall and CPU times are kept: the run least disturbed by the machine's other work. The
    warnings and the model recorded are the first run's."""
    import contextlib

    from threadpoolctl import threadpool_limits

    if threads not in THREADS:
        raise ValueError(f"threads must be one of {THREADS}, got {threads!r}")
    Xtr, Xte, ytr, yte, sigma = prepare(name, split, width, n=n, data_dir=data_dir)
    load_before = os.getloadavg()[0]
    with threadpool_limits(limits=1) if threads == ONE_THREAD else contextlib.nullcontext():
        blas = _blas_threads()
        est, wall, cpu, caught = _timed_fit(method, sigma, Xtr, ytr)
        walls, cpus = [wall], [cpu]
        while len(walls) < repeats and max(walls) <= REPEAT_BELOW_S:
            _, wall, cpu, _ = _timed_fit(method, sigma, Xtr, ytr)
            walls.append(wall)
            cpus.append(cpu)
    rec = {"status": "ok", "wall_s": min(walls), "cpu_s": min(cpus), "wall_runs": walls,
           "threads": threads, "blas_threads": blas,
           "test_error": float(np.mean(est.predict(Xte) != yte)),
           "sigma": sigma, "n_train": len(ytr), "n_test": len(yte), "n_features": Xtr.shape[1],
           "n_classes": len(np.unique(ytr)), "load_before": load_before, "load_after": os.getloadavg()[0],
           "warnings": dict(Counter(w.category.__name__ for w in caught)),
           "warning_messages": {w.category.__name__: _shorten(str(w.message)) for w in reversed(caught)}}
    if method == "kpm":
        C = getattr(est, "C_", None)
        rec.update(D=int(est.n_components_), C=None if C is None else float(C))
    else:
        rec["C"] = float(est.best_params_["C"])
    return rec


# ----------------------------------------------------------------------------- worker
def _warm_up():
    """Fit each method once on small two- and three-class sets (numba compiles or loads its
    cache, the modules import) so that the timed fits pay for none of it."""
    from sklearn.datasets import make_classification

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in (2, 3):
            X, y = make_classification(90, 5, n_informative=3, n_classes=k, random_state=0)
            for method in METHODS:
                make_estimator(method, 2.0).fit(X, y)


def _serve(conn):
    """The worker: warm up, then answer ``fit_one`` jobs until it receives None."""
    from threadpoolctl import threadpool_info

    _warm_up()
    conn.send({"threads": {i["internal_api"]: i["num_threads"] for i in threadpool_info()}})
    while True:
        job = conn.recv()
        if job is None:
            return
        try:
            out = fit_one(**job)
        except Exception as exc:  # recorded in the report, the panel goes on
            out = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:500]}
        conn.send(out)


class FitWorker:
    """A warmed-up worker process running one fit at a time, with a time limit per fit."""

    def __init__(self):
        self._proc = None
        self.threads = None

    def _start(self):
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        saved = {v: os.environ.pop(v) for v in THREAD_VARIABLES if v in os.environ}
        try:  # the spawned interpreter gets the environment of this moment: the default threads
            self._proc.start()
        finally:
            os.environ.update(saved)
        child.close()
        self.threads = self._conn.recv()["threads"]

    def _stop(self):
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
            self._conn.close()
        self._proc = None

    def run(self, job, time_limit=None):
        """``fit_one(**job)`` in the worker; a ``timeout`` record after ``time_limit`` s."""
        if self._proc is None or not self._proc.is_alive():
            self._stop()
            self._start()
        self._conn.send(job)
        if not self._conn.poll(time_limit):
            self._stop()
            return {"status": "timeout", "wall_s": float(time_limit)}
        try:
            return self._conn.recv()
        except EOFError:
            code = self._proc.exitcode
            self._stop()
            return {"status": "error", "error": f"the worker process died (exit code {code})"}

    def close(self):
        if self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(None)
                self._proc.join(30)
            except OSError:
                pass
        self._stop()


# ----------------------------------------------------------------------------- plan
def plan(sets, sizes, widths, realizations, n_splits):
    """The rows of the panel: ``(set, n, width, splits)``."""
    rows = []
    for name in sets:
        if name not in PANEL:
            raise ValueError(f"unknown set {name!r}; expected some of {', '.join(PANEL)}")
        if name == "classification":
            rows += [(name, int(n), "median", [0]) for n in sizes]
        elif name == "digits":
            rows.append((name, None, "median", [0]))
        elif name in RAETSCH_REALIZATIONS:
            reals = list(realizations or RAETSCH_REALIZATIONS[name])
            rows += [(name, None, w, reals) for w in widths_of(name, widths)]
        else:
            rows.append((name, None, "median", list(range(n_splits))))
    return [r for r in rows if r[2] in widths]


def row_label(name, n):
    return name if n is None else f"{name} n={n}"


def record_key(name, n, width, split, method, threads=DEFAULT_THREADS):
    """The key of one fit's record: ``set/width/split/method``, then ``/1thread`` for the
    fit at one thread."""
    key = f"{row_label(name, n)}/{width}/{split}/{method}"
    return key if threads == DEFAULT_THREADS else f"{key}/{threads}thread"


# ----------------------------------------------------------------------------- summary
def growth_exponent(n_train, seconds):
    """The slope of the least-squares line through (log n_train, log seconds); None with
    fewer than two sizes."""
    if len(n_train) < 2:
        return None
    return float(np.polyfit(np.log(n_train), np.log(seconds), 1)[0])


def summarise_rows(records, rows, threads=DEFAULT_THREADS):
    """One dict per row of the panel from the records of its fits at ``threads``."""
    out = []
    for name, n, width, splits in rows:
        recs = {m: [records.get(record_key(name, n, width, s, m, threads)) for s in splits] for m in METHODS}
        if any(r is None for rs in recs.values() for r in rs):
            continue  # not run (an interrupted run)
        row = {"set": name, "n": n, "label": row_label(name, n), "width": width, "splits": splits}
        ref = next((r for rs in recs.values() for r in rs if r["status"] == "ok"), None)
        if ref is not None:
            row.update(n_train=ref["n_train"], n_features=ref["n_features"], n_classes=ref["n_classes"],
                       sigma=float(np.mean([r["sigma"] for rs in recs.values() for r in rs
                                            if r["status"] == "ok"])))
        for m in METHODS:
            rs = recs[m]
            statuses = sorted({r["status"] for r in rs})
            entry = {"status": statuses[0] if len(statuses) == 1 else "+".join(statuses)}
            if entry["status"] == "ok":
                entry.update(wall_s=float(np.mean([r["wall_s"] for r in rs])),
                             cpu_s=float(np.mean([r["cpu_s"] for r in rs])),
                             test_error=float(np.mean([r["test_error"] for r in rs])),
                             C=[r["C"] for r in rs])
                if m == "kpm":
                    entry["D"] = [r["D"] for r in rs]
            elif "timeout" in statuses:
                entry["wall_s_at_least"] = float(np.mean([r["wall_s"] for r in rs if r["status"] == "timeout"]))
            entry["errors"] = [r["error"] for r in rs if r["status"] == "error"]
            entry["reason"] = next((r["reason"] for r in rs if "reason" in r), None)
            row[m] = entry
        kpm = row["kpm"]
        if kpm["status"] == "ok" and row["svc"]["status"] == "ok":
            row["ratio"] = kpm["wall_s"] / row["svc"]["wall_s"]
            row["cpu_ratio"] = kpm["cpu_s"] / row["svc"]["cpu_s"]
            row["gap"] = 100 * (kpm["test_error"] - row["svc"]["test_error"])
            if len(splits) > 1:  # the standard error of the mean gap over the splits
                per_split = [100 * (a["test_error"] - b["test_error"]) for a, b in zip(recs["kpm"], recs["svc"])]
                row["gap_se"] = float(np.std(per_split, ddof=1) / np.sqrt(len(per_split)))
        elif "wall_s_at_least" in kpm and row["svc"]["status"] == "ok":
            row["ratio_at_least"] = kpm["wall_s_at_least"] / row["svc"]["wall_s"]
        out.append(row)
    return out


def attach_one_thread(rows, one_rows):
    """Each row (at the default threads) with its fits at one thread: ``row['one_thread']``
    holds their ``kpm`` and ``svc`` entries and their ``ratio`` (or ``ratio_at_least``) and
    ``cpu_ratio`` where they ran."""
    one = {(r["label"], r["width"]): r for r in one_rows}
    for row in rows:
        o = one.get((row["label"], row["width"]))
        if o is not None:
            row["one_thread"] = {k: o[k] for k in ("kpm", "svc", "ratio", "ratio_at_least", "cpu_ratio", "gap")
                                 if k in o}
    return rows


def summary(rows):
    """Median and worst ratio, mean and worst gap, growth exponents, the targets."""
    full = [r for r in rows if "ratio" in r]
    s = {"rows": len(rows), "rows_compared": len(full),
         "incomplete": [f"{r['label']} ({r['width']})" for r in rows if "ratio" not in r]}
    if full:
        ratios = np.array([r["ratio"] for r in full])
        gaps = np.array([r["gap"] for r in full])
        worst, worst_gap = full[int(np.argmax(ratios))], full[int(np.argmax(gaps))]
        s.update(median_ratio=float(np.median(ratios)), worst_ratio=float(ratios.max()),
                 median_cpu_ratio=float(np.median([r["cpu_ratio"] for r in full])),
                 worst_ratio_row=f"{worst['label']} ({worst['width']})",
                 rows_ratio_above_1=int(np.sum(ratios > TARGET_WORST_RATIO)),
                 mean_gap=float(gaps.mean()), worst_gap=float(gaps.max()),
                 worst_gap_row=f"{worst_gap['label']} ({worst_gap['width']})",
                 rows_gap_above_1=int(np.sum(gaps > TARGET_WORST_GAP)),
                 gaps_above_1=[f"{r['label']} ({r['width']}) {_gap(r)}" for r in full if r["gap"] > TARGET_WORST_GAP])
        med = [r for r in full if r["width"] == "median"]
        if med:
            s.update(median_width_median_ratio=float(np.median([r["ratio"] for r in med])),
                     median_width_mean_gap=float(np.mean([r["gap"] for r in med])),
                     median_width_rows=len(med))
    cls = [r for r in rows if r["set"] == "classification"]
    growth = {}
    for m in METHODS:
        ok = [r for r in cls if r[m]["status"] == "ok"]
        growth[m] = {"n_train": [r["n_train"] for r in ok],
                     "exponent": growth_exponent([r["n_train"] for r in ok], [r[m]["wall_s"] for r in ok])}
    both = [r for r in cls if "ratio" in r]
    growth["svc_same_sizes"] = {"n_train": [r["n_train"] for r in both], "exponent": growth_exponent(
        [r["n_train"] for r in both], [r["svc"]["wall_s"] for r in both])}
    growth["kpm_same_sizes"] = {"n_train": [r["n_train"] for r in both], "exponent": growth_exponent(
        [r["n_train"] for r in both], [r["kpm"]["wall_s"] for r in both])}
    s["growth"] = growth
    last = max((r for r in cls if r["kpm"]["status"] == "ok"), key=lambda r: r["n_train"], default=None)
    s["kpm_extrapolated"] = [
        {"n_train": r["n_train"], "wall_s": last["kpm"]["wall_s"] * (r["n_train"] / last["n_train"])
         ** growth["kpm"]["exponent"], "svc_wall_s": r["svc"].get("wall_s")}
        for r in cls if r["kpm"]["status"] != "ok" and last is not None and growth["kpm"]["exponent"] is not None
        and r["n_train"] > last["n_train"]]
    return s


# ----------------------------------------------------------------------------- report
def _seconds(entry):
    if entry["status"] == "ok":
        return f"{entry['wall_s']:.2f}"
    if entry["status"] == "skipped":
        return "skipped"
    if "wall_s_at_least" in entry:
        return f"> {entry['wall_s_at_least']:.0f} (timeout)"
    return entry["status"]


def _join(values, fmt):
    return ", ".join(fmt.format(v) if v is not None else "–" for v in values)


#: A row lists its splits' values up to this many; beyond, their median and range.
LIST_UP_TO = 5


def _values(values, fmt):
    """A row's per-split values: listed, or (more than :data:`LIST_UP_TO`) their median
    [min–max], the lower median of an even count (a value some split chose: a grid value of
    C; the per-split table lists them all)."""
    known = sorted(v for v in values if v is not None)
    if len(values) <= LIST_UP_TO or not known:
        return _join(values, fmt)
    lo, mid, hi = (fmt.format(v) for v in (known[0], known[(len(known) - 1) // 2], known[-1]))
    return f"{mid} [{lo}–{hi}]"


def _splits(splits):
    """A row's splits: listed, or (more than :data:`LIST_UP_TO`, consecutive) first–last."""
    if len(splits) <= LIST_UP_TO or list(splits) != list(range(splits[0], splits[0] + len(splits))):
        return _join(splits, "{}")
    return f"{splits[0]}–{splits[-1]}"


def _ratio(row):
    if "ratio" in row:
        return f"{row['ratio']:.2f}"
    if "ratio_at_least" in row:
        return f"> {row['ratio_at_least']:.2f}"
    return "–"


def _gap(row):
    """The mean gap over the splits, ± its standard error where there are several."""
    return f"{row['gap']:+.2f}" + (f" ± {row['gap_se']:.2f}" if "gap_se" in row else "")


def table_lines(rows):
    """The panel's table: per row the times and ratio at the default threads, then at one
    thread (``row['one_thread']``, :func:`attach_one_thread`; – where not run), the CPU ratio
    at the default threads, the errors and the D and C chosen at the default threads."""
    lines = ["| set | n train | features | classes | width | σ | splits | KPM s, default threads | "
             "SVC s, default threads | ratio, default threads | KPM s, 1 thread | SVC s, 1 thread | "
             "ratio, 1 thread | CPU ratio, default threads | "
             "KPM error % | SVC error % | gap ± SE (points) | KPM D | KPM C | SVC C |",
             "|" + "---|" * 20]
    for r in rows:
        k, s = r["kpm"], r["svc"]
        one = r.get("one_thread")
        cells = [r["label"], str(r.get("n_train", "–")), str(r.get("n_features", "–")),
                 str(r.get("n_classes", "–")), r["width"], f"{r['sigma']:.4g}" if "sigma" in r else "–",
                 _splits(r["splits"]), _seconds(k), _seconds(s), _ratio(r),
                 *((_seconds(one["kpm"]), _seconds(one["svc"]), _ratio(one)) if one else ("–",) * 3),
                 f"{r['cpu_ratio']:.2f}" if "cpu_ratio" in r else "–",
                 f"{100 * k['test_error']:.2f}" if k["status"] == "ok" else "–",
                 f"{100 * s['test_error']:.2f}" if s["status"] == "ok" else "–",
                 _gap(r) if "gap" in r else "–",
                 _values(k.get("D", []), "{:g}") or "–", _values(k.get("C", []), "{:.3g}") or "–",
                 _values(s.get("C", []), "{:.3g}") or "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _met(ok):
    return "met" if ok else "**not met**"


def summary_lines(s):
    g = s["growth"]
    lines = []
    if s["rows_compared"]:
        lines += [
            f"- **Time ratio** KPM / SVC (mean wall time per split, model selection and final fit): "
            f"median {s['median_ratio']:.2f} over the {s['rows_compared']} rows both methods ran; "
            f"worst {s['worst_ratio']:.2f} ({s['worst_ratio_row']}); "
            f"{s['rows_ratio_above_1']} of {s['rows_compared']} rows above {TARGET_WORST_RATIO:g}. "
            f"Median ratio of the CPU times (less sensitive to the load): {s['median_cpu_ratio']:.2f}.",
            f"- **Test error gap** KPM − SVC (points, mean over the splits): mean {s['mean_gap']:+.2f} "
            f"over the same rows; worst {s['worst_gap']:+.2f} ({s['worst_gap_row']}); "
            f"{s['rows_gap_above_1']} of {s['rows_compared']} rows more than {TARGET_WORST_GAP:g} point behind"
            + (f" ({'; '.join(s['gaps_above_1'])}; ± the standard error of the mean over the splits, "
               "std / √splits)" if s.get("gaps_above_1") else "") + ".",
        ]
        if "median_width_rows" in s:
            lines.append(f"- At the median width only ({s['median_width_rows']} rows): median ratio "
                         f"{s['median_width_median_ratio']:.2f}, mean gap {s['median_width_mean_gap']:+.2f}.")
    if s["incomplete"]:
        lines.append(f"- Not in these figures (a method skipped, timed out or failed): "
                     f"{', '.join(s['incomplete'])}.")

    def exp(e):
        return "–" if e["exponent"] is None else f"n^{e['exponent']:.2f}"

    lines.append(
        f"- **Cost growth in n** (`make_classification`, least-squares slope of log wall time against "
        f"log n_train): KPM {exp(g['kpm'])} over n_train = {_join(g['kpm']['n_train'], '{}') or '–'}; "
        f"SVC grid {exp(g['svc_same_sizes'])} over the same sizes"
        + (f", {exp(g['svc'])} over n_train = {_join(g['svc']['n_train'], '{}')}"
           if g["svc"]["n_train"] != g["svc_same_sizes"]["n_train"] else "") + ".")
    for e in s.get("kpm_extrapolated", []):
        lines.append(f"- The KPM at n_train = {e['n_train']}, not run: about {e['wall_s']:.0f} s by the KPM's "
                     "exponent from its largest size run (an extrapolation, not a measurement)"
                     + (f", against the SVC grid's measured {e['svc_wall_s']:.0f} s" if e["svc_wall_s"] else "")
                     + ".")
    if s["rows_compared"]:
        ke, se = g["kpm_same_sizes"]["exponent"], g["svc_same_sizes"]["exponent"]
        lines += [
            "", "Against the bar this panel is for (the default KPM's model selection at most "
            f"{TARGET_WORST_RATIO:g}× the SVC grid's wall time on every set and at most "
            f"{TARGET_MEDIAN_RATIO:g}× on the median; its test error within {TARGET_WORST_GAP:g} point "
            f"of the SVC's on every set and within {TARGET_MEAN_GAP:g} point on average; its cost "
            "growing no faster in n):", "",
            f"- ratio ≤ {TARGET_WORST_RATIO:g} on every row: {_met(s['worst_ratio'] <= TARGET_WORST_RATIO)} "
            f"(worst {s['worst_ratio']:.2f})",
            f"- median ratio ≤ {TARGET_MEDIAN_RATIO:g}: {_met(s['median_ratio'] <= TARGET_MEDIAN_RATIO)} "
            f"({s['median_ratio']:.2f})",
            f"- gap ≤ {TARGET_WORST_GAP:g} point on every row: {_met(s['worst_gap'] <= TARGET_WORST_GAP)} "
            f"(worst {s['worst_gap']:+.2f})",
            f"- mean gap ≤ {TARGET_MEAN_GAP:g} point: {_met(s['mean_gap'] <= TARGET_MEAN_GAP)} "
            f"({s['mean_gap']:+.2f})",
            "- growth exponent of the KPM ≤ the SVC grid's: "
            + ("– (fewer than two sizes)" if ke is None or se is None else f"{_met(ke <= se)} ({ke:.2f} against {se:.2f})"),
        ]
        if s["incomplete"]:
            lines.append("- (the rows not in these figures count against the bar until they run)")
    return lines


def split_lines(records, rows):
    lines = ["| set | width | split | σ | n train | KPM s, default threads | KPM CPU s, default threads | "
             "SVC s, default threads | SVC CPU s, default threads | ratio, default threads | "
             "KPM s, 1 thread | SVC s, 1 thread | ratio, 1 thread | "
             "KPM error % | SVC error % | KPM D | KPM C | SVC C | load before / after (SVC · KPM) |",
             "|" + "---|" * 19]
    for name, n, width, splits in rows:
        for sp in splits:
            k = records.get(record_key(name, n, width, sp, "kpm"))
            s = records.get(record_key(name, n, width, sp, "svc"))
            if k is None or s is None:
                continue
            k1 = records.get(record_key(name, n, width, sp, "kpm", ONE_THREAD))
            s1 = records.get(record_key(name, n, width, sp, "svc", ONE_THREAD))
            one = ["–"] * 3
            if k1 is not None and s1 is not None:
                one = [_seconds(k1), _seconds(s1), f"{k1['wall_s'] / s1['wall_s']:.2f}"
                       if k1["status"] == s1["status"] == "ok" else "–"]
            ok = [r for r in (s, k) if r["status"] == "ok"]  # in the order they ran
            ref = ok[0] if ok else {}

            def t(r, key):
                return f"{r[key]:.2f}" if r["status"] == "ok" else _seconds({**r, **(
                    {"wall_s_at_least": r["wall_s"]} if r["status"] == "timeout" else {})})

            ratio = f"{k['wall_s'] / s['wall_s']:.2f}" if len(ok) == 2 else "–"
            load = " · ".join(f"{r['load_before']:.1f} / {r['load_after']:.1f}" for r in ok)
            lines.append("| " + " | ".join([
                row_label(name, n), width, str(sp), f"{ref['sigma']:.4g}" if ref else "–",
                str(ref.get("n_train", "–")), t(k, "wall_s"), t(k, "cpu_s") if k["status"] == "ok" else "–",
                t(s, "wall_s"), t(s, "cpu_s") if s["status"] == "ok" else "–", ratio, *one,
                f"{100 * k['test_error']:.2f}" if k["status"] == "ok" else "–",
                f"{100 * s['test_error']:.2f}" if s["status"] == "ok" else "–",
                str(k["D"]) if k["status"] == "ok" else "–",
                f"{k['C']:.3g}" if k["status"] == "ok" and k["C"] is not None else "–",
                f"{s['C']:.3g}" if s["status"] == "ok" else "–", load or "–"]) + " |")
    return lines


def report_lines(result):
    from kpm_reproduce.experiments.provenance import header

    cfg, s, rows = result["config"], result["summary"], result["rows"]
    loads = [r[k] for r in result["records"].values() if r["status"] == "ok"
             for k in ("load_before", "load_after")]
    busy = " on a busy machine" if result.get("background_load") else ""  # each report its own title
    lines = [f"# {TITLE}{busy}", "", *header(result["command"], code=result.get("code"))]
    lines += [
        "The default `KernelProjectionMachine(sigma=s, random_state=0)` against "
        "`GridSearchCV(SVC(kernel='rbf', gamma=1/(2 s^2)), {'C': np.logspace(-2, 3, 11)}, cv=5)` at "
        "the same Gaussian width s, on standardised features (a `StandardScaler` fitted on the "
        "training part). Times: the wall time of each method's `fit`, its whole model selection "
        "plus the final fit, in a warmed-up worker process, each fit twice: first at the default "
        "threads (the worker started without OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and "
        "MKL_NUM_THREADS, no thread limit around the fit: what a user gets), then at one thread "
        "(`threadpool_limits(1)` around the fit); per row the mean over the splits, and ratio = "
        "KPM / SVC at each: the default threads' ratio first, one thread's second. Test errors, D "
        "and C: the fits at the default threads. The D and C chosen: "
        f"each split's, or past {LIST_UP_TO} splits their median [min–max] (the per-split table has them all). Widths: "
        "`median` = `kpm.median_sigma` of the standardised training set; `paper` = the widths of "
        "Blanchard et al. (2004); `likelihood` = the widths the relevant-dimension likelihood of "
        "Braun et al. (2008) chose (both carried to the standardised features by the ratio of "
        "the median heuristics). The sets and splits are described in "
        "`benchmarks/bench_kpm_panel.py`; every fit is in `kpm_panel.json` beside this file.",
        "",
        f"- Threads: the default threads' column ran on the worker's default BLAS threads "
        f"{result['threads']}, the one-thread column on 1. Background load: "
        + (f"{result['background_load']} process{'es' if result['background_load'] > 1 else ''} spinning on the cores (`--background-load`) for the whole run"
           if result.get("background_load") else "none (`--background-load 0`)")
        + f". Run wall time {result['wall_s'] / 60:.1f} min"
        + (f" (summed over the resumed runs; the last kept {result['resumed']} finished fits)"
           if result["resumed"] else "") + ".",
    ]
    if loads:
        lines.append(f"- Load (1-minute average, before and after each fit): min {min(loads):.1f}, median "
                     f"{np.median(loads):.1f}, max {max(loads):.1f} on {os.cpu_count()} cores; other "
                     "jobs on the machine inflate both methods' times, so the ratio of the two fits "
                     "of one split, run one after the other, is what to compare.")
    if cfg["kpm_max_n"] is not None:
        lines.append(f"- The KPM was skipped on training sets larger than {cfg['kpm_max_n']} "
                     "(`--kpm-max-n`).")
    if cfg["time_limit"] is not None:
        lines.append(f"- Time limit per fit: {cfg['time_limit']:g} s (`--time-limit`).")
    if cfg.get("repeats", 1) > 1:
        lines.append(f"- Each fit was run {cfg['repeats']} times, one after the other, and its shortest wall "
                     f"and CPU times kept (`--repeats`; a fit longer than {REPEAT_BELOW_S:g} s ran once): "
                     "the run least disturbed by the machine's other work.")
    lines += ["", "## Summary", "", "### At the default threads", "", *summary_lines(s)]
    if result.get("summary_one_thread"):
        lines += ["", "### At one thread", "", *summary_lines(result["summary_one_thread"])]
    lines += ["", "## The panel", "", *table_lines(rows)]
    errors = [(r["label"], r["width"], m, e) for r in rows for m in METHODS for e in r[m]["errors"]]
    if errors:
        lines += ["", "Failed fits:", ""] + [f"- {lab} ({w}), {m}: `{e}`" for lab, w, m, e in errors]
    warned, where, message = Counter(), {}, {}
    for key, rec in result["records"].items():
        for w, c in rec.get("warnings", {}).items():
            warned[w] += c
            where.setdefault(w, []).append(key)
            message.setdefault(w, rec.get("warning_messages", {}).get(w))
    if warned:
        lines += ["", "Warnings raised in the timed fits:", ""]
        lines += [f"- {w}, {c} times, in {', '.join(where[w])}" + (f": “{message[w]}”" if message[w] else "")
                  for w, c in sorted(warned.items())]
    lines += ["", "## Per split", "", *split_lines(result["records"], [tuple(x) for x in result["plan"]])]
    return lines


# ----------------------------------------------------------------------------- main
def main(argv=None):
    from kpm_reproduce.experiments.provenance import code_version, command_line, machine, write_report

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(PANEL), choices=PANEL, metavar="SET",
                    help=f"panel sets (default: all of {', '.join(PANEL)})")
    ap.add_argument("--sizes", nargs="+", type=int, default=None,
                    help=f"make_classification sizes n (default {' '.join(map(str, SIZES))})")
    ap.add_argument("--widths", nargs="+", default=list(WIDTHS), choices=WIDTHS)
    ap.add_argument("--realizations", nargs="+", type=int, default=None,
                    help="Rätsch realizations (default: per set, "
                         + "; ".join(f"{k} {'-'.join(map(str, (v[0], v[-1])))}" for k, v in
                                     RAETSCH_REALIZATIONS.items()) + ")")
    ap.add_argument("--splits", type=int, default=None,
                    help="random 70/30 splits of breast_cancer, wine, digits_3_8 and the wide sets "
                         f"(default {N_SPLITS})")
    ap.add_argument("--kpm-max-n", type=int, default=None,
                    help="skip the KPM on training sets larger than this (reported as skipped)")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per fit; a fit that takes longer is stopped and reported as a timeout")
    ap.add_argument("--repeats", type=int, default=1,
                    help="run each fit this many times and keep its shortest time (the run least "
                         f"disturbed by other work on the machine); fits longer than {REPEAT_BELOW_S:g} s "
                         "run once (default 1)")
    ap.add_argument("--background-load", type=int, default=0, metavar="N",
                    help="run N processes spinning on the cores (pure-Python busy loops) during the "
                         "whole run, stopped at its end (default 0)")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke test: sizes {' '.join(map(str, QUICK_SIZES))} (unless --sizes), one "
                         "split and realization 1 (unless --splits / --realizations are given)")
    ap.add_argument("--data-dir", default=None, help="the folder holding raetsch/ (default: KPM_DATA, "
                                                      "then ../shared/data)")
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (the committed results: docs/results)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the finished fits in <out>/kpm_panel.json and run the others")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes = args.sizes or list(QUICK_SIZES)
        args.realizations = args.realizations or [1]
    if args.splits is None:
        args.splits = 1 if args.quick else N_SPLITS
    sizes = args.sizes or list(SIZES)
    for name, v, lo in (("--splits", args.splits, 1), ("--kpm-max-n", args.kpm_max_n, 1),
                        ("--time-limit", args.time_limit, 1e-9), ("--background-load", args.background_load, 0)):
        if v is not None and v < lo:
            ap.error(f"{name} must be at least {lo:g}, got {v:g}")
    if any(n < 10 for n in sizes):
        ap.error(f"--sizes must be at least 10, got {sizes}")
    if args.realizations is not None and any(r < 1 for r in args.realizations):
        ap.error(f"--realizations are 1-based, got {args.realizations}")

    rows = plan(args.sets, sizes, args.widths, args.realizations, args.splits)
    if not rows:
        ap.error("nothing to run: the sets chosen have none of the widths chosen")
    args.out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = args.out / f"{RESULTS_NAME}.json", args.out / f"{RESULTS_NAME}.md"
    earlier = json.loads(json_path.read_text()) if args.resume and json_path.exists() else {}
    if earlier.get("config", {}).get("threads") != list(THREADS) or earlier["config"].get(
            "background_load", 0) != args.background_load:
        earlier = {}  # a run of other thread settings or load: its times do not belong here
    records = {k: r for k, r in earlier.get("records", {}).items() if r["status"] == "ok"}
    if earlier:
        print(f"resuming: {len(records)} finished fits from {json_path}", flush=True)
    resumed = len(records)
    earlier_s = earlier.get("wall_s", 0.0) if resumed else 0.0
    config = {"sets": args.sets, "sizes": sizes, "widths": args.widths, "realizations": args.realizations,
              "splits": args.splits, "kpm_max_n": args.kpm_max_n, "time_limit": args.time_limit,
              "quick": args.quick, "C_grid": C_GRID.tolist(), "repeats": args.repeats, "threads": list(THREADS),
              "background_load": args.background_load}
    command = command_line(None if argv is None else ["bench_kpm_panel.py", *argv])
    result = {"title": TITLE, "command": command, "code": code_version(), "machine": machine(),
              "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "config": config, "plan": rows, "threads": earlier.get("threads") if resumed else None,
              "resumed": resumed, "records": records, "background_load": args.background_load}

    from kpm_reproduce.experiments.background_load import BackgroundLoad

    worker = FitWorker()
    load = BackgroundLoad(args.background_load)
    t0 = time.perf_counter()
    try:
        load.start()
        result["background_pids"] = load.pids
        for name, n, width, splits in rows:
            for sp in splits:
                n_train = None
                for threads, method in [(t, m) for t in THREADS for m in ("svc", "kpm")]:
                    key = record_key(name, n, width, sp, method, threads)
                    if key in records:
                        n_train = records[key]["n_train"]
                        continue
                    if method == "kpm" and args.kpm_max_n is not None:
                        if n_train is None:
                            n_train = len(prepare(name, sp, width, n=n, data_dir=args.data_dir)[2])
                        if n_train > args.kpm_max_n:
                            records[key] = {"status": "skipped", "n_train": n_train,
                                            "reason": f"n_train {n_train} > --kpm-max-n {args.kpm_max_n}"}
                            print(f"{key}: skipped (n_train {n_train})", flush=True)
                            continue
                    job = {"name": name, "split": sp, "width": width, "method": method, "n": n,
                           "data_dir": args.data_dir, "repeats": args.repeats, "threads": threads}
                    rec = worker.run(job, args.time_limit)
                    result["threads"] = result["threads"] or worker.threads
                    records[key] = rec
                    n_train = rec.get("n_train", n_train)
                    if rec["status"] == "ok":
                        extra = f" D={rec['D']}" if method == "kpm" else ""
                        print(f"{key}: {rec['wall_s']:.2f} s on {rec['blas_threads']} BLAS threads, error "
                              f"{100 * rec['test_error']:.2f} %{extra} C={rec['C']} (load {rec['load_before']:.1f})",
                              flush=True)
                    else:
                        print(f"{key}: {rec['status']} {rec.get('error', '')}", flush=True)
                    result["wall_s"] = earlier_s + time.perf_counter() - t0
                    write_report(json_path, result)
    finally:
        worker.close()
        load.stop()
    result["wall_s"] = earlier_s + time.perf_counter() - t0
    one_rows = summarise_rows(records, rows, ONE_THREAD)
    result["rows"] = attach_one_thread(summarise_rows(records, rows), one_rows)
    result["summary"] = summary(result["rows"])
    result["summary_one_thread"] = summary(one_rows)
    print("At the default threads:", *summary_lines(result["summary"]), "At one thread:",
          *summary_lines(result["summary_one_thread"]), sep="\n")
    write_report(json_path, result, md_path, report_lines(result))
    return result


if __name__ == "__main__":
    main()
