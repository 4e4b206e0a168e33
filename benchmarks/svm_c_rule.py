"""How ``KernelProjectionMachine(formulation='svm')`` should choose C, across kernel widths.

For Rätsch realizations, fits the estimator (public API only) with each C rule and reports
its test error beside the CV-tuned SVC's:

* ``joint``: ``c_selection='joint'``, (D, C) by joint 5-fold CV over C in {0.1, 0.3, 1, 3, 10};
* ``two-stage``: ``c_selection='two-stage'`` over ``C = logspace(-2, 3, 11)``: C by CV of the
  SVM at the largest D (the kernel SVM), then D by CV at that C;
* ``joint-wide``: the joint rule over the same wide grid (the rule the two-stage one replaces);
* ``joint-scaled``: the joint rule over the default grid times ``n / trace(centred K)``, a C
  grid relative to the scale of the kernel-PCA features;
* ``one-se``: from the ``joint-wide`` fit's ``selection_curve_``, the smallest C (then D) whose
  pooled CV error is within one binomial standard error ``sqrt(p (1 - p) / n)`` of the minimum
  ``p`` (:func:`one_se_choice`), refitted at that fixed (C, D).

The folds are ``StratifiedKFold(5, shuffle=True, random_state=realization)``, as in
``kpm reproduce kpm-13``. The SVC errors at the kpm-13 widths are read from the stored
kpm-13 run (``--svc-reference``, C by 5-fold CV over 100 log values in [1e-2, 1e3]); at
any other width (``--sigma median``) the SVC is run here with the same protocol
(:func:`kpm_reproduce.experiments.kpm_tables.svm_cv_task`).

Usage::

    python benchmarks/svm_c_rule.py --datasets image splice --realizations 1 5 [--sigma median]
        [--rules joint two-stage] [--svc-reference docs/results/runs/kpm13-1c0d0d3b63.json]
        [--out kpm-results]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

DEFAULT_C = (0.1, 0.3, 1.0, 3.0, 10.0)
WIDE_C = tuple(np.logspace(-2, 3, 11))
SVC_C = np.logspace(-2, 3, 100)
RULES = ("joint", "two-stage", "joint-wide", "joint-scaled", "one-se")
REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "results" / "runs" / "kpm13-1c0d0d3b63.json"


def centred_scale(K):
    """``n / trace(centred K)``: the inverse mean squared norm of the centred features."""
    return len(K) / (np.trace(K) - K.sum() / len(K))


def rule_params(rule, K):
    """The estimator's ``C`` and ``c_selection`` for a rule (``K``: the training kernel)."""
    if rule == "joint":
        return {"C": DEFAULT_C, "c_selection": "joint"}
    if rule == "two-stage":
        return {"C": WIDE_C, "c_selection": "two-stage"}
    if rule in ("joint-wide", "one-se"):
        return {"C": WIDE_C, "c_selection": "joint"}
    if rule == "joint-scaled":
        return {"C": tuple(c * centred_scale(K) for c in DEFAULT_C), "c_selection": "joint"}
    raise ValueError(f"rule must be one of {RULES}, got {rule!r}")


def one_se_choice(curve, n):
    """``(C, D)``: the first model of ``curve`` (ordered by C, then D) whose CV error is within
    one binomial standard error of the smallest."""
    err = np.asarray(curve["cv_error"], dtype=float)
    p = np.nanmin(err)
    i = int(np.flatnonzero(err <= p + np.sqrt(p * (1 - p) / n))[0])
    return float(curve["C"][i]), int(curve["D"][i])


def kpm_errors(X, y, Xt, yt, sigma, realization, rules):
    """Test error (%), C, D and fit seconds of the estimator under each rule."""
    from sklearn.model_selection import StratifiedKFold

    from kpm import KernelProjectionMachine
    from kpm.kernels import make_kernel

    K = make_kernel("rbf", sigma=sigma)(X)
    out = {}
    for rule in rules:
        t0 = time.perf_counter()
        m = KernelProjectionMachine(
            sigma=sigma, formulation="svm", cv=StratifiedKFold(5, shuffle=True, random_state=realization),
            cv_duplicates="split", random_state=realization, **rule_params(rule, K),
        ).fit(X, y)
        if rule == "one-se":
            C, D = one_se_choice(m.selection_curve_, len(y))
            m = KernelProjectionMachine(sigma=sigma, formulation="svm", C=C, selection=D, c_selection="joint",
                                        random_state=realization).fit(X, y)
        out[rule] = {"error": 100.0 * float(np.mean(m.predict(Xt) != yt)), "C": float(m.C_), "D": int(m.n_components_),
                     "rank": int(len(m.eigenvalues_)), "fit_s": time.perf_counter() - t0}
    return out


