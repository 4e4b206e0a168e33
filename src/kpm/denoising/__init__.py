"""Denoising by kernel PCA and pre-images (Schölkopf et al. 1999; Mika et al. 1999).

* :mod:`kpm.denoising.denoise` -- :class:`KernelPCADenoiser` (kernel PCA projection followed
  by :meth:`kpm.KernelProjection.inverse_transform`) and :class:`LinearPCADenoiser`;
* :mod:`kpm.denoising.preimage` -- approximate pre-images of feature-space expansions
  (the fixed-point iteration for Gaussian kernels, gradient descent for any
  differentiable kernel, the MDS pre-image of Kwok & Tsang 2004) and the learned
  pre-image map of Bakır, Weston & Schölkopf (2004).
"""

from kpm.denoising.preimage import (
    PreimageInfo,
    LearnedPreimage,
    fit_learned_preimage,
    gaussian_fixed_point,
    gradient_preimage,
    mds_preimage,
    preimage_objective,
    solve_preimages,
)
from kpm.denoising.denoise import KernelPCADenoiser, LinearPCADenoiser

__all__ = [
    "KernelPCADenoiser",
    "LinearPCADenoiser",
    "PreimageInfo",
    "LearnedPreimage",
    "fit_learned_preimage",
    "gaussian_fixed_point",
    "gradient_preimage",
    "mds_preimage",
    "preimage_objective",
    "solve_preimages",
]
