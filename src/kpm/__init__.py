"""kpm: learning in kernel feature spaces by explicit projection.

Public estimators and functions are importable from the top-level package;
submodules are imported lazily on first use, so ``import kpm`` is cheap.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> submodule that defines it
_EXPORTS = {
    # configuration and kernels
    "get_config": "kpm.config",
    "set_config": "kpm.config",
    "config_context": "kpm.config",
    "Kernel": "kpm.kernels",
    "KernelMemoryError": "kpm.exceptions",
    "LPSolverError": "kpm.exceptions",
    "DegenerateKernelWarning": "kpm.exceptions",
    "DegenerateModelWarning": "kpm.exceptions",
    "ReferenceModelWarning": "kpm.exceptions",
    "make_kernel": "kpm.kernels",
    "pairwise_kernel": "kpm.kernels",
    "median_sigma": "kpm.kernels",
    # explicit feature map (Kwak's nonlinear projection trick) and PCA-L1
    "KernelProjection": "kpm.decomposition.projection",
    "PCAL1": "kpm.decomposition.pca_l1",
    "KernelPCAL1": "kpm.decomposition.pca_l1",
    # Kernel Projection Machine
    "KernelProjectionMachine": "kpm.machine.exact",
    "SelectionRule": "kpm.machine.rules",
    "CV": "kpm.machine.rules",
    "Penalty": "kpm.machine.rules",
    "Slope": "kpm.machine.rules",
    "FixedD": "kpm.machine.rules",
    # relevant dimensions, kernel PCR, kernel selection, string kernels
    "RelevantDimension": "kpm.relevance",
    "select_kernel": "kpm.relevance",
    "KernelPCRRegressor": "kpm.relevance.pcr",
    "KernelPCRClassifier": "kpm.relevance.pcr",
    "WeightedDegreeKernel": "kpm.kernels",
    "weighted_degree_kernel": "kpm.kernels",
    # denoising and pre-images
    "KernelPCADenoiser": "kpm.denoising.denoise",
    "LinearPCADenoiser": "kpm.denoising.denoise",
    # reduced sets
    "ReducedSetSVC": "kpm.reduced_set",
    "reduce_svc": "kpm.reduced_set",
    # large scale
    "NystroemKPM": "kpm.machine.nystroem",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'kpm' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
