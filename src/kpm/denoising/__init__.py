"""Denoising by kernel PCA and pre-images (Schölkopf et al. 1999; Mika et al. 1999).

* :mod:`kpm.denoising.denoise` -- :class:`KernelPCADenoiser` and :class:`LinearPCADenoiser`;
* :mod:`kpm.denoising.preimage` -- approximate pre-images of feature-space expansions
  (the fixed-point iteration for Gaussian kernels, gradient descent for any
  differentiable kernel).
"""

from kpm.denoising.denoise import KernelPCADenoiser, LinearPCADenoiser, PreimageInfo
from kpm.denoising.preimage import gaussian_fixed_point, gradient_preimage, preimage_objective

__all__ = [
    "KernelPCADenoiser",
    "LinearPCADenoiser",
    "PreimageInfo",
    "gaussian_fixed_point",
    "gradient_preimage",
    "preimage_objective",
]
