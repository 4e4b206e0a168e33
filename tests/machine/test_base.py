"""The fit skeleton's warnings and prediction rule (kpm.machine.base): the underfit check of
the penalty and slope rules, predict against decision_function, verbose progress lines."""

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils import shuffle

from kpm import KernelProjectionMachine, NystroemKPM


def _blobs():
    X, y = make_blobs(n_samples=30, random_state=0, cluster_std=0.1)
    X, y = shuffle(X, y, random_state=7)
    return StandardScaler().fit_transform(X), y


def _shifted_gaussians():
    """Two Gaussian classes 6 apart in x0: 80 training, 40 test points."""
    rng = np.random.default_rng(5)
    y = np.r_[np.zeros(60, int), np.ones(60, int)]
    X = rng.normal(size=(120, 2))
    X[:, 0] += 6 * y
    p = rng.permutation(120)
    X, y = X[p], y[p]
    return X[:80], y[:80], X[80:], y[80:]


def _underfit_warnings(record):
    return [str(w.message) for w in record if "underfits" in str(w.message)]


def test_nystroem_slope_predict_is_the_argmax_of_decision_function():
    X, y = _blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = NystroemKPM(50, selection="slope", random_state=0).fit(X, y)
    F = m.decision_function(X)
    np.testing.assert_array_equal(m.predict(X), m.classes_[F.argmax(axis=1)])
    assert m.predict(X)[25] == m.classes_[F[25].argmax()]


@pytest.mark.parametrize("cls", [KernelProjectionMachine, NystroemKPM])
def test_slope_underfit_on_easy_data_warns_naming_the_estimator_and_cv(cls):
    X, y, Xt, yt = _shifted_gaussians()
    with pytest.warns(UserWarning, match="underfits") as record:
        m = cls(selection="slope", random_state=0).fit(X, y)
    message = _underfit_warnings(record)[0]
    assert message.startswith(f"{cls.__name__}: the slope heuristic chose D={m.n_components_}")
    assert "selection='cv'" in message
    # the warning is right: the rule's model is worse than the default's
    assert np.mean(m.predict(Xt) != yt) > 0.2
    default = cls(random_state=0).fit(X, y)
    assert np.mean(default.predict(Xt) != yt) <= 0.05


def test_nystroem_slope_underfit_on_blobs_warns():
    X, y = _blobs()
    with pytest.warns(UserWarning, match="NystroemKPM: the slope heuristic chose D=1"):
        NystroemKPM(50, selection="slope", random_state=0).fit(X, y)


@pytest.mark.parametrize("seed", [6, 7])
def test_penalty_on_few_samples_in_many_dimensions_warns(seed):
    # 20 training samples x 500 features, 5 informative: the penalty rule keeps D=1 (test
    # error about 0.5) where SVC has none
    rng = np.random.default_rng(seed)
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    X = rng.normal(size=(40, 500))
    X[:, :5] += 1.5 * np.where(y == 1, 1.0, -1.0)[:, None]
    p = rng.permutation(40)
    X, y = X[p], y[p]
    assert np.mean(SVC().fit(X[:20], y[:20]).predict(X[20:]) != y[20:]) == 0.0
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        m = KernelProjectionMachine(selection="penalty", random_state=0).fit(X[:20], y[:20])
    err = np.mean(m.predict(X[20:]) != y[20:])
    found = _underfit_warnings(record)
    assert err <= 0.1 or (found and "KernelProjectionMachine: the penalty rule" in found[0]
                          and "selection='cv'" in found[0])


def test_no_underfit_warning_where_the_rule_fits():
    X, y, _, _ = _shifted_gaussians()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        KernelProjectionMachine(selection="penalty", penalty=1e-4, formulation="paper").fit(X, y)
        KernelProjectionMachine(random_state=0).fit(X, y)  # the CV rule is not checked
    assert _underfit_warnings(record) == []


