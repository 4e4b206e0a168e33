import numpy as np
import pytest
from scipy.optimize import check_grad

from kpm import config_context
from kpm.exceptions import KernelMemoryError
from kpm.kernels import make_kernel
from kpm.preimage.solvers import _value_grad, gaussian_fixed_point, gradient_preimage, preimage_objective
from kpm.preimage.learned import LEARNED_ALPHA_GRID, LearnedPreimage, fit_learned_preimage
from kpm.preimage.solvers import mds_preimage, solve_preimages


@pytest.fixture
def problem():
    """Mixed-sign targets (denoising-like: mostly positive, summing to 1)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    C = rng.random((30, 120)) ** 4
    C /= C.sum(axis=1, keepdims=True)
    C[:, :15] -= 0.01
    z0 = X[rng.choice(120, 30)] + 0.3 * rng.normal(size=(30, 4))
    return X, C, z0


def test_fixed_point_matches_kernel_objective_and_stationarity(problem):
    X, C, z0 = problem
    gamma = 0.2
    Z, info = gaussian_fixed_point(C, X, gamma, z0, tol=1e-10, max_iter=2000)
    assert info["converged"].all()
    kern = make_kernel("rbf", gamma=gamma)
    np.testing.assert_allclose(info["objective"], preimage_objective(Z, C, X, kern), atol=1e-12)
    # stationary point of the objective: gradient ~ 0
    _, grad = _value_grad(kern, Z, X, np.einsum("ij,ij->i", X, X), C)
    assert np.abs(grad).max() < 1e-7
    # better than the start
    assert np.all(info["objective"] <= preimage_objective(z0, C, X, kern) + 1e-12)


@pytest.mark.parametrize("safeguard", [True, False])
def test_fixed_point_objective_never_increases(problem, safeguard):
    X, C, z0 = problem
    _, info = gaussian_fixed_point(C, X, 0.2, z0, history=True, safeguard=safeguard, max_iter=300)
    H = info["history"]
    assert H.shape[0] > 3
    inc = np.diff(H, axis=0)
    assert np.nanmax(inc) <= 1e-10


def test_safeguard_rejects_increasing_steps():
    # strongly mixed signs: the plain iteration overshoots; the safeguard must hold the
    # objective monotone anyway
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    C = rng.normal(size=(40, 60))
    z0 = rng.normal(size=(40, 2))
    _, info = gaussian_fixed_point(C, X, 1.0, z0, history=True, scaled=True, max_iter=200, max_restarts=0)
    assert info["n_backtracks"].sum() > 0
    inc = np.diff(info["history"], axis=0)
    assert np.nanmax(inc) <= 1e-10


def test_gradient_and_fixed_point_agree_on_gaussian(problem):
    X, C, z0 = problem
    kern = make_kernel("rbf", gamma=0.2)
    Zf, inf_f = gaussian_fixed_point(C, X, 0.2, z0, tol=1e-10, max_iter=3000)
    Zg, inf_g = gradient_preimage(C, X, kern, z0, tol=1e-7)
    assert inf_g["converged"].all()
    np.testing.assert_allclose(Zg, Zf, atol=1e-4)
    np.testing.assert_allclose(inf_g["objective"], inf_f["objective"], atol=1e-9)


@pytest.mark.parametrize(
    "kernel",
    [
        make_kernel("rbf", gamma=0.3),
        make_kernel("poly", gamma=0.2, degree=3, coef0=1.0),
        make_kernel("sigmoid", gamma=0.1, coef0=0.5),
        make_kernel("imq", c=1.5),
        make_kernel("linear"),
    ],
)
def test_analytic_gradients(kernel, problem):
    X, C, z0 = problem
    Xs = np.einsum("ij,ij->i", X, X)
    for j in range(3):
        f = lambda v: _value_grad(kernel, v[None], X, Xs, C[j : j + 1])[0][0]  # noqa: E731
        g = lambda v: _value_grad(kernel, v[None], X, Xs, C[j : j + 1])[1][0]  # noqa: E731
        assert check_grad(f, g, z0[j]) < 1e-5 * (1 + np.abs(g(z0[j])).max())


@pytest.mark.parametrize("name", ["poly", "sigmoid", "imq", "linear"])
def test_gradient_preimage_other_kernels_decreases_objective(name, problem):
    X, C, z0 = problem
    kern = make_kernel(name, gamma=0.1) if name in ("poly", "sigmoid") else make_kernel(name)
    Z, info = gradient_preimage(C, X, kern, z0)
    start = preimage_objective(z0, C, X, kern)
    assert np.all(info["objective"] <= start + 1e-12)
    assert np.mean(info["objective"] < start - 1e-9) > 0.9
    np.testing.assert_allclose(info["objective"], preimage_objective(Z, C, X, kern), atol=1e-9)


def test_linear_kernel_preimage_is_the_expansion():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    C = rng.normal(size=(5, 20))
    Z, info = gradient_preimage(C, X, "linear", np.zeros((5, 3)))
    np.testing.assert_allclose(Z, C @ X, atol=1e-6)
    assert info["converged"].all()


def test_exact_preimage_of_a_single_point_is_found():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 3))
    c = np.zeros(10)
    c[4] = 1.0
    z, info = gaussian_fixed_point(c, X, 0.5, X[4] + 0.1)
    np.testing.assert_allclose(z, X[4], atol=1e-6)
    assert info["converged"] and info["objective"] < 1e-10


def test_restart_when_denominator_vanishes():
    X = np.array([[0.0, 0.0], [5.0, 0.0], [10.0, 0.0]])
    c = np.array([[-0.5, 0.0, 1.0]])
    z0 = np.array([[0.0, 0.1]])  # here <phi(z), Psi> < 0: must restart
    for restart in ("nearest", "best", np.array([[9.0, 0.0]])):
        Z, info = gaussian_fixed_point(c, X, 0.5, z0, restart=restart)
        assert info["n_restarts"][0] >= 1
        assert info["converged"][0]
        np.testing.assert_allclose(Z[0], [10.0, 0.0], atol=1e-3)
    # no restarts allowed: reported, never silently converged
    Z, info = gaussian_fixed_point(c, X, 0.5, z0, max_restarts=0)
    assert not info["converged"][0]


def test_far_start_does_not_underflow():
    X = np.array([[0.0], [1.0]])
    c = np.array([[0.5, 0.5]])
    z, info = gaussian_fixed_point(c, X, 1.0, np.array([[1e3]]))  # k underflows to 0
    assert info["converged"][0]
    np.testing.assert_allclose(z, [[0.5]], atol=1e-6)


def test_iteration_cap_is_reported_not_converged(problem):
    X, C, z0 = problem
    _, info = gaussian_fixed_point(C, X, 0.2, z0, max_iter=1, tol=1e-12)
    assert not info["converged"].any()
    _, info = gradient_preimage(C, X, make_kernel("rbf", gamma=0.2), z0, max_iter=1, tol=1e-12)
    assert not info["converged"].any()


def test_ctc_passed_equals_computed(problem):
    X, C, z0 = problem
    kern = make_kernel("rbf", gamma=0.2)
    ctc = np.einsum("ij,jk,ik->i", C, kern(X), C)
    _, a = gaussian_fixed_point(C, X, 0.2, z0)
    _, b = gaussian_fixed_point(C, X, 0.2, z0, ctc=ctc)
    np.testing.assert_allclose(a["objective"], b["objective"], atol=1e-12)


def test_bad_input(problem):
    X, C, z0 = problem
    with pytest.raises(ValueError, match="NaN"):
        gaussian_fixed_point(np.where(C == C[0, 0], np.nan, C), X, 0.2, z0)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        gaussian_fixed_point(C, bad, 0.2, z0)
    with pytest.raises(ValueError, match="columns"):
        gaussian_fixed_point(C[:, :-1], X, 0.2, z0)
    with pytest.raises(ValueError, match="z0 must have shape"):
        gaussian_fixed_point(C, X, 0.2, z0[:, :-1])
    with pytest.raises(ValueError, match="gamma"):
        gaussian_fixed_point(C, X, -1.0, z0)
    with pytest.raises(ValueError, match=r"restart must be one of \('nearest', 'best'\) or an array of start points, got 'random'"):
        gaussian_fixed_point(C, X, 0.2, z0, restart="random")
    with pytest.raises(ValueError, match="max_iter must be >= 1, got 0"):
        gaussian_fixed_point(C, X, 0.2, z0, max_iter=0)
    with pytest.raises(ValueError, match="max_iter must be an integer >= 1, got 2.7"):
        gradient_preimage(C, X, make_kernel("rbf", gamma=0.2), z0, max_iter=2.7)
    with pytest.raises(ValueError, match="tol must be > 0, got 0"):
        gradient_preimage(C, X, make_kernel("rbf", gamma=0.2), z0, tol=0)
    with pytest.raises(ValueError, match="max_restarts must be >= 0, got -1"):
        gaussian_fixed_point(C, X, 0.2, z0, max_restarts=-1)
    with pytest.raises(ValueError, match=r"denominator_tol must be < 1, got 1.0"):
        gaussian_fixed_point(C, X, 0.2, z0, denominator_tol=1.0)
    with pytest.raises(ValueError, match="gamma must be finite, got inf"):
        gaussian_fixed_point(C, X, np.inf, z0)
    with pytest.raises(ValueError, match="safeguard must be True or False, got 'yes'"):
        gaussian_fixed_point(C, X, 0.2, z0, safeguard="yes")
    with pytest.raises(ValueError, match="history must be True or False, got 1"):
        gradient_preimage(C, X, make_kernel("rbf", gamma=0.2), z0, history=1)
    with pytest.raises(ValueError, match="differentiable"):
        gradient_preimage(C, X, make_kernel(lambda A, B: A @ B.T), z0)


def test_preimages_do_not_depend_on_memory_layout_and_reject_complex(problem):
    X, C, z0 = problem
    kern = make_kernel("rbf", gamma=0.2)
    for f in (lambda A: gaussian_fixed_point(C, A, 0.2, z0, return_info=False),
              lambda A: gradient_preimage(C, A, kern, z0, return_info=False),
              lambda A: preimage_objective(z0, C, A, kern)):
        ref = f(X)
        np.testing.assert_array_equal(f(np.asfortranarray(X)), ref)
        np.testing.assert_array_equal(f(X.tolist()), ref)
        with pytest.raises(ValueError, match="[Cc]omplex"):
            f(X + 1j)


@pytest.mark.parametrize("k", [-60, 40])
def test_gradient_preimage_is_scale_invariant(problem, k):
    # L-BFGS runs in units of the kernel width: data scaled by 2^k (exactly) gives the
    # pre-images scaled by 2^k; in raw units it stopped far from the optimum at 2^-60
    X, C, z0 = problem
    s = 2.0**k
    Z, info = gradient_preimage(C, X, make_kernel("rbf", sigma=1.5), z0)
    Zs, info_s = gradient_preimage(C, X * s, make_kernel("rbf", sigma=1.5 * s), z0 * s)
    np.testing.assert_allclose(Zs / s, Z, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(info_s["converged"], info["converged"])


# ---------------------------------------------------------------- MDS pre-image
@pytest.mark.parametrize("name, params", [
    ("rbf", dict(gamma=0.3)), ("imq", dict(c=1.5)), ("poly", dict(degree=3, gamma=0.5, coef0=1.0)),
    ("sigmoid", dict(gamma=0.05, coef0=0.1)), ("linear", {}),
])
def test_mds_recovers_the_image_of_an_expansion_point(name, params):
    """Target phi(x_j): the feature distances are exact, so are the input distances, and
    the neighbours span the input space: the MDS pre-image is x_j."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 3))
    kern = make_kernel(name, **params)
    C = np.eye(50)[[3, 17, 40]]
    Z, info = mds_preimage(C, X, kern, n_neighbors=8)
    np.testing.assert_allclose(Z, X[[3, 17, 40]], atol=1e-6)
    np.testing.assert_allclose(info["objective"], 0.0, atol=1e-9)
    assert info["converged"].all() and not info["n_iter"].any()


