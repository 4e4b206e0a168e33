"""The Gaussian (RBF) kernel ``exp(-gamma ||x - y||^2)`` (widths: see :mod:`kpm.kernels.conventions`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.kernels.base import Kernel, check_kernel_param, register_kernel
from kpm.kernels.conventions import rbf_gamma
from kpm.kernels.distances import EPS, cancelled_entries, exact_sq_dists, may_cancel

__all__ = ["RBFKernel"]


@register_kernel
@dataclass(frozen=True, repr=False)
class RBFKernel(Kernel):
    r"""Gaussian kernel :math:`\exp(-\gamma \|x-y\|^2)`; :math:`\sigma = 1/\sqrt{2\gamma}`."""

    name = "rbf"
    aliases = ("gaussian",)
    needs_sq_norms = True
    is_stationary = True

    gamma: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "gamma", check_kernel_param("gamma", self.gamma, positive=True))

    @classmethod
    def from_params(cls, *, X=None, sigma=None, gamma=None, c=None, degree=3, coef0=1.0, **extra):
        cls.reject_extra(extra)
        return cls(gamma=rbf_gamma(sigma, gamma, c, X))

    @property
    def sigma(self) -> float:
        r"""The KPM papers' width :math:`\sigma` (:math:`\gamma = 1/(2\sigma^2)`)."""
        return float(np.sqrt(1.0 / (2.0 * self.gamma)))

    def __repr__(self) -> str:
        return f"Kernel('rbf', gamma={self.gamma:.6g}, sigma={self.sigma:.6g})"

    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        # exp(2g<x,y> - g|x|^2 - g|y|^2): the exponent by one matrix product of the rows
        # [sqrt(2g) x, -g|x|^2, 1] and [sqrt(2g) y, 1, -g|y|^2] (no passes to scale and shift
        # the n x m result), then the clip and exp in place
        g = self.gamma
        if X_sq is None:
            X_sq = np.einsum("ij,ij->i", X, X)
        if Y_sq is None:
            Y_sq = np.einsum("ij,ij->i", Y, Y)
        G = np.matmul(self.augmented_rows(X, X_sq, side=0), self.augmented_rows(Y, Y_sq, side=1).T, out=out)
        np.minimum(G, 0.0, out=G)  # squared distances are >= 0
        # points far from the origin: distances from differences where the expansion cancels;
        # exp underflows to 0 beyond -746: those entries need no accuracy
        mask = cancelled_entries(-G / g, X_sq, Y_sq, g, 1.0) if may_cancel(X_sq, Y_sq, g, 1.0) else None
        if mask is not None:
            mask &= G > -746.0 - 4.0 * EPS * g * (X_sq[:, None] + Y_sq[None, :])
            G[mask] = -g * exact_sq_dists(np.zeros(G.shape), X, Y, mask)[mask]
        return np.exp(G, out=G)

    def evaluate_diag(self, X):
        return np.ones(len(X))

    def augmented_rows(self, X, X_sq=None, *, side=0):
        r"""Rows whose products are the kernel's exponent, :math:`A_i^\top B_j = -\gamma
        \|x_i - y_j\|^2`, for ``A = augmented_rows(X, side=0)``, rows
        :math:`[\sqrt{2\gamma}\,x,\ -\gamma\|x\|^2,\ 1]`, and ``B = augmented_rows(Y, side=1)``,
        rows :math:`[\sqrt{2\gamma}\,y,\ 1,\ -\gamma\|y\|^2]`: the exponent of a block is
        one matrix product (``X_sq``: the squared norms, if known)."""
        g = self.gamma
        if X_sq is None:
            X_sq = np.einsum("ij,ij->i", X, X)
        d = X.shape[1]
        A = np.empty((X.shape[0], d + 2))
        np.multiply(X, np.sqrt(2.0 * g), out=A[:, :d])
        A[:, d + side] = -g * X_sq
        A[:, d + 1 - side] = 1.0
        return A

    def sklearn_params(self):
        return {"kernel": "rbf", "gamma": self.gamma}
