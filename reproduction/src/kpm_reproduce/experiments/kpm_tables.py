"""Protocols behind ``kpm reproduce kpm-table2 | kpm-table1 | sfds-table``.

The papers
----------
* Blanchard, Massart, Vert & Zwald, *Kernel Projection Machine*, NIPS 2004 (Tables 1, 2,
  Figure 1), and Zwald & Blanchard, SFdS 2005 (the table with KPM/CV and KPM/slope).
* Data: Rätsch's IDA benchmarks (:func:`kpm_reproduce.datasets.load_raetsch`), Gaussian kernel
  ``exp(-‖x-y‖²/(2σ²))`` with the papers' σ (:data:`SIGMAS`).

Protocols (as the papers describe them)
---------------------------------------
``kpm-table2``
    On *every* training set: KPM with D chosen by 5-fold CV; SVM (``sklearn.svm.SVC``, same
    kernel) with C chosen by 5-fold CV over :data:`C_GRID` (100 values, log-spaced from 1e-2
    to 1e3; the paper used 100 values "from 0 to 3x Rätsch's optimal C", linearly; a log
    grid covers several decades with the same number of values — how often the chosen C
    lands on an end of the grid is reported). The CV error of a parameter is the pooled
    0-1 error over the 5 validation folds; ties go to the smaller C / smaller D.
``kpm-table1``
    Rätsch's protocol: the parameter (C for the SVM, D for the KPM) is chosen by 5-fold CV on
    realizations 1..5 only; the median of those 5 values is then fixed for *all*
    realizations. The 5 CV choices are the ones computed for Table 2 (same computation).
``sfds-table``
    SVM as in Table 2 (the very same results, read from the shared cache), KPM with the
    penalty ``λ·D`` with λ chosen by 5-fold CV, and KPM with the slope heuristic.

Details common to the three commands
------------------------------------
* Folds: ``StratifiedKFold(5, shuffle=True, random_state=realization)`` for the SVM; the
  KPM estimator gets ``cv=5, random_state=realization`` (the same splitter).
* KPM: uncentred kernel matrix (as in the paper), D grid ``1..min(KPM_MAX_DIM=60, rank)``.
  The paper solves "for each D > 0"; the cap keeps the LP paths affordable (the paper's
  Figure 1 stops at D = 30 and its Table 1 picks D <= 24); the diagnostics table of each
  report counts the realizations whose CV choice hits the cap.
* One KPM fit per training set (:func:`kpm_all_task`, ``selection='penalty', penalty='cv'``)
  yields the D chosen by CV, by the λ·D penalty with λ by CV, and by the slope heuristic,
  plus the test error of every D; Table 1's fixed-D KPM is read off that path. Tests check
  both shortcuts against separate fits.
* SVM: ``sklearn.svm.SVC`` on the precomputed Gram matrix; repeated (x, y) pairs (flare_solar,
  breast_cancer) are merged with ``sample_weight`` = multiplicity, the same optimisation
  problem on fewer variables (:func:`_fit_svc`).
* Errors are in percent; tables show mean ± std (ddof=1) over all realizations and over the
  published IDA splits only, the paper's value, and (ours − paper) / paper std.

Resuming
--------
Every (method, dataset, realization) is one :class:`kpm_reproduce.experiments.runner.Task`; each
method family has a results file ``<out>/runs/<family>-<hash>.json`` where the hash is that
of the family's settings (so different settings never mix). The two families shared by the
three commands -- the SVM-CV runs and the combined KPM fits -- are reused across commands,
but only with ``resume=True`` (with ``overwrite=True`` a run computes everything it reports).
``report_only=True`` computes nothing and tabulates what is finished (a folder without any
results of the settings is an error naming what is missing). A run without ``resume`` into a
folder whose results files of these settings hold finished tasks is refused unless
``overwrite=True`` (:func:`kpm_reproduce.experiments.runner.check_replace`), before anything
is computed. A stored result is reused only if its values are possible (errors in [0, 100],
1 <= D <= max_dim, paths of max_dim values, C on the grid: :data:`SCHEMAS`,
:func:`check_svm_cv`, :func:`check_kpm_all`); the others are computed again, with a warning.
A lock file keeps two processes from writing the same results file.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from functools import partial
from pathlib import Path

import numpy as np

from kpm_reproduce.experiments.provenance import header
from kpm_reproduce.experiments.runner import (
    Range,
    Task,
    atomic_write_json,
    atomic_write_text,
    cap_realizations,
    check_replace,
    load_results,
    print_stderr,
    require_results,
    run_tasks,
)
from kpm.kernels import pairwise_kernel

__all__ = [
    "SIGMAS",
    "C_GRID",
    "PAPER_TABLE2",
    "PAPER_TABLE1",
    "PAPER_SFDS",
    "KPM_DATASETS",
    "svm_cv_task",
    "svm_fixed_task",
    "kpm_task",
    "kpm_fixed_task",
    "check_svm_cv",
    "check_svm_fixed",
    "check_kpm_all",
    "run_table2",
    "run_table1",
    "run_sfds",
]

#: Kernel widths σ of the Gaussian kernel exp(-‖x-y‖²/(2σ²)) used by Blanchard et al. (2004)
#: (Rätsch's widths c = 2σ²).
SIGMAS = {
    "banana": 0.7071,
    "breast_cancer": 5.0,
    "diabetis": 3.1623,
    "flare_solar": 3.8730,
    "german": 5.2440,
    "heart": 7.7460,
}
KPM_DATASETS = tuple(SIGMAS)

#: The SVM's C grid: 100 log-spaced values in [1e-2, 1e3].
C_GRID = np.logspace(-2, 3, 100)

#: Largest dimension D of the KPM path (the D grid is 1..min(KPM_MAX_DIM, rank of K)).
KPM_MAX_DIM = 60

# Published numbers (Blanchard et al. 2004, Tables 1-2; Zwald & Blanchard 2005): (mean, std)
# in percent.
PAPER_TABLE2 = {
    "kpm": {"banana": (11.14, 0.73), "breast_cancer": (26.55, 4.43), "diabetis": (24.14, 1.86),
            "flare_solar": (32.70, 1.97), "german": (23.82, 2.23), "heart": (17.59, 3.30)},
    "svm": {"banana": (10.69, 0.67), "breast_cancer": (26.68, 5.23), "diabetis": (23.79, 2.01),
            "flare_solar": (32.62, 1.86), "german": (23.79, 2.12), "heart": (16.23, 3.18)},
}
PAPER_TABLE1 = {
    "kpm": {"banana": (10.73, 0.42), "breast_cancer": (26.51, 4.75), "diabetis": (23.37, 1.92),
            "flare_solar": (32.43, 1.85), "german": (23.59, 2.15), "heart": (16.89, 3.53)},
    "svm": {"banana": (11.53, 0.66), "breast_cancer": (26.04, 4.74), "diabetis": (23.53, 1.73),
            "flare_solar": (32.43, 1.82), "german": (23.61, 2.07), "heart": (15.95, 3.26)},
}
PAPER_TABLE1_D = {"banana": 15, "breast_cancer": 24, "diabetis": 11, "flare_solar": 6,
                  "german": 14, "heart": 10}
PAPER_SFDS = {
    "svm": PAPER_TABLE2["svm"],
    "kpm_cv": {"banana": (10.91, 0.57), "breast_cancer": (28.73, 4.42),
               "diabetis": (23.77, 1.69), "flare_solar": (32.52, 1.78),
               "german": (24.09, 2.38), "heart": (17.35, 3.54)},
    "kpm_slope": {"banana": (11.19, 0.74), "breast_cancer": (27.53, 4.77),
                  "diabetis": (23.97, 1.82), "flare_solar": (33.02, 1.81),
                  "german": (23.96, 2.37), "heart": (17.73, 3.46)},
}


#: What a stored result of each task family must hold to be reused (runner schemas): errors
#: are percentages, dimensions positive, C and λ and times non-negative. The relations
#: between fields (path lengths, C on the grid) are checked by :func:`check_svm_cv`,
#: :func:`check_svm_fixed` and :func:`check_kpm_all`.
PERCENT = Range(float, 0, 100)
_DE = {"error": PERCENT, "D": Range(int, 1)}
_NONNEG = Range(float, 0)
SCHEMAS = {
    "svm_cv": {"error": PERCENT, "C": _NONNEG, "C_index": Range(int, 0), "cv_error": [PERCENT],
               "published": bool, "time_fit_s": _NONNEG},
    "svm_fixed": {"error": PERCENT, "C": _NONNEG, "published": bool, "time_fit_s": _NONNEG},
    "kpm_all": {"cv": _DE, "penalty": {**_DE, "lambda": _NONNEG},
                "slope": {**_DE, "lambda": _NONNEG}, "max_dim": Range(int, 1),
                "test_error_path": [PERCENT], "cv_error_path": [(PERCENT, None)],
                "published": bool, "time_fit_s": _NONNEG},
}


def check_svm_cv(result, C_grid):
    """Why a stored :func:`svm_cv_task` result does not fit its C grid (None if it does):
    ``cv_error`` has one value per grid value and ``C`` is the grid value at ``C_index``."""
    C_grid = np.asarray(C_grid, dtype=float)
    if len(result["cv_error"]) != C_grid.size:
        return f"has {len(result['cv_error'])} CV errors for a C grid of {C_grid.size} values"
    j = result["C_index"]
    if j >= C_grid.size:
        return f"has C_index {j} on a C grid of {C_grid.size} values"
    if not math.isclose(result["C"], C_grid[j], rel_tol=1e-9):
        return f"has C = {result['C']!r}, not the grid's value {float(C_grid[j])!r} at C_index {j}"
    return None


def check_svm_fixed(result, C):
    """Why a stored :func:`svm_fixed_task` result is not of the fixed ``C`` (None if it is)."""
    if not math.isclose(result["C"], float(C), rel_tol=1e-9):
        return f"has C = {result['C']!r}, not the fixed C = {float(C)!r}"
    return None


def check_kpm_all(result, max_dim=None):
    """Why a stored :func:`kpm_all_task` result is impossible (None if it is not): the paths
    hold one value per D = 1..``max_dim`` of the result, every chosen D lies on that grid,
    and ``max_dim`` does not exceed the task's bound ``max_dim`` (None: no bound)."""
    top = result["max_dim"]
    if max_dim is not None and top > max_dim:
        return f"has max_dim {top}, beyond the bound {max_dim} of its task"
    for name in ("test_error_path", "cv_error_path"):
        if len(result[name]) != top:
            return f"has a {name} of {len(result[name])} values, not max_dim = {top}"
    for rule in ("cv", "penalty", "slope"):
        if result[rule]["D"] > top:
            return f"has {rule} D = {result[rule]['D']}, beyond max_dim = {top}"
    return None


