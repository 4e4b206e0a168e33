"""The validation layer (kpm.validation): every check, its messages and its tolerances."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from kpm import DegenerateKernelWarning, DegenerateModelWarning, ReferenceModelWarning
from kpm.kernels import make_kernel
from kpm.validation import (
    DEGENERACY_TOL,
    ISOLATED_FRACTION,
    PSD_RTOL,
    SYMMETRY_RTOL,
    check_bool,
    check_cross_kernel,
    check_generator,
    check_estimator_data,
    check_int,
    check_kernel_matrix,
    check_option,
    check_psd_spectrum,
    check_real,
    check_samples,
    check_kernel_values,
    kernel_degeneracy,
    warn_if_degenerate_kernel,
    warn_if_one_class,
)

pd = pytest.importorskip("pandas")


def _psd_with_spectrum(w, seed=0):
    """A symmetric matrix with the eigenvalues w (random orthogonal eigenvectors)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((len(w), len(w))))
    K = (Q * np.asarray(w, dtype=float)) @ Q.T
    return (K + K.T) / 2


# ----------------------------------------------------------------- parameters
def test_check_int_accepts_every_integer_type_and_bounds():
    assert check_int(3, "k") == 3
    assert check_int(np.int64(4), "k") == 4 and type(check_int(np.int64(4), "k")) is int
    assert check_int(np.uint8(5), "k") == 5
    assert check_int(0, "k", minimum=0) == 0
    assert check_int(7, "k", maximum=7) == 7
    assert check_int(-9, "k", minimum=None) == -9
    assert check_int(None, "k", allow_none=True) is None


