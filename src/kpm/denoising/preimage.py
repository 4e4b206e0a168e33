"""The pre-image solvers, now in :mod:`kpm.preimage` (this module re-exports its public names)."""

from kpm.preimage import (  # noqa: F401
    DIFFERENTIABLE_KERNELS,
    LEARNED_ALPHA_GRID,
    PREIMAGE_METHODS,
    LearnedPreimage,
    PreimageInfo,
    default_preimage,
    fit_learned_preimage,
    gaussian_fixed_point,
    gradient_preimage,
    mds_preimage,
    preimage_objective,
    solve_preimages,
)
from kpm.preimage import __all__  # noqa: F401
