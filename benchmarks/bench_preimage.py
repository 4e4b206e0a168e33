"""Benchmark: kernel PCA pre-images on USPS digits, every method on every basis, against
scikit-learn's learned inverse.

The USPS denoising setting of Schölkopf et al. (1999) and Mika et al. (1999) at a small
scale: ``--n-train-per-digit`` (100) clean training images per digit and
``--n-test-per-digit`` (20) test images per digit, drawn by
``kpm_reproduce.experiments.denoise.usps_subset`` (seed s) from
``kpm_reproduce.datasets.load_usps``, pixels in [-1, 1]; the test images get Gaussian noise
(standard deviation 0.5) or speckle noise (each pixel set to black or white with
probability 0.4; ``kpm_reproduce.experiments.denoise.add_noise``, generator seed s + 1).
Kernel ``exp(-||x - y||^2 / c)`` with ``c = 2 x mean pixel variance x 256`` (the paper's
rule), ``--components`` (64) kernel principal components.

For every seed, ``kpm.KernelProjection`` is fitted on the clean training images on three
bases -- exact (``eigen_solver='auto'``), Nyström (``--landmarks`` uniform landmarks,
``random_state`` = seed) and matrix-free -- with every pre-image method of
``inverse_transform``: the fixed point (from the MDS pre-image, and from the noisy image as
``kpm.KernelPCADenoiser`` starts it), the gradient pre-image (from the MDS pre-image), the
MDS pre-image of Kwok & Tsang (2004), and the learned map (Bakır et al. 2004) for every
ridge ``alpha`` of ``--alphas`` and at ``preimage_alpha='auto'`` (leave-one-out). scikit-learn's ``KernelPCA(fit_inverse_transform=True)``
(the same kernel and components, ``eigen_solver='dense'``) runs on the same grid of
``alpha``. The learned maps are reported at their best ``alpha`` on the test images (an
oracle choice, the most favourable to them); the other methods have no parameter chosen
on the test images.

MSE: the mean over pixels and test images of the squared difference to the clean image
(the reproduction's ``denoise_usps`` reports the sum over the 256 pixels: 256 x this).
Times: wall seconds of ``fit`` (on the 1000 training images) and of denoising the test
images of one noise kind (``transform`` + ``inverse_transform``; for scikit-learn
``transform`` + ``inverse_transform``).

Usage::

    python benchmarks/bench_preimage.py [--out kpm-results]       # ~10 min on 2 shared cores
    python benchmarks/bench_preimage.py --out docs/results          # refresh the committed report
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.decomposition import KernelPCA

from kpm import KernelProjection
from kpm_reproduce.experiments.denoise import add_noise, usps_subset
from kpm_reproduce.experiments.provenance import header

NOISES = {"gaussian": 0.5, "speckle": 0.4}
BASES = ("exact", "nystroem", "matrix-free")
#: method label -> (KernelProjection's preimage, start of the iteration)
METHODS = {
    "fixed point (MDS start)": ("fixed-point", "mds"),
    "fixed point (noisy start)": ("fixed-point", "noisy"),
    "gradient (MDS start)": ("gradient", "mds"),
    "MDS (Kwok & Tsang)": ("mds", None),
    "learned (best alpha)": ("learned", None),
    "learned (leave-one-out alpha)": ("learned", None),
}
#: the learned map at preimage_alpha='auto': the ridge of smallest leave-one-out error on the
#: training images, no parameter chosen on the test images
LOO = "learned (leave-one-out alpha)"
DEFAULT_ALPHAS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0)


def _uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _mse(Z, T):
    return float(np.mean((Z - T) ** 2))


def _basis_params(basis, landmarks, seed):
    if basis == "nystroem":
        return dict(eigen_solver="nystroem", n_landmarks=landmarks, random_state=seed)
    if basis == "matrix-free":
        return dict(eigen_solver="matrix-free", random_state=seed)
    return dict(eigen_solver="auto", random_state=seed)


def run_seed(seed, *, n_train, n_test, components, landmarks, alphas, data_dir=None, log=print):
    """Every method on every basis and scikit-learn's grid for one draw of the data."""
    X, _, T, _ = usps_subset(data_dir, n_train, n_test, seed)
    rng = np.random.default_rng(seed + 1)
    noisy = {kind: add_noise(T, kind, level, rng) for kind, level in NOISES.items()}
    c = float(2.0 * X.var(axis=0).mean() * X.shape[1])
    out = {"seed": seed, "c": c, "n_train": len(X), "n_test": len(T),
           "noisy_mse": {k: _mse(v, T) for k, v in noisy.items()}, "kpm": [], "sklearn": []}

    def record(basis, label, alpha, kp, fit_s):
        for kind, Tn in noisy.items():
            t0 = time.perf_counter()
            Y = kp.transform(Tn)
            init = Tn if METHODS[label][1] == "noisy" else None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                Z, info = kp.inverse_transform(Y, init=init, return_info=True)
            dt = time.perf_counter() - t0
            out["kpm"].append({"basis": basis, "method": label, "alpha": alpha, "noise": kind,
                               "solver": kp.eigen_solver_, "mse": _mse(Z, T), "fit_s": fit_s,
                               "denoise_s": dt, "mean_iter": float(np.mean(info.n_iter)),
                               "not_converged": int(np.sum(~info.converged))})
            log(f"seed {seed} {basis:11s} {label:26s} alpha={alpha} {kind:8s} MSE {_mse(Z, T):.4f} "
                f"(fit {fit_s:.2f} s, denoise {dt:.2f} s)")

    for basis in BASES:
        params = dict(kernel_params={"c": c}, **_basis_params(basis, landmarks, seed))
        for label, (preimage, _) in METHODS.items():
            grid = ("auto",) if label == LOO else alphas if preimage == "learned" else (None,)
            for alpha in grid:
                extra = {} if alpha is None else {"preimage_alpha": alpha}
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the learned map's fit-time diagnosis
                    kp = KernelProjection(components, preimage=preimage, **params, **extra).fit(X)
                record(basis, label, kp.preimage_alpha_ if alpha == "auto" else alpha, kp,
                       time.perf_counter() - t0)
    # the floor of every pre-image of the projection: the fixed-point pre-images of the clean
    # test images' own projections
    exact = KernelProjection(components, kernel_params={"c": c}, **_basis_params("exact", landmarks, seed)).fit(X)
    out["clean_floor"] = _mse(exact.inverse_transform(exact.transform(T)), T)
    log(f"seed {seed} clean test images through the projection and the fixed point: MSE {out['clean_floor']:.4f}")
    for alpha in alphas:
        t0 = time.perf_counter()
        sk = KernelPCA(components, kernel="rbf", gamma=1.0 / c, fit_inverse_transform=True,
                       alpha=alpha, eigen_solver="dense").fit(X)
        fit_s = time.perf_counter() - t0
        for kind, Tn in noisy.items():
            t0 = time.perf_counter()
            Z = sk.inverse_transform(sk.transform(Tn))
            dt = time.perf_counter() - t0
            out["sklearn"].append({"alpha": alpha, "noise": kind, "mse": _mse(Z, T), "fit_s": fit_s,
                                   "denoise_s": dt})
            log(f"seed {seed} scikit-learn KernelPCA alpha={alpha:g} {kind:8s} MSE {_mse(Z, T):.4f} "
                f"(fit {fit_s:.2f} s, denoise {dt:.2f} s)")
    return out


