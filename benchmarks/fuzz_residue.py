"""What the training data say about the fuzz's silent wrong answers.

The fuzz (``benchmarks/fuzz_inputs.py``) calls an answer *silent wrong* where an estimator's
error on 1,000 fresh test points is above a cheap reference's by more than the margin (0.10:
the test error of an SVC with C tuned on the estimator's own kernel, or the test R^2 of kernel
ridge regression with alpha by leave-one-out) and nothing warned. A warning can only come from
the training data. This script asks, for every distinct silent setting of a records file, how
clearly the training data themselves show the gap, and what a warning that caught it would
cost on the fits that were right:

* the **nested cross-validation gap**: the whole procedure -- the estimator with the case's
  parameters, its own selection included, and the harness's reference on the estimator's
  kernel -- refitted on each training part of ``--folds`` folds (copies of a row in one fold,
  stratified for classifiers), ``--repeats`` times; each training point's loss (0-1, or the
  squared error) averaged over the repeats, the estimator's minus the reference's, averaged
  over the copies of a row. Its mean is the gap the training data estimate; ``z`` is that
  mean over its standard error across the distinct rows. A check that refits the whole
  procedure sees more of the gap than the estimators' own estimates, which score one selected
  model (it costs ``folds x repeats`` refits of both procedures);
* the **controls**: settings of the same estimator on the same input kind that the records
  call correct without a warning (up to ``--controls`` per estimator and input kind, drawn
  with seed 0), measured the same way. A warning at ``z >= z*`` (``z*``: the smallest ``z``
  of the silent settings) would fire on those of them that reach it; where their test gap is
  within the margin, the fuzz does not call them wrong, and the warning would be.

A silent setting is one (estimator, input kind, data set, test result) of the records; the
first case of each is refitted (the records do not hold the parameters: the case is drawn
again as the harness draws it, :func:`fuzz_inputs.case_data`). ``RECORDS.jsonl``: the records
a run of ``benchmarks/fuzz_inputs.py`` writes (or several runs' concatenated), with the
run's seed and groups of input kinds.

Output: ``<out>/fuzz_residue.md`` and ``fuzz_residue.json``. Usage::

    python benchmarks/fuzz_residue.py RECORDS.jsonl [--only accuracy user_data weights]
        [--folds 5] [--repeats 3] [--controls 16] [--jobs 2] [--out kpm-results]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

import fuzz_inputs as F

SILENT = "silent_wrong"
THRESHOLDS = (0.0, 1.0, 2.0, 2.5, 3.0, 4.0)  # the report's rows of warning thresholds on z


def _folds(y, groups, task, k, seed):
    """Train/validation splits of ``k`` folds that keep the copies of a row (``groups``)
    together, stratified for classifiers; None where a class has fewer than two distinct rows."""
    from sklearn.model_selection import GroupKFold, StratifiedGroupKFold

    if task == "clf":
        per_class = min(len(np.unique(groups[y == c])) for c in np.unique(y))
        if per_class < 2:
            return None
        return list(StratifiedGroupKFold(min(k, per_class), shuffle=True, random_state=seed).split(y, y, groups))
    return list(GroupKFold(min(k, len(np.unique(groups))), shuffle=True, random_state=seed).split(y, y, groups))


def _reference_predictions(kernel, task, X_train, y_train, X_val, groups):
    K, Kv = kernel(X_train), kernel(X_val, X_train)
    if task == "clf":
        return F.tuned_svc_predictions(K, y_train, Kv, groups)
    return F.loo_krr_predictions(K, y_train, Kv, groups)


def _loss(task, pred, y):
    pred = np.asarray(pred)
    return (pred != y).astype(float) if task == "clf" else (pred.astype(float) - y) ** 2


def nested_gap(fit_predict, reference, X, y, task, folds=5, repeats=3):
    """The nested cross-validation comparison of two procedures on the training data.

    ``fit_predict(train, val)`` and ``reference(train, val)`` (index arrays) return predictions
    at the validation rows, or raise ``ValueError`` (that fold is then not scored). Returns a
    dict: ``gap`` (the mean over distinct rows of the per-row loss difference, estimator minus
    reference, each row's loss averaged over the repeats and its copies), ``z`` (``gap`` over
    its standard error), ``estimator`` and ``reference`` (the mean losses), ``rows`` (distinct
    rows scored) and ``failed`` (folds not scored); ``gap`` is NaN where no fold was scored.
    """
    y = np.asarray(y)
    groups = F.duplicate_groups(X)
    sums, counts = np.zeros((2, len(y))), np.zeros(len(y))
    failed = 0
    for r in range(repeats):
        splits = _folds(y, groups, task, folds, r)
        if splits is None:
            break
        for train, val in splits:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    mine, ref = fit_predict(train, val), reference(train, val)
            except (ValueError, np.linalg.LinAlgError):
                mine = ref = None
            if ref is None or mine is None:
                failed += 1
                continue
            sums[0, val] += _loss(task, mine, y[val])
            sums[1, val] += _loss(task, ref, y[val])
            counts[val] += 1
    scored = counts > 0
    nan = float("nan")
    if not scored.any():
        return dict(gap=nan, z=nan, estimator=nan, reference=nan, rows=0, failed=failed)
    mean = sums[:, scored] / counts[scored]
    g = groups[scored]
    uniq, inv = np.unique(g, return_inverse=True)
    per_row = np.stack([np.bincount(inv, weights=m) / np.bincount(inv) for m in mean])
    diff = per_row[0] - per_row[1]
    return dict(gap=float(np.mean(diff)), z=_z(diff), estimator=float(np.mean(per_row[0])),
                reference=float(np.mean(per_row[1])), rows=int(len(uniq)), failed=failed)


def _z(diff):
    """The mean of ``diff`` over its standard error (NaN for one value; 0 or +-inf where every
    value is the same)."""
    if len(diff) < 2:
        return float("nan")
    mean, se = float(np.mean(diff)), float(np.std(diff, ddof=1) / np.sqrt(len(diff)))
    if se > 0:
        return mean / se
    return 0.0 if mean == 0 else float(np.sign(mean) * np.inf)


def measure(index, seed, only, folds, repeats, targets=None):
    """One setting (case ``index`` of run ``seed``): the test values of the estimator and of
    the reference on the full training set, and the :func:`nested_gap` of the two; None where
    the case is not a classifier's or a regressor's, or its estimator fails on the full set."""
    t, d, _ = F.case_data(index, seed, only, targets)
    if t.task not in ("clf", "reg") or t.estimator is None or d.get("sample_weight") is not None:
        return None
    X, y = np.asarray(d["X"], dtype=float), np.asarray(d["y"])
    Xn, yt = np.asarray(d["Xn"], dtype=float), np.asarray(d["y_test"])
    params = d["params"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est = t.estimator(**params).fit(d["X"], d["y"])
        except (ValueError, np.linalg.LinAlgError):
            return None
    kernel = getattr(est, "kernel_", None)
    if kernel is None or getattr(kernel, "is_precomputed", False):
        return None
    groups = F.duplicate_groups(X)
    ref_test = _reference_predictions(kernel, t.task, X, y, Xn, groups)
    mine_test = est.predict(d["Xn"])
    scale = 1.0 if t.task == "clf" else float(np.var(yt))

    def fit_predict(train, val):
        return t.estimator(**params).fit(d["X"][train], d["y"][train]).predict(d["X"][val])

    def reference(train, val):
        return _reference_predictions(kernel, t.task, X[train], y[train], X[val], groups[train])

    nested = nested_gap(fit_predict, reference, X, y, t.task, folds, repeats)
    if t.task == "reg":  # squared errors in units of the target's variance (differences of R^2)
        var = float(np.var(y))
        for k in ("gap", "estimator", "reference"):
            nested[k] /= var
    return dict(index=int(index), target=t.name, task=t.task, params=repr(params), n=int(len(y)),
                p=int(X.shape[1]), distinct=int(len(np.unique(groups))),
                test_estimator=float(np.mean(_loss(t.task, mine_test, yt)) / scale),
                test_reference=float(np.mean(_loss(t.task, ref_test, yt)) / scale), **nested)


def settings(records):
    """The silent settings of the records, one case index each, and for every (target, input
    kind) among them the unwarned correct settings of the same pair: ``(silent, controls)``,
    lists of records; a setting is a (target, input kind, data seed) with the harness's
    parameters, which the records do not hold: the first case of each is kept, and a later
    case of the same triple is another setting only where its outcome differs."""
    silent, seen = [], set()
    for r in records:
        key = (r["target"], r["mutation"], r["data_seed"], r["detail"])
        if r["outcome"] == SILENT and key not in seen:
            seen.add(key)
            silent.append(r)
    pairs = {(r["target"], r["mutation"]) for r in silent}
    controls, seen = {}, set()
    for r in records:
        key = (r["target"], r["mutation"], r["data_seed"])
        if (r["target"], r["mutation"]) in pairs and r["outcome"] == "correct" and not r["detail"] \
                and key not in seen:
            seen.add(key)
            controls.setdefault((r["target"], r["mutation"]), []).append(r)
    return silent, controls


def _draw_controls(controls, per_pair):
    rng = np.random.default_rng(0)
    out = []
    for pair in sorted(controls):
        rows = controls[pair]
        take = rng.choice(len(rows), min(per_pair, len(rows)), replace=False)
        out += [rows[i] for i in sorted(take)]
    return out


def _fmt(v, digits=3):
    return "-" if v is None or not np.isfinite(v) else f"{v:.{digits}f}"


def _margin(m):
    """The fuzz's margin for the measured setting ``m``'s task."""
    return F.CLF_MARGIN if m["task"] == "clf" else F.REG_MARGIN


def _warned(controls, z):
    """The controls a warning at ``z >= z`` fires on, and those of them whose test gap is within
    the fuzz's margin."""
    warn = [c for c in controls if c["z"] >= z]
    return warn, [c for c in warn if c["test_estimator"] - c["test_reference"] <= _margin(c)]


