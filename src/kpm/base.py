"""Shared estimator plumbing: kernel parameters, input validation and the training kernel
matrix of kernel estimators (numeric, precomputed or raw string input)."""

from __future__ import annotations

import numpy as np

from kpm.kernels import Kernel, kernel_class, make_kernel
from kpm.validation import (
    check_cross_kernel,
    check_estimator_data,
    check_int,
    check_kernel_matrix,
)

__all__ = [
    "KernelParamsMixin",
    "check_n_components",
    "user_matrix_name",
    "accepts_raw_input",
    "raw_input_kernel",
    "validate_kernel_input",
    "validate_kernel_input_y",
    "train_gram",
    "cross_gram",
]


class KernelParamsMixin:
    """Builds the :class:`~kpm.kernels.Kernel` of an estimator from its parameters.

    The estimator must define ``kernel`` and may define ``sigma``, ``gamma``,
    ``degree``, ``coef0`` and ``kernel_params`` (scikit-learn style parameters). These are
    checked by :func:`kpm.kernels.make_kernel` when the kernel is built (what they may be
    depends on the kernel family: ``sigma`` is an RBF width, ``degree`` a polynomial's), so
    an estimator's ``_parameter_constraints`` declare its other parameters only.
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
        if accepts_raw_input(self.kernel):
            tags.input_tags.two_d_array = False
            tags.input_tags.string = True
        return tags


def store_init_params(est, params):
    """Set the constructor's parameters on ``est`` as they are (``params``: the constructor's
    ``locals()`` before anything else runs): scikit-learn's convention of one attribute per
    parameter, unchanged, its validation left to ``fit``, written once for the estimators
    with long parameter lists."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


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

    A precomputed matrix or the matrix of a callable kernel (:attr:`Kernel.user_defined
    <kpm.kernels.Kernel>`) must be checked (square, symmetric, positive semi-definite:
    :func:`kpm.validation.check_kernel_matrix`); kpm's own kernels need no check (they
    are positive semi-definite by construction, except 'sigmoid', which is used as it
    is, as in scikit-learn).
    """
    if kernel.is_precomputed:
        return "precomputed kernel matrix"
    if kernel.user_defined:
        return f"kernel matrix of the {kernel.name} kernel"
    return None


def raw_input_kernel(kernel):
    """The kernel that validates an estimator's raw (possibly non-numeric) input, or None.

    ``kernel`` is an estimator's ``kernel`` parameter: a :class:`~kpm.kernels.Kernel`
    with :attr:`~kpm.kernels.Kernel.raw_input` (e.g. a
    :class:`~kpm.kernels.WeightedDegreeKernel`), the registered name of such a family
    (``'weighted_degree'``), a callable with a ``check_input`` method, a dict of
    :func:`~kpm.kernels.make_kernel` parameters, or a list of these (all on raw input,
    or none).
    """
    if isinstance(kernel, (list, tuple)):
        found = [raw_input_kernel(k) for k in kernel]
        if any(k is None for k in found) and any(k is not None for k in found):
            raise ValueError(
                "a kernel list cannot mix kernels on numeric features with kernels that "
                "validate their own input (e.g. string kernels)"
            )
        return found[0] if found else None
    if isinstance(kernel, Kernel):
        return kernel if kernel.raw_input else None
    if isinstance(kernel, dict):
        kernel = kernel.get("kernel", "rbf")
    if isinstance(kernel, str):
        family = kernel_class(kernel)
        return family() if family is not None and family.by_name and family.raw_input else None
    if callable(getattr(kernel, "check_input", None)):
        return make_kernel(kernel)
    return None


def accepts_raw_input(kernel) -> bool:
    """True when the kernel validates its own (possibly non-numeric) input
    (see :func:`raw_input_kernel`)."""
    try:
        return raw_input_kernel(kernel) is not None
    except ValueError:
        return False


def _check_n_samples(X, min_samples):
    if len(X) < min_samples:
        raise ValueError(f"Found {len(X)} sample(s) while a minimum of {min_samples} is required.")


def validate_kernel_input(est, X, *, reset: bool, min_samples: int = 1):
    """Validate X for a kernel estimator: by the kernel's input hook
    (:meth:`Kernel.check_input <kpm.kernels.Kernel.check_input>`) when it takes raw input
    (strings), else as numeric samples or a precomputed matrix
    (:func:`kpm.validation.check_estimator_data`)."""
    kernel = raw_input_kernel(est.kernel)
    if kernel is not None:
        X = kernel.check_input(X)
        _check_n_samples(X, min_samples)
        if reset:
            if hasattr(est, "n_features_in_"):
                del est.n_features_in_
        return X
    return check_estimator_data(est, X, reset=reset, min_samples=min_samples)


def validate_kernel_input_y(est, X, y, *, y_numeric: bool, min_samples: int = 1):
    """Validate X and y for a kernel estimator (y numeric and finite with ``y_numeric``)."""
    kernel = raw_input_kernel(est.kernel)
    if kernel is not None:
        X = kernel.check_input(X)
        _check_n_samples(X, min_samples)
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
    return check_estimator_data(est, X, y, y_numeric=y_numeric, min_samples=min_samples)


def train_gram(est, X):
    """The training kernel matrix, the Kernel object, and the name of the matrix when the
    kernel is the user's (precomputed or callable: symmetric here, PSD checked by
    :func:`kpm.spectral.eigen_basis`), else None."""
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
