"""Kernel parameters as users give them: the RBF width conventions, data-dependent
defaults, :func:`make_kernel` (name or alias -> registered family) and :func:`pairwise_kernel`.

The Gaussian (RBF) kernel has three common parametrisations; all are accepted and
converted to one canonical form, ``gamma``:

===================  ==================================  ======================
convention           formula                             conversion
===================  ==================================  ======================
KPM papers (sigma)   ``exp(-||x-y||^2 / (2 sigma^2))``   ``gamma = 1/(2 sigma^2)``
scikit-learn         ``exp(-gamma ||x-y||^2)``           ``gamma``
Schölkopf et al. (c) ``exp(-||x-y||^2 / c)``             ``gamma = 1/c``
===================  ==================================  ======================

``sigma='median'`` is the median heuristic (:func:`median_sigma`), ``gamma='scale'``
(the RBF default) scikit-learn's ``1 / (n_features X.var())``. Polynomial and sigmoid
kernels read ``gamma`` as the scale of ``<x, y>`` (default 1), the inverse multiquadric
reads ``c`` as its offset (default 1).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from kpm.validation import (
    Callable,
    InstanceOf,
    Options,
    Real,
    check_generator,
    check_int,
    check_param,
    check_samples,
)
from kpm.kernels.base import Kernel, check_kernel_param, kernel_class, kernel_names
from kpm.kernels.callable import CallableKernel

__all__ = [
    "make_kernel",
    "pairwise_kernel",
    "median_sigma",
    "rbf_gamma",
    "scale_gamma",
    "inner_product_gamma",
]


def _representable(gamma, name, value):
    """``gamma`` derived from a width must be a positive finite float64."""
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(
            f"{name}={value!r} is outside the range of kernel widths that float64 can represent "
            f"(it gives gamma = {float(gamma)!r}); rescale the features instead"
        )
    return float(gamma)


def rbf_gamma(sigma, gamma, c, X):
    """The canonical ``gamma`` of an RBF kernel given by one of ``sigma``, ``gamma``, ``c``
    (see the module docstring); ``X`` (training data) for ``'median'`` and ``'scale'``."""
    given = [name for name, v in (("sigma", sigma), ("gamma", gamma), ("c", c)) if v is not None]
    if len(given) > 1:
        raise ValueError(
            f"give only one RBF width, got {' and '.join(given)}: sigma (exp(-|x-y|^2/(2 sigma^2))), "
            "gamma (exp(-gamma |x-y|^2)) or c (exp(-|x-y|^2/c))"
        )
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        if sigma is not None:
            if isinstance(sigma, str):
                check_param(sigma, "sigma", [Real(0, None, "neither"), Options("median")])
                if X is None:
                    raise ValueError("sigma='median' needs the training data")
                sigma = median_sigma(X)
                return _representable(0.5 / np.float64(sigma) ** 2, "sigma='median', the median distance", sigma)
            sigma = check_kernel_param("sigma", sigma, positive=True)
            return _representable(0.5 / np.float64(sigma) ** 2, "sigma", sigma)
        if c is not None:
            c = check_kernel_param("c", c, positive=True)
            return _representable(1.0 / np.float64(c), "c", c)
        if gamma is None or (isinstance(gamma, str) and gamma == "scale"):
            if X is None:
                raise ValueError("the default RBF width (gamma='scale') needs the training data")
            return scale_gamma(X)
    if isinstance(gamma, str):
        check_param(gamma, "gamma", [Real(0, None, "neither"), Options("scale")])
    return check_kernel_param("gamma", gamma, positive=True)


def scale_gamma(X):
    """scikit-learn's ``gamma='scale'``, ``1 / (n_features X.var())``, computed on the
    rescaled data so that tiny or huge magnitudes neither underflow nor overflow.
    Identical samples (variance exactly 0) give 1, as in scikit-learn: every width
    gives the same constant kernel matrix then."""
    X = check_samples(X)
    s = float(np.max(np.abs(X)))
    var = float((X / s).var()) if s > 0 else 0.0
    if var == 0.0:
        return 1.0
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        gamma = 1.0 / (X.shape[1] * var) / np.float64(s) ** 2
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(
            f"gamma='scale' gives no RBF width that float64 can represent for data of magnitude "
            f"{s:.3g} (gamma = {float(gamma)!r}); rescale the features, e.g. with "
            "sklearn.preprocessing.StandardScaler"
        )
    return float(gamma)


def inner_product_gamma(gamma):
    """The scale of ``<x, y>`` in the polynomial and sigmoid kernels: 1 by default
    (``None`` or ``'scale'``), else a positive number."""
    if gamma is None or gamma == "scale":
        return 1.0
    return gamma


def make_kernel(
    kernel="rbf",
    *,
    sigma=None,
    gamma=None,
    c=None,
    degree=3,
    coef0=1.0,
    kernel_params=None,
    X=None,
) -> Kernel:
    r"""Build a validated :class:`Kernel`.

    Parameters
    ----------
    kernel : str, callable or Kernel
        A registered name (:data:`kpm.kernels.KERNELS`: ``'rbf'`` (alias
        ``'gaussian'``), ``'poly'``, ``'sigmoid'``, ``'imq'``, ``'linear'``,
        ``'precomputed'``, ``'weighted_degree'`` (alias ``'wd'``)...), a callable
        ``f(X, Y) -> matrix``, or an existing :class:`Kernel` (returned unchanged).
    sigma : float or 'median', optional
        RBF width of the KPM papers, :math:`\exp(-\|x-y\|^2/(2\sigma^2))`. ``'median'``
        uses :func:`median_sigma` of ``X``.
    gamma : float or 'scale', optional
        RBF: :math:`\exp(-\gamma \|x-y\|^2)`; poly/sigmoid: scale of the inner product
        (default 1). For RBF the default ``'scale'`` is ``1/(n_features X.var())``.
    c : float, optional
        RBF: Schölkopf's :math:`\exp(-\|x-y\|^2/c)`; IMQ: the offset (default 1).
    degree : float, default=3
        Polynomial degree (weighted-degree kernel: the longest substring matched).
    coef0 : float, default=1.0
        Additive constant of poly and sigmoid.
    kernel_params : dict, optional
        Extra parameters: any of the above by name, a family's own parameters (e.g.
        ``normalize`` of the weighted-degree kernel), or keyword arguments of a
        callable kernel.
    X : array-like, optional
        Training data, needed only by data-dependent defaults.

    Returns
    -------
    Kernel
    """
    if isinstance(kernel, Kernel):
        return kernel
    check_param(kernel_params, "kernel_params", [InstanceOf(Mapping, "a dict of kernel parameters"), None])
    params = dict(kernel_params or {})
    if callable(kernel):
        return CallableKernel(func=kernel, func_kwargs=tuple(sorted(params.items())))
    check_param(kernel, "kernel", [InstanceOf(str, "a string"), Callable(), InstanceOf(Kernel, "a kpm Kernel")])
    family = kernel_class(kernel)
    if family is None or family is CallableKernel:
        raise ValueError(f"unknown kernel {kernel!r}; expected one of {kernel_names()} or a callable")
    given = dict(sigma=sigma, gamma=gamma, c=c, degree=degree, coef0=coef0)
    for key in given:
        given[key] = params.pop(key, given[key])
    return family.from_params(X=X, **given, **params)


def pairwise_kernel(X, Y=None, kernel="rbf", **params) -> np.ndarray:
    """Kernel matrix of X against Y (``Y = X`` when omitted).

    ``params`` are those of :func:`make_kernel`. X and Y are validated as by
    :func:`kpm.validation.check_samples` (finite, 2-D); kernel values that overflow
    float64 raise ``ValueError``.
    """
    X = check_samples(X, "X")
    if Y is not None:
        Y = check_samples(Y, "Y")
    return make_kernel(kernel, X=X, **params)(X, Y)


def median_sigma(X, *, max_samples: int = 2000, random_state=0) -> float:
    """Median heuristic: the median pairwise Euclidean distance between samples.

    At most ``max_samples`` rows (drawn with ``random_state``) are used. The distances
    are computed as norms of differences of the rescaled rows, so that data of any
    magnitude representable in float64 gives a finite, accurate width.

    Raises
    ------
    ValueError
        With fewer than 2 samples, or when the median distance is 0 (more than half
        of the pairs of samples are identical).
    """
    from scipy.spatial.distance import pdist

    X = check_samples(X, min_samples=2)
    max_samples = check_int(max_samples, "max_samples", minimum=2)
    if len(X) > max_samples:
        rng = check_generator(random_state)
        X = X[rng.choice(len(X), max_samples, replace=False)]
    s = float(np.max(np.abs(X)))
    med = float(np.median(pdist(X / s))) if s > 0 else 0.0
    if med <= 0:
        raise ValueError(
            "the median pairwise distance is 0: more than half of the pairs of samples are "
            "identical, so the median heuristic gives no kernel width"
        )
    with np.errstate(over="ignore"):
        sigma = med * np.float64(s)
    if not np.isfinite(sigma):
        raise ValueError(f"the median pairwise distance overflows float64 (data of magnitude {s:.3g})")
    return float(sigma)
