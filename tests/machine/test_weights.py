"""Sample and class weights of the KPM estimators (kpm.machine.weights).

scikit-learn's convention: an integer sample weight is the same fit as that many copies of
the sample, and a zero weight is a removed sample. The exact KPM's basis of weighted data is
that of the repeated data (the eigenvectors of W^1/2 K W^1/2); duplicated rows of the repeated
data are merged into weighted rows of the same hinge LP. So at a fixed D (no cross-validation,
whose folds of copies and of weighted samples differ) the two fits are the same LP on the same
features, and their decision values agree to the 9 decimals decision_function keeps.
"""

import warnings

import numpy as np
import pytest

from kpm import KernelProjectionMachine, NystroemKPM
from kpm.hinge.svm_path import svm_path


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y, rng.normal(size=(30, 2))


def _repeated(X, y, w):
    w = np.asarray(w, dtype=int)
    return np.repeat(X, w, axis=0), np.repeat(y, w)


def _fit(make, X, y, sample_weight=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicates, degenerate models: not the subject here
        return make().fit(X, y, sample_weight=sample_weight)


def _weights_2110(n):
    w = np.ones(n)
    w[0], w[3] = 2.0, 0.0
    return w


FIXED_D = {
    "fixed D": lambda: KernelProjectionMachine(selection=5, formulation="paper"),
    "dense solver": lambda: KernelProjectionMachine(selection=5, formulation="paper", eigen_solver="dense"),
    # a CV over a single-D grid: the folds differ, the chosen D cannot
    "cv, one D": lambda: KernelProjectionMachine(selection="cv", n_components_grid=[5], formulation="paper",
                                                 random_state=0),
    "explicit sigma": lambda: KernelProjectionMachine(selection=6, sigma=0.7, formulation="paper"),
}


@pytest.mark.parametrize("name", list(FIXED_D))
def test_integer_weights_are_repeated_rows_for_the_papers_lp(name):
    X, y, Xt = _data()
    make = FIXED_D[name]
    for w in (_weights_2110(len(y)), np.random.default_rng(1).integers(0, 4, len(y))):
        a = _fit(make, X, y, w)
        b = _fit(make, *_repeated(X, y, w))
        assert a.n_components_ == b.n_components_
        np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=0, atol=1e-6)
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=0, atol=1e-6)


def test_integer_weights_are_repeated_rows_for_the_squared_hinge_svm():
    # the SVM in S_D (the default loss): the finite Newton method solves the strongly convex
    # problem to a gradient norm of 1e-10 (1 + |theta|), so both fits are its unique minimiser
    # to far below 1e-6 (measured: 3e-9)
    X, y, Xt = _data()
    make = lambda: KernelProjectionMachine(selection=5, formulation="svm", C=1.0)  # noqa: E731
    for w in (_weights_2110(len(y)), np.random.default_rng(1).integers(0, 4, len(y))):
        a = _fit(make, X, y, w)
        b = _fit(make, *_repeated(X, y, w))
        np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=0, atol=1e-6)


def test_weighted_hinge_svm_path_is_the_repeated_one():
    # the hinge-loss SVM's dual coordinate descent stops at a projected-gradient spread of
    # TOL = 0.1 in the estimators (decision values then differ by ~0.04 between two orders of
    # the same points); run to 1e-9 the weighted and the repeated problems reach the same
    # unique primal solution (the intercept is regularised through the bias feature) to 1e-7
    # (a spread of 1e-12 is below what the rounding of the gradients allows: the descent then
    # runs out of sweeps with points shrunk away)
    X, y, _ = _data(60, seed=3)
    ypm = np.where(y == 1, 1.0, -1.0)
    w = np.random.default_rng(2).integers(1, 4, len(y)).astype(float)
    Phi = np.c_[X, X[:, :1] * X[:, 1:]]
    grid = np.array([1, 2, 3])
    a = svm_path(Phi, np.ones(3), ypm, 0.5, grid, tol=1e-9, max_sweeps=100_000, sample_weight=w)
    Xr, yr = _repeated(Phi, ypm, w)
    b = svm_path(Xr, np.ones(3), yr, 0.5, grid, tol=1e-9, max_sweeps=100_000)
    np.testing.assert_allclose(a.coef, b.coef, rtol=0, atol=1e-6)
    np.testing.assert_allclose(a.intercept, b.intercept, rtol=0, atol=1e-6)
    # the objective is the weighted hinge sum, n_samples the sum of the weights
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-6)
    assert a.n_samples == pytest.approx(w.sum())


