"""The squared-hinge SVM's finite Newton method (kpm.hinge.squared_hinge)."""

import numpy as np
import pytest
from sklearn.svm import LinearSVC

from kpm.hinge.squared_hinge import SquaredHingeSVM, arrow_gram, complement_cheaper, exact_line_search
from kpm.hinge.svm_path import svm_c_path, svm_path


def _problem(n, D, seed=0, spread=1e-3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, D)) * np.geomspace(1, spread, D)  # columns of very different scales
    y = np.where(X[:, 0] + X[:, 1:4].sum(1) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _objective(X, y, w, b, C):
    return 0.5 * (w @ w + b * b) + C * (np.maximum(0.0, 1.0 - y * (X @ w + b)) ** 2).sum()


@pytest.mark.parametrize("n, D, C", [(300, 10, 1.0), (500, 40, 100.0), (400, 80, 1000.0), (200, 50, 0.01)])
def test_newton_solves_liblinears_l2_loss_svm(n, D, C):
    """The objective is LIBLINEAR's L2-loss SVM with the bias as a feature of value 1
    (intercept_scaling=1): the same minimiser, at any C (the dual coordinate descent of the
    hinge slows down at large C; Newton's steps do not)."""
    X, y = _problem(n, D)
    solver = SquaredHingeSVM(X, y, C)
    w, b = solver.solve(D)
    ref = LinearSVC(C=C, loss="squared_hinge", dual=False, tol=1e-12, max_iter=100000).fit(X, y)
    assert _objective(X, y, w, b, C) <= _objective(X, y, ref.coef_[0], ref.intercept_[0], C) * (1 + 1e-12)
    np.testing.assert_allclose(np.r_[w, b], np.r_[ref.coef_[0], ref.intercept_[0]], atol=1e-5)
    assert solver.iterations <= 15


def test_warm_starts_along_d_and_c_give_the_cold_solutions():
    X, y = _problem(400, 30, seed=1)
    grid = np.array([1, 3, 10, 30])
    warm = svm_path(X, np.ones(30), y, 10.0, grid, loss="squared_hinge")
    for k, D in enumerate(grid):
        cold = SquaredHingeSVM(X[:, :D], y, 10.0).solve(D)
        np.testing.assert_allclose(warm.coef[k, :D], cold[0], atol=1e-8)
        np.testing.assert_allclose(warm.intercept[k], cold[1], atol=1e-8)
    Cs = np.logspace(-2, 3, 6)
    W, b = svm_c_path(X, y, Cs, loss="squared_hinge")
    for k, C in enumerate(Cs):
        w0, b0 = SquaredHingeSVM(X, y, C).solve(30)
        np.testing.assert_allclose(np.r_[W[k], b[k]], np.r_[w0, b0], atol=1e-7)


def test_the_woodbury_and_the_cholesky_steps_agree():
    """Few points in the loss (large C) take the |I| x |I| system, many the (D+1) x (D+1)
    one: the same Newton step either way."""
    X, y = _problem(200, 60, seed=2)
    solver = SquaredHingeSVM(X, y, 5.0)
    theta = np.r_[np.random.default_rng(0).standard_normal(60) * 0.1, 0.05]
    m = y * (X @ theta[:60] + theta[60])
    grad = np.ones(61)
    for take in (10, 120):  # fewer rows than columns, then more
        rows = np.flatnonzero(m < np.sort(m)[take])
        active = np.zeros(200, bool)
        active[rows] = True
        F = solver._features(rows, 60)
        step = solver._newton_solve(grad, active, rows, 60)
        H = np.eye(61) + 10.0 * F.T @ F
        np.testing.assert_allclose(H @ step, grad, atol=1e-9)


def test_exact_line_search_is_the_minimiser_along_the_line():
    X, y = _problem(150, 8, seed=3)
    rng = np.random.default_rng(4)
    C = 3.0
    for _ in range(20):
        theta, step = rng.standard_normal(9) * 0.3, rng.standard_normal(9)
        A = y[:, None] * np.c_[X, np.ones(150)]
        m, q = A @ theta, A @ step
        if theta @ step + 0 >= 0 and -2 * C * (np.maximum(0, 1 - m) * q).sum() + theta @ step >= 0:
            step = -step
            q = -q
        t = exact_line_search(float(theta @ step), float(step @ step), m, q, 2 * C)
        f = lambda s: 0.5 * (theta + s * step) @ (theta + s * step) + C * (np.maximum(0, 1 - m - s * q) ** 2).sum()
        ts = np.linspace(0, 3 * max(t, 1e-3), 3001)
        assert f(t) <= min(f(s) for s in ts) + 1e-9


@pytest.mark.parametrize("n, D, C", [(300, 10, 1.0), (120, 80, 100.0)])  # Cholesky, then Woodbury steps
def test_weighted_newton_is_the_repeated_problem(n, D, C):
    """``sample_weight`` gives each point ``C w_i``: integer weights solve the problem of the
    repeated points (the same unique minimiser), with the weighted exact line search."""
    X, y = _problem(n, D, seed=4)
    w = np.random.default_rng(1).integers(1, 4, n)
    a = SquaredHingeSVM(X, y, C, sample_weight=w.astype(float)).solve(D)
    b = SquaredHingeSVM(np.repeat(X, w, axis=0), np.repeat(y, w), C).solve(D)
    np.testing.assert_allclose(np.r_[a[0], a[1]], np.r_[b[0], b[1]], atol=1e-8)
    # the weighted Woodbury step solves the weighted Newton system
    solver = SquaredHingeSVM(X, y, C, sample_weight=w.astype(float))
    rows = np.arange(min(n, D) // 2)
    active = np.zeros(n, bool)
    active[rows] = True
    F = solver._features(rows, D)
    grad = np.ones(D + 1)
    step = solver._newton_solve(grad, active, rows, D)
    H = np.eye(D + 1) + 2 * C * F.T @ (w[rows, None] * F)
    np.testing.assert_allclose(H @ step, grad, atol=1e-8)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_gram_matrix_extended_along_d_is_the_one_computed_afresh(weighted):
    """Along the D path the kept A_I^T W A_I gains the new columns' blocks only; it must equal
    the matrix of the same points computed from scratch, and the solve at the larger D the
    cold solve."""
    rng = np.random.default_rng(3)
    Phi = rng.normal(size=(120, 30)) / np.sqrt(np.arange(1, 31))
    y = np.where(Phi[:, 0] + 0.3 * rng.normal(size=120) > 0, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, 120) if weighted else None
    warm = SquaredHingeSVM(Phi, y, 10.0, sample_weight=w)
    warm.solve(12)  # leaves a kept Gram matrix of 12 columns
    assert warm._d == 12
    active = warm._active.copy()
    G = warm._extended(30)
    rows = np.flatnonzero(active)
    F = np.hstack([Phi[rows], np.full((len(rows), 1), warm.B)])
    if weighted:
        F = F * np.sqrt(w[rows])[:, None]
    np.testing.assert_allclose(G, F.T @ F, rtol=1e-12, atol=1e-12)
    w30, b30 = warm.solve(30)
    cold_w, cold_b = SquaredHingeSVM(Phi, y, 10.0, sample_weight=w).solve(30)
    np.testing.assert_allclose(w30, cold_w, atol=1e-8)
    assert b30 == pytest.approx(cold_b, abs=1e-8)


def _eigen_features(n, d, seed=0, weights=None):
    """Kernel-PCA features ``V sqrt(lambda)`` of a centred Gaussian kernel (columns orthogonal,
    under ``W`` with weights: the eigenvectors of ``W^{1/2} K W^{1/2}`` divided by ``sqrt(w)``),
    and labels that need many of them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    s = np.ones(n) if weights is None else np.sqrt(weights)
    H = np.eye(n) - np.outer(s, s) / (s @ s)  # centring in the weighted inner product
    lam, V = np.linalg.eigh(H @ (K * np.outer(s, s)) @ H)
    lam, V = lam[::-1][:d], V[:, ::-1][:, :d]
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return V * np.sqrt(lam) / s[:, None], y


@pytest.mark.parametrize("weighted", [False, True])
def test_arrow_gram_is_the_gram_matrix_of_orthogonal_columns(weighted):
    """The Gram matrix [Phi, B]^T W [Phi, B] of orthogonal columns is diagonal but for the
    constant's row: arrow_gram returns that diagonal, row and corner, and None for columns
    that are not orthogonal."""
    n = 150
    w = np.random.default_rng(5).uniform(0.5, 3.0, n) if weighted else np.ones(n)
    Phi, _ = _eigen_features(n, 40, weights=w if weighted else None)
    F = np.c_[Phi, np.full(n, 2.0)]
    G = F.T @ (w[:, None] * F)
    g, c, e = arrow_gram(Phi, w, 2.0)
    np.testing.assert_allclose(g, np.diag(G)[:40], rtol=1e-12)
    np.testing.assert_allclose(c, G[40, :40], atol=1e-10 * G.max())
    assert e == pytest.approx(G[40, 40], rel=1e-12)
    mixed = Phi @ np.linalg.qr(np.random.default_rng(6).normal(size=(40, 40)))[0]  # same span, not orthogonal
    assert arrow_gram(mixed, w, 2.0) is None
    assert arrow_gram(Phi, np.r_[w[:-1], 5.0 * w[-1]], 2.0) is None  # orthogonal under other weights only


@pytest.mark.parametrize("weighted, n_out", [(False, 9), (True, 9), (False, 0)])
def test_the_step_through_the_points_out_of_the_loss_solves_the_newton_system(weighted, n_out):
    """With most points in the loss (small C) and orthogonal columns, the Newton step goes
    through the few points out of it (Woodbury on G - U^T U): it solves the same system as the
    Cholesky factor of the whole matrix."""
    n, d = 200, 60
    w = np.random.default_rng(7).uniform(0.5, 2.0, n) if weighted else None
    Phi, y = _eigen_features(n, d, seed=1, weights=w)
    solver = SquaredHingeSVM(Phi, y, 0.3, sample_weight=w)
    out = np.random.default_rng(8).choice(n, n_out, replace=False)
    active = np.ones(n, bool)
    active[out] = False
    rows = np.flatnonzero(active)
    assert complement_cheaper(len(rows), n_out, d)
    F = solver._features(rows, d)
    grad = np.random.default_rng(9).normal(size=d + 1)
    step = solver._complement_solve(grad, active, rows, d)
    Fw = F if w is None else F * np.sqrt(w[rows])[:, None]
    H = np.eye(d + 1) + 0.6 * Fw.T @ Fw
    np.testing.assert_allclose(H @ step, grad, atol=1e-10 * np.abs(grad).max())


@pytest.mark.parametrize("C", [0.01, 0.3, 3.0])
def test_solutions_through_the_complement_are_liblinears(C, monkeypatch):
    """Whole solves on kernel-PCA features at small C take the complement steps and reach
    LIBLINEAR's minimiser, as the other steps do."""
    Phi, y = _eigen_features(300, 120, seed=2)
    taken = []
    step = SquaredHingeSVM._complement_solve
    monkeypatch.setattr(SquaredHingeSVM, "_complement_solve",
                        lambda self, *a: taken.append(1) or step(self, *a))
    w, b = SquaredHingeSVM(Phi, y, C).solve(120)
    assert taken
    ref = LinearSVC(C=C, loss="squared_hinge", dual=False, tol=1e-12, max_iter=100000).fit(Phi, y)
    assert _objective(Phi, y, w, b, C) <= _objective(Phi, y, ref.coef_[0], ref.intercept_[0], C) * (1 + 1e-12)
    np.testing.assert_allclose(np.r_[w, b], np.r_[ref.coef_[0], ref.intercept_[0]], atol=1e-5)


def _refit_margin(X, y, C, i, weights=None):
    """Point i's margin under the SVM refitted without it, and the refit's set of points
    inside the margin (over the other points)."""
    keep = np.arange(len(y)) != i
    solver = SquaredHingeSVM(X[keep], y[keep], C, sample_weight=None if weights is None else weights[keep])
    w, b = solver.solve(X.shape[1])
    return y[i] * (X[i] @ w + b), y[keep] * (X[keep] @ w + b) < 1.0


@pytest.mark.parametrize("n, D, C, weighted", [
    (60, 5, 1.0, False),     # more points inside the margin than columns: the (D + 1) factor
    (60, 40, 10.0, False),   # fewer: the |I| x |I| system
    (40, 80, 3.0, False),    # more columns than points
    (60, 10, 0.3, True),     # sample weights: the leverage of C w_i
])
def test_loo_margins_equal_the_refits_wherever_the_margin_set_stays(n, D, C, weighted):
    """The hat-matrix formula is exact whenever leaving a point out moves no other point
    across the margin; a point outside the margin leaves the solution as it is."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, D))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    weights = rng.uniform(0.5, 2.0, n) if weighted else None
    solver = SquaredHingeSVM(X, y, C, sample_weight=weights)
    w, b = solver.solve(D)
    loo = solver.loo_margins()
    inside = y * (X @ w + b) < 1.0
    exact = 0
    for i in range(n):
        margin, refit_inside = _refit_margin(X, y, C, i, weights)
        if np.array_equal(refit_inside, np.delete(inside, i)):
            assert loo[i] == pytest.approx(margin, abs=1e-9)
            exact += 1
    assert exact >= 10 and exact >= inside.sum() // 3
    # outside the margin the point is not in the loss: its own margin, to the bit
    np.testing.assert_array_equal(loo[~inside], (y * (X @ w + b))[~inside])
    # inside, leaving the point out lowers its margin (its residual grows by 1 / (1 - h))
    assert np.all(loo[inside] < (y * (X @ w + b))[inside])


@pytest.mark.parametrize("weighted", [False, True])
def test_grouped_loo_margins_leave_the_copies_out_together(weighted):
    """With groups, the copies of a sample (identical rows, labels that may differ) are left
    out together: exact wherever the refit without the group moves no other point across
    the margin; a group of one sample is the one-point formula."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal((40, 6))
    rows = np.r_[np.arange(40), [0, 0, 1, 2, 2, 2, 5, 7, 7]]
    X = base[rows]
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(len(rows)) > 0, 1.0, -1.0)
    y[[40, 43]] = -y[[0, 2]]  # copies with both labels
    weights = rng.uniform(0.5, 2.0, len(rows)) if weighted else None
    groups = np.unique(rows, return_inverse=True)[1]
    solver = SquaredHingeSVM(X, y, 0.3, sample_weight=weights)
    w, b = solver.solve(6)
    grouped, single = solver.loo_margins(groups=groups), solver.loo_margins()
    inside = y * (X @ w + b) < 1.0
    exact = 0
    for g in np.unique(groups):
        out = groups == g
        keep = ~out
        refit = SquaredHingeSVM(X[keep], y[keep], 0.3, sample_weight=None if weights is None else weights[keep])
        w2, b2 = refit.solve(6)
        if np.array_equal(y[keep] * (X[keep] @ w2 + b2) < 1.0, inside[keep]):
            np.testing.assert_allclose(grouped[out], y[out] * (X[out] @ w2 + b2), atol=1e-9)
            exact += out.sum() > 1
        if out.sum() == 1:
            assert grouped[out] == pytest.approx(single[out], abs=1e-12)
    assert exact >= 3  # of the 6 groups of copies (the others move a point across the margin)
    assert not np.allclose(grouped[groups == groups[0]], single[groups == groups[0]])


def test_loo_margins_through_the_points_out_of_the_margin_are_the_direct_ones():
    """Orthogonal columns (an eigenvector basis) at small C, nearly every point inside the
    margin: the leverages through the few points out of it (the Woodbury identity on the
    Gram matrix of all points) equal those of the (D + 1) factor."""
    from kpm.hinge import squared_hinge

    rng = np.random.default_rng(2)
    X = rng.standard_normal((80, 10))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 20.0)
    lam, V = np.linalg.eigh(K)
    Phi = V[:, ::-1][:, :60] * np.sqrt(lam[::-1][:60])
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, 80)
    # with weights, columns orthogonal under W (as the KPM's weighted basis is)
    for C, weights, cols in ((0.5, None, Phi), (1.0, w, Phi / np.sqrt(w)[:, None])):
        solver = SquaredHingeSVM(cols, y, C, sample_weight=weights)
        solver.solve(60)
        out = y * (cols @ solver.w + solver.b) >= 1.0
        assert 5 <= out.sum() < 20 and squared_hinge.complement_cheaper(80 - out.sum(), out.sum(), 60)
        through_out = solver.loo_margins()
        assert solver._arrow_gram() is not None  # the columns were found orthogonal: the Woodbury way
        solver._arrow = None  # as for columns that are not orthogonal: the direct leverages
        np.testing.assert_allclose(through_out, solver.loo_margins(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("weighted", [False, True])
def test_loo_margins_from_the_last_newton_factor_are_the_ones_computed_afresh(weighted):
    # the leverages reuse the factor of the solve's last (exact) Newton step where it was taken
    # on the solution's margin set; every kind of step: through the points out of the loss
    # (small C), the points in it (large C), the columns (a C in between, columns not orthogonal)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((120, 6))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 12.0)
    lam, V = np.linalg.eigh(K)
    Phi = V[:, ::-1][:, :40] * np.sqrt(lam[::-1][:40])
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(120) > 0, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, 120) if weighted else None
    cols = Phi / np.sqrt(w)[:, None] if weighted else Phi
    mixed = cols @ np.linalg.qr(rng.standard_normal((40, 40)))[0]  # the same span, columns not orthogonal
    kinds = set()
    for C, F in ((0.05, cols), (1e4, cols), (3.0, mixed), (0.05, mixed)):
        solver = SquaredHingeSVM(F, y, C, sample_weight=w)
        solver.solve(40)
        kinds.add(solver._factor[3])
        reused = solver.loo_margins()
        solver._factor = None
        np.testing.assert_allclose(reused, solver.loo_margins(), rtol=1e-9, atol=1e-9)
    assert kinds == {"complement", "points", "columns"}


def test_the_svd_solves_agree_with_the_cholesky_ones():
    # the fallbacks where the formed matrix's Cholesky factor fails to rounding
    from kpm.hinge.squared_hinge import _columns_leverage, _points_leverage, _ridge_solve, _svd_leverage

    rng = np.random.default_rng(0)
    for n, d in ((40, 8), (6, 15)):
        F, g = rng.normal(size=(n, d)), rng.normal(size=d)
        ref = _points_leverage(F, 3.0) if n <= d else _columns_leverage(F, 3.0)
        np.testing.assert_allclose(_svd_leverage(F, 3.0), ref, rtol=1e-10)
        np.testing.assert_allclose(_ridge_solve(F, 3.0, g), np.linalg.solve(np.eye(d) + 3.0 * F.T @ F, g), rtol=1e-10)


def test_default_kpm_with_an_unscaled_polynomial_kernel():
    # every point outside the margin at the warm start (a polynomial kernel of degree 3 on
    # blobs of scale 6): the Newton step on no point crashed in LAPACK ("shape(c,0)==shape(b,0)");
    # it is the gradient itself (the Hessian is the identity there)
    from sklearn.datasets import make_blobs
    from sklearn.svm import SVC

    from kpm import KernelProjectionMachine

    rng = np.random.RandomState(2)
    X, y = make_blobs(1700, centers=rng.uniform(-6, 6, (3, 10)), cluster_std=1.3, random_state=2)
    m = KernelProjectionMachine(kernel="poly").fit(X[:200], y[:200])
    svc = SVC(kernel="poly", degree=3, gamma=1.0, coef0=1.0).fit(X[:200], y[:200])
    assert np.mean(m.predict(X[200:]) != y[200:]) <= np.mean(svc.predict(X[200:]) != y[200:]) + 0.02


def test_polynomial_kernel_of_high_degree_warns_instead_of_failing():
    # degree 50: k(x, x) spans tens of orders of magnitude; the Newton system's Cholesky factor
    # failed to rounding (LinAlgError); the SVD solves it, and the kernel's degeneracy is named
    from kpm import DegenerateKernelWarning, KernelProjectionMachine

    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (200, 5))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    with pytest.warns(DegenerateKernelWarning):
        KernelProjectionMachine(kernel="poly", degree=50).fit(X, y)


