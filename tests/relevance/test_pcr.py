import numpy as np
import pytest
from sklearn.model_selection import KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from kpm import DegenerateKernelWarning, DegenerateModelWarning
from kpm.kernels import make_kernel
from kpm.relevance.pcr import KernelPCRClassifier, KernelPCRRegressor
from kpm.kernels import WeightedDegreeKernel


@parametrize_with_checks(
    [
        KernelPCRRegressor(),
        KernelPCRClassifier(),
        KernelPCRRegressor(n_components="cv", random_state=0),
        KernelPCRClassifier(n_components="cv", random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    f = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1]
    return X, f, rng


def test_prediction_formula_and_training_fit():
    X, f, rng = _data()
    y = f + 0.2 * rng.standard_normal(len(f))
    d = 8
    m = KernelPCRRegressor(d, sigma=1.0).fit(X, y)
    K = make_kernel("rbf", sigma=1.0)(X)
    w, U = np.linalg.eigh(K)
    w, U = w[::-1][:d], U[:, ::-1][:, :d]
    # training fit = projection of y on the first d eigenvectors
    assert np.allclose(m.predict(X), U @ (U.T @ y), atol=1e-8)
    # new points: kappa(x)^T U_d Lambda_d^{-1} U_d^T y
    Xn = rng.uniform(-2, 2, size=(7, 2))
    Kn = make_kernel("rbf", sigma=1.0)(Xn, X)
    assert np.allclose(m.predict(Xn), Kn @ U @ ((U.T @ y) / w), atol=1e-8)
    assert m.n_components_ == d
    assert np.isclose(m.residual_variance_, np.mean((y - U @ (U.T @ y)) ** 2))


def test_relevant_default_uses_relevant_dimension():
    from kpm.relevance.dimension import RelevantDimension

    X, f, rng = _data(seed=1)
    y = f + 0.3 * rng.standard_normal(len(f))
    m = KernelPCRRegressor(sigma=1.0).fit(X, y)
    r = RelevantDimension(sigma=1.0).fit(X, y)
    assert m.n_components_ == m.relevant_dim_ == r.n_components_
    assert np.mean((m.predict(X) - f) ** 2) < 0.05


# d = 1 fits on these folds predict one class: they warn, rightly
@pytest.mark.filterwarnings("ignore::kpm.DegenerateModelWarning")
def test_cv_errors_match_refitting_each_fold():
    X, f, rng = _data(n=90, seed=2)
    y = np.where(f + 0.4 * rng.standard_normal(len(f)) > 0, 1, -1)
    cv = KFold(4, shuffle=True, random_state=0)
    m = KernelPCRClassifier("cv", sigma=1.0, cv=cv, max_components=20).fit(X, y)
    assert m.cv_errors_.shape == (20,)
    for d in (1, 5, 12):
        wrong = 0
        for tr, va in cv.split(X):
            c = KernelPCRClassifier(d, sigma=1.0).fit(X[tr], y[tr])
            wrong += np.sum(c.predict(X[va]) != y[va])
        assert np.isclose(m.cv_errors_[d - 1], wrong / len(y))
    assert m.n_components_ == int(np.argmin(m.cv_errors_)) + 1
    sq = KernelPCRClassifier("cv", sigma=1.0, cv=cv, max_components=20, cv_loss="squared").fit(X, y)
    for d in (2, 9):
        se = 0.0
        for tr, va in cv.split(X):
            c = KernelPCRClassifier(d, sigma=1.0).fit(X[tr], y[tr])
            se += np.sum((c.decision_function(X[va]) - y[va]) ** 2)
        assert np.isclose(sq.cv_errors_[d - 1], se / len(y))
    se = KernelPCRClassifier("cv", sigma=1.0, cv=cv, max_components=20, cv_rule="one_se").fit(X, y)
    e = m.cv_errors_
    bound = e.min() + np.sqrt(e.min() * (1 - e.min()) / len(y) * len(y) / (len(y) - 1))
    assert np.allclose(se.cv_errors_, e)
    assert se.n_components_ == int(np.argmax(e <= bound + 1e-12)) + 1 <= m.n_components_
    with pytest.raises(ValueError, match="cv_rule"):
        KernelPCRClassifier("cv", cv_rule="best").fit(X, y)
    with pytest.raises(ValueError, match="cv_loss"):
        KernelPCRRegressor("cv", cv_loss="zero_one").fit(X, y.astype(float))


def test_classifier_label_noise_and_labels():
    X, f, rng = _data(n=150, seed=3)
    y = np.where(f > 0, "pos", "neg")
    flip = rng.random(len(y)) < 0.1
    y[flip] = np.where(y[flip] == "pos", "neg", "pos")
    c = KernelPCRClassifier(sigma=1.0).fit(X, y)
    assert list(c.classes_) == ["neg", "pos"]
    pi = c.fitted_train_[:, 0]
    assert np.isclose(c.label_noise_, np.mean(np.where(pi > 0, "pos", "neg") != y))
    assert 0.03 < c.label_noise_ < 0.25
    assert set(c.predict(X)) <= {"neg", "pos"}
    assert c.decision_function(X).shape == (len(y),)


def test_multiclass_shares_one_decomposition():
    rng = np.random.default_rng(4)
    centres = np.array([[0, 0], [3, 0], [0, 3]])
    y = np.repeat([0, 1, 2], 40)
    X = centres[y] + 0.6 * rng.standard_normal((120, 2))
    c = KernelPCRClassifier(sigma=1.0).fit(X, y)
    assert c.decision_function(X).shape == (120, 3)
    assert np.mean(c.predict(X) == y) > 0.9


def test_bad_input():
    X, f, _ = _data(n=30)
    y = f.copy()
    y[2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelPCRRegressor().fit(X, y)
    with pytest.raises(ValueError, match="n - 1"):
        KernelPCRRegressor(30).fit(X, f)
    with pytest.raises(ValueError, match="n_components"):
        KernelPCRRegressor("best").fit(X, f)
    with pytest.raises(ValueError, match="n_components"):
        KernelPCRRegressor(0).fit(X, f)
    with pytest.raises(ValueError, match="rank"):
        KernelPCRRegressor(5, kernel="linear").fit(X, f)  # linear kernel in 2-D: rank 2
    with pytest.raises(ValueError, match="class"):
        KernelPCRClassifier().fit(X, np.ones(30))
    with pytest.raises(ValueError, match="cv"):
        KernelPCRClassifier("cv", cv=1).fit(X, np.sign(f))


def test_strings_with_weighted_degree_kernel():
    rng = np.random.default_rng(5)
    S = np.array(["".join(rng.choice(list("ACGT"), 20)) for _ in range(120)])
    y = np.array([1 if s[9:11] == "AG" or s[3] == "C" else -1 for s in S])
    c = KernelPCRClassifier(kernel=WeightedDegreeKernel(3)).fit(S[:80], y[:80])
    assert np.mean(c.predict(S[80:]) == y[80:]) > 0.7
    with pytest.raises(ValueError, match="equal length"):
        c.predict(np.array(["ACGT", "AC"]))


# ------------------------------------------------ robustness (regression tests)
@pytest.mark.parametrize("est", [KernelPCRRegressor(kernel="precomputed"),
                                 KernelPCRClassifier(kernel="precomputed"),
                                 KernelPCRRegressor(kernel="precomputed", max_components=4)])
def test_non_psd_precomputed_rejected(est):
    # non-PSD matrices were accepted; negative-definite ones said "kernel matrix is zero"
    X, f, _ = _data(n=40)
    y = np.sign(f) if isinstance(est, KernelPCRClassifier) else f
    K = make_kernel("rbf", sigma=1.0)(X)
    A = np.random.default_rng(0).standard_normal(K.shape)
    with pytest.raises(ValueError, match="precomputed kernel matrix is not positive semi-definite: it has"):
        est.fit(K + (A + A.T), y)
    with pytest.raises(ValueError, match="not positive semi-definite.*negated or a distance matrix"):
        est.fit(-K, y)
    est.fit(K, y)
    with pytest.raises(ValueError, match="features|one column per training sample"):
        est.predict(K[:3, :10])


def test_identical_samples_give_the_mean_with_a_warning():
    X = np.full((30, 2), 0.7)
    y = np.linspace(-1.0, 2.0, 30)
    with pytest.warns(DegenerateKernelWarning, match="KernelPCRRegressor: the kernel matrix is numerically constant"):
        m = KernelPCRRegressor().fit(X, y)
    assert m.n_components_ == 1
    np.testing.assert_allclose(m.predict(X[:3]), np.full(3, y.mean()), rtol=1e-12)
    with pytest.warns(DegenerateKernelWarning):
        with pytest.warns(DegenerateModelWarning, match=r"KernelPCRClassifier predicts the single class 1 on all 30"):
            c = KernelPCRClassifier().fit(X, np.where(y > -0.5, 1, -1))
    assert set(c.predict(X)) == {1}


def test_one_class_model_warns():
    # a width far too small: d_hat = 1 and the majority class everywhere
    X, f, _ = _data(n=60, seed=7)
    y = np.where(f > 0.8, 1, 0)
    with pytest.warns(DegenerateModelWarning, match="predicts the single class 0"):
        KernelPCRClassifier(1, kernel="linear").fit(X - X.mean(axis=0) + 5.0, y)


def test_overflow_and_zero_kernels_are_clear_errors(capfd):
    X, f, _ = _data(n=30)
    with pytest.raises(ValueError, match="overflowed float64"):
        KernelPCRRegressor(kernel="poly").fit(X * 1e120, f)
    with pytest.raises(ValueError, match="overflowed float64"):
        KernelPCRClassifier(kernel="linear").fit(X * 1e200, np.sign(f))
    with pytest.raises(ValueError, match=r"numerical rank 0 \(it is zero\): kernel PCR has no direction"):
        KernelPCRRegressor(kernel="linear").fit(np.zeros_like(X), f)
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(n_components=2.0), r"n_components must be an integer >= 1 or one of \('relevant', 'cv'\), got 2.0"),
        (dict(n_components=True), r"n_components must be an integer >= 1 or one of \('relevant', 'cv'\), got True"),
        (dict(max_components=0), "max_components must be >= 1"),
        (dict(max_components=3.5), "max_components must be an integer"),
        (dict(null_space="keep"), "null_space must be one of"),
        (dict(cv=1.5), "cv must be an integer >= 2 or a cross-validation splitter, got 1.5"),
        (dict(cv=True), "cv must be an integer >= 2 or a cross-validation splitter, got True"),
        (dict(cv_rule="max"), "cv_rule must be one of"),
        (dict(cv_loss="zero_one"), r"cv_loss must be one of \('auto', 'squared'\), got 'zero_one'"),
        (dict(eigen_solver="lapack"), "eigen_solver must be one of"),
    ],
)
def test_bad_parameters_named(kw, match):
    X, f, _ = _data(n=30)
    with pytest.raises(ValueError, match=match):
        KernelPCRRegressor(**kw).fit(X, f)


@pytest.mark.parametrize("cls", [KernelPCRRegressor, KernelPCRClassifier])
def test_bad_random_state_is_a_clear_error(cls):
    # was numpy's "Seed must be between 0 and 2**32 - 1" from inside the CV splitter
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="random_state must be None, an integer"):
        cls(sigma=1.0, n_components="cv", random_state=-1).fit(X, y)


def test_cv_takes_an_iterable_of_splits():
    # cv is a splitter as scikit-learn's check_cv takes it: a list of (train, test) pairs
    # gives the folds of the splitter that made it
    X, f, _ = _data(n=60)
    listed = KernelPCRRegressor("cv", sigma=1.0, cv=list(KFold(3).split(X)), max_components=10).fit(X, f)
    split = KernelPCRRegressor("cv", sigma=1.0, cv=KFold(3), max_components=10).fit(X, f)
    assert listed.n_components_ == split.n_components_
    np.testing.assert_array_equal(listed.cv_errors_, split.cv_errors_)