def test_mds_with_the_linear_kernel_is_exact():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 3))
    C = rng.normal(size=(5, 40)) / 10
    Z = mds_preimage(C, X, "linear", n_neighbors=6, return_info=False)
    np.testing.assert_allclose(Z, C @ X, atol=1e-9)


def test_mds_neighbours_and_single_target(problem):
    X, C, _ = problem
    kern = make_kernel("rbf", gamma=0.2)
    # one neighbour: the nearest point in feature space
    Z1 = mds_preimage(C, X, kern, n_neighbors=1, return_info=False)
    D = 1.0 - 2.0 * (C @ kern(X, X))  # ||Psi - phi(x_i)||^2 up to a constant per row
    np.testing.assert_array_equal(Z1, X[np.argmin(D, axis=1)])
    # more neighbours than points: all points
    np.testing.assert_allclose(mds_preimage(C, X, kern, n_neighbors=500, return_info=False),
                               mds_preimage(C, X, kern, n_neighbors=120, return_info=False))
    z, info = mds_preimage(C[0], X, kern)
    assert z.shape == (4,) and np.ndim(info["objective"]) == 0
    np.testing.assert_allclose(z, mds_preimage(C, X, kern, return_info=False)[0])
    # the dot products, given, are those computed
    np.testing.assert_allclose(mds_preimage(C, X, kern, dots=C @ kern(X, X), return_info=False),
                               mds_preimage(C, X, kern, return_info=False), atol=1e-12)