def test_nystroem_weights_are_repeated_rows_with_every_sample_a_landmark():
    X, y, Xt = _data()
    for make in (lambda: NystroemKPM(100, selection=5, formulation="paper", random_state=0),
                 lambda: NystroemKPM(100, selection=5, formulation="svm", C=1.0, random_state=0)):
        w = _weights_2110(len(y))
        a = _fit(make, X, y, w)
        b = _fit(make, *_repeated(X, y, w))
        np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=0, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda: KernelProjectionMachine(random_state=0),  # the default: C and D by CV
    lambda: KernelProjectionMachine(random_state=0, formulation="paper"),
    lambda: NystroemKPM(30, random_state=0),
], ids=["kpm", "kpm-paper", "nystroem"])
def test_zero_weight_is_a_removed_sample(make):
    X, y, Xt = _data(80, seed=4)
    w = np.ones(len(y))
    w[[2, 7, 11, 40]] = 0.0
    a = _fit(make, X, y, w)
    keep = w > 0
    b = _fit(make, X[keep], y[keep])
    assert a.n_components_ == b.n_components_
    assert getattr(a, "C_", None) == getattr(b, "C_", None)
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=0, atol=1e-8)


def test_zero_weight_with_a_precomputed_kernel():
    # predict takes the kernel against every training sample, the removed ones included
    from kpm.kernels import make_kernel

    X, y, Xt = _data()
    k = make_kernel("rbf", sigma=1.0)
    w = _weights_2110(len(y))
    a = _fit(lambda: KernelProjectionMachine(kernel="precomputed", selection=4, formulation="paper"), k(X), y, w)
    b = _fit(lambda: KernelProjectionMachine(kernel="rbf", sigma=1.0, selection=4, formulation="paper"), X, y, w)
    np.testing.assert_allclose(a.decision_function(k(Xt, X)), b.decision_function(Xt), rtol=0, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda: KernelProjectionMachine(random_state=0),
    lambda: NystroemKPM(50, random_state=0),
], ids=["kpm", "nystroem"])
def test_balanced_class_weight_is_the_sample_weight_n_over_k_n_c(make):
    rng = np.random.default_rng(6)
    y = (rng.random(90) < 0.25).astype(int)
    X = np.array([[0.0, 0.0], [2.0, 1.0]])[y] + rng.normal(size=(90, 2))
    Xt = rng.normal(size=(40, 2)) + 1.0
    counts = np.bincount(y)
    sw = len(y) / (2 * counts[y])
    a = _fit(lambda: make().set_params(class_weight="balanced"), X, y)
    b = _fit(make, X, y, sw)
    assert a.n_components_ == b.n_components_
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=0, atol=1e-9)
    # and it is not the unweighted fit: the minority class gains test predictions
    c = _fit(make, X, y)
    assert np.count_nonzero(a.predict(Xt) == 1) > np.count_nonzero(c.predict(Xt) == 1)


def test_class_weight_dict_multiplies_sample_weight():
    X, y, Xt = _data()
    make = lambda: KernelProjectionMachine(selection=4, formulation="paper")  # noqa: E731
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    a = _fit(lambda: make().set_params(class_weight={1: 3.0}), X, y, sw)
    b = _fit(make, X, y, sw * np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt), rtol=0, atol=1e-9)


def test_bad_sample_weight():
    X, y, _ = _data()
    kpm_ = KernelProjectionMachine(selection=3, formulation="paper")
    with pytest.raises(ValueError, match="sample_weight"):
        kpm_.fit(X, y, sample_weight=np.ones(len(y) - 1))
    with pytest.raises(ValueError, match="non-negative"):
        kpm_.fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        kpm_.fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        NystroemKPM(20, selection=3).fit(X, y, sample_weight=np.full(len(y), np.nan))
    with pytest.raises(ValueError, match="centered=False"):
        KernelProjectionMachine(selection=3, formulation="paper", centered=True).fit(X, y, np.ones(len(y)))
    with pytest.raises(ValueError, match="class_weight"):
        KernelProjectionMachine(class_weight="equal").fit(X, y)
