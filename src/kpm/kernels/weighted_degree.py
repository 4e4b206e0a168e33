"""The weighted-degree string kernel (Rätsch & Sonnenburg) for equal-length strings (DNA).

For strings of length L and degree d (as on the slides of Braun, Buhmann & Müller):

    k(x, x') = sum_{j=1}^{d} w_j sum_{i=1}^{L-j+1} 1[x[i:i+j] = x'[i:i+j]],   w_j = d - j + 1.

The slides print the inner sum as ``i = 1 .. N - d`` for every j; that would drop
the last windows of each length and is taken to be a typo: this module uses the
standard definition above (all ``L - j + 1`` windows of length j).

Vectorised computation. Default (``method='sparse'``): every string becomes a sparse
vector of position-specific k-mer indicators (k = 1..d, weight w_k on the left factor),
and ``K = Phi_A W Phi_B^T`` is one ``scipy.sparse`` product (k-mers are labelled by
extending (k-1)-mer labels one letter at a time, re-compressed with ``np.unique``).
Alternative (``method='broadcast'``): for a block of string pairs, compare all positions at
once (numpy broadcasting, ``(a, b, L)`` booleans), turn the match pattern into
the length ``r_i`` of the run of matches starting at each position i (a reverse
running minimum of the next mismatch index), and use that a window of length j
starting at i matches iff ``r_i >= j``. Hence

    k(x, x') = sum_i W[min(r_i, d)],   W[m] = sum_{j<=m} w_j,

one table lookup per position — no loop over pairs, positions or lengths in
Python (only a loop over row blocks that bounds memory). Both are checked against a
naive reference in the tests; see ``benchmarks/bench_string_kernel.py`` for timings.

Using the WD kernel with kpm estimators
---------------------------------------
:class:`WeightedDegreeKernel` is a :class:`kpm.kernels.Kernel` whose input hook
(:meth:`~WeightedDegreeKernel.check_input`) validates a 1-D array of equal-length
strings (:attr:`~kpm.kernels.Kernel.raw_input`): every kpm estimator that takes a kernel
on its inputs validates ``X`` with it instead of numeric validation, so it accepts
string arrays::

    RelevantDimension(kernel=WeightedDegreeKernel(degree=8)).fit(seqs, y)
    KernelProjectionMachine(kernel="wd", degree=8).fit(seqs, y)

Other estimators (e.g. scikit-learn's ``SVC``) can use the precomputed route:
``SVC(kernel='precomputed').fit(weighted_degree_kernel(S, S, d), y)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kpm.config import get_config
from kpm.validation import check_bool, check_int, check_option
from kpm.kernels.base import Kernel, register_kernel

__all__ = [
    "weighted_degree_kernel",
    "WeightedDegreeKernel",
    "check_strings",
    "encode_strings",
]

_METHODS = ("sparse", "broadcast")


def _check_degree(degree) -> int:
    return check_int(degree, "degree", minimum=1)


def check_strings(S, name="X") -> np.ndarray:
    """Validate a sequence of equal-length strings; returns a 1-D numpy str array.

    A 2-D single-column array (n, 1) of strings is accepted and flattened.
    """
    if isinstance(S, str):
        raise ValueError(f"{name} must be a sequence of strings, got a single string")
    try:
        # a list goes through an object array, so that numbers in it are not turned into
        # strings (as np.asarray(["ACG", 5]) would do)
        arr = S if isinstance(S, np.ndarray) else np.asarray(S, dtype=object)
    except Exception as exc:  # pragma: no cover - objects numpy cannot hold
        raise ValueError(f"{name} must be a sequence of strings") from exc
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of strings, got an array of shape {arr.shape}")
    if len(arr) == 0:
        raise ValueError(f"{name} is empty: at least one string is needed")
    if arr.dtype.kind == "O":
        if not all(isinstance(s, str) for s in arr):
            bad = next(type(s).__name__ for s in arr if not isinstance(s, str))
            raise ValueError(f"{name} must contain only strings, found a {bad}")
        arr = arr.astype(str)
    elif arr.dtype.kind != "U":
        raise ValueError(
            f"{name} must contain strings, got an array of dtype {arr.dtype} (numeric input: "
            "decode it first, e.g. kpm_reproduce.splice.decode_splice for the Rätsch splice codes)"
        )
    lengths = np.char.str_len(arr)
    if lengths.min() != lengths.max():
        raise ValueError(
            f"{name}: the weighted-degree kernel needs strings of equal length, got lengths "
            f"from {lengths.min()} to {lengths.max()}"
        )
    if lengths[0] == 0:
        raise ValueError(f"{name}: the strings are empty")
    return arr


def encode_strings(S) -> np.ndarray:
    """Equal-length strings -> integer array (n, L) of Unicode code points."""
    S = check_strings(S)
    L = int(np.char.str_len(S[:1])[0])
    # a '<U L' array is n*L uint32 code points in memory
    return np.ascontiguousarray(S.astype(f"<U{L}")).view(np.uint32).reshape(len(S), L)


def _wd_codes(A, B, degree, block_rows=None) -> np.ndarray:
    """WD kernel of two integer-coded (n, L) arrays."""
    a, L = A.shape
    b = B.shape[0]
    if B.shape[1] != L:
        raise ValueError(
            f"the weighted-degree kernel needs strings of equal length: got lengths {L} and {B.shape[1]}"
        )
    d = min(degree, L)
    w = degree - np.arange(1, d + 1) + 1  # w_j = degree - j + 1
    W = np.concatenate([[0.0], np.cumsum(w, dtype=float)])  # W[m] = sum_{j<=m} w_j
    itype = np.int16 if L < 2**15 - 1 else np.int32
    pos = np.arange(L, dtype=itype)
    if block_rows is None:
        budget = get_config()["block_bytes"]
        block_rows = max(1, int(budget // max(1, 6 * b * L)))
    out = np.empty((a, b))
    for start in range(0, a, block_rows):
        stop = min(a, start + block_rows)
        match = A[start:stop, None, :] == B[None, :, :]  # (blk, b, L)
        # index of the first mismatch at or after each position (L if none)
        nxt = np.where(match, itype(L), pos)
        nxt = np.minimum.accumulate(nxt[..., ::-1], axis=-1)[..., ::-1]
        run = nxt - pos  # length of the run of matches starting at i
        np.minimum(run, d, out=run)
        out[start:stop] = W[run].sum(axis=-1)
    return out


def _wd_sparse(A, B, degree) -> np.ndarray:
    """WD kernel via sparse position-specific k-mer indicator features.

    ``k(x, x') = sum_j w_j <phi_j(x), phi_j(x')>`` where ``phi_j`` has one indicator per
    (position i, j-mer starting at i). The k-mers are labelled by extending the labels of
    the (j-1)-mers one letter at a time and re-compressing them with ``np.unique`` (no
    overflow for any degree); then ``K = Phi_A W Phi_B^T`` is one sparse product
    (``scipy.sparse``), computed in row blocks of A.
    """
    from scipy import sparse

    a, L = A.shape
    b = B.shape[0]
    if B.shape[1] != L:
        raise ValueError(
            f"the weighted-degree kernel needs strings of equal length: got lengths {L} and {B.shape[1]}"
        )
    d = min(degree, L)
    both = np.concatenate([A, B]) if B is not A else A
    _, letters = np.unique(both, return_inverse=True)
    letters = letters.reshape(both.shape).astype(np.int64)
    n_letters = int(letters.max()) + 1
    cols, vals = [], []
    offset = 0
    ids = np.zeros((len(both), L), dtype=np.int64)
    for j in range(1, d + 1):
        m = L - j + 1  # windows of length j
        ids = ids[:, :m] * n_letters + letters[:, j - 1 : j - 1 + m]
        # compress (position, k-mer) pairs to consecutive column ids; the labels stay
        # below n * L, so the next extension and this key cannot overflow int64
        key = ids * m + np.arange(m, dtype=np.int64)
        uniq, inv = np.unique(key.ravel(), return_inverse=True)
        ids = inv.reshape(len(both), m).astype(np.int64)
        cols.append(ids + offset)
        vals.append(np.full(ids.shape, float(degree - j + 1)))
        offset += len(uniq)
    C = np.concatenate(cols, axis=1)
    V = np.concatenate(vals, axis=1)
    nnz = C.shape[1]
    rows = np.repeat(np.arange(len(both)), nnz)
    Phi = sparse.csr_matrix((V.ravel(), (rows, C.ravel())), shape=(len(both), offset))
    PA = Phi[:a]
    PB = Phi[a:] if B is not A else Phi
    PB = PB.copy()
    PB.data[:] = 1.0
    PBt = PB.T.tocsr()
    out = np.empty((a, b))
    budget = get_config()["block_bytes"]
    step = max(1, int(budget // max(1, 24 * b)))
    for start in range(0, a, step):
        stop = min(a, start + step)
        out[start:stop] = (PA[start:stop] @ PBt).toarray()
    return out


def weighted_degree_kernel(A, B=None, degree=3, *, method="sparse") -> np.ndarray:
    r"""Weighted-degree kernel matrix of two sets of equal-length strings.

    For strings of length L and ``degree`` d (Rätsch & Sonnenburg),

    .. math::

        k(x, x') = \sum_{j=1}^{d} w_j \sum_{i=1}^{L-j+1}
        \mathbb 1\big[x_{i:i+j} = x'_{i:i+j}\big], \qquad w_j = d - j + 1,

    :math:`x_{i:i+j}` the substring of length j at position i.

    Parameters
    ----------
    A : sequence of str (n_a,)
    B : sequence of str (n_b,), optional
        Defaults to A.
    degree : int, default=3
        Longest matched substring length d; weights :math:`w_j = d - j + 1`.
    method : {'sparse', 'broadcast'}, default='sparse'
        ``'sparse'``: one sparse product of position-specific k-mer indicator features
        (fast); ``'broadcast'``: pairwise run lengths of matches by numpy broadcasting
        (see the module docstring). Both give identical (integer-valued) results.

    Returns
    -------
    K : ndarray (n_a, n_b)

    Raises
    ------
    ValueError
        Non-string input, strings of unequal length, empty input, bad degree.
    """
    degree = _check_degree(degree)
    method = check_option(method, "method", _METHODS)
    CA = encode_strings(check_strings(A, "A"))
    CB = CA if B is None else encode_strings(check_strings(B, "B"))
    if method == "sparse":
        return _wd_sparse(CA, CB, degree)
    return _wd_codes(CA, CB, degree)


@register_kernel
@dataclass(frozen=True, repr=False)
class WeightedDegreeKernel(Kernel):
    r"""The weighted-degree kernel as a kpm :class:`~kpm.kernels.Kernel` on strings.

    Parameters
    ----------
    degree : int, default=3
        Longest matched substring length.
    normalize : bool, default=False
        Divide by :math:`\sqrt{k(x,x)\, k(x',x')}`. For equal-length strings
        :math:`k(x, x)` is the same constant for all x, so this only rescales.
    method : {'sparse', 'broadcast'}, default='sparse'
        How the matrix is computed (see :func:`weighted_degree_kernel`); both give the
        same values.

    See Also
    --------
    weighted_degree_kernel : The kernel matrix of two string arrays.
    select_kernel : Compare it with other kernels (e.g. RBF on a one-hot code).

    Notes
    -----
    ``check_input`` validates (and returns) a 1-D array of equal-length strings;
    kpm's estimators call it instead of numeric validation, so they accept string
    arrays. :func:`kpm.make_kernel` builds it by name: ``'weighted_degree'`` (alias
    ``'wd'``) with ``degree`` and, in ``kernel_params``, ``normalize`` and ``method``.
    See the module docstring.

    Examples
    --------
    >>> from kpm import WeightedDegreeKernel
    >>> seqs = ["ACGTAC", "ACGTTT", "TTGTAC"]
    >>> print(WeightedDegreeKernel(degree=3)(seqs, seqs))
    [[32. 20. 20.]
     [20. 32.  8.]
     [20.  8. 32.]]
    """

    name = "weighted_degree"
    aliases = ("wd",)
    raw_input = True

    degree: int = 3
    normalize: bool = False
    method: str = field(default="sparse", compare=False)

    def __post_init__(self):
        object.__setattr__(self, "degree", _check_degree(self.degree))
        object.__setattr__(self, "normalize", check_bool(self.normalize, "normalize"))
        object.__setattr__(self, "method", check_option(self.method, "method", _METHODS))

    @classmethod
    def from_params(cls, *, X=None, sigma=None, gamma=None, c=None, degree=3, coef0=1.0,
                    normalize=False, method="sparse", **extra):
        cls.reject_extra(extra)
        cls.reject_sigma(sigma, cls.name)
        return cls(degree=degree, normalize=normalize, method=method)

    def __repr__(self):
        return f"WeightedDegreeKernel(degree={self.degree}, normalize={self.normalize})"

    def check_input(self, X, name="X"):
        """Validate X: a 1-D array (or (n, 1) column) of equal-length strings."""
        return check_strings(X, name)

    def check_pair(self, X, Y):
        lx, ly = (int(np.char.str_len(S[:1])[0]) for S in (X, Y))
        if lx != ly:
            raise ValueError(
                f"the weighted-degree kernel needs strings of equal length: got lengths {lx} and {ly}"
            )

    def _self_value(self, L):
        d = min(self.degree, L)
        j = np.arange(1, d + 1)
        return float(np.sum((self.degree - j + 1) * (L - j + 1)))

    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        CX = encode_strings(X)
        CY = CX if Y is X else encode_strings(Y)
        K = _wd_sparse(CX, CY, self.degree) if self.method == "sparse" else _wd_codes(CX, CY, self.degree)
        if self.normalize:
            K /= self._self_value(CX.shape[1])
        return K

    def evaluate_diag(self, X):
        L = int(np.char.str_len(X[:1])[0])
        return np.full(len(X), 1.0 if self.normalize else self._self_value(L))
