"""Why the KPM (D by CV) trails the SVM on some Rätsch sets: width, centring, path, selection.

``kpm reproduce kpm-13`` (``docs/results/kpm_13.md``) compares the Kernel Projection Machine
of Blanchard, Massart, Vert & Zwald (NIPS 2004) with the CV-tuned SVM on the 13 IDA sets, at
one width per set (:data:`kpm_reproduce.experiments.kpm13.SIGMAS`, Braun et al. 2008's likelihood)
and with the uncentred kernel. On the sets where the KPM trails, this script refits the KPM
on the first R realizations and measures, per realization:

* **width**: the test error at the D chosen by 5-fold CV and at the oracle D (the best D of
  the full-data path, chosen on the test set: a lower bound for any rule selecting D) for
  σ × each of :data:`SIGMA_FACTORS`; and the error when σ is chosen jointly with D by the
  same CV over those widths;
* **centring**: the same two errors with the centred kernel matrix at the set's σ;
* **path** (every fit): the first D where the full-data training hinge risk reaches its
  floor (zero, or the loss forced by duplicated inputs with both labels; the path stops
  there), the RKHS norm² ``Σ_j β_j²/λ_j`` of the LP solution at the CV D, the oracle D
  and the path end (coefficient growth), the training error at the CV D and at the end;
* **selection** (every fit): CV D versus oracle D, and the flatness of the CV curve: the
  CV error at the oracle D minus the CV minimum (small: CV cannot tell the two apart).

The KPM is fitted as in ``kpm-13`` (``selection='cv'``, ``cv=5``, ``random_state`` = the
realization, ``cv_duplicates='split'``; the full-data path solved to its end with
``extend_path``). The SVM errors are read from the ``kpm-13`` report's JSON
(``--reference``, per realization), so every number of a row covers the same realizations.
At factor 1, uncentred, the fit is the one of ``kpm-13``: the report counts the
realizations whose CV D and error agree with the stored ones.

Each fit runs in a forked child process with a time limit (``--fit-timeout``); a fit that
exceeds it is recorded as such. Results are saved after every fit in
``<out>/kpm13_diagnostics.json`` (``--resume`` skips the fits already there) and tabulated
in ``<out>/kpm13_diagnostics.md``.

Usage::

    python benchmarks/kpm13_diagnostics.py [--datasets banana heart] [--realizations 10]
        [--resume] [--out kpm-results]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

#: The sets where ``kpm_13.md`` (complete run) marks the KPM, D by CV, as trailing the SVM
#: by more than one standard error, cheapest first.
TRAILING = ("thyroid", "titanic", "heart", "ringnorm", "twonorm", "breast_cancer", "banana",
            "waveform", "splice", "image")
#: Width factors (σ × factor) of the width scan.
SIGMA_FACTORS = (0.5, 1 / math.sqrt(2), 1.0, math.sqrt(2), 2.0)
#: Default number of realizations (1..R); the slow sets get fewer.
DEFAULT_R = 10
SLOW_R = {"image": 5, "splice": 5}
#: What a stored fit must hold to be reused by ``--resume``.
MEASURES = {"error_cv", "error_oracle", "error_oracle_split", "D_floor", "oracle_to_floor",
            "norm2_floor", "train_error_floor"}
REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "results" / "kpm_13.json"


def fit_key(dataset, realization, factor, kind):
    name = kind if isinstance(kind, str) else ("centred" if kind else "uncentred")
    return f"{dataset}/r{realization:03d}/s{factor:.4f}/{name}"


def _rkhs_norm2(model):
    """``Σ_j β_j²/λ_j`` at every solved D of the full-data path (two classes)."""
    coef = np.asarray(model.coef_path_[0], dtype=float)
    lam = np.asarray(model.eigenvalues_, dtype=float)[: coef.shape[1]]
    return (coef ** 2 / lam[None, :]).sum(axis=1)


def _errors(model, X, y):
    """0-1 error in % of the full-data path's model at every D of ``path_dims_``."""
    if not np.array_equal(model.path_dims_, np.arange(1, len(model.path_dims_) + 1)):
        raise RuntimeError("the full-data path is not solved at every D = 1..end")
    return 100.0 * np.mean(model.predict_path(X) != y[:, None], axis=0)


