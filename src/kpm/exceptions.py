"""Exceptions and warnings raised by kpm.

All are importable from the top-level package (``from kpm import LPSolverError``).
"""

from __future__ import annotations

__all__ = [
    "KernelMemoryError",
    "LPSolverError",
    "DegenerateKernelWarning",
    "DegenerateModelWarning",
    "ReferenceModelWarning",
]


class KernelMemoryError(MemoryError):
    """A kernel matrix would exceed the configured memory budget (:func:`kpm.set_config`)."""


class LPSolverError(RuntimeError):
    """No linear-programming solver returned an optimal solution; the message carries
    the solvers' statuses."""


class DegenerateKernelWarning(UserWarning):
    """The kernel matrix is numerically the identity or numerically constant.

    Both happen when the kernel width is far from the scale of the data: nothing
    can be learnt from such a kernel. Scale the features or use ``sigma='median'``.
    """


class DegenerateModelWarning(UserWarning):
    """A fitted classifier predicts a single class on its own training data."""


class ReferenceModelWarning(UserWarning):
    """A cheap reference fitted on the same kernel (kernel ridge regression, with its
    ``alpha`` by leave-one-out) is clearly more accurate than the fitted model, or, in
    :func:`kpm.select_kernel`, another candidate kernel is (by the leave-one-out error of
    kernel PCR); the message names it and its parameters."""
