"""Spot check: the KPM Table 2 protocol with both LP solvers gives the same models.

``KernelProjectionMachine(sigma, max_components=60, selection='cv', formulation='paper')`` (5 shuffled stratified folds,
as ``kpm reproduce kpm-table2`` with its default D cap) on realizations 1..N of the six
NIPS 2004 data sets, once with ``lp_solver='auto'`` (specialised simplex) and once with
``lp_solver='highs'``; reports the selected D and test error of both, the fits where they
differ, the CPU time of each and the simplex's fallbacks to HiGHS.

Usage::

    python benchmarks/compare_kpm_solvers.py [--realizations 10] [--out docs/results]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kpm_reproduce.experiments.provenance import header  # noqa: E402
from kpm_reproduce.experiments.kpm_tables import SIGMAS as SIGMA  # noqa: E402  (the papers' widths)


def main(argv=None):
    from sklearn.model_selection import StratifiedKFold

    from kpm import KernelProjectionMachine
    from kpm_reproduce.datasets import load_raetsch

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--realizations", type=int, default=10)
    ap.add_argument("--datasets", nargs="+", default=list(SIGMA), choices=list(SIGMA))
    ap.add_argument("--out", type=Path, default=Path("kpm-results"),
                    help="output folder (the committed results: docs/results)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    lines = ["| dataset | fits | same D and test error | CPU simplex (auto) s | CPU HiGHS s | fallbacks (paths) |",
             "|---|---|---|---|---|---|"]
    differing = []
    for name in args.datasets:
        sigma = SIGMA[name]
        same = 0
        cpu = {"auto": 0.0, "highs": 0.0}
        fallbacks = 0
        for r in range(1, args.realizations + 1):
            split = load_raetsch(name, r, data_dir=args.data_dir)
            out = {}
            for solver in ("auto", "highs"):
                t = time.process_time()
                m = KernelProjectionMachine(
                    sigma=sigma, max_components=60, cv=StratifiedKFold(5, shuffle=True, random_state=0),
                    lp_solver=solver, random_state=0, cv_duplicates="split", formulation="paper",
                ).fit(split.X_train, split.y_train)
                cpu[solver] += time.process_time() - t
                out[solver] = (int(m.n_components_), float(np.mean(m.predict(split.X_test) != split.y_test)))
                if solver == "auto":
                    fallbacks += m.lp_fallbacks_
            same += out["auto"] == out["highs"]
            if out["auto"] != out["highs"]:
                differing.append(f"{name} r{r}: auto D={out['auto'][0]} {100 * out['auto'][1]:.2f} %, "
                                 f"highs D={out['highs'][0]} {100 * out['highs'][1]:.2f} %")
        lines.append(f"| {name} | {args.realizations} | {same} | {cpu['auto']:.1f} | {cpu['highs']:.1f} | {fallbacks} |")
        print(lines[-1], flush=True)
    text = (
        "# KPM Table 2 protocol with both LP solvers (spot check)\n\n"
        + "\n".join(header()) + "\n"
        "`benchmarks/compare_kpm_solvers.py`: `KernelProjectionMachine(sigma, max_components=60, formulation='paper')`, 5-fold CV, "
        f"realizations 1-{args.realizations}, `lp_solver='auto'` vs `'highs'`. Machine: {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, one BLAS thread.\n\n"
        + "\n".join(lines) + "\n\n"
        + ("Fits that differ:\n\n" + "\n".join(f"* {d}" for d in differing) if differing
           else "No fit differs in selected D or test error.") + "\n"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kpm_solvers_table2_check.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
