"""Benchmark: the default KPM against the CV-tuned SVM on Rätsch's 13 sets, paired per realization.

The estimator compared is kpm's default classifier at the kernel width of the kpm-13
reproduction::

    KernelProjectionMachine(sigma=s, random_state=0)

with every other parameter at its default (the squared-hinge SVM restricted to the leading
kernel-PCA directions, D and C chosen by its leave-one-out error), fitted on the training part of
each realization of Rätsch's benchmark sets (:func:`kpm_reproduce.datasets.load_raetsch`, the
files as distributed, not rescaled) and scored on its test part.

The width ``s`` of each set is that of the kpm-13 reproduction
(:data:`kpm_reproduce.experiments.kpm13.SIGMAS`: the width chosen by the relevant-dimension
likelihood of Braun, Buhmann & Müller, 2008).

The references are not refitted: they are read from the committed kpm-13 report
(``docs/results/kpm_13.json``, ``--reference``), which holds, per realization,

* the SVM's test error: ``sklearn.svm.SVC`` (LIBSVM) with the same Gaussian kernel, C chosen
  by 5-fold cross-validation over 100 log-spaced values in [1e-2, 1e3];
* the test error of the papers' KPM (Blanchard, Massart, Vert & Zwald, 2004: the hinge loss
  on the leading kernel-PCA directions, D by 5-fold cross-validation).

The realizations are the same splits, so the comparison is paired: per realization the gap
is ``error(default KPM) - error(reference)`` in percentage points (positive: the default KPM
is worse), and per set its mean ± the standard error (std / sqrt(R)) over the realizations.

Realizations (``--realizations N``): 1..N of each set, default :data:`N_REALIZATIONS`; image
and splice, the two slowest sets (20 realizations each, 1,300 and 1,000 training points), are
capped at :data:`SLOW_CAP` realizations (``--slow-cap K``; 0 removes the cap), so they run
min(N, K).

Every fit runs in this process with one BLAS thread, after a warm-up fit (numba compiles or
loads its cache outside the timings); its CPU time (``time.process_time``) and wall time are
recorded, with the fitted D and C (``n_components_``, ``C_``) and the distinct warnings the fit
raised. On a shared machine the wall time is inflated by other jobs, the CPU time far less.

Output: ``<out>/kpm13_default.json`` (every realization, the per-set rows and the summary;
rewritten after each set) and ``<out>/kpm13_default.md``. The committed report is written only
with ``--out docs/results``.

Usage::

    python benchmarks/bench_kpm13_default.py [--datasets banana heart ...] [--realizations 10]
        [--slow-cap 5] [--data-dir DIR] [--reference docs/results/kpm_13.json] [--quick]
        [--out docs/results]
"""

from __future__ import annotations

import os

# one BLAS/OpenMP thread, set before numpy loads its BLAS: on the shared 2-core machine a
# multithreaded OpenBLAS spins and inflates the times many-fold
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime as dt  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

TITLE = "The default KPM against the CV-tuned SVM on Rätsch's 13 sets"
RESULTS_NAME = "kpm13_default"
#: The 13 sets, in the order of the kpm-13 report.
DATASETS = ("banana", "breast_cancer", "diabetis", "flare_solar", "german", "heart", "image",
            "ringnorm", "splice", "thyroid", "titanic", "twonorm", "waveform")
#: Realizations 1..N of each set by default.
N_REALIZATIONS = 10
#: The slowest sets (20 realizations each, the largest training sets), capped at this many
#: realizations unless ``--slow-cap`` says otherwise.
SLOW_SETS = ("image", "splice")
SLOW_CAP = 5
#: ``--quick``: these sets (unless ``--datasets``), realization 1 (unless ``--realizations``).
QUICK_SETS = ("titanic", "heart")
#: A set is counted as clearly worse when its mean gap to the SVM exceeds this (points).
WORSE_BY = 1.0
#: The committed kpm-13 report beside this script's repository.
DEFAULT_REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "results" / "kpm_13.json"


# ----------------------------------------------------------------------------- plan, references
def sigmas():
    """``{set: sigma}``: the widths of the kpm-13 reproduction."""
    from kpm_reproduce.experiments.kpm13 import SIGMAS

    return dict(SIGMAS)


