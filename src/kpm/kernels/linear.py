"""The linear kernel ``<x, y>``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.validation import check_kernel_values
from kpm.kernels.base import Kernel, register_kernel

__all__ = ["LinearKernel"]


@register_kernel
@dataclass(frozen=True, repr=False)
class LinearKernel(Kernel):
    """Linear kernel ``<x, y>``."""

    name = "linear"

    def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
        return X @ Y.T

    def evaluate_diag(self, X):
        return check_kernel_values(np.einsum("ij,ij->i", X, X), self)

    def sklearn_params(self):
        return {"kernel": "linear"}
