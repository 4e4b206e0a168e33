"""Nyström approximation error of the landmark rules across kernel widths, at one m.

``bench_landmarks.py`` measures the rules at the median-heuristic width only, where randomly
pivoted Cholesky (Chen, Epperly, Tropp & Webber 2023) is *above* uniform landmarks at
m = 500 on twonorm and ringnorm. This asks whether that depends on the width: for each data
set (Breiman's twonorm and ringnorm generators, ``--n-train`` points, seed 0) and each width
sigma in ``{the width of kpm-13 (Braun et al.'s likelihood), median heuristic, 2 x median}``,
the relative trace-norm error of ``K - K[:, S] K[S, S]^+ K[S, :]`` on a fixed uniform
sample of ``--sample`` training rows (:func:`kpm.spectral.landmarks.nystroem_trace_error`), median
over ``--seeds``, for uniform, k-means++ and RPCholesky landmarks
(:func:`kpm.spectral.landmarks.select_landmarks`).

Usage::

    python benchmarks/landmarks_width_sweep.py [--m 500] [--out kpm-results]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from kpm.datasets import make_ringnorm, make_twonorm
from kpm_reproduce.experiments.kpm13 import SIGMAS
from kpm_reproduce.experiments.provenance import header
from kpm.kernels import make_kernel, median_sigma
from kpm.spectral.landmarks import nystroem_trace_error, select_landmarks

RULES = ("uniform", "kmeans++", "rpcholesky")
DATA = {"twonorm": make_twonorm, "ringnorm": make_ringnorm}


def sweep(name, n_train, m, seeds, sample):
    """Rows ``(sigma label, sigma, {rule: median error})`` for one data set."""
    X, _ = DATA[name](n_train, random_state=0)
    T = np.sort(np.random.default_rng(123).choice(n_train, min(sample, n_train), replace=False))
    med = median_sigma(X)
    rows = []
    for label, sigma in (("kpm-13", SIGMAS[name]), ("median", med), ("2 x median", 2 * med)):
        k = make_kernel("rbf", sigma=sigma)
        errs = {rule: float(np.median([nystroem_trace_error(k, X, select_landmarks(X, m, rule, random_state=s,
                                                                                    kernel=k), sample=T)
                                       for s in seeds]))
                for rule in RULES}
        rows.append((label, sigma, errs))
    return rows


def report(results, m, seeds, n_train, sample):
    lines = ["# Landmark rules across kernel widths", "", *header(), "",
             f"Relative trace-norm error of the Nyström approximation with m = {m} landmarks on a "
             f"uniform sample of {sample} of the {n_train} training rows, median over seeds "
             f"{list(seeds)}.", "",
             "| data set | width | sigma | uniform | k-means++ | RPCholesky | RPCholesky / uniform |",
             "|---|---|---|---|---|---|---|"]
    for name, rows in results.items():
        for label, sigma, e in rows:
            lines.append(f"| {name} | {label} | {sigma:.3g} | {e['uniform']:.3e} | {e['kmeans++']:.3e} | "
                         f"{e['rpcholesky']:.3e} | {e['rpcholesky'] / e['uniform']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=list(DATA), choices=list(DATA))
    ap.add_argument("--m", type=int, default=500)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--n-train", type=int, default=7400)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=Path("kpm-results"))
    args = ap.parse_args(argv)
    results = {d: sweep(d, args.n_train, args.m, args.seeds, args.sample) for d in args.datasets}
    text = report(results, args.m, args.seeds, args.n_train, args.sample)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "landmarks_width_sweep.md").write_text(text)
    print(text)
    return results


if __name__ == "__main__":
    main()
