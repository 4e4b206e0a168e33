"""Which C grid and which CV rule for ``KernelProjectionMachine(formulation='svm')``.

For Rätsch realizations of a few sets (σ of ``kpm reproduce kpm-13``), this computes once
the pooled 5-fold CV errors ``E[C, D]`` (folds ``StratifiedKFold(5, shuffle=True,
random_state=realization)``, as the SVM column of kpm-13) and the test errors ``T[C, D]``
of the SVM restricted to S_D, for C in a superset grid and D on the estimator's default
grid, then reads off the test error each selection rule would give:

* ``joint <grid>``: the first minimum of E over (C, D) (ties: smaller C, then smaller D) --
  the estimator's ``selection='cv'``;
* ``2-stage <grid>``: C by CV at D = rank (the kernel SVM), then D by CV for that C.

beside the CV-tuned SVC of kpm-13 (``docs/results/kpm_13.json``, same realizations).
The fold bases are :func:`kpm.spectral.eigen_basis` of the folds' kernel matrices
(the estimator also ties duplicated rows; identical up to rounding on sets without
duplicates).

Usage::

    python benchmarks/svm_formulation_grid.py --datasets german heart --realizations 1 6
                                              [--out kpm-results]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

SUPERSET = np.array([0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0])
GRIDS = {"{0.1,1,10,100}": [0.1, 1.0, 10.0, 100.0], "{0.1,0.3,1,3,10}": [0.1, 0.3, 1.0, 3.0, 10.0],
         "{0.1,0.3,1,3,10,100}": [0.1, 0.3, 1.0, 3.0, 10.0, 100.0], "all 8": list(SUPERSET)}


def _path_errors(basis, y_tr, Z_eval, y_eval, grid, C):
    """Misclassified points of ``Z_eval`` at every D of ``grid`` (padded past the basis' end)."""
    from kpm.hinge.svm_path import svm_path  # the solver the estimator uses

    m = min(int(grid[-1]), basis.rank)
    g = grid[grid <= m]
    g = g if len(g) and g[-1] == m else np.append(g, m)
    sl = np.sqrt(basis.eigenvalues[:m])
    p = svm_path(basis.eigenvectors[:, :m] * sl, sl, y_tr, C, g)
    wrong = ((p.decision_values(Z_eval[:, :m]) > 0) * 2 - 1 != y_eval[:, None]).sum(axis=0)
    return np.concatenate([wrong, np.full(len(grid) - len(wrong), wrong[-1])])[: len(grid)]


def curves(dataset, realization, data_dir=None):
    """``(E, T, grid)``: pooled CV errors (counts) and test errors (%) over SUPERSET x grid."""
    from sklearn.model_selection import StratifiedKFold

    from kpm_reproduce.datasets import load_raetsch
    from kpm_reproduce.experiments.kpm13 import SIGMAS
    from kpm.kernels import make_kernel
    from kpm.machine.exact import SVM_DIM_DENSE, SVM_DIM_RATIO
    from kpm.machine.eigen import auto_dim_grid
    from kpm.spectral.basis import eigen_basis

    s = load_raetsch(dataset, realization, data_dir=data_dir)
    kern = make_kernel("rbf", sigma=SIGMAS[dataset])
    K = kern(s.X_train)
    pos = np.unique(s.y_train)[1]
    y, yt = np.where(s.y_train == pos, 1.0, -1.0), np.where(s.y_test == pos, 1.0, -1.0)
    full = eigen_basis(K).truncate()
    grid = auto_dim_grid(full.rank, dense=SVM_DIM_DENSE, ratio=SVM_DIM_RATIO)
    E = np.zeros((len(SUPERSET), len(grid)))
    for tr, va in StratifiedKFold(5, shuffle=True, random_state=realization).split(K, y):
        b = eigen_basis(K[np.ix_(tr, tr)]).truncate()
        Zva = b.features(K[np.ix_(va, tr)], b.rank, whiten=True)
        for i, C in enumerate(SUPERSET):
            E[i] += _path_errors(b, y[tr], Zva, y[va], grid, C)
    Zt = full.features(kern(s.X_test, s.X_train), full.rank, whiten=True)
    T = np.array([100.0 * _path_errors(full, y, Zt, yt, grid, C) / len(yt) for C in SUPERSET])
    return E, T, grid


def _first_min(E, rows, cols):
    sub = E[np.ix_(rows, cols)]
    i, j = np.argwhere(sub == sub.min())[0]
    return rows[i], cols[j]


def rule_errors(E, T):
    """Test error of every (rule, C grid)."""
    out = {}
    all_d = list(range(E.shape[1]))
    for name, Cs in GRIDS.items():
        rows = [int(np.flatnonzero(SUPERSET == c)[0]) for c in Cs]
        out[f"joint {name}"] = float(T[_first_min(E, rows, all_d)])
        c, _ = _first_min(E, rows, [E.shape[1] - 1])
        out[f"2-stage {name}"] = float(T[_first_min(E, [c], all_d)])
    return out


def main(argv=None):
    from kpm_reproduce.experiments.provenance import header

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["german", "heart", "waveform", "titanic"])
    ap.add_argument("--realizations", nargs=2, type=int, default=[1, 6], metavar=("FIRST", "LAST"))
    ap.add_argument("--out", type=Path, default=Path("kpm-results"))
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    ref = json.loads((Path(__file__).resolve().parents[1] / "docs" / "results" / "kpm_13.json").read_text())
    per = {}
    for d in args.datasets:
        for r in range(args.realizations[0], args.realizations[1] + 1):
            E, T, _ = curves(d, r, args.data_dir)
            rec = rule_errors(E, T)
            rec["SVC (kpm-13)"] = ref["per_realization"][d][r - 1]["svm"]["error"]
            per.setdefault(d, []).append(rec)
            print(d, r, {k: round(v, 2) for k, v in rec.items()}, flush=True)
    names = list(next(iter(per.values()))[0])
    M = np.array([[np.mean([rec[n] for rec in recs]) for n in names] for recs in per.values()])
    md = ["# formulation='svm': C grid and CV rule", "", *header(),
          f"Test error (%), mean over realizations {args.realizations[0]}..{args.realizations[1]}; "
          "protocol in `benchmarks/svm_formulation_grid.py`.", "",
          "| dataset | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    md += [f"| {d} | " + " | ".join(f"{x:.2f}" for x in row) + " |" for d, row in zip(per, M)]
    md += ["| mean | " + " | ".join(f"{x:.2f}" for x in M.mean(axis=0)) + " |",
           "| largest gap to SVC | " + " | ".join(f"{x:+.2f}" for x in (M - M[:, -1:]).max(axis=0)) + " |"]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "svm_formulation_grid.md").write_text("\n".join(md) + "\n")
    (args.out / "svm_formulation_grid.json").write_text(json.dumps(per, indent=1))
    print("\n".join(md))


if __name__ == "__main__":
    main()
