"""
The KPM at scale: NystroemKPM
=============================

The exact KPM needs the n×n kernel matrix and its eigenvectors. :class:`kpm.NystroemKPM`
replaces the kernel principal directions by Nyström eigenfunctions computed on m landmarks
(an n×m feature matrix, built in blocks) and solves the hinge linear programme of every D by
constraint generation. Its cost grows linearly in n. This example times both on twonorm
(Breiman 1996) for growing n, with their test errors.
"""

import time

import matplotlib.pyplot as plt

from kpm import KernelProjectionMachine, NystroemKPM, median_sigma
from kpm.datasets import bayes_error, make_twonorm

Xt, yt = make_twonorm(5000, random_state=1)
# numba compiles the LP solver on first use: a tiny warm-up fit keeps that out of the timings
KernelProjectionMachine(sigma=1.0, max_components=5, formulation="paper").fit(*make_twonorm(60, random_state=2))
NystroemKPM(30, sigma=1.0, max_components=5).fit(*make_twonorm(300, random_state=2))
sizes = [500, 1000, 2000, 4000, 8000]
res = {"KernelProjectionMachine": [], "NystroemKPM (m = 200)": []}
for n in sizes:
    X, y = make_twonorm(n, random_state=0)
    sigma = median_sigma(X, max_samples=1000, random_state=0)
    models = {"NystroemKPM (m = 200)": NystroemKPM(200, sigma=sigma, max_components=30,
                                                   random_state=0)}
    if n <= 2000:
        models["KernelProjectionMachine"] = KernelProjectionMachine(sigma=sigma, max_components=30,
                                                                    random_state=0, formulation="paper")
    for name, model in models.items():
        t = time.perf_counter()
        model.fit(X, y)
        res[name].append((n, time.perf_counter() - t, 1 - model.score(Xt, yt)))
        print(f"{name:24s} n = {n:5d}: fit {res[name][-1][1]:.2f} s, "
              f"test error {res[name][-1][2]:.3f}")

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
for name, mk in zip(res, ("s-", "o-")):
    ns, ts, es = zip(*res[name])
    axes[0].loglog(ns, ts, mk, label=name)
    axes[1].semilogx(ns, [100 * e for e in es], mk, label=name)
axes[1].axhline(100 * bayes_error("twonorm"), color="k", ls=":", label="Bayes error")
axes[0].set_ylabel("fit time (s, this machine)")
axes[1].set_ylabel("test error (%)")
for ax in axes:
    ax.set_xlabel("training points n")
    ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
