"""The contract every kernel family keeps, run on each of them with the same tests (as a
shared kernel test case does in GPyTorch): symmetry, positive semi-definiteness on random
data (where the family is PSD), block evaluation equal to the full matrix, the diagonal,
the memory budget, input and overflow errors, equality, hashing and pickling.

A new family needs one entry in ``CASES`` (representative parameters and data); the first
test fails until it has one.
"""

import pickle
from dataclasses import dataclass, fields

import numpy as np
import pytest

import kpm
from helpers import random_dna
from kpm.kernels import (
    CallableKernel,
    Kernel,
    KernelMemoryError,
    PrecomputedKernel,
    kernel_class,
    kernel_names,
    make_kernel,
)
from kpm.kernels.weighted_degree import WeightedDegreeKernel

RNG = np.random.default_rng(0)
X_NUM = RNG.standard_normal((41, 5))
Y_NUM = RNG.standard_normal((13, 5))
X_DNA, Y_DNA = random_dna(41, 17, seed=1), random_dna(13, 17, seed=2)


def _poly2(A, B, offset=1.0):
    """A user's kernel function (module level, so that it pickles)."""
    return (A @ B.T + offset) ** 2


@dataclass
class Case:
    kernel: Kernel  # representative parameters
    other: Kernel | None  # the same family with other parameters (must compare unequal)
    X: np.ndarray
    Y: np.ndarray
    psd: bool  # positive semi-definite on any data (sigmoid: not in general)
    bad_input: object  # an input the family's check_input rejects ...
    bad_match: str  # ... with this message
    overflow: np.ndarray | None = None  # an input whose values overflow float64, if any


CASES = {
    "rbf": Case(make_kernel("rbf", sigma=1.7), make_kernel("rbf", sigma=0.3), X_NUM, Y_NUM, True,
                [[np.nan, 1.0, 0, 0, 0]], "NaN"),
    "poly": Case(make_kernel("poly", gamma=0.5, degree=3, coef0=0.7), make_kernel("poly", degree=2),
                 X_NUM, Y_NUM, True, [["a", 1, 2, 3, 4]], "convert|numeric", X_NUM * 1e110),
    "sigmoid": Case(make_kernel("sigmoid", gamma=0.4, coef0=0.5), make_kernel("sigmoid", gamma=0.1),
                    X_NUM, Y_NUM, False, [[np.inf, 1.0, 0, 0, 0]], "infinity|infinite"),
    "imq": Case(make_kernel("imq", c=0.8), make_kernel("imq", c=2.0), X_NUM, Y_NUM, True,
                np.ones((0, 5)), "minimum of 1"),
    "linear": Case(make_kernel("linear"), None, X_NUM, Y_NUM, True, np.array([[1j, 0, 0, 0, 0]]), "omplex",
                   X_NUM * 1e160),
    "weighted_degree": Case(WeightedDegreeKernel(5), WeightedDegreeKernel(5, normalize=True),
                            X_DNA, Y_DNA, True, np.ones(4), "must contain strings"),
    "callable": Case(make_kernel(_poly2), None, X_NUM, Y_NUM, True, None, "",
                     X_NUM * 1e160),
}


def test_every_registered_family_has_a_contract_case():
    """The registry and the cases agree, both ways ('precomputed' has its own test)."""
    families = set(kernel_names()) | {"callable"}
    assert families - set(CASES) == {"precomputed"}
    assert set(CASES) <= families
    for name, case in CASES.items():
        assert case.kernel.name == name and kernel_class(name) is type(case.kernel)


@pytest.fixture(params=list(CASES), ids=list(CASES))
def case(request):
    return CASES[request.param]


def test_symmetric_and_positive_semi_definite(case):
    K = case.kernel(case.X)
    assert K.shape == (len(case.X), len(case.X)) and K.dtype == np.float64
    np.testing.assert_allclose(K, K.T, rtol=1e-13, atol=1e-13 * np.abs(K).max())
    w = np.linalg.eigvalsh((K + K.T) / 2)
    if case.psd:
        assert w.min() >= -1e-10 * w.max()
    else:  # the family is marked not PSD: this data shows it
        assert w.min() < -1e-3 * w.max()


