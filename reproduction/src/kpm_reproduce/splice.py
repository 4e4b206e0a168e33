"""The splice data of Rätsch's benchmark as DNA strings, and a one-hot code of DNA.

The Rätsch benchmark's ``splice`` stores one number per nucleotide. Checking the
60 numeric columns of ``splice.npz`` against its raw strings (``seq``) row by
row, the code is **A=1, G=2, C=3, T=4** (the same mapping follows from matching the
UCI splice-junction file). :func:`decode_splice` inverts it; :data:`SPLICE_CODE`
holds it. The strings go to kpm's weighted-degree kernel
(:class:`kpm.kernels.WeightedDegreeKernel`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from kpm.kernels import encode_strings
from kpm.validation import check_int

__all__ = ["decode_splice", "SPLICE_CODE", "one_hot_dna"]

#: The Rätsch splice encoding (nucleotide -> number), verified against ``seq``.
SPLICE_CODE = {"A": 1, "G": 2, "C": 3, "T": 4}


def decode_splice(X, code=None) -> np.ndarray:
    """Numeric splice encoding (A=1, G=2, C=3, T=4 by default) -> nucleotide strings.

    Parameters
    ----------
    X : array-like (n, L) of integers (floats holding integers are fine)
    code : dict, optional
        Nucleotide -> number; default :data:`SPLICE_CODE`.

    Returns
    -------
    S : ndarray of str (n,)
    """
    code = SPLICE_CODE if code is None else _check_code(code)
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D (n_sequences, length) array, got shape {X.shape}")
    if X.dtype.kind not in "iuf":
        raise ValueError(f"X must be numeric, got dtype {X.dtype}")
    if not np.all(np.isfinite(X)) or not np.all(X == np.round(X)):
        raise ValueError("X must hold integer codes")
    numbers_ = np.array(sorted(code.values()), dtype=np.int64)
    letters = np.array([{v: k for k, v in code.items()}[v] for v in numbers_], dtype="<U1")
    pos = np.clip(np.searchsorted(numbers_, X), 0, len(numbers_) - 1)
    known = numbers_[pos] == X
    if not np.all(known):
        unknown = np.unique(X[~known])
        raise ValueError(
            f"X holds codes {unknown[:10].tolist()} that the map {code} does not define"
        )
    chars = np.ascontiguousarray(letters[pos])  # (n, L) single characters
    return chars.view(f"<U{X.shape[1]}")[:, 0]


def _check_code(code):
    """A nucleotide -> integer code map: single characters to distinct integers."""
    if not isinstance(code, Mapping) or len(code) == 0:
        raise ValueError(
            f"code must be a non-empty dict mapping single characters to integers, got {code!r}"
        )
    for letter, value in code.items():
        if not isinstance(letter, str) or len(letter) != 1:
            raise ValueError(f"code keys must be single characters, got {letter!r}")
        check_int(value, f"the code of {letter!r}", minimum=None)
    if len(set(int(v) for v in code.values())) != len(code):
        raise ValueError(f"the code {code} maps two characters to the same number")
    return {letter: int(v) for letter, v in code.items()}


def one_hot_dna(S, alphabet="ACGT") -> np.ndarray:
    """One-hot code of equal-length DNA strings: (n, 4 L) floats (the slides' second encoding)."""
    if not isinstance(alphabet, str) or len(alphabet) == 0 or len(set(alphabet)) != len(alphabet):
        raise ValueError(f"alphabet must be a non-empty string of distinct letters, got {alphabet!r}")
    C = encode_strings(S)
    letters = np.array([ord(c) for c in alphabet], dtype=np.uint32)
    bad = ~np.isin(C, letters)
    if bad.any():
        raise ValueError(f"the strings contain letters outside {alphabet!r}")
    return (C[:, :, None] == letters[None, None, :]).reshape(len(C), -1).astype(float)
