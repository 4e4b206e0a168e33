"""The path methods of the Kernel Projection Machine on its exact basis.

With ``keep_paths=True`` a :class:`~kpm.machine.exact.KernelProjectionMachine` fitted on the
eigenvectors of the kernel matrix keeps its basis and the full-data paths of the chosen member
of its family (Blanchard, Massart, Vert & Zwald 2004: one model per D): :class:`ExactPaths`
gives their methods -- the path solved further (:meth:`ExactPaths.extend_path`), the decision
values and labels at every D. On the Nyström basis only :meth:`~kpm.machine.base.BaseKPM.select_dim`
applies.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from kpm.hinge.lp_path import HingePath
from kpm.machine.engine import predict_codes
from kpm.validation import check_int

__all__ = ["ExactPaths"]


class ExactPaths:
    """The path methods of the exact KPM (a mixin of
    :class:`~kpm.machine.exact.KernelProjectionMachine`, whose fitted state they read)."""

    def _set_path(self, full):
        self.path_dims_ = full.dims
        self.coef_path_ = [p.coef for p in full.paths]
        self.intercept_path_ = [p.intercept for p in full.paths]

    def _extend_hint(self):
        return "call extend_path() first, or "

    # ------------------------------------------------------------------ the path
    def extend_path(self, max_components=None):
        """Solve the winning kernel's full-data path further, for figures.

        With ``selection='cv'`` the full-data path is solved only up to the selected D; this
        solves it on the CV sweep's dimensions up to ``max_components`` (default: all of
        them) and fills in ``selection_curve_``'s training risks, ``path_dims_``,
        ``coef_path_`` and ``intercept_path_``. The fitted function does not change.

        Returns
        -------
        self

        Raises
        ------
        AttributeError
            When the model was fitted without ``keep_paths=True``.
        """
        self._check_paths("extend_path")
        grid = self._grid_used
        if max_components is not None:
            max_components = check_int(max_components, "max_components")
            grid = grid[grid <= max_components]
            if len(grid) == 0 or grid[-1] < self.n_components_:
                grid = self._grid_used[self._grid_used <= self.n_components_]
        if len(grid) <= len(self.path_dims_):
            return self
        full = self._model_kp.solve_path(grid, self._Y)
        self._set_path(full)
        rows = np.flatnonzero(self._curves.kernel == self._model_member)[: len(full.dims)]
        self.selection_curve_["hinge_risk"][rows] = full.hinge_risk
        self.selection_curve_["clipped_risk"][rows] = full.clipped_risk
        if full.train_error is not None:
            self.selection_curve_["train_error"][rows] = full.train_error
        if self.penalty_ is not None:
            self.selection_curve_["criterion"][rows] = full.clipped_risk + self.penalty_ * full.dims
        return self

    def _check_paths(self, method):
        """The path methods read the eigenvector basis; on the Nyström basis only
        :meth:`select_dim` applies (its curves are kept with ``keep_paths=True``)."""
        check_is_fitted(self)
        if self.basis_ == "nystroem":
            if method != "select_dim":
                raise AttributeError(f"{self._name}.{method}() reads the eigenvectors of the kernel matrix: it applies "
                                     "to a fit on the exact basis (basis_='exact'); this model was fitted on the "
                                     "Nystroem basis (see NystroemKPM.transform_eigenfunctions)")
            if "_curves" not in self.__dict__:
                super()._check_paths(method)
            return
        super()._check_paths(method)

    def decision_function_path(self, X):
        """Decision values of the winning kernel's solution at every D of ``path_dims_``.

        Returns
        -------
        ndarray (n, n_dims) for two classes, (n, n_dims, n_classes) otherwise.

        Raises
        ------
        AttributeError
            When the model was fitted without ``keep_paths=True``.
        """
        self._check_paths("decision_function_path")
        Kx = self._kernel_rows(X)
        m = max(c.shape[1] for c in self.coef_path_)
        Z = self._subspace.features(Kx, m)
        F = []
        for coef, b in zip(self.coef_path_, self.intercept_path_):
            p = HingePath(self.path_dims_, coef, b, np.zeros(len(b)), 1, np.zeros(len(b), int))
            F.append(p.decision_values(Z))
        F = np.stack(F, axis=2)
        return F[:, :, 0] if F.shape[2] == 1 else F

    def predict_path(self, X):
        """Predicted labels for every D: (n, n_dims) (a fit with ``keep_paths=True`` only)."""
        self._check_paths("predict_path")
        F = self.decision_function_path(X)
        return self.classes_[predict_codes(F[:, :, None] if F.ndim == 2 else F)]