# --------------------------------------------------------------------------- helpers
def _split(dataset, realization, data_dir):
    from kpm_reproduce.datasets import load_raetsch

    return load_raetsch(dataset, realization, data_dir=data_dir)


def _folds(y, cv, realization):
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(n_splits=cv, shuffle=True, random_state=realization).split(
        np.zeros(len(y)), y))


def _fit_svc(K, X, y, idx, C):
    """SVC(C) on the training rows ``idx`` of the precomputed Gram matrix ``K``.

    Repeated (x, y) pairs (flare_solar: ~530 rows but ~90-115 distinct pairs per training
    set; breast_cancer: a few) are merged into one row with ``sample_weight`` =
    multiplicity: the hinge loss of m identical points is m times that of one, so the
    optimisation problem is exactly the same; libsvm just solves it on fewer variables.
    Returns (model, rows used).
    """
    from sklearn.svm import SVC

    rows, counts = _unique_rows(X, y, idx)
    w = counts.astype(float) if rows.size < len(idx) else None
    if w is None:
        rows = idx
    m = SVC(C=C, kernel="precomputed", cache_size=200).fit(K[np.ix_(rows, rows)], y[rows],
                                                           sample_weight=w)
    return m, rows


def _unique_rows(X, y, idx):
    """First index (in ``idx`` order) and multiplicity of each distinct (x, y) pair."""
    Z = np.column_stack([X[idx], y[idx]])
    _, first, counts = np.unique(Z, axis=0, return_index=True, return_counts=True)
    order = np.argsort(first)
    return np.asarray(idx)[first[order]], counts[order]


def _pct(y_true, y_pred):
    return 100.0 * float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))


