"""The library on the benchmark data: failures once seen on Rätsch's sets, kept as regressions.

These read the benchmark data (``data_dir`` fixture): they are skipped where the data are not
found (``kpm data fetch``, or ``KPM_DATA``), and fail then under ``KPM_REQUIRE_DATA=1``.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kpm import KernelProjectionMachine
from kpm.kernels import median_sigma
from kpm_reproduce.datasets import load_raetsch

#: The papers' LP and the default (with D by CV: the SVM restricted to S_D).
FORMULATIONS = ["paper", "auto"]


@pytest.mark.parametrize("formulation", FORMULATIONS)
@pytest.mark.slow
@pytest.mark.parametrize("name, factor, scaled", [("flare_solar", 0.3, False), ("flare_solar", 3.0, True)])
def test_heavily_duplicated_data_fit(data_dir, name, factor, scaled, formulation):
    # flare_solar (90 distinct inputs among 666): at these widths all solvers failed near
    # the floor of the hinge risk, where the optimal coefficients pass 1e8
    split = load_raetsch(name, 1, data_dir=data_dir)
    X, Xt = split.X_train, split.X_test
    if scaled:
        mu, sd = X.mean(axis=0), np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        X, Xt = (X - mu) / sd, (Xt - mu) / sd
    sigma = factor * median_sigma(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = KernelProjectionMachine(sigma=sigma, random_state=0, cv_duplicates="split", formulation=formulation).fit(X, split.y_train)
    err = np.mean(m.predict(Xt) != split.y_test)
    majority = np.mean(split.y_test != (1 if np.mean(split.y_train > 0) >= 0.5 else -1))  # 40.25 %
    assert err < majority - 0.05
    for f in m.lp_failures_:
        assert f["dim"] > m.n_components_


def test_duplicated_inputs_with_both_labels_stop_at_the_floor(data_dir):
    # flare_solar r94, the NIPS 2004 Table 2 protocol: 666 points, 90 distinct inputs,
    # many with both labels. The training hinge risk cannot go below the loss those
    # force (2 min(n+, n-) per input); the paths stop there (D ~ 40, rank 90). This
    # fit failed with the default solver (simplex, then cold HiGHS, both at D = 41)
    from kpm.hinge.lp_path import hinge_lp_path
    from kpm_reproduce.experiments.kpm_tables import SIGMAS
    from kpm.kernels import make_kernel
    from kpm.machine.eigen import EigenSubspace, duplicate_groups

    s = load_raetsch("flare_solar", 94, data_dir=data_dir)
    model = KernelProjectionMachine(sigma=SIGMAS["flare_solar"], max_components=60, random_state=94, formulation="paper")
    model.fit(s.X_train, s.y_train)
    assert model.n_components_ == 6
    assert model.selection_curve_["D"][-1] < 60  # every fold's path reached its floor

    _, inv = np.unique(s.X_train, axis=0, return_inverse=True)
    pos = s.y_train > 0
    floor = 2 * np.minimum(np.bincount(inv.ravel(), pos), np.bincount(inv.ravel(), ~pos)).sum()
    assert floor > 0
    K = make_kernel("rbf", sigma=SIGMAS["flare_solar"])(s.X_train)
    groups = duplicate_groups(s.X_train)
    sub = EigenSubspace(K, False, 60, random_state=94, groups=groups)
    y = np.where(pos, 1.0, -1.0)
    path = hinge_lp_path(sub.V[:, :60], y, 60, groups=sub.groups)
    assert path.floor == floor
    assert path.last_dim_solved < 60
    # HiGHS (the fallback here) solves to a primal feasibility tolerance of 1e-7 per row:
    # its objective can miss the floor by that much per sample, on either side
    assert path.objective[-1] == pytest.approx(floor, abs=1e-7 * len(y))
    assert np.all(path.objective[:-1] > floor + 1e-9 * len(y))
