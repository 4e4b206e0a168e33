"""The BLAS threads of the library's own dense work (:mod:`kpm.blas_threads`): the rule, the
reference-counted limit, its use by the fit, and fits unchanged by it."""

import warnings

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.datasets import make_classification, make_moons
from threadpoolctl import ThreadpoolController, threadpool_limits

from kpm import KernelProjectionMachine
from kpm.blas_threads import SMALL_BLAS_SIZE, blas_threads_for, one_blas_thread, small_blas
from kpm.hinge.squared_hinge import SquaredHingeSVM

CONTROLLER = ThreadpoolController()


def _blas_threads():
    """The thread counts of the loaded BLAS libraries (one per library)."""
    return {lib.num_threads for lib in CONTROLLER.select(user_api="blas").lib_controllers}


@pytest.fixture
def two_threads():
    """The user's BLAS at two threads (whatever the environment says), for the test's length."""
    if not CONTROLLER.select(user_api="blas").lib_controllers:
        pytest.skip("no BLAS library that threadpoolctl controls")
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() == {2}
        yield


def test_the_rule_is_one_thread_below_the_measured_size():
    assert blas_threads_for(0) == 1
    assert blas_threads_for(SMALL_BLAS_SIZE - 1) == 1
    assert blas_threads_for(SMALL_BLAS_SIZE) is None


def test_small_blas_limits_below_the_size_and_leaves_the_users_threads_above(two_threads):
    with small_blas(10):
        assert _blas_threads() == {1}
    assert _blas_threads() == {2}
    with small_blas(SMALL_BLAS_SIZE):
        assert _blas_threads() == {2}


def test_overlapping_regions_restore_the_users_threads_when_the_last_one_ends(two_threads):
    """Two regions that overlap without nesting (two joblib threads of one process): the
    first to end must not give the other, still running, the user's threads back, and the
    last must restore them (threadpoolctl's own limits restore what each found on entry)."""
    a, b = one_blas_thread(), one_blas_thread()
    a.__enter__()
    b.__enter__()
    assert _blas_threads() == {1}
    a.__exit__(None, None, None)
    assert _blas_threads() == {1}
    b.__exit__(None, None, None)
    assert _blas_threads() == {2}


def test_a_region_ended_by_an_exception_restores_the_users_threads(two_threads):
    with pytest.raises(ZeroDivisionError):
        with one_blas_thread():
            1 / 0
    assert _blas_threads() == {2}


@pytest.fixture
def newton_threads(monkeypatch):
    """The BLAS thread counts seen by the squared-hinge SVM's solves during a test."""
    seen = set()
    solve = SquaredHingeSVM.solve

    def spy(self, d):
        seen.update(_blas_threads())
        return solve(self, d)

    monkeypatch.setattr(SquaredHingeSVM, "solve", spy)
    return seen


def test_the_default_fit_solves_its_svms_on_one_thread_and_gives_the_threads_back(two_threads, newton_threads):
    X, y = make_moons(200, noise=0.3, random_state=0)
    KernelProjectionMachine().fit(X, y)
    assert newton_threads == {1}
    assert _blas_threads() == {2}


def test_the_limits_hold_with_joblibs_threading_backend(two_threads, newton_threads):
    """Folds in two threads of one process (K folds, n_jobs=2): every solve on one thread, and
    the user's threads back after the fit."""
    X, y = make_moons(200, noise=0.3, random_state=0)
    with parallel_backend("threading", n_jobs=2):
        KernelProjectionMachine(cv=4, random_state=0, n_jobs=2).fit(X, y)
    assert newton_threads == {1}
    assert _blas_threads() == {2}


def _fit(X, y, threads, **params):
    with threadpool_limits(limits=threads, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = KernelProjectionMachine(**params).fit(X, y)
        return model, model.predict(X)


@pytest.mark.parametrize("params, D, C, errors", [
    # the expectations: the library before the threads rule, on one BLAS thread
    ({}, 93, np.sqrt(10.0), 18),
    ({"formulation": "paper", "cv": 5, "random_state": 0}, 49, None, 52),
])
def test_the_selection_is_that_of_one_thread_and_of_the_library_before_the_rule(two_threads, params, D, C, errors):
    """The default (leave-one-out) fit on moons and the papers' LP with 5 folds on three
    classes: the D, C and training predictions of one thread, of two, and of the library
    before its threads were limited (computed then, on one thread)."""
    if "formulation" in params:
        X, y = make_classification(400, 10, n_informative=5, n_classes=3, flip_y=0.1, random_state=0)
    else:
        X, y = make_moons(300, noise=0.3, random_state=0)
    one, p1 = _fit(X, y, 1, **params)
    two, p2 = _fit(X, y, 2, **params)
    assert one.n_components_ == two.n_components_ == D
    if C is None:
        assert one.C_ is None and two.C_ is None
    else:
        assert one.C_ == pytest.approx(C, rel=1e-12) and two.C_ == pytest.approx(C, rel=1e-12)
    np.testing.assert_array_equal(p1, p2)
    assert int(np.sum(p1 != y)) == errors
