import numpy as np
import pytest
from sklearn.metrics.pairwise import pairwise_kernels

import kpm
from kpm.kernels import KernelMemoryError, make_kernel, median_sigma, pairwise_kernel

rng = np.random.default_rng(0)
X = rng.standard_normal((37, 4))
Y = rng.standard_normal((11, 4))


def test_rbf_three_conventions_agree():
    sigma = 1.3
    K1 = make_kernel("rbf", sigma=sigma)(X, Y)
    K2 = make_kernel("rbf", gamma=1 / (2 * sigma**2))(X, Y)
    K3 = make_kernel("rbf", c=2 * sigma**2)(X, Y)
    ref = np.exp(-((X[:, None, :] - Y[None]) ** 2).sum(-1) / (2 * sigma**2))
    for K in (K1, K2, K3):
        np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-14)
    assert make_kernel("rbf", sigma=sigma).sigma == pytest.approx(sigma)


@pytest.mark.parametrize(
    "name, ours, theirs",
    [
        ("linear", {}, {}),
        ("poly", dict(degree=2, coef0=0.5, gamma=0.7), dict(degree=2, coef0=0.5, gamma=0.7)),
        ("sigmoid", dict(gamma=0.2, coef0=-0.1), dict(gamma=0.2, coef0=-0.1)),
        ("rbf", dict(gamma=0.3), dict(gamma=0.3)),
    ],
)
def test_matches_sklearn(name, ours, theirs):
    np.testing.assert_allclose(make_kernel(name, **ours)(X, Y), pairwise_kernels(X, Y, metric=name, **theirs), rtol=1e-10)


def test_imq():
    K = make_kernel("imq", c=0.5)(X, Y)
    ref = 1 / np.sqrt(((X[:, None, :] - Y[None]) ** 2).sum(-1) + 0.25)
    np.testing.assert_allclose(K, ref, rtol=1e-12)
    np.testing.assert_allclose(make_kernel("imq", c=0.5).diag(X), np.full(len(X), 2.0))


def test_callable_and_diag():
    k = make_kernel(lambda A, B: (A @ B.T + 1) ** 2)
    np.testing.assert_allclose(k(X, Y), (X @ Y.T + 1) ** 2)
    np.testing.assert_allclose(k.diag(X), np.diag(k(X)))
    for name in ("rbf", "poly", "sigmoid", "linear"):
        kk = make_kernel(name, gamma=0.4)
        np.testing.assert_allclose(kk.diag(X), np.diag(kk(X)), rtol=1e-12)


def test_blocks_and_matvec_equal_full():
    k = make_kernel("rbf", sigma=2.0)
    full = k(X, Y)
    parts = np.vstack([blk for _, blk in k.blocks(X, Y, block_rows=5)])
    np.testing.assert_allclose(parts, full)
    v = rng.standard_normal((len(Y), 3))
    with kpm.config_context(block_bytes=8 * 2 * len(Y) * 3):  # 3 rows per block
        np.testing.assert_allclose(k.matvec(X, v, Y), full @ v, rtol=1e-12)


