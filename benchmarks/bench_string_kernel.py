"""Benchmark the vectorised weighted-degree kernel on the splice data.

* correctness and speed against a naive pure-Python reference (the defining sum over
  matching substrings, by string slicing) on a small subset;
* the two vectorised methods (sparse k-mer features, default; pairwise broadcasting);
* the 1000 x 1000 training Gram matrix and the 2175 x 1000 test matrix of one splice
  realization, beside scikit-learn's ``rbf_kernel`` on the one-hot code of the same strings
  (a scale reference: the cheapest kernel one could use on this input).

Usage: ``python benchmarks/bench_string_kernel.py [--degree 8] [--subset 40] [--repeat 3]``.
Timings are wall-clock medians on whatever machine runs it (note its load).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def naive_wd(a, b, d):
    L = len(a)
    return sum(
        (d - j + 1) * sum(a[i : i + j] == b[i : i + j] for i in range(L - j + 1))
        for j in range(1, d + 1)
    )


def timeit(fn, repeat):
    ts = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), out


def main():
    from sklearn.metrics.pairwise import rbf_kernel

    from kpm_reproduce.datasets import load_raetsch
    from kpm_reproduce.splice import decode_splice, one_hot_dna
    from kpm.kernels import weighted_degree_kernel

    p = argparse.ArgumentParser()
    p.add_argument("--degree", type=int, default=8)
    p.add_argument("--subset", type=int, default=40)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", default=None, help="write the numbers here")
    a = p.parse_args()

    sp = load_raetsch("splice", 1)
    Str, Ste = decode_splice(sp.X_train), decode_splice(sp.X_test)
    S = Str[: a.subset]
    t_naive, R = timeit(lambda: np.array([[naive_wd(x, z, a.degree) for z in S] for x in S]), 1)
    t_vec, K = timeit(lambda: weighted_degree_kernel(S, S, a.degree), a.repeat)
    assert np.array_equal(K, R), "vectorised WD kernel differs from the naive reference"
    t_train, Ktr = timeit(lambda: weighted_degree_kernel(Str, Str, a.degree), a.repeat)
    t_test, _ = timeit(lambda: weighted_degree_kernel(Ste, Str, a.degree), a.repeat)
    t_train_b, Kb = timeit(lambda: weighted_degree_kernel(Str, Str, a.degree, method="broadcast"), a.repeat)
    assert np.array_equal(Kb, Ktr), "the two WD methods differ"
    Htr, Hte = one_hot_dna(Str), one_hot_dna(Ste)
    t_rbf_train, _ = timeit(lambda: rbf_kernel(Htr, Htr, gamma=0.02), a.repeat)
    t_rbf_test, _ = timeit(lambda: rbf_kernel(Hte, Htr, gamma=0.02), a.repeat)
    res = {
        "machine": f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "degree": a.degree,
        "subset": a.subset,
        "naive_subset_s": t_naive,
        "vectorised_subset_s": t_vec,
        "speedup_vs_naive": t_naive / t_vec,
        "equal_to_naive": True,
        "train_1000x1000_s": t_train,
        "train_1000x1000_broadcast_s": t_train_b,
        "test_2175x1000_s": t_test,
        "sklearn_rbf_onehot_train_s": t_rbf_train,
        "sklearn_rbf_onehot_test_s": t_rbf_test,
        "wd_over_rbf_ratio_train": t_train / t_rbf_train,
        "min_eigenvalue_over_max": float(np.linalg.eigvalsh(Ktr).min() / Ktr.max()),
    }
    for k, v in res.items():
        print(f"{k:32s} {v:.4g}" if isinstance(v, float) else f"{k:32s} {v}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