def _few_points_per_class(seed, counts=(5, 2, 3, 3), p=6, n_test=1000):
    """Four Gaussian classes in R^6 (closest centres 5 apart), 2 to 5 training points each."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(len(counts), p))
    dist = np.sqrt(((c[:, None] - c[None]) ** 2).sum(-1)) + np.diag(np.full(len(counts), np.inf))
    c *= 5.0 / dist.min()
    y = np.repeat(np.arange(len(counts)), counts)
    yt = rng.integers(0, len(counts), n_test)
    return c[y] + rng.normal(size=(len(y), p)), y, c[yt] + rng.normal(size=(n_test, p)), yt


def _two_rows_repeated(seed, n_test=1000):
    """Three Gaussian classes in R^3 (80 points), two of the points repeated 40 times."""
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(3, 3))
    dist = np.sqrt(((c[:, None] - c[None]) ** 2).sum(-1)) + np.diag(np.full(3, np.inf))
    c *= 4.0 / dist.min()
    y = rng.integers(0, 3, 80)
    X = c[y] + rng.normal(size=(80, 3))
    reps = np.ones(80, int)
    reps[[3, 17]] = 40
    rows = np.repeat(np.arange(80), reps)
    yt = rng.integers(0, 3, n_test)
    return X[rows], y[rows], c[yt] + rng.normal(size=(n_test, 3)), yt


def _default_rule_warnings(record):
    return [str(w.message) for w in record if "by the default rule" in str(w.message)]


@pytest.mark.parametrize("cls", [KernelProjectionMachine, NystroemKPM])
@pytest.mark.parametrize("data, seed", [(_few_points_per_class, 0), (_few_points_per_class, 1),
                                        (_two_rows_repeated, 0), (_two_rows_repeated, 2)])
def test_a_rule_clearly_worse_than_the_default_warns_naming_it(cls, data, seed):
    # the slope heuristic keeps D = 1 on 13 points of four classes (its penalty comes from the
    # training risks of the large models, all 0) and on rows repeated 40 times: test errors
    # above 0.25 on 1,000 fresh points where the default KPM has at most 0.05
    X, y, Xt, yt = data(seed)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        m = cls(selection="slope", random_state=0).fit(X, y)
    default = KernelProjectionMachine(random_state=0).fit(X, y)
    assert np.mean(m.predict(Xt) != yt) > 0.25
    assert np.mean(default.predict(Xt) != yt) < 0.06
    found = _default_rule_warnings(record)
    assert len(found) == 1 and found[0].startswith(f"{cls.__name__}: the selected D = {m.n_components_}")
    assert "KernelProjectionMachine()" in found[0]
    # attributed to the caller's line, not to kpm's
    assert [w.filename for w in record if "by the default rule" in str(w.message)] == [__file__]


@pytest.mark.parametrize("seed", [1, 3])
def test_no_default_rule_warning_where_the_rule_does_as_well(seed):
    # the same repeated rows where the slope heuristic's D = 2 is as good as the default on
    # fresh points: the default's leave-one-out error at D = 2 is far above its own choice's
    # (a group of 40 copies left out at a time), but the rule's model fits its training points
    X, y, Xt, yt = _two_rows_repeated(seed)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        m = KernelProjectionMachine(selection="slope", random_state=0).fit(X, y)
        default = KernelProjectionMachine(random_state=0).fit(X, y)
    assert np.mean(m.predict(Xt) != yt) <= np.mean(default.predict(Xt) != yt) + 0.01
    assert _default_rule_warnings(record) == []


def test_the_default_is_not_compared_with_itself(monkeypatch):
    from kpm.machine import default_rule

    calls = []
    monkeypatch.setattr(default_rule, "reference_errors", lambda *a: calls.append(a))
    X, y, _, _ = _few_points_per_class(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        KernelProjectionMachine(random_state=0).fit(X, y)
        KernelProjectionMachine(cv=3, random_state=0).fit(X, y)
    assert calls == []


def test_the_own_fold_error_warns_only_where_clearly_higher():
    """The chosen model's own fold error is compared with the default's at its choice by the
    same test as the default's own errors: twice it and three standard errors above."""
    from kpm.machine.default_rule import ReferenceErrors, warn_if_default_is_better

    errors = ReferenceErrors(0.2, 0.1, 55, "5-fold cross-validation error", 5, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_if_default_is_better("M", 3, 0.05, errors, 55, "advice")  # own not measured
        assert not warn_if_default_is_better("M", 3, 0.05, errors, 55, "advice", own=0.19)  # not twice
        assert not warn_if_default_is_better("M", 55, 0.05, errors, 55, "advice", own=0.4)  # the default's D
    with pytest.warns(UserWarning, match=r"the chosen model \(D = 3\) has a 5-fold cross-validation error of 30.0%"):
        assert warn_if_default_is_better("M", 3, 0.05, errors, 55, "advice", own=0.3)


def test_the_models_own_estimate_warns_where_clearly_and_well_above_the_defaults():
    """The chosen model's own estimate (its CV or training error) against the default's error
    at its choice: clearly higher (twice it, three standard errors) and by OWN_ESTIMATE_GAP."""
    from kpm.machine.default_rule import OWN_ESTIMATE_GAP, ReferenceErrors, warn_if_default_is_better

    errors = ReferenceErrors(0.05, 0.04, 350, "leave-one-out error", None, 0)
    cv = "its cross-validation error"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_if_default_is_better("M", 12, 0.12, errors, 350, "advice")  # the estimate not named
        assert not warn_if_default_is_better("M", 12, 0.075, errors, 350, "advice", estimate_name=cv)  # not twice
        # 4 errors in 252 against none: three standard errors of one sample, but below the gap
        zero = ReferenceErrors(0.0, 0.0, 252, "leave-one-out error", None, 0)
        assert 4 / 252 < OWN_ESTIMATE_GAP
        assert not warn_if_default_is_better("M", 2, 4 / 252, zero, 252, "advice", estimate_name=cv)
    with pytest.warns(UserWarning, match=r"M: the chosen model \(D = 12\) misclassifies 12.0% by its cross-validation "
                                         r"error, against a leave-one-out error of 4.0% .* at its choice D = 350"):
        assert warn_if_default_is_better("M", 12, 0.12, errors, 350, "advice", estimate_name=cv)


def test_clearly_higher_error():
    from kpm.validation import clearly_higher_error

    assert clearly_higher_error(0.5, 0.0, 13)  # 6.5 of 13 points against none
    assert not clearly_higher_error(0.1, 0.0, 13)  # one point in 13: within three standard errors
    assert not clearly_higher_error(0.3, 0.2, 1000)  # far apart, but not twice
    assert clearly_higher_error(0.4, 0.2, 1000)
    assert not clearly_higher_error(0.4, 0.2, 20)


def test_train_error_curve():
    X, y, _, _ = _shifted_gaussians()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = KernelProjectionMachine(selection="slope", random_state=0).fit(X, y)
    curve = m.selection_curve_
    i = int(np.flatnonzero(curve["D"] == m.n_components_)[0])
    assert curve["train_error"][i] == pytest.approx(np.mean(m.predict(X) != y))


@pytest.mark.parametrize("make, per_d", [
    (lambda v: KernelProjectionMachine(random_state=0, verbose=v), True),
    (lambda v: KernelProjectionMachine(random_state=0, cv=5, verbose=v), True),
    (lambda v: KernelProjectionMachine(random_state=0, formulation="paper", verbose=v), False),
    (lambda v: KernelProjectionMachine(random_state=0, formulation="paper", early_stopping=True, verbose=v), True),
    (lambda v: NystroemKPM(40, random_state=0, verbose=v), False),
    (lambda v: NystroemKPM(40, random_state=0, formulation="svm", verbose=v), True),
], ids=["kpm", "kpm-folds", "kpm-paper", "kpm-paper-lockstep", "nystroem", "nystroem-svm"])
def test_verbose_writes_progress_lines(make, per_d, capsys):
    X, y, _, _ = _shifted_gaussians()
    make(0).fit(X, y)
    assert capsys.readouterr().err == ""
    m = make(1).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    name = type(m).__name__
    assert len(lines) >= 4
    assert all(re.match(rf"\[{name}\] +\d+\.\d s  \S", line) for line in lines), lines
    assert any("cross-validation" in line for line in lines)
    if m.cv == "auto" and m.formulation_ == "svm":  # the default: the leave-one-out error, no folds
        assert any("leave-one-out" in line for line in lines)
    else:
        assert any(re.search(r"fold 5 of 5|5 folds", line) for line in lines)
    assert lines[-1].endswith(f"done: D={m.n_components_}")
    make(2).fit(X, y)
    more = capsys.readouterr().err.splitlines()
    if per_d:  # the folds' paths advanced together: one more line per D
        assert len(more) > len(lines)
        assert any(re.search(r"D=\d+(:|,) pooled CV errors", line) for line in more)
    else:
        assert len(more) == len(lines)


def test_verbose_is_validated():
    X, y, _, _ = _shifted_gaussians()
    with pytest.raises(ValueError, match="verbose"):
        KernelProjectionMachine(verbose=-1).fit(X, y)


@pytest.mark.parametrize("cls", [KernelProjectionMachine, NystroemKPM])
def test_a_dimension_chosen_at_max_components_warns(cls):
    # a label of sin(2 x0) needs 10 or more dimensions of the RBF basis
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (200, 2))
    y = (np.sin(2 * X[:, 0]) > 0).astype(int)
    kw = {"n_landmarks": 100} if cls is NystroemKPM else {}
    with pytest.warns(UserWarning, match=rf"{cls.__name__}: the selected D = 10 is the largest D considered "
                                         r"\(max_components=10\)"):
        m = cls(max_components=10, random_state=0, **kw).fit(X, y)
    assert m.n_components_ == 10
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        m = cls(max_components=40, random_state=0, **kw).fit(X, y)
    # with room the CV error levels off below 40 (the exact KPM's one-standard-error rule may
    # still take D = 40, among equals: no warning, as the error is no longer falling there)
    curve = m.selection_curve_
    assert 10 <= m.n_components_ <= 40
    at_40 = curve["cv_error"][curve["D"] == 40]
    assert at_40.size == 0 or curve["cv_error"][curve["D"] < 40].min() <= at_40[0]
    assert not any("largest D considered" in str(w.message) for w in record)


