"""Shared estimator plumbing: kernel parameters and input validation."""

from __future__ import annotations

import numpy as np

from .kernels import Kernel, make_kernel

__all__ = ["KernelParamsMixin", "check_n_components"]


class KernelParamsMixin:
    """Builds the :class:`~kpm.kernels.Kernel` of an estimator from its parameters.

    The estimator must define ``kernel`` and may define ``sigma``, ``gamma``,
    ``degree``, ``coef0`` and ``kernel_params`` (scikit-learn style parameters).
    """

    def _make_kernel(self, X=None) -> Kernel:
        return make_kernel(
            self.kernel,
            sigma=getattr(self, "sigma", None),
            gamma=getattr(self, "gamma", None),
            degree=getattr(self, "degree", 3),
            coef0=getattr(self, "coef0", 1.0),
            kernel_params=getattr(self, "kernel_params", None),
            X=X,
        )

    def _more_tags(self):  # scikit-learn < 1.6
        return {"pairwise": self.kernel == "precomputed"}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


def check_n_components(n_components, rank: int, *, name: str = "n_components") -> int:
    """Validate an integer number of components against the available rank."""
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise ValueError(f"{name} must be a positive integer, got {n_components!r}")
    if n_components <= 0:
        raise ValueError(f"{name} must be >= 1, got {n_components}")
    if n_components > rank:
        raise ValueError(
            f"{name}={n_components} is larger than the rank {rank} of the (centred) kernel matrix"
        )
    return int(n_components)
