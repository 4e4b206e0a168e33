import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kpm import DegenerateKernelWarning
from kpm.kernels import make_kernel
from kpm.relevance.dimension import RelevantDimension, relevant_dimension_from_contributions, select_kernel
from kpm.plotting import plot_relevance
from kpm.kernels import WeightedDegreeKernel, weighted_degree_kernel


@parametrize_with_checks([RelevantDimension()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _eigen_labels(X, sigma, k, noise, seed):
    """Targets built from the leading k eigenvectors of the RBF kernel matrix plus noise."""
    rng = np.random.default_rng(seed)
    K = make_kernel("rbf", sigma=sigma)(X)
    w, U = np.linalg.eigh(K)
    U = U[:, ::-1]
    n = len(X)
    coef = rng.choice([-1.0, 1.0], size=k) * rng.uniform(1.0, 2.0, size=k)
    # s_i = coef_i (|.| in [1, 2]) for i <= k, N(0, (0.05 noise)^2) beyond
    return U[:, :k] @ coef + 0.05 * noise * rng.standard_normal(n)


@pytest.mark.parametrize("k", [1, 3, 7])
def test_recovers_known_dimension_from_eigenvectors(k):
    rng = np.random.default_rng(k)
    X = rng.uniform(-2, 2, size=(150, 2))
    y = _eigen_labels(X, 1.0, k, noise=1.0, seed=k)
    model = RelevantDimension(sigma=1.0).fit(X, y)
    assert model.n_components_ == k
    assert model.sigma1_sq_ > 50 * model.sigma2_sq_


def test_recovers_dimension_of_smooth_function_of_leading_eigenfunctions():
    # the population eigenfunctions of a linear kernel on anisotropic Gaussian data are
    # the coordinate axes; y depends on the first two only (plus label noise)
    rng = np.random.default_rng(0)
    n = 300
    X = rng.standard_normal((n, 6)) * np.array([5.0, 4.0, 1.0, 0.8, 0.6, 0.5])
    y = 0.4 * X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n)
    model = RelevantDimension(kernel="linear").fit(X, y)
    assert model.n_components_ == 2


def test_two_component_formula_matches_definition():
    rng = np.random.default_rng(1)
    s = np.r_[rng.normal(0, 5, 4), rng.normal(0, 0.5, 20)]
    dim, nll, s1, s2 = relevant_dimension_from_contributions(s)
    n = len(s)
    for d in (1, 4, 10, n - 1):
        a = np.mean(s[:d] ** 2)
        b = np.mean(s[d:] ** 2)
        assert np.isclose(nll[d - 1], d / n * np.log(a) + (n - d) / n * np.log(b))
        assert np.isclose(s1[d - 1], a) and np.isclose(s2[d - 1], b)
    assert dim == int(np.argmin(nll)) + 1 == 4
    with pytest.raises(ValueError, match="NaN"):
        relevant_dimension_from_contributions(np.array([1.0, np.nan, 2.0]))


def test_partial_eigensolver_gives_same_dimension():
    # (exact when K is nonsingular: the partial solve cannot see K's null space)
    rng = np.random.default_rng(2)
    X = rng.uniform(-2, 2, size=(200, 2))
    y = _eigen_labels(X, 0.3, 4, noise=1.0, seed=2)
    full = RelevantDimension(sigma=0.3).fit(X, y)
    assert full.rank_ == 200
    part = RelevantDimension(sigma=0.3, max_components=30, eigen_solver="dense").fit(X, y)
    assert part.n_components_ == full.n_components_ == 4
    assert np.allclose(part.neg_log_likelihood_[:30], full.neg_log_likelihood_[:30])


def test_duplicated_inputs_do_not_create_spurious_dimension():
    # duplicates with equal labels give null-space directions of K with s_i = 0
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 3))
    y = np.sign(X[:, 0] + 0.3 * rng.standard_normal(80))
    Xd = np.r_[X, X[:30]]
    yd = np.r_[y, y[:30]]
    m = RelevantDimension(sigma=0.3, fit_intercept=False).fit(Xd, yd)
    assert m.rank_ <= 80
    assert m.n_directions_ == m.rank_
    assert m.n_components_ < m.rank_ - 5
    # with the intercept, one direction of the rank completes the constant
    c = RelevantDimension(sigma=0.3).fit(Xd, yd)
    assert c.rank_ == m.rank_ and c.n_directions_ == c.rank_ - 1
    assert c.n_components_ < c.rank_ - 5