def split_oracle(wrong, seed):
    """The oracle D without its optimism: D chosen on one half of the test set, its error
    measured on the other half, and the other way round (mean of the two, in %).

    ``wrong``: (n_test, n_dims) booleans, misclassified by the model of each D.
    """
    perm = np.random.default_rng(seed).permutation(wrong.shape[0])
    a, b = perm[: len(perm) // 2], perm[len(perm) // 2:]
    ea, eb = wrong[a].mean(axis=0), wrong[b].mean(axis=0)
    return float(50.0 * (eb[np.argmin(ea)] + ea[np.argmin(eb)]))


def measure_fit(split, sigma, centered, random_state, cv=5):
    """Two KPM fits and what their paths say; a dict of scalars (errors in %).

    * the protocol's fit (D by CV, as ``kpm-13``): its models are D = 1 .. the end of the
      CV sweep (every fold's training hinge risk at its floor); the CV D, the oracle D
      among these models, their CV errors;
    * the full-data path alone (``selection='slope'``: no CV), solved until the training
      hinge risk reaches its floor: where that happens, the coefficient growth along D,
      the training and test error there.
    """
    from kpm import KernelProjectionMachine

    params = dict(kernel="rbf", sigma=sigma, centered=centered, random_state=random_state, keep_paths=True)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = KernelProjectionMachine(selection="cv", cv=cv, cv_duplicates="split", **params, formulation="paper")
        model.fit(split.X_train, split.y_train)
        model.extend_path()
        fit_s = time.perf_counter() - t0
        full = KernelProjectionMachine(selection="slope", **params, formulation="paper").fit(split.X_train,
                                                                        split.y_train)
    test = _errors(model, split.X_test, split.y_test)
    wrong = model.predict_path(split.X_test) != split.y_test[:, None]
    n_path = test.size
    cv_err = 100.0 * np.asarray(model.selection_curve_["cv_error"], dtype=float)[:n_path]
    d_cv, d_or = int(model.n_components_), int(np.argmin(test)) + 1
    hinge = np.asarray(full.selection_curve_["hinge_risk"], dtype=float)
    floor = float(np.nanmin(hinge))
    d_floor = int(np.flatnonzero(hinge <= floor + 1e-9)[0]) + 1
    norm2 = _rkhs_norm2(full)
    norm_at = lambda D: float(norm2[min(D, norm2.size) - 1])
    at = lambda e, D: float(e[min(D, e.size) - 1])
    test_full = _errors(full, split.X_test, split.y_test)
    train_full = _errors(full, split.X_train, split.y_train)
    return {
        "sigma": float(sigma), "centered": bool(centered), "n_train": int(len(split.y_train)),
        "D_cv": d_cv, "error_cv": float(test[d_cv - 1]),
        "D_oracle": d_or, "error_oracle": float(test[d_or - 1]),
        "error_oracle_split": split_oracle(wrong, random_state),
        "cv_at_cv": float(cv_err[d_cv - 1]), "cv_at_oracle": float(cv_err[d_or - 1]),
        "D_end": n_path, "error_end": float(test[-1]),
        "D_floor": d_floor, "hinge_floor": floor, "error_floor": at(test_full, d_floor),
        "train_error_floor": at(train_full, d_floor),
        "hinge_at_cv": at(hinge, d_cv), "train_error_cv": at(train_full, d_cv),
        "train_error_end": at(train_full, n_path),
        "oracle_to_floor": float(np.min(test_full[:d_floor])),
        "norm2_cv": norm_at(d_cv), "norm2_oracle": norm_at(d_or), "norm2_end": norm_at(n_path),
        "norm2_floor": norm_at(d_floor), "fit_s": fit_s,
        "warnings": sorted({type(w.message).__name__ for w in caught}),
    }


def _child(conn, split, sigma, centered, random_state):
    try:
        conn.send(("ok", measure_fit(split, sigma, centered, random_state)))
    except Exception as exc:  # noqa: BLE001 - reported, not hidden
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    conn.close()


def run_fit(split, sigma, centered, random_state, timeout):
    """:func:`measure_fit` in a forked process, killed after ``timeout`` seconds."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, split, sigma, centered, random_state))
    proc.start()
    child.close()
    if parent.poll(timeout):
        status, value = parent.recv()
        proc.join()
    else:
        proc.kill()
        proc.join()
        status, value = "error", f"timeout: no result after {timeout:g} s"
    return value if status == "ok" else {"error": value}


def planned_fits(datasets, realizations, factors, svm=None):
    """``(dataset, r, factor, kind)`` of every fit: the KPM's width scan (kind False), the
    centred KPM at the set's σ (True), and the SVM at the widths ``svm`` (``'svm'``;
    default: every width)."""
    svm = factors if svm is None else svm
    out = []
    for d in datasets:
        for r in range(1, realizations[d] + 1):
            out += [(d, r, f, False) for f in factors]
            out.append((d, r, 1.0, True))
            out += [(d, r, f, "svm") for f in svm]
    return out


def run_svm(dataset, realization, sigma, data_dir=None):
    """The SVM of ``kpm-13`` (C by 5-fold CV over its grid) at width ``sigma``."""
    from kpm_reproduce.experiments.kpm_tables import C_GRID, svm_cv_task

    try:
        res = svm_cv_task(dataset, realization, sigma, C_GRID, cv=5, data_dir=data_dir)
    except Exception as exc:  # noqa: BLE001 - recorded and listed in the report
        return {"sigma": float(sigma), "error": f"{type(exc).__name__}: {exc}"}
    return {"sigma": float(sigma), "error_svm": float(res["error"]), "C": float(res["C"]),
            "at_grid_edge": bool(res["at_grid_edge"]),
            "fit_s": float(res["time_cv_s"] + res["time_fit_s"])}


def _ms(values):
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return None
    return [float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0]


def _reference_rows(reference, dataset):
    per = reference.get("per_realization", {}).get(dataset, [])
    return {p["realization"]: p for p in per}


def _width_rows(dataset, fits, factors, done, ref, at):
    """The KPM (and, where it was run, the SVM) at each width of the scan."""
    svm_at = {f: [fits[(dataset, r, f, "svm")]["error_svm"] for r in done
                  if "error_svm" in fits.get((dataset, r, f, "svm"), {})] for f in factors}
    fitted = {f: list(v) for f, v in svm_at.items()}
    if 1.0 in svm_at and len(svm_at[1.0]) < len(done) and all(r in ref for r in done):
        svm_at[1.0] = [ref[r]["svm"]["error"] for r in done]  # kpm-13's SVM, same σ
    rows = []
    for f in factors:
        fs = at(f)
        rows.append({
            "factor": f, "sigma": fs[0]["sigma"],
            "error_cv": _ms([x["error_cv"] for x in fs]),
            "error_oracle": _ms([x["error_oracle"] for x in fs]),
            "D_cv_median": float(np.median([x["D_cv"] for x in fs])),
            "D_oracle_median": float(np.median([x["D_oracle"] for x in fs])),
            "D_floor_median": float(np.median([x["D_floor"] for x in fs])),
            "fit_s": _ms([x["fit_s"] for x in fs])[0],
            "svm_error": _ms(svm_at[f]) if len(svm_at[f]) == len(done) else None,
            "svm_minus_reference": (_ms([e - ref[r]["svm"]["error"] for r, e in
                                         zip(done, fitted[f])])
                                    if len(fitted[f]) == len(done)
                                    and all(r in ref for r in done) else None)})
    return rows


def _sigma_by_cv(dataset, fits, factors, done):
    """σ chosen with D by the same CV over the width grid (ties: the width nearest σ)."""
    joint = []
    for r in done:
        best = min(factors, key=lambda f: (fits[(dataset, r, f, False)]["cv_at_cv"],
                                           abs(math.log(f))))
        joint.append((best, fits[(dataset, r, best, False)]["error_cv"]))
    return {"error": _ms([e for _, e in joint]),
            "minus_sigma": _ms([e - fits[(dataset, r, 1.0, False)]["error_cv"]
                                for r, (_, e) in zip(done, joint)]),
            "factors": [f for f, _ in joint]}


def _centring_stats(base, cen, svm):
    """The centred KPM at the set's σ, and its difference from the uncentred one (paired)."""
    return {
        "error_cv": _ms([x["error_cv"] for x in cen]),
        "error_oracle": _ms([x["error_oracle"] for x in cen]),
        "diff_cv": _ms([c["error_cv"] - u["error_cv"] for c, u in zip(cen, base)]),
        "diff_oracle": _ms([c["error_oracle"] - u["error_oracle"] for c, u in zip(cen, base)]),
        "minus_svm": (None if svm is None
                      else _ms([c["error_cv"] - e for c, e in zip(cen, svm)])),
        "D_cv_median": float(np.median([x["D_cv"] for x in cen])),
        "D_floor_median": float(np.median([x["D_floor"] for x in cen]))}


