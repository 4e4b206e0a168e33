"""The kernel base class: evaluation in memory-bounded blocks, shared by every kernel family.

A family (one module of this package) subclasses :class:`Kernel` as a frozen dataclass of
its parameters and writes :meth:`Kernel.evaluate` (the formula on a block of validated
inputs); everything else -- input validation, the memory budget, blocks, products with
vectors, the diagonal, value checks, equality, hashing and pickling -- comes from here.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Callable, ClassVar, Iterator

import numpy as np
from sklearn.utils.validation import check_array

from kpm.config import get_config
from kpm.exceptions import KernelMemoryError
from kpm.validation import check_int, check_kernel_values, check_real, check_samples

__all__ = [
    "Kernel",
    "KernelMemoryError",
    "register_kernel",
    "kernel_class",
    "kernel_names",
    "check_kernel_param",
    "format_bytes",
    "check_kernel_budget",
]


# ------------------------------------------------------------------------------ registry
#: registered name or alias -> kernel class
_REGISTRY: dict[str, type] = {}
#: registered names, in registration order (aliases not included)
_NAMES: list[str] = []


def register_kernel(cls):
    """Class decorator: make a :class:`Kernel` subclass known to :func:`kpm.make_kernel`
    under its ``name`` and ``aliases`` (case-insensitive)."""
    if not (isinstance(cls, type) and issubclass(cls, Kernel)) or not cls.name:
        raise ValueError(f"register_kernel needs a Kernel subclass with a name, got {cls!r}")
    keys = [cls.name.lower(), *(a.lower() for a in cls.aliases)]
    for key in keys:
        if _REGISTRY.get(key, cls) is not cls:
            raise ValueError(f"the kernel name {key!r} is taken by {_REGISTRY[key].__name__}")
    for key in keys:
        _REGISTRY[key] = cls
    if cls.name not in _NAMES:
        _NAMES.append(cls.name)
    return cls


def kernel_class(name: str, default=None):
    """The registered kernel class of a name or alias (case-insensitive), else ``default``."""
    return _REGISTRY.get(name.lower(), default) if isinstance(name, str) else default


def kernel_names() -> tuple:
    """The names :func:`kpm.make_kernel` accepts (without aliases), in registration order."""
    return tuple(name for name in _NAMES if _REGISTRY[name].by_name)


# ----------------------------------------------------------------------------- helpers
def check_kernel_param(name, value, *, positive=False, integer=False):
    """A finite real kernel parameter (positive / integral on request)."""
    value = check_real(value, f"kernel parameter {name}", low=0.0 if positive else None, low_open=positive)
    if integer and value != int(value):
        raise ValueError(f"kernel parameter {name} must be an integer, got {value!r}")
    return value


def format_bytes(nbytes) -> str:
    """A number of bytes with a binary unit that shows it to 3 significant digits."""
    value = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.3g} {unit}"
        value /= 1024
    return f"{value:.3g} TiB"


def check_kernel_budget(n_rows, n_cols, what, remedy):
    """Raise :class:`KernelMemoryError` when an ``n_rows x n_cols`` float64 matrix would
    exceed ``kpm.get_config()['max_kernel_bytes']``: the one budget check of every dense
    kernel matrix, with one message -- ``what`` (e.g. ``"the 10 x 10 kernel matrix"``)
    needs so much, over the budget, how to raise it, then ``remedy``, the caller's way out."""
    nbytes = 8 * int(n_rows) * int(n_cols)
    budget = get_config()["max_kernel_bytes"]
    if nbytes > budget:
        raise KernelMemoryError(
            f"{what} needs {format_bytes(nbytes)}, over the budget of {format_bytes(budget)} "
            f"(kpm.set_config(max_kernel_bytes=...)). {remedy}"
        )


def _reject_sigma(sigma, name):
    if sigma is not None:
        raise ValueError(f"sigma is an RBF width; it does not apply to kernel {name!r}")


# -------------------------------------------------------------------------- the base
class _KernelFactory(type):
    """``Kernel(name, **fields)`` (the base class called directly) builds the registered
    family of ``name``, as the single kernel class of earlier versions did."""

    def __call__(cls, *args, **kwargs):
        if cls is not Kernel:
            return super().__call__(*args, **kwargs)
        return _from_fields(*args, **kwargs)