def test_transform_of_training_points_is_empirical_kernel_map():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 2))
    y = np.sin(X[:, 0])
    m = RelevantDimension(sigma=1.0).fit(X, y)
    Z = m.transform(X)
    d = m.n_components_
    assert np.allclose(Z, m.eigenvectors_[:, :d] * np.sqrt(m.eigenvalues_[:d]), atol=1e-8)


def test_select_kernel_ranks_the_generating_kernel_first():
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(150, 2))
    y = _eigen_labels(X, 1.0, 5, noise=1.0, seed=5)
    cands = [{"kernel": "rbf", "sigma": s} for s in (0.05, 1.0, 20.0)]
    ranking = select_kernel(cands, X, y)
    assert [r.rank for r in ranking] == [1, 2, 3]
    assert ranking[0].candidate == {"kernel": "rbf", "sigma": 1.0}
    assert ranking[0].n_components == 5
    nll = [r.neg_log_likelihood for r in ranking]
    assert nll == sorted(nll)
    # Kernel objects and names work as candidates too
    r2 = select_kernel([make_kernel("rbf", sigma=1.0), "linear"], X, y)
    assert r2[0].index == 0


def test_select_kernel_bad_input():
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match="empty"):
        select_kernel([], X, y)
    with pytest.raises(ValueError, match="candidate"):
        select_kernel([3.5], X, y)
    with pytest.raises(ValueError, match="unknown kernel"):
        select_kernel(["nope"], X, y)


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = X[:, 0].copy()
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RelevantDimension().fit(X, y)
    with pytest.raises(ValueError, match=r"max_components=25 is larger than n - 1 = 19 \(n = 20 training samples\)"):
        RelevantDimension(max_components=25).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="max_components must be >= 1, got 0"):
        RelevantDimension(max_components=0).fit(X, X[:, 0])
    with pytest.raises(ValueError, match=r"null_space must be one of \('exclude', 'noise'\), got 'keep'"):
        RelevantDimension(null_space="keep").fit(X, X[:, 0])
    with pytest.raises(ValueError, match=r"random_state must be None, an integer in \[0, 2\*\*32 - 1\]"):
        RelevantDimension(max_components=3, random_state=-1).fit(X, X[:, 0])


def test_string_input_with_weighted_degree_kernel():
    rng = np.random.default_rng(6)
    S = np.array(["".join(rng.choice(list("ACGT"), 15)) for _ in range(40)])
    y = np.array([1.0 if s[7] == "A" else -1.0 for s in S])
    m = RelevantDimension(kernel=WeightedDegreeKernel(3)).fit(S, y)
    K = weighted_degree_kernel(S, S, 3)
    p = RelevantDimension(kernel="precomputed").fit(K, y)
    assert m.n_components_ == p.n_components_
    assert np.allclose(m.neg_log_likelihood_, p.neg_log_likelihood_)
    assert m.transform(S[:5]).shape == (5, m.n_components_)
    with pytest.raises(ValueError, match="equal length"):
        m.transform(np.array(["ACG", "ACGT"]))
    with pytest.raises(ValueError, match="strings"):
        RelevantDimension(kernel=WeightedDegreeKernel(3)).fit(np.ones((40, 15)), y)