@pytest.mark.parametrize(
    "value, kwargs, match",
    [
        (True, {}, "k must be an integer >= 1, got True"),
        (2.0, {}, "k must be an integer >= 1, got 2.0"),
        ("3", {}, "k must be an integer >= 1, got '3'"),
        (None, {}, "k must be an integer >= 1, got None"),
        (0, {}, "k must be >= 1, got 0"),
        (-5, {"minimum": 0}, "k must be >= 0, got -5"),
        (8, {"maximum": 7}, "k must be <= 7, got 8"),
    ],
)
def test_check_int_rejects(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_int(value, "k", **kwargs)


def test_check_real_accepts_and_bounds():
    assert check_real(2, "x") == 2.0 and type(check_real(2, "x")) is float
    assert check_real(np.float32(0.5), "x") == 0.5
    assert check_real(0.0, "x", low=0.0) == 0.0  # closed end
    assert check_real(1.0, "x", high=1.0) == 1.0
    assert check_real(None, "x", allow_none=True) is None


@pytest.mark.parametrize(
    "value, kwargs, match",
    [
        (np.nan, {}, "x must be finite, got nan"),
        (np.inf, {}, "x must be finite"),
        (-np.inf, {"low": 0.0}, "x must be finite"),
        (True, {}, "x must be a real number, got True"),
        ("1.0", {}, "x must be a real number"),
        (1 + 2j, {}, "x must be a real number"),
        (0.0, {"low": 0.0, "low_open": True}, "x must be > 0, got 0.0"),
        (-1e-300, {"low": 0.0}, "x must be >= 0"),
        (1.0, {"high": 1.0, "high_open": True}, "x must be < 1, got 1.0"),
        (1.5, {"high": 1.0}, "x must be <= 1, got 1.5"),
    ],
)
def test_check_real_rejects(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_real(value, "x", **kwargs)


def test_check_option():
    assert check_option("b", "mode", ("a", "b")) == "b"
    for bad in ("c", "B", 1, None, ["a"]):
        with pytest.raises(ValueError, match=r"mode must be one of \('a', 'b'\), got"):
            check_option(bad, "mode", ("a", "b"))


def test_check_bool():
    assert check_bool(True, "flag") is True
    assert check_bool(np.bool_(False), "flag") is False
    for bad in (1, 0, "True", None, 1.0):
        with pytest.raises(ValueError, match="flag must be True or False"):
            check_bool(bad, "flag")


def test_check_generator():
    assert check_generator(3).random() == np.random.default_rng(3).random()
    g = np.random.default_rng(1)
    assert check_generator(g) is g
    assert isinstance(check_generator(None), np.random.Generator)
    for bad in ("seed", -1, 1.5):
        with pytest.raises(ValueError, match="random_state must be None, a non-negative int"):
            check_generator(bad)


# ------------------------------------------------------------------- samples
def test_check_samples_canonical_form_for_every_container():
    X = np.random.default_rng(0).standard_normal((6, 3))
    forms = [X, np.asfortranarray(X), X.tolist(), pd.DataFrame(X), X[:, ::-1][:, ::-1]]
    for form in forms:
        out = check_samples(form)
        assert out.dtype == np.float64 and out.flags.c_contiguous
        assert np.array_equal(out, X)
    X32 = X.astype(np.float32)
    assert np.array_equal(check_samples(X32), X32.astype(np.float64))
    assert check_samples(np.arange(6).reshape(3, 2)).dtype == np.float64


@pytest.mark.parametrize(
    "X, kwargs, match",
    [
        (np.array([[1.0, np.nan]]), {}, "NaN"),
        (np.array([[1.0, np.inf]]), {}, "infinity"),
        (np.arange(3.0), {}, "Expected 2D array"),
        (np.empty((0, 2)), {}, "0 sample"),
        (np.ones((1, 2)), {"min_samples": 2}, r"1 sample\(s\).*minimum of 2"),
        (sp.csr_matrix(np.eye(3)), {}, "[Ss]parse"),
        (np.array([[1 + 1j, 2.0]]), {}, "[Cc]omplex"),
        (np.array([["a", "b"]]), {}, "could not convert|numeric"),
    ],
)
def test_check_samples_rejects(X, kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        check_samples(X, **kwargs)


class _Dummy(BaseEstimator):
    pass


def test_check_estimator_data_bookkeeping_and_y():
    X = np.random.default_rng(1).standard_normal((5, 3))
    est = _Dummy()
    out = check_estimator_data(est, np.asfortranarray(X))
    assert out.flags.c_contiguous and np.array_equal(out, X) and est.n_features_in_ == 3
    with pytest.raises(ValueError, match="features"):
        check_estimator_data(est, X[:, :2], reset=False)
    Xo, yo = check_estimator_data(est, X, [1, 2, 3, 4, 5], y_numeric=True)
    assert yo.dtype == np.float64 and np.array_equal(yo, [1, 2, 3, 4, 5]) and np.array_equal(Xo, X)
    _, yo = check_estimator_data(est, X, list("abcab"))
    assert list(yo) == list("abcab")  # labels stay labels
    with pytest.raises(ValueError, match="y must be numeric"):
        check_estimator_data(est, X, list("abcab"), y_numeric=True)
    with pytest.raises(ValueError, match="NaN"):
        check_estimator_data(est, X, [1, 2, np.nan, 4, 5], y_numeric=True)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        check_estimator_data(est, X, [1, 2, 3])
    with pytest.raises(ValueError, match=r"2 sample\(s\)"):
        check_estimator_data(est, X[:2], min_samples=3)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    check_estimator_data(est, df)
    assert list(est.feature_names_in_) == ["a", "b", "c"]


# ------------------------------------------------------------ kernel matrices
def test_check_kernel_matrix_returns_symmetrised_copy():
    K = _psd_with_spectrum([3.0, 2.0, 1.0, 0.5])
    K[0, 1] += 1e-10
    out = check_kernel_matrix(K)
    assert np.array_equal(out, out.T)
    assert np.array_equal(out, (K + K.T) / 2)
    assert out is not K
    assert check_kernel_matrix(K.tolist()).flags.c_contiguous


@pytest.mark.parametrize("rel, ok", [(1e-9, True), (1e-6, False)])
def test_symmetry_tolerance_boundary(rel, ok):
    K = _psd_with_spectrum(np.linspace(1, 5, 10))
    K[2, 7] += rel * np.max(np.abs(K))
    assert SYMMETRY_RTOL == 1e-8
    if ok:
        check_kernel_matrix(K)
    else:
        with pytest.raises(ValueError, match=r"not symmetric: max \|K - K\^T\|"):
            check_kernel_matrix(K)


@pytest.mark.parametrize("rel, ok", [(1e-10, True), (1e-6, False)])
@pytest.mark.parametrize("path", ["cholesky", "spectrum"])
def test_psd_tolerance_boundary(rel, ok, path):
    lmax = 7.0
    w = np.r_[lmax, np.linspace(0.1, 3, 8), -rel * lmax]
    K = _psd_with_spectrum(w, seed=3)
    assert PSD_RTOL == 1e-8

    def check():
        if path == "cholesky":
            check_kernel_matrix(K)
        else:
            check_psd_spectrum(np.linalg.eigvalsh(K))

    if ok:
        check()
    else:
        with pytest.raises(ValueError, match=r"not positive semi-definite: it has the eigenvalue -7e-06"):
            check()


@pytest.mark.parametrize(
    "K, match",
    [
        (np.ones((3, 2)), r"must be square \(n_samples, n_samples\), got shape \(3, 2\)"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN"),
        (np.array([[np.inf]]), "infinity"),
        (np.zeros((3, 3)), "is zero: a kernel matrix needs a positive eigenvalue"),
        (-np.eye(3), "largest eigenvalue is -1.*negated or a distance matrix"),
        (np.array([[1.0, 2.0], [2.0, 1.0]]), "eigenvalue -1, below"),
    ],
)
def test_check_kernel_matrix_rejects(K, match):
    with pytest.raises(ValueError, match=match):
        check_kernel_matrix(K)


def test_check_kernel_matrix_psd_false_and_name():
    S = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.array_equal(check_kernel_matrix(S, psd=False), S)
    with pytest.raises(ValueError, match="^my matrix is not positive"):
        check_kernel_matrix(S, "my matrix")


def test_scale_judges_a_centred_matrix_at_the_rounding_level_of_the_uncentred_one():
    from kpm.spectral.eigensolvers import center_gram

    # identical samples: the centred matrix is rounding noise of size eps * max|K|
    rng = np.random.default_rng(4)
    K = 1e6 * (1.0 + 1e-16 * rng.standard_normal((30, 30)))
    K = (K + K.T) / 2
    Kc = center_gram(K)[0]
    w = np.linalg.eigvalsh(Kc)
    assert w.min() < 0 < w.max()  # noise of both signs
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_psd_spectrum(w)  # judged against its own (noise) lambda_max
    check_psd_spectrum(w, scale=1e6)  # numerically zero: passes, the caller reports it
    check_kernel_matrix(Kc, scale=1e6)
    # a genuinely indefinite centred matrix still fails with the scale
    with pytest.raises(ValueError, match="max\\(lambda_max, scale\\)"):
        check_psd_spectrum(np.r_[1.0, -1e-3], scale=10.0)
    # a spectrum of exact zeros is an error only without scale
    check_psd_spectrum(np.zeros(4), scale=1.0)
    with pytest.raises(ValueError, match="is zero"):
        check_psd_spectrum(np.zeros(4))
    check_psd_spectrum(np.array([]))


def test_check_cross_kernel():
    K = np.random.default_rng(0).random((4, 6))
    out = check_cross_kernel(np.asfortranarray(K), 6)
    assert out.flags.c_contiguous and np.array_equal(out, K)
    with pytest.raises(ValueError, match=r"one column per training sample \(5\), got shape \(4, 6\)"):
        check_cross_kernel(K, 5)
    with pytest.raises(ValueError, match="NaN"):
        check_cross_kernel(np.full((2, 6), np.nan), 6)
    with pytest.raises(ValueError, match="2D array"):
        check_cross_kernel(np.ones(6), 6)


def test_check_kernel_values():
    K = np.ones((2, 2))
    assert check_kernel_values(K) is K
    k = make_kernel("linear")
    for bad in (np.array([[1.0, np.inf]]), np.array([[np.nan]])):
        with pytest.raises(ValueError, match="the kernel Kernel\\('linear'\\) produced non-finite values.*overflowed float64"):
            check_kernel_values(bad, k)
    with pytest.raises(ValueError, match="^the kernel produced non-finite.*StandardScaler"):
        check_kernel_values(np.array([[np.inf]]))


# ------------------------------------------------------------ degenerate models
def _rbf(X, sigma):
    return make_kernel("rbf", sigma=sigma)(X)


@pytest.fixture(scope="module")
def points():
    return np.random.default_rng(5).standard_normal((40, 3))


def test_kernel_degeneracy_identity_constant_and_normal(points):
    kind, share = kernel_degeneracy(_rbf(points, 1e-3))
    assert kind == "identity" and share == 1.0
    kind, spread = kernel_degeneracy(_rbf(points, 1e6))
    assert kind == "constant" and 0 < spread <= DEGENERACY_TOL
    assert kernel_degeneracy(_rbf(points, 1.0)) is None
    assert kernel_degeneracy(np.eye(5)) == ("identity", 1.0)
    kind, spread = kernel_degeneracy(np.full((5, 5), 3.0))
    assert kind == "constant" and spread < 1e-15
    # a linear kernel is normalised by its diagonal: parallel rows are "constant"
    assert kernel_degeneracy(make_kernel("linear")(np.outer(np.arange(1.0, 6.0), [1.0, 2.0])))[0] == "constant"


def test_kernel_degeneracy_two_samples():
    assert kernel_degeneracy(np.eye(2)) == ("identity", 1.0)
    assert kernel_degeneracy(np.full((2, 2), 1.0)) == ("constant", 0.0)
    assert kernel_degeneracy(np.array([[1.0, 0.5], [0.5, 1.0]])) is None
    assert kernel_degeneracy(np.array([[4.0, 2.0], [2.0, 1.0]])) == ("constant", 0.0)  # parallel


def test_kernel_degeneracy_zero_diagonal_entries_are_left_out():
    # a sample with k(x, x) = 0 (a zero feature vector) is ignored
    K = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    assert kernel_degeneracy(K) == ("constant", 0.0)
    K = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.3], [0.0, 0.3, 1.0]])
    assert kernel_degeneracy(K) is None
    assert kernel_degeneracy(np.array([[0.0, 0.0], [0.0, 1.0]])) is None  # one sample left
    assert kernel_degeneracy(np.zeros((3, 3))) is None


def test_kernel_degeneracy_thresholds():
    n = 20
    K = np.full((n, n), 0.5)
    np.fill_diagonal(K, 1.0)
    # samples isolated at exactly the tolerance count, just above it they do not
    n_iso = int(np.ceil(ISOLATED_FRACTION * n))
    for v, expect in ((DEGENERACY_TOL, ("identity", n_iso / n)), (2 * DEGENERACY_TOL, None)):
        A = K.copy()
        A[:n_iso, :] = v
        A[:, :n_iso] = v
        np.fill_diagonal(A, 1.0)
        assert kernel_degeneracy(A) == expect
    A = K.copy()
    A[: n_iso - 1, :] = 0.0
    A[:, : n_iso - 1] = 0.0
    np.fill_diagonal(A, 1.0)
    assert kernel_degeneracy(A) is None  # fewer than ISOLATED_FRACTION isolated
    # constant: every normalised value within DEGENERACY_TOL of 1
    C = np.full((4, 4), 1.0 - 0.5 * DEGENERACY_TOL)
    np.fill_diagonal(C, 1.0)
    assert kernel_degeneracy(C)[0] == "constant"
    C = np.full((4, 4), 1.0 - 2 * DEGENERACY_TOL)
    np.fill_diagonal(C, 1.0)
    assert kernel_degeneracy(C) is None


def test_kernel_degeneracy_does_not_depend_on_blocks(points):
    K = _rbf(points, 0.02)
    assert kernel_degeneracy(K, block_rows=1) == kernel_degeneracy(K) == kernel_degeneracy(K, block_rows=7)


def test_warn_if_degenerate_kernel(points):
    with pytest.warns(DegenerateKernelWarning, match=r"^Est: the kernel matrix is numerically the identity: 100% of the samples.*sigma='median'"):
        assert warn_if_degenerate_kernel(_rbf(points, 1e-3), "Est")[0] == "identity"
    with pytest.warns(DegenerateKernelWarning, match="numerically constant.*too large.*identical"):
        assert warn_if_degenerate_kernel(_rbf(points, 1e6), "Est")[0] == "constant"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_degenerate_kernel(_rbf(points, 1.0), "Est") is None


def test_warn_if_one_class():
    with pytest.warns(DegenerateModelWarning, match=r"^Clf predicts the single class 1 on all 3 of its training samples \(fitted on 2 classes\)"):
        assert warn_if_one_class(np.array([1, 1, 1]), np.array([0, 1]), "Clf") is True
    with pytest.warns(DegenerateModelWarning, match="class 'b'"):
        warn_if_one_class(np.array(["b", "b"]), np.array(["a", "b"]), "Clf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_one_class(np.array([0, 1, 1]), np.array([0, 1]), "Clf") is False
        assert warn_if_one_class(np.array([1, 1]), np.array([1]), "Clf") is False  # one class fitted
        assert warn_if_one_class(np.array([], dtype=int), np.array([0, 1]), "Clf") is False


# ------------------------------------------- containers and memory layouts (one model)
def _containers(A):
    """The same data as C- and Fortran-ordered arrays, a strided view, a list and a DataFrame."""
    wide = np.repeat(A, 2, axis=1)
    return {
        "C": np.ascontiguousarray(A),
        "F": np.asfortranarray(A),
        "strided": wide[:, ::2],
        "list": A.tolist(),
        "DataFrame": pd.DataFrame(A, columns=[f"f{j}" for j in range(A.shape[1])]),
    }


def _assert_identical(a, b, where):
    if isinstance(a, BaseEstimator):
        _assert_same_fit(a, b, where)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f"{where} differs"
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b)):
            _assert_identical(u, v, f"{where}[{i}]")
    else:
        assert a == b, where


