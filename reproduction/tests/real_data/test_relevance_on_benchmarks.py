"""The relevant-dimension kernel selection on Rätsch's benchmarks (Braun, Buhmann & Müller 2008).

These read the benchmark data (``data_dir`` fixture): they are skipped where the data are not
found (``kpm data fetch``, or ``KPM_DATA``), and fail then under ``KPM_REQUIRE_DATA=1``.
"""

import warnings

import numpy as np
import pytest

from kpm import DegenerateKernelWarning, KernelPCRClassifier, ReferenceModelWarning, select_kernel
from kpm_reproduce.datasets import load_raetsch


@pytest.mark.slow
def test_select_kernel_and_kernel_pcr_on_ringnorm(data_dir):
    # Braun, Buhmann & Müller's table: kernel PCR at the width of the smallest -log l(d_hat),
    # 4.4 +- 1.2 % on ringnorm. With the intercept the likelihood ranked a near-identity width
    # first (sigma = 0.355 on realization 1, d_hat = 356, 50.6 % test error); measured after
    # the fix: 2.07 +- 0.36 % over realizations 1-10, sigma 3.55 (8) or 2.0 (2)
    cands = [{"kernel": "rbf", "sigma": s} for s in np.logspace(-0.7, 1.3, 9)]
    errors = []
    for r in range(1, 11):
        split = load_raetsch("ringnorm", r, data_dir=data_dir)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateKernelWarning)
            best = select_kernel(cands, split.X_train, split.y_train)[0]
        clf = KernelPCRClassifier(sigma=best.candidate["sigma"]).fit(split.X_train, split.y_train)
        errors.append(np.mean(clf.predict(split.X_test) != split.y_test))
    assert np.mean(errors) <= 0.044 + 0.012
    assert max(errors) <= 0.044 + 2 * 0.012


#: The sets of Braun, Buhmann & Müller's table whose kernel PCR takes at most seconds per
#: realization (image and splice take minutes; ringnorm has its own test above).
CHEAP_SETS = ("banana", "breast_cancer", "diabetis", "flare_solar", "german", "heart", "thyroid", "titanic",
              "twonorm", "waveform")


def _committed_table():
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "docs" / "results" / "braun_table.json"
    return json.loads(path.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name", CHEAP_SETS)
def test_kernel_selection_keeps_each_sets_kernel_pcr_error(name, data_dir):
    """What a user runs: ``select_kernel`` at its defaults over the table's width grid
    (the median heuristic of realization 1 times 2^(k/2), k = -6..4) on each of the first 5
    training sets, then ``KernelPCRClassifier`` at its defaults at the chosen width. Its mean
    test error must stay within one standard deviation (over the realizations) of the kernel
    PCR error of the committed table (``docs/results/braun_table.json``): a kernel selection
    that moves a set's error by more than that fails -- as the intercept's near-identity
    choice on ringnorm did (50.6 %)."""
    from kpm_reproduce.experiments.braun_table import width_grid

    row = _committed_table()["rows"][name]
    mean, std = row["kpcr"]  # percent
    _, sigmas = width_grid(name, data_dir=data_dir)
    cands = [{"kernel": "rbf", "sigma": s} for s in sigmas]
    errors, warned = [], []
    for r in range(1, 6):
        split = load_raetsch(name, r, data_dir=data_dir)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            ranking = select_kernel(cands, split.X_train, split.y_train)
        best = ranking[0]
        if any(issubclass(w.category, ReferenceModelWarning) for w in record):
            # the warning names the candidate of smallest leave-one-out error: the user's choice
            best = min(ranking, key=lambda score: (score.loo_error, score.rank))
            warned.append(r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = KernelPCRClassifier(sigma=best.candidate["sigma"]).fit(split.X_train, split.y_train)
        errors.append(100 * np.mean(clf.predict(split.X_test) != split.y_test))
    assert np.mean(errors) <= mean + std, (name, errors, mean, std)
    # the likelihood's top candidate on thyroid's 4th training set: sigma = 0.125 x the median
    # heuristic, d_hat = 80 of 140, 24.0 % test error (the table: 4.5 +- 2.1); warned, naming
    # 0.5 x the median (leave-one-out error 2.1 % against 20.0 %). No other set warns.
    assert warned == ([4] if name == "thyroid" else []), warned
