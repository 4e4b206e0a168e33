"""The relevant-dimension kernel selection on Rätsch's benchmarks (Braun, Buhmann & Müller 2008).

These read the benchmark data (``data_dir`` fixture): they are skipped where the data are not
found (``kpm data fetch``, or ``KPM_DATA``), and fail then under ``KPM_REQUIRE_DATA=1``.
"""

import warnings

import numpy as np
import pytest

from kpm import DegenerateKernelWarning, KernelPCRClassifier, select_kernel
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
