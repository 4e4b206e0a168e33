"""Reduced-set approximations of SVM decision functions (Schölkopf et al. 1999, Section V)."""

from kpm.reduced_set.svc import METHODS, ReducedSetSVC, expansion_error, optimal_coefficients, reduce_svc

__all__ = ["ReducedSetSVC", "reduce_svc", "optimal_coefficients", "expansion_error", "METHODS"]