def _best(rows):
    """The row of smallest MSE (the first such in grid order)."""
    return min(rows, key=lambda r: r["mse"])


def summarise(results):
    """Per noise, basis and method: MSE and times averaged over seeds, and the ratio to
    scikit-learn's learned inverse at its best alpha (per seed, then averaged)."""
    table = []
    sk_best = {}
    for res in results:
        for kind in NOISES:
            sk_best[(res["seed"], kind)] = _best([r for r in res["sklearn"] if r["noise"] == kind])
    for kind in NOISES:
        for basis in BASES:
            for label in METHODS:
                mses, ratios, fits, dens, alphas, iters = [], [], [], [], [], []
                for res in results:
                    rows = [r for r in res["kpm"] if r["noise"] == kind and r["basis"] == basis
                            and r["method"] == label]
                    r = _best(rows)
                    ref = sk_best[(res["seed"], kind)]
                    mses.append(r["mse"])
                    ratios.append(r["mse"] / ref["mse"])
                    fits.append(r["fit_s"])
                    dens.append(r["denoise_s"])
                    alphas.append(r["alpha"])
                    iters.append(r["mean_iter"])
                table.append({"noise": kind, "basis": basis, "method": label,
                              "solver": rows[0]["solver"], "mse": statistics.mean(mses),
                              "ratio": statistics.mean(ratios), "ratios": ratios,
                              "fit_s": statistics.median(fits), "denoise_s": statistics.median(dens),
                              "alphas": alphas, "mean_iter": statistics.mean(iters)})
        refs = [sk_best[(res["seed"], kind)] for res in results]
        table.append({"noise": kind, "basis": "scikit-learn", "method": "learned (best alpha)",
                      "solver": "dense", "mse": statistics.mean(r["mse"] for r in refs), "ratio": 1.0,
                      "ratios": [1.0] * len(refs), "fit_s": statistics.median(r["fit_s"] for r in refs),
                      "denoise_s": statistics.median(r["denoise_s"] for r in refs),
                      "alphas": [r["alpha"] for r in refs], "mean_iter": 0.0})
    return table


