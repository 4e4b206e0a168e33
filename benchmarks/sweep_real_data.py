"""Real-data sweep: every kpm classifier on ordinary data sets, beside a CV-tuned SVC.

The data sets are scikit-learn's bundled ones and three of its generators:

* ``breast_cancer`` (569 x 30, 2 classes), ``wine`` (178 x 13, 3), ``iris`` (150 x 4, 3),
* ``digits``: all 10 classes, :data:`DIGITS_PER_CLASS` images of each drawn with the seed
  of the run (the KPM's one-vs-rest paths on all 1797 images take up to 6 minutes a fit:
  too long for a sweep of 30 settings), and the two-class subsets ``digits_A_B`` (all
  their images, about 360) of the pairs in :data:`DIGIT_PAIRS` (two easy ones, the three
  pairs most often confused),
* ``diabetes``: the 442 x 10 regression set (``scaled=False``: raw ages, BMI, ...),
  the target binarised at its median,
* ``moons`` (``make_moons(300, noise=0.3)``), ``circles`` (``make_circles(300,
  noise=0.1, factor=0.5)``), ``classification`` (``make_classification(500,
  n_features=20, n_informative=5)``), generated with the seed of the run.

Each data set is used raw and standardised (a ``StandardScaler`` fitted on the training
part), with the Gaussian width ``sigma = f * median_sigma(X_train)`` for ``f`` in
:data:`SIGMA_FACTORS`, and with seeds 0, 1, 2 (the stratified 70/30 split, the
generators and every estimator's ``random_state``). On each such split the sweep fits

* ``KernelProjectionMachine`` at its defaults (``KPM (default)``: the soft-margin SVM in
  each S_D, C and D by leave-one-out), and the papers' KPM (``formulation='paper'``: the
  hinge LP in each S_D) with ``selection='cv'``, ``'penalty'`` and ``'slope'``,
* ``KernelPCRClassifier`` (default: relevant dimension),
* ``NystroemKPM`` (two-class sets only; ``n_landmarks = min(1000, n_train)``),
* ``ReducedSetSVC`` reducing an ``SVC`` with the tuned C to 10 % of its support vectors,
* the reference: ``SVC`` (RBF, ``gamma = 1 / (2 sigma^2)``), C chosen by 5-fold
  ``GridSearchCV`` over ``10^-2 .. 10^4``.

Every fit records its exception (type and message) or its test accuracy, the warnings
raised (``DegenerateKernelWarning``, ``DegenerateModelWarning``, ``ConvergenceWarning``,
others by name; ``warned``: whether any of them is a ``UserWarning``), whether the model predicts one class on its training data, and the fit
time; every split records whether its training kernel matrix is numerically the identity
or constant (:func:`kpm.validation.kernel_degeneracy`).

The runs go through :func:`kpm_reproduce.experiments.runner.run_tasks` (one task per data set,
scaling, width and seed; ``--resume`` continues an interrupted run). Output:
``<out>/sweep_real_data.json`` (every record) and the ``sweep`` section of
``<out>/robustness.md`` (:mod:`robustness_report`).

Usage::

    python benchmarks/sweep_real_data.py [--jobs 2] [--resume] [--out docs/results]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

SIGMA_FACTORS = (0.1, 0.3, 1.0, 3.0, 10.0)
SEEDS = (0, 1, 2)
SCALINGS = ("raw", "standardised")
# two easy pairs and the three most confused pairs of handwritten digits
DIGIT_PAIRS = ((0, 1), (0, 6), (3, 8), (4, 9), (7, 9))
DIGITS_PER_CLASS = 50
DATASETS = ("breast_cancer", "wine", "iris", "digits",
            *(f"digits_{a}_{b}" for a, b in DIGIT_PAIRS),
            "diabetes", "moons", "circles", "classification")
CLASSIFIERS = ("KPM (default)", "KPM (cv)", "KPM (penalty)", "KPM (slope)", "KernelPCRClassifier",
               "NystroemKPM", "ReducedSetSVC")
SVC_NAME = "SVC (CV-tuned C)"
SVC_C_GRID = tuple(10.0 ** np.arange(-2, 5))
TEST_SIZE = 0.3
RESULTS_NAME = "sweep_real_data.json"
WARNING_NAMES = ("DegenerateKernelWarning", "DegenerateModelWarning", "ConvergenceWarning")


# ----------------------------------------------------------------------------- data
def load_dataset(name, seed):
    """``(X, y)`` of a data set of the sweep (the generators use ``seed``)."""
    from sklearn import datasets as skd

    if name.startswith("digits_"):
        a, b = (int(c) for c in name.split("_")[1:])
        X, y = skd.load_digits(return_X_y=True)
        keep = np.isin(y, (a, b))
        return X[keep], y[keep]
    if name == "digits":
        X, y = skd.load_digits(return_X_y=True)
        rng = np.random.default_rng(seed)
        keep = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), DIGITS_PER_CLASS,
                                                  replace=False) for c in range(10)]))
        return X[keep], y[keep]
    if name == "diabetes":
        X, t = skd.load_diabetes(return_X_y=True, scaled=False)
        return X, (t > np.median(t)).astype(int)
    if name == "moons":
        return skd.make_moons(300, noise=0.3, random_state=seed)
    if name == "circles":
        return skd.make_circles(300, noise=0.1, factor=0.5, random_state=seed)
    if name == "classification":
        return skd.make_classification(500, n_features=20, n_informative=5, random_state=seed)
    loaders = {"breast_cancer": skd.load_breast_cancer, "wine": skd.load_wine,
               "iris": skd.load_iris}
    if name not in loaders:
        raise ValueError(f"unknown data set {name!r}; expected one of {DATASETS}")
    return loaders[name](return_X_y=True)


def make_split(name, scaling, seed):
    """The stratified 70/30 split of a data set, standardised on its training part or raw."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_dataset(name, seed)
    Xtr, Xte, ytr, yte = train_test_split(np.asarray(X, dtype=float), y, test_size=TEST_SIZE,
                                          stratify=y, random_state=seed)
    if scaling == "standardised":
        scaler = StandardScaler().fit(Xtr)
        Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    elif scaling != "raw":
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    return Xtr, Xte, ytr, yte