def test_cross_matrix_is_the_transpose(case):
    np.testing.assert_allclose(case.kernel(case.X, case.Y), case.kernel(case.Y, case.X).T, rtol=1e-13,
                               atol=1e-300)


def test_block_evaluation_equals_the_full_matrix(case):
    k, X, Y = case.kernel, case.X, case.Y
    full = k(X, Y)
    parts = list(k.blocks(X, Y, block_rows=4))
    assert [rows.start for rows, _ in parts] == list(range(0, len(X), 4))
    np.testing.assert_allclose(np.vstack([b for _, b in parts]), full, rtol=1e-13, atol=1e-300)
    V = RNG.standard_normal((len(Y), 3))
    with kpm.config_context(block_bytes=8 * 2 * len(Y) * 3):  # 3 rows per block
        assert k.block_rows(len(Y)) == 3
        np.testing.assert_allclose(k(X, Y), full, rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(k.matvec(X, V, Y), full @ V, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(k.matvec(X, V[:, 0], Y), full @ V[:, 0], rtol=1e-12, atol=1e-12)
    # the public block evaluation on validated inputs, with and without squared norms
    Xv, Yv = k.prepare(X[5:9], Y)
    np.testing.assert_allclose(k.block(Xv, Yv), full[5:9], rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(k.block(Xv, Yv, k.sq_norms(Xv), k.sq_norms(Yv)), full[5:9], rtol=1e-13,
                               atol=1e-300)
    assert (k.sq_norms(Xv) is not None) == k.needs_sq_norms


def test_diagonal(case):
    k, X = case.kernel, case.X
    d = k.diag(X)
    np.testing.assert_allclose(d, np.diag(k(X)), rtol=1e-13, atol=1e-300)
    if k.is_stationary:
        np.testing.assert_array_equal(d, np.full(len(X), d[0]))


def test_memory_budget(case):
    k, X = case.kernel, case.X
    with kpm.config_context(max_kernel_bytes=8 * len(X) * len(X) - 1):
        with pytest.raises(KernelMemoryError, match="over the budget"):
            k(X)
        v = RNG.standard_normal(len(X))
        with kpm.config_context(max_kernel_bytes=2**40):
            expected = k(X) @ v
        np.testing.assert_allclose(k.matvec(X, v), expected, rtol=1e-12, atol=1e-12)


def test_bad_input_and_overflow_are_clear_errors(case):
    k = case.kernel
    if case.bad_input is not None:
        with pytest.raises(ValueError, match=case.bad_match):
            k(case.bad_input)
        with pytest.raises(ValueError, match=case.bad_match):
            list(k.blocks(case.X, case.bad_input))
    if case.overflow is not None:
        for run in (lambda: k(case.overflow), lambda: k.diag(case.overflow),
                    lambda: list(k.blocks(case.overflow))):
            with pytest.raises(ValueError, match="overflowed float64|NaN or infinite"):
                run()
    with pytest.raises(ValueError, match="one row per column"):
        k.matvec(case.X, np.ones(len(case.X) + 1))


def test_equality_hashing_and_pickling(case):
    k = case.kernel
    again = pickle.loads(pickle.dumps(k))
    assert again == k and hash(again) == hash(k) and type(again) is type(k)
    assert repr(again) == repr(k)
    np.testing.assert_array_equal(again(case.X, case.Y), k(case.X, case.Y))
    assert len({k, again}) == 1
    if case.other is not None:
        assert case.other != k and type(case.other) is type(k)
    if k.by_name:  # make_kernel by name and aliases, and Kernel(name, **parameters)
        params = {f.name: getattr(k, f.name) for f in fields(k)}
        assert Kernel(k.name, **params) == k and type(Kernel(k.name, **params)) is type(k)
        for alias in (k.name, *type(k).aliases):
            assert kernel_class(alias.upper()) is type(k)
    with pytest.raises(Exception):  # immutable
        k.gamma = 2.0


def test_make_kernel_returns_kernels_unchanged_and_builds_the_same_families(case):
    assert make_kernel(case.kernel) is case.kernel
    assert isinstance(case.kernel, Kernel)


def test_the_precomputed_kernel_contract():
    k = make_kernel("precomputed")
    assert isinstance(k, PrecomputedKernel) and k.is_precomputed
    K = X_NUM @ X_NUM.T
    np.testing.assert_array_equal(k(K.tolist()), K)
    with pytest.raises(ValueError, match="NaN"):
        k(np.array([[np.nan]]))
    for run in (lambda: k.diag(X_NUM), lambda: list(k.blocks(X_NUM)), lambda: k.matvec(X_NUM, np.ones(41))):
        with pytest.raises(ValueError, match="precomputed"):
            run()
    assert pickle.loads(pickle.dumps(k)) == k == Kernel("precomputed")


def test_a_kernel_added_by_one_class_gets_the_whole_contract():
    """What the package docstring promises: one registered class is a working kernel,
    by name in make_kernel and in every estimator."""
    from kpm.kernels import base

    @dataclass(frozen=True, repr=False)
    class Laplacian(Kernel):
        name = "laplacian_test"
        gamma: float = 0.5

        @classmethod
        def from_params(cls, *, X=None, sigma=None, gamma=None, c=None, degree=3, coef0=1.0, **extra):
            cls.reject_extra(extra)
            return cls(gamma=0.5 if gamma is None else gamma)

        def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
            return np.exp(-self.gamma * np.abs(X[:, None, :] - Y[None, :, :]).sum(-1))

    base.register_kernel(Laplacian)
    try:
        k = make_kernel("laplacian_test", gamma=0.3)
        assert k == Laplacian(0.3) and k.diag(X_NUM).tolist() == [1.0] * len(X_NUM)
        ref = np.exp(-0.3 * np.abs(X_NUM[:, None] - Y_NUM[None]).sum(-1))
        np.testing.assert_allclose(k(X_NUM, Y_NUM), ref, rtol=1e-14)
        with pytest.raises(ValueError, match="NaN"):
            k([[np.nan] * 5])
        with pytest.raises(ValueError, match=r"unknown parameters \['foo'\]"):
            make_kernel("laplacian_test", kernel_params={"foo": 1})
        Z = kpm.KernelProjection(3, kernel="laplacian_test", gamma=0.3).fit(X_NUM).transform(Y_NUM)
        ref_Z = kpm.KernelProjection(3, kernel="precomputed").fit(k(X_NUM)).transform(k(Y_NUM, X_NUM))
        np.testing.assert_allclose(Z, ref_Z, rtol=1e-10, atol=1e-12)
        with pytest.raises(ValueError, match="taken"):
            base.register_kernel(type("Other", (Laplacian,), {"name": "laplacian_test"}))
    finally:
        for key in [key for key, cls in base._REGISTRY.items() if cls is Laplacian]:
            del base._REGISTRY[key]
        base._NAMES.remove("laplacian_test")
    assert kernel_class("laplacian_test") is None


def test_callable_kernels_that_check_their_own_input():
    """A user's function with a ``check_input`` method takes raw input, like a string family."""

    class Lengths:
        def check_input(self, X):
            return np.asarray(X, dtype=str)

        def __call__(self, A, B):
            a = np.char.str_len(A).astype(float)
            b = np.char.str_len(B).astype(float)
            return np.minimum(a[:, None], b[None, :])

    k = make_kernel(Lengths())
    assert isinstance(k, CallableKernel) and k.raw_input and k.user_defined
    np.testing.assert_array_equal(k(["a", "abc"]), [[1, 1], [1, 3]])
    assert not make_kernel(_poly2).raw_input