def _fmt_alphas(alphas):
    alphas = [a for a in alphas if a is not None]
    return ", ".join(f"{a:g}" for a in alphas) if alphas else ""


def report(results, table, meta):
    seeds = [r["seed"] for r in results]
    first = results[0]
    lines = [
        "# Pre-images of kernel PCA on USPS digits: every method on every basis",
        "",
        *header(),
        f"- Load (`uptime`) before: {meta['uptime_before']}; after: {meta['uptime_after']} "
        f"(2 shared cores; {meta['threads']}). Times are wall seconds, medians over the seeds.",
        "",
        f"Setting: {first['n_train']} USPS training images ({first['n_train'] // 10} per digit) and "
        f"{first['n_test']} test images ({first['n_test'] // 10} per digit) drawn at random (seeds "
        f"{seeds}) from the standard split, pixels in [-1, 1]; the test images get Gaussian noise "
        f"(σ = {NOISES['gaussian']}) or speckle noise (each pixel black or white with probability "
        f"{NOISES['speckle']}). Kernel exp(-‖x-y‖²/c), c = 2 × mean pixel variance × 256 "
        f"(c = {first['c']:.1f} for seed {first['seed']}), {meta['components']} components, fitted on "
        f"the clean training images. Bases of `kpm.KernelProjection`: exact (`eigen_solver='auto'`, "
        f"which ran `{_solver(table, 'exact')}`), Nyström ({meta['landmarks']} uniform landmarks; "
        "the pre-images are expansions on the landmarks) and matrix-free. The learned maps "
        f"(kpm's and scikit-learn's `KernelPCA(fit_inverse_transform=True)`) are shown at their "
        f"best ridge alpha on the test images among {list(meta['alphas'])} (an oracle choice, the "
        "most favourable to them), and kpm's also at `preimage_alpha='auto'`, the alpha of smallest "
        "leave-one-out error on the training images (41 values from 1e-8 to 1e2); the other methods "
        "have no parameter chosen on the test images.",
        "",
        "MSE: mean over pixels and images of the squared difference to the clean images (the "
        "`denoise_usps` report sums over the 256 pixels: 256 × this), averaged over the seeds. "
        "Ratio: the MSE over scikit-learn's at its best alpha, per seed, averaged.",
        "",
    ]
    for kind in NOISES:
        noisy = statistics.mean(r["noisy_mse"][kind] for r in results)
        lines += [f"## {kind.capitalize()} noise (noisy input: MSE {noisy:.4f})", "",
                  "| basis | method | MSE | ratio to scikit-learn | fit s | denoise s | notes |",
                  "|---|---|---|---|---|---|---|"]
        for row in (r for r in table if r["noise"] == kind):
            notes = []
            if row["method"] == LOO:
                notes.append(f"leave-one-out alpha per seed: {_fmt_alphas(row['alphas'])}")
            elif row["method"].startswith("learned"):
                notes.append(f"best alpha per seed: {_fmt_alphas(row['alphas'])}")
            elif row["mean_iter"]:
                notes.append(f"mean iterations {row['mean_iter']:.1f}")
            basis = row["basis"] if row["basis"] != "exact" else f"exact ({row['solver']})"
            lines.append(f"| {basis} | {row['method']} | {row['mse']:.4f} | {row['ratio']:.2f} | "
                         f"{row['fit_s']:.2f} | {row['denoise_s']:.2f} | {'; '.join(notes)} |")
        lines.append("")
    lines += ["## scikit-learn's learned inverse along the alpha grid", "",
              "| alpha | " + " | ".join(f"{k} MSE" for k in NOISES) + " |",
              "|---|" + "---|" * len(NOISES)]
    for alpha in meta["alphas"]:
        cells = [statistics.mean(r["mse"] for res in results for r in res["sklearn"]
                                 if r["alpha"] == alpha and r["noise"] == kind) for kind in NOISES]
        lines.append(f"| {alpha:g} | " + " | ".join(f"{v:.4f}" for v in cells) + " |")
    lines += ["", *meta["findings"], ""]
    return "\n".join(lines)


