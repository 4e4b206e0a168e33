"""The validation layer: one place decides what a valid input is, and every failure names
the problem.

* :mod:`kpm.validation.params` -- parameters, declared per estimator
  (``_parameter_constraints``, checked by :func:`validate_params` at ``fit``), and the same
  constraints for one value at a time (:func:`check_int`, :func:`check_real`,
  :func:`check_option`, :func:`check_bool`, :func:`check_positive_grid`,
  :func:`check_generator`, :func:`check_random_state`);
* :mod:`kpm.validation.data` -- arrays of samples (:func:`check_samples`,
  :func:`check_estimator_data`) and their weights (:func:`check_sample_weight`,
  :func:`check_weighted_classes`);
* :mod:`kpm.validation.kernel_matrix` -- kernel matrices given by the user and computed
  kernel values (:func:`check_kernel_matrix`, :func:`check_psd_spectrum`,
  :func:`check_cross_kernel`, :func:`check_kernel_values`);
* :mod:`kpm.validation.targets` -- class labels and real targets (:func:`one_vs_rest`,
  :func:`ovr_targets`, :func:`relevance_targets`);
* :mod:`kpm.validation.degeneracy` -- degenerate kernels and models
  (:func:`kernel_degeneracy`, :func:`warn_if_degenerate_kernel`,
  :func:`warn_if_degenerate_model`, ...).
"""

from kpm.validation.data import (
    check_estimator_data,
    check_sample_weight,
    check_samples,
    check_weighted_classes,
    duplicate_groups,
)
from kpm.validation.degeneracy import (
    DEGENERACY_TOL,
    DIAGONAL_RTOL,
    ISOLATED_FRACTION,
    kernel_degeneracy,
    warn_degenerate_kernel,
    warn_if_degenerate_counts,
    warn_if_degenerate_kernel,
    warn_if_degenerate_model,
    warn_if_one_class,
    self_similarity_excess,
    clearly_higher_error,
)
from kpm.validation.kernel_matrix import (
    PSD_RTOL,
    SYMMETRY_RTOL,
    check_cross_kernel,
    check_kernel_matrix,
    check_kernel_values,
    check_psd_spectrum,
)
from kpm.validation.params import (
    Boolean,
    Callable,
    ClassWeights,
    Constraint,
    Integer,
    IntegerGrid,
    InstanceOf,
    Options,
    PositiveGrid,
    RandomState,
    Real,
    Splitter,
    check_bool,
    check_generator,
    check_int,
    check_option,
    check_param,
    check_positive_grid,
    check_random_state,
    check_real,
    validate_params,
)
from kpm.validation.targets import one_vs_rest, ovr_targets, relevance_targets

__all__ = [
    "Constraint", "Integer", "Real", "Options", "Boolean", "InstanceOf", "Callable", "PositiveGrid",
    "IntegerGrid", "Splitter", "RandomState", "ClassWeights", "check_param", "validate_params",
    "check_int", "check_real", "check_option", "check_bool", "check_positive_grid", "check_generator",
    "check_random_state",
    "check_samples", "check_estimator_data", "check_sample_weight", "check_weighted_classes", "duplicate_groups",
    "one_vs_rest", "ovr_targets", "relevance_targets",
    "SYMMETRY_RTOL", "PSD_RTOL", "check_kernel_matrix", "check_psd_spectrum", "check_cross_kernel",
    "check_kernel_values",
    "DEGENERACY_TOL", "ISOLATED_FRACTION", "DIAGONAL_RTOL", "kernel_degeneracy", "warn_if_degenerate_kernel",
    "warn_degenerate_kernel", "warn_if_one_class", "warn_if_degenerate_model", "warn_if_degenerate_counts",
    "self_similarity_excess",
    "clearly_higher_error",
]
