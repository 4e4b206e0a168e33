"""A kernel given as the user's function ``f(X, Y) -> (len(X), len(Y)) array``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from kpm.kernels.base import Kernel, register_kernel

__all__ = ["CallableKernel"]


@register_kernel
@dataclass(frozen=True, repr=False)
class CallableKernel(Kernel):
    """The user's function ``func(X, Y, **dict(func_kwargs))`` as a kernel.

    Inputs are passed to ``func`` as given (no numeric validation), so a function can
    take any input it understands; a function with a ``check_input(X)`` method
    validates the input of estimators with it (:attr:`raw_input`). Its values must be
    finite and of shape ``(len(X), len(Y))``; estimators check that its training
    matrix is symmetric and positive semi-definite (:attr:`user_defined`).
    """

    name = "callable"
    user_defined = True
    by_name = False

    func: Callable = field(default=None, compare=False)
    func_kwargs: tuple = ()

    def __post_init__(self):
        if not callable(self.func):
            raise ValueError(f"a callable kernel needs a function f(X, Y), got {self.func!r}")

    @property
    def raw_input(self) -> bool:
        """True when ``func`` validates its own input (it has a ``check_input`` method)."""
        return callable(getattr(self.func, "check_input", None))

    def __repr__(self) -> str:
        return f"Kernel(callable {getattr(self.func, '__name__', self.func)!r})"

    def check_input(self, X, name="X"):
        """The input as given, or as ``func.check_input`` returns it when there is one."""
        return self.func.check_input(X) if self.raw_input else X

    def check_pair(self, X, Y):
        pass

    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        K = np.asarray(self.func(X, Y, **dict(self.func_kwargs)), dtype=float)
        if K.shape != (len(X), len(Y)):
            raise ValueError(
                f"the kernel callable returned shape {K.shape}, expected ({len(X)}, {len(Y)}); "
                "a callable kernel must map (X, Y) to the matrix of k(X[i], Y[j])"
            )
        if not np.all(np.isfinite(K)):
            raise ValueError("the kernel callable returned NaN or infinite values")
        return K
