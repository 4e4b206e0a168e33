"""Approximate pre-images: input points whose images are closest to feature-space points.

* :mod:`kpm.preimage.solvers` -- pre-images of feature-space expansions: the fixed-point
  iteration for Gaussian kernels (Schölkopf et al. 1999), gradient descent for any
  differentiable kernel, the MDS pre-image of Kwok & Tsang (2004);
* :mod:`kpm.preimage.learned` -- the learned pre-image map of Bakır, Weston & Schölkopf (2004);
* :mod:`kpm.preimage.noise` -- the noise level of data from linear PCA of held-out points
  (Tipping & Bishop 1999), against which a learned map is judged.

:meth:`kpm.KernelProjection.inverse_transform` and :class:`kpm.KernelPCADenoiser` use them.
"""

from kpm.preimage.learned import LEARNED_ALPHA_GRID, LearnedPreimage, fit_learned_preimage
from kpm.preimage.solvers import (
    DIFFERENTIABLE_KERNELS,
    PREIMAGE_METHODS,
    PreimageInfo,
    default_preimage,
    gaussian_fixed_point,
    gradient_preimage,
    mds_preimage,
    preimage_objective,
    solve_preimages,
)

__all__ = [
    "PREIMAGE_METHODS",
    "DIFFERENTIABLE_KERNELS",
    "PreimageInfo",
    "LearnedPreimage",
    "default_preimage",
    "gaussian_fixed_point",
    "gradient_preimage",
    "mds_preimage",
    "solve_preimages",
    "fit_learned_preimage",
    "LEARNED_ALPHA_GRID",
    "preimage_objective",
]
