"""The exact Kernel Projection Machine's bases: the eigenvectors of each kernel's matrix.

The Kernel Projection Machine (Blanchard, Massart, Vert & Zwald 2004; Zwald & Blanchard 2005)
on its exact basis works in the span of the leading eigenvectors of the n x n kernel matrix.
:class:`ExactBases` makes, for each kernel of an estimator's family, that basis with its D grid
and its cross-validation folds -- each fold's basis decomposed anew (the papers' protocol) or
found by Rayleigh-Ritz in the training set's -- as the :class:`~kpm.machine.family.BasisFit`
the engine (:func:`kpm.machine.family.build_family`) reads, and the kernel expansion of a
chosen model (:meth:`ExactBases.expansion`).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from kpm.kernels import check_kernel_budget, make_kernel
from kpm.machine.eigen import EigenFolds, EigenSubspace, RitzFolds, cv_lockstep, eigen_full_path
from kpm.machine.family import BasisFit
from kpm.machine.grids import SVM_EIGEN_TOL, SVM_LOO_WHOLE_SPECTRUM_N, SVM_MAX_COMPONENTS, dim_grid
from kpm.machine.rules import CV
from kpm.machine.self_similarity import far_apart
from kpm.machine.weights import default_gamma
from kpm.validation import check_kernel_matrix, kernel_degeneracy, self_similarity_excess

__all__ = ["ExactBases", "scale_in_place"]


class ExactBases:
    """The eigenvector bases of an exact KPM's kernels, from its parameters.

    Parameters
    ----------
    est : KernelProjectionMachine
        The estimator whose parameters (``max_components``, ``n_components_grid``,
        ``centered``, ``eigen_solver``, ``cv_basis``, ``lp_solver``, the kernel's) are read.
    plan : FitPlan or None
        The fit's plan (None: only the kernels and the expansion are asked for).
    """

    def __init__(self, est, plan=None):
        self.est = est
        self.plan = plan

    def cv_basis(self):
        """``'ritz'`` (each fold's basis by Rayleigh-Ritz in the training set's) or ``'fold'``
        (each fold's kernel matrix decomposed)."""
        if self.est.cv_basis != "auto":
            if self.est.cv_basis == "ritz" and self.plan.formulation == "paper":
                raise ValueError("cv_basis='ritz' is an option of the SVM formulation; the papers' LP "
                                 "decomposes each fold's kernel matrix (cv_basis='fold')")
            return self.est.cv_basis
        return "ritz" if self.plan.formulation == "svm" else "fold"

    def estimate_basis(self, data):
        """How the CV estimate of the fit reads its basis: ``'loo'`` (the closed-form
        leave-one-out error in the training set's basis), ``'ritz'`` or ``'fold'`` (K folds,
        :meth:`cv_basis`), or None (no cross-validation)."""
        if data.loo:
            return "loo"
        return None if data.splits is None else self.cv_basis()

    def self_similarity(self, K, data):
        """The training points' self-similarity excess (:func:`kpm.validation.self_similarity_excess`
        of the unweighted kernel matrix ``K``) where the default's selection may keep every
        point in its basis (the SVM with the CV rule, by leave-one-out or Ritz folds) and the
        points are far apart (:func:`kpm.machine.self_similarity.far_apart`); else None."""
        if not (self.plan.formulation == "svm" and isinstance(self.plan.rule, CV)
                and self.estimate_basis(data) in ("loo", "ritz")):
            return None
        excess = self_similarity_excess(K)
        return excess if far_apart(K, excess) else None

    @staticmethod
    def keeps_points(basis, data):
        """Whether the selection's estimate keeps every point in ``basis``: the leave-one-out
        error, or Ritz folds in a partial basis (in the whole spectrum they are the folds' own
        eigenvectors)."""
        return data.loo or basis.V.shape[1] < data.n - 1

    def check_memory(self, n):
        """The n x n kernel matrix must fit ``max_kernel_bytes``: the exact KPM holds it."""
        check_kernel_budget(n, n, f"KernelProjectionMachine holds the {n} x {n} kernel matrix of its training set: it",
                            "For data of this size use basis='nystroem' or 'auto' (the KPM on the Nystroem "
                            "eigenfunctions of m landmarks: memory O(n m); one kernel on feature vectors, "
                            "centered=False).")

    def __call__(self, data):
        """Each kernel's eigenvector basis (:class:`~kpm.machine.family.BasisFit`), made when the
        engine asks for it: one kernel matrix in memory at a time."""
        for i, kern in enumerate(data.kernels):
            if not kern.is_precomputed:
                self.check_memory(data.n)
            K = data.X if kern.is_precomputed else kern(data.X)
            if kern.user_defined:
                K = check_kernel_matrix(K, f"the kernel matrix of the {kern.name} kernel")
            degeneracy = kernel_degeneracy(K)
            excess = self.self_similarity(K, data)  # of the unweighted matrix
            if data.weights is not None:  # the weighted matrix W^{1/2} K W^{1/2} (a copy of a user's matrix)
                s = np.sqrt(data.weights)
                K = K * np.outer(s, s) if kern.is_precomputed or kern.user_defined else scale_in_place(K, s)
            self.est._progress(f"kernel {i + 1} of {len(data.kernels)}: the basis")
            basis, grid, capped = self.basis(K, data.groups, data.weights, data.loo)
            if excess is not None and not self.keeps_points(basis, data):
                excess = None
            folds = None if data.splits is None else self.folds(K, basis, grid, data)
            lp_cv = None
            if folds is not None and self.est.early_stopping is True:  # the LP's folds advanced together
                lp_cv = partial(cv_lockstep, folds, True, progress=self.est._progress)
            yield BasisFit(basis, grid, capped, basis.V, basis.svm_scale, eigen_full_path(basis, self.est.lp_solver),
                           folds, degeneracy, excess=excess, lp_cv=lp_cv)

    def folds(self, K, basis, grid, data):
        """The fold source: each fold's basis by Rayleigh-Ritz, or decomposed anew."""
        if self.cv_basis() == "ritz":
            return RitzFolds(K, basis.V, data.Y, data.codes, data.splits, grid, data.weights)
        return EigenFolds(K, data.Y, data.codes, data.splits, grid, self.est.centered, self.est.max_components is not None,
                          data.groups, self.est.random_state, self.est.eigen_solver, self.est.lp_solver, data.weights)

    def basis(self, K, groups, weights=None, loo=False):
        """The eigenvector basis of the full training set and its D grid."""
        plan = self.plan
        rule, n = plan.rule, K.shape[0]
        known = self.est.max_components  # a partial eigendecomposition when the largest D is known
        whole = loo and n <= SVM_LOO_WHOLE_SPECTRUM_N  # no fold bases: the whole spectrum, as LAPACK computes it
        if known is None and plan.formulation == "svm" and self.cv_basis() == "ritz" and not whole:
            known = SVM_MAX_COMPONENTS
        if rule.fixed_dim is not None:
            known = rule.fixed_dim if known is None else min(known, rule.fixed_dim)
        n_comp = known if known is not None and known < n - 1 else None
        solver, tol = self.est.eigen_solver, 0.0
        if solver == "auto" and n_comp is not None and plan.formulation == "svm" and self.cv_basis() == "ritz":
            tol = SVM_EIGEN_TOL  # LAPACK below n = 5 * 512, else the block Krylov solver
        basis = EigenSubspace(K, self.est.centered, n_comp, random_state=self.est.random_state, groups=groups,
                              eigen_solver=solver, eigen_tol=tol, sample_weight=weights)
        if basis.rank < 1:
            raise ValueError("the kernel matrix has rank 0 (no positive eigenvalue)")
        largest = self.largest_dim(basis, n_comp)
        # the grid ends below the rank: a D chosen at its end may want a larger one
        capped = largest < basis.rank or (n_comp is not None and basis.rank >= n_comp)
        if rule.fixed_dim is not None:
            self.check_fixed_dim(rule.fixed_dim, largest, basis.rank)
            largest = rule.fixed_dim
        grid = dim_grid(self.est.n_components_grid, largest, plan.formulation)
        if rule.fixed_dim is not None and grid[-1] != largest:
            grid = np.append(grid, largest)
        return basis, grid, capped and rule.fixed_dim is None

    def largest_dim(self, basis, n_comp):
        """The largest D considered: ``max_components``, capped at the rank (beyond it the
        eigenvectors are rounding noise), as scikit-learn's ``KernelPCA`` caps its
        components; the rank where it is None."""
        if self.est.max_components is None:
            return basis.rank
        return min(self.est.max_components, basis.rank)

    def check_fixed_dim(self, d, largest, rank):
        if d > rank:
            raise ValueError(f"selection={self.est.selection} (a fixed D) is larger than the rank {rank} "
                             f"of the {'centred ' if self.est.centered else ''}kernel matrix")
        if d > largest:
            raise ValueError(f"selection={self.est.selection} (a fixed D) is larger than "
                             f"max_components = {self.est.max_components}")

    def kernels(self, X, weights=None):
        specs = self.est.kernel if isinstance(self.est.kernel, (list, tuple)) else [self.est.kernel]
        if len(specs) == 0:
            raise ValueError("kernel is an empty list")
        if any(isinstance(s, (list, tuple)) for s in specs):
            raise ValueError("kernel lists cannot be nested")
        if len(specs) > 1 and any(isinstance(s, str) and s == "precomputed" for s in specs):
            raise ValueError("'precomputed' cannot be part of a kernel list")
        return [self.kernel_of(spec, X, weights) for spec in specs]

    def kernel_of(self, spec, X, weights=None):
        """One kernel of the list: a spec, or a dict of :func:`make_kernel` parameters that
        override the estimator's (the default RBF width with sample weights:
        :func:`kpm.machine.weights.default_gamma`)."""
        if not isinstance(spec, dict):
            return make_kernel(spec, sigma=self.est.sigma, gamma=default_gamma(self.est, spec, X, weights), degree=self.est.degree,
                               coef0=self.est.coef0, kernel_params=self.est.kernel_params, X=X)
        params = dict(spec)
        name = params.pop("kernel", "rbf")
        width_given = "sigma" in params or "gamma" in params or "c" in params
        base = {"sigma": None if width_given else self.est.sigma,
                "gamma": None if width_given else default_gamma(self.est, name, X, weights),
                "degree": self.est.degree, "coef0": self.est.coef0}
        for key in ("sigma", "gamma", "degree", "coef0"):
            if key in params:
                base[key] = params.pop(key)
        return make_kernel(name, kernel_params=params or None, X=X, **base)

    def expansion(self, kp, D):
        """``a``, ``b`` of ``f(x) = sum_i a_i k(x_i, x) + b`` at D (one per problem)."""
        basis = kp.basis
        alphas, intercepts = [], []
        for p in kp.full.paths:
            beta, b = p.coef_at(D)
            a = basis.V[:, :D] @ (beta / basis.eigenvalues[:D])
            if basis.sample_weight is not None:  # f(x) = sum_j beta_j V_j^T W k(x) / lambda_j + b
                a = a * basis.sample_weight
            if self.est.centered:
                a = a - a.mean()
                b = b - float(a @ basis.col_means)
            alphas.append(a)
            intercepts.append(b)
        if len(alphas) == 1:
            return alphas[0], intercepts[0]
        return np.vstack(alphas), np.asarray(intercepts)


def scale_in_place(K, s):
    """``K`` scaled to ``diag(s) K diag(s)`` in place (row block by row block)."""
    step = max(1, 2**22 // max(len(s), 1))
    for start in range(0, len(s), step):
        rows = slice(start, start + step)
        K[rows] *= s[rows, None]
        K[rows] *= s[None, :]
    return K