def plan(datasets, n_realizations, slow_cap=SLOW_CAP):
    """``{set: [1, ..., R]}``: the realizations run per set (:data:`SLOW_SETS` capped)."""
    if isinstance(n_realizations, bool) or not isinstance(n_realizations, (int, np.integer)) \
            or n_realizations < 1:
        raise ValueError(f"the number of realizations must be a positive integer, got {n_realizations!r}")
    if isinstance(slow_cap, bool) or not isinstance(slow_cap, (int, np.integer)) or slow_cap < 0:
        raise ValueError(f"the cap of the slow sets must be a non-negative integer (0: no cap), got {slow_cap!r}")
    if not datasets:
        raise ValueError("no data set chosen")
    known = sigmas()
    out = {}
    for name in datasets:
        if name not in DATASETS or name not in known:
            raise ValueError(f"unknown data set {name!r}; expected some of {', '.join(DATASETS)}")
        if name in out:
            raise ValueError(f"data set {name!r} given twice")
        r = min(n_realizations, slow_cap) if (name in SLOW_SETS and slow_cap) else n_realizations
        out[name] = list(range(1, int(r) + 1))
    return out


def load_reference(path, realizations):
    """The stored errors of the kpm-13 report for the realizations of ``realizations``.

    Parameters
    ----------
    path : path of ``kpm_13.json``
    realizations : dict ``{set: [realization, ...]}`` (from :func:`plan`)

    Returns
    -------
    dict ``{set: {realization: {"svm": error %, "kpm": error %}}}``: the SVM's test error
    (``per_realization[set][i]['svm']['error']``) and the papers' KPM's, D by CV
    (``['kpm']['cv']['error']``).

    Raises
    ------
    FileNotFoundError
        ``path`` is missing.
    ValueError
        Not a kpm-13 report, a set or a realization it lacks, or a set whose width there
        differs from :func:`sigmas` (the comparison would not be at the same width).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"the reference report {path} is missing: it is the kpm-13 report "
                                "(docs/results/kpm_13.json, written by `kpm reproduce kpm-13`)")
    try:
        report = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reference report {path} is not valid JSON: {exc}") from exc
    per = report.get("per_realization") if isinstance(report, dict) else None
    if not isinstance(per, dict):
        raise ValueError(f"{path} is not a kpm-13 report: it has no 'per_realization' table")
    ref_sigmas = (report.get("settings") or {}).get("sigmas", {})
    ours = sigmas()
    out = {}
    for name, reals in realizations.items():
        if name not in per:
            raise ValueError(f"the reference report {path} has no realizations of {name!r}; "
                             f"it has {', '.join(per) or 'none'}")
        if name in ref_sigmas and not math.isclose(ref_sigmas[name], ours[name], rel_tol=1e-12):
            raise ValueError(f"the reference report {path} used sigma={ref_sigmas[name]!r} for {name!r}, "
                             f"not the kpm-13 width {ours[name]!r}")
        rows = {int(r["realization"]): r for r in per[name]}
        missing = [r for r in reals if r not in rows]
        if missing:
            have = sorted(rows)
            span = f"{have[0]}..{have[-1]}" if have == list(range(have[0], have[-1] + 1)) else str(have)
            raise ValueError(f"realization {missing[0]} of {name!r} is beyond the reference report {path}: "
                             f"it has realizations {span} of {name!r}")
        out[name] = {}
        for r in reals:
            try:
                out[name][r] = {"svm": float(rows[r]["svm"]["error"]), "kpm": float(rows[r]["kpm"]["cv"]["error"])}
            except (KeyError, TypeError) as exc:
                raise ValueError(f"realization {r} of {name!r} in {path} lacks the SVM or the KPM "
                                 f"(D by CV) error: {exc!r}") from exc
    return out


# ----------------------------------------------------------------------------- fits
def make_estimator(sigma):
    """kpm's default classifier at width ``sigma``."""
    from kpm import KernelProjectionMachine

    return KernelProjectionMachine(sigma=sigma, random_state=0)


def warm_up():
    """One small fit of the default estimator (numba compiles or loads its cache, the modules
    import) so that the timed fits pay for none of it."""
    from sklearn.datasets import make_classification

    X, y = make_classification(90, 5, n_informative=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        make_estimator(2.0).fit(X, y)


def _shorten(text, limit=300):
    return text if len(text) <= limit else text[:limit - 1] + "…"


def fit_realization(name, realization, data_dir=None):
    """Fit the default KPM on one realization (timed); its test error in percent, D, C."""
    from kpm_reproduce.datasets import load_raetsch

    s = load_raetsch(name, realization, data_dir=data_dir)
    est = make_estimator(sigmas()[name])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w0, c0 = time.perf_counter(), time.process_time()
        est.fit(s.X_train, s.y_train)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    C = getattr(est, "C_", None)
    return {"realization": int(realization), "estimator": repr(est), "sigma": float(est.sigma),
            "n_train": len(s.y_train), "n_test": len(s.y_test),
            "error": 100.0 * float(np.mean(est.predict(s.X_test) != s.y_test)),
            "D": int(est.n_components_), "C": None if C is None else float(C),
            "cpu_s": cpu, "wall_s": wall,
            # the distinct warnings, in the order raised
            "warnings": list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))}