# ----------------------------------------------------------------------------- estimators
def make_estimator(classifier, sigma, seed, n_train, svc_C):
    """The estimator of one classifier of the sweep (``svc_C``: the tuned SVC's C)."""
    from sklearn.svm import SVC

    from kpm import KernelPCRClassifier, KernelProjectionMachine, NystroemKPM, ReducedSetSVC

    if classifier == "KPM (default)":
        return KernelProjectionMachine(sigma=sigma, random_state=seed)
    if classifier.startswith("KPM ("):
        selection = classifier[5:-1]
        return KernelProjectionMachine(sigma=sigma, selection=selection, random_state=seed, formulation="paper")
    if classifier == "KernelPCRClassifier":
        return KernelPCRClassifier(sigma=sigma, random_state=seed)
    if classifier == "NystroemKPM":
        return NystroemKPM(min(1000, n_train), sigma=sigma, random_state=seed)
    if classifier == "ReducedSetSVC":
        svc = SVC(kernel="rbf", gamma=1.0 / (2.0 * sigma**2), C=svc_C)
        return ReducedSetSVC(svc, n_vectors=0.1, random_state=seed)
    raise ValueError(f"unknown classifier {classifier!r}; expected one of {CLASSIFIERS}")


def _warning_summary(caught):
    """``{category name: count}`` and the first message of each category."""
    counts, first = Counter(), {}
    for w in caught:
        name = w.category.__name__
        counts[name] += 1
        first.setdefault(name, str(w.message)[:300])
    return dict(counts), first


