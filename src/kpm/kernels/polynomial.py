"""The polynomial kernel ``(gamma <x, y> + coef0)^degree`` (the papers' ``(<x,y>+c)^d`` is
``gamma=1, coef0=c``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.validation import check_kernel_values
from kpm.kernels.base import Kernel, check_kernel_param, register_kernel
from kpm.kernels.conventions import inner_product_gamma

__all__ = ["PolynomialKernel"]


@register_kernel
@dataclass(frozen=True, repr=False)
class PolynomialKernel(Kernel):
    r"""Polynomial kernel :math:`(\gamma \langle x, y \rangle + c_0)^d` (``coef0``, integer ``degree``)."""

    name = "poly"
    aliases = ("polynomial",)

    gamma: float = 1.0
    degree: float = 3
    coef0: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_kernel_param("gamma", self.gamma, positive=True))
        degree = check_kernel_param("degree", self.degree, positive=True, integer=True)
        object.__setattr__(self, "degree", degree)
        object.__setattr__(self, "coef0", check_kernel_param("coef0", self.coef0))

    @classmethod
    def from_params(cls, *, X=None, sigma=None, gamma=None, c=None, degree=3, coef0=1.0, **extra):
        cls.reject_extra(extra)
        cls.reject_sigma(sigma, cls.name)
        return cls(gamma=inner_product_gamma(gamma), degree=degree, coef0=coef0)

    def __repr__(self) -> str:
        return f"Kernel('poly', gamma={self.gamma}, degree={self.degree}, coef0={self.coef0})"

    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        G = X @ Y.T
        G *= self.gamma
        G += self.coef0
        return G**self.degree

    def evaluate_diag(self, X):
        g = np.einsum("ij,ij->i", X, X)
        g = self.gamma * g + self.coef0
        return check_kernel_values(g**self.degree, self)

    def sklearn_params(self):
        return {"kernel": "poly", "gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