def report(silent, controls, meta):
    """The markdown lines of the report of the measured settings."""
    from kpm_reproduce.experiments.provenance import header

    lines = ["# The fuzz's silent wrong answers against what the training data show", "",
             *header(meta["command"], code=meta["code"])]
    lines += [f"Records: `{meta['records']}` ({meta['cases']} cases, run seed {meta['seed']}); "
              f"{meta['folds']} folds x {meta['repeats']} repeats; up to {meta['controls']} controls per "
              f"estimator and input kind; {meta['wall']:.0f} s of wall time. Protocol: "
              "`benchmarks/fuzz_residue.py` (module docstring). Classifiers: error rates; regressors: "
              "squared errors in units of the variance of y (test: of the test targets), so that a gap is "
              "a difference of R^2 with the sign of an error. *test*: on the 1,000 fresh points; *nested*: "
              "the cross-validated comparison on the training points only.", ""]
    head = ("| case | target | input kind | n (distinct) x p | params | test: estimator / reference (gap) | "
            "nested: estimator / reference (gap) | z |")
    lines += ["## Silent settings", "", head, "|---|---|---|---|---|---|---|---|"]
    for m in silent:
        lines.append(f"| {m['index']} | {m['target']} | {m['mutation']} | {m['n']} ({m['distinct']}) x {m['p']} | "
                     f"`{m['params']}` | {_fmt(m['test_estimator'])} / {_fmt(m['test_reference'])} "
                     f"({_fmt(m['test_estimator'] - m['test_reference'])}) | {_fmt(m['estimator'])} / "
                     f"{_fmt(m['reference'])} ({_fmt(m['gap'])}) | {_fmt(m['z'], 2)} |")
    zs = [m["z"] for m in silent if np.isfinite(m["z"])]
    z_star = min(zs) if zs else float("nan")
    lines += ["", f"Smallest z of the silent settings: z* = {_fmt(z_star, 2)}; largest: "
              f"{_fmt(max(zs) if zs else float('nan'), 2)}.", "",
              "## Controls: unwarned settings the records call correct", "",
              "A warning at `z >= z*` fires on the controls counted under *would warn*; *within the margin* "
              f"counts those whose test gap is within the fuzz's margin ({F.CLF_MARGIN} for the classifiers, "
              f"{F.REG_MARGIN} for the regressors): the fuzz does not call "
              "them wrong, and a warning that the reference is clearly better would be wrong there.", "",
              "| target | input kind | controls | z: median (max) | would warn at z* | within the margin |",
              "|---|---|---|---|---|---|"]
    total = [0, 0, 0]
    for pair in sorted({(c["target"], c["mutation"]) for c in controls}):
        rows = [c for c in controls if (c["target"], c["mutation"]) == pair and np.isfinite(c["z"])]
        warn, false = _warned(rows, z_star)
        total = [total[0] + len(rows), total[1] + len(warn), total[2] + len(false)]
        z = np.array([c["z"] for c in rows]) if rows else np.array([np.nan])
        lines.append(f"| {pair[0]} | {pair[1]} | {len(rows)} | {_fmt(float(np.median(z)), 2)} "
                     f"({_fmt(float(np.max(z)), 2)}) | {len(warn)} | {len(false)} |")
    lines += ["", f"In all: {total[0]} controls, {total[1]} would warn at z* = {_fmt(z_star, 2)}, "
              f"{total[2]} of them within the margin.", "", "## Other thresholds", "",
              "| warn at z >= | silent settings caught | controls warned | of them within the margin |",
              "|---|---|---|---|"]
    measured = [c for c in controls if np.isfinite(c["z"])]
    for zt in THRESHOLDS:
        warn, false = _warned(measured, zt)
        lines.append(f"| {zt:g} | {sum(m['z'] >= zt for m in silent if np.isfinite(m['z']))} of {len(silent)} | "
                     f"{len(warn)} of {len(measured)} | {len(false)} |")
    return lines + [""]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", help="a records file of benchmarks/fuzz_inputs.py (JSON lines)")
    ap.add_argument("--seed", type=int, default=0, help="the run seed of the records")
    ap.add_argument("--only", nargs="*", default=["accuracy", "user_data", "weights"],
                    help="the groups of input kinds of the run (its --only)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--controls", type=int, default=16, help="controls per estimator and input kind")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default="kpm-results")
    args = ap.parse_args(argv)
    from joblib import Parallel, delayed

    from kpm_reproduce.experiments.provenance import code_version, command_line, write_report

    code = code_version()

    records = [json.loads(line) for line in open(args.records) if line.strip()]
    silent, controls = settings(records)
    drawn = _draw_controls(controls, args.controls)
    t0 = time.perf_counter()
    only = tuple(args.only) if args.only else None
    run = Parallel(n_jobs=args.jobs)(delayed(measure)(r["index"], args.seed, only, args.folds, args.repeats)
                                     for r in silent + drawn)
    wall = time.perf_counter() - t0
    measured = [None if m is None else dict(m, mutation=r["mutation"]) for r, m in zip(silent + drawn, run)]
    ms = [m for m in measured[:len(silent)] if m is not None]
    mc = [m for m in measured[len(silent):] if m is not None]
    meta = dict(records=Path(args.records).name, cases=len(records), seed=args.seed, folds=args.folds,
                repeats=args.repeats, controls=args.controls, wall=wall, code=code,
                command=command_line(None if argv is None else ["benchmarks/fuzz_residue.py", *argv]))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_report(out / "fuzz_residue.json", dict(meta=meta, silent=ms, controls=mc), out / "fuzz_residue.md",
                 report(ms, mc, meta))


if __name__ == "__main__":
    main()
