"""``'precomputed'``: the input is the kernel matrix itself."""

from __future__ import annotations

from dataclasses import dataclass

from sklearn.utils.validation import check_array

from kpm.kernels.base import Kernel, register_kernel

__all__ = ["PrecomputedKernel"]


@register_kernel
@dataclass(frozen=True, repr=False)
class PrecomputedKernel(Kernel):
    """A kernel matrix given by the user: ``kernel(K)`` returns the validated ``K``.

    It cannot be evaluated on feature vectors (:meth:`blocks`, :meth:`matvec`,
    :meth:`diag` raise ``ValueError``).
    """

    name = "precomputed"
    is_precomputed = True

    def prepare(self, X, Y=None):
        raise ValueError(
            "a 'precomputed' kernel cannot be evaluated on feature vectors: pass the "
            "kernel matrix itself"
        )

    def __call__(self, X, Y=None):
        """The finite float64 kernel matrix X (Y is ignored)."""
        return check_array(X, dtype=float, ensure_all_finite=True)

    def diag(self, X):
        raise ValueError("k(x, x) of new points is unknown for a 'precomputed' kernel")