# --------------------------------------------------------------------------- task functions
def svm_cv_task(dataset, realization, sigma, C_grid, cv=5, data_dir=None):
    """SVM with C chosen by ``cv``-fold CV on the training set; test error in percent.

    The Gram matrix of the training set is computed once (``kernel='precomputed'``).

    Returns
    -------
    dict
        ``error`` (test, %), ``C``, ``C_index``, ``cv_error`` (% per grid value),
        ``train_error``, ``n_support``, ``published``, ``at_grid_edge``, ``time_cv_s``,
        ``time_fit_s``.
    """
    from sklearn.svm import SVC

    s = _split(dataset, realization, data_dir)
    C_grid = np.asarray(C_grid, dtype=float)
    t0 = time.perf_counter()
    K = pairwise_kernel(s.X_train, sigma=sigma)
    y = s.y_train
    wrong = np.zeros(len(C_grid))
    for tr, va in _folds(y, cv, realization):
        rows, counts = _unique_rows(s.X_train, y, tr)
        if rows.size < tr.size:  # repeated (x, y) pairs: merge them (see _fit_svc)
            Ktr, ytr, w = K[np.ix_(rows, rows)], y[rows], counts.astype(float)
        else:
            rows, Ktr, ytr, w = tr, K[np.ix_(tr, tr)], y[tr], None
        Kva = K[np.ix_(va, rows)]
        for j, C in enumerate(C_grid):
            m = SVC(C=C, kernel="precomputed", cache_size=200).fit(Ktr, ytr, sample_weight=w)
            wrong[j] += np.sum(m.predict(Kva) != y[va])
    cv_err = 100.0 * wrong / len(y)
    j = int(np.argmin(cv_err))  # first minimum = smallest C among ties
    t1 = time.perf_counter()
    model, rows = _fit_svc(K, s.X_train, y, np.arange(len(y)), C_grid[j])
    err = _pct(s.y_test, model.predict(pairwise_kernel(s.X_test, s.X_train[rows], sigma=sigma)))
    t2 = time.perf_counter()
    return {
        "error": err,
        "C": float(C_grid[j]),
        "C_index": j,
        "at_grid_edge": j in (0, len(C_grid) - 1),
        "cv_error": cv_err,
        "train_error": _pct(y, model.predict(K[:, rows])),
        "n_support": int(model.support_.size),
        "n_distinct_train": int(rows.size),
        "published": s.published,
        "time_cv_s": t1 - t0,
        "time_fit_s": t2 - t1,
    }


def svm_fixed_task(dataset, realization, sigma, C, data_dir=None):
    """SVM with a fixed C (Table 1); test error in percent."""
    s = _split(dataset, realization, data_dir)
    t0 = time.perf_counter()
    K = pairwise_kernel(s.X_train, sigma=sigma)
    model, rows = _fit_svc(K, s.X_train, s.y_train, np.arange(len(s.y_train)), float(C))
    err = _pct(s.y_test, model.predict(pairwise_kernel(s.X_test, s.X_train[rows], sigma=sigma)))
    return {"error": err, "C": float(C), "published": s.published,
            "time_fit_s": time.perf_counter() - t0}


def kpm_task(dataset, realization, sigma, selection, cv=5, data_dir=None, params=None,
             keep_curve=False):
    """KPM with D chosen by ``selection`` ('cv', 'penalty' (λ by CV), 'slope'); error in %.

    Returns
    -------
    dict
        ``error``, ``D``, ``lambda`` (penalty / slope only), ``train_error``, ``published``,
        ``time_s``; with ``keep_curve`` the selection curve (for Figure 1).
    """
    from kpm import KernelProjectionMachine

    s = _split(dataset, realization, data_dir)
    kw = dict(kernel="rbf", sigma=sigma, selection=selection, cv=cv, random_state=realization,
              cv_duplicates="split", formulation="paper")
    if selection == "penalty":
        kw["penalty"] = "cv"
    kw.update(params or {})
    t0 = time.perf_counter()
    model = KernelProjectionMachine(**kw).fit(s.X_train, s.y_train)
    t1 = time.perf_counter()
    err = _pct(s.y_test, model.predict(s.X_test))
    out = {
        "error": err,
        "D": int(model.n_components_),
        "train_error": _pct(s.y_train, model.predict(s.X_train)),
        "published": s.published,
        "time_fit_s": t1 - t0,
        "time_predict_s": time.perf_counter() - t1,
    }
    if selection == "penalty":
        out["lambda"] = float(model.penalty_)
    elif selection == "slope":
        out["lambda"] = float(model.slope_lambda_)
    if keep_curve:
        out["selection_curve"] = _curve_to_json(model.selection_curve_)
    return out


def kpm_all_task(dataset, realization, sigma, cv=5, max_dim=None, data_dir=None, params=None,
                 slope_factor=2.0):
    """One KPM fit per training set giving all three selections of D at once.

    The estimator is fitted with ``selection='penalty', penalty='cv'``: that fit computes
    the CV error of every D (the 5 fold paths), the full-data path of every D and the
    λ chosen by CV. From the same fit:

    * ``cv`` — D minimising the pooled 5-fold CV error (ties → smaller D): the fitted
      model's answer for the rule :class:`kpm.machine.rules.CV` (:meth:`select_dim`);
    * ``penalty`` — the estimator's own choice (λ by CV);
    * ``slope`` — the fitted model's answer for :class:`kpm.machine.rules.Slope` on the same
      clipped-risk curve.

    The test error of each is read off :meth:`predict_path` (the solution for that D on the
    full training set). ``tests/experiments/test_reproduce_kpm.py`` checks that separate fits with
    ``selection='cv'`` and ``'slope'`` give the same D and error.

    Returns
    -------
    dict
        ``cv``, ``penalty``, ``slope``: each ``{"error", "D"}`` (+ ``"lambda"``);
        ``test_error_path`` and ``cv_error_path`` (% for D = 1..), ``published``, times.
    """
    from kpm import KernelProjectionMachine
    from kpm.machine.rules import CV, Slope

    s = _split(dataset, realization, data_dir)
    t0 = time.perf_counter()
    model = KernelProjectionMachine(kernel="rbf", sigma=sigma, selection="penalty",
                                    penalty="cv", cv=cv, max_components=max_dim,
                                    slope_factor=slope_factor, random_state=realization, cv_duplicates="split",
                                    keep_paths=True, **{"formulation": "paper", **(params or {})})
    model.fit(s.X_train, s.y_train)
    t1 = time.perf_counter()
    curve = model.selection_curve_
    dims = np.asarray(curve["D"])
    P = model.predict_path(s.X_test)  # (n_test, n_dims)
    test_path = 100.0 * np.mean(P != s.y_test[:, None], axis=0)
    err_at = lambda D: float(test_path[min(D, test_path.size) - 1])
    d_cv = model.select_dim(CV()).n_components
    slope = model.select_dim(Slope(slope_factor))
    d_sl = slope.n_components
    d_pen = int(model.n_components_)
    return {
        "cv": {"error": err_at(d_cv), "D": d_cv},
        "penalty": {"error": err_at(d_pen), "D": d_pen, "lambda": float(model.penalty_)},
        "slope": {"error": err_at(d_sl), "D": d_sl, "lambda": float(slope.penalty)},
        "max_dim": int(dims.max()),
        "test_error_path": np.round(test_path, 4),
        "cv_error_path": np.round(100.0 * np.asarray(curve["cv_error"]), 4),
        "published": s.published,
        "time_fit_s": t1 - t0,
        "time_predict_s": time.perf_counter() - t1,
    }