def _from_fields(name, **given):
    family = kernel_class(name)
    if family is None:
        raise ValueError(f"unknown kernel {name!r}; expected one of {kernel_names()}")
    own = {f.name for f in fields(family)}
    extra = sorted(k for k, v in given.items() if k not in own and v is not None)
    if extra and any(k not in Kernel._LEGACY for k in extra):
        raise TypeError(f"Kernel({name!r}) got unexpected parameters {extra}")
    return family(**{k: v for k, v in given.items() if k in own})


class Kernel(metaclass=_KernelFactory):
    r"""An immutable kernel function with canonical parameters.

    Build it with :func:`make_kernel`; call it as ``kernel(X, Y)`` to get the
    matrix ``K[i, j] = k(X[i], Y[j])``. Each kernel family is a subclass (one module
    of :mod:`kpm.kernels` per family); ``Kernel(name, **parameters)`` builds the
    family registered under ``name``.

    Attributes
    ----------
    name : str
        The registered name of the family (see :data:`kpm.kernels.KERNELS`), or
        ``'callable'``.
    gamma : float or None
        RBF: :math:`\exp(-\gamma \|x-y\|^2)`; poly and sigmoid: the scale of
        :math:`\langle x, y \rangle`.
    degree : float
        Polynomial degree.
    coef0 : float
        Additive constant of poly and sigmoid.
    c : float
        Inverse multiquadric offset: :math:`1/\sqrt{\|x-y\|^2 + c^2}`.
    func : callable or None
        The user's function of a callable kernel.
    needs_sq_norms : bool
        Whether :meth:`evaluate` uses the squared row norms of its inputs (distance
        kernels): :meth:`__call__` and :meth:`blocks` compute them once per input.
    is_stationary : bool
        True when ``k(x, x)`` is the same constant for every x (RBF, IMQ).
    is_precomputed : bool
        True for ``'precomputed'``: the input is the kernel matrix itself.
    user_defined : bool
        True when the values come from the user's code (a callable): estimators then
        check that the training matrix is symmetric and positive semi-definite.
    raw_input : bool
        True when the kernel takes inputs that are not numeric feature vectors (e.g.
        strings): estimators then validate their input with :meth:`check_input`
        instead of numeric validation.
    by_name : bool
        Whether :func:`make_kernel` builds the family from its name (not a callable's).
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple] = ()
    needs_sq_norms: ClassVar[bool] = False
    is_stationary: ClassVar[bool] = False
    is_precomputed: ClassVar[bool] = False
    user_defined: ClassVar[bool] = False
    raw_input: ClassVar[bool] = False
    by_name: ClassVar[bool] = True

    # parameters of the families that do not have them (as in the single kernel class
    # of earlier versions, which had all of them)
    gamma = None
    degree = 3
    coef0 = 1.0
    c = 1.0
    func: Callable | None = None
    func_kwargs: tuple = ()
    _LEGACY: ClassVar[tuple] = ("gamma", "degree", "coef0", "c", "func", "func_kwargs")

    # ---------------------------------------------------------------- building
    @classmethod
    def from_params(cls, *, X=None, sigma=None, gamma=None, c=None, degree=3, coef0=1.0, **extra):
        """The kernel from :func:`make_kernel`'s parameters (the family's conventions).

        The default takes no parameter: ``sigma`` is an error, unknown ``extra``
        parameters are errors, and the others are ignored.
        """
        cls.reject_extra(extra)
        _reject_sigma(sigma, cls.name)
        return cls()

    @classmethod
    def reject_extra(cls, extra):
        """Raise on parameters that :meth:`from_params` does not know."""
        if extra:
            raise ValueError(f"unknown parameters {sorted(extra)} for kernel {cls.name!r}")

    reject_sigma = staticmethod(_reject_sigma)

    # -------------------------------------------------------------------- info
    @property
    def sigma(self) -> float | None:
        """The KPM papers' width ``sigma`` of an RBF kernel (None for other kernels)."""
        return None

    def __repr__(self) -> str:
        return f"Kernel({self.name!r})"

    # ------------------------------------------------------------------ inputs
    def check_input(self, X, name="X"):
        """Validate (and return) one input: numeric samples (:func:`kpm.validation.check_samples`)."""
        return check_samples(X, name)

    def check_pair(self, X, Y):
        """Raise when two validated inputs cannot be paired (different numbers of features)."""
        if X.shape[1] != Y.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but Y has {Y.shape[1]}: the kernel needs "
                "inputs of the same dimension"
            )

    def prepare(self, X, Y=None):
        """``(X, Y)`` validated by :meth:`check_input` and :meth:`check_pair` (``Y = X``
        when omitted, the same object)."""
        Y_is_X = Y is None
        X = self.check_input(X, "X")
        Y = X if Y_is_X else self.check_input(Y, "Y")
        self.check_pair(X, Y)
        return X, Y

    def sq_norms(self, X):
        """Squared row norms of X when :attr:`needs_sq_norms`, else None."""
        return np.einsum("ij,ij->i", X, X) if self.needs_sq_norms else None

    # -------------------------------------------------------------- evaluation
    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        """The kernel matrix of two validated blocks: the family's formula.

        ``X_sq``/``Y_sq``: squared row norms (given when :attr:`needs_sq_norms`, else
        None; a family computes them when omitted); ``out``: an optional preallocated
        result the family may compute in (it returns the result either way).
        """
        raise NotImplementedError(f"{type(self).__name__} does not define evaluate")

    def evaluate_diag(self, X):
        """``k(x, x)`` for every row of a validated X (by default from diagonal blocks)."""
        n = len(X)
        out = np.empty(n)
        step = max(1, min(n, 256))
        for start in range(0, n, step):
            blk = X[start : start + step]
            out[start : start + len(blk)] = np.diag(self.block(blk, blk))
        return out

    def block(self, X, Y, X_sq=None, Y_sq=None, out=None):
        """Kernel matrix of two validated (small enough) blocks: :meth:`evaluate` with
        floating-point warnings silenced (overflow is checked by the callers); no budget
        and no value check."""
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return self.evaluate(X, Y, X_sq, Y_sq, out)

    def __call__(self, X, Y=None) -> np.ndarray:
        """The kernel matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted).

        Raises
        ------
        KernelMemoryError
            If the matrix would exceed ``kpm.get_config()['max_kernel_bytes']``.
        """
        X, Y = self.prepare(X, Y)
        check_kernel_budget(len(X), len(Y), f"the {len(X)} x {len(Y)} kernel matrix",
                            "Estimators that never form it: KernelProjection(eigen_solver='matrix-free') for "
                            "kernel PCA, NystroemKPM for the Kernel Projection Machine; in code, "
                            "Kernel.blocks / Kernel.matvec")
        out = np.empty((len(X), len(Y)))
        step = self.block_rows(len(Y))
        X_sq = self.sq_norms(X)
        Y_sq = X_sq if Y is X else self.sq_norms(Y)
        for start in range(0, len(X), step):
            rows = slice(start, min(start + step, len(X)))
            target = out[rows]
            block = self.block(X[rows], Y, None if X_sq is None else X_sq[rows], Y_sq, out=target)
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
                f"block_bytes={budget} ({format_bytes(budget)}) is too small to hold one row of "
                f"{n_cols} kernel values ({format_bytes(16 * max(int(n_cols), 1))} with its "
                "temporary); raise it with kpm.set_config(block_bytes=...)"
            )
        return int(rows)

    def blocks(self, X, Y=None, block_rows: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
        """Yield ``(rows, K[rows, :])`` blocks of the kernel matrix of X against Y."""
        X, Y = self.prepare(X, Y)
        step = check_int(block_rows, "block_rows", allow_none=True) or self.block_rows(len(Y))
        Y_sq = self.sq_norms(Y)
        for start in range(0, len(X), step):
            rows = slice(start, min(start + step, len(X)))
            yield rows, check_kernel_values(self.block(X[rows], Y, None, Y_sq), self)

    def matvec(self, X, V, Y=None) -> np.ndarray:
        """``K(X, Y) @ V`` computed blockwise, never holding the full matrix."""
        X, Y = self.prepare(X, Y)
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
        """``k(x, x)`` for every row of X (values that overflow float64 raise ``ValueError``)."""
        X, _ = self.prepare(X, X)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            return self.evaluate_diag(X)

    def sklearn_params(self) -> dict | None:
        """The same kernel as parameters of scikit-learn's kernel estimators (e.g.
        ``KernelPCA(**params)``), or None when scikit-learn has no such kernel."""
        return None