def _fit_record(make, Xtr, ytr, Xte, yte):
    """Fit ``make()`` under recorded warnings: exception or accuracy, warnings, one class."""
    rec = {"error": None, "accuracy": None, "train_accuracy": None, "one_class": None,
           "fit_s": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            est = make().fit(Xtr, ytr)
        except Exception as exc:  # recorded: the sweep's purpose
            rec["error"] = f"{type(exc).__name__}: {exc}"[:1000]
            est = None
        rec["fit_s"] = time.perf_counter() - t0
    rec["warnings"], rec["warning_messages"] = _warning_summary(caught)
    rec["warned"] = any(issubclass(w.category, UserWarning) for w in caught)
    if est is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rec["accuracy"] = float(np.mean(est.predict(Xte) == yte))
            train_pred = est.predict(Xtr)
        rec["train_accuracy"] = float(np.mean(train_pred == ytr))
        rec["one_class"] = bool(len(np.unique(train_pred)) == 1)
        rec["details"] = _details(est)
    return rec


def _details(est):
    """A few fitted attributes worth seeing beside the accuracy."""
    out = {}
    for attr in ("dim_", "n_components_", "best_params_"):
        if hasattr(est, attr):
            out[attr] = getattr(est, attr)
    if getattr(est, "C_", None) is not None:  # the SVM in S_D: the C chosen
        out["C_"] = float(est.C_)
    if hasattr(est, "lp_failures_"):
        out["lp_failures"] = len(est.lp_failures_)
    if hasattr(est, "n_expansion_vectors_"):
        out["n_expansion_vectors"] = int(est.n_expansion_vectors_)
    return out


def _tuned_svc(sigma, seed):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    return GridSearchCV(SVC(kernel="rbf", gamma=1.0 / (2.0 * sigma**2)),
                        {"C": list(SVC_C_GRID)},
                        cv=StratifiedKFold(5, shuffle=True, random_state=seed))


def _majority(y):
    values, counts = np.unique(y, return_counts=True)
    return values[np.argmax(counts)]


def _kernel_diagnosis(Xtr, sigma):
    from kpm.kernels import make_kernel
    from kpm.validation import kernel_degeneracy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = kernel_degeneracy(make_kernel("rbf", sigma=sigma)(Xtr, Xtr))
    return None if found is None else found[0]


def run_split(dataset, scaling, sigma_factor, seed, classifiers=CLASSIFIERS):
    """All fits of one split; the runner's task function (returns a JSON-able dict)."""
    from kpm.kernels import median_sigma

    Xtr, Xte, ytr, yte = make_split(dataset, scaling, seed)
    n_classes = len(np.unique(ytr))
    sigma = float(sigma_factor) * median_sigma(Xtr)
    out = {"dataset": dataset, "scaling": scaling, "sigma_factor": float(sigma_factor),
           "seed": int(seed), "sigma": sigma, "n_train": len(ytr), "n_test": len(yte),
           "n_features": Xtr.shape[1], "n_classes": n_classes,
           "majority_accuracy": float(np.mean(yte == _majority(ytr))),
           "kernel_degeneracy": _kernel_diagnosis(Xtr, sigma)}
    svc = _fit_record(lambda: _tuned_svc(sigma, seed), Xtr, ytr, Xte, yte)
    out["svc"] = svc
    svc_C = svc["details"]["best_params_"]["C"] if svc["error"] is None else 1.0
    fits = {}
    for clf in classifiers:
        if clf == "NystroemKPM" and n_classes != 2:
            continue  # a binary classifier
        fits[clf] = _fit_record(lambda: make_estimator(clf, sigma, seed, len(ytr), svc_C),
                                Xtr, ytr, Xte, yte)
    out["fits"] = fits
    return out


# ----------------------------------------------------------------------------- report
def reproducer(r, clf):
    """Python code that repeats one fit of the sweep."""
    call = {
        "KPM (default)": "KernelProjectionMachine(sigma=sigma, random_state={seed})",
        "KPM (cv)": "KernelProjectionMachine(sigma=sigma, selection='cv', random_state={seed}, formulation='paper')",
        "KPM (penalty)": "KernelProjectionMachine(sigma=sigma, selection='penalty', random_state={seed}, formulation='paper')",
        "KPM (slope)": "KernelProjectionMachine(sigma=sigma, selection='slope', random_state={seed}, formulation='paper')",
        "KernelPCRClassifier": "KernelPCRClassifier(sigma=sigma, random_state={seed})",
        "NystroemKPM": "NystroemKPM({m}, sigma=sigma, random_state={seed})",
        "ReducedSetSVC": ("ReducedSetSVC(SVC(gamma=1 / (2 * sigma**2), C={C:g}), n_vectors=0.1, "
                          "random_state={seed})"),
    }[clf]
    C = r["svc"].get("details", {}).get("best_params_", {}).get("C", 1.0)
    call = call.format(seed=r["seed"], m=min(1000, r["n_train"]), C=C)
    return (f"`Xtr, Xte, ytr, yte = make_split({r['dataset']!r}, {r['scaling']!r}, {r['seed']})`; "
            f"`sigma = {r['sigma_factor']:g} * median_sigma(Xtr)` (= {r['sigma']:.6g}); "
            f"`{call}.fit(Xtr, ytr)`")


def _counts(records):
    """Per classifier: fits, exceptions, one-class models (warned or not), kernel warnings."""
    rows = {}
    for r in records:
        degenerate = r["kernel_degeneracy"] is not None
        for clf, f in [*r["fits"].items(), (SVC_NAME, r["svc"])]:
            c = rows.setdefault(clf, Counter())
            c["fits"] += 1
            c["exceptions"] += f["error"] is not None
            w = f["warnings"]
            c["convergence"] += "ConvergenceWarning" in w
            if f["one_class"]:
                c["one_class"] += 1
                c["one_class_warned"] += "DegenerateModelWarning" in w
            if degenerate and f["error"] is None:
                c["degenerate"] += 1
                c["degenerate_warned"] += "DegenerateKernelWarning" in w
            c["kernel_warned"] += "DegenerateKernelWarning" in w
            c["fit_s"] += f["fit_s"]
    return rows


def _accuracy_table(records, by=("dataset", "scaling", "sigma_factor")):
    """Mean test accuracy per group of records (``by``: record fields), one column per
    classifier, the SVC last."""
    acc = defaultdict(list)
    for r in records:
        for clf, f in [*r["fits"].items(), (SVC_NAME, r["svc"])]:
            if f["accuracy"] is not None:
                acc[(*(r[b] for b in by), clf)].append(f["accuracy"])
    present = [c for c in (*CLASSIFIERS, SVC_NAME) if any(k[-1] == c for k in acc)]
    titles = {"dataset": "data set", "scaling": "scaling", "sigma_factor": "sigma / median"}
    lines = ["| " + " | ".join(titles[b] for b in by) + " | " + " | ".join(present) + " |",
             "|" + "---|" * (len(by) + len(present))]
    order = {ds: i for i, ds in enumerate(DATASETS)}
    for group in sorted({k[:-1] for k in acc}, key=lambda g: (order.get(g[0], 99), *g)):
        cells = [f"{np.mean(acc[(*group, c)]):.3f}" if (*group, c) in acc else "" for c in present]
        names = [f"{v:g}" if isinstance(v, float) else str(v) for v in group]
        lines.append("| " + " | ".join(names + cells) + " |")
    return lines


BELOW_MAJORITY = 0.05  # a fit this far below the majority-class rate is listed


def _where(r, clf):
    return (f"**{clf}** on {r['dataset']}, {r['scaling']}, sigma = {r['sigma_factor']:g} x "
            f"median, seed {r['seed']}")


def _problems(records):
    """Every exception, every one-class model without a warning, every fit less accurate
    than the majority class by more than ``BELOW_MAJORITY``, and per classifier the fits on
    a degenerate kernel matrix without a DegenerateKernelWarning."""
    exc, unwarned, poor, kernels = [], [], [], Counter()
    for r in records:
        for clf, f in r["fits"].items():
            if f["error"] is not None:
                exc.append(f"- {_where(r, clf)}: `{f['error'][:300]}`. "
                           f"Reproducer: {reproducer(r, clf)}")
                continue
            if f["one_class"] and "DegenerateModelWarning" not in f["warnings"]:
                unwarned.append(f"- {_where(r, clf)}: predicts one class on its training data, "
                                f"no DegenerateModelWarning. Reproducer: {reproducer(r, clf)}")
            if f["accuracy"] < r["majority_accuracy"] - BELOW_MAJORITY:
                train = f.get("train_accuracy")
                train = "" if train is None else f" (training {train:.3f})"
                poor.append(f"- {_where(r, clf)}: test accuracy {f['accuracy']:.3f}{train}, majority "
                            f"class {r['majority_accuracy']:.3f}, SVC "
                            f"{r['svc']['accuracy'] if r['svc']['accuracy'] is not None else float('nan'):.3f}"
                            f"; warnings: {', '.join(sorted(f['warnings'])) or 'none'}. "
                            f"Reproducer: {reproducer(r, clf)}")
            if r["kernel_degeneracy"] is not None and "DegenerateKernelWarning" not in f["warnings"]:
                kernels[(clf, r["kernel_degeneracy"])] += 1
    return exc, unwarned, poor, kernels


GAP_POINTS = 5.0  # a fit this many points of test error worse than the SVC is counted


def warned(fit):
    """Whether a fit raised a ``UserWarning`` (kpm's ``DegenerateKernelWarning`` and
    ``DegenerateModelWarning``, scikit-learn's ``ConvergenceWarning``, ...); for records
    written before ``warned`` was stored: whether it raised any warning."""
    return fit["warned"] if "warned" in fit else bool(fit["warnings"])


def default_width(r):
    """Whether a record is the split a user gets by default: standardised data, the median
    heuristic's width."""
    return r["scaling"] == "standardised" and r["sigma_factor"] == 1.0


def svc_gaps(records):
    """Per classifier, ``[(gap, record), ...]``: its test error minus the tuned SVC's on the
    same split, in percentage points (positive: worse than the SVC), over the splits where
    both fits returned."""
    gaps = defaultdict(list)
    for r in records:
        if r["svc"]["accuracy"] is None:
            continue
        for clf, f in r["fits"].items():
            if f["accuracy"] is not None:
                gaps[clf].append((100.0 * (r["svc"]["accuracy"] - f["accuracy"]), r))
    return gaps


def _split_name(r):
    return (f"{r['dataset']}, {r['scaling']}, {r['sigma_factor']:g} x median, "
            f"seed {r['seed']}")


def _gap_table(records):
    """One row per classifier: its test-error gap to the tuned SVC (mean, median, worst
    with its split) and the fits more than ``GAP_POINTS`` worse, with how many warned."""
    gaps = svc_gaps(records)
    lines = [f"| classifier | fits with both | mean gap | median gap | worst gap | worst split | "
             f"> {GAP_POINTS:g} points worse | of them warned |",
             "|---|---|---|---|---|---|---|---|"]
    for clf in CLASSIFIERS:
        if clf not in gaps:
            continue
        g = np.array([d for d, _ in gaps[clf]])
        worst = int(np.argmax(g))
        bad = [(d, r) for d, r in gaps[clf] if d > GAP_POINTS]
        n_warned = sum(warned(r["fits"][clf]) for _, r in bad)
        lines.append(f"| {clf} | {len(g)} | {g.mean():+.1f} | {np.median(g):+.1f} | "
                     f"{g[worst]:+.1f} | {_split_name(gaps[clf][worst][1])} | {len(bad)} | "
                     f"{n_warned} |")
    return lines


def _unwarned_gaps(records):
    """Every fit more than ``GAP_POINTS`` worse than the SVC that raised no warning."""
    out = []
    for clf, pairs in svc_gaps(records).items():
        for d, r in pairs:
            if d > GAP_POINTS and not warned(r["fits"][clf]):
                out.append(f"- {_where(r, clf)}: {d:+.1f} points (test accuracy "
                           f"{r['fits'][clf]['accuracy']:.3f}, SVC {r['svc']['accuracy']:.3f}). "
                           f"Reproducer: {reproducer(r, clf)}")
    return out


def report_lines(records, *, command=None, wall_s=None, jobs=1):
    """The ``sweep`` section of ``robustness.md``."""
    from kpm_reproduce.experiments.provenance import header

    counts = _counts(records)
    ours = [c for clf, c in counts.items() if clf != SVC_NAME]
    total = sum(c["fits"] for c in ours)
    n_exc = sum(c["exceptions"] for c in ours)
    n_one = sum(c["one_class"] for c in ours)
    n_one_w = sum(c["one_class_warned"] for c in ours)
    svc = counts.get(SVC_NAME, Counter())
    n_deg = sum(r["kernel_degeneracy"] is not None for r in records)
    task_s = sum(r.get("_elapsed_s", 0.0) for r in records)
    timing = f" Task time {task_s / 60:.1f} min in all"
    if wall_s is not None:
        timing += f"; this run's wall time {wall_s / 60:.1f} min with {jobs} job(s)"
    lines = ["## Real-data sweep", "", *header(command)]
    lines += [
        "Every classifier of kpm on scikit-learn's bundled data sets and generators, raw and "
        "standardised, with sigma = f x the median heuristic of the training data "
        f"(f in {', '.join(f'{f:g}' for f in SIGMA_FACTORS)}) and seeds "
        f"{', '.join(map(str, SEEDS))} (stratified 70/30 split; `digits`: {DIGITS_PER_CLASS} "
        "images per class drawn with the seed). Data sets, settings and the "
        "reference SVC are described in `benchmarks/sweep_real_data.py`; every record is in "
        f"`{RESULTS_NAME}` beside this file. `make_split` and `median_sigma` in the "
        "reproducers are `sweep_real_data.make_split` and `kpm.kernels.median_sigma`.",
        "",
        f"**{len(records)} splits, {total} fits of kpm classifiers: {n_exc} exceptions; {n_one} "
        f"models predict one class on their training data, {n_one_w} of them with a "
        f"DegenerateModelWarning ({n_one - n_one_w} unwarned); {n_deg} splits have a "
        f"numerically degenerate training kernel matrix.** The reference SVC: "
        f"{svc['exceptions']} exceptions, {svc['one_class']} one-class models in "
        f"{svc['fits']} fits.{timing}.",
        "",
        "| classifier | fits | exceptions | one-class models | warned | fitted on a degenerate "
        "kernel | with DegenerateKernelWarning | ConvergenceWarning | fit time s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for clf in [*CLASSIFIERS, SVC_NAME]:
        if clf in counts:
            c = counts[clf]
            lines.append(f"| {clf} | {c['fits']} | {c['exceptions']} | {c['one_class']} | "
                         f"{c['one_class_warned']} | {c['degenerate']} | {c['degenerate_warned']} | "
                         f"{c['convergence']} | {c['fit_s']:.0f} |")
    exc, unwarned, poor, kernels = _problems(records)
    lines += ["", "### Exceptions in fits", ""] + (exc or ["None."])
    lines += ["", "### One-class models without a warning", ""] + (unwarned or ["None."])
    lines += ["", "### Degenerate kernel matrices fitted without a DegenerateKernelWarning", "",
              "The training kernel matrix of the split is numerically the identity or constant "
              "(`kpm.validation.kernel_degeneracy`); kpm fits on it that did not warn:", ""]
    lines += [f"- {clf}, {kind}: {n} fits" for (clf, kind), n in sorted(kernels.items())] or ["None."]
    lines += ["", f"### Fits less accurate than the majority class (by more than {BELOW_MAJORITY:g})",
              ""] + (poor or ["None."])
    default = [r for r in records if default_width(r)]
    lines += ["", "### Test-error gap to the tuned SVC", "",
              "Per classifier, its test error minus the SVC's on the same split, in percentage "
              "points (positive: worse than the SVC), over the splits where both fits returned; "
              "the worst gap with its split; the fits more than "
              f"{GAP_POINTS:g} points worse, and how many of them raised a warning (any "
              "`UserWarning`: DegenerateKernelWarning, DegenerateModelWarning, "
              "ConvergenceWarning, ...). All splits (the widths 0.1 and 10 x the median are "
              "deliberately bad for every method):", ""]
    lines += _gap_table(records)
    lines += ["", "Standardised data, sigma = the median heuristic (f = 1: what a user gets "
              f"by default; {len(default)} splits):", ""]
    lines += _gap_table(default) if default else ["None."]
    lines += ["", f"Fits of these default splits more than {GAP_POINTS:g} points worse than "
              "the SVC without a warning:", ""]
    lines += _unwarned_gaps(default) or ["None."]
    lines += ["", "### Test accuracy", "",
              "SVC: RBF with the same sigma, C by 5-fold grid search over 1e-2..1e4. Per data "
              "set, mean over both scalings, the five widths and the seeds:", ""]
    lines += _accuracy_table(records, by=("dataset",))
    lines += ["", "Per data set, scaling and width, mean over the seeds:", ""]
    lines += _accuracy_table(records)
    return lines


# ----------------------------------------------------------------------------- main
def tasks_for(datasets, scalings, factors, seeds, classifiers):
    from kpm_reproduce.experiments.runner import Task

    return [Task(f"{ds}/{sc}/{f:g}/{s}", run_split,
                 {"dataset": ds, "scaling": sc, "sigma_factor": f, "seed": s,
                  "classifiers": list(classifiers)})
            for ds in datasets for sc in scalings for f in factors for s in seeds]


def _stored_keys(path):
    """Keys of the results already in ``path`` (none if it does not exist or is damaged:
    the runner reports the damage)."""
    from kpm_reproduce.experiments.runner import ResultsFileError, load_results

    try:
        return set(load_results(path)["results"]) if path.exists() else set()
    except ResultsFileError:
        return set()


def main(argv=None):
    from kpm_reproduce.experiments.provenance import command_line
    from kpm_reproduce.experiments.runner import run_tasks
    from robustness_report import write_section

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (the committed results: docs/results)")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS))
    ap.add_argument("--scalings", nargs="+", default=list(SCALINGS), choices=SCALINGS)
    ap.add_argument("--sigma-factors", nargs="+", type=float, default=list(SIGMA_FACTORS))
    ap.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    ap.add_argument("--classifiers", nargs="+", default=list(CLASSIFIERS), choices=CLASSIFIERS)
    ap.add_argument("--jobs", type=int, default=1, help="tasks run side by side (joblib)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the finished splits of an interrupted run with the same settings")
    ap.add_argument("--overwrite", action="store_true",
                    help="replace the finished splits of an earlier run (without it or "
                         "--resume, a run into such a folder is refused)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    for ds in args.datasets:
        if ds not in DATASETS:
            ap.error(f"unknown data set {ds!r}; expected some of {', '.join(DATASETS)}")
    config = {"datasets": args.datasets, "digits_per_class": DIGITS_PER_CLASS,
              "scalings": args.scalings,
              "sigma_factors": args.sigma_factors, "seeds": args.seeds,
              "classifiers": args.classifiers}
    tasks = tasks_for(args.datasets, args.scalings, args.sigma_factors, args.seeds,
                      args.classifiers)
    path = args.out / RESULTS_NAME
    reused = _stored_keys(path) & {t.key for t in tasks} if args.resume else set()
    t0 = time.perf_counter()
    res = run_tasks(tasks, path, jobs=args.jobs, resume=args.resume, overwrite=args.overwrite,
                    config=config, progress=not args.no_progress, description="real-data sweep")
    wall = time.perf_counter() - t0
    records = [res[t.key] for t in tasks]
    report = write_section(args.out, "sweep",
                           report_lines(records, command=command_line(
                               None if argv is None else ["sweep_real_data.py", *argv]),
                               wall_s=None if reused else wall, jobs=args.jobs))
    print(f"{path}\n{report}")
    return records


if __name__ == "__main__":
    main()
