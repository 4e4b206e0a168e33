"""The specialised simplex of the KPM hinge LP against HiGHS on a real fold (Rätsch's image
set, which holds duplicated patterns). Skipped without the benchmark data."""

import numpy as np
import pytest

from helpers import assert_same_hinge_path as _assert_same_path
from helpers import hinge_loss_sum as _hinge
from helpers import hinge_lp_reference as _cold  # the cold scipy/HiGHS solve (asserts success)
from kpm.hinge.lp_path import hinge_lp_path
from kpm_reproduce.datasets import load_raetsch


def test_real_fold_with_duplicates_matches_highs(data_dir):
    # a Rätsch 'image' training set (it holds duplicated patterns), uncentred RBF
    # eigenvectors as in the KPM, the first 40 dimensions
    from kpm.kernels import make_kernel, median_sigma
    from kpm.machine.eigen import EigenSubspace, duplicate_groups

    split = load_raetsch("image", 1, data_dir=data_dir)
    X, y = split.X_train[:600], np.where(split.y_train[:600] > 0, 1.0, -1.0)
    K = make_kernel("rbf", sigma=median_sigma(X))(X)
    V = EigenSubspace(K, False, n_components=60, groups=duplicate_groups(X), random_state=0).V
    _assert_same_path(V, y, 40)


def test_nearly_separable_badly_conditioned_path(data_dir):
    # image, sigma = median / 4, centred kernel, one CV fold: at D = 90 the training
    # set becomes (nearly) separable with coefficients ~1e6 and a basis of condition
    # ~1e11; cold HiGHS reports numerical difficulties there and the warm HiGHS path
    # ran for minutes. The simplex must finish, with zero risk (to the KPM's 1e-9 n).
    # The eigensolver is seeded: with ARPACK's random start the trailing columns of V
    # differ in the last bits from run to run, and so did the outcome at D = 90
    # (hinge loss either side of the rounding level of the margins) until the
    # separating solution is scaled to zero loss (HingeSimplex._separating)
    from sklearn.model_selection import StratifiedKFold

    from kpm.kernels import make_kernel, median_sigma
    from kpm.machine.eigen import EigenSubspace, duplicate_groups

    split = load_raetsch("image", 1, data_dir=data_dir)
    X, y = split.X_train, np.where(split.y_train > 0, 1.0, -1.0)
    tr, _ = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[2]
    K = make_kernel("rbf", sigma=0.25 * median_sigma(X))(X[tr])
    V = EigenSubspace(K, True, n_components=120, groups=duplicate_groups(X[tr]), random_state=0).V[:, :100]
    yy = y[tr]
    n = len(yy)
    path = hinge_lp_path(V, yy, 100, solver="simplex")
    # zero risk, to the KPM's 1e-9 n or to the rounding of margins with |beta| ~ 1e10
    assert path.objective[-1] <= max(1e-9 * n, path.zero_level)
    assert path.zero_level <= 1e-5 * n  # per sample: the margins are known to ~1e-5
    assert path.n_solved < 100
    for i in range(path.n_solved):
        beta, b = path.coef_at(int(path.dims[i]))
        # rounding of the decision values: |beta| reaches ~1e7 here
        rounding = n * 1e-15 * (np.abs(beta).sum() * np.abs(V).max() + abs(b))
        assert _hinge(V, yy, beta, b) == pytest.approx(path.objective[i], rel=1e-9, abs=rounding + 1e-9)
    for D in (40, 85):
        assert path.objective[D - 1] == pytest.approx(_cold(V, yy, D).fun, rel=1e-9)
