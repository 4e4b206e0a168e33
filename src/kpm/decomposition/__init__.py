"""Kernel PCA as an explicit feature map, and PCA-L1.

* :mod:`kpm.decomposition.projection` -- :class:`KernelProjection`: coordinates of the
  mapped points in the span of the mapped training points (Kwak 2013, the nonlinear
  projection trick; Schölkopf, Smola & Müller 1998), so that any linear method runs in
  kernel space; it delegates to :mod:`kpm.decomposition.solvers` (the eigensolver and the
  dense, matrix-free and Nyström fits), :mod:`kpm.decomposition.components` (the number of
  components, the relevant dimension) and :mod:`kpm.decomposition.preimaging` (the way
  back to input space, with the solvers of :mod:`kpm.preimage`);
* :mod:`kpm.decomposition.pca_l1` -- :class:`PCAL1` and :class:`KernelPCAL1` (Kwak 2008, 2013).
"""

from kpm.decomposition.pca_l1 import PCAL1, KernelPCAL1, l1_dispersion, pca_l1_component
from kpm.decomposition.projection import KernelProjection, fit_coordinates

__all__ = ["KernelProjection", "fit_coordinates", "PCAL1", "KernelPCAL1", "pca_l1_component", "l1_dispersion"]
