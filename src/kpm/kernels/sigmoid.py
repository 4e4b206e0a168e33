"""The sigmoid kernel ``tanh(gamma <x, y> + coef0)`` (the papers' kappa and Theta).

Not positive semi-definite in general (Schölkopf & Smola 2002, sec. 4.6): it is used
as it is, as in scikit-learn."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.validation import check_kernel_values
from kpm.kernels.base import Kernel, check_kernel_param, register_kernel
from kpm.kernels.conventions import inner_product_gamma

__all__ = ["SigmoidKernel"]


@register_kernel
@dataclass(frozen=True, repr=False)
class SigmoidKernel(Kernel):
    r"""Sigmoid kernel :math:`\tanh(\gamma \langle x, y \rangle + c_0)` (``coef0``)."""

    name = "sigmoid"
    aliases = ("tanh",)

    gamma: float = 1.0
    coef0: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_kernel_param("gamma", self.gamma, positive=True))
        object.__setattr__(self, "coef0", check_kernel_param("coef0", self.coef0))

    @classmethod
    def from_params(cls, *, X=None, sigma=None, gamma=None, c=None, degree=3, coef0=1.0, **extra):
        cls.reject_extra(extra)
        cls.reject_sigma(sigma, cls.name)
        return cls(gamma=inner_product_gamma(gamma), coef0=coef0)

    def __repr__(self) -> str:
        return f"Kernel('sigmoid', gamma={self.gamma}, coef0={self.coef0})"

    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        G = X @ Y.T
        G *= self.gamma
        G += self.coef0
        return np.tanh(G, out=G)

    def evaluate_diag(self, X):
        g = np.einsum("ij,ij->i", X, X)
        g = self.gamma * g + self.coef0
        return check_kernel_values(np.tanh(g), self)

    def sklearn_params(self):
        # degree (the default 3) is ignored by scikit-learn's sigmoid kernel
        return {"kernel": "sigmoid", "gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