def reference_svc(path, dataset, realization):
    """The SVC's test error (%) and C of the stored kpm-13 run, or None if it lacks the task."""
    res = json.loads(Path(path).read_text())["results"].get(f"kpm13/{dataset}/r{realization:03d}")
    return None if res is None else {"error": res["svm"]["error"], "C": res["svm"]["C"], "source": str(path)}


def run_one(dataset, realization, sigma_mode, rules, reference=REFERENCE, data_dir=None):
    """One realization: the rules' errors and the SVC's."""
    from kpm_reproduce.datasets import load_raetsch
    from kpm_reproduce.experiments.kpm13 import SIGMAS
    from kpm_reproduce.experiments.kpm_tables import svm_cv_task
    from kpm.kernels import median_sigma

    s = load_raetsch(dataset, realization, data_dir=data_dir)
    sigma = SIGMAS[dataset] if sigma_mode == "kpm13" else median_sigma(s.X_train)
    rec = {"dataset": dataset, "realization": realization, "sigma_mode": sigma_mode, "sigma": float(sigma)}
    rec["kpm"] = kpm_errors(s.X_train, s.y_train, s.X_test, s.y_test, sigma, realization, rules)
    svc = reference_svc(reference, dataset, realization) if sigma_mode == "kpm13" else None
    if svc is None:
        r = svm_cv_task(dataset, realization, sigma, SVC_C, data_dir=data_dir)
        svc = {"error": r["error"], "C": r["C"], "source": "run here", "time_s": r["time_cv_s"]}
    rec["svc"] = svc
    return rec


def table(records, rules):
    """Markdown: mean test error per (set, width) and rule, the SVC's, the gaps."""
    groups = {}
    for r in records:
        groups.setdefault((r["dataset"], r["sigma_mode"]), []).append(r)
    head = ["set", "σ", "realizations", *rules, "SVC", *[f"gap {x}" for x in rules], "median C (" + rules[-1] + ")"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (d, mode), recs in groups.items():
        kp = {x: np.mean([r["kpm"][x]["error"] for r in recs]) for x in rules}
        svc = np.mean([r["svc"]["error"] for r in recs])
        reals = sorted(r["realization"] for r in recs)
        medC = np.median([r["kpm"][rules[-1]]["C"] for r in recs])
        lines.append(f"| {d} | {mode} | {reals[0]}–{reals[-1]} ({len(recs)}) | "
                     + " | ".join(f"{kp[x]:.2f}" for x in rules) + f" | {svc:.2f} | "
                     + " | ".join(f"{kp[x] - svc:+.2f}" for x in rules) + f" | {medC:.3g} |")
    return lines


def main(argv=None):
    from kpm_reproduce.experiments.provenance import header

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["image"])
    ap.add_argument("--realizations", nargs=2, type=int, default=[1, 5], metavar=("FIRST", "LAST"))
    ap.add_argument("--sigma", choices=["kpm13", "median"], default="kpm13")
    ap.add_argument("--rules", nargs="+", choices=RULES, default=["joint", "two-stage"])
    ap.add_argument("--svc-reference", type=Path, default=REFERENCE)
    ap.add_argument("--out", type=Path, default=Path("kpm-results"))
    ap.add_argument("--tag", default="", help="suffix of the output file names")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    records = []
    for d in args.datasets:
        for r in range(args.realizations[0], args.realizations[1] + 1):
            rec = run_one(d, r, args.sigma, args.rules, args.svc_reference, args.data_dir)
            records.append(rec)
            print(d, r, args.sigma, {x: (round(v["error"], 2), v["C"], v["D"]) for x, v in rec["kpm"].items()},
                  "SVC", round(rec["svc"]["error"], 2), flush=True)
    md = ["# formulation='svm': the C rule across kernel widths", "", *header(), "",
          "Test error (%), mean over the realizations; protocol in `benchmarks/svm_c_rule.py`.", "",
          *table(records, args.rules)]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"svm_c_rule{args.tag}.md").write_text("\n".join(md) + "\n")
    (args.out / f"svm_c_rule{args.tag}.json").write_text(json.dumps(records, indent=1))
    print("\n".join(md))


if __name__ == "__main__":
    main()