def _path_stats(base):
    """Where the full-data path reaches its floor, and its coefficients' growth."""
    med = lambda k: float(np.median([x[k] for x in base]))
    return {
        "D_floor_median": med("D_floor"), "D_end_median": med("D_end"),
        "floor_zero": int(sum(x["hinge_floor"] <= 1e-6 for x in base)),
        "hinge_floor_max": float(max(x["hinge_floor"] for x in base)),
        **{k: _ms([x[k] for x in base]) for k in (
            "error_end", "error_floor", "oracle_to_floor", "train_error_cv",
            "train_error_floor", "hinge_at_cv")},
        "norm2_cv_median": med("norm2_cv"), "norm2_oracle_median": med("norm2_oracle"),
        "norm2_floor_median": med("norm2_floor")}


def _selection_stats(base):
    """The CV D against the oracle D."""
    return {
        "error_cv": _ms([x["error_cv"] for x in base]),
        "error_oracle": _ms([x["error_oracle"] for x in base]),
        "loss": _ms([x["error_cv"] - x["error_oracle"] for x in base]),
        "error_oracle_split": _ms([x["error_oracle_split"] for x in base]),
        "loss_split": _ms([x["error_cv"] - x["error_oracle_split"] for x in base]),
        "cv_flatness": _ms([x["cv_at_oracle"] - x["cv_at_cv"] for x in base]),
        "D_cv_median": float(np.median([x["D_cv"] for x in base])),
        "D_oracle_median": float(np.median([x["D_oracle"] for x in base])),
        "cv_below_oracle": int(sum(x["D_cv"] < x["D_oracle"] for x in base)),
        "cv_above_oracle": int(sum(x["D_cv"] > x["D_oracle"] for x in base))}