def test_a_zero_step_is_no_move():
    """A zero direction (zero margins ``q``, ``|step|^2 = 0``) has step length 0; it divided
    by zero."""
    m = np.array([0.5, 2.0, -1.0])
    assert exact_line_search(0.0, 0.0, m, np.zeros(3), 2.0) == 0.0


def test_a_newton_system_without_direction_falls_back_to_the_gradient():
    """Three blobs in R^3 (150 standardised points) under a polynomial kernel of degree 40,
    whose features span hundreds of orders of magnitude: a fold's Newton system gave a zero
    step for a nonzero gradient and the line search divided by zero (ZeroDivisionError from
    KernelProjectionMachine.fit). The solver now steps along the gradient there, and the fit
    ends with the kernel's warning about its range."""
    import warnings

    from sklearn.preprocessing import StandardScaler

    from kpm import KernelProjectionMachine

    rng = np.random.default_rng(11)
    k, p = 3, int(rng.integers(2, 11))
    c = rng.normal(size=(k, p))
    c *= 4 / (np.sqrt(((c[:, None] - c[None]) ** 2).sum(-1)) + np.diag(np.full(k, np.inf))).min()
    y = rng.integers(0, k, 150)
    X = StandardScaler().fit_transform(c[y] + rng.normal(size=(150, p)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = KernelProjectionMachine(kernel="poly", degree=40, cv=5, cv_basis="fold", random_state=0).fit(X, y)
    assert np.all(np.isfinite(model.decision_function(X)))
    assert any("self-similarities k(x, x) span" in str(w.message) for w in caught)
