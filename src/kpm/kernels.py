"""Kernel functions, computed in memory-bounded blocks.

Every kernel is represented by an immutable :class:`Kernel` object, built by
:func:`make_kernel` from the user's parameters. The Gaussian (RBF) kernel has
three common parametrisations; all are accepted and converted to one canonical
form, ``gamma``:

===================  ==============================  ======================
convention           formula                         conversion
===================  ==============================  ======================
KPM papers (sigma)   ``exp(-||x-y||^2 / (2 sigma^2))``  ``gamma = 1/(2 sigma^2)``
scikit-learn         ``exp(-gamma ||x-y||^2)``          ``gamma``
Schölkopf et al. (c) ``exp(-||x-y||^2 / c)``            ``gamma = 1/c``
===================  ==============================  ======================

Other kernels: ``'poly'`` ``(gamma <x,y> + coef0)^degree`` (the papers'
``(<x,y>+c)^d`` is ``gamma=1, coef0=c``), ``'sigmoid'``
``tanh(gamma <x,y> + coef0)`` (the papers' kappa and Theta), ``'imq'`` (inverse
multiquadric) ``1/sqrt(||x-y||^2 + c^2)``, ``'linear'``, ``'precomputed'`` and
any callable ``f(X, Y) -> (len(X), len(Y)) array``.

A full kernel matrix larger than ``kpm.get_config()['max_kernel_bytes']`` is
never materialised: :meth:`Kernel.__call__` raises :class:`KernelMemoryError`.
Use :meth:`Kernel.blocks` or :meth:`Kernel.matvec` to stream over it instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
from sklearn.utils.validation import check_array

from ._config import get_config
from .exceptions import KernelMemoryError
from .validation import check_generator, check_int, check_kernel_values, check_real, check_samples

__all__ = [
    "Kernel",
    "KernelMemoryError",
    "KERNELS",
    "make_kernel",
    "pairwise_kernel",
    "median_sigma",
]

#: Names accepted by :func:`make_kernel` (plus aliases and callables).
KERNELS = ("rbf", "poly", "sigmoid", "imq", "linear", "precomputed")
_ALIASES = {
    "gaussian": "rbf",
    "polynomial": "poly",
    "inverse_multiquadric": "imq",
    "tanh": "sigmoid",
}


def _check_param(name, value, *, positive=False, integer=False):
    """A finite real kernel parameter (positive / integral on request)."""
    value = check_real(value, f"kernel parameter {name}", low=0.0 if positive else None, low_open=positive)
    if integer and value != int(value):
        raise ValueError(f"kernel parameter {name} must be an integer, got {value!r}")
    return value


def _representable(gamma, name, value):
    """``gamma`` derived from a width must be a positive finite float64."""
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(
            f"{name}={value!r} is outside the range of kernel widths that float64 can represent "
            f"(it gives gamma = {float(gamma)!r}); rescale the features instead"
        )
    return float(gamma)


#: relative accuracy below which kernel values from the norm expansion are recomputed
#: from differences (see :func:`_cancelled`)
_EXPANSION_RTOL = 1e-12
_EPS = float(np.finfo(float).eps)


def _cancelled(D, X_sq, Y_sq, scale, floor):
    """Entries of ``D = |x|^2 + |y|^2 - 2<x, y>`` the norm expansion may have cancelled away.

    The expansion's rounding error is about ``4 eps (|x|^2 + |y|^2)``: for points far from
    the origin compared with their distance (large offsets or magnitudes) it swamps ``D``
    (``k(x, x)`` of an RBF kernel at 1e8 comes out as ``exp(-1)``). Returns the mask of the
    entries whose error, times ``scale``, exceeds ``_EXPANSION_RTOL (scale D + floor)``
    (for the RBF kernel ``floor`` excludes values that underflow to 0 anyway), or None when
    no entry can (the norms are small: the usual case, at no cost).
    """
    if not _may_cancel(X_sq, Y_sq, scale, floor):
        return None
    err = 4.0 * _EPS * scale * (X_sq[:, None] + Y_sq[None, :])
    return err > _EXPANSION_RTOL * (scale * D + floor)


def _may_cancel(X_sq, Y_sq, scale, floor):
    """Whether any entry can need :func:`_cancelled`'s correction (O(n) test)."""
    bound = 4.0 * _EPS * scale * (float(np.max(X_sq, initial=0.0)) + float(np.max(Y_sq, initial=0.0)))
    return bound > _EXPANSION_RTOL * floor


