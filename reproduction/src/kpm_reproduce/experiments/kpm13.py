"""Protocol behind ``kpm reproduce kpm-13``: the KPM versus the SVM on the 13 Rätsch sets.

Blanchard, Massart, Vert & Zwald (NIPS 2004) compare the Kernel Projection Machine with the
SVM on six of Rätsch's IDA benchmarks. This command runs the same comparison (their Table-2
protocol: every parameter chosen by 5-fold cross-validation on every training set) on all
13 sets, every realization (100; 20 for image and splice), with the published kPCR, KRR and
SVM errors of Braun, Buhmann & Müller (JMLR 2008, "On relevant dimensions in kernel feature
spaces", Table 3 as reproduced by ``kpm reproduce braun-table``) beside.

Protocol
--------
* Kernel: Gaussian ``exp(-‖x-y‖²/(2σ²))``, one σ per data set (:data:`SIGMAS`): the width
  chosen by the relevant-dimension likelihood of Braun et al. (2008) in
  ``kpm reproduce braun-table`` (its report's σ column; ``docs/results/braun_table.json``,
  ``rows.<set>.sigma``), *not* the median heuristic.
* KPM: one fit per training set with ``selection='penalty', penalty='cv'``
  (:func:`kpm_reproduce.experiments.kpm_tables.kpm_all_task`): it computes the 5-fold CV error of
  every D and the full-data path, and answers the three rules through
  :meth:`~kpm.machine.exact.KernelProjectionMachine.select_dim`: D by CV
  (:class:`kpm.machine.rules.CV`), the λ·D penalty with λ by CV, and the slope heuristic
  (:class:`kpm.machine.rules.Slope`, factor 2). Uncentred kernel (as in the paper), D grid
  ``1..`` the estimator's default bound (the numerical rank; the path stops where the
  training hinge risk reaches its floor), so D is not capped at the paper's 60.
* SVM: ``sklearn.svm.SVC`` (same kernel, precomputed), C by 5-fold CV over 100 log-spaced
  values in [1e-2, 1e3] (:func:`kpm_reproduce.experiments.kpm_tables.svm_cv_task`, folds
  ``StratifiedKFold(5, shuffle=True, random_state=realization)``).
* Beyond the papers, ``KernelProjectionMachine(formulation='svm')`` (the soft-margin SVM
  restricted to S_D, with the estimator's defaults: the squared hinge, each fold's basis by
  Rayleigh-Ritz, early stopping along D; D and C chosen by the same 5-fold CV, folds seeded
  by the realization,
  with each C rule of :data:`SVM_C_RULES` asked for: jointly over :data:`SVM_FORMULATION_C`,
  or C first at the largest D, then D), on realizations 1..``svm_realizations`` of each set
  (its own task family, :func:`svm_formulation_task`), reported beside the SVM and the
  paper's KPM on the same realizations.
* Reported per set: mean ± standard error (std / sqrt(R)) of the test error in percent over
  the realizations done, for each KPM rule and the SVM; the mean wall time of each method's
  full model selection (KPM: the single fit, CV of D and λ included; SVM: the CV over the C
  grid plus the final fit), both with BLAS limited to one thread.

Every (method, data set, realization) is one :class:`kpm_reproduce.experiments.runner.Task`, saved as
it finishes in ``<out>/runs/kpm13-<family>-<hash>.json`` (``--resume`` continues).
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import partial
from pathlib import Path

import numpy as np

from kpm_reproduce.experiments.braun_table import DATASETS, PAPER as BRAUN_PAPER
from kpm_reproduce.experiments.kpm_tables import (
    C_GRID,
    PERCENT,
    SCHEMAS,
    check_kpm_all,
    check_svm_cv,
    kpm_all_task,
    svm_cv_task,
)
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
from kpm.machine import DEFAULT_C
from kpm import KernelProjectionMachine

__all__ = ["SIGMAS", "RULES", "SVM_FORMULATION_C", "SVM_C_RULES", "Settings", "pair_task", "svm_formulation_task",
           "results_path", "svm_results_path", "run_kpm13", "summarize", "summarize_svm_formulation", "check_pair",
           "gap_evidence"]

#: σ per data set: the widths chosen by ``kpm reproduce braun-table`` (Braun et al. 2008's
#: likelihood over σ_median × 2^(k/2), realizations 1-5); see the report's σ column.
SIGMAS = {
    "banana": 0.3068893784864274,
    "breast_cancer": 5.69769429561089,
    "diabetis": 3.6175399248928906,
    "flare_solar": 2.8284271247461903,
    "german": 5.95341424345756,
    "heart": 7.057480243532723,
    "image": 0.8787188202575595,
    "ringnorm": 3.0807156382059926,
    "splice": 5.958187643906492,
    "thyroid": 1.2808525131543178,
    "titanic": 1.3349891644596759,
    "twonorm": 4.409393794557242,
    "waveform": 3.0917415771627352,
}

#: The KPM's selection rules read off the one fit, in the report's column order.
RULES = ("cv", "penalty", "slope")
_RULE_NAMES = {"cv": "KPM, D by CV", "penalty": "KPM, λ·D (λ by CV)", "slope": "KPM, slope"}


class Settings:
    """Settings of one ``kpm-13`` run.

    Parameters
    ----------
    datasets : sequence of str, default: all 13
    n_realizations : int, optional
        Realizations 1..N of each set (default: all).
    C_grid : array, default :data:`kpm_reproduce.experiments.kpm_tables.C_GRID`
    max_dim : int, optional
        Largest D of the KPM path (default: the estimator's, i.e. the rank).
    svm_realizations : int, optional
        Realizations 1..N of each set (capped by ``n_realizations``) for the column of the
        KPM's ``formulation='svm'`` (the SVM restricted to S_D, beyond the papers);
        default: those of the other columns; 0: no such column.
    svm_c_rules : sequence of str, default ('two-stage', 'joint')
        The C rules (:data:`SVM_C_RULES`) of the ``formulation='svm'`` columns, one column each.
    out, data_dir, jobs, resume, overwrite, progress, report_only, command, notify : as in
        ``kpm_tables``.
    """

    def __init__(self, datasets=None, n_realizations=None, C_grid=None, max_dim=None, cv=5,
                 out="kpm-results", data_dir=None, jobs=1, resume=False, progress=True,
                 report_only=False, command=None, svm_realizations=None,
                 svm_c_rules=("two-stage", "joint"), overwrite=False, notify=None):
        from kpm_reproduce.datasets import n_realizations as _nr

        self.datasets = tuple(str(d).strip().lower().replace("-", "_")
                              for d in (datasets or DATASETS))
        bad = [d for d in self.datasets if d not in SIGMAS]
        if bad:
            raise ValueError(f"unknown data set(s) {bad}; choose from {', '.join(SIGMAS)}")
        if n_realizations is not None and (isinstance(n_realizations, bool)
                                           or int(n_realizations) != n_realizations
                                           or n_realizations < 1):
            raise ValueError(f"n_realizations must be a positive int, got {n_realizations!r}")
        if max_dim is not None and (isinstance(max_dim, bool) or int(max_dim) != max_dim
                                    or max_dim < 1):
            raise ValueError(f"max_dim must be None or a positive int, got {max_dim!r}")
        if resume and overwrite:
            raise ValueError("--resume and --overwrite exclude each other: --resume keeps the "
                             "finished results, --overwrite replaces them")
        if report_only and (resume or overwrite):
            raise ValueError("--report-only computes nothing: it takes neither --resume nor "
                             "--overwrite")
        self.notify = print_stderr if notify is None else notify
        self.total = {d: _nr(d, data_dir) for d in self.datasets}
        self.realizations = {d: list(range(1, R + 1)) for d, R in cap_realizations(
            n_realizations, self.total, notify=self.notify).items()}
        if svm_realizations is not None and (isinstance(svm_realizations, bool)
                                             or int(svm_realizations) != svm_realizations
                                             or svm_realizations < 0):
            raise ValueError(f"svm_realizations must be None or an int >= 0, got {svm_realizations!r}")
        if svm_realizations:
            cap_realizations(svm_realizations, {d: len(rs) for d, rs in self.realizations.items()},
                             option="--svm-realizations", notify=self.notify)
        self.svm_realizations = {d: rs if svm_realizations is None else rs[:int(svm_realizations)]
                                 for d, rs in self.realizations.items()}
        bad = [c for c in svm_c_rules if c not in SVM_C_RULES]
        if bad or not svm_c_rules:
            raise ValueError(f"svm_c_rules must be a non-empty subset of {tuple(SVM_C_RULES)}, got "
                             f"{tuple(svm_c_rules)!r}")
        self.svm_c_rules = tuple(dict.fromkeys(svm_c_rules))
        self.C_grid = np.asarray(C_GRID if C_grid is None else C_grid, dtype=float)
        if self.C_grid.ndim != 1 or self.C_grid.size < 1 or np.any(self.C_grid <= 0):
            raise ValueError("C_grid must be a non-empty 1-D array of positive values")
        self.max_dim = None if max_dim is None else int(max_dim)
        self.cv = int(cv)
        self.out, self.data_dir = Path(out), data_dir
        self.jobs, self.resume, self.progress = jobs, resume, progress
        self.overwrite = bool(overwrite)
        self.report_only, self.command = bool(report_only), command


def pair_task(dataset, realization, sigma, C_grid, cv=5, max_dim=None, data_dir=None):
    """Both methods on one training set: ``{"kpm": kpm_all_task(...), "svm": svm_cv_task(...)}``.

    One task per (data set, realization), so a partial run has both columns for every
    realization it reports.
    """
    return {"kpm": kpm_all_task(dataset, realization, sigma, cv=cv, max_dim=max_dim,
                                data_dir=data_dir),
            "svm": svm_cv_task(dataset, realization, sigma, C_grid, cv=cv, data_dir=data_dir)}


#: The C rules of the ``formulation='svm'`` columns: the estimator's ``c_selection`` and its
#: default C grid for that rule (:data:`kpm.machine.exact.DEFAULT_C`).
SVM_C_RULES = {rule: {"c_selection": rule, "C": C} for rule, C in DEFAULT_C.items()}
#: C grid of the KPM's ``formulation='svm'`` column with the joint rule.
SVM_FORMULATION_C = SVM_C_RULES["joint"]["C"]


def svm_formulation_task(dataset, realization, sigma, cv=5, data_dir=None, c_rule="joint"):
    """The KPM with ``formulation='svm'`` (the SVM restricted to S_D; D and C by ``cv``-fold CV,
    C by the rule ``c_rule`` of :data:`SVM_C_RULES`) on one training set: ``error`` (test, %),
    ``D``, ``C``, ``time_fit_s``.

    The folds are those of the SVM column (``StratifiedKFold(cv, shuffle=True,
    random_state=realization)``); duplicated samples are split across folds, as for the
    paper's KPM (``cv_duplicates='split'``).
    """
    import time

    from kpm_reproduce.datasets import load_raetsch

    s = load_raetsch(dataset, realization, data_dir=data_dir)
    t0 = time.perf_counter()
    model = KernelProjectionMachine(kernel="rbf", sigma=sigma, formulation="svm", **SVM_C_RULES[c_rule],
                                    selection="cv", cv=cv, random_state=realization,
                                    cv_duplicates="split").fit(s.X_train, s.y_train)
    t1 = time.perf_counter()
    err = 100.0 * float(np.mean(model.predict(s.X_test) != s.y_test))
    return {"error": err, "D": int(model.n_components_), "C": float(model.C_), "time_fit_s": t1 - t0}


SVM_SCHEMA = {"error": PERCENT, "D": Range(int, 1), "C": Range(float, 0),
              "time_fit_s": Range(float, 0)}

#: What a stored result must hold to be reused (runner schema; :func:`check_pair` checks
#: the relations between its fields).
SCHEMA = {"kpm": SCHEMAS["kpm_all"], "svm": {**SCHEMAS["svm_cv"], "time_cv_s": Range(float, 0),
                                             "at_grid_edge": bool}}


def check_pair(result, C_grid, max_dim=None):
    """Why a stored :func:`pair_task` result is impossible (None if it is not): its KPM part
    by :func:`kpm_reproduce.experiments.kpm_tables.check_kpm_all`, its SVM part by
    :func:`kpm_reproduce.experiments.kpm_tables.check_svm_cv`."""
    return check_kpm_all(result["kpm"], max_dim) or check_svm_cv(result["svm"], C_grid)


def _config(st):
    return {"protocol": "kpm-13/1", "cv": st.cv, "sigmas": SIGMAS, "max_dim": st.max_dim,
            "slope_factor": 2.0, "C_grid": [float(c) for c in st.C_grid]}


def results_path(st):
    """The task results file of these settings (``<out>/runs/kpm13-<hash>.json``)."""
    h = hashlib.sha1(json.dumps(_config(st), sort_keys=True).encode()).hexdigest()[:10]
    return st.out / "runs" / f"kpm13-{h}.json"


def _svm_config(st, c_rule):
    from kpm.machine import SVM_SOLVER, TWO_STAGE_MAX_SWEEPS

    rule = SVM_C_RULES[c_rule]
    config = {"protocol": "kpm-13-svm-formulation/1", "cv": st.cv, "sigmas": SIGMAS,
              "C": list(rule["C"]), "tol": SVM_SOLVER["tol"], "max_sweeps": SVM_SOLVER["max_sweeps"]}
    if c_rule != "joint":  # (the joint rule's records predate the rule's name)
        config.update(c_selection=rule["c_selection"], max_sweeps=TWO_STAGE_MAX_SWEEPS)
    # the estimator's defaults that define its SVM (records of the hinge with a basis per fold,
    # made before these were parameters, have none of them)
    defaults = KernelProjectionMachine().get_params()
    config.update({k: defaults[k] for k in ("loss", "cv_basis", "early_stopping")})
    return config


def svm_results_path(st, c_rule="joint"):
    """The task results file of a ``formulation='svm'`` column (``<out>/runs/kpm13svm-<hash>.json``)."""
    h = hashlib.sha1(json.dumps(_svm_config(st, c_rule), sort_keys=True).encode()).hexdigest()[:10]
    return st.out / "runs" / f"kpm13svm-{h}.json"


def _keys(st, realizations):
    """``(dataset, realization)`` pairs, realization-major: a partial run covers every data
    set evenly."""
    return sorted(((d, r) for d in st.datasets for r in realizations[d]),
                  key=lambda dr: (dr[1], st.datasets.index(dr[0])))


def _run_or_read(st, path, tasks, config, description):
    """Run the tasks (or, with ``report_only``, read them); ``{(dataset, realization): result}``."""
    if st.report_only:
        res = require_results(path, tasks)[1] if path.exists() else {}
    else:
        res = run_tasks(tasks, path, jobs=st.jobs, resume=st.resume, overwrite=st.overwrite,
                        config=config, progress=st.progress, description=description,
                        on_error="record", notify=st.notify)
    wanted = {t.key for t in tasks}
    return {(k.split("/")[1], int(k.split("/")[2][1:])): v for k, v in res.items() if k in wanted}


def _svm_tasks(st, c_rule):
    return [Task(f"kpm13svm/{d}/r{r:03d}", svm_formulation_task,
                 dict(dataset=d, realization=r, sigma=SIGMAS[d], cv=st.cv, data_dir=st.data_dir,
                      c_rule=c_rule),
                 SVM_SCHEMA) for d, r in _keys(st, st.svm_realizations)]


def _svm_results(st, c_rule):
    """Run (or read) the ``formulation='svm'`` tasks of one C rule; ``{(d, r): result}``."""
    tasks = _svm_tasks(st, c_rule)
    if not tasks:
        return {}
    return _run_or_read(st, svm_results_path(st, c_rule), tasks, _svm_config(st, c_rule),
                        f"KPM formulation='svm', C rule {c_rule}")


def _tasks(st):
    return [Task(f"kpm13/{d}/r{r:03d}", pair_task,
                 dict(dataset=d, realization=r, sigma=SIGMAS[d], C_grid=st.C_grid, cv=st.cv,
                      max_dim=st.max_dim, data_dir=st.data_dir), SCHEMA,
                 partial(check_pair, C_grid=st.C_grid, max_dim=st.max_dim))
            for d, r in _keys(st, st.realizations)]


def _results(st):
    """Run (or, with ``report_only``, read) the tasks; ``({(d, r): result}, failures)``."""
    path, tasks = results_path(st), _tasks(st)
    out = _run_or_read(st, path, tasks, _config(st), "KPM + SVM")
    wanted = {t.key for t in tasks}
    failures = ({k: v for k, v in load_results(path).get("errors", {}).items() if k in wanted}
                if path.exists() else {})
    return out, failures


def _ms(vals):
    """Mean and standard error (std ddof=1 / sqrt(n)) of a list; (None, None) when empty."""
    v = np.asarray(vals, dtype=float)
    if v.size == 0:
        return None, None
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0)


def summarize(kpm, svm, datasets):
    """Per-set statistics from the task results (``{(d, r): result}`` of each family).

    Only realizations done by both methods are counted, so every column of a row covers
    the same training sets.
    """
    rows = []
    for d in datasets:
        both = sorted(r for (dd, r) in kpm if dd == d and (d, r) in svm)
        row = {"dataset": d, "sigma": SIGMAS[d], "n": len(both), "realizations": both}
        for rule in RULES:
            m, se = _ms([kpm[(d, r)][rule]["error"] for r in both])
            row[rule] = {"mean": m, "se": se,
                         "D_median": float(np.median([kpm[(d, r)][rule]["D"] for r in both]))
                         if both else None}
        m, se = _ms([svm[(d, r)]["error"] for r in both])
        row["svm"] = {"mean": m, "se": se,
                      "C_median": float(np.median([svm[(d, r)]["C"] for r in both]))
                      if both else None,
                      "at_grid_edge": int(sum(bool(svm[(d, r)]["at_grid_edge"]) for r in both))}
        row["oracle"] = dict(zip(("mean", "se"), _ms([min(kpm[(d, r)]["test_error_path"])
                                                       for r in both])))
        paths = [kpm[(d, r)]["test_error_path"] for r in both]
        row["oracle"]["D_median"] = (float(np.median([int(np.argmin(p)) + 1 for p in paths]))
                                     if both else None)
        row["path_end_D_median"] = (float(np.median([kpm[(d, r)]["max_dim"] for r in both]))
                                    if both else None)
        row["time_s"] = {
            "kpm": _ms([kpm[(d, r)]["time_fit_s"] for r in both])[0],
            "svm": _ms([svm[(d, r)]["time_cv_s"] + svm[(d, r)]["time_fit_s"] for r in both])[0]}
        row["gap_cv_minus_svm"] = (None if not both else row["cv"]["mean"] - row["svm"]["mean"])
        se2 = (None if not both else math.hypot(row["cv"]["se"], row["svm"]["se"]))
        row["trails_svm"] = len(both) > 1 and row["gap_cv_minus_svm"] > se2
        pub = BRAUN_PAPER[d]
        row["published"] = {"kpcr": list(pub[3]), "krr": list(pub[4]), "svm": list(pub[5])}
        rows.append(row)
    return rows


def summarize_svm_formulation(ksvm, kpm, svm, datasets):
    """Per set: the ``formulation='svm'`` column against the SVM and the paper's KPM (D by CV)
    on the same realizations (those done by all three)."""
    rows = []
    for d in datasets:
        rs = sorted(r for (dd, r) in ksvm if dd == d and (d, r) in svm and (d, r) in kpm)
        row = {"dataset": d, "n": len(rs), "realizations": rs}
        for name, res, key in (("kpm_svm", ksvm, None), ("svm", svm, None), ("kpm_cv", kpm, "cv")):
            m, se = _ms([(res[(d, r)][key] if key else res[(d, r)])["error"] for r in rs])
            row[name] = {"mean": m, "se": se}
        row["gap"] = _ms([ksvm[(d, r)]["error"] - svm[(d, r)]["error"] for r in rs])
        row["D_median"] = float(np.median([ksvm[(d, r)]["D"] for r in rs])) if rs else None
        row["C_median"] = float(np.median([ksvm[(d, r)]["C"] for r in rs])) if rs else None
        row["time_s"] = {"kpm_svm": _ms([ksvm[(d, r)]["time_fit_s"] for r in rs])[0],
                         "svm": _ms([svm[(d, r)]["time_cv_s"] + svm[(d, r)]["time_fit_s"]
                                     for r in rs])[0]}
        rows.append(row)
    return rows


_C_RULE_TEXT = {
    "joint": "(D, C) chosen jointly by the same 5-fold CV",
    "two-stage": ("`c_selection='two-stage'`: C chosen by the same 5-fold CV of the SVM at each "
                  "fold's largest D (the kernel SVM), then D by CV at that C"),
}


def _svm_formulation_markdown(rows, c_rule):
    done = [r for r in rows if r["n"]]
    if not done:
        return []
    Cs = SVM_C_RULES[c_rule]["C"]
    default = KernelProjectionMachine().get_params()["c_selection"] == c_rule
    md = ["", f"## Beyond the papers: the SVM restricted to S_D (`formulation='svm'`, C rule `{c_rule}`"
          f"{'; the estimator default with D by CV' if default else ''})", "",
          "`KernelProjectionMachine(formulation='svm', cv=5)` with the estimator's other defaults "
          "(by default `cv='auto'` chooses by the leave-one-out error instead of 5 folds: "
          "`docs/results/kpm13_default.md`): in each S_D "
          "the soft-margin SVM with the squared hinge on the kernel-PCA features (at D = rank, the "
          "kernel SVM), each CV fold's basis by Rayleigh-Ritz in the training set's, the folds' "
          f"paths along D stopped once the CV error stopped improving, {_C_RULE_TEXT[c_rule]}, "
          f"C in {{{', '.join(f'{c:.3g}' for c in Cs)}}}. Every column of "
          "a row covers the same R realizations (1..R); gap = formulation='svm' − SVM, mean ± "
          "standard error of the per-realization differences.", "",
          "| dataset | R | formulation='svm' | SVM (C by CV) | KPM, D by CV (paper) | gap | "
          "D, C (median) | time (s): formulation='svm' / SVM |",
          "|---|---|---|---|---|---|---|---|"]
    for r in done:
        t = r["time_s"]
        md.append(f"| {r['dataset']} | {r['n']} | {_f(r['kpm_svm'])} | {_f(r['svm'])} | "
                  f"{_f(r['kpm_cv'])} | {r['gap'][0]:+.2f} ± {r['gap'][1]:.2f} | "
                  f"{r['D_median']:g}, {r['C_median']:g} | {t['kpm_svm']:.1f} / {t['svm']:.1f} |")
    means = {k: np.mean([r[k]["mean"] for r in done]) for k in ("kpm_svm", "svm", "kpm_cv")}
    worst = max(done, key=lambda r: r["gap"][0])
    md += ["", f"Mean over the {len(done)} sets (same realizations): formulation='svm' "
           f"{means['kpm_svm']:.2f}, SVM {means['svm']:.2f}, KPM D by CV {means['kpm_cv']:.2f}; "
           f"largest gap to the SVM: {worst['dataset']} {worst['gap'][0]:+.2f}. Times: mean wall "
           "time per realization of the full model selection, one BLAS thread, each column from "
           "the run that computed it (the SVM's from the main table's run): where the machine's "
           "load differed between those runs the two are not comparable; "
           "`benchmarks/bench_kpm.py --variants default exact` times the estimator's default and "
           "the papers' KPM against the SVM in one run."]
    return md


def gap_evidence(data):
    """Where the KPM (D by CV) trails the SVM by more than one standard error: why.

    From the stored paths of each realization (``data`` = the JSON report): the selection
    loss (error at the CV D minus the oracle D's), the path's own gap (oracle minus SVM),
    the D chosen by CV, the oracle D and the last D of the selection sweep (where every CV
    fold's path has reached its training-risk floor; the full-data path may reach its own
    floor later), and the test error of the model at that D.

    Returns
    -------
    list of dict, one per trailing set
    """
    out = []
    for row in data["rows"]:
        if not row["trails_svm"]:
            continue
        per = data["per_realization"][row["dataset"]]
        cv = np.array([p["kpm"]["cv"]["error"] for p in per])
        orc = np.array([min(p["kpm_test_error_path"]) for p in per])
        svm = np.array([p["svm"]["error"] for p in per])
        end = np.array([p["kpm_test_error_path"][-1] for p in per])
        d_cv = np.array([p["kpm"]["cv"]["D"] for p in per])
        d_or = np.array([int(np.argmin(p["kpm_test_error_path"])) + 1 for p in per])
        out.append({
            "dataset": row["dataset"], "n": len(per),
            "gap": _ms(cv - svm), "selection_loss": _ms(cv - orc), "path_gap": _ms(orc - svm),
            "path_end_error": _ms(end), "D_cv_median": float(np.median(d_cv)),
            "D_oracle_median": float(np.median(d_or)),
            "D_end_median": float(np.median([len(p["kpm_test_error_path"]) for p in per])),
            "cv_below_oracle": int(np.sum(d_cv < d_or)), "cv_above_oracle": int(np.sum(d_cv > d_or)),
        })
    return out


def _gap_markdown(ev):
    if not ev:
        return []
    g = lambda t: f"{t[0]:+.2f} ± {t[1]:.2f}"
    md = ["", "## Where the KPM (D by CV) trails the SVM", "",
          "Per realization, then mean ± standard error: gap = KPM(CV) − SVM; selection loss = "
          "KPM(CV) − KPM(oracle D); path gap = KPM(oracle D) − SVM (what no rule for D can "
          "recover at this σ); path end: the full-data model at the last D of the selection "
          "sweep (where every CV fold's path has reached its hinge-risk floor). CV D < / > oracle D: in how many realizations.", "",
          "| dataset | R | gap | selection loss | path gap | D: CV / oracle / path end "
          "(median) | CV D < / > oracle D | error at path end |",
          "|---|---|---|---|---|---|---|---|"]
    for e in ev:
        md.append(f"| {e['dataset']} | {e['n']} | {g(e['gap'])} | {g(e['selection_loss'])} | "
                  f"{g(e['path_gap'])} | {e['D_cv_median']:g} / {e['D_oracle_median']:g} / "
                  f"{e['D_end_median']:g} | {e['cv_below_oracle']} / {e['cv_above_oracle']} | "
                  f"{e['path_end_error'][0]:.2f} ± {e['path_end_error'][1]:.2f} |")
    return md


def _f(c):
    return "—" if c["mean"] is None else f"{c['mean']:.2f} ± {c['se']:.2f}"


def _markdown(st, rows, complete, failures, updated):
    md = ["# KPM versus the SVM on the 13 Rätsch benchmarks", "", *header(st.command),
          "Blanchard et al. (NIPS 2004)'s Table-2 protocol on all 13 IDA sets: the KPM's D and "
          "the SVM's C each chosen by 5-fold CV on every training set; the protocol is in "
          "`reproduction/src/kpm_reproduce/experiments/kpm13.py`. σ per set: the width chosen "
          "by Braun et al. (2008)'s likelihood (`kpm reproduce braun-table`), not the median "
          "heuristic.", ""]
    if not complete:
        md += ["**PARTIAL RESULTS**: not every set covers all its realizations; column R "
               "says how many (realizations 1..R of each set, the same ones for every "
               "method of a row).", ""]
    md += ["Test error in %, mean ± standard error over the R realizations. Published: Braun, "
           "Buhmann & Müller (2008), mean ± std over their realizations. `*` marks a set "
           "where the KPM (D by CV) trails the SVM by more than one standard error of the "
           "difference.", "",
           "| dataset | σ | R | KPM, D by CV | KPM, λ·D (λ by CV) | KPM, slope | SVM (C by CV) "
           "| oracle D | D (CV / pen / slope / oracle / path end), median | published kPCR "
           "| KRR | SVM | time (s): KPM / SVM |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d = r["dataset"]
        pub = r["published"]
        Ds = " / ".join("—" if v is None else f"{v:g}"
                        for v in [r[k]["D_median"] for k in (*RULES, "oracle")]
                        + [r["path_end_D_median"]])
        t = r["time_s"]
        ts = "—" if t["kpm"] is None else f"{t['kpm']:.1f} / {t['svm']:.1f}"
        md.append(f"| {d}{' *' if r['trails_svm'] else ''} | {r['sigma']:.3g} | "
                  f"{r['n']}/{st.total[d]} | {_f(r['cv'])} | {_f(r['penalty'])} | "
                  f"{_f(r['slope'])} | {_f(r['svm'])} | {_f(r['oracle'])} | {Ds} | "
                  + " | ".join(f"{m:.1f} ± {s:.1f}" for m, s in (pub["kpcr"], pub["krr"],
                                                                pub["svm"]))
                  + f" | {ts} |")
    means = {k: [r[k]["mean"] for r in rows if r["n"]] for k in (*RULES, "svm")}
    if all(means.values()):
        md += ["", "Mean over the sets with results: " + "; ".join(
            f"{_RULE_NAMES.get(k, 'SVM')} {np.mean(v):.2f}" for k, v in means.items()) + "."]
    md += ["", "Oracle D: the best D of the full-data path in hindsight (the test error's "
           "minimum over D; no rule can beat it). Path end: the last D of the selection "
           "sweep, where every CV fold's path has reached its training hinge-risk floor (or "
           "its rank); the full-data path may reach its own floor at a larger D. Time: mean "
           "wall time per realization of the full model selection, one BLAS thread (KPM: the one fit that answers all "
           "three rules, CV of D and of λ included; SVM: 5-fold CV over the "
           f"{len(st.C_grid)}-value C grid in [{st.C_grid[0]:g}, {st.C_grid[-1]:g}] plus the "
           "final fit). SVM: the CV choice of C is on an end of the grid in "
           + ", ".join(f"{r['dataset']} {r['svm']['at_grid_edge']}" for r in rows if r["n"])
           + " realizations."]
    md += ["", f"Task results: `runs/{results_path(st).name}` (last updated {updated})"
           + (", tabulated by this `--report-only` run (nothing recomputed; the times are "
              "those of the run that computed them, same machine)." if st.report_only else ".")]
    if failures:
        md += ["", f"**{len(failures)} task(s) failed** (listed in the JSON):"]
        md += [f"- `{k}`: {v}" for k, v in sorted(failures.items())]
    return "\n".join(md) + "\n"


def _start(st):
    """Before computing: report-only needs the saved results of these settings; a run
    without ``resume`` or ``overwrite`` must not replace finished results."""
    path = results_path(st)
    if st.report_only:
        if not st.out.is_dir():
            raise FileNotFoundError(
                f"{st.out}: no such folder; --report-only tabulates the results that `kpm "
                "reproduce kpm-13` saved in --out (check the folder name)")
        if not path.exists():
            runs = st.out / "runs"
            others = sorted(p.name for p in runs.glob("kpm13-*.json")) if runs.is_dir() else []
            other = (f"; runs/ holds {', '.join(others)}, written with other settings (give "
                     "--report-only the options of the run that wrote them)" if others else "")
            raise FileNotFoundError(
                f"{st.out} holds no results of `kpm reproduce kpm-13` with these settings (no "
                f"runs/{path.name}){other}; run the command without --report-only first")
        return
    check_replace(path, _config(st), resume=st.resume, overwrite=st.overwrite)
    for c in st.svm_c_rules:
        if _svm_tasks(st, c):
            check_replace(svm_results_path(st, c), _svm_config(st, c), resume=st.resume,
                          overwrite=st.overwrite)


def run_kpm13(st):
    """Run (or tabulate) the comparison; write ``<out>/kpm_13.md`` and ``.json``."""
    _start(st)
    res, failures = _results(st)
    kpm = {k: v["kpm"] for k, v in res.items()}
    svm = {k: v["svm"] for k, v in res.items()}
    rows = summarize(kpm, svm, st.datasets)
    svm_rows = {c: summarize_svm_formulation(_svm_results(st, c), kpm, svm, st.datasets)
                for c in st.svm_c_rules}
    complete = all(r["n"] == st.total[r["dataset"]] for r in rows)
    data = {"command": "kpm-13", "complete": complete,
            "settings": {"datasets": list(st.datasets), "sigmas": SIGMAS,
                         "sigma_source": "braun-table (Braun et al. 2008 likelihood)",
                         "C_grid": [float(st.C_grid[0]), float(st.C_grid[-1]),
                                    int(st.C_grid.size)], "cv": st.cv, "max_dim": st.max_dim,
                         "realizations_total": st.total},
            "rows": rows, "svm_formulation_rows": svm_rows, "failures": failures,
            "per_realization": {
                d: [{"realization": r, "kpm": {k: kpm[(d, r)][k] for k in RULES},
                     "kpm_test_error_path": kpm[(d, r)]["test_error_path"],
                     "kpm_cv_error_path": kpm[(d, r)]["cv_error_path"],
                     "kpm_time_s": kpm[(d, r)]["time_fit_s"],
                     "svm": {k: svm[(d, r)][k] for k in ("error", "C", "at_grid_edge")},
                     "svm_time_s": svm[(d, r)]["time_cv_s"] + svm[(d, r)]["time_fit_s"]}
                    for r in row["realizations"]]
                for d, row in zip(st.datasets, rows)}}
    st.out.mkdir(parents=True, exist_ok=True)
    data["gap_evidence"] = gap_evidence(data)
    atomic_write_json(st.out / "kpm_13.json", data)
    path = results_path(st)
    updated = load_results(path).get("updated", "?") if path.exists() else "never"
    md = _markdown(st, rows, complete, failures, updated)
    md += "\n".join(_gap_markdown(data["gap_evidence"])) + "\n"
    for c_rule, rows_c in svm_rows.items():
        md += "\n".join(_svm_formulation_markdown(rows_c, c_rule)) + "\n"
    atomic_write_text(st.out / "kpm_13.md", md)
    return data
