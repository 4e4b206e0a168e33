"""kpm's HiGHS models: no start-up banner on the user's standard output."""

import subprocess
import sys

import pytest

SCRIPT = """
from sklearn.datasets import make_moons
from kpm import KernelProjectionMachine, NystroemKPM
X, y = make_moons(120, noise=0.3, random_state=0)
KernelProjectionMachine(sigma=0.5, lp_solver="highs", random_state=0, formulation="paper").fit(X, y)
NystroemKPM(30, sigma=0.5, max_components=8, cv=3, random_state=0).fit(X, y)
print("done")
"""


@pytest.mark.slow
def test_fits_print_nothing_to_stdout():
    """HiGHS prints a version and copyright banner when a process creates its first
    model; a kpm fit (the KPM's HiGHS path, NystroemKPM's constraint generation) in a
    fresh process prints nothing."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    assert "HiGHS" not in out.stderr
