"""Kwak (2013), Section IV: a linear method on the explicit coordinates Y equals the kernel method.

Kernel PCA = linear PCA on Y (and scikit-learn's KernelPCA); kernel SVM = linear SVM on Y
(same dual, same decision values); kernel Fisher discriminant = LDA on Y.
"""

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.decomposition import PCA, KernelPCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.svm import SVC

from helpers import rel_error as _rel
from kpm.spectral.eigensolvers import center_cross_gram, center_gram
from kpm.kernels import make_kernel
from kpm.decomposition.projection import KernelProjection


def _match_signs(A, B):
    """Flip the columns of A to agree in sign with those of B."""
    s = np.sign(np.sum(A * B, axis=0))
    s[s == 0] = 1
    return A * s


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(n_samples=140, noise=0.25, random_state=0)
    return X[:100], y[:100], X[100:], y[100:]


def test_kernel_pca_equals_linear_pca_on_Y(moons):
    X, _, Xt, _ = moons
    proj = KernelProjection(kernel="rbf", gamma=2.0)
    Y = proj.fit_transform(X)
    Yt = proj.transform(Xt)
    pca = PCA(n_components=5, svd_solver="full").fit(Y)
    kp5 = KernelProjection(5, kernel="rbf", gamma=2.0, eigen_solver="dense").fit(X)
    # the principal axes of Y are the coordinate axes (scatter matrix Y^T Y = Lambda)
    assert _rel(np.abs(pca.components_), np.eye(5, Y.shape[1])) < 1e-8
    assert _rel(pca.explained_variance_ * (len(X) - 1), kp5.eigenvalues_) < 1e-8
    assert _rel(_match_signs(pca.transform(Yt), kp5.transform(Xt)), kp5.transform(Xt)) < 1e-8


@pytest.mark.parametrize("solver", ["dense", "arpack", "randomized"])
def test_matches_sklearn_kernel_pca(moons, solver):
    X, _, Xt, _ = moons
    ours = KernelProjection(6, kernel="rbf", gamma=2.0, eigen_solver=solver, random_state=0)
    Y = ours.fit_transform(X)
    sk = KernelPCA(6, kernel="rbf", gamma=2.0, eigen_solver="dense")
    Ysk = sk.fit_transform(X)
    assert _rel(sk.eigenvalues_, ours.eigenvalues_) < 1e-10
    assert _rel(_match_signs(Y, Ysk), Ysk) < 1e-8
    assert _rel(_match_signs(ours.transform(Xt), sk.transform(Xt)), sk.transform(Xt)) < 1e-8


@pytest.mark.parametrize("C, tol", [(1.0, 1e-6), (1e6, 1e-4)], ids=["soft", "hard"])
def test_linear_svm_on_Y_equals_kernel_svm(moons, C, tol):
    """SVC(kernel='linear') on Y vs SVC(kernel='rbf') on X, same C.

    libsvm keeps its kernel cache in single precision (``Qfloat`` is ``float``), so two
    libsvm runs on the same problem agree only to ~1e-7 relative (soft margin, alpha <= 1)
    and ~1e-5 (hard margin, alpha in the hundreds): that is the ``tol`` of the
    cross-solver comparison. The equivalence itself is checked in double precision by
    expanding the linear SVM's solution with the kernel trick (agreement ~1e-10), and by
    the KKT conditions of that solution for the kernel SVM's dual.
    """
    X, y, Xt, _ = moons
    gamma = 10.0  # with C = 1e6 no multiplier reaches C: the hard-margin SVM
    proj = KernelProjection(kernel="rbf", gamma=gamma)
    Y = proj.fit_transform(X)
    Yt = proj.transform(Xt)
    svm_k = SVC(kernel="rbf", gamma=gamma, C=C, tol=1e-12, max_iter=10**7).fit(X, y)
    svm_l = SVC(kernel="linear", C=C, tol=1e-12, max_iter=10**7).fit(Y, y)
    if C > 1e5:
        assert np.abs(svm_k.dual_coef_).max() < C / 10  # really hard margin
    # same dual solution and decision values, at libsvm's precision
    assert np.array_equal(svm_k.support_, svm_l.support_)
    assert _rel(svm_l.dual_coef_, svm_k.dual_coef_) < 10 * tol
    for A, B in ((X, Y), (Xt, Yt)):
        assert _rel(svm_l.decision_function(B), svm_k.decision_function(A)) < tol
    # double precision: the linear machine's weight vector v = sum_i beta_i c_i y_i is the
    # feature-space w = sum_i beta_i c_i phi(x_i); its kernel expansion gives the same values
    k = make_kernel("rbf", gamma=gamma)
    Kc, cm, tm = center_gram(k(X))
    coef = np.zeros(len(X))
    coef[svm_l.support_] = svm_l.dual_coef_.ravel()
    for A, B in ((X, Y), (Xt, Yt)):
        f_kernel = center_cross_gram(k(A, X), cm, tm) @ coef + svm_l.intercept_
        assert _rel(f_kernel, svm_l.decision_function(B)) < 1e-9
    # ... and the linear machine's multipliers satisfy the kernel SVM's KKT conditions
    c = np.where(y == svm_l.classes_[1], 1.0, -1.0)
    margin = c * (Kc @ coef + svm_l.intercept_)
    a = np.abs(coef)
    free = (a > 1e-8 * C) & (a < C * (1 - 1e-8))
    assert free.sum() > 0
    assert np.max(np.abs(margin[free] - 1)) < 1e-3
    assert np.min(margin[a <= 1e-8 * C]) > 1 - 1e-3
    assert np.all(np.abs(np.sum(coef)) < 1e-8 * C)  # sum_i alpha_i c_i = 0


