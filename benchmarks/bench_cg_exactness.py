"""Exactness of NystroemKPM's constraint generation: its hinge-LP objective against the full
LP solved by scipy's HiGHS, on the Nyström features of n = 20 000 twonorm points (m = 500).

(The timing part of the former scale benchmark is ``kpm reproduce scale``.)

Usage::

    python benchmarks/bench_cg_exactness.py [--n 20000] [--out kpm-results]

Writes ``<out>/cg_exactness.json`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np


def data(n):
    from kpm.datasets import make_twonorm

    X, y = make_twonorm(n, random_state=0)
    return X, y, None, None


def sigma_of(X):
    from kpm.kernels import median_sigma

    return median_sigma(X, max_samples=2000, random_state=0)


def loadavg() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def run_exactness(n=20_000, Ds=(5, 20)):
    import scipy.sparse as sp
    from scipy.optimize import linprog

    from kpm.hinge.constraint_generation import ConstraintGenerationHingeLP
    from kpm.kernels import make_kernel
    from kpm.machine import nystroem_eigenfunctions
    from kpm.spectral import select_landmarks

    X, y, _, _ = data(n)
    y = y.astype(float)
    k = make_kernel("rbf", sigma=sigma_of(X))
    Z = X[select_landmarks(X, 500, random_state=0)]
    _, P = nystroem_eigenfunctions(k, Z, max_components=max(Ds))
    F = np.asfortranarray(k(X, Z) @ P)
    rows = []
    cg = ConstraintGenerationHingeLP(F, y, random_state=0)
    for D in Ds:
        t = time.perf_counter()
        res = cg.solve(D)
        t_cg = time.perf_counter() - t
        A = sp.hstack([sp.csr_matrix(-y[:, None]), sp.csr_matrix(-y[:, None] * F[:, :D]), -sp.identity(n)])
        c = np.r_[np.zeros(D + 1), np.ones(n)]
        t = time.perf_counter()
        ref = linprog(c, A_ub=A.tocsr(), b_ub=-np.ones(n),
                      bounds=[(None, None)] * (D + 1) + [(0, None)] * n, method="highs")
        t_full = time.perf_counter() - t
        rows.append({
            "n": n, "m": 500, "D": D, "cg_objective": res.objective, "full_lp_objective": float(ref.fun),
            "rel_diff": abs(res.objective - ref.fun) / abs(ref.fun), "cg_working_set": res.n_working,
            "cg_rounds": res.n_rounds, "cg_s (warm path)": t_cg, "full_lp_s": t_full,
        })
    return {"method": "exactness", "rows": rows, "load": loadavg()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000, help="training points")
    ap.add_argument("--out", type=Path, default=Path("kpm-results"), help="output folder")
    a = ap.parse_args()
    res = run_exactness(a.n)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "cg_exactness.json").write_text(json.dumps(res, indent=1, default=float))
    for r in res["rows"]:
        print(f"D={r['D']}: CG {r['cg_objective']:.9f}  full LP {r['full_lp_objective']:.9f}  "
              f"rel. diff {r['rel_diff']:.1e}  working set {r['cg_working_set']}")


if __name__ == "__main__":
    main()