def _assert_same_fit(a, b, where="estimator"):
    names = [k for k in vars(a) if k.endswith("_") and not k.startswith("_") and k != "feature_names_in_"]
    assert names, f"{where} has no fitted attribute"
    for name in names:
        _assert_identical(getattr(a, name), getattr(b, name), f"{where}.{name}")


def _layout_cases():
    from kpm import (
        PCAL1,
        KernelPCAL1,
        KernelPCRClassifier,
        KernelPCRRegressor,
        KernelProjection,
        RelevantDimension,
    )

    return [
        KernelProjection(),
        KernelProjection(3, eigen_solver="arpack", random_state=0),
        KernelProjection(3, eigen_solver="randomized", random_state=0, whiten=True),
        KernelProjection(3, eigen_solver="nystroem", n_landmarks=20, residual=True, random_state=0),
        KernelProjection(0.9, kernel="poly", degree=2),
        PCAL1(2, random_state=0),
        PCAL1(init="random", random_state=0),
        KernelPCAL1(2, sigma="median", random_state=0),
        RelevantDimension(),
        RelevantDimension(max_components=6, eigen_solver="arpack", random_state=0),
        KernelPCRRegressor(),
        KernelPCRRegressor("cv", random_state=0),
        KernelPCRClassifier(),
        KernelPCRClassifier("cv", max_components=8, random_state=0),
    ]


