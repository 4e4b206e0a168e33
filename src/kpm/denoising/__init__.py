"""Denoising by kernel PCA and pre-images (Schölkopf et al. 1999; Mika et al. 1999).

* :mod:`kpm.denoising.denoise` -- :class:`KernelPCADenoiser` (kernel PCA projection followed
  by :meth:`kpm.KernelProjection.inverse_transform`) and :class:`LinearPCADenoiser`;
* :mod:`kpm.denoising.selection` -- the number of components chosen from the data
  (``n_components='auto'``).

The pre-image solvers are in :mod:`kpm.preimage`.
"""

from kpm.denoising.denoise import KernelPCADenoiser, LinearPCADenoiser

__all__ = ["KernelPCADenoiser", "LinearPCADenoiser"]
