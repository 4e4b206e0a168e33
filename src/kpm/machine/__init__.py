"""The Kernel Projection Machine (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005).

A KPM fit is *basis x paths x rule*, one skeleton for every basis (:mod:`kpm.machine.base`):

* the estimators -- :class:`KernelProjectionMachine` (:mod:`kpm.machine.exact`, on the
  eigenvectors of the kernel matrix: :mod:`kpm.machine.exact_basis`, :mod:`kpm.machine.eigen`,
  or beyond the memory budget on Nyström eigenfunctions: :mod:`kpm.machine.basis_choice`) and
  :class:`NystroemKPM` (:mod:`kpm.machine.nystroem`, on Nyström eigenfunctions:
  :mod:`kpm.machine.nystroem_data`, and on Dask workers: :mod:`kpm.machine.nystroem_dask`,
  :mod:`kpm.machine.dask_data`);
* :mod:`kpm.machine.family` -- the one engine: the family of models (the paths of every D,
  for every C) and their cross-validation or leave-one-out curves, over any basis;
* :mod:`kpm.machine.grids` -- the D grids;
* :mod:`kpm.machine.formulation` -- what each subspace solves (the papers' LP or the SVM)
  and how C is chosen, resolved once per fit (:class:`~kpm.machine.formulation.FitPlan`);
* :mod:`kpm.machine.folds` -- the cross-validation folds and the work done on each;
* :mod:`kpm.machine.engine` -- what does not depend on the basis: the curves of the
  paths, the choice of the model, the decision rule;
* :mod:`kpm.machine.rules` and :mod:`kpm.machine.selection` -- the selection rules
  (cross-validation, the penalty ``lam D``, the slope heuristic, a fixed D) as objects
  and as the pure functions they apply.
"""

from kpm.machine.dask_data import DaskClientError
from kpm.machine.exact import KernelProjectionMachine
from kpm.machine.formulation import C_EXTENSION, DEFAULT_C, SVM_SOLVER, TWO_STAGE_MAX_SWEEPS
from kpm.machine.nystroem import NystroemKPM
from kpm.machine.nystroem_data import nystroem_eigenfunctions
from kpm.machine.rules import CV, Choice, FixedD, ModelCurves, Penalty, SelectionRule, Slope, as_rule

__all__ = [
    "KernelProjectionMachine",
    "NystroemKPM",
    "DaskClientError",
    "nystroem_eigenfunctions",
    "DEFAULT_C",
    "C_EXTENSION",
    "SVM_SOLVER",
    "TWO_STAGE_MAX_SWEEPS",
    "SelectionRule",
    "CV",
    "Penalty",
    "Slope",
    "FixedD",
    "ModelCurves",
    "Choice",
    "as_rule",
]
