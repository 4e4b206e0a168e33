"""Reduced-set approximations of SVM decision functions (Schölkopf et al. 1999, Section V).

The expansion and its SVC adapters (:mod:`~kpm.reduced_set.expansion`), the selection
methods (:mod:`~kpm.reduced_set.selection`), the constructions
(:mod:`~kpm.reduced_set.construction`), their dispatch at a budget
(:mod:`~kpm.reduced_set.reduction`), the fits on the training set
(:mod:`~kpm.reduced_set.data_fit`) and the estimator (:mod:`~kpm.reduced_set.svc`).
"""

from kpm.reduced_set.expansion import expansion_error, optimal_coefficients
from kpm.reduced_set.svc import METHODS, ReducedSetSVC, reduce_svc

__all__ = ["ReducedSetSVC", "reduce_svc", "optimal_coefficients", "expansion_error", "METHODS"]
