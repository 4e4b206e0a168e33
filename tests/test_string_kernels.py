import numpy as np
import pytest

from kpm._config import config_context
from kpm.kernels import make_kernel
from kpm.string_kernels import (
    SPLICE_CODE,
    WeightedDegreeKernel,
    decode_splice,
    encode_strings,
    one_hot_dna,
    weighted_degree_kernel,
)


def naive_wd(a, b, d):
    """Reference: sum_j (d - j + 1) sum_i 1[a[i:i+j] == b[i:i+j]]."""
    L = len(a)
    return sum(
        (d - j + 1) * sum(a[i : i + j] == b[i : i + j] for i in range(L - j + 1))
        for j in range(1, d + 1)
    )


def _random_strings(n, L, seed, alphabet="ACGT"):
    rng = np.random.default_rng(seed)
    S = np.array(["".join(rng.choice(list(alphabet), L)) for _ in range(n)])
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


def test_decode_splice_matches_raw_sequences(data_dir):
    z = np.load(data_dir / "raetsch" / "splice.npz")
    S = decode_splice(z["x"])
    assert np.array_equal(S, z["seq"])
    assert SPLICE_CODE == {"A": 1, "G": 2, "C": 3, "T": 4}
    # round trip
    C = encode_strings(S[:50])
    back = np.vectorize(lambda c: SPLICE_CODE[chr(c)])(C)
    assert np.array_equal(back, z["x"][:50])


def test_decode_bad_input():
    with pytest.raises(ValueError, match="codes"):
        decode_splice(np.array([[1, 2, 9]]))
    with pytest.raises(ValueError, match="2-D"):
        decode_splice(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="integer"):
        decode_splice(np.array([[1.5, 2.0]]))
    assert decode_splice(np.array([[1, 3, 2, 4]]))[0] == "ACGT"


def test_select_kernel_over_wd_degrees():
    from kpm.relevance import select_kernel

    S = _random_strings(60, 20, 9)
    y = np.array([1.0 if s[5:8] == s[12:15] or s[10] == "A" else -1.0 for s in S])
    ranking = select_kernel([WeightedDegreeKernel(d) for d in (1, 3, 6)], S, y)
    assert sorted(r.index for r in ranking) == [0, 1, 2]
    assert all(isinstance(r.candidate, WeightedDegreeKernel) for r in ranking)
    assert ranking[0].neg_log_likelihood <= ranking[-1].neg_log_likelihood



def test_decode_splice_validates_the_code_table():
    X = np.array([[1, 2, 3]])
    for code, match in (({"A": "x"}, "the code of 'A' must be an integer"),
                        ({"AB": 1}, "single characters"),
                        (5, "non-empty dict"),
                        ({}, "non-empty dict"),
                        ({"A": 1.5}, "the code of 'A' must be an integer"),
                        ({"A": 1, "G": 1}, "maps two characters to the same number")):
        with pytest.raises(ValueError, match=match):
            decode_splice(X, code=code)
    # negative and huge codes map correctly (a lookup table indexed them wrongly)
    code = {"A": -1, "C": 10**12, "G": 0, "T": 7}
    S = decode_splice(np.array([[-1, 0, 7, 10**12], [7, 7, -1, 0]]), code=code)
    assert list(S) == ["AGTC", "TTAG"]
    with pytest.raises(ValueError, match=r"codes \[5\]"):
        decode_splice(np.array([[-1, 5]]), code=code)
    with pytest.raises(ValueError, match="non-empty 2-D"):
        decode_splice(np.zeros((0, 3)))


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