def test_mds_bad_input(problem):
    RBF = make_kernel("rbf", gamma=0.2)
    X, C, _ = problem
    with pytest.raises(ValueError, match="the MDS pre-image converts kernel values to distances"):
        mds_preimage(C, X, lambda A, B: A @ B.T)
    with pytest.raises(ValueError, match="n_neighbors must be >= 1, got 0"):
        mds_preimage(C, X, RBF, n_neighbors=0)
    with pytest.raises(ValueError, match=r"dots must have shape \(n_targets, n_points\) = \(30, 120\)"):
        mds_preimage(C, X, RBF, dots=np.zeros((30, 5)))
    with pytest.raises(ValueError, match="coefs has 120 columns but there are 10 points"):
        mds_preimage(C, X[:10], RBF)


# ---------------------------------------------------------------- dispatcher
def test_solve_preimages_matches_the_solvers_and_blocks(problem):
    X, C, z0 = problem
    kern = make_kernel("rbf", gamma=0.2)
    Z, info = solve_preimages(C, X, kern, method="fixed-point", init=z0, max_iter=300)
    Zr, ir = gaussian_fixed_point(C, X, 0.2, z0, max_iter=300)
    np.testing.assert_array_equal(Z, Zr)
    np.testing.assert_array_equal(info.n_iter, ir["n_iter"])
    with config_context(block_bytes=8 * 4 * 120 * 7):  # targets in blocks of 7
        Zb, ib = solve_preimages(C, X, kern, method="fixed-point", init=z0, max_iter=300)
    np.testing.assert_allclose(Zb, Z, atol=1e-12)
    # without init: started from the MDS pre-images, never worse than them
    Zm, im = solve_preimages(C, X, kern, method="mds")
    Zg, ig = solve_preimages(C, X, kern, method="gradient")
    assert np.all(ig.objective <= im.objective + 1e-12)
    np.testing.assert_array_equal(im.n_iter, 0)