def with_reference(rec, ref):
    """``rec`` with the stored references and the gaps (points) added."""
    return {**rec, "svm_error": ref["svm"], "paper_kpm_error": ref["kpm"],
            "gap_svm": rec["error"] - ref["svm"], "gap_paper_kpm": rec["error"] - ref["kpm"]}


# ----------------------------------------------------------------------------- summary
def mean_se(values):
    """``(mean, standard error)``; the standard error (std with ddof=1 / sqrt(R)) is None for
    a single value."""
    v = np.asarray(values, dtype=float)
    se = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else None
    return float(v.mean()), se


def summarise_set(name, records):
    """One row of the report from the records of a set's realizations."""
    gap_svm, se_svm = mean_se([r["gap_svm"] for r in records])
    gap_kpm, se_kpm = mean_se([r["gap_paper_kpm"] for r in records])
    Cs = [r["C"] for r in records if r["C"] is not None]
    return {"dataset": name, "sigma": sigmas()[name], "R": len(records),
            "realizations": [r["realization"] for r in records], "n_train": records[0]["n_train"],
            "error": float(np.mean([r["error"] for r in records])),
            "svm_error": float(np.mean([r["svm_error"] for r in records])),
            "paper_kpm_error": float(np.mean([r["paper_kpm_error"] for r in records])),
            "gap_svm": gap_svm, "gap_svm_se": se_svm, "gap_paper_kpm": gap_kpm, "gap_paper_kpm_se": se_kpm,
            "mean_D": float(np.mean([r["D"] for r in records])),
            "median_C": float(np.median(Cs)) if Cs else None,
            "cpu_s": float(sum(r["cpu_s"] for r in records)), "wall_s": float(sum(r["wall_s"] for r in records))}


def summary(rows):
    """Over the sets: the mean of their mean gaps, the largest, the sets clearly worse, times."""
    gaps = [r["gap_svm"] for r in rows]
    worst = int(np.argmax(gaps))
    return {"sets": len(rows), "fits": int(sum(r["R"] for r in rows)),
            "mean_gap_svm": float(np.mean(gaps)),
            "mean_gap_paper_kpm": float(np.mean([r["gap_paper_kpm"] for r in rows])),
            "largest_gap_svm": gaps[worst], "largest_gap_set": rows[worst]["dataset"],
            "sets_worse_by_more_than_1": int(sum(g > WORSE_BY for g in gaps)),
            "sets_worse_names": [r["dataset"] for r in rows if r["gap_svm"] > WORSE_BY],
            "sets_better": int(sum(g < 0 for g in gaps)),
            "cpu_s": float(sum(r["cpu_s"] for r in rows)), "wall_s": float(sum(r["wall_s"] for r in rows))}


# ----------------------------------------------------------------------------- report
def _pm(mean, se):
    return f"{mean:+.2f}" + ("" if se is None else f" ± {se:.2f}")


def summary_lines(s):
    worse = s["sets_worse_names"]
    return [
        f"- Mean gap to the SVM over the {s['sets']} sets (the mean of the per-set mean gaps): "
        f"**{s['mean_gap_svm']:+.2f}** points; to the papers' KPM: {s['mean_gap_paper_kpm']:+.2f} points.",
        f"- Largest gap to the SVM: {s['largest_gap_svm']:+.2f} points ({s['largest_gap_set']}).",
        f"- Sets where the default KPM is worse than the SVM by more than {WORSE_BY:g} point: "
        f"{s['sets_worse_by_more_than_1']}" + (f" ({', '.join(worse)})" if worse else "")
        + f"; sets where it is better on average: {s['sets_better']}.",
        f"- Time of the {s['fits']} fits (each the whole model selection plus the final fit): "
        f"{s['cpu_s']:.1f} CPU s, {s['wall_s']:.1f} wall s.",
    ]


