"""The fit plan of the KPM estimators (kpm.machine.formulation): an explicit C that the fit
does not use is said so."""

import warnings

import numpy as np
import pytest

from kpm import KernelProjectionMachine, NystroemKPM


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("make, why", [
    (lambda: KernelProjectionMachine(C=1.0, formulation="paper", selection=3), "formulation='paper' fits"),
    (lambda: KernelProjectionMachine(C=1.0, selection="slope"), "selection='slope' with formulation='auto'"),
    (lambda: KernelProjectionMachine(C=[1.0], selection="penalty", penalty=0.01), "selection='penalty'"),
    (lambda: NystroemKPM(20, C=10.0, formulation="paper", selection=3), "formulation='paper' fits"),
])
def test_explicit_c_ignored_warns(data, make, why):
    X, y = data
    est = make()
    with pytest.warns(UserWarning, match=rf"{type(est).__name__}: C=.* is ignored: {why}") as record:
        est.fit(X, y)
    assert est.C_ is None
    assert "has no C" in str([w.message for w in record if "is ignored" in str(w.message)][0])


def test_c_used_does_not_warn(data):
    X, y = data
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        KernelProjectionMachine(C=1.0, random_state=0).fit(X, y)
        KernelProjectionMachine(C=1.0, selection="slope", formulation="svm").fit(X, y)
        KernelProjectionMachine(selection="slope").fit(X, y)
    assert not any("is ignored" in str(w.message) for w in record)