def test_solve_preimages_bad_input(problem):
    RBF = make_kernel("rbf", gamma=0.2)
    X, C, z0 = problem
    with pytest.raises(ValueError, match=r"method must be one of \('fixed-point', 'gradient', 'mds'\)"):
        solve_preimages(C, X, RBF, method="learned")
    with pytest.raises(ValueError, match="the fixed-point pre-image is the Gaussian kernel's iteration"):
        solve_preimages(C, X, make_kernel("poly"), method="fixed-point")
    with pytest.raises(ValueError, match="init is the start of the iterative pre-images"):
        solve_preimages(C, X, RBF, method="mds", init=z0)
    with pytest.raises(ValueError, match=r"init must have shape \(n_targets, n_features\) = \(30, 4\)"):
        solve_preimages(C, X, RBF, method="gradient", init=z0[:3])
    with pytest.raises(ValueError, match="needs one of the kernels"):
        solve_preimages(C, X, lambda A, B: A @ B.T, method="gradient", init=z0)


# ------------------------------------------------------------------ learned map
def _centred_ridge(K, X, alpha):
    """Kernel ridge on the centred inputs: ((K + alpha I)^{-1} (X - mean), mean)."""
    mean = X.mean(axis=0)
    return np.linalg.solve(K + alpha * np.eye(len(K)), X - mean), mean


