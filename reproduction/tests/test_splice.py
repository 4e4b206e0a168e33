"""The splice data's integer code and its decoding into DNA strings (kpm_reproduce.splice)."""

import numpy as np
import pytest

from kpm.kernels import encode_strings
from kpm_reproduce.splice import SPLICE_CODE, decode_splice


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