def test_memory_budget_refuses_large_matrix():
    k = make_kernel("rbf", gamma=1.0)
    with kpm.config_context(max_kernel_bytes=8 * 37 * 10):
        with pytest.raises(KernelMemoryError, match="budget"):
            k(X, X)
        # streaming still works under the budget
        assert k.matvec(X, np.ones(len(X))).shape == (len(X),)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(kernel="nope"), "unknown kernel"),
        (dict(kernel="rbf", sigma=-1.0), "sigma must be > 0"),
        (dict(kernel="rbf", gamma=0.0), "gamma must be > 0"),
        (dict(kernel="rbf", c=np.nan), "must be finite"),
        (dict(kernel="rbf", sigma=1.0, gamma=1.0), "only one RBF width"),
        (dict(kernel="poly", degree=2.5), "integer"),
        (dict(kernel="imq", c=-2.0), "c must be > 0"),
        (dict(kernel="linear", sigma=1.0), "sigma is an RBF width"),
        (dict(kernel="rbf", kernel_params={"foo": 1}), "unknown parameters"),
        (dict(kernel="rbf", sigma="wide"), "sigma must be a real number > 0 or 'median', got 'wide'"),
        (dict(kernel="rbf", gamma="auto"), "gamma must be a real number > 0 or 'scale', got 'auto'"),
        (dict(kernel=3), "kernel must be a string, a callable or a kpm Kernel, got 3"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_kernel(X=X, **kwargs)


def test_feature_mismatch_and_precomputed():
    with pytest.raises(ValueError, match="features"):
        make_kernel("rbf", gamma=1.0)(X, np.ones((3, 5)))
    with pytest.raises(ValueError, match="precomputed"):
        make_kernel("precomputed").diag(X)


def test_defaults_and_median():
    k = make_kernel("rbf", X=X)
    assert k.gamma == pytest.approx(1 / (X.shape[1] * X.var()))
    s = median_sigma(X)
    assert make_kernel("rbf", sigma="median", X=X).sigma == pytest.approx(s)
    assert pairwise_kernel(X, kernel="rbf", sigma=s).shape == (37, 37)


# ------------------------------------------------ robustness (regression tests)
def test_widths_that_float64_cannot_represent_are_errors():
    # were OverflowError / ZeroDivisionError, and gamma='scale' fell back to 1
    with pytest.raises(ValueError, match="sigma=1e\\+160 is outside the range of kernel widths"):
        make_kernel("rbf", sigma=1e160)
    with pytest.raises(ValueError, match="sigma=1e-170 is outside the range"):
        make_kernel("rbf", sigma=1e-170)
    with pytest.raises(ValueError, match="gamma='scale' gives no RBF width"):
        make_kernel("rbf", X=X * 1e-160)
    with pytest.raises(ValueError, match="sigma='median'.*outside the range"):
        make_kernel("rbf", sigma="median", X=X * 1e-160)
    # identical samples: every width gives the same constant matrix (as in scikit-learn)
    assert make_kernel("rbf", X=np.ones((4, 2))).gamma == 1.0


def test_median_sigma_at_any_magnitude_and_bad_input():
    s = median_sigma(X)
    for scale in (1e160, 1e-160, 1e300):
        assert median_sigma(X * scale) == pytest.approx(s * scale, rel=1e-12)  # was NaN
    for bad in (0, 1, -5, 2.5, True):
        with pytest.raises(ValueError, match="max_samples must be"):
            median_sigma(X, max_samples=bad)
    with pytest.raises(ValueError, match="median pairwise distance is 0"):
        median_sigma(np.ones((6, 3)))  # was ~1e-8
    with pytest.raises(ValueError, match=r"minimum of 2"):
        median_sigma(X[:1])
    with pytest.raises(ValueError, match="random_state must be"):
        median_sigma(X, max_samples=5, random_state="seed")


@pytest.mark.parametrize("name", ["rbf", "linear", "poly", "imq", "sigmoid"])
def test_kernel_values_are_finite_or_a_clear_error(name, capfd):
    k = make_kernel(name, gamma=1.0) if name != "linear" and name != "imq" else make_kernel(name)
    with pytest.raises(ValueError, match="NaN"):
        k(np.array([[np.nan, 1.0]]))
    big = X * 1e200
    try:
        K = k(big)
    except ValueError as exc:
        assert "overflowed float64" in str(exc)
    else:
        assert np.all(np.isfinite(K))  # rbf, imq, sigmoid saturate; they never give NaN
    for _, block in k.blocks(X, Y):
        assert np.all(np.isfinite(block))
    assert capfd.readouterr().err == ""


def test_pairwise_kernel_checks_its_output():
    with pytest.raises(ValueError, match="overflowed float64"):
        pairwise_kernel(X * 1e200, kernel="linear")
    with pytest.raises(ValueError, match="overflowed float64"):
        pairwise_kernel(X * 1e100, kernel="poly", degree=3)
    with pytest.raises(ValueError, match="NaN"):
        pairwise_kernel(np.array([[np.nan]]))
    np.testing.assert_array_equal(pairwise_kernel(X.tolist(), kernel="linear"), X @ X.T)


def test_set_config_accepts_numpy_integers_and_rejects_the_rest():
    before = kpm.get_config()
    try:
        kpm.set_config(max_kernel_bytes=np.int64(2**33), block_bytes=np.int32(2**20))
        assert kpm.get_config() == {"max_kernel_bytes": 2**33, "block_bytes": 2**20}
        for bad in (True, 1e9, 0, -1, "8"):
            with pytest.raises(ValueError, match="max_kernel_bytes"):
                kpm.set_config(max_kernel_bytes=bad)
        with pytest.raises(ValueError, match="block_bytes"):
            kpm.set_config(max_kernel_bytes=10**9, block_bytes=0)
        assert kpm.get_config()["max_kernel_bytes"] == 2**33  # nothing set by a failed call
    finally:
        kpm.set_config(**before)


def test_config_from_environment_is_validated(monkeypatch):
    from kpm.config import _from_env

    monkeypatch.setenv("KPM_BLOCK_BYTES", "4096")
    assert _from_env("KPM_BLOCK_BYTES", 1) == 4096
    for bad in ("abc", "1.5", "-3", "0"):
        monkeypatch.setenv("KPM_BLOCK_BYTES", bad)
        with pytest.raises(ValueError, match="KPM_BLOCK_BYTES"):
            _from_env("KPM_BLOCK_BYTES", 1)


def test_kernel_memory_error_shows_the_sizes():
    k = make_kernel("rbf", gamma=1.0)
    with kpm.config_context(max_kernel_bytes=100):  # was "0.00 GiB over 0.00 GiB"
        with pytest.raises(KernelMemoryError, match=r"needs 10.7 KiB, over the budget of 100 bytes"):
            k(X)
    with kpm.config_context(max_kernel_bytes=3 * 2**30):
        with pytest.raises(KernelMemoryError, match=r"needs 7.45 GiB, over the budget of 3 GiB"):
            k(np.zeros((10**5, 1)), np.zeros((10**4, 1)))
    # the estimator-level ways out are named
    with kpm.config_context(max_kernel_bytes=100):
        with pytest.raises(KernelMemoryError, match=r"KernelProjection\(eigen_solver='matrix-free'\) for "
                                                    r"kernel PCA, NystroemKPM for the Kernel Projection Machine"):
            k(X)
    with kpm.config_context(block_bytes=8):
        with pytest.raises(KernelMemoryError, match=r"block_bytes=8 \(8 bytes\) is too small"):
            k.block_rows(10)


def test_kernel_helpers_validate_their_arguments():
    k = make_kernel("rbf", gamma=1.0)
    with pytest.raises(ValueError, match="block_rows must be >= 1"):
        list(k.blocks(X, block_rows=0))
    with pytest.raises(ValueError, match=r"one row per column of the kernel matrix \(37\)"):
        k.matvec(X, np.ones(5))
    with pytest.raises(ValueError, match="kernel_params must be a dict"):
        make_kernel("rbf", kernel_params=[("gamma", 1.0)])



@pytest.mark.parametrize("name", ["rbf", "imq"])
@pytest.mark.parametrize("offset", [1e6, 1e8, -3e7])
def test_distance_kernels_far_from_the_origin(name, offset):
    # the norm expansion |x|^2 + |y|^2 - 2<x,y> cancels for points far from the origin
    # compared with their distances: k(x, x) of an RBF kernel with sigma=1 came out as
    # exp(-1) at 1e8, and the whole matrix was wrong; distances do not depend on the offset
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 3))
    kern = make_kernel(name, sigma=1.0) if name == "rbf" else make_kernel(name, c=1.0)
    K = kern(X + offset)
    assert np.all(np.diag(K) == 1.0)
    # X + offset itself rounds the data to about 1e-8 at 1e8
    np.testing.assert_allclose(K, kern(X), rtol=0, atol=1e-6)
    np.testing.assert_allclose(kern(X[:4] + offset, X + offset), K[:4], rtol=0, atol=1e-6)


def test_rbf_kernel_of_huge_magnitudes_is_the_identity():
    # data of magnitude 1e150 with sigma=1: every distance is huge, the matrix is the
    # identity; it was the zero matrix (k(x, x) lost in the cancellation of 1e300 terms)
    X = np.random.default_rng(1).normal(size=(20, 3)) * 1e150
    np.testing.assert_array_equal(make_kernel("rbf", sigma=1.0)(X), np.eye(20))
