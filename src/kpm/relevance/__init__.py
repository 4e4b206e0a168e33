"""Relevant dimensions of a supervised problem in kernel feature space (Braun, Buhmann & Müller).

* :mod:`kpm.relevance.dimension` -- :class:`RelevantDimension` (how many kernel PCA
  directions carry the label information) and :func:`select_kernel`;
* :mod:`kpm.relevance.pcr` -- kernel principal component regression and classification
  on the relevant directions.
"""

from kpm.relevance.dimension import (
    KernelScore,
    RelevantDimension,
    relevant_dimension_from_contributions,
    select_kernel,
)
from kpm.relevance.pcr import KernelPCRClassifier, KernelPCRRegressor

__all__ = [
    "RelevantDimension",
    "select_kernel",
    "KernelScore",
    "relevant_dimension_from_contributions",
    "KernelPCRRegressor",
    "KernelPCRClassifier",
]