def kpm_fixed_task(dataset, realization, sigma, D, data_dir=None, params=None):
    """KPM with a fixed dimension D (Table 1); test error in percent."""
    from kpm import KernelProjectionMachine

    s = _split(dataset, realization, data_dir)
    t0 = time.perf_counter()
    model = KernelProjectionMachine(kernel="rbf", sigma=sigma, selection=int(D),
                                    random_state=realization, **{"formulation": "paper", **(params or {})})
    model.fit(s.X_train, s.y_train)
    err = _pct(s.y_test, model.predict(s.X_test))
    return {"error": err, "D": int(model.n_components_), "published": s.published,
            "time_fit_s": time.perf_counter() - t0}


def _curve_to_json(curve):
    if isinstance(curve, dict):
        return {k: np.asarray(v).tolist() if hasattr(v, "__len__") else v for k, v in curve.items()}
    if hasattr(curve, "_asdict"):
        return _curve_to_json(curve._asdict())
    if hasattr(curve, "__dict__"):
        return _curve_to_json(vars(curve))
    return np.asarray(curve).tolist()


# --------------------------------------------------------------------------- orchestration
class Settings:
    """Settings of one reproduction run (defaults = the papers' protocols).

    Parameters
    ----------
    datasets : sequence of str, default: the six data sets of the papers
    n_realizations : int or None
        Use realizations 1..N of each data set (None = all).
    C_grid : array, default :data:`C_GRID`
    cv : int, default 5
    kpm_params : dict, optional
        Extra estimator parameters for the KPM (smoke tests pass a small ``max_dim``).
    data_dir, out : paths
    jobs, scheduler, resume, overwrite, progress : see
        :func:`kpm_reproduce.experiments.runner.run_tasks`
    command : str, optional
        The command line recorded in the reports' provenance header.
    notify : callable, optional
        ``notify(message)`` receives what the user should know (an ``n_realizations`` beyond
        a data set's realizations, a figure not drawn); default: standard error.
    """

    def __init__(self, datasets=None, n_realizations=None, C_grid=None, cv=5, kpm_params=None,
                 data_dir=None, out="kpm-results", jobs=1, scheduler=None, resume=False,
                 progress=True, figure=True, report_only=False, scheduler_timeout=10.0,
                 kpm_max_dim=None, command=None, overwrite=False, notify=None):
        from kpm_reproduce.datasets import n_realizations as _nr

        self.datasets = tuple(str(d).strip().lower().replace("-", "_")
                              for d in (datasets or KPM_DATASETS))
        for d in self.datasets:
            if d not in SIGMAS:
                raise ValueError(f"{d!r} is not in the KPM tables; choose from {', '.join(SIGMAS)}")
        if n_realizations is not None and (isinstance(n_realizations, bool) or
                                           int(n_realizations) != n_realizations or
                                           n_realizations < 1):
            raise ValueError(f"n_realizations must be a positive int, got {n_realizations!r}")
        if resume and overwrite:
            raise ValueError("--resume and --overwrite exclude each other: --resume keeps the "
                             "finished results, --overwrite replaces them")
        if report_only and (resume or overwrite):
            raise ValueError("--report-only computes nothing: it takes neither --resume nor "
                             "--overwrite")
        self.notify = print_stderr if notify is None else notify
        counts = cap_realizations(n_realizations, {d: _nr(d, data_dir) for d in self.datasets},
                                  notify=self.notify)
        self.realizations = {d: list(range(1, R + 1)) for d, R in counts.items()}
        self.C_grid = np.asarray(C_GRID if C_grid is None else C_grid, dtype=float)
        if self.C_grid.ndim != 1 or self.C_grid.size < 1 or np.any(self.C_grid <= 0):
            raise ValueError("C_grid must be a non-empty 1-D array of positive values")
        if isinstance(cv, bool) or int(cv) != cv or cv < 2:
            raise ValueError(f"cv must be an int >= 2, got {cv!r}")
        self.cv = int(cv)
        self.kpm_params = dict(kpm_params or {})
        self.kpm_max_dim = int(KPM_MAX_DIM if kpm_max_dim is None else kpm_max_dim)
        if self.kpm_max_dim < 1:
            raise ValueError(f"kpm_max_dim must be >= 1, got {kpm_max_dim!r}")
        self.data_dir = data_dir
        self.out = Path(out)
        self.jobs, self.scheduler = jobs, scheduler
        self.resume, self.progress, self.figure = resume, progress, figure
        self.overwrite = bool(overwrite)
        self.report_only = bool(report_only)
        self.scheduler_timeout = float(scheduler_timeout)
        self.command = command
        self.failures = {}  # task key -> error message (tasks that raised)
        self.written = set()  # results files (re)started by this run: later calls resume them


def _hash(cfg):
    return hashlib.sha1(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:10]


def _family_cfg(family, st, **extra):
    cfg = {"family": family, "protocol_version": 1, "cv": st.cv,
           "sigmas": {d: SIGMAS[d] for d in sorted(SIGMAS)}}
    if family.startswith("svm"):
        cfg["C_grid"] = [float(c) for c in st.C_grid]
        cfg["folds"] = "StratifiedKFold(cv, shuffle=True, random_state=realization)"
        cfg["repeats"] = "repeated (x, y) pairs merged with sample_weight = multiplicity"
    else:
        cfg["kpm_params"] = st.kpm_params
    cfg.update(extra)
    return cfg


def _family_path(st, family, cfg):
    return st.out / "runs" / f"{family}-{_hash(cfg)}.json"