def _layout_data():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((60, 4)) * np.array([3.0, 1.0, 0.5, 0.1]) + 0.3
    Xt = rng.standard_normal((9, 4))
    return X, Xt, np.sin(X[:, 0]) + 0.1 * X[:, 1], np.where(X[:, 0] + 0.5 * X[:, 1] > 0.3, "yes", "no")


def _outputs(est, Xt):
    return [getattr(est, m)(Xt) for m in ("transform", "predict", "decision_function") if hasattr(est, m)]


@pytest.mark.parametrize("est", _layout_cases(), ids=lambda e: repr(e).replace(" ", ""))
def test_memory_layout_and_container_give_identical_models(est):
    from sklearn.base import clone

    X, Xt, y_real, y_class = _layout_data()
    y = y_class if "Classifier" in type(est).__name__ else y_real
    train, test = _containers(X), _containers(Xt)
    needs_y = type(est).__name__ in ("RelevantDimension", "KernelPCRRegressor", "KernelPCRClassifier")
    fits = {}
    for form in train:
        model = clone(est)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # none of these fits is degenerate
            # (a better reference on the same kernel is no degeneracy)
            warnings.simplefilter("ignore", ReferenceModelWarning)
            model.fit(train[form], list(y) if form == "list" else y) if needs_y else model.fit(train[form])
        fits[form] = model
    ref = fits["C"]
    ref_out = _outputs(ref, test["C"])
    for form, model in fits.items():
        _assert_same_fit(ref, model, f"{form}-fitted {type(est).__name__}")
        for o_ref, o in zip(ref_out, _outputs(model, test[form])):
            _assert_identical(o_ref, o, f"output of the {form}-fitted model")


