"""Probabilities of kpm's classifiers go through scikit-learn's CalibratedClassifierCV
(scikit-learn is retiring SVC(probability=True)): each classifier works inside it, and the
calibrated probabilities beat the constant prediction of the class frequencies."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics import log_loss

from kpm import KernelPCRClassifier, KernelProjectionMachine, NystroemKPM, ReducedSetSVC

CLASSIFIERS = [
    pytest.param(KernelPCRClassifier, id="KernelPCRClassifier"),
    pytest.param(ReducedSetSVC, id="ReducedSetSVC"),
    # the two Kernel Projection Machines at their defaults (cross-validated dimension)
    pytest.param(KernelProjectionMachine, id="KernelProjectionMachine", marks=pytest.mark.slow),
    pytest.param(NystroemKPM, id="NystroemKPM", marks=pytest.mark.slow),
]


def _brier(y, P):
    """Multi-class Brier score: mean squared distance of the probability rows to the one-hot labels."""
    return float(np.mean(np.sum((P - np.eye(P.shape[1])[y]) ** 2, axis=1)))


def _expected_calibration_error(y, p, bins=10):
    """Mean |observed frequency - mean predicted probability| over equal-width bins of p,
    weighted by the bins' shares of the points (binary: p = P(class 1))."""
    which = np.minimum((p * bins).astype(int), bins - 1)
    err = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            err += inside.mean() * abs(y[inside].mean() - p[inside].mean())
    return err


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_binary_probabilities_are_calibrated(cls):
    X, y = make_moons(300, noise=0.3, random_state=0)
    Xt, yt = make_moons(2000, noise=0.3, random_state=1)
    model = CalibratedClassifierCV(cls(), cv=3).fit(X, y)
    P = model.predict_proba(Xt)
    assert P.shape == (2000, 2) and np.allclose(P.sum(axis=1), 1.0)
    constant = np.tile(np.bincount(y) / len(y), (len(yt), 1))
    # measured: Brier 0.14-0.15, log-loss 0.24-0.26, calibration error 0.02-0.03; the
    # constant: 0.50 and 0.69
    assert _brier(yt, P) < 0.4 * _brier(yt, constant)
    assert log_loss(yt, P) < 0.5 * log_loss(yt, constant)
    assert _expected_calibration_error(yt, P[:, 1]) < 0.05
    assert model.score(Xt, yt) > 0.85


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_multiclass_probabilities_beat_the_class_frequencies(cls):
    X, y = make_blobs(360, centers=3, cluster_std=1.5, random_state=0)
    Xt, yt, X, y = X[240:], y[240:], X[:240], y[:240]
    model = CalibratedClassifierCV(cls(), cv=3).fit(X, y)
    P = model.predict_proba(Xt)
    assert P.shape == (120, 3) and np.allclose(P.sum(axis=1), 1.0)
    constant = np.tile(np.bincount(y) / len(y), (len(yt), 1))
    # measured: Brier 0.30-0.33, log-loss 0.54-0.60; the constant: 0.67 and 1.10
    assert _brier(yt, P) < 0.6 * _brier(yt, constant)
    assert log_loss(yt, P) < 0.6 * log_loss(yt, constant)
    assert list(model.classes_) == [0, 1, 2]