def test_learned_map_is_kernel_ridge_regression():
    rng = np.random.default_rng(7)
    Y = rng.normal(size=(40, 3))
    X = rng.normal(size=(40, 5))
    kern = make_kernel("rbf", gamma=0.5)
    X = X + 20.0  # away from the origin: the inputs' mean is what the map returns far out
    learned = fit_learned_preimage(Y, X, kern, alpha=0.1)
    assert isinstance(learned, LearnedPreimage)
    a, b = _centred_ridge(kern(Y), X, 0.1)
    np.testing.assert_allclose(learned.dual_coef, a, atol=1e-10)
    np.testing.assert_allclose(learned.intercept, b, atol=1e-10)
    Yn = rng.normal(size=(7, 3))
    np.testing.assert_allclose(learned.predict(Yn), kern(Yn, Y) @ a + b, atol=1e-10)
    np.testing.assert_allclose(learned.predict(Y[:1] + 100.0), b[None, :], atol=1e-10)
    # alpha = 0 on a singular matrix (duplicated coordinates): the minimum-norm solution
    Yd = np.vstack([Y[:10], Y[:10]])
    Xd = np.vstack([X[:10], X[:10]])
    dup = fit_learned_preimage(Yd, Xd, kern, alpha=0.0)
    np.testing.assert_allclose(dup.predict(Y[:10]), X[:10], atol=1e-6)