@pytest.mark.parametrize("est_name", ["KernelProjection", "RelevantDimension", "KernelPCRRegressor"])
def test_precomputed_kernel_layouts_give_identical_models(est_name):
    import kpm

    X, Xt, y, _ = _layout_data()
    k = make_kernel("rbf", sigma=1.5)
    K, Kt = k(X), k(Xt, X)
    Kt_forms = _containers(Kt)
    fits = {}
    for form, Kf in _containers(K).items():
        model = getattr(kpm, est_name)(kernel="precomputed")
        fits[form] = model.fit(Kf) if est_name == "KernelProjection" else model.fit(Kf, y)
    for form, model in fits.items():
        _assert_same_fit(fits["C"], model, f"{form}-fitted {est_name}")
        for o_ref, o in zip(_outputs(fits["C"], Kt_forms["C"]), _outputs(model, Kt_forms[form])):
            _assert_identical(o_ref, o, f"output of the {form}-fitted model")


def test_functions_give_identical_results_for_every_container():
    from kpm.kernels import median_sigma, pairwise_kernel
    from kpm.decomposition.pca_l1 import l1_dispersion, pca_l1_component
    from kpm.relevance.dimension import relevant_dimension_from_contributions, select_kernel

    X, Xt, y, _ = _layout_data()
    forms = _containers(X)
    w = np.array([0.5, -1.0, 2.0, 0.25])
    results = {}
    for form, A in forms.items():
        results[form] = [
            pairwise_kernel(A, _containers(Xt)[form], kernel="rbf", sigma=2.0),
            pairwise_kernel(A, kernel="poly", degree=2),
            median_sigma(A),
            list(pca_l1_component(A, init="random", random_state=0)),
            l1_dispersion(A, list(w)),
            [s.neg_log_likelihood for s in select_kernel([{"sigma": 0.5}, {"sigma": 2.0}], A, y)],
        ]
    s = np.random.default_rng(0).standard_normal(20)
    assert np.array_equal(relevant_dimension_from_contributions(s.tolist())[1], relevant_dimension_from_contributions(s)[1])
    for form, res in results.items():
        _assert_identical(results["C"], res, f"{form} input")


