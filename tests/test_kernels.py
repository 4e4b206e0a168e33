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
