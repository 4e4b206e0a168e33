"""Cross-validation folds of the KPM estimators (kpm.machine.folds): stratified, with a class
too small for every fold kept in every training part (with a warning)."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold
from sklearn.svm import SVC

from kpm import KernelProjectionMachine, NystroemKPM
from kpm.machine.folds import make_splits


def _one_of(n, k=2, seed=0):
    """n samples of k classes, the last class a single sample (well apart from the others)."""
    rng = np.random.default_rng(seed)
    y = np.r_[rng.integers(0, k - 1, n - 1), k - 1]
    centres = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    X = centres[y] + rng.normal(size=(n, 2))
    p = rng.permutation(n)
    return X[p], y[p]


@pytest.mark.parametrize("make", [
    lambda: KernelProjectionMachine(random_state=0),
    lambda: KernelProjectionMachine(random_state=0, formulation="paper"),
    lambda: NystroemKPM(30, random_state=0),
    lambda: NystroemKPM(30, random_state=0, formulation="svm"),
], ids=["kpm", "kpm-paper", "nystroem", "nystroem-svm"])
@pytest.mark.parametrize("n, k", [(100, 2), (60, 3)])
def test_a_class_of_one_sample_fits_with_a_warning(make, n, k):
    X, y = _one_of(n, k)
    SVC().fit(X, y)  # the reference fits these data
    est = make()
    with pytest.warns(UserWarning, match=rf"{type(est).__name__}: the class {k - 1} has too few samples "
                                         r"for 5-fold cross-validation \(1 sample in all\): kept in the "
                                         "training part of every fold"):
        est.fit(X, y)
    assert list(est.classes_) == list(range(k))
    assert np.all(np.isfinite(est.selection_curve_["cv_error"][: len(est.selection_curve_["D"])]))
    assert est.predict(X).shape == y.shape


@pytest.mark.parametrize("make", [lambda: KernelProjectionMachine(random_state=0),
                                  lambda: NystroemKPM(30, random_state=0)], ids=["kpm", "nystroem"])
def test_the_warning_names_the_small_class_by_its_label(make):
    # NystroemKPM split its class codes, and named the class 'emu' as "2"
    X, y = _one_of(60, 3)
    labels = np.array(["cat", "dog", "emu"])[y]
    with pytest.warns(UserWarning, match="the class 'emu' has too few samples"):
        est = make().fit(X, labels)
    assert list(est.classes_) == ["cat", "dog", "emu"]


def test_make_splits_keeps_a_single_sample_in_every_training_part():
    y = np.r_[np.zeros(20, int), np.ones(20, int), 2]
    with pytest.warns(UserWarning, match="the class 2 has too few samples"):
        splits = make_splits(y, 5, 0, 3, who="X")
    single = len(y) - 1
    for train, val in splits:
        assert single in train and single not in val
        assert len(np.intersect1d(train, val)) == 0
        # the others: stratified, 4 of each class per validation part
        assert np.bincount(y[val], minlength=3).tolist() == [4, 4, 0]
    # every other sample is validated exactly once
    assert np.array_equal(np.sort(np.concatenate([v for _, v in splits])), np.arange(single))


def test_make_splits_two_samples_need_no_fallback():
    y = np.r_[np.zeros(20, int), 1, 1]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        splits = make_splits(y, 5, 0, 2)
    assert not any("kept in the training part" in str(w.message) for w in record)
    assert all(np.count_nonzero(y[train] == 1) >= 1 for train, _ in splits)


def test_a_splitter_is_used_as_it_is():
    X, y = _one_of(60, 2)
    order = np.argsort(y, kind="stable")
    with pytest.raises(ValueError, match="fold 4 has training samples of only 1 of the 2 classes; use fewer folds"):
        KernelProjectionMachine(cv=KFold(5)).fit(X[order], y[order])
