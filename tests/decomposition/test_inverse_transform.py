"""KernelProjection.inverse_transform (pre-images on every basis), the explained variance, the
relevant dimension as n_components, and the memory-aware 'auto' eigensolver."""

import warnings

import numpy as np
import pytest
from helpers import denoising_family
from sklearn.decomposition import KernelPCA

from kpm import RelevantDimension, config_context
from kpm.decomposition.projection import KernelProjection
from kpm.preimage import mds_preimage, preimage_objective
from kpm.exceptions import KernelMemoryError
from kpm.kernels import make_kernel
from kpm.spectral.eigensolvers import center_gram
from kpm.spectral.landmarks import select_landmarks

BASES = {
    "exact": dict(eigen_solver="dense"),
    "nystroem": dict(eigen_solver="nystroem", n_landmarks=120, random_state=0),
    "matrix-free": dict(eigen_solver="matrix-free", random_state=0),
}
METHODS = ("fixed-point", "gradient", "mds", "learned")


def _curve(rng, n, noise):
    t = rng.uniform(0, 2 * np.pi, n)
    clean = np.c_[np.cos(t), np.sin(t), 0.5 * np.cos(2 * t)]  # a closed curve in R^3
    return clean, clean + noise * rng.normal(size=clean.shape)


@pytest.fixture(scope="module")
def curve():
    rng = np.random.default_rng(0)
    _, X = _curve(rng, 250, 0.1)
    clean, noisy = _curve(rng, 60, 0.1)
    return X, clean, noisy


def _mse(Z, T):
    return float(np.mean(np.sum((Z - T) ** 2, axis=1)))


# ------------------------------------------------------------------- pre-images
@pytest.mark.parametrize("basis", list(BASES))
@pytest.mark.parametrize("method", METHODS)
def test_inverse_transform_denoises_on_every_basis(curve, basis, method):
    X, clean, noisy = curve
    kp = KernelProjection(8, gamma=2.0, preimage=method, preimage_alpha=0.1, **BASES[basis]).fit(X)
    assert kp.preimage_ == method
    Y = kp.transform(noisy)
    Z, info = kp.inverse_transform(Y, return_info=True)
    assert Z.shape == noisy.shape
    np.testing.assert_array_equal(Z, kp.inverse_transform(Y))
    assert _mse(Z, clean) < 0.75 * _mse(noisy, clean)
    assert info.converged.all()
    # the reported objective is ||phi(z) - P||^2 of the returned points, from kernels
    coefs, points, sq = kp.expansion(Y)
    np.testing.assert_allclose(info.objective, preimage_objective(Z, coefs, points, kp.kernel_, ctc=sq),
                               atol=1e-10)
    if method in ("fixed-point", "gradient"):
        # started from the MDS pre-image: never worse than it in the objective
        mds = KernelProjection(8, gamma=2.0, preimage="mds", **BASES[basis]).fit(X)
        _, start = mds.inverse_transform(Y, return_info=True)
        assert np.all(info.objective <= start.objective + 1e-12)


@pytest.mark.parametrize("basis", list(BASES))
def test_expansion_is_the_projection_onto_the_components(curve, basis):
    X, _, noisy = curve
    kp = KernelProjection(6, gamma=2.0, **BASES[basis]).fit(X)
    Y = kp.transform(noisy)
    coefs, points, sq = kp.expansion(Y)
    kern = make_kernel("rbf", gamma=2.0)
    K = kern(points)
    np.testing.assert_allclose(sq, np.einsum("ij,jk,ik->i", coefs, K, coefs), rtol=1e-9)
    # the coordinates of the expansion are Y: <P - phi_bar, V^k> = y_k, with the directions
    # V^k taken from transform of the expansion points (their coordinates)
    if basis == "nystroem":
        np.testing.assert_array_equal(points, X[kp.landmark_indices_])
    else:
        np.testing.assert_array_equal(points, X)
        Yfit = kp.transform(X)
        mean_row = K.mean(axis=0)  # <phi_bar, phi(x_i)>
        dots = coefs @ K
        # <P, phi(x_i)> = <phi_bar, phi(x_i)> + <P - phi_bar, phi(x_i) - phi_bar> + <P - phi_bar, phi_bar>
        P_bar = coefs @ mean_row - K.mean()
        np.testing.assert_allclose(dots, mean_row + Y @ Yfit.T + P_bar[:, None], atol=1e-8)


