import numpy as np
import pytest

from helpers import random_dna
from kpm import KernelPCADenoiser, KernelPCAL1, KernelProjection, KernelProjectionMachine
from kpm.config import config_context
from kpm.kernels import make_kernel
from kpm_reproduce.splice import one_hot_dna
from kpm.kernels import WeightedDegreeKernel, encode_strings, weighted_degree_kernel


def naive_wd(a, b, d):
    """Reference: sum_j (d - j + 1) sum_i 1[a[i:i+j] == b[i:i+j]]."""
    L = len(a)
    return sum(
        (d - j + 1) * sum(a[i : i + j] == b[i : i + j] for i in range(L - j + 1))
        for j in range(1, d + 1)
    )


def _random_strings(n, L, seed, alphabet="ACGT"):
    S = random_dna(n, L, seed, alphabet)
    S[1] = S[0][: L // 2] + S[2][L // 2 :]  # long shared prefixes/suffixes
    S[3] = S[4]
    return S


@pytest.mark.parametrize("degree", [1, 2, 4, 7, 20])
def test_equals_naive_reference(degree):
    A = _random_strings(15, 11, degree)
    B = _random_strings(9, 11, degree + 100)
    K = weighted_degree_kernel(A, B, degree)
    R = np.array([[naive_wd(a, b, degree) for b in B] for a in A])
    assert K.shape == (15, 9)
    assert np.array_equal(K, R)
    assert np.array_equal(weighted_degree_kernel(A, B, degree, method="broadcast"), R)
    # an alphabet the other set lacks, and unicode letters
    C = np.array(["".join(x) for x in np.random.default_rng(degree).choice(list("ACGTNé"), (6, 11))])
    R2 = np.array([[naive_wd(a, b, degree) for b in C] for a in A])
    assert np.array_equal(weighted_degree_kernel(A, C, degree), R2)
    KA = weighted_degree_kernel(A, degree=degree)
    assert np.array_equal(KA, np.array([[naive_wd(a, b, degree) for b in A] for a in A]))


def test_psd_symmetric_and_blockwise():
    S = _random_strings(40, 25, 1)
    K = weighted_degree_kernel(S, S, 6)
    assert np.allclose(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-8 * K.max()
    from kpm.kernels.weighted_degree import _wd_codes

    C = encode_strings(S)
    assert np.array_equal(_wd_codes(C, C, 6, block_rows=3), K)
    with config_context(block_bytes=1000):
        assert np.array_equal(weighted_degree_kernel(S, S, 6), K)
        assert np.array_equal(weighted_degree_kernel(S, S, 6, method="broadcast"), K)


def test_degree_one_is_one_hot_linear_kernel():
    S = _random_strings(20, 13, 2)
    H = one_hot_dna(S)
    assert H.shape == (20, 52)
    assert np.allclose(weighted_degree_kernel(S, S, 1), H @ H.T)


def test_callable_kernel_object():
    S = _random_strings(12, 10, 3)
    k = WeightedDegreeKernel(degree=4)
    kern = make_kernel(k)
    assert np.array_equal(kern(S), weighted_degree_kernel(S, S, 4))
    assert np.array_equal(kern(S[:3], S), weighted_degree_kernel(S[:3], S, 4))
    kn = WeightedDegreeKernel(degree=4, normalize=True)
    Kn = kn(S)
    assert np.allclose(np.diag(Kn), 1.0)
    assert k == WeightedDegreeKernel(4) and k != kn


def test_bad_input():
    with pytest.raises(ValueError, match="equal length"):
        weighted_degree_kernel(["ACGT", "ACG"], degree=2)
    with pytest.raises(ValueError, match="equal length"):
        weighted_degree_kernel(["ACGT"], ["ACG"], degree=2)
    with pytest.raises(ValueError, match="strings"):
        weighted_degree_kernel(np.ones((3, 4)), degree=2)
    with pytest.raises(ValueError, match="strings"):
        weighted_degree_kernel(["ACGT", 5], degree=2)
    with pytest.raises(ValueError, match="single string"):
        weighted_degree_kernel("ACGT", degree=2)
    with pytest.raises(ValueError, match="empty"):
        weighted_degree_kernel([], degree=2)
    with pytest.raises(ValueError, match="degree"):
        weighted_degree_kernel(["ACGT"], degree=0)
    with pytest.raises(ValueError, match="degree"):
        WeightedDegreeKernel(degree=2.5)
    with pytest.raises(ValueError, match="method"):
        weighted_degree_kernel(["ACGT"], degree=2, method="fast")


def test_select_kernel_over_wd_degrees():
    from kpm.relevance.dimension import select_kernel

    S = _random_strings(60, 20, 9)
    y = np.array([1.0 if s[5:8] == s[12:15] or s[10] == "A" else -1.0 for s in S])
    ranking = select_kernel([WeightedDegreeKernel(d) for d in (1, 3, 6)], S, y)
    assert sorted(r.index for r in ranking) == [0, 1, 2]
    assert all(isinstance(r.candidate, WeightedDegreeKernel) for r in ranking)
    assert ranking[0].neg_log_likelihood <= ranking[-1].neg_log_likelihood


def test_string_inputs_are_not_coerced():
    # a number inside a list was turned into the string '5'
    with pytest.raises(ValueError, match="must contain only strings, found a int"):
        weighted_degree_kernel(["A", 5], degree=1)
    with pytest.raises(ValueError, match="normalize must be True or False"):
        WeightedDegreeKernel(2, normalize="yes")
    with pytest.raises(ValueError, match="method must be one of"):
        WeightedDegreeKernel(2, method="fast")
    with pytest.raises(ValueError, match="alphabet"):
        one_hot_dna(["ACGT"], alphabet="AACG")
    S = ["ACGT", "AGGT"]
    np.testing.assert_array_equal(weighted_degree_kernel(S, degree=2), weighted_degree_kernel(np.array(S), degree=2))


# ------------------------------------------------ every estimator that takes a kernel
def _motif_data(n, seed, flip=0.0):
    """Random DNA strings; class 'motif' has GATTACA planted at position 12 (training
    labels flipped with probability ``flip``)."""
    rng = np.random.default_rng(seed)
    S = ["".join(rng.choice(list("ACGT"), 30)) for _ in range(n)]
    has = rng.integers(0, 2, n)
    S = np.array([s[:12] + "GATTACA" + s[19:] if h else s for s, h in zip(S, has)])
    noisy = np.where(rng.random(n) < flip, 1 - has, has)
    return S, np.where(noisy == 1, "motif", "none"), np.where(has == 1, "motif", "none")


def test_kernel_projection_on_dna_strings_equals_the_precomputed_route():
    S, _, _ = _motif_data(80, 0)
    St, _, _ = _motif_data(30, 1)
    kernel = WeightedDegreeKernel(degree=5, normalize=True)
    proj = KernelProjection(8, kernel=kernel).fit(S)
    K, Kt = kernel(S), kernel(St, S)
    ref = KernelProjection(8, kernel="precomputed").fit(K)
    np.testing.assert_array_equal(proj.transform(St), ref.transform(Kt))
    np.testing.assert_array_equal(proj.eigenvalues_, ref.eigenvalues_)
    np.testing.assert_allclose(proj.transform(S), proj.fit_transform(S), atol=1e-12)
    # by name, with the family's own parameter through kernel_params
    named = KernelProjection(8, kernel="wd", degree=5, kernel_params={"normalize": True}).fit(S)
    assert named.kernel_ == kernel
    np.testing.assert_array_equal(named.transform(St), proj.transform(St))
    # the Nystroem route and the residual column need blocks and k(x, x) of strings
    nys = KernelProjection(8, kernel=kernel, eigen_solver="nystroem", n_landmarks=40, residual=True,
                           random_state=0).fit(S)
    assert nys.transform(St).shape == (30, nys.n_components_ + 1)
    assert KernelPCAL1(3, kernel=kernel, random_state=0).fit(S).transform(St).shape == (30, 3)
    with pytest.raises(ValueError, match="must contain strings"):
        proj.transform(np.ones(3))
    with pytest.raises(ValueError, match="equal length"):
        proj.transform(["ACGT", "ACGA"])


def test_kernel_projection_machine_learns_a_motif_in_dna_strings():
    S, y, _ = _motif_data(200, 0, flip=0.1)
    St, _, yt = _motif_data(300, 1)
    kernel = WeightedDegreeKernel(degree=5)
    model = KernelProjectionMachine(kernel=kernel, max_components=30, random_state=0, formulation="paper").fit(S, y)
    assert np.mean(model.predict(St) == yt) >= 0.95  # chance: 0.5
    # the same model as the precomputed route, to the bit
    ref = KernelProjectionMachine(kernel="precomputed", max_components=30, random_state=0, formulation="paper").fit(kernel(S), y)
    assert model.n_components_ == ref.n_components_
    for key in ref.selection_curve_:
        np.testing.assert_array_equal(model.selection_curve_[key], ref.selection_curve_[key])
    np.testing.assert_array_equal(model.decision_function(St), ref.decision_function(kernel(St, S)))
    # a list of string kernels: the KPM picks one of them by cross-validation
    multi = KernelProjectionMachine(kernel=[WeightedDegreeKernel(d) for d in (1, 5)], max_components=30,
                                    random_state=0, formulation="paper").fit(S, y)
    assert multi.kernel_ in (WeightedDegreeKernel(1), WeightedDegreeKernel(5))
    with pytest.raises(ValueError, match="cannot mix"):
        KernelProjectionMachine(kernel=[kernel, "rbf"], formulation="paper").fit(S, y)


def test_denoising_refuses_string_kernels():
    S, _, _ = _motif_data(20, 0)
    with pytest.raises(ValueError, match="non-numeric input"):
        KernelPCADenoiser(kernel=WeightedDegreeKernel(3)).fit(S)