def summarize_set(dataset, fits, factors, reference):
    """Per-set statistics over the realizations whose every fit finished."""
    ref = _reference_rows(reference, dataset)
    rs = sorted({k[1] for k in fits if k[0] == dataset})
    keys = lambda r: [(dataset, r, f, False) for f in factors] + [(dataset, r, 1.0, True)]
    done = [r for r in rs if all(k in fits and "error" not in fits[k]
                                 and MEASURES <= set(fits[k]) for k in keys(r))]
    failed = sorted(f"{fit_key(*k)}: {fits[k]['error']}" for r in rs for k in keys(r)
                    if k in fits and "error" in fits[k])
    row = {"dataset": dataset, "realizations": done, "n": len(done), "failed": failed}
    if not done:
        return row
    # fits where an LP of a path was not solved (the path then ends early, see the estimator)
    row["lp_trouble"] = sorted(fit_key(*k) for r in done for k in keys(r)
                               if "ConvergenceWarning" in fits[k]["warnings"])
    at = lambda f, c=False: [fits[(dataset, r, f, c)] for r in done]
    svm = [ref[r]["svm"]["error"] if r in ref else np.nan for r in done]
    row["svm"] = _ms(svm) if not np.any(np.isnan(svm)) else None
    row["width"] = _width_rows(dataset, fits, factors, done, ref, at)
    row["sigma_by_cv"] = _sigma_by_cv(dataset, fits, factors, done)
    base, cen = at(1.0), at(1.0, True)
    row["centred"] = _centring_stats(base, cen, svm if row["svm"] is not None else None)
    row["path"] = _path_stats(base)
    row["selection"] = _selection_stats(base)
    same = [r for r, x in zip(done, base) if r in ref
            and ref[r]["kpm"]["cv"]["D"] == x["D_cv"]
            and abs(ref[r]["kpm"]["cv"]["error"] - x["error_cv"]) < 1e-6]
    row["matches_reference"] = len(same)
    if row["svm"] is not None:
        row["gap"] = _ms([x["error_cv"] - s for x, s in zip(base, svm)])
        row["path_gap"] = _ms([x["error_oracle"] - s for x, s in zip(base, svm)])
        row["path_gap_split"] = _ms([x["error_oracle_split"] - s for x, s in zip(base, svm)])
    return row