def test_check_random_state_names_the_parameter():
    from kpm.validation import check_random_state

    assert isinstance(check_random_state(3), np.random.RandomState)
    for bad in (-1, "x", 2.5):
        with pytest.raises(ValueError, match="random_state must be None, an integer"):
            check_random_state(bad)


def test_kernel_degeneracy_unit_diagonal_with_negative_values():
    # a unit diagonal with negative entries takes the |value| path: isolated samples are those
    # whose every other |value| is below the tolerance, whatever the sign
    K = np.eye(6)
    K[0, 1] = K[1, 0] = -0.5  # two samples related (anti-parallel-ish), four isolated
    K[2, 3] = K[3, 2] = -1e-12
    kind, share = kernel_degeneracy(K)
    assert kind == "identity" and share == pytest.approx(4 / 6)
    K[2:, 2:] = 0.3
    np.fill_diagonal(K, 1.0)
    assert kernel_degeneracy(K) is None


def test_kernel_degeneracy_rbf_isolated_share_matches_the_definition():
    # the boolean fast path for unit, non-negative matrices agrees with the definition
    X = np.r_[np.zeros((3, 2)), 100.0 * np.arange(1, 8)[:, None] * np.ones((1, 2))]
    K = make_kernel("rbf", gamma=1.0)(X)
    off = K - np.diag(np.diag(K))
    expected = float(np.mean(off.max(axis=1) <= DEGENERACY_TOL))
    assert expected == pytest.approx(7 / 10)
    assert kernel_degeneracy(K) == ("identity", expected)