@pytest.mark.parametrize("cls", [KernelProjectionMachine, NystroemKPM])
@pytest.mark.parametrize("kw", [dict(), dict(cv=5), dict(selection="slope")])
def test_a_class_of_zero_weight_that_leaves_one_class_is_a_clear_error(cls, kw):
    # were a model fitted on one class (the default), "a cross-validation training fold has a
    # kernel matrix of rank 0" (cv=5) and "Z contains NaN or infinite values" (the slope rule)
    from sklearn.datasets import make_blobs

    X, y = make_blobs(60, centers=2, random_state=0)
    with pytest.raises(ValueError, match=r"class\(es\) \[0\] all weigh zero"):
        cls(class_weight={0: 0}, **kw).fit(X, y)
    with pytest.raises(ValueError, match=r"class\(es\) \[1\] all weigh zero"):
        cls(**kw).fit(X, y, sample_weight=(y == 0).astype(float))


@pytest.mark.parametrize("cls", [KernelProjectionMachine, NystroemKPM])
def test_a_class_of_zero_weight_among_three_is_a_clear_error(cls):
    # was accepted silently: the class stayed in classes_ and was never predicted
    from sklearn.datasets import make_blobs

    X, y = make_blobs(90, centers=3, random_state=0)
    with pytest.raises(ValueError, match=r"class\(es\) \[0\] all weigh zero"):
        cls(class_weight={0: 0}).fit(X, y)