def _pm(t, signed=False):
    if t is None:
        return "—"
    return (f"{t[0]:+.2f}" if signed else f"{t[0]:.2f}") + f" ± {t[1]:.2f}"


def _fmt_factor(f):
    names = {0.5: "1/2", 1 / math.sqrt(2): "1/√2", 1.0: "1", math.sqrt(2): "√2", 2.0: "2"}
    return next((v for k, v in names.items() if abs(k - f) < 1e-9), f"{f:g}")


def report_lines(rows, factors, command, reference_name):
    from kpm_reproduce.experiments.provenance import header

    md = ["# KPM versus the SVM on the Rätsch sets where it trails: width, centring, path, "
          "selection", "", *header(command),
          "Per set, the first R realizations (column R: those whose every fit finished). KPM "
          "as in `kpm reproduce kpm-13` (D by 5-fold CV, σ of Braun et al. 2008's likelihood, "
          "uncentred) unless a column says otherwise; SVM: the C-by-CV SVC of the same "
          f"realizations, read from `{reference_name}`. Test error in %, mean ± standard "
          "error over the R realizations. Oracle D: the best D of the full-data path on the "
          "test set (a lower bound for any rule choosing D on that path).", ""]
    md += ["## Summary", "",
           "| set | R | SVM | KPM CV | oracle | gap | selection loss | path gap | split-test "
           "oracle: error / path gap | best σ × "
           "(by oracle): CV / oracle | σ by CV (with D) | centred − uncentred: CV / oracle "
           "| D: CV / oracle / floor | agrees with kpm-13 |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if not row["n"]:
            md.append(f"| {row['dataset']} | 0 |" + " — |" * 12)
            continue
        w = min(row["width"], key=lambda x: x["error_oracle"][0])
        s, c, p = row["selection"], row["centred"], row["path"]
        md.append(
            f"| {row['dataset']} | {row['n']} | {_pm(row['svm'])} | {_pm(s['error_cv'])} | "
            f"{_pm(s['error_oracle'])} | {_pm(row.get('gap'), True)} | {_pm(s['loss'], True)} "
            f"| {_pm(row.get('path_gap'), True)} | {_pm(s['error_oracle_split'])} / "
            f"{_pm(row.get('path_gap_split'), True)} | {_fmt_factor(w['factor'])}: "
            f"{_pm(w['error_cv'])} / {_pm(w['error_oracle'])} | {_pm(row['sigma_by_cv']['error'])} "
            f"({_pm(row['sigma_by_cv']['minus_sigma'], True)}) "
            f"| {_pm(c['diff_cv'], True)} / {_pm(c['diff_oracle'], True)} | "
            f"{s['D_cv_median']:g} / {s['D_oracle_median']:g} / {p['D_floor_median']:g} | "
            f"{row['matches_reference']}/{row['n']} |")
    md += ["", "Gap = KPM(CV) − SVM, selection loss = KPM(CV) − KPM(oracle D), path gap = "
           "KPM(oracle D) − SVM, all paired per realization. Split-test oracle: D chosen "
           "on a random half of the test set, its error measured on the other half (and the "
           "other way round): the oracle without the optimism of choosing and measuring on "
           "the same points (large on small test sets). Best σ ×: the width factor with "
           "the lowest mean oracle error. σ by CV: σ and D chosen together by the 5-fold CV "
           "error over the width grid (in brackets: minus the KPM at the set's σ, paired). D floor: first D where the full-data training hinge "
           "risk reaches its floor (medians; see below). Agrees with kpm-13: realizations whose CV D and "
           "error at factor 1 equal the stored ones."]
    md += ["", "## Width", "", "Test error at σ × factor: the KPM with D by CV / oracle D "
           "(median D by CV, oracle, floor); below it, the SVM (C by CV) at the same width "
           "(— where it was not run on every realization of the row; at × 1, kpm-13's SVM "
           "of the same realizations where this run did not refit it).", "",
           "| set | σ | " + " | ".join(f"× {_fmt_factor(f)}" for f in factors) + " |",
           "|---|---|" + "---|" * len(factors)]
    for row in rows:
        if row["n"]:
            md.append(f"| {row['dataset']} | {row['width'][0]['sigma'] / factors[0]:.3g} | "
                      + " | ".join(f"{_pm(w['error_cv'])} / {_pm(w['error_oracle'])} "
                                   f"({w['D_cv_median']:g}, {w['D_oracle_median']:g}, "
                                   f"{w['D_floor_median']:g})" for w in row["width"]) + " |")
            md.append(f"| {row['dataset']}: SVM | | "
                      + " | ".join(_pm(w["svm_error"]) for w in row["width"]) + " |")
    md += ["", "## Centring, path, selection (at the set's σ)", "",
           "| set | centred: CV / oracle (CV − SVM) | D floor: uncentred / centred | floor 0 in | D "
           "end of CV sweep | training error at CV D | error at floor | oracle up to floor "
           "| RKHS norm² at CV D / oracle D / floor (median) | CV D < / > oracle D | CV "
           "flatness |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if row["n"]:
            c, p, s = row["centred"], row["path"], row["selection"]
            md.append(
                f"| {row['dataset']} | {_pm(c['error_cv'])} / {_pm(c['error_oracle'])} "
                f"({_pm(c.get('minus_svm'), True)}) | "
                f"{p['D_floor_median']:g} / {c['D_floor_median']:g} | {p['floor_zero']}/{row['n']}"
                f" | {p['D_end_median']:g} | {_pm(p['train_error_cv'])} | "
                f"{_pm(p['error_floor'])} | {_pm(p['oracle_to_floor'])} | "
                f"{p['norm2_cv_median']:.3g} / {p['norm2_oracle_median']:.3g} / "
                f"{p['norm2_floor_median']:.3g} | {s['cv_below_oracle']} / "
                f"{s['cv_above_oracle']} | {_pm(s['cv_flatness'])} |")
    md += ["", "D floor: the first D where the training hinge risk of the full-data path "
           "(solved on its own, no CV) reaches its floor; floor 0 in: realizations where that "
           "floor is 0 (below 1e-6; else the loss forced by duplicated inputs with both "
           "labels). D end of "
           "CV sweep: the last model the protocol considers (every fold's training risk at "
           "its floor; the oracle D is taken up to it). Error at floor / oracle up to floor: "
           "the test error of the floor model, and the best test error of the full-data path "
           "up to it. RKHS norm² = Σ_j β_j²/λ_j of the LP solution. CV flatness: the CV error "
           "at the oracle D minus the CV error at the CV D, in % (small: the CV curve cannot "
           "tell the two apart)."]
    trouble = [f for row in rows for f in row.get("lp_trouble", [])]
    if trouble:
        md += ["", f"**{len(trouble)} fit(s) warned that an LP of a path was not solved** "
               "(`ConvergenceWarning`: the path ends at the last D solved, so its 'floor' is "
               "not the hinge risk's floor there):"]
        md += [f"- `{f}`" for f in trouble]
    failed = [f for row in rows for f in row["failed"]]
    if failed:
        md += ["", f"**{len(failed)} fit(s) did not finish** (their realizations are left out):"]
        md += [f"- `{f}`" for f in failed]
    return md


def _load(path):
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    fits = {}
    for k, v in data.get("fits", {}).items():
        d, r, s, c = k.split("/")
        fits[(d, int(r[1:]), float(s[1:]), "svm" if c == "svm" else c == "centred")] = v
    return fits


def _save(path, fits, rows, settings):
    """The settings, the per-set rows and every fit (one compact line per fit)."""
    from kpm_reproduce.experiments.runner import atomic_write_text

    head = json.dumps({"command": settings["command"], "settings": settings, "rows": rows},
                      indent=1)
    lines = [f"{json.dumps(fit_key(*k))}: {json.dumps(_rounded(v), separators=(',', ':'))}"
             for k, v in sorted(fits.items(), key=lambda kv: fit_key(*kv[0]))]
    atomic_write_text(path, head[:-2] + ',\n "fits": {\n' + ",\n".join(lines) + "\n }\n}\n")


def _rounded(rec):
    """Floats to 8 significant digits (σ exactly)."""
    return {k: (float(f"{v:.8g}") if isinstance(v, float) and k != "sigma" else v)
            for k, v in rec.items()}


def _canonical_factor(f, factors):
    """The factor of the grid that ``f`` (read back with 4 decimals) stands for."""
    return next((g for g in factors if abs(g - f) < 1e-3), f)


def main(argv=None):
    from kpm_reproduce.datasets import load_raetsch
    from kpm_reproduce.experiments.kpm13 import SIGMAS
    from kpm_reproduce.experiments.provenance import command_line

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(TRAILING))
    ap.add_argument("--realizations", type=int, default=None,
                    help=f"realizations 1..R of each set (default {DEFAULT_R}; "
                         + ", ".join(f"{k} {v}" for k, v in SLOW_R.items()) + ")")
    ap.add_argument("--sigma-factors", type=float, nargs="+", default=list(SIGMA_FACTORS))
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (default kpm-results/; docs/results to refresh the "
                         "committed report)")
    ap.add_argument("--reference", type=Path, default=REFERENCE,
                    help="the kpm-13 report's JSON (per-realization SVM errors)")
    ap.add_argument("--resume", action="store_true", help="keep the fits already stored")
    ap.add_argument("--report-only", action="store_true", help="tabulate the stored fits")
    ap.add_argument("--fit-timeout", type=float, default=600.0)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--svm-factors", type=float, nargs="*", default=None,
                    help="widths (factors of the grid) at which the SVM is run as the width "
                         "scan's control (default: all; none: give the option alone)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    datasets = [d.strip().lower().replace("-", "_") for d in args.datasets]
    bad = [d for d in datasets if d not in SIGMAS]
    if bad:
        ap.error(f"unknown data set(s) {bad}; choose from {', '.join(SIGMAS)}")
    factors = tuple(float(f) for f in args.sigma_factors)
    if 1.0 not in factors or any(f <= 0 for f in factors):
        ap.error("--sigma-factors must be positive and include 1")
    if args.svm_factors and not all(any(abs(f - g) < 1e-3 for g in factors)
                                    for f in args.svm_factors):
        ap.error("--svm-factors must be among --sigma-factors")
    if args.realizations is not None and args.realizations < 1:
        ap.error("--realizations must be a positive int")
    realizations = {d: args.realizations or SLOW_R.get(d, DEFAULT_R) for d in datasets}
    reference = json.loads(args.reference.read_text()) if args.reference.exists() else {}
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    path = out / "kpm13_diagnostics.json"
    stored = _load(path) if (args.resume or args.report_only) else {}
    fits = {(d, r, _canonical_factor(f, factors), c): v for (d, r, f, c), v in stored.items()}
    command = command_line(["kpm13_diagnostics.py" if argv is not None else sys.argv[0],
                            *(argv if argv is not None else sys.argv[1:])])
    settings = {"command": command, "datasets": datasets, "realizations": realizations,
                "sigma_factors": list(factors), "sigmas": {d: SIGMAS[d] for d in datasets},
                "reference": str(args.reference.name), "fit_timeout_s": args.fit_timeout}
    # the report covers every set with stored fits, not only those run now
    shown = [d for d in (*TRAILING, *SIGMAS) if d in datasets or any(k[0] == d for k in fits)]
    shown = list(dict.fromkeys(shown))
    summarize = lambda: [summarize_set(d, fits, factors, reference) for d in shown]
    if not args.report_only:
        # a fit stored by an older version of this script, without every measure, is redone
        svm_factors = (factors if args.svm_factors is None
                       else tuple(_canonical_factor(f, factors) for f in args.svm_factors))
        todo = [k for k in planned_fits(datasets, realizations, factors, svm_factors)
                if k not in fits or not ("error" in fits[k] or k[3] == "svm"
                                         or MEASURES <= set(fits[k]))]
        if todo:  # compile the LP kernels once here, so the forked fits do not
            from sklearn.datasets import make_moons

            from kpm import KernelProjectionMachine
            X, y = make_moons(60, noise=0.3, random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                KernelProjectionMachine(sigma=0.5, random_state=0, formulation="paper").fit(X, y)
        saved = time.monotonic()
        for i, (d, r, f, c) in enumerate(todo, 1):
            if c == "svm":
                fits[(d, r, f, c)] = rec = run_svm(d, r, SIGMAS[d] * f, args.data_dir)
            else:
                split = load_raetsch(d, r, data_dir=args.data_dir)
                fits[(d, r, f, c)] = rec = run_fit(split, SIGMAS[d] * f, c, r, args.fit_timeout)
            if not args.no_progress:
                what = rec.get("error") or (
                    f"SVM {rec['error_svm']:.2f}% C {rec['C']:.3g} {rec['fit_s']:.1f}s"
                    if c == "svm" else None) or (f"CV D {rec['D_cv']} {rec['error_cv']:.2f}% oracle "
                                            f"D {rec['D_oracle']} {rec['error_oracle']:.2f}% "
                                            f"floor D {rec['D_floor']} {rec['fit_s']:.1f}s")
                print(f"[{i}/{len(todo)}] {fit_key(d, r, f, c)}: {what}", flush=True)
            if time.monotonic() - saved > 15 or i == len(todo):
                _save(path, fits, None, settings)
                saved = time.monotonic()
    rows = summarize()
    _save(path, fits, rows, settings)
    text = "\n".join(report_lines(rows, factors, command, settings["reference"])) + "\n"
    from kpm_reproduce.experiments.runner import atomic_write_text

    atomic_write_text(out / "kpm13_diagnostics.md", text)
    return rows


if __name__ == "__main__":
    main()