def test_learned_map_auto_alpha_is_the_leave_one_out_minimum():
    """alpha='auto': the closed-form leave-one-out error equals refitting without each point,
    and the chosen alpha is the grid's minimum of it."""
    rng = np.random.default_rng(11)
    Y = rng.normal(size=(30, 3))
    X = np.sin(Y @ rng.normal(size=(3, 4))) + 0.1 * rng.normal(size=(30, 4))
    kern = make_kernel("rbf", gamma=0.5)

    def brute_loo(alpha):
        # the ridge refitted without each point, the centring of all the points kept
        mean, err = X.mean(axis=0), []
        for i in range(len(Y)):
            keep = np.arange(len(Y)) != i
            a = np.linalg.solve(kern(Y[keep]) + alpha * np.eye(len(Y) - 1), X[keep] - mean)
            err.append(X[i] - (kern(Y[i:i + 1], Y[keep]) @ a)[0] - mean)
        return float(np.mean(np.square(err)))

    auto = fit_learned_preimage(Y, X, kern)
    assert auto.alpha in LEARNED_ALPHA_GRID  # the mean diagonal of an RBF matrix is 1
    np.testing.assert_allclose(auto.loo_error, brute_loo(auto.alpha), rtol=1e-8)
    fixed = fit_learned_preimage(Y, X, kern, alpha=auto.alpha)
    np.testing.assert_allclose(fixed.dual_coef, auto.dual_coef, atol=1e-9)
    np.testing.assert_allclose(fixed.loo_error, auto.loo_error, rtol=1e-8)
    np.testing.assert_allclose(fit_learned_preimage(Y, X, kern, alpha=0.3).loo_error, brute_loo(0.3), rtol=1e-8)
    for a in LEARNED_ALPHA_GRID[::8]:
        assert auto.loo_error <= fit_learned_preimage(Y, X, kern, alpha=a).loo_error * (1 + 1e-9)
    assert np.isnan(fit_learned_preimage(Y, X, kern, alpha=0.0).loo_error)
    # duplicated points are left out together: the choice is that of the distinct points
    dup = fit_learned_preimage(np.vstack([Y, Y[:10]]), np.vstack([X, X[:10]]), kern)
    assert dup.alpha == auto.alpha and dup.loo_error == pytest.approx(auto.loo_error, rel=1e-10)
    np.testing.assert_allclose(dup.dual_coef, _centred_ridge(
        kern(np.vstack([Y, Y[:10]])), np.vstack([X, X[:10]]), dup.alpha)[0], atol=1e-6)


def test_learned_map_bad_input():
    RBF = make_kernel("rbf", gamma=0.2)
    rng = np.random.default_rng(8)
    Y, X = rng.normal(size=(20, 3)), rng.normal(size=(20, 2))
    with pytest.raises(ValueError, match="Y and X must hold the same"):
        fit_learned_preimage(Y, X[:5], RBF)
    with pytest.raises(ValueError, match="alpha must be >= 0, got -1.0"):
        fit_learned_preimage(Y, X, RBF, alpha=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        fit_learned_preimage(Y, X, RBF, alpha="loo")
    with pytest.raises(ValueError, match="Y must have 3 columns"):
        fit_learned_preimage(Y, X, RBF).predict(Y[:, :2])
    with config_context(max_kernel_bytes=8 * 19 * 19):
        with pytest.raises(KernelMemoryError, match="learned pre-image map solves an 20 x 20 kernel ridge system"):
            fit_learned_preimage(Y, X, RBF)


@pytest.mark.parametrize("shape", ["subspace", "copies"])
def test_mds_preimages_of_degenerate_neighbourhoods_stay_near_the_data(shape):
    """Kwok & Tsang's pre-image divides the error of the squared distances (those of a
    projection, read through the kernel) by the neighbours' spread in each direction: with
    the data in a 3-D subspace of R^28 up to 1e-8 noise, or rows copied many times, the
    directions of rounding-level spread put pre-images 1e3 to 1e9 away (mean squared error
    2.9e6 against 2.8e-16 for the input itself). The directions below MDS_RELATIVE_SPREAD of
    the largest spread are left out."""
    import kpm

    rng = np.random.default_rng(13)
    if shape == "subspace":
        B = np.linalg.qr(rng.normal(size=(28, 3)))[0]
        X = rng.normal(size=(1189, 3)) * 2 @ B.T + 1e-8 * rng.normal(size=(1189, 28))
    else:
        X = np.repeat(rng.normal(size=(40, 4)), 30, axis=0) + 1e-9 * rng.normal(size=(1200, 4))
        X = X[rng.permutation(len(X))]  # the training part holds copies of every point
    train, new = X[:189], X[189:]
    kp = kpm.KernelProjection(sigma="median", random_state=0, preimage="mds").fit(train)
    R = kp.inverse_transform(kp.transform(new))
    assert np.mean((R - new) ** 2) < 1e-3 * np.mean(np.var(new, axis=0))