def _exact_sq_dists(D, X, Y, mask, chunk=1 << 16):
    """Set ``D[mask]`` to ``||x_i - y_j||^2`` computed from the differences."""
    rows, cols = np.nonzero(mask)
    for start in range(0, len(rows), chunk):
        i, j = rows[start : start + chunk], cols[start : start + chunk]
        diff = X[i] - Y[j]
        D[i, j] = np.einsum("ij,ij->i", diff, diff)
    return D


def _sq_dists(X, Y, X_sq=None, Y_sq=None):
    """Squared Euclidean distances, clipped at zero."""
    if X_sq is None:
        X_sq = np.einsum("ij,ij->i", X, X)
    if Y_sq is None:
        Y_sq = np.einsum("ij,ij->i", Y, Y)
    D = X @ Y.T
    D *= -2.0
    D += X_sq[:, None]
    D += Y_sq[None, :]
    np.maximum(D, 0.0, out=D)
    return D


@dataclass(frozen=True)
class Kernel:
    """An immutable kernel function with canonical parameters.

    Build it with :func:`make_kernel`; call it as ``kernel(X, Y)`` to get the
    matrix ``K[i, j] = k(X[i], Y[j])``.

    Attributes
    ----------
    name : str
        One of :data:`KERNELS` or ``'callable'``.
    gamma : float or None
        RBF: ``exp(-gamma ||x-y||^2)``; poly and sigmoid: the scale of ``<x,y>``.
    degree : float
        Polynomial degree.
    coef0 : float
        Additive constant of poly and sigmoid.
    c : float
        Inverse multiquadric offset ``1/sqrt(||x-y||^2 + c^2)``.
    func : callable or None
        The user's function for ``name == 'callable'``.
    """

    name: str
    gamma: float | None = None
    degree: float = 3
    coef0: float = 1.0
    c: float = 1.0
    func: Callable | None = field(default=None, compare=False)
    func_kwargs: tuple = ()

    # ------------------------------------------------------------------ info
    @property
    def sigma(self) -> float | None:
        """The KPM papers' width ``sigma`` of an RBF kernel (``gamma = 1/(2 sigma^2)``)."""
        if self.name != "rbf":
            return None
        return float(np.sqrt(1.0 / (2.0 * self.gamma)))

    @property
    def is_precomputed(self) -> bool:
        return self.name == "precomputed"

    @property
    def is_stationary(self) -> bool:
        """True when ``k(x, x)`` is the same constant for every x (RBF, IMQ)."""
        return self.name in ("rbf", "imq")

    def __repr__(self) -> str:  # pragma: no cover - cosmetic
        if self.name == "rbf":
            return f"Kernel('rbf', gamma={self.gamma:.6g}, sigma={self.sigma:.6g})"
        if self.name == "poly":
            return f"Kernel('poly', gamma={self.gamma}, degree={self.degree}, coef0={self.coef0})"
        if self.name == "sigmoid":
            return f"Kernel('sigmoid', gamma={self.gamma}, coef0={self.coef0})"
        if self.name == "imq":
            return f"Kernel('imq', c={self.c})"
        if self.name == "callable":
            return f"Kernel(callable {getattr(self.func, '__name__', self.func)!r})"
        return f"Kernel({self.name!r})"

    # ----------------------------------------------------------- evaluation
    def _block(self, X, Y, X_sq=None, Y_sq=None, out=None):
        """Kernel matrix of two (small enough) blocks; no budget check.

        ``X_sq``/``Y_sq`` are the squared row norms (computed when omitted); ``out``
        is an optional preallocated result (used by the RBF path only).
        """
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return self._block_unchecked(X, Y, X_sq, Y_sq, out)

    def _block_unchecked(self, X, Y, X_sq, Y_sq, out):
        name = self.name
        if name == "rbf":
            # exp(2g<x,y> - g|x|^2 - g|y|^2), fused into 4 passes and exp (in place)
            g = self.gamma
            if X_sq is None:
                X_sq = np.einsum("ij,ij->i", X, X)
            if Y_sq is None:
                Y_sq = np.einsum("ij,ij->i", Y, Y)
            G = np.matmul(X, Y.T, out=out)
            G *= 2.0 * g
            G -= g * X_sq[:, None]
            G -= g * Y_sq[None, :]
            np.minimum(G, 0.0, out=G)  # squared distances are >= 0
            # exp underflows to 0 beyond -746: those entries need no accuracy
            mask = _cancelled(-G / g, X_sq, Y_sq, g, 1.0) if _may_cancel(X_sq, Y_sq, g, 1.0) else None
            if mask is not None:
                mask &= G > -746.0 - 4.0 * _EPS * g * (X_sq[:, None] + Y_sq[None, :])
                G[mask] = -g * _exact_sq_dists(np.zeros(G.shape), X, Y, mask)[mask]
            return np.exp(G, out=G)
        if name == "linear":
            return X @ Y.T
        if name == "poly":
            G = X @ Y.T
            G *= self.gamma
            G += self.coef0
            return G**self.degree
        if name == "sigmoid":
            G = X @ Y.T
            G *= self.gamma
            G += self.coef0
            return np.tanh(G, out=G)
        if name == "imq":
            if X_sq is None:
                X_sq = np.einsum("ij,ij->i", X, X)
            if Y_sq is None:
                Y_sq = np.einsum("ij,ij->i", Y, Y)
            D = _sq_dists(X, Y, X_sq, Y_sq)
            mask = _cancelled(D, X_sq, Y_sq, 1.0, self.c**2)
            if mask is not None:
                _exact_sq_dists(D, X, Y, mask)
            D += self.c**2
            return 1.0 / np.sqrt(D)
        if name == "callable":
            K = np.asarray(self.func(X, Y, **dict(self.func_kwargs)), dtype=float)
            if K.shape != (len(X), len(Y)):
                raise ValueError(
                    f"the kernel callable returned shape {K.shape}, expected ({len(X)}, {len(Y)}); "
                    "a callable kernel must map (X, Y) to the matrix of k(X[i], Y[j])"
                )
            if not np.all(np.isfinite(K)):
                raise ValueError("the kernel callable returned NaN or infinite values")
            return K
        raise ValueError(f"kernel {name!r} cannot be evaluated on feature vectors")

    def _prepare(self, X, Y):
        if self.is_precomputed:
            raise ValueError(
                "a 'precomputed' kernel cannot be evaluated on feature vectors: pass the "
                "kernel matrix itself"
            )
        Y_is_X = Y is None
        if Y_is_X:
            Y = X
        if self.name != "callable":
            X = check_samples(X, "X")
            Y = X if Y_is_X else check_samples(Y, "Y")
            if X.shape[1] != Y.shape[1]:
                raise ValueError(
                    f"X has {X.shape[1]} features but Y has {Y.shape[1]}: the kernel needs "
                    "inputs of the same dimension"
                )
        return X, Y

    def __call__(self, X, Y=None) -> np.ndarray:
        """The kernel matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted).

        Raises
        ------
        KernelMemoryError
            If the matrix would exceed ``kpm.get_config()['max_kernel_bytes']``.
        """
        if self.is_precomputed:
            K = check_array(X, dtype=float, ensure_all_finite=True)
            return K
        X, Y = self._prepare(X, Y)
        nbytes = 8 * len(X) * len(Y)
        budget = get_config()["max_kernel_bytes"]
        if nbytes > budget:
            raise KernelMemoryError(
                f"the {len(X)} x {len(Y)} kernel matrix needs {_format_bytes(nbytes)}, over the "
                f"budget of {_format_bytes(budget)} (kpm.set_config(max_kernel_bytes=...)); use "
                "Kernel.blocks / Kernel.matvec, a partial or Nystroem eigensolver instead"
            )
        out = np.empty((len(X), len(Y)))
        step = self.block_rows(len(Y))
        X_sq = Y_sq = None
        if self.name in ("rbf", "imq"):
            X_sq = np.einsum("ij,ij->i", X, X)
            Y_sq = X_sq if Y is X else np.einsum("ij,ij->i", Y, Y)
        for start in range(0, len(X), step):
            rows = slice(start, min(start + step, len(X)))
            target = out[rows]
            block = self._block(X[rows], Y, None if X_sq is None else X_sq[rows], Y_sq, out=target)
            if block is not target:
                target[...] = block
            check_kernel_values(target, self)
        return out

    def block_rows(self, n_cols: int) -> int:
        """Rows per block so that one block of ``n_cols`` columns fits ``block_bytes``."""
        budget = get_config()["block_bytes"]
        rows = budget // (8 * max(int(n_cols), 1) * 2)  # two temporaries per block
        if rows < 1:
            raise KernelMemoryError(
                f"block_bytes={budget} ({_format_bytes(budget)}) is too small to hold one row of "
                f"{n_cols} kernel values ({_format_bytes(16 * max(int(n_cols), 1))} with its "
                "temporary); raise it with kpm.set_config(block_bytes=...)"
            )
        return int(rows)

    def blocks(self, X, Y=None, block_rows: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield ``(rows, K[rows, :])`` blocks of the kernel matrix of X against Y."""
        X, Y = self._prepare(X, Y)
        step = check_int(block_rows, "block_rows", allow_none=True) or self.block_rows(len(Y))
        Y_sq = None
        if self.name in ("rbf", "imq"):
            Y_sq = np.einsum("ij,ij->i", Y, Y)
        for start in range(0, len(X), step):
            rows = slice(start, min(start + step, len(X)))
            yield rows, check_kernel_values(self._block(X[rows], Y, None, Y_sq), self)

    def matvec(self, X, V, Y=None) -> np.ndarray:
        """``K(X, Y) @ V`` computed blockwise, never holding the full matrix."""
        X, Y = self._prepare(X, Y)
        V = check_array(V, dtype=np.float64, ensure_2d=False, ensure_all_finite=True, input_name="V")
        if V.ndim not in (1, 2) or len(V) != len(Y):
            raise ValueError(
                f"V must have one row per column of the kernel matrix ({len(Y)}), as a vector or a "
                f"matrix, got shape {V.shape}"
            )
        out = np.empty((len(X),) + V.shape[1:])
        for rows, block in self.blocks(X, Y):
            out[rows] = block @ V
        return out

    def diag(self, X) -> np.ndarray:
        """``k(x, x)`` for every row of X."""
        if self.is_precomputed:
            raise ValueError("k(x, x) of new points is unknown for a 'precomputed' kernel")
        X, _ = self._prepare(X, X)
        n = len(X)
        if self.name == "rbf":
            return np.ones(n)
        if self.name == "imq":
            return np.full(n, 1.0 / abs(self.c))
        if self.name in ("linear", "poly", "sigmoid"):
            g = np.einsum("ij,ij->i", X, X)
            if self.name != "linear":
                g = self.gamma * g + self.coef0
                g = g**self.degree if self.name == "poly" else np.tanh(g)
            return check_kernel_values(g, self)
        out = np.empty(n)
        step = max(1, min(n, 256))
        for start in range(0, n, step):
            blk = X[start : start + step]
            out[start : start + len(blk)] = np.diag(self._block(blk, blk))
        return out


def _format_bytes(nbytes) -> str:
    """A number of bytes with a binary unit that shows it to 3 significant digits."""
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.3g} {unit}"
        value /= 1024
    return f"{value:.3g} TiB"


def _rbf_gamma(sigma, gamma, c, X):
    given = [name for name, v in (("sigma", sigma), ("gamma", gamma), ("c", c)) if v is not None]
    if len(given) > 1:
        raise ValueError(
            f"give only one RBF width, got {' and '.join(given)}: sigma (exp(-|x-y|^2/(2 sigma^2))), "
            "gamma (exp(-gamma |x-y|^2)) or c (exp(-|x-y|^2/c))"
        )
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        if sigma is not None:
            if isinstance(sigma, str):
                if sigma != "median":
                    raise ValueError(f"sigma must be a positive number or 'median', got {sigma!r}")
                if X is None:
                    raise ValueError("sigma='median' needs the training data")
                sigma = median_sigma(X)
                return _representable(0.5 / np.float64(sigma) ** 2, "sigma='median', the median distance", sigma)
            sigma = _check_param("sigma", sigma, positive=True)
            return _representable(0.5 / np.float64(sigma) ** 2, "sigma", sigma)
        if c is not None:
            c = _check_param("c", c, positive=True)
            return _representable(1.0 / np.float64(c), "c", c)
        if gamma is None or (isinstance(gamma, str) and gamma == "scale"):
            if X is None:
                raise ValueError("the default RBF width (gamma='scale') needs the training data")
            return _scale_gamma(X)
    if isinstance(gamma, str):
        raise ValueError(f"gamma must be a positive number or 'scale', got {gamma!r}")
    return _check_param("gamma", gamma, positive=True)


def _scale_gamma(X):
    """scikit-learn's ``gamma='scale'``, ``1 / (n_features X.var())``, computed on the
    rescaled data so that tiny or huge magnitudes neither underflow nor overflow.
    Identical samples (variance exactly 0) give 1, as in scikit-learn: every width
    gives the same constant kernel matrix then."""
    X = check_samples(X)
    s = float(np.max(np.abs(X)))
    var = float((X / s).var()) if s > 0 else 0.0
    if var == 0.0:
        return 1.0
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        gamma = 1.0 / (X.shape[1] * var) / np.float64(s) ** 2
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(
            f"gamma='scale' gives no RBF width that float64 can represent for data of magnitude "
            f"{s:.3g} (gamma = {float(gamma)!r}); rescale the features, e.g. with "
            "sklearn.preprocessing.StandardScaler"
        )
    return float(gamma)


def make_kernel(
    kernel="rbf",
    *,
    sigma=None,
    gamma=None,
    c=None,
    degree=3,
    coef0=1.0,
    kernel_params=None,
    X=None,
) -> Kernel:
    """Build a validated :class:`Kernel`.

    Parameters
    ----------
    kernel : str, callable or Kernel
        ``'rbf'`` (alias ``'gaussian'``), ``'poly'``, ``'sigmoid'``, ``'imq'``,
        ``'linear'``, ``'precomputed'``, a callable ``f(X, Y) -> matrix``, or an
        existing :class:`Kernel` (returned unchanged).
    sigma : float or 'median', optional
        RBF width of the KPM papers, ``exp(-||x-y||^2/(2 sigma^2))``. ``'median'``
        uses :func:`median_sigma` of ``X``.
    gamma : float or 'scale', optional
        RBF: ``exp(-gamma ||x-y||^2)``; poly/sigmoid: scale of the inner product
        (default 1). For RBF the default ``'scale'`` is ``1/(n_features X.var())``.
    c : float, optional
        RBF: Schölkopf's ``exp(-||x-y||^2/c)``; IMQ: the offset (default 1).
    degree : float, default=3
        Polynomial degree.
    coef0 : float, default=1.0
        Additive constant of poly and sigmoid.
    kernel_params : dict, optional
        Extra parameters: any of the above by name, or keyword arguments of a
        callable kernel.
    X : array-like, optional
        Training data, needed only by data-dependent defaults.

    Returns
    -------
    Kernel
    """
    if isinstance(kernel, Kernel):
        return kernel
    if kernel_params is not None and not isinstance(kernel_params, Mapping):
        raise ValueError(f"kernel_params must be a dict of kernel parameters or None, got {kernel_params!r}")
    params = dict(kernel_params or {})
    if callable(kernel):
        return Kernel("callable", func=kernel, func_kwargs=tuple(sorted(params.items())))
    if not isinstance(kernel, str):
        raise ValueError(f"kernel must be a string, a callable or a kpm Kernel, got {kernel!r}")
    name = _ALIASES.get(kernel.lower(), kernel.lower())
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; expected one of {KERNELS} or a callable")
    sigma = params.pop("sigma", sigma)
    gamma = params.pop("gamma", gamma)
    c = params.pop("c", c)
    degree = params.pop("degree", degree)
    coef0 = params.pop("coef0", coef0)
    if params:
        raise ValueError(f"unknown parameters {sorted(params)} for kernel {name!r}")

    if name == "rbf":
        return Kernel("rbf", gamma=_rbf_gamma(sigma, gamma, c, X))
    if sigma is not None:
        raise ValueError(f"sigma is an RBF width; it does not apply to kernel {name!r}")
    if name == "poly":
        g = 1.0 if gamma is None or gamma == "scale" else _check_param("gamma", gamma, positive=True)
        return Kernel(
            "poly",
            gamma=g,
            degree=_check_param("degree", degree, positive=True, integer=True),
            coef0=_check_param("coef0", coef0),
        )
    if name == "sigmoid":
        g = 1.0 if gamma is None or gamma == "scale" else _check_param("gamma", gamma, positive=True)
        return Kernel("sigmoid", gamma=g, coef0=_check_param("coef0", coef0))
    if name == "imq":
        cc = 1.0 if c is None else _check_param("c", c, positive=True)
        return Kernel("imq", c=cc)
    return Kernel(name)


def pairwise_kernel(X, Y=None, kernel="rbf", **params) -> np.ndarray:
    """Kernel matrix of X against Y (``Y = X`` when omitted).

    ``params`` are those of :func:`make_kernel`. X and Y are validated as by
    :func:`kpm.validation.check_samples` (finite, 2-D); kernel values that overflow
    float64 raise ``ValueError``.
    """
    X = check_samples(X, "X")
    if Y is not None:
        Y = check_samples(Y, "Y")
    return make_kernel(kernel, X=X, **params)(X, Y)


def median_sigma(X, *, max_samples: int = 2000, random_state=0) -> float:
    """Median heuristic: the median pairwise Euclidean distance between samples.

    At most ``max_samples`` rows (drawn with ``random_state``) are used. The distances
    are computed as norms of differences of the rescaled rows, so that data of any
    magnitude representable in float64 gives a finite, accurate width.

    Raises
    ------
    ValueError
        With fewer than 2 samples, or when the median distance is 0 (more than half
        of the pairs of samples are identical).
    """
    from scipy.spatial.distance import pdist

    X = check_samples(X, min_samples=2)
    max_samples = check_int(max_samples, "max_samples", minimum=2)
    if len(X) > max_samples:
        rng = check_generator(random_state)
        X = X[rng.choice(len(X), max_samples, replace=False)]
    s = float(np.max(np.abs(X)))
    med = float(np.median(pdist(X / s))) if s > 0 else 0.0
    if med <= 0:
        raise ValueError(
            "the median pairwise distance is 0: more than half of the pairs of samples are "
            "identical, so the median heuristic gives no kernel width"
        )
    with np.errstate(over="ignore"):
        sigma = med * np.float64(s)
    if not np.isfinite(sigma):
        raise ValueError(f"the median pairwise distance overflows float64 (data of magnitude {s:.3g})")
    return float(sigma)