def table_lines(rows):
    lines = ["| set | σ | R | n train | default KPM error % | SVM error % | gap to SVM | "
             "papers' KPM error % | gap to papers' KPM | mean D | median C | CPU s / fit | wall s / fit |",
             "|" + "---|" * 13]
    for r in rows:
        lines.append("| " + " | ".join([
            r["dataset"], f"{r['sigma']:.4g}", str(r["R"]), str(r["n_train"]), f"{r['error']:.2f}",
            f"{r['svm_error']:.2f}", _pm(r["gap_svm"], r["gap_svm_se"]), f"{r['paper_kpm_error']:.2f}",
            _pm(r["gap_paper_kpm"], r["gap_paper_kpm_se"]), f"{r['mean_D']:.1f}",
            "–" if r["median_C"] is None else f"{r['median_C']:.3g}",
            f"{r['cpu_s'] / r['R']:.2f}", f"{r['wall_s'] / r['R']:.2f}"]) + " |")
    return lines


def realization_lines(records):
    lines = ["| set | realization | default KPM error % | SVM error % | gap to SVM | papers' KPM error % | "
             "gap to papers' KPM | D | C | CPU s | wall s |", "|" + "---|" * 11]
    for name, recs in records.items():
        for r in recs:
            lines.append("| " + " | ".join([
                name, str(r["realization"]), f"{r['error']:.2f}", f"{r['svm_error']:.2f}", f"{r['gap_svm']:+.2f}",
                f"{r['paper_kpm_error']:.2f}", f"{r['gap_paper_kpm']:+.2f}", str(r["D"]),
                "–" if r["C"] is None else f"{r['C']:.3g}", f"{r['cpu_s']:.2f}", f"{r['wall_s']:.2f}"]) + " |")
    return lines


def warning_kind(message):
    """A warning's text with its numbers replaced by ``#``: the messages of one kind differ
    only in their numbers (sample counts, the D selected)."""
    return re.sub(r"\d+(?:\.\d+)?", "#", message)


def warning_lines(records):
    """The warnings of the timed fits, one line per kind: the fits per set that raised it and
    one of its messages."""
    fits, example = {}, {}
    for name, recs in records.items():
        for rec in recs:
            for msg in rec["warnings"]:
                kind = warning_kind(msg)
                example.setdefault(kind, msg)
                fits.setdefault(kind, Counter())[name] += 1
    if not fits:
        return []
    R = {name: len(recs) for name, recs in records.items()}
    lines = ["", "Warnings raised in the timed fits (the fits of each set that raised them; one message "
             "of each kind, the others differ only in their numbers):", ""]
    for kind, per_set in fits.items():
        where = ", ".join(f"{name} ({c} of {R[name]})" for name, c in per_set.items())
        lines.append(f"- {where}: “{_shorten(example[kind])}”")
    return lines


def report_lines(result):
    from kpm_reproduce.experiments.provenance import header

    cfg = result["config"]
    cap = (f"image and splice capped at {cfg['slow_cap']} realizations (`--slow-cap`)"
           if cfg["slow_cap"] and any(d in SLOW_SETS for d in cfg["datasets"]) else None)
    lines = [f"# {TITLE}", "", *header(result["command"], code=result.get("code"))]
    lines += [
        "kpm's default classifier, `KernelProjectionMachine(sigma=s, random_state=0)` (the "
        "squared-hinge SVM restricted to the leading kernel-PCA directions, D and C chosen by "
        "its leave-one-out error, every parameter at its default), against the SVM with C tuned by "
        "cross-validation, on Rätsch's benchmark sets as distributed, at the kernel widths s of the "
        "kpm-13 reproduction (the relevant-dimension likelihood of Braun, Buhmann & Müller, 2008). "
        "The SVM column is not refitted: it is the committed per-realization SVM error of the kpm-13 "
        "report (`kpm_13.json` beside this file: `sklearn.svm.SVC`, i.e. LIBSVM, with the same "
        "Gaussian kernel, C by 5-fold cross-validation over 100 log-spaced values in [1e-2, 1e3]), "
        "and the default KPM is fitted on the same training sets and scored on the same test sets, "
        "so the comparison is paired per realization. The papers' KPM column is the same report's "
        "KPM of Blanchard, Massart, Vert & Zwald (2004), D by 5-fold cross-validation. "
        "Gap = default KPM error − reference error, in percentage points (positive: the default "
        "KPM is worse); per set the mean ± standard error (std / √R) over its R realizations.",
        "",
        f"- Realizations 1..R of each set, R = {cfg['realizations']}"
        + (f"; {cap}" if cap else "") + f". Reference: `{cfg['reference_name']}`.",
        f"- BLAS threads: {result['threads']}; times are per fit (the whole model selection plus the "
        f"final fit), after a warm-up fit. Run wall time {result['run_wall_s'] / 60:.1f} min.",
    ]
    lines += ["", "## Summary", "", *summary_lines(result["summary"]), "", "## Per set", "",
              *table_lines(result["rows"])]
    lines += warning_lines(result["records"])
    lines += ["", "## Per realization", "", *realization_lines(result["records"])]
    return lines