def _check(family, kwargs):
    """The cross-field check of a stored result of ``family`` (see :class:`Task`)."""
    if family == "svm_cv":
        return partial(check_svm_cv, C_grid=kwargs["C_grid"])
    if family == "svm_fixed":
        return partial(check_svm_fixed, C=kwargs["C"])
    return partial(check_kpm_all, max_dim=kwargs.get("max_dim"))


def _svm_cv_cfg(st):
    return _family_cfg("svm_cv", st)


def _kpm_all_cfg(st):
    return _family_cfg("kpm_all", st, max_dim=st.kpm_max_dim, slope_factor=2.0)


def _start(st, command, families):
    """What a command checks before it computes anything.

    ``families``: ``{family: config}`` of the results files the command reads or writes
    first. Report-only: the output folder must exist and hold at least one of them (else
    :class:`FileNotFoundError` naming the folder and the files). Otherwise: none of them may
    hold finished results the run would replace without ``resume`` or ``overwrite``
    (:func:`kpm_reproduce.experiments.runner.check_replace`).
    """
    paths = {f: _family_path(st, f, cfg) for f, cfg in families.items()}
    if not st.report_only:
        for f, path in paths.items():
            check_replace(path, families[f], resume=st.resume, overwrite=st.overwrite)
        return
    if not st.out.is_dir():
        raise FileNotFoundError(
            f"{st.out}: no such folder; --report-only tabulates the results that `kpm "
            f"reproduce {command}` saved in --out (check the folder name)")
    if any(p.exists() for p in paths.values()):
        return
    runs = st.out / "runs"
    others = sorted(p.name for p in runs.glob("*.json")) if runs.is_dir() else []
    other = (f"; runs/ holds {', '.join(others)}, written with other settings (give "
             "--report-only the options of the run that wrote them)" if others else "")
    raise FileNotFoundError(
        f"{st.out} holds no results of `kpm reproduce {command}` with these settings (no "
        f"{' or '.join('runs/' + p.name for p in paths.values())}){other}; run the command "
        "without --report-only first")


def _run_family(st, family, fn, per_task_kwargs, cfg, resume, label):
    """Run one method family on every (dataset, realization) in ``per_task_kwargs``."""
    # realization-major order: a partial run covers every data set evenly
    order = sorted(per_task_kwargs, key=lambda dr: (dr[1], st.datasets.index(dr[0])))
    tasks = [Task(f"{family}/{d}/r{r:03d}", fn, per_task_kwargs[(d, r)], SCHEMAS[family],
                  _check(family, per_task_kwargs[(d, r)]))
             for (d, r) in order]
    path = _family_path(st, family, cfg)
    if st.report_only:  # no computation: whatever the results file already holds
        data, done = require_results(path, tasks) if path.exists() else ({}, {})
        st.failures.update({k: v for k, v in data.get("errors", {}).items()
                            if k.split("/", 1)[1].rsplit("/", 1)[0] in st.datasets})
        return {(d, r): done[f"{family}/{d}/r{r:03d}"] for (d, r) in per_task_kwargs
                if f"{family}/{d}/r{r:03d}" in done}
    # a family already started by this run (Table 1 asks for the first five realizations,
    # then for all) resumes its own file
    again = path in st.written
    res = run_tasks(tasks, path, jobs=st.jobs, scheduler=st.scheduler,
                    resume=resume or again, overwrite=st.overwrite and not again, config=cfg,
                    progress=st.progress, description=label,
                    scheduler_timeout=st.scheduler_timeout, on_error="record",
                    notify=st.notify)
    st.written.add(path)
    failed = load_results(path).get("errors", {})
    st.failures.update({k: v for k, v in failed.items() if k in {t.key for t in tasks}})
    return {(d, r): res[f"{family}/{d}/r{r:03d}"] for (d, r) in per_task_kwargs
            if f"{family}/{d}/r{r:03d}" in res}


def _svm_cv(st, realizations=None):
    cfg = _svm_cv_cfg(st)
    kws = {(d, r): dict(dataset=d, realization=r, sigma=SIGMAS[d], C_grid=st.C_grid, cv=st.cv,
                        data_dir=st.data_dir)
           for d in st.datasets for r in (realizations or st.realizations)[d]}
    # the SVM CV results are shared by kpm-table2, sfds-table and kpm-table1 (with --resume)
    return _run_family(st, "svm_cv", svm_cv_task, kws, cfg, resume=st.resume,
                       label="SVM (C by CV)")


def _kpm_all(st, realizations=None):
    """The combined KPM fits (D by CV, λ by CV, slope) shared by Table 2, sfds and Table 1."""
    cfg = _kpm_all_cfg(st)
    kws = {(d, r): dict(dataset=d, realization=r, sigma=SIGMAS[d], cv=st.cv,
                        max_dim=st.kpm_max_dim, data_dir=st.data_dir, params=st.kpm_params)
           for d in st.datasets for r in (realizations or st.realizations)[d]}
    # like the SVM-CV runs, these fits are shared by the three commands (with --resume)
    return _run_family(st, "kpm_all", kpm_all_task, kws, cfg, resume=st.resume,
                       label="KPM (CV, λ-CV, slope)")


def _pick(res, which):
    """Extract one selection rule's results from the combined KPM results."""
    out = {}
    for key, r in res.items():
        row = dict(r[which])
        row["published"] = r["published"]
        row["time_fit_s"] = r["time_fit_s"]
        row["_elapsed_s"] = r.get("_elapsed_s", 0.0)
        row["_task"] = f"kpm_all/{key[0]}/r{key[1]:03d}"  # the shared fit behind this row
        out[key] = row
    return out


# --------------------------------------------------------------------------- reporting
def _summ(vals):
    v = np.asarray(vals, dtype=float)
    if v.size == 0:
        return None, None
    return float(v.mean()), (float(v.std(ddof=1)) if v.size > 1 else 0.0)


def _fmt(m, s):
    return "—" if m is None else f"{m:.2f} ± {s:.2f}"