def test_plot_relevance(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(7)
    X = rng.uniform(-2, 2, size=(80, 1))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(80)
    m = RelevantDimension(sigma=0.5).fit(X, y)
    ax = plot_relevance(m)
    assert len(ax.lines) >= 2
    ax.figure.savefig(tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 0
    with pytest.raises(ValueError, match="fitted"):
        plot_relevance(RelevantDimension())


def test_null_space_option():
    # few distinct inputs, label noise within groups (like titanic): 'noise' keeps the
    # within-group contributions in the noise component, the cut stays within the rank
    rng = np.random.default_rng(8)
    centres = rng.standard_normal((6, 2)) * 2
    g = rng.integers(0, 6, 200)
    X = centres[g]
    y = np.where(rng.random(200) < 0.8, np.sign(centres[g, 0]), -np.sign(centres[g, 0]))
    ex = RelevantDimension(sigma=1.0, fit_intercept=False).fit(X, y)
    no = RelevantDimension(sigma=1.0, null_space="noise", fit_intercept=False).fit(X, y)
    assert ex.rank_ == no.rank_ == 6
    assert ex.n_directions_ == 6 and no.n_directions_ == 200
    assert len(ex.neg_log_likelihood_) == 5 and len(no.neg_log_likelihood_) == 6
    assert 1 <= no.n_components_ <= 6
    # with the intercept: the constant lies in the span of the 6 group indicators, so one of
    # the 6 directions completes it, and the 200 directions of 'noise' are 199
    ex = RelevantDimension(sigma=1.0).fit(X, y)
    no = RelevantDimension(sigma=1.0, null_space="noise").fit(X, y)
    assert ex.rank_ == no.rank_ == 6
    assert ex.n_directions_ == 5 and no.n_directions_ == 199
    assert len(ex.neg_log_likelihood_) == 4 and len(no.neg_log_likelihood_) == 5
    assert 1 <= ex.n_components_ <= 6 and 1 <= no.n_components_ <= 6
    with pytest.raises(ValueError, match="null_space"):
        RelevantDimension(null_space="keep").fit(X, y)


# ------------------------------------------------ robustness (regression tests)
def _rbf_data(n=40, seed=9):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("max_components", [None, 5])
def test_non_psd_precomputed_rejected(max_components):
    # were accepted (non-PSD) or reported as "rank 0" (negative definite)
    X, y = _rbf_data()
    K = make_kernel("rbf", sigma=1.0)(X)
    A = np.random.default_rng(0).standard_normal(K.shape)
    with pytest.raises(ValueError, match="precomputed kernel matrix is not positive semi-definite: it has the eigenvalue"):
        RelevantDimension(kernel="precomputed", max_components=max_components).fit(K + (A + A.T), y)
    with pytest.raises(ValueError, match="not positive semi-definite.*negated or a distance matrix"):
        RelevantDimension(kernel="precomputed", max_components=max_components).fit(-K, y)
    with pytest.raises(ValueError, match="not symmetric"):
        RelevantDimension(kernel="precomputed", max_components=max_components).fit(K + 1e-3 * np.triu(K), y)
    m = RelevantDimension(kernel="precomputed", max_components=max_components).fit(K, y)
    with pytest.raises(ValueError, match="features|one column per training sample"):
        m.transform(K[:, :5])


def test_select_kernel_checks_and_names_each_candidate():
    X, y = _rbf_data()
    K = make_kernel("rbf", sigma=1.0)(X)
    with pytest.raises(ValueError, match=r"^select_kernel, candidate 0 \('precomputed'\): the precomputed kernel matrix is not positive"):
        select_kernel(["precomputed"], -K, y)
    with pytest.warns(DegenerateKernelWarning, match=r"^select_kernel, candidate 1 \(\{'sigma': 0.0001\}\): the kernel matrix is numerically the identity"):
        ranking = select_kernel([{"sigma": 1.0}, {"sigma": 1e-4}], X, y)
    assert ranking[0].index == 0
    with pytest.raises(ValueError, match="candidate 0.*identical in feature space"):
        with pytest.warns(DegenerateKernelWarning, match="candidate 0"):
            select_kernel([{"sigma": 1e9}], X, y)
    with pytest.raises(ValueError, match="candidates must be a sequence"):
        select_kernel(3, X, y)
    assert len(select_kernel(WeightedDegreeKernel(2), np.array(["ACGT", "ACGA", "TCGA", "TTGA"]), [1.0, 0.5, -1.0, 2.0])) == 1
    with pytest.raises(ValueError, match="max_components must be >= 1, got -1"):
        select_kernel(["rbf"], X, y, max_components=-1)


def test_identical_samples_and_rank_one_kernels():
    X, y = _rbf_data()
    with pytest.warns(DegenerateKernelWarning, match="numerically constant"):
        with pytest.raises(ValueError, match=r"numerical rank 1 \(it is constant: all training samples are identical in feature space\)"):
            RelevantDimension().fit(np.ones_like(X), y)
    with pytest.raises(ValueError, match=r"numerical rank 1 \(the training samples span a single direction"):
        RelevantDimension(kernel="linear").fit(X[:, :1], y)
    with pytest.raises(ValueError, match=r"numerical rank 0 \(it is zero\)"):
        RelevantDimension(kernel="linear").fit(np.zeros_like(X), y)
    with pytest.raises(ValueError, match="overflowed float64"):
        RelevantDimension(kernel="linear").fit(X * 1e200, y)


def test_contributions_function_validates_its_input():
    s = np.random.default_rng(0).standard_normal(12)
    total = float(s @ s)
    for bad, match in ((np.nan, "total must be finite"), (-1.0, "total must be >= 0"),
                       (0.5 * total, "below the sum of the squared contributions"), ("1", "real number")):
        with pytest.raises(ValueError, match=match):
            relevant_dimension_from_contributions(s, total=bad)
    assert relevant_dimension_from_contributions(s, total=total)[0] == relevant_dimension_from_contributions(s)[0]
    with pytest.raises(ValueError, match="n must be"):
        relevant_dimension_from_contributions(s, n=2.5)
    with pytest.raises(ValueError, match="got 12 contributions for n=5"):
        relevant_dimension_from_contributions(s, n=5)
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="max_components must be"):
            relevant_dimension_from_contributions(s, max_components=bad)
    with pytest.raises(ValueError, match="real numbers"):
        relevant_dimension_from_contributions(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        relevant_dimension_from_contributions(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="overflow"):
        relevant_dimension_from_contributions(np.full(4, 1e300))


def test_bad_parameters_named():
    X, y = _rbf_data()
    with pytest.raises(ValueError, match="eigen_solver must be one of"):
        RelevantDimension(max_components=3, eigen_solver="lapack").fit(X, y)
    with pytest.raises(ValueError, match="max_components must be an integer >= 1 or None, got 3.0"):
        RelevantDimension(max_components=3.0).fit(X, y)
    # string labels are class labels (test_class_labels_are_coded_as_the_classifiers_code_them):
    # one class is no labelling
    with pytest.raises(ValueError, match="only one class"):
        RelevantDimension().fit(X, np.array(["a"] * 40))
    m = RelevantDimension().fit(X, y)
    with pytest.raises(ValueError, match="max_index must be >= 1"):
        plot_relevance(m, max_index=0)
    with pytest.raises(ValueError, match="log must be True or False"):
        plot_relevance(m, log="yes")


def test_select_kernel_rejects_complex_input():
    # numeric candidates converted X with np.asarray(dtype=float): the imaginary part was dropped
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    y = np.sign(X[:, 0])
    with pytest.raises(ValueError, match="[Cc]omplex"):
        select_kernel([{"kernel": "rbf", "sigma": 1.0}], X + 1j, y)


def test_select_kernel_with_arguments_in_another_order_names_the_problem():
    # the whole arrays were written into the message (up to a thousand characters)
    rng = np.random.default_rng(12)
    X = rng.standard_normal((200, 2))
    y = np.sign(X[:, 0])
    cands = [{"kernel": "rbf", "sigma": s} for s in (0.5, 1.0)]
    for args, match in [
        ((X, cands, y), r"candidates must be a list of kernels, got an array of shape \(200, 2\).*"
                        r"select_kernel\(candidates, X, y\) \(the candidates were passed as X\)"),
        ((X, y, cands), r"got an array of shape \(200, 2\).*\(the candidates were passed as y\)"),
        ((y, X, cands), r"got an array of shape \(200,\).*\(the candidates were passed as y\)"),
        ((cands, y, X), r"X is 1-D \(an array of shape \(200,\)\) and y is 2-D .*X and y swapped"),
        ((cands, cands, y), "X is a list of kernel candidates, not data"),
    ]:
        with pytest.raises(ValueError, match=match) as info:
            select_kernel(*args)
        assert len(str(info.value)) < 200 and "[" not in str(info.value).split(":")[0]


def test_select_kernel_with_ragged_x_says_x_is_not_numeric_samples():
    # the argument-order check read the dimension of a ragged list through numpy, whose own
    # message ("setting an array element with a sequence") escaped (found by the fuzz harness)
    ragged = [[0.1, 0.2], [0.3], [0.4, 0.5]]
    with pytest.raises(ValueError, match=r"select_kernel, candidate 0 .*X must be numeric samples"):
        select_kernel([{"kernel": "rbf", "sigma": 0.5}], ragged, np.array([1.0, -1.0, 1.0]))


def test_select_kernel_fit_intercept_is_passed_on():
    rng = np.random.default_rng(13)
    X = rng.uniform(-2, 2, (80, 2))
    y = np.sin(2 * X[:, 0]) + 5.0 + 0.1 * rng.standard_normal(80)
    cands = [{"kernel": "rbf", "sigma": s} for s in (0.5, 1.0)]
    for fit_intercept in (True, False):
        ranking = select_kernel(cands, X, y, fit_intercept=fit_intercept)
        for r in ranking:
            m = RelevantDimension(sigma=r.candidate["sigma"], fit_intercept=fit_intercept).fit(X, y)
            assert r.n_components == m.n_components_
            assert np.isclose(r.neg_log_likelihood, m.min_neg_log_likelihood_)


def test_class_labels_are_coded_as_the_classifiers_code_them():
    """Two classes: one +-1 target, whatever the labels' type; more: one +-1 target per class
    (kpm.validation.targets.relevance_targets), their contributions fitted jointly."""
    from sklearn.datasets import make_blobs

    X, codes = make_blobs(200, centers=3, cluster_std=2.0, random_state=1)
    rows = codes < 2
    pm = np.where(codes[rows] == 1, 1.0, -1.0)
    ref = RelevantDimension(sigma=2.0).fit(X[rows], pm)
    for labels in (np.array(["no", "yes"])[codes[rows]], codes[rows], codes[rows] == 1):
        rd = RelevantDimension(sigma=2.0).fit(X[rows], labels)
        np.testing.assert_array_equal(rd.s_, ref.s_)
        assert rd.n_components_ == ref.n_components_
    three = RelevantDimension(sigma=2.0).fit(X, np.array(["a", "b", "c"])[codes])
    assert three.s_.shape == (200, 3) and three.y_mean_.shape == (3,)
    np.testing.assert_allclose(three.y_mean_, 2 * np.bincount(codes) / 200 - 1)
    with pytest.raises(ValueError, match="NaN"):
        RelevantDimension(sigma=2.0).fit(X, np.where(codes == 0, np.nan, 1.0))


def _ringnorm(n, seed):
    """Breiman's ringnorm (20 dimensions): class +1 N(0, 4 I), class -1 N(2/sqrt(20), I)."""
    rng = np.random.RandomState(seed)
    y = np.where(rng.rand(n) < 0.5, 1, -1)
    X = np.where(y[:, None] > 0, 2.0 * rng.randn(n, 20), rng.randn(n, 20) + 2.0 / np.sqrt(20))
    return X, y


def test_likelihood_does_not_depend_on_the_basis_of_tied_eigenvalues():
    # at a width far below the distances, hundreds of eigenvalues lie within rounding of 1
    # and the eigensolver's basis of them depends on the order of the samples; the split of
    # y's sum of squares over that basis moved -log l by up to 0.24 under a permutation
    X, y = _ringnorm(400, 0)
    perm = np.random.RandomState(5).permutation(len(y))
    for sigma in (0.2, 0.355):
        with pytest.warns(DegenerateKernelWarning):
            a = RelevantDimension(sigma=sigma).fit(X, y)
            b = RelevantDimension(sigma=sigma).fit(X[perm], y[perm])
        assert abs(a.min_neg_log_likelihood_ - b.min_neg_log_likelihood_) < 1e-6


@pytest.mark.parametrize("seed", [0, 1])
def test_select_kernel_does_not_prefer_a_near_identity_kernel(seed):
    # with the intercept, the labels of the points isolated at a small width (one class of
    # ringnorm) lay in the span of the constant and their unit eigenvectors, the directions of
    # the other class's contrasts had contributions ~0 and the likelihood rewarded that: the
    # width 0.63 (d_hat 340 of 400) ranked first and kernel PCR there had 51 % test error
    from sklearn.svm import SVC

    from kpm import KernelPCRClassifier

    X, y = _ringnorm(400, seed)
    Xt, yt = _ringnorm(2000, 100 + seed)
    cands = [{"kernel": "rbf", "sigma": s} for s in np.logspace(-0.7, 1.3, 9)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateKernelWarning)
        best = select_kernel(cands, X, y)[0]
    clf = KernelPCRClassifier(sigma=best.candidate["sigma"]).fit(X, y)
    svc = SVC().fit(X, y)  # the reference: the SVM at scikit-learn's default width
    assert 1 - clf.score(Xt, yt) <= 1 - svc.score(Xt, yt) + 0.01


def test_null_space_noise_counts_rows_repeated_once():
    # 50 points repeated 4 times with their targets: the 150 directions that separate the
    # copies carry exactly 0, and kept as noise they made d_hat the rank less one (49)
    rng = np.random.RandomState(0)
    X = rng.uniform(-3, 3, (50, 2))
    y = np.sin(X[:, 0]) * X[:, 1] + 0.1 * rng.randn(50)
    once = RelevantDimension(null_space="noise").fit(X, y)
    rep = RelevantDimension(null_space="noise").fit(np.repeat(X, 4, 0), np.repeat(y, 4))
    assert rep.n_directions_ == once.n_directions_ == 49
    assert rep.n_components_ == once.n_components_ < 30
    # the same curve: every s_i^2 is 4 times as large
    np.testing.assert_allclose(rep.neg_log_likelihood_, once.neg_log_likelihood_ + np.log(4), atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("target", ["labels", "three_classes", "real"])
def test_kernel_pcr_loo_error_is_the_error_of_leave_one_out_refits(fit_intercept, target):
    """select_kernel's loo_error: the closed form against refitting the least squares fit on
    the same n_components_ eigenvectors (and the constant) without each point."""
    from kpm.relevance.dimension import kernel_pcr_loo_error
    from kpm.validation import relevance_targets

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    f = np.sin(X[:, 0]) + X[:, 1]
    y = {"labels": (f > 0).astype(int), "three_classes": np.digitize(f, [-0.5, 0.5]),
         "real": f + 0.3 * rng.normal(size=60)}[target]
    est = RelevantDimension(sigma=1.0, fit_intercept=fit_intercept).fit(X, y)
    Y = relevance_targets(y, "test")
    U = est.eigenvectors_[:, : est.n_components_]
    A = np.column_stack([np.ones(60), U]) if fit_intercept else U
    left_out = np.empty_like(Y)
    for i in range(60):
        keep = np.arange(60) != i
        coef = np.linalg.lstsq(A[keep], Y[keep], rcond=None)[0]
        left_out[i] = A[i] @ coef
    if target == "real":
        expected = np.mean((Y - left_out) ** 2)
    elif target == "labels":
        expected = np.mean(left_out[:, 0] * Y[:, 0] <= 0)
    else:
        expected = np.mean(left_out.argmax(axis=1) != Y.argmax(axis=1))
    assert kernel_pcr_loo_error(est, Y, regression=target == "real") == pytest.approx(expected, abs=1e-12)
    assert 0 < expected  # a non-trivial check: some left-out point is wrong
