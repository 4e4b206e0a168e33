"""Kernel functions, computed in memory-bounded blocks.

Every kernel is an immutable :class:`Kernel` object, built by :func:`make_kernel` from
the user's parameters (a name, a callable or a kernel) and called as ``kernel(X, Y)``.
Each family is a small class in its own module of this package, registered under its
name and aliases:

======================  ==================================  ================================
name (aliases)          k(x, y)                             class (module)
======================  ==================================  ================================
``'rbf'`` (gaussian)    ``exp(-gamma ||x-y||^2)``           :class:`RBFKernel` (``rbf``)
``'poly'``              ``(gamma <x,y> + coef0)^degree``    :class:`PolynomialKernel`
``'sigmoid'`` (tanh)    ``tanh(gamma <x,y> + coef0)``       :class:`SigmoidKernel`
``'imq'``               ``1/sqrt(||x-y||^2 + c^2)``         :class:`InverseMultiquadricKernel`
``'linear'``            ``<x, y>``                          :class:`LinearKernel`
``'precomputed'``       the input is the kernel matrix      :class:`PrecomputedKernel`
``'weighted_degree'``   weighted-degree string kernel       :class:`WeightedDegreeKernel`
(a callable)            ``f(X, Y) -> matrix``               :class:`CallableKernel`
======================  ==================================  ================================

The papers' polynomial ``(<x,y>+c)^d`` is ``gamma=1, coef0=c``; the sigmoid's kappa and
Theta are ``gamma`` and ``coef0``. The three conventions of the Gaussian width (``sigma``,
``gamma``, ``c``) and the data-dependent defaults are in :mod:`kpm.kernels.conventions`,
with :func:`make_kernel`, :func:`pairwise_kernel` and :func:`median_sigma`.

A full kernel matrix larger than ``kpm.get_config()['max_kernel_bytes']`` is
never materialised: :meth:`Kernel.__call__` raises :class:`KernelMemoryError`.
Use :meth:`Kernel.blocks` or :meth:`Kernel.matvec` to stream over it instead.

Adding a kernel
---------------
Write one module of this package, e.g. ``laplacian.py``, with a frozen dataclass of the
kernel's parameters that subclasses :class:`Kernel`, decorated with
:func:`register_kernel`::

    @register_kernel
    @dataclass(frozen=True, repr=False)
    class LaplacianKernel(Kernel):
        name = "laplacian"              # what make_kernel(...) and estimators accept
        gamma: float = 1.0

        def evaluate(self, X, Y, X_sq=None, Y_sq=None, out=None):
            return np.exp(-self.gamma * scipy.spatial.distance.cdist(X, Y, "cityblock"))

and import it in this ``__init__`` (the registry entry). The base class gives it input
validation (:meth:`Kernel.check_input`, numeric samples unless overridden), the memory
budget, :meth:`~Kernel.blocks`, :meth:`~Kernel.matvec`, :meth:`~Kernel.diag`, value
checks, equality, hashing and pickling. Optional: ``needs_sq_norms = True`` (the squared
row norms are then computed once and passed to ``evaluate``), ``is_stationary``,
``evaluate_diag`` (a fast diagonal), ``from_params`` (how :func:`make_kernel`'s
``sigma``/``gamma``/``c``/``degree``/``coef0`` and ``kernel_params`` map to the
parameters; the default takes none), ``sklearn_params``, and for non-numeric input
``raw_input = True`` with ``check_input``/``check_pair`` (see
:class:`WeightedDegreeKernel`). The contract tests (``tests/kernels``) then run on it
once it has an entry with representative parameters there.
"""

from __future__ import annotations

from kpm.kernels.base import (
    Kernel,
    KernelMemoryError,
    check_kernel_budget,
    format_bytes,
    kernel_class,
    kernel_names,
    register_kernel,
)
from kpm.kernels.distances import squared_distances
from kpm.kernels.callable import CallableKernel
from kpm.kernels.conventions import make_kernel, median_sigma, pairwise_kernel

# the families, in the order of KERNELS (importing a module registers its family)
from kpm.kernels.rbf import RBFKernel
from kpm.kernels.polynomial import PolynomialKernel
from kpm.kernels.sigmoid import SigmoidKernel
from kpm.kernels.imq import InverseMultiquadricKernel
from kpm.kernels.linear import LinearKernel
from kpm.kernels.precomputed import PrecomputedKernel
from kpm.kernels.weighted_degree import WeightedDegreeKernel, check_strings, encode_strings, weighted_degree_kernel

__all__ = [
    "Kernel",
    "KernelMemoryError",
    "KERNELS",
    "make_kernel",
    "pairwise_kernel",
    "median_sigma",
    "squared_distances",
    "register_kernel",
    "kernel_class",
    "kernel_names",
    "format_bytes",
    "check_kernel_budget",
    "RBFKernel",
    "PolynomialKernel",
    "SigmoidKernel",
    "InverseMultiquadricKernel",
    "LinearKernel",
    "PrecomputedKernel",
    "CallableKernel",
    "WeightedDegreeKernel",
    "weighted_degree_kernel",
    "encode_strings",
    "check_strings",
]

#: Names accepted by :func:`make_kernel` (plus aliases and callables) of kpm's own families.
KERNELS = kernel_names()