def _cell(results, d, method, paper, param=None):
    """Statistics of one (dataset, method) cell."""
    rows = sorted(results.items())
    errs = [r["error"] for (_, _), r in rows]
    pub = [r["error"] for (_, _), r in rows if r.get("published")]
    m, s = _summ(errs)
    mp, sp = _summ(pub)
    pm, ps = paper
    cell = {"dataset": d, "method": method, "n": len(errs), "n_published": len(pub),
            "mean": m, "std": s, "mean_published": mp, "std_published": sp,
            "paper_mean": pm, "paper_std": ps,
            "delta_paper_std": None if m is None else (m - pm) / ps,
            # two-sample z of the difference of the means (the paper: 100 realizations)
            "z": None if m is None or len(errs) < 2 else
            (m - pm) / math.sqrt(s * s / len(errs) + ps * ps / 100.0)}
    if param is not None:
        p = [r[param] for (_, _), r in rows if r.get(param) is not None]
        if p:
            cell["param"] = param
            cell["param_median"] = float(np.median(p))
            cell["param_min"], cell["param_max"] = float(np.min(p)), float(np.max(p))
    return cell


def _param_str(c):
    if "param" not in c:
        return ""
    g = lambda v: f"{v:.3g}"
    return f"{c['param']} = {g(c['param_median'])} [{g(c['param_min'])}–{g(c['param_max'])}]"