@pytest.mark.parametrize("basis", ["exact", "nystroem"])
def test_mds_from_the_closed_form_dot_products_equals_the_kernel_ones(curve, basis):
    X, _, noisy = curve
    kp = KernelProjection(6, gamma=2.0, preimage="mds", preimage_neighbors=7, **BASES[basis]).fit(X)
    Y = kp.transform(noisy)
    coefs, points, sq = kp.expansion(Y)
    ref = mds_preimage(coefs, points, kp.kernel_, n_neighbors=7, return_info=False)  # K c
    np.testing.assert_allclose(kp.inverse_transform(Y), ref, atol=1e-9)


@pytest.mark.parametrize("method", ["fixed-point", "gradient", "mds"])
@pytest.mark.parametrize("basis", ["exact", "all-landmarks"])
def test_full_rank_map_inverts_the_training_points(basis, method):
    """With every direction kept, a training point's projection is its own image: the
    pre-image is the point itself."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    kw = dict(n_landmarks=40, random_state=0) if basis == "all-landmarks" else {}
    kp = KernelProjection(kernel="rbf", sigma=1.5, preimage=method, preimage_tol=1e-10,
                          preimage_max_iter=2000, **kw).fit(X)
    Z, info = kp.inverse_transform(kp.transform(X[:8]), return_info=True)
    np.testing.assert_allclose(Z, X[:8], atol=1e-4)
    np.testing.assert_allclose(info.objective, 0.0, atol=1e-8)


def test_learned_map_is_scikit_learns_on_the_centred_inputs(curve):
    # scikit-learn's map regresses the raw inputs, z(y) = k(y)^T M X (M the inverse of
    # K + alpha I); ours the centred ones, b + k(y)^T M (X - 1 b^T) with b their mean, which is
    # scikit-learn's plus b (1 - k(y)^T M 1)
    X, _, noisy = curve
    X, noisy = X + 50.0, noisy + 50.0  # away from the origin, where the intercept matters
    for alpha in (1e-3, 0.1, 1.0):
        ours = KernelProjection(8, gamma=2.0, preimage="learned", preimage_alpha=alpha).fit(X)
        ref = KernelPCA(8, kernel="rbf", gamma=2.0, fit_inverse_transform=True, alpha=alpha,
                        eigen_solver="dense").fit(X)
        learned = ours.preimage_map_
        C = ours.transform(noisy)
        K = learned.kernel(learned.coordinates)
        M1 = np.linalg.solve(K + alpha * np.eye(len(K)), np.ones(len(K)))
        shift = np.outer(1.0 - learned.kernel(C, learned.coordinates) @ M1, learned.intercept)
        np.testing.assert_allclose(ours.inverse_transform(C), ref.inverse_transform(ref.transform(noisy)) + shift,
                                   atol=1e-7)
        np.testing.assert_allclose(learned.intercept, X.mean(axis=0), rtol=1e-12)
    # on the Nyström variant the map is fitted on the landmarks (an m x m system)
    ny = KernelProjection(8, gamma=2.0, preimage="learned", n_landmarks=50, random_state=0).fit(X)
    assert ny.preimage_map_.coordinates.shape == (50, 8)
    np.testing.assert_allclose(ny.preimage_map_.coordinates, ny.transform(X[ny.landmark_indices_]),
                               atol=1e-12)


def test_learned_map_without_ridge_interpolates_the_training_points():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 4))
    kp = KernelProjection(12, sigma=1.0, preimage="learned", preimage_alpha=0.0).fit(X)
    np.testing.assert_allclose(kp.inverse_transform(kp.transform(X)), X, atol=1e-6)


def test_learned_map_default_alpha_on_clustered_data():
    """Five tight clusters in R^10 (the outside tester's case): the RBF kernel on the
    coordinates is nearly constant, and the old default alpha = 1 shrank every pre-image to
    the mean (MSE 2.7 against the clean points, the noisy input 0.0004). alpha='auto' takes
    the leave-one-out choice: as good as the input on 1,000 fresh points."""
    rng = np.random.RandomState(0)
    c = rng.randn(5, 10) * 3
    C = c[rng.randint(0, 5, 1300)]
    X = C + 0.02 * rng.randn(*C.shape)
    kp = KernelProjection(preimage="learned").fit(X[:300])
    Z = kp.inverse_transform(kp.transform(X[300:]))
    mse, mse_input = np.mean((Z - C[300:]) ** 2), np.mean((X[300:] - C[300:]) ** 2)
    assert mse <= 1.1 * mse_input
    assert kp.preimage_alpha_ < 1e-4 and kp.preimage_loo_error_ < 2 * mse_input
    fixed = KernelProjection(preimage="learned", preimage_alpha=1.0).fit(X[:300])
    assert fixed.preimage_alpha_ == 1.0 and fixed.preimage_loo_error_ > 1.0
    assert KernelProjection().fit(X[:300]).preimage_alpha_ is None


def test_whitened_and_residual_coordinates_invert_alike(curve):
    X, _, noisy = curve
    plain = KernelProjection(6, gamma=2.0).fit(X)
    Z = plain.inverse_transform(plain.transform(noisy))
    for kw in (dict(whiten=True), dict(residual=True), dict(whiten=True, residual=True)):
        other = KernelProjection(6, gamma=2.0, **kw).fit(X)
        np.testing.assert_allclose(other.inverse_transform(other.transform(noisy)), Z, atol=1e-9)


def test_zeroed_trailing_coordinates_project_onto_fewer_components(curve):
    X, _, noisy = curve
    big = KernelProjection(8, gamma=2.0, eigen_solver="dense").fit(X)
    small = KernelProjection(3, gamma=2.0, eigen_solver="dense").fit(X)
    Y = big.transform(noisy)
    Y[:, 3:] = 0.0
    np.testing.assert_allclose(big.inverse_transform(Y), small.inverse_transform(small.transform(noisy)),
                               atol=1e-7)


def test_init_starts_the_iterative_pre_images(curve):
    X, clean, noisy = curve
    kp = KernelProjection(8, gamma=2.0).fit(X)
    Y = kp.transform(noisy)
    Z, info = kp.inverse_transform(Y, init=noisy, return_info=True)
    Z0, info0 = kp.inverse_transform(Y, return_info=True)
    # the same minima from two starts (this objective has one basin near the curve)
    np.testing.assert_allclose(Z, Z0, atol=1e-4)
    one, _ = kp.inverse_transform(Y[:1], init=noisy[:1], return_info=True)
    np.testing.assert_allclose(one, Z[:1], atol=1e-12)  # each row on its own
    capped = KernelProjection(8, gamma=2.0, preimage_max_iter=1, preimage_tol=1e-12).fit(X)
    Zc, ic = capped.inverse_transform(Y, init=noisy, return_info=True)
    assert np.all(ic.n_iter == 1) and not ic.converged.any()
    assert not np.allclose(Zc, noisy)  # one step from the given start


def test_inverse_transform_is_invariant_to_subsets_and_order(curve):
    X, _, noisy = curve
    for method in ("fixed-point", "mds", "learned"):
        kp = KernelProjection(5, gamma=2.0, preimage=method).fit(X)
        Y = kp.transform(noisy)
        full = kp.inverse_transform(Y)
        perm = np.random.default_rng(0).permutation(len(Y))
        np.testing.assert_allclose(kp.inverse_transform(Y[perm]), full[perm], atol=1e-12)
        np.testing.assert_allclose(kp.inverse_transform(Y[10:20]), full[10:20], atol=1e-12)
        with config_context(block_bytes=8 * 4 * len(X) * 7):  # blocks of 7 targets
            np.testing.assert_allclose(kp.inverse_transform(Y), full, atol=1e-12)


def test_inverse_transform_leaves_the_estimator_unchanged(curve):
    X, _, noisy = curve
    kp = KernelProjection(5, gamma=2.0, preimage="learned").fit(X)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(kp).items()}
    kp.inverse_transform(kp.transform(noisy), return_info=True)
    assert set(vars(kp)) == set(before)
    for k, v in vars(kp).items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(v, before[k])


@pytest.mark.parametrize("kernel, params, method", [
    ("poly", dict(degree=3, gamma=0.5), "gradient"),
    ("imq", dict(kernel_params={"c": 1.0}), "gradient"),
    ("linear", {}, "gradient"),
    ("sigmoid", dict(gamma=0.2, coef0=0.1), "gradient"),
])
def test_default_preimage_of_other_kernels(curve, kernel, params, method):
    X, _, noisy = curve
    kp = KernelProjection(3, kernel=kernel, **params).fit(X)
    assert kp.preimage_ == method
    Y = kp.transform(noisy)
    Z, info = kp.inverse_transform(Y, return_info=True)
    mds = KernelProjection(3, kernel=kernel, preimage="mds", **params).fit(X)
    Zm, im = mds.inverse_transform(Y, return_info=True)
    assert np.all(info.objective <= im.objective + 1e-10)
    assert np.all(np.isfinite(Zm))


def test_linear_kernel_pre_image_is_linear_pca_reconstruction(curve):
    X, _, noisy = curve
    for method in ("gradient", "mds"):
        kp = KernelProjection(2, kernel="linear", preimage=method).fit(X)
        Z = kp.inverse_transform(kp.transform(noisy))
        mean = X.mean(axis=0)
        _, _, Vt = np.linalg.svd(X - mean, full_matrices=False)
        W = Vt[:2]
        np.testing.assert_allclose(Z, mean + (noisy - mean) @ W.T @ W, atol=1e-6)


def test_inverse_transform_errors(curve):
    X, _, noisy = curve
    kp = KernelProjection(4, gamma=2.0).fit(X)
    Y = kp.transform(noisy)
    with pytest.raises(ValueError, match="Y has 3 columns, but this KernelProjection maps to 4"):
        kp.inverse_transform(Y[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        kp.inverse_transform(np.full((2, 4), np.nan))
    with pytest.raises(ValueError, match=r"init must have shape \(n_samples, n_features\) = \(60, 3\)"):
        kp.inverse_transform(Y, init=noisy[:5])
    with pytest.raises(ValueError, match="return_info must be True or False"):
        kp.inverse_transform(Y, return_info=1)
    for method in ("mds", "learned"):
        other = KernelProjection(4, gamma=2.0, preimage=method).fit(X)
        with pytest.raises(ValueError, match=f"init is the start of the iterative pre-images; preimage='{method}'"):
            other.inverse_transform(Y, init=noisy)
    pre = KernelProjection(4, kernel="precomputed").fit(make_kernel("rbf", gamma=2.0)(X))
    assert pre.preimage_ is None
    with pytest.raises(ValueError, match="inverse_transform is not available: .*precomputed"):
        pre.inverse_transform(Y)
    with pytest.raises(ValueError, match="preimage='learned': pre-images are points of a numeric input"):
        KernelProjection(4, kernel="precomputed", preimage="learned").fit(make_kernel("rbf", gamma=2.0)(X))
    call = KernelProjection(4, kernel=lambda A, B: (A @ B.T + 1.0) ** 2).fit(X)
    with pytest.raises(ValueError, match="refit with preimage='learned'"):
        call.inverse_transform(call.transform(noisy))
    learned = KernelProjection(4, kernel=lambda A, B: (A @ B.T + 1.0) ** 2, preimage="learned").fit(X)
    assert learned.inverse_transform(learned.transform(noisy)).shape == noisy.shape
    with pytest.raises(ValueError, match="preimage='fixed-point' is the Gaussian-kernel iteration"):
        KernelProjection(4, kernel="poly", preimage="fixed-point").fit(X)
    with pytest.raises(ValueError, match="preimage='mds' needs one of the kernels"):
        KernelProjection(4, kernel=lambda A, B: A @ B.T, preimage="mds").fit(X)
    for name, value, match in [
        ("preimage", "newton", r"preimage must be one of \('auto', 'fixed-point', 'gradient', 'mds', 'learned'\)"),
        ("preimage_alpha", -1.0, "preimage_alpha must be >= 0, got -1.0"),
        ("preimage_max_iter", 0, "preimage_max_iter must be >= 1, got 0"),
        ("preimage_tol", 0.0, "preimage_tol must be > 0, got 0.0"),
        ("preimage_neighbors", 0, "preimage_neighbors must be >= 1, got 0"),
        ("preimage_restart", "far", r"preimage_restart must be one of \('nearest', 'best'\)"),
    ]:
        with pytest.raises(ValueError, match=match):
            KernelProjection(4, **{name: value}).fit(X)


def test_learned_map_over_the_memory_budget_is_a_clear_error(curve):
    X, _, _ = curve
    with config_context(max_kernel_bytes=8 * 200 * 200):
        with pytest.raises(KernelMemoryError, match="learned pre-image map solves an 250 x 250"):
            KernelProjection(4, gamma=2.0, preimage="learned", eigen_solver="matrix-free",
                             random_state=0).fit(X)


# ----------------------------------------------------------- explained variance
def test_explained_variance_ratio_is_the_share_of_the_centred_trace(curve):
    X, _, _ = curve
    K = make_kernel("rbf", gamma=2.0)(X)
    trace = np.trace(center_gram(K)[0])
    full = KernelProjection(gamma=2.0).fit(X)
    np.testing.assert_allclose(full.explained_variance_ratio_, full.eigenvalues_ / trace, rtol=1e-12)
    assert abs(full.explained_variance_ratio_.sum() - 1.0) < 1e-8  # the whole rank
    for kw in BASES["matrix-free"], dict(eigen_solver="arpack"), dict(eigen_solver="randomized", random_state=0):
        part = KernelProjection(5, gamma=2.0, **kw).fit(X)
        np.testing.assert_allclose(part.explained_variance_ratio_, full.explained_variance_ratio_[:5],
                                   rtol=1e-8)
    unc = KernelProjection(5, gamma=2.0, centered=False).fit(X)
    np.testing.assert_allclose(unc.explained_variance_ratio_, unc.eigenvalues_ / np.trace(K), rtol=1e-12)


def test_nystroem_explained_variance_is_the_share_of_the_approximation(curve):
    X, _, _ = curve
    kp = KernelProjection(5, gamma=2.0, n_landmarks=40, random_state=0).fit(X)
    idx = select_landmarks(X, 40, "uniform", np.random.RandomState(0))
    np.testing.assert_array_equal(np.sort(idx), np.sort(kp.landmark_indices_))
    kern = make_kernel("rbf", gamma=2.0)
    Knm = kern(X, X[kp.landmark_indices_])
    approx = Knm @ np.linalg.pinv(kern(X[kp.landmark_indices_]), rcond=1e-10) @ Knm.T
    np.testing.assert_allclose(kp.explained_variance_ratio_,
                               kp.eigenvalues_ / np.trace(center_gram(approx)[0]), rtol=1e-6)


@pytest.mark.parametrize("kw", [dict(eigen_solver="dense"), dict(eigen_solver="randomized", random_state=0),
                                dict(eigen_solver="matrix-free", random_state=0),
                                dict(n_landmarks=100, random_state=0)],
                         ids=["dense", "randomized", "matrix-free", "nystroem"])
@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.99])
def test_fraction_is_the_smallest_dimension_reaching_it(curve, kw, fraction):
    X, _, _ = curve
    full = KernelProjection(gamma=2.0, **({} if "n_landmarks" in kw else dict(eigen_solver="dense"))).fit(X)
    if "n_landmarks" in kw:
        full = KernelProjection(gamma=2.0, **kw).fit(X)
    ratios = np.cumsum(full.explained_variance_ratio_)
    kp = KernelProjection(fraction, gamma=2.0, **kw).fit(X)
    D = kp.n_components_
    assert np.cumsum(kp.explained_variance_ratio_)[-1] >= fraction
    assert ratios[D - 1] >= fraction - 1e-9 and ratios[D - 2] < fraction


# ----------------------------------------------------------- relevant dimension
@pytest.mark.parametrize("kw", [dict(sigma=0.7), dict(kernel="poly", degree=2, gamma=0.5),
                                dict(sigma=0.7, n_landmarks=80, random_state=0)])
def test_rde_is_relevant_dimensions_dimension(kw):
    rng = np.random.default_rng(3)
    X = rng.uniform(-3, 3, (150, 2))
    y_reg = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(150)
    y_cls = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    rd_kw = {k: v for k, v in kw.items() if k not in ("n_landmarks", "random_state")}
    for y in (y_reg, y_cls):
        want = RelevantDimension(**rd_kw).fit(X, y).n_components_
        kp = KernelProjection("rde", **kw).fit(X, y)
        assert kp.n_components_ == want
        assert KernelProjection("rde", **kw).fit_transform(X, y).shape == (150, want)
    K = make_kernel("rbf", sigma=0.7)(X)
    pre = KernelProjection("rde", kernel="precomputed").fit(K, y_reg)
    assert pre.n_components_ == RelevantDimension(kernel="precomputed").fit(K, y_reg).n_components_


def test_rde_reads_string_labels_as_their_class_codes():
    """Class labels of any type are classes: strings give the D of their integer codes, and
    more than two classes are one +-1 target per class, fitted jointly as
    KernelPCRClassifier does (not the codes read as numbers)."""
    from sklearn.datasets import make_blobs

    from kpm import KernelPCRClassifier

    X, codes = make_blobs(300, centers=4, cluster_std=2.0, random_state=0)
    names = np.array(["w", "x", "y", "z"])
    for k in (2, 4):
        rows = codes < k
        want = KernelProjection("rde", sigma=2.0).fit(X[rows], codes[rows]).n_components_
        assert KernelProjection("rde", sigma=2.0).fit(X[rows], names[codes[rows]]).n_components_ == want
    assert want == KernelPCRClassifier(sigma=2.0).fit(X, names[codes]).relevant_dim_ == 14
    # the same codes as floats are a real target (measured: D = 15)
    assert KernelProjection("rde", sigma=2.0).fit(X, codes.astype(float)).n_components_ != want


def test_rde_needs_labels():
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match=r"n_components='rde' is the relevant dimension of labelled data: fit\(X, y\) needs y"):
        KernelProjection("rde").fit(X)
    with pytest.raises(ValueError, match="NaN"):
        KernelProjection("rde").fit(X, np.full(30, np.nan))


# ------------------------------------------------------------ memory budget
@pytest.mark.slow
def test_auto_solver_goes_matrix_free_over_the_memory_budget():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1500, 4))
    ref = KernelProjection(5, sigma=2.0, random_state=0).fit(X)
    assert ref.eigen_solver_ == "arpack"
    want = KernelProjection(0.3, sigma=2.0, eigen_solver="dense").fit(X).n_components_
    with config_context(max_kernel_bytes=8 * 1500 * 1500 - 1):
        kp = KernelProjection(5, sigma=2.0, random_state=0).fit(X)
        assert kp.eigen_solver_ == "matrix-free"
        np.testing.assert_allclose(kp.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
        np.testing.assert_allclose(kp.transform(X[:20]), ref.transform(X[:20]), atol=1e-6)
        frac = KernelProjection(0.3, sigma=2.0, random_state=0).fit(X)
        assert frac.eigen_solver_ == "matrix-free"
        assert frac.n_components_ == want
        with pytest.raises(KernelMemoryError, match="n_components=None asks for its whole spectrum"):
            KernelProjection(sigma=2.0).fit(X)
        # a kernel the matrix-free solver cannot evaluate blockwise keeps the kernel's own error
        with pytest.raises(KernelMemoryError, match="over the budget"):
            KernelProjection(5, kernel=lambda A, B: A @ B.T).fit(X)
        # Nyström stays Nyström
        assert KernelProjection(5, sigma=2.0, n_landmarks=100, random_state=0).fit(X).eigen_solver_ == "nystroem"


POLY7 = dict(kernel="poly", degree=7)


@pytest.mark.parametrize("family, kw", [
    ("subspace", {}), ("clusters", {}), ("duplicated", {}), ("tiny", {}), ("wide", {}),
    ("subspace", POLY7), ("full", POLY7),
], ids=["subspace", "clusters", "duplicated", "tiny", "wide", "subspace-poly7", "full-poly7"])
def test_learned_map_is_never_silently_worse_than_the_input(family, kw):
    """The default learned pre-image (alpha='auto') of every direction's coordinates, on >=
    1,000 fresh points: within 10 % of the input's error against the clean points (the
    coordinates determine the point, so the exact pre-image is the input), or the fit
    warned. The old default alpha = 1 was silently 5x to 5,000x worse on these families
    (10^5x and more with the polynomial kernel of degree 7, whose values on the coordinates
    reach 1e50). Not covered: the Gaussian kernel on data that fill their input space (the
    'full' family), where the noise level is not identifiable and the warning fires only
    for some draws."""
    clean, noisy, m = denoising_family(family, {"tiny": 12, "wide": 50, "full": 15}.get(family, 300))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kp = KernelProjection(preimage="learned", **kw).fit(noisy[:m])
    warned = any("learned pre-image map" in str(w.message) for w in caught)
    Z = kp.inverse_transform(kp.transform(noisy[m:]))
    assert warned or np.mean((Z - clean[m:]) ** 2) <= 1.1 * np.mean((noisy[m:] - clean[m:]) ** 2)


def _subspace_reconstruction(preimage, n=196, m=1000, seed=0):
    """Pre-images of the projection on every component of m fresh points of rank-2 data in
    R^11 (noise 0.02; n training points): (mse to the clean points, the input's, warnings)."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(11, 2)))[0]
    clean = 2 * rng.normal(size=(n + m, 2)) @ basis.T
    noisy = clean + 0.02 * rng.normal(size=clean.shape)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kp = KernelProjection(preimage=preimage).fit(noisy[:n])
        Z = kp.inverse_transform(kp.transform(noisy[n:]))
    msgs = [str(w.message) for w in caught if w.category is UserWarning]
    return np.mean((Z - clean[n:]) ** 2), np.mean((noisy[n:] - clean[n:]) ** 2), msgs


@pytest.mark.parametrize("preimage", ["fixed-point", "mds"])
def test_reconstruction_worse_than_the_input_is_warned(preimage):
    """Rank-2 data in R^11 with noise 0.02 (a user-data family of the fuzz harness): the
    pre-images of the projection on every component of 1,000 fresh points are 1.4x (fixed
    point) and 2,000x (MDS) further from the clean points than the points themselves, and
    inverse_transform returned them without a word. Its held-out check (Stein's estimate on
    held-out training points) now warns, naming the inputs."""
    mse, mse_input, msgs = _subspace_reconstruction(preimage)
    assert mse > 1.1 * mse_input
    assert any("do not reconstruct" in s and "keep the inputs" in s for s in msgs), msgs


def test_good_reconstruction_is_not_warned():
    """A noisy circle (60 training points): the pre-images of the projection on every
    component come back at the input's error on 1,000 fresh points, and nothing is warned."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 2 * np.pi, 1060)
    clean = np.c_[np.cos(a), np.sin(a)]
    noisy = clean + 0.1 * rng.normal(size=clean.shape)
    for preimage in ("auto", "mds"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            kp = KernelProjection(preimage=preimage).fit(noisy[:60])
            Z = kp.inverse_transform(kp.transform(noisy[60:]))
        assert np.mean((Z - clean[60:]) ** 2) <= 1.1 * np.mean((noisy[60:] - clean[60:]) ** 2)
        assert [w for w in caught if w.category is UserWarning] == []


def test_learned_map_far_from_the_origin_is_no_worse_than_the_input():
    # a noisy circle centred at (50, 50): without an intercept the learned map pulled the
    # pre-images of unseen points toward the origin (2 to 15 times the noisy points' own
    # error); with it, a projection on every component reconstructs them about as well as the
    # points themselves (60 training points; 1,000 fresh ones: 0.090 against the input's 0.010 before)
    rng = np.random.default_rng(3)
    t = rng.uniform(0, 2 * np.pi, 1060)
    clean = 50.0 + np.column_stack([np.cos(t), np.sin(t)])
    noisy = clean + 0.1 * rng.standard_normal(clean.shape)
    kp = KernelProjection(preimage="learned").fit(noisy[:60])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Z = kp.inverse_transform(kp.transform(noisy[60:]))
    input_error = np.mean((noisy[60:] - clean[60:]) ** 2)
    assert np.mean((Z - clean[60:]) ** 2) <= 1.1 * input_error


def _gaussian_subspace(n, m, seed, noise=0.0):
    """n training and m fresh points of rank-3 Gaussian data (scale 2) in R^40, with noise."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(40, 3)))[0]
    clean = 2 * rng.normal(size=(n + m, 3)) @ basis.T
    return clean, clean + noise * rng.normal(size=clean.shape)


def test_pre_images_of_points_outside_the_training_data_are_warned():
    """The projection on every component of exact rank-3 data in R^40 (120 training points,
    within 6.5 of the origin) reconstructs fresh points to 3e-11 per feature (median), but not
    a point 16 out: its MDS pre-image missed it by 3.1 per feature (the input: 0), and
    inverse_transform said nothing. It warns now, counting the targets whose pre-images are
    far from them in feature space: the far point, of the largest residual, and 35 fresh
    points at the edge of the training region (5.5 to 8.2 from the origin), whose pre-images
    missed them by 9e-5 to 0.27 per feature."""
    clean, _ = _gaussian_subspace(120, 1000, seed=3)
    far = clean[120:121] * 4.0 / np.linalg.norm(clean[120]) * 4.0  # 16 units out; training radius ~ 6
    test = np.vstack([clean[121:], far])
    kp = KernelProjection(preimage="mds").fit(clean[:120])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Z, info = kp.inverse_transform(kp.transform(test), return_info=True)
    per_point = np.mean((Z - test) ** 2, axis=1)
    assert per_point[-1] > 1.0 and np.median(per_point[:-1]) < 1e-10
    relative = info.objective / kp.kernel_.diag(Z)
    flagged = relative >= 0.1
    assert np.argmax(relative) == len(test) - 1 and 1 < np.count_nonzero(flagged) < 50
    assert np.min(per_point[flagged]) > 1e-5  # each one a failed reconstruction (the input: 0)
    msgs = [str(w.message) for w in caught if w.category is UserWarning]
    count = f"{np.count_nonzero(flagged)} of the 1000 targets"
    assert any("far from them in feature space" in s and count in s for s in msgs), msgs


def test_pre_images_of_an_unseen_cluster_are_warned_when_held_out_points_fail_too():
    """The learned map of 8 points of 4 clusters in R^6 (noise 0.02), one of them seen once,
    on 1,000 fresh points of 5 clusters: the 215 of the cluster absent from the training set
    came back 6.0 per feature from their clean values (the inputs: 4e-4), the others 4e-4.
    The held-out check leaves the single point of its cluster out, and its pre-image fails as
    well; a bar at the largest held-out residual (0.49) hid the absent cluster's (0.62), and
    inverse_transform said nothing. The bar is now four times the held-out residuals' upper
    quartile, and exactly those 215 targets are warned about."""
    rng = np.random.default_rng(7)
    centres = 3.0 * rng.normal(size=(5, 6))
    train_c, test_c = np.r_[0, 0, 0, 1, 1, 2, 2, 3], rng.integers(0, 5, 1000)
    X = centres[train_c] + 0.02 * rng.normal(size=(8, 6))
    clean = centres[test_c]
    test = clean + 0.02 * rng.normal(size=clean.shape)
    kp = KernelProjection(preimage="learned").fit(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Z, info = kp.inverse_transform(kp.transform(test), return_info=True)
    per_point, absent = np.mean((Z - clean) ** 2, axis=1), test_c == 4
    assert np.mean(per_point[absent]) > 1.0 > 1e-3 > np.mean(per_point[~absent])
    msgs = [str(w.message) for w in caught if w.category is UserWarning]
    count = f"{np.count_nonzero(absent)} of the 1000 targets"
    assert any("far from them in feature space" in s and count in s for s in msgs), msgs
    relative = info.objective / kp.kernel_.diag(Z)
    assert np.min(relative[absent]) > 0.1 > np.max(relative[~absent])


@pytest.mark.parametrize("preimage", ["auto", "mds"])
def test_pre_images_of_points_near_the_training_data_are_not_warned(preimage):
    """Negative controls: fresh points inside the training region of exact rank-3 data, and
    a noisy circle in 2 of 50 dimensions, where every point lies off the span of the training
    images (the pre-images there are the denoised points: their error against the clean
    points is below the inputs'), give no warning of failed pre-images."""
    clean, _ = _gaussian_subspace(120, 1000, seed=3)
    inside = clean[120:][np.linalg.norm(clean[120:], axis=1) < 3.0]
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 2 * np.pi, 1060)
    circle = np.hstack([np.c_[np.cos(a), np.sin(a)], np.zeros((1060, 48))])
    noisy = circle + 0.1 * rng.normal(size=circle.shape)
    # exact data: reconstructed to the solver's tolerance; the circle: no further from the clean points
    for train, test, truth, slack in ((clean[:120], inside, inside, 1e-6), (noisy[:60], noisy[60:], circle[60:], 0.0)):
        kp = KernelProjection(preimage=preimage).fit(train)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Z = kp.inverse_transform(kp.transform(test))
        assert not any("far from them in feature space" in str(w.message) for w in caught)
        assert np.mean((Z - truth) ** 2) <= 1.1 * np.mean((test - truth) ** 2) + slack