def _solver(table, basis):
    return next(r["solver"] for r in table if r["basis"] == basis)


def findings(table, meta, results):
    """The sentences under the tables, with the numbers of this run."""
    def row(kind, basis, label):
        return next(r for r in table if r["noise"] == kind and r["basis"] == basis and r["method"] == label)

    def sk_at(kind, alpha):
        vals = [r["mse"] for res in results for r in res["sklearn"] if r["alpha"] == alpha and r["noise"] == kind]
        return statistics.mean(vals) if vals else None

    fp = "fixed point (MDS start)"
    free = [m for m in METHODS if not m.startswith("learned")]
    lines = ["## Findings", ""]
    for kind in NOISES:
        best_exact = min((row(kind, "exact", m) for m in free), key=lambda r: r["ratio"])
        best_ny = min((row(kind, "nystroem", m) for m in free), key=lambda r: r["ratio"])
        sk = row(kind, "scikit-learn", "learned (best alpha)")
        text = (f"- {kind}: scikit-learn's learned inverse at its best alpha reaches MSE {sk['mse']:.4f}. "
                f"On the exact basis the fixed point is at {row(kind, 'exact', fp)['ratio']:.2f}× that and "
                f"the best method without a parameter chosen on the test images, {best_exact['method']}, at "
                f"{best_exact['ratio']:.2f}×; on the Nyström basis the fixed point is at "
                f"{row(kind, 'nystroem', fp)['ratio']:.2f}× and {best_ny['method']} at {best_ny['ratio']:.2f}×. "
                f"kpm's learned map on the exact basis is at {row(kind, 'exact', 'learned (best alpha)')['ratio']:.2f}× "
                f"(the same map), and at {row(kind, 'exact', LOO)['ratio']:.2f}× with the alpha of smallest "
                "leave-one-out error on the training images (no choice on the test images).")
        coarse = [(a, sk_at(kind, a)) for a in (0.1, 1.0) if sk_at(kind, a) is not None]
        if coarse:
            text += (" At " + " and ".join(f"alpha = {a:g} (MSE {v:.4f})" for a, v in coarse)
                     + " the fixed point is at " + " and ".join(
                         f"{row(kind, 'exact', fp)['mse'] / v:.2f}×" for _, v in coarse) + " of scikit-learn's MSE.")
        lines.append(text)
    floor = statistics.mean(r["clean_floor"] for r in results)
    lowest = min(r["mse"] for r in table if r["method"] in free)
    lines.append(
        f"- The clean test images themselves, projected onto the {meta['components']} components and mapped "
        f"back by the fixed point, are at MSE {floor:.4f}: what the projection and its pre-image cost an "
        "image without noise. The pre-images of the noisy images' projections above are "
        + ("all above it" if lowest > floor else "not all above it")
        + f" (the lowest: {lowest:.4f}). The learned map is not a pre-image of the projection: it maps "
        "coordinates to combinations of the clean training images it was fitted on, which is how it can come "
        "closer to the clean images on Gaussian noise.")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--n-train-per-digit", type=int, default=100)
    p.add_argument("--n-test-per-digit", type=int, default=20)
    p.add_argument("--components", type=int, default=64)
    p.add_argument("--landmarks", type=int, default=500)
    p.add_argument("--alphas", type=float, nargs="+", default=list(DEFAULT_ALPHAS))
    p.add_argument("--data-dir", default=None, help="benchmark data (default: KPM_DATA or ../shared/data)")
    p.add_argument("--out", default="kpm-results")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    log = (lambda *a, **k: None) if args.quiet else (lambda *a, **k: print(*a, **k, flush=True))
    meta = {"uptime_before": _uptime(), "components": args.components, "landmarks": args.landmarks,
            "alphas": args.alphas,
            "threads": f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"}
    results = [run_seed(s, n_train=args.n_train_per_digit, n_test=args.n_test_per_digit,
                        components=args.components, landmarks=args.landmarks, alphas=args.alphas,
                        data_dir=args.data_dir, log=log) for s in args.seeds]
    meta["uptime_after"] = _uptime()
    table = summarise(results)
    meta["findings"] = findings(table, meta, results)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "preimage_usps.json").write_text(json.dumps(
        {"meta": meta, "summary": table, "results": results}, indent=1) + "\n")
    (out / "preimage_usps.md").write_text(report(results, table, meta))
    log(f"wrote {out / 'preimage_usps.md'}")
    return table


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
