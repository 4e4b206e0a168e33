"""The inverse multiquadric kernel ``1 / sqrt(||x - y||^2 + c^2)``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.kernels.base import Kernel, check_kernel_param, register_kernel
from kpm.kernels.distances import cancelled_entries, exact_sq_dists, squared_distances

__all__ = ["InverseMultiquadricKernel"]


@register_kernel
@dataclass(frozen=True, repr=False)
class InverseMultiquadricKernel(Kernel):
    r"""Inverse multiquadric kernel :math:`1/\sqrt{\|x-y\|^2 + c^2}`."""

    name = "imq"
    aliases = ("inverse_multiquadric",)
    needs_sq_norms = True
    is_stationary = True

    c: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "c", check_kernel_param("c", self.c, positive=True))

    @classmethod
    def from_params(cls, *, X=None, sigma=None, gamma=None, c=None, degree=3, coef0=1.0, **extra):
        cls.reject_extra(extra)
        cls.reject_sigma(sigma, cls.name)
        return cls(c=1.0 if c is None else c)

    def __repr__(self) -> str:
        return f"Kernel('imq', c={self.c})"

    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        if X_sq is None:
            X_sq = np.einsum("ij,ij->i", X, X)
        if Y_sq is None:
            Y_sq = np.einsum("ij,ij->i", Y, Y)
        D = squared_distances(X, Y, X_sq, Y_sq)
        mask = cancelled_entries(D, X_sq, Y_sq, 1.0, self.c**2)
        if mask is not None:
            exact_sq_dists(D, X, Y, mask)
        D += self.c**2
        return 1.0 / np.sqrt(D)

    def evaluate_diag(self, X):
        return np.full(len(X), 1.0 / abs(self.c))