def _markdown_table(cells, total_r):
    lines = ["| dataset | method | σ | realizations | ours, all | ours, published (n) | paper "
             "| Δ / paper std | z | chosen parameter: median [min–max] |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        d = c["dataset"]
        nr = f"{c['n']}" + ("" if c["n"] == total_r.get(d) else f" of {total_r.get(d)}")
        pub = ("—" if c["n_published"] == 0 else
               f"{_fmt(c['mean_published'], c['std_published'])} ({c['n_published']})")
        delta = "—" if c["delta_paper_std"] is None else f"{c['delta_paper_std']:+.2f}"
        flag = " **" if c["delta_paper_std"] is not None and abs(c["delta_paper_std"]) > 1 else ""
        lines.append(f"| {d} | {c['method']} | {SIGMAS[d]:g} | {nr} | {_fmt(c['mean'], c['std'])}"
                     f" | {pub} | {_fmt(c['paper_mean'], c['paper_std'])} | {delta}{flag} | "
                     f"{'—' if c['z'] is None else format(c['z'], '+.1f')} | {_param_str(c)} |")
    return "\n".join(lines)


def _per_realization(st, methods):
    out = {}
    for d in st.datasets:
        rows = []
        for r in st.realizations[d]:
            row = {"realization": r}
            for name, res in methods.items():
                if (d, r) in res:
                    rr = dict(res[(d, r)])
                    row["published"] = rr.pop("published", None)
                    rr.pop("cv_error", None) if name != "svm" else None
                    row[name] = rr
            rows.append(row)
        out[d] = rows
    return out


def _total_r(st):
    from kpm_reproduce.datasets import n_realizations

    return {d: n_realizations(d, st.data_dir) for d in st.datasets}


def _write_report(st, name, title, intro, cells, methods, extra_json=None, notes=""):
    total = _total_r(st)
    complete = all(c["n"] == total[c["dataset"]] for c in cells)
    cmd = name.replace("_", "-")
    tasks = {}
    for mname, res in methods.items():
        for key, r in res.items():
            tasks[r.get("_task", (mname, key))] = r.get("_elapsed_s", 0.0)
    secs = sum(tasks.values())
    R = sorted({len(v) for v in st.realizations.values()})
    md = [f"# {title}", "", *header(st.command), intro, "",
          f"Settings: data sets {', '.join(st.datasets)}; realizations 1..{R[-1] if len(R) == 1 else R}"
          f" (of {'/'.join(str(total[d]) for d in st.datasets)}); SVM C grid "
          f"{len(st.C_grid)} log-spaced values in [{st.C_grid[0]:g}, {st.C_grid[-1]:g}]; "
          f"KPM D grid 1..min({st.kpm_max_dim}, rank); {st.cv}-fold CV. "
          f"Reproduce all of it with `kpm reproduce {cmd} --out DIR` (`--jobs N` or "
          "`--scheduler tcp://host:port` to parallelise, `--resume` to continue an interrupted "
          "run, `--report-only` to tabulate what is finished). Sum of the task times behind "
          f"this table: {secs / 3600:.2f} h (BLAS limited to 1 thread per task; a fit shared by "
          "several columns counted once).", ""]
    if not complete:
        md += ["**PARTIAL RESULTS**: not every cell covers all realizations; the "
               "'realizations' column says how many each covers.", ""]
    md += [_markdown_table(cells, total), "",
           "Errors in percent: mean ± standard deviation (ddof=1) over the realizations; "
           "'published' = the realizations that are the published IDA splits (diabetis and "
           "flare_solar have none: their splits are reconstructed from the public originals). "
           "Δ = (ours − paper) / paper std; ** marks |Δ| > 1. z = (ours − paper) / "
           "sqrt(s²/R + s_paper²/100): the difference of the two means in standard errors "
           "(|z| > 2: the means differ beyond sampling noise, even when |Δ| < 1).", ""]
    if st.failures:
        md += [f"**{len(st.failures)} task(s) failed** (not counted in the table; listed in "
               "the JSON under `failures`):", ""]
        md += [f"- `{k}`: {v}" for k, v in sorted(st.failures.items())] + [""]
    if notes:
        md += [notes, ""]
    md_path = st.out / f"{name}.md"
    json_path = st.out / f"{name}.json"
    data = {"command": name.replace("_", "-"), "title": title, "complete": complete,
            "settings": {"datasets": list(st.datasets),
                         "realizations": {d: len(v) for d, v in st.realizations.items()},
                         "C_grid": [float(st.C_grid[0]), float(st.C_grid[-1]), int(st.C_grid.size)],
                         "C_grid_spacing": "log", "cv": st.cv, "sigmas": SIGMAS,
                         "kpm_params": st.kpm_params},
            "cells": cells, "failures": st.failures,
            "per_realization": _per_realization(st, methods)}
    data.update(extra_json or {})
    st.out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(json_path, data)
    atomic_write_text(md_path, "\n".join(md) + "\n")
    return md_path, json_path, data


def _by_dataset(res, d):
    return {k: v for k, v in res.items() if k[0] == d}


def _grid_edge_note(svm):
    edge = sum(bool(r.get("at_grid_edge")) for r in svm.values())
    lo = sum(r.get("C_index") == 0 for r in svm.values())
    return (f"SVM C grid: {len(next(iter(svm.values()))['cv_error'])} log-spaced values; the "
            f"CV choice lies on an end of the grid in {edge} of {len(svm)} realizations "
            f"({lo} at the lower end).") if svm else ""


def _kpm_diagnostics(st, kall):
    """Markdown table: what the stored KPM paths say about the selection of D.

    Per data set, over the realizations done: the mean test error of the D chosen by CV,
    of the best D in hindsight (oracle, a lower bound no selection rule can beat), and of
    the fixed D the paper reports in its Table 1; the median chosen D; how often the CV
    choice is at the top of the D grid.
    """
    lines = ["| dataset | R | D by CV: error | CV ties → larger D: error | oracle D: error "
             "| paper's Table-1 D: error | D by CV: median [min–max] | CV choice = max_dim |",
             "|---|---|---|---|---|---|---|---|"]
    for d in st.datasets:
        rows = [v for (dd, _), v in sorted(kall.items()) if dd == d]
        if not rows:
            continue
        Dp = PAPER_TABLE1_D[d]
        cv = [v["cv"]["error"] for v in rows]
        orc = [min(v["test_error_path"]) for v in rows]
        atp = [v["test_error_path"][min(Dp, len(v["test_error_path"])) - 1] for v in rows]
        Ds = [v["cv"]["D"] for v in rows]
        large = []
        for v in rows:  # the other tie-break: the largest D among the CV minimisers
            cvp, tep = np.asarray(v["cv_error_path"]), np.asarray(v["test_error_path"])
            D_l = int(np.flatnonzero(cvp <= cvp.min() + 1e-9)[-1]) + 1
            large.append(tep[min(D_l, tep.size) - 1])
        top = sum(v["cv"]["D"] >= v["max_dim"] for v in rows)
        lines.append(f"| {d} | {len(rows)} | {np.mean(cv):.2f} | {np.mean(large):.2f} | "
                     f"{np.mean(orc):.2f} | "
                     f"{np.mean(atp):.2f} (D = {Dp}) | {np.median(Ds):g} [{min(Ds)}–{max(Ds)}] "
                     f"| {top} |")
    return ("KPM diagnostics from the stored paths (test error in %, mean over the "
            "realizations done):\n\n" + "\n".join(lines))


def _notes_file(st, name):
    """Hand-written investigation notes kept beside the results (``<out>/notes/NAME.md``)."""
    p = st.out / "notes" / f"{name}.md"
    return p.read_text().strip() if p.exists() else ""


def run_table2(st):
    """NIPS 2004 Table 2: KPM (D by 5-fold CV) and SVM (C by 5-fold CV) on every training set.

    Returns
    -------
    dict
        The JSON report (also written to ``<out>/kpm_table2.json`` and ``.md``).
    """
    _start(st, "kpm-table2", {"svm_cv": _svm_cv_cfg(st), "kpm_all": _kpm_all_cfg(st)})
    svm = _svm_cv(st)
    kall = _kpm_all(st)
    kpm = _pick(kall, "cv")
    cells = []
    for d in st.datasets:
        cells.append(_cell(_by_dataset(kpm, d), d, "KPM (D by CV)", PAPER_TABLE2["kpm"][d], "D"))
        cells.append(_cell(_by_dataset(svm, d), d, "SVM (C by CV)", PAPER_TABLE2["svm"][d], "C"))
    fig = {}
    if st.figure and "flare_solar" in st.datasets:
        png = st.out / "kpm_figure1_flare_solar.png"
        if not st.report_only:
            png = figure1(st)
        fig = {"figure1": png.name} if png.exists() else {}
    elif st.figure:
        st.notify("note: Figure 1 is drawn on flare_solar, which --datasets leaves out: not "
                  "drawn (add flare_solar to --datasets to draw it, or pass --no-figure)")
    intro = ("Blanchard, Massart, Vert & Zwald, NIPS 2004, Table 2: D of the KPM and C of the "
             "SVM each chosen by 5-fold cross-validation on every training set. Gaussian "
             "kernel exp(−‖x−y‖²/(2σ²)).")
    notes = "\n\n".join(x for x in (
        _grid_edge_note(svm), _kpm_diagnostics(st, kall) if kall else "",
        f"![Figure 1]({fig['figure1']})" if fig else "", _notes_file(st, "kpm_table2")) if x)
    return _write_report(st, "kpm_table2", "KPM, NIPS 2004 — Table 2 (reproduction)", intro,
                         cells, {"kpm": kpm, "svm": svm}, extra_json=fig, notes=notes)[2]


def run_sfds(st):
    """Zwald & Blanchard, SFdS 2005: SVM, KPM with λ·D penalty (λ by CV), KPM slope heuristic."""
    _start(st, "sfds-table", {"svm_cv": _svm_cv_cfg(st), "kpm_all": _kpm_all_cfg(st)})
    svm = _svm_cv(st)
    kall = _kpm_all(st)
    kcv, ksl = _pick(kall, "penalty"), _pick(kall, "slope")
    cells = []
    for d in st.datasets:
        cells.append(_cell(_by_dataset(svm, d), d, "SVM (C by CV)", PAPER_SFDS["svm"][d], "C"))
        cells.append(_cell(_by_dataset(kcv, d), d, "KPM/CV (λ by CV)", PAPER_SFDS["kpm_cv"][d],
                           "D"))
        cells.append(_cell(_by_dataset(ksl, d), d, "KPM/slope", PAPER_SFDS["kpm_slope"][d], "D"))
    intro = ("Zwald & Blanchard, SFdS 2005: SVM with C by 5-fold CV (the same runs as Table 2), "
             "KPM with D = argmin R_n(clip f_D) + λ·D, λ by 5-fold CV, and KPM with λ from the "
             "slope heuristic (2 × the λ of the largest jump of D̂(λ)).")
    notes = "\n\n".join(x for x in (
        _grid_edge_note(svm), _kpm_diagnostics(st, kall) if kall else "",
        _notes_file(st, "sfds_table")) if x)
    return _write_report(st, "sfds_table", "KPM model selection, SFdS 2005 (reproduction)",
                         intro, cells, {"svm": svm, "kpm_cv": kcv, "kpm_slope": ksl},
                         notes=notes)[2]


def run_table1(st):
    """NIPS 2004 Table 1 (Rätsch's protocol): median of the CV choices on realizations 1..5."""
    _start(st, "kpm-table1", {"svm_cv": _svm_cv_cfg(st), "kpm_all": _kpm_all_cfg(st)})
    first5 = {d: [r for r in st.realizations[d] if r <= 5] for d in st.datasets}
    svm5 = _svm_cv(st, realizations=first5)
    kpm5 = _pick(_kpm_all(st, realizations=first5), "cv")
    missing = [d for d in st.datasets
               if any((d, r) not in svm5 or (d, r) not in kpm5 for r in first5[d])]
    if missing:  # only in report-only mode: the first five CV runs are not all done yet
        raise ValueError(f"kpm-table1: the CV runs on realizations 1-5 are unfinished for "
                           f"{missing}; run kpm-table2 (or this command without --report-only)")
    # median of 5 values (odd) = the middle one: a grid value for C, an integer for D
    C_fix = {d: float(np.median([svm5[(d, r)]["C"] for r in first5[d]])) for d in st.datasets}
    D_fix = {d: int(np.median([kpm5[(d, r)]["D"] for r in first5[d]])) for d in st.datasets}
    cfg_s = _family_cfg("svm_fixed", st, C=C_fix)
    svm = _run_family(st, "svm_fixed", svm_fixed_task,
                      {(d, r): dict(dataset=d, realization=r, sigma=SIGMAS[d], C=C_fix[d],
                                    data_dir=st.data_dir)
                       for d in st.datasets for r in st.realizations[d]},
                      cfg_s, resume=st.resume, label="SVM (fixed C)")
    # The KPM with a fixed D is the full-data path's solution at D: the combined fits
    # already hold its test error for every D <= max_dim (test_error_path), so nothing is
    # refitted (tests/experiments/test_reproduce_kpm.py checks this equals kpm_fixed_task).
    kall = _kpm_all(st)
    kpm = {}
    for (d, r), res in kall.items():
        path = res["test_error_path"]
        if D_fix[d] > res["max_dim"]:
            raise RuntimeError(f"fixed D={D_fix[d]} is beyond the path (max_dim {res['max_dim']})")
        kpm[(d, r)] = {"error": float(path[min(D_fix[d], len(path)) - 1]), "D": D_fix[d],
                       "published": res["published"], "time_fit_s": res["time_fit_s"],
                       "_elapsed_s": res.get("_elapsed_s", 0.0),
                       "_task": f"kpm_all/{d}/r{r:03d}"}
    cells = []
    for d in st.datasets:
        ck = _cell(_by_dataset(kpm, d), d, "KPM (fixed D)", PAPER_TABLE1["kpm"][d], "D")
        ck["paper_D"] = PAPER_TABLE1_D[d]
        cells.append(ck)
        cells.append(_cell(_by_dataset(svm, d), d, "SVM (fixed C)", PAPER_TABLE1["svm"][d], "C"))
    dl = ", ".join(f"{d}: D = {D_fix[d]} (paper {PAPER_TABLE1_D[d]}), C = {C_fix[d]:.3g}"
                   for d in st.datasets)
    intro = ("Blanchard et al., NIPS 2004, Table 1 — Rätsch's protocol: D (KPM) and C (SVM) "
             "chosen by 5-fold CV on realizations 1–5, the median of those 5 choices then fixed "
             "for every realization. Fixed values: " + dl + ".")
    extra = {"fixed": {"D": D_fix, "C": C_fix, "paper_D": PAPER_TABLE1_D,
                       "cv_choices_first5": {d: {"D": [kpm5[(d, r)]["D"] for r in first5[d]],
                                                 "C": [svm5[(d, r)]["C"] for r in first5[d]]}
                                             for d in st.datasets}}}
    return _write_report(st, "kpm_table1", "KPM, NIPS 2004 — Table 1 (reproduction)", intro,
                         cells, {"kpm": kpm, "svm": svm}, extra_json=extra,
                         notes=_notes_file(st, "kpm_table1"))[2]


def figure1(st, realization=1):
    """Figure 1 of the NIPS paper on flare_solar (one realization).

    Left: KPM test risk and empirical risk versus D (and the 5-fold CV risk); right: SVM test
    risk and empirical risk versus C. Written to ``<out>/kpm_figure1_flare_solar.png``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = "flare_solar"
    s = _split(d, realization, st.data_dir)
    sig = SIGMAS[d]
    K, Kt = pairwise_kernel(s.X_train, sigma=sig), pairwise_kernel(s.X_test, s.X_train, sigma=sig)
    Cs = st.C_grid
    svm_test, svm_train = [], []
    for C in Cs:
        m, rows = _fit_svc(K, s.X_train, s.y_train, np.arange(len(s.y_train)), C)
        svm_test.append(np.mean(s.y_test != m.predict(Kt[:, rows])))
        svm_train.append(np.mean(s.y_train != m.predict(K[:, rows])))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    _kpm_panel(ax1, st, s, sig, realization)
    ax2.semilogx(Cs, svm_test, "-", label="test risk")
    ax2.semilogx(Cs, svm_train, "--", label="empirical risk")
    ax2.set_xlabel("C")
    ax2.set_ylabel("risk (0-1 error)")
    ax2.set_title(f"SVM, {d}, realization {realization}")
    ax2.legend()
    fig.tight_layout()
    path = st.out / "kpm_figure1_flare_solar.png"
    st.out.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _kpm_panel(ax, st, s, sigma, realization):
    """Left panel of Figure 1 (:func:`kpm.plotting.plot_selection_curve`): risks versus D.

    The model is fitted as in :func:`kpm_all_task` (``selection='penalty', penalty='cv'``),
    which solves the full-data path for every D of the grid, so the test and empirical
    curves cover all D; the D chosen by CV is marked as well as the penalty's choice.
    """
    from kpm.plotting import plot_selection_curve as selection_curve
    from kpm import KernelProjectionMachine
    from kpm.machine.rules import CV

    model = KernelProjectionMachine(kernel="rbf", sigma=sigma, selection="penalty",
                                    penalty="cv", cv=st.cv, max_components=st.kpm_max_dim,
                                    random_state=realization, cv_duplicates="split", keep_paths=True,
                                    **{"formulation": "paper", **st.kpm_params}).fit(s.X_train, s.y_train)
    d_cv = model.select_dim(CV()).n_components
    selection_curve(model, ax=ax, X_test=s.X_test, y_test=s.y_test,
                    title=f"KPM, flare_solar, realization {realization}")
    ax.axvline(d_cv, color="C1", lw=1.2, ls="--", label=f"D by 5-fold CV = {d_cv}")
    ax.legend(fontsize=7)