def _threads():
    """Threads per BLAS/OpenMP API: the most of its loaded libraries (numpy and scipy may
    each load their own OpenBLAS)."""
    from threadpoolctl import threadpool_info

    threads = {}
    for lib in threadpool_info():
        threads[lib["internal_api"]] = max(threads.get(lib["internal_api"], 0), lib["num_threads"])
    return threads


# ----------------------------------------------------------------------------- main
def main(argv=None):
    from kpm_reproduce.experiments.provenance import code_version, command_line, machine, write_report

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=None, metavar="SET",
                    help=f"Rätsch sets (default: all 13: {', '.join(DATASETS)})")
    ap.add_argument("--realizations", type=int, default=None, metavar="N",
                    help=f"realizations 1..N of each set (default {N_REALIZATIONS}; "
                         f"{' and '.join(SLOW_SETS)} capped by --slow-cap)")
    ap.add_argument("--slow-cap", type=int, default=SLOW_CAP, metavar="K",
                    help=f"at most K realizations of {' and '.join(SLOW_SETS)}, the slowest sets "
                         f"(default {SLOW_CAP}; 0: no cap)")
    ap.add_argument("--data-dir", default=None, help="the folder holding raetsch/ (default: KPM_DATA, "
                                                      "then ../shared/data)")
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE,
                    help="the kpm-13 report holding the SVM and papers' KPM errors per realization "
                         "(default: docs/results/kpm_13.json of this repository)")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke test: {' and '.join(QUICK_SETS)} (unless --datasets), realization 1 "
                         "(unless --realizations)")
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (the committed results: docs/results)")
    args = ap.parse_args(argv)
    datasets = args.datasets or list(QUICK_SETS if args.quick else DATASETS)
    n = args.realizations if args.realizations is not None else (1 if args.quick else N_REALIZATIONS)
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        ap.error(f"unknown data set(s) {', '.join(map(repr, unknown))}; expected some of {', '.join(DATASETS)}")
    if n < 1:
        ap.error(f"--realizations must be at least 1, got {n}")
    if args.slow_cap < 0:
        ap.error(f"--slow-cap must be 0 (no cap) or positive, got {args.slow_cap}")
    try:
        realizations = plan(datasets, n, args.slow_cap)
        reference = load_reference(args.reference, realizations)
    except (ValueError, FileNotFoundError) as exc:
        ap.error(str(exc))

    args.out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = args.out / f"{RESULTS_NAME}.json", args.out / f"{RESULTS_NAME}.md"
    command = command_line(None if argv is None else ["bench_kpm13_default.py", *argv])
    config = {"datasets": datasets, "realizations": n, "slow_cap": args.slow_cap,
              "plan": realizations, "sigmas": {d: sigmas()[d] for d in datasets},
              "reference": str(args.reference), "reference_name": args.reference.name,
              "data_dir": args.data_dir, "quick": args.quick}
    result = {"title": TITLE, "command": command, "code": code_version(), "machine": machine(),
              "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "config": config, "threads": None, "records": {}, "rows": []}
    with threadpool_limits(limits=1):  # the environment variables above come too late where numpy is loaded
        _run(realizations, reference, args.data_dir, result, json_path)
    result["summary"] = summary(result["rows"])
    print("\n".join(summary_lines(result["summary"])))
    write_report(json_path, result, md_path, report_lines(result))
    return result


def _run(realizations, reference, data_dir, result, json_path):
    """The timed fits, set by set, the partial report written after each set."""
    from kpm_reproduce.experiments.provenance import write_report

    t0 = time.perf_counter()
    warm_up()
    result["threads"] = _threads()
    for name, reals in realizations.items():
        recs = []
        for r in reals:
            rec = with_reference(fit_realization(name, r, data_dir), reference[name][r])
            recs.append(rec)
            print(f"{name}/{r}: error {rec['error']:.2f} % (SVM {rec['svm_error']:.2f}, gap {rec['gap_svm']:+.2f}), "
                  f"D={rec['D']} C={rec['C']}, {rec['cpu_s']:.2f} CPU s", flush=True)
        result["records"][name] = recs
        result["rows"].append(summarise_set(name, recs))
        result["run_wall_s"] = time.perf_counter() - t0
        write_report(json_path, result)
    result["run_wall_s"] = time.perf_counter() - t0


if __name__ == "__main__":
    main()
