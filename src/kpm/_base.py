"""Shared estimator plumbing: kernel parameters and input validation."""

from __future__ import annotations

from .kernels import Kernel, make_kernel
from .validation import check_int

__all__ = ["KernelParamsMixin", "check_n_components", "user_matrix_name"]


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
    n_components = check_int(n_components, name, minimum=1)
    if n_components > rank:
        raise ValueError(
            f"{name}={n_components} is larger than the rank {rank} of the (centred) kernel matrix"
        )
    return n_components


def user_matrix_name(kernel: Kernel):
    """What to call the training matrix of a user-supplied kernel in messages, or None.

    A precomputed matrix or the matrix of a callable kernel must be checked (square,
    symmetric, positive semi-definite: :func:`kpm.validation.check_kernel_matrix`); kpm's
    own kernels need no check (they are positive semi-definite by construction, except
    'sigmoid', which is used as it is, as in scikit-learn).
    """
    if kernel.is_precomputed:
        return "precomputed kernel matrix"
    if kernel.name == "callable":
        return "kernel matrix of the callable kernel"
    return None
