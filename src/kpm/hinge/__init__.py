"""Solvers of the hinge-loss problems of the Kernel Projection Machine, along nested subspaces.

For every dimension D the KPM minimises the hinge loss over the span of the first D
feature columns (Blanchard, Massart, Vert & Zwald 2004, Section 3); the subspaces are
nested, so every solver here is warm-started along D:

* :mod:`kpm.hinge.lp_path` -- the path of hinge LPs (:class:`HingePath`), the
  :class:`PathSolver` protocol and the path loop every solver plugs into;
* :mod:`kpm.hinge.simplex` -- a specialised simplex on the kinks of the hinge loss
  (compiled inner loop in :mod:`kpm.hinge.simplex_loops`), with HiGHS
  (:mod:`kpm.hinge.highs`) as fallback;
* :mod:`kpm.hinge.constraint_generation` -- the exact LP on millions of points by
  constraint (row) generation (its settings: :class:`ConstraintGenerationOptions`) over a
  row source (:mod:`kpm.hinge.rows`: in memory; :mod:`kpm.machine.dask_data`: on Dask
  workers), optionally aggregating the points of clear hinge loss
  (:mod:`kpm.hinge.aggregation`);
* :mod:`kpm.hinge.svm_path` -- the soft-margin SVM along D by dual coordinate descent
  (the KPM's ``formulation='svm'``).
"""

from kpm.hinge.constraint_generation import ConstraintGenerationOptions
from kpm.hinge.lp_path import HingeLP, HingePath, PathGrower, PathSolver, grow_path, hinge_lp_path

__all__ = ["HingePath", "HingeLP", "PathSolver", "PathGrower", "grow_path", "hinge_lp_path",
           "ConstraintGenerationOptions"]