def test_kernel_degeneracy_diagonal_within_eps_of_one_is_read_as_unit():
    # an RBF training matrix by the norm expansion has a diagonal 1 to a few eps: the diagnosis
    # is the one of the exactly normalised matrix, for the identity and the normal case
    eps = np.finfo(float).eps
    for K in (np.eye(8), _rbf(np.random.default_rng(0).normal(size=(8, 2)), 1.0)):
        near = K.copy()
        np.fill_diagonal(near, 1.0 - 4 * eps * np.arange(8) / 7)
        assert kernel_degeneracy(near) == kernel_degeneracy(K)


def test_warn_if_degenerate_counts_matches_the_model_check():
    from kpm.exceptions import DegenerateModelWarning
    from kpm.validation import warn_if_degenerate_counts, warn_if_degenerate_model

    classes = np.array(["a", "b", "c"])
    y = np.array(["a"] * 6 + ["b"] * 3 + ["c"])
    cases = [np.array(["a"] * 10),  # one class predicted
             np.array(["b"] * 6 + ["a"] * 3 + ["c"]),  # 1 of 10 right: below the majority share 0.6
             np.array(["a"] * 6 + ["b"] * 2 + ["c"] * 2)]  # 8 of 10 right: fine
    for pred in cases:
        with warnings.catch_warnings(record=True) as from_model:
            warnings.simplefilter("always")
            expected = warn_if_degenerate_model(pred, y, classes, "M")
        counts = [np.sum(pred == c) for c in classes]
        with warnings.catch_warnings(record=True) as from_counts:
            warnings.simplefilter("always")
            got = warn_if_degenerate_counts(counts, int(np.sum(pred == y)), [np.sum(y == c) for c in classes],
                                            classes, "M")
        assert got == expected
        assert [str(w.message) for w in from_counts] == [str(w.message) for w in from_model]
        assert all(issubclass(w.category, DegenerateModelWarning) for w in from_counts)


# ------------------------------------------------------------ declared constraints
def test_check_param_names_every_accepted_form():
    from kpm.validation import Integer, Options, check_param

    constraints = [Options("auto", "dense"), Integer(1), None]
    assert check_param("dense", "p", constraints) == "dense"
    assert check_param(np.int64(3), "p", constraints) == 3 and isinstance(check_param(np.int64(3), "p", constraints), int)
    assert check_param(None, "p", constraints) is None
    with pytest.raises(ValueError, match=r"p must be one of \('auto', 'dense'\), an integer >= 1 or None, got 'x'"):
        check_param("x", "p", constraints)
    # an integer of the right type but out of range: the range is named, not the whole list
    with pytest.raises(ValueError, match="p must be >= 1, got 0"):
        check_param(0, "p", constraints)
    with pytest.raises(ValueError, match="got True"):
        check_param(True, "p", constraints)


def test_real_constraint_bounds_and_finiteness():
    from kpm.validation import Real, check_param

    c = [Real(0, 1, "neither")]
    assert check_param(0.5, "t", c) == 0.5
    for bad, msg in ((0.0, "t must be > 0, got 0.0"), (1.0, "t must be < 1, got 1.0"),
                     (float("nan"), "t must be finite"), ("0.5", r"t must be a real number in \(0, 1\)")):
        with pytest.raises(ValueError, match=msg):
            check_param(bad, "t", c)


def test_validate_params_reads_the_class_constraints():
    from kpm.validation import Boolean, IntegerGrid, Options, PositiveGrid, validate_params

    class Est:
        _parameter_constraints = {"flag": [Boolean()], "grid": [IntegerGrid()], "C": [PositiveGrid(), None],
                                  "mode": [Options("a", "b")]}

        def __init__(self, **kw):
            self.__dict__.update(kw)

    out = validate_params(Est(flag=np.bool_(True), grid=[3, 1, 3], C=[10, 0.1], mode="b"))
    assert out["flag"] is True and out["mode"] == "b"
    np.testing.assert_array_equal(out["grid"], [1, 3])
    np.testing.assert_array_equal(out["C"], [0.1, 10.0])
    with pytest.raises(ValueError, match="grid must be a non-empty list of integers >= 1, got"):
        validate_params(Est(flag=True, grid=[0, 2], C=None, mode="a"))
    with pytest.raises(ValueError, match="C must be > 0 and finite, got -1"):
        validate_params(Est(flag=True, grid=[2], C=[1, -1], mode="a"))
    with pytest.raises(ValueError, match="flag must be True or False, got 1"):
        validate_params(Est(flag=1, grid=[2], C=None, mode="a"))