def _kfd_kernel_direction(Kc, y, mu):
    """Kernel Fisher discriminant by its kernel formula (Mika et al. 1999; Kwak eq. 24-27).

    alpha maximises (alpha^T M alpha)/(alpha^T (N + mu K~) alpha) with
    M = (m1 - m2)(m1 - m2)^T, m_c = K~ 1_c / n_c, N = sum_c K~_c (I - 1/n_c) K~_c^T; the
    two-class solution is alpha = (N + mu K~)^+ (m1 - m2). ``mu K~`` is the ||w||^2
    regulariser (alpha^T K~ alpha = ||w||^2).
    """
    classes = np.unique(y)
    ms = []
    N = np.zeros_like(Kc)
    for c in classes:
        idx = np.flatnonzero(y == c)
        Kcl = Kc[:, idx]
        nc = len(idx)
        ms.append(Kcl.mean(axis=1))
        N += Kcl @ (np.eye(nc) - 1.0 / nc) @ Kcl.T
    return np.linalg.pinv(N + mu * Kc, rcond=1e-12) @ (ms[0] - ms[1])


def _lda_direction(Y, y, mu):
    classes = np.unique(y)
    Sw = np.zeros((Y.shape[1], Y.shape[1]))
    means = []
    for c in classes:
        Yc = Y[y == c]
        means.append(Yc.mean(axis=0))
        D = Yc - means[-1]
        Sw += D.T @ D
    return np.linalg.solve(Sw + mu * np.eye(Y.shape[1]), means[0] - means[1])


def _cos(a, b):
    return abs(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))


def test_lda_on_Y_equals_kernel_fisher_discriminant_low_rank(moons):
    # polynomial kernel of degree 2 in 2-D: feature space of dimension 6, so the
    # within-class scatter of Y is invertible and LDA needs no regularisation
    X, y, Xt, _ = moons
    kw = dict(kernel="poly", degree=2, gamma=1.0, coef0=1.0)
    proj = KernelProjection(**kw)
    Y = proj.fit_transform(X)
    assert Y.shape[1] == 5  # rank of the centred kernel matrix
    k = make_kernel(**kw)
    Kc, cm, tm = center_gram(k(X))
    alpha = _kfd_kernel_direction(Kc, y, mu=0.0)
    beta = _lda_direction(Y, y, mu=0.0)
    # Kwak: beta = Y alpha (Lemma 6) ...
    assert _cos(Y.T @ alpha, beta) > 1 - 1e-10
    # ... and the same projections of new points, alpha^T k~(x) vs beta^T y(x)
    zk = center_cross_gram(k(Xt, X), cm, tm) @ alpha
    zy = proj.transform(Xt) @ beta
    assert _cos(zk, zy) > 1 - 1e-10
    # scikit-learn's LDA on Y finds the same discriminant direction
    lda = LinearDiscriminantAnalysis(solver="eigen").fit(Y, y)
    assert _cos(lda.coef_.ravel(), beta) > 1 - 1e-8


def test_regularised_lda_on_Y_equals_regularised_kfd(moons):
    # full-rank RBF map: ridge-regularised LDA on Y == KFD with the ||w||^2 regulariser
    X, y, Xt, _ = moons
    gamma, mu = 10.0, 1e-2  # a well-conditioned kernel matrix, so pinv is accurate
    proj = KernelProjection(kernel="rbf", gamma=gamma)
    Y = proj.fit_transform(X)
    k = make_kernel("rbf", gamma=gamma)
    Kc, cm, tm = center_gram(k(X))
    alpha = _kfd_kernel_direction(Kc, y, mu=mu)
    beta = _lda_direction(Y, y, mu=mu)
    assert _cos(Y.T @ alpha, beta) > 1 - 1e-9
    zk = center_cross_gram(k(Xt, X), cm, tm) @ alpha
    zy = proj.transform(Xt) @ beta
    assert _cos(zk, zy) > 1 - 1e-9


def test_kpm_demo_smoke():
    from typer.testing import CliRunner

    from kpm_reproduce.cli import app

    result = CliRunner().invoke(app, ["demo", "--quick"])
    assert result.exit_code == 0, result.output
    assert "linear SVM on Y" in result.output
    assert "kernel PCA-L1" in result.output


def test_projection_demo_numbers():
    import io

    from rich.console import Console

    from kpm_reproduce.cli.demo import run_projection_demo

    out = run_projection_demo(Console(file=io.StringIO()), quick=True)
    svm = out["svm"]
    assert svm["same_predictions"] == 1.0
    assert svm["max_abs_decision_diff"] < 1e-5 * svm["max_abs_decision"]
    assert svm["acc_rbf"] == svm["acc_linear_on_Y"]
    rows = {
        (r["n_outliers"] > 0, r["method"]): r
        for r in out["outliers"]["rows"]
        if r["outlier_fraction"] in (0.0, 0.1)
    }
    # without outliers kernel PCA is (by definition) the inlier optimum
    assert rows[(False, "kernel PCA")]["inlier_variance_captured"] > 0.999
    # with 10 % outliers kernel PCA-L1 keeps more of the inlier structure
    assert (rows[(True, "kernel PCA-L1")]["inlier_variance_captured"]
            > rows[(True, "kernel PCA")]["inlier_variance_captured"])
