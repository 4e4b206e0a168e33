"""The Kernel Projection Machine (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005).

A KPM fit is *basis x paths x rule*:

* the estimators -- :class:`KernelProjectionMachine` (:mod:`kpm.machine.exact`: the
  eigenvectors of the kernel matrix) and :class:`NystroemKPM`
  (:mod:`kpm.machine.nystroem`: Nyström eigenfunctions, constraint generation, Dask);
* :mod:`kpm.machine.engine` -- what does not depend on the basis: the curves of the
  paths, the choice of the model, the decision rule;
* :mod:`kpm.machine.rules` and :mod:`kpm.machine.selection` -- the selection rules
  (cross-validation, the penalty ``lam D``, the slope heuristic, a fixed D) as objects
  and as the pure functions they apply.
"""

from kpm.machine.exact import KernelProjectionMachine
from kpm.machine.nystroem import DaskClientError, NystroemKPM, nystroem_eigenfunctions
from kpm.machine.rules import CV, Choice, FixedD, ModelCurves, Penalty, SelectionRule, Slope, as_rule

__all__ = [
    "KernelProjectionMachine",
    "NystroemKPM",
    "DaskClientError",
    "nystroem_eigenfunctions",
    "SelectionRule",
    "CV",
    "Penalty",
    "Slope",
    "FixedD",
    "ModelCurves",
    "Choice",
    "as_rule",
]
