"""Shared estimator plumbing: kernel parameters, input validation and the training kernel
matrix of kernel estimators (numeric, precomputed or raw string input)."""

from __future__ import annotations

import numpy as np

from ._eigensolvers import top_eigh
from .kernels import Kernel, make_kernel
from .validation import (
    check_cross_kernel,
    check_estimator_data,
    check_int,
    check_kernel_matrix,
    check_psd_spectrum,
)

__all__ = [
    "KernelParamsMixin",
    "check_n_components",
    "user_matrix_name",
    "accepts_raw_input",
    "validate_kernel_input",
    "validate_kernel_input_y",
    "train_gram",
    "cross_gram",
    "eigh_psd",
]


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


def accepts_raw_input(kernel) -> bool:
    """True when the kernel validates its own (possibly non-numeric) input."""
    return callable(getattr(kernel, "check_input", None))


def validate_kernel_input(est, X, *, reset: bool):
    """Validate X for a kernel estimator (numeric, precomputed or raw string input)."""
    kernel = est.kernel
    if accepts_raw_input(kernel):
        X = kernel.check_input(X)
        if reset:
            if hasattr(est, "n_features_in_"):
                del est.n_features_in_
        return X
    return check_estimator_data(est, X, reset=reset)


def validate_kernel_input_y(est, X, y, *, y_numeric: bool):
    """Validate X and y for a kernel estimator (y numeric and finite with ``y_numeric``)."""
    kernel = est.kernel
    if accepts_raw_input(kernel):
        X = kernel.check_input(X)
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {y.shape}")
        if len(y) != len(X):
            raise ValueError(f"X has {len(X)} samples but y has {len(y)}")
        if y_numeric:
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError("y must be numeric") from exc
            if not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinite values")
        if hasattr(est, "n_features_in_"):
            del est.n_features_in_
        return X, y
    return check_estimator_data(est, X, y, y_numeric=y_numeric)


def train_gram(est, X):
    """The training kernel matrix, the Kernel object, and the name of the matrix when the
    kernel is the user's (precomputed or callable: symmetric here, PSD checked by
    :func:`eigh_psd`), else None."""
    kernel = est._make_kernel(X)
    what = user_matrix_name(kernel)
    K = X if kernel.is_precomputed else kernel(X)
    if what is not None:
        name = f"the {what}"
        return check_kernel_matrix(K, name, psd=False), kernel, name
    return (K + K.T) / 2, kernel, None


def cross_gram(kernel: Kernel, X_new, X_fit) -> np.ndarray:
    """Kernel rows of new points against the training points."""
    if kernel.is_precomputed:
        return check_cross_kernel(X_new, len(X_fit))
    return kernel(X_new, X_fit)


def eigh_psd(K, n_components=None, *, solver="auto", random_state=None, name=None):
    """Eigenpairs of K (decreasing), clipped at 0 (rounding noise).

    ``name`` (a user-supplied matrix, see :func:`train_gram`): K must be positive
    semi-definite, which the whole spectrum shows; a partial one cannot, and K is then
    checked by a Cholesky factorisation first.
    """
    partial = n_components is not None and n_components < len(K)
    if name is not None and partial:
        check_kernel_matrix(K, name)
    w, U = top_eigh(K, n_components, solver=solver, random_state=random_state)
    if name is not None and not partial:
        check_psd_spectrum(w, name)
    return np.maximum(w, 0.0), U
