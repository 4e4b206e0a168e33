"""The library stands alone: numerical dependencies only; Dask and matplotlib are extras."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMERICAL = {"numpy", "scipy", "scikit-learn", "highspy", "numba", "joblib", "threadpoolctl"}
NOT_NEEDED = ("dask", "distributed", "matplotlib", "typer", "click", "kpm_reproduce", "pooch")

FIT_EVERYTHING = """
import sys
import numpy as np
from sklearn.datasets import make_moons
import kpm
X, y = make_moons(120, noise=0.2, random_state=0)
kpm.KernelProjection(n_components=5, sigma=0.5).fit_transform(X)
kpm.KernelProjectionMachine(sigma=0.5, random_state=0).fit(X, y).predict(X)
kpm.KernelProjectionMachine(sigma=0.5, selection="slope").fit(X, y).predict(X)
kpm.NystroemKPM(n_landmarks=30, sigma=0.5, max_components=10, random_state=0).fit(X, y).predict(X)
kpm.KernelPCADenoiser(n_components=3, sigma=0.5).fit(X).transform(X)
print(" ".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_required_dependencies_are_numerical():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert names <= NUMERICAL, names - NUMERICAL
    assert "scripts" not in project  # the `kpm` command belongs to the reproduction
    extras = project["optional-dependencies"]
    assert any(d.startswith("dask[distributed]") for d in extras["dask"])
    assert any(d.startswith("matplotlib") for d in extras["plot"])


def test_fitting_the_estimators_imports_nothing_of_the_extras_or_the_reproduction():
    out = subprocess.run([sys.executable, "-c", FIT_EVERYTHING], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "kpm" in loaded and not loaded & set(NOT_NEEDED), loaded & set(NOT_NEEDED)


def test_the_extras_name_themselves_when_missing():
    """Without matplotlib, kpm.plotting raises an ImportError naming kpm[plot]; without
    distributed, NystroemKPM(client=...) one naming kpm[dask] (both simulated by blocking the
    import)."""
    code = """
import sys
sys.modules["matplotlib"] = None
sys.modules["matplotlib.pyplot"] = None
sys.modules["distributed"] = None
from sklearn.datasets import make_moons
import kpm
from kpm.plotting import plot_selection_curve
X, y = make_moons(60, noise=0.2, random_state=0)
m = kpm.KernelProjectionMachine(sigma=0.5, formulation="paper", random_state=0).fit(X, y)
for call in (lambda: plot_selection_curve(m),
             lambda: kpm.NystroemKPM(n_landmarks=20, client=object()).fit(X, y)):
    try:
        call()
    except ImportError as exc:
        print("ImportError:", exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'kpm[plot]'" in out and "pip install 'kpm[dask]'" in out, out