# ------------------------------------------------------------------ sample weights
def test_check_sample_weight_accepts_and_converts():
    from kpm.validation import check_sample_weight

    w = check_sample_weight([1, 0, 2], 3)
    assert w.dtype == np.float64 and w.tolist() == [1.0, 0.0, 2.0]
    assert check_sample_weight(None, 4).tolist() == [1.0] * 4
    assert check_sample_weight(2.5, 2).tolist() == [2.5, 2.5]
    assert check_sample_weight(np.array([True, False]), 2).tolist() == [1.0, 0.0]
    assert check_sample_weight(np.array([3, 4], dtype=np.int32), 2).dtype == np.float64


@pytest.mark.parametrize("w, match", [
    (np.ones(5), r"^Est: sample_weight must have shape \(30,\) for 30 samples .*got shape \(5,\)$"),
    (np.ones((30, 1)), r"must have shape \(30,\).*got shape \(30, 1\)"),
    (-np.ones(30), r"^Est: sample_weight must be >= 0 \(non-negative.*got -1\.0$"),
    (np.r_[np.nan, np.ones(29)], "^Est: sample_weight contains NaN or infinite values$"),
    (np.r_[np.inf, np.ones(29)], "NaN or infinite"),
    (np.zeros(30), "^Est: sample_weight must have a positive sum: all weights are zero$"),
    (np.full(30, 1e308), "sums to more than the largest float"),
    (np.array(["a"] * 30), "^Est: sample_weight must be numbers, got an array of dtype <U1$"),
    (np.ones(30, dtype=complex), "must be numbers"),
])
def test_check_sample_weight_rejects(w, match):
    from kpm.validation import check_sample_weight

    with pytest.raises(ValueError, match=match):
        check_sample_weight(w, 30, who="Est")


def test_check_sample_weight_without_a_name():
    from kpm.validation import check_sample_weight

    with pytest.raises(ValueError, match="^sample_weight must have a positive sum"):
        check_sample_weight(np.zeros(3), 3)


def test_kernel_degeneracy_scale_of_the_self_similarities():
    from kpm.spectral import RANK_RTOL
    from kpm.validation import DIAGONAL_RTOL

    assert DIAGONAL_RTOL == RANK_RTOL  # the samples below it are below the rank cut
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (100, 2))
    K = make_kernel("poly", degree=50, X=X)(X)
    kind, share = kernel_degeneracy(K)
    d = np.diag(K)
    assert kind == "scale" and share == np.mean(d <= 1e-10 * d.max()) and share > 0.1
    assert kernel_degeneracy(make_kernel("poly", degree=3, X=X)(X)) is None
    with pytest.warns(DegenerateKernelWarning, match="orders of magnitude"):
        warn_if_degenerate_kernel(K, "here")


def test_class_labels_of_mixed_types_are_a_clear_error():
    from kpm.validation import one_vs_rest

    y = np.array(["a", 1, 0, 1, 0], dtype=object)  # a string among integer labels
    with pytest.raises(ValueError, match=r"mixes labels of types that cannot be compared \(int, str\)"):
        one_vs_rest(y, "Estimator")


def test_self_similarity_excess_is_the_gap_to_the_nearest_neighbour():
    from kpm.validation import self_similarity_excess

    # a kernel matrix 0.2 off the diagonal and 1 on it: every point exceeds its nearest
    # neighbour (0.2) by 0.8; a point with a copy (rows 3 and 4) by nothing
    K = np.full((5, 5), 0.2)
    np.fill_diagonal(K, 1.0)
    K[0, 1] = K[1, 0] = 0.5
    K[3, 4] = K[4, 3] = 1.0
    np.testing.assert_allclose(self_similarity_excess(K, block_rows=2), [0.5, 0.5, 0.8, 0.0, 0.0])
    np.testing.assert_array_equal(self_similarity_excess(np.ones((1, 1))), [0.0])
