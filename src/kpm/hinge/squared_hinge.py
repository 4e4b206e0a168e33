"""The squared-hinge (L2-loss) SVM on a few feature columns, by a finite Newton method.

For feature columns ``Phi`` (n x D) and labels ``y`` in {-1, +1} it solves

    min_{w, b}  1/2 (|w|^2 + b^2 / B^2) + C sum_i max(0, 1 - y_i (w . Phi_i + b))^2,

the intercept being the weight of a constant feature of value ``B`` -- the objective of
LIBLINEAR's default solver (Fan, Chang, Hsieh, Wang & Lin 2008, the L2-loss SVM), here on
the kernel-PCA features of the Kernel Projection Machine. The objective is strongly convex
and piecewise quadratic: with ``a_i = y_i [Phi_i, B]`` and ``theta = (w, b / B)``, on the set
``I`` of points with margin ``a_i . theta < 1`` it is ``1/2 |theta|^2 + C |1 - A_I theta|^2``.
The modified finite Newton method (Keerthi & DeCoste 2005, JMLR 6) steps to the minimiser of
the current piece, ``(Id + 2C A_I^T A_I) theta = 2C A_I^T 1``, then searches the line exactly
(the objective is piecewise quadratic along it) and ends when the gradient vanishes -- in
finitely many steps, since a step taken with the optimum's set ``I`` is exact.

Why a Newton method: the dual coordinate descent of the hinge-loss SVM (:mod:`kpm.hinge.svm_path`)
slows down sharply at large C on kernel-PCA features, whose columns span the kernel's whole
spectrum; the Newton steps are insensitive to C and to the scale of the columns. The matrix
``A_I^T A_I`` does not depend on the labels (``y_i^2 = 1``) and is updated as points enter and
leave ``I``; each step costs ``O(n D)`` for the margins, ``O(|changes| D^2)`` for the matrix
and ``O(D^3 / 3)`` for its Cholesky factor -- or, with fewer points in the loss than columns
(large C), ``O(|I|^2 D)`` by the Woodbury identity. When the columns are orthogonal, as the
kernel-PCA features ``sqrt(lambda_j) V_j`` of an eigenvector basis are, the Gram matrix of all
points is diagonal but for the constant's row, and ``A_I^T A_I`` is that matrix less the few
points out of the loss (small C: nearly every point inside the margin): the Woodbury identity on
those points costs ``O(|out|^2 D)``, so that a step costs ``min(|I|, |out|, D)`` cubed, not
``min(|I|, D)`` (Rätsch's german set, 560 points of a fold, D = 512, C <= 1: 0-54 points out of
the loss, each C value's solves on the five folds 3 to 4 times faster). Warm starts: along C (the
previous solution) and along D (new columns start at 0).

Sample weights (``sample_weight``) weigh the loss of each point, ``C w_i`` in place of ``C`` --
scikit-learn's convention for the SVM: an integer weight is the same problem as that many
copies of the point.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy import linalg
from scipy.linalg import lapack

__all__ = ["SquaredHingeSVM", "TOL", "MAX_ITER", "exact_line_search", "weighted_line_search", "arrow_gram",
           "complement_cheaper"]

#: The Newton method stops when the gradient's norm is below ``TOL * (1 + |theta|)``.
TOL = 1e-10
#: Newton steps per solve at most (a healthy solve takes a handful).
MAX_ITER = 100
#: Line-search steps at most (each moves to the next piece of the line's quadratic).
MAX_LINE_STEPS = 50


class SquaredHingeSVM:
    """The squared-hinge SVM of one problem, solved on the first ``d`` columns, warm-started.

    Parameters
    ----------
    Phi : ndarray (n, m)
        The feature columns, in order (C-contiguous float64 is used as is).
    y : ndarray (n,)
        Labels in {-1, +1}.
    C : float
        The weight of the loss; may be changed between solves (attribute ``C``).
    B : float, default=1.0
        The value of the constant feature whose weight is the intercept.
    tol, max_iter : float, int
        Stopping rule of the Newton method (module constants by default).
    sample_weight : ndarray (n,) of positive floats, optional
        The weight of each point's loss (``C w_i``); default 1.

    Attributes
    ----------
    w : ndarray (d,)
        The weights of the last solve; ``b``: its intercept.
    iterations : int
        Newton steps taken over all solves.
    """

    def __init__(self, Phi, y, C, *, B=1.0, tol=TOL, max_iter=MAX_ITER, sample_weight=None):
        self.Phi = np.ascontiguousarray(Phi, dtype=float)
        self.y = np.asarray(y, dtype=float)
        # the weights (None: all 1, and the unweighted arithmetic, to the last bit)
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self._line_weights = np.ones(len(self.y)) if sample_weight is None else self.sample_weight
        self.C, self.B = float(C), float(B)
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.w, self.b = np.zeros(0), 0.0
        self.iterations = 0
        self._d = None  # the columns of the kept Gram matrix
        self._active = None  # its rows (the points with margin < 1 when it was made)
        self._gram = None  # sum over the active points of [Phi_i, B][Phi_i, B]^T
        self._arrow = _UNKNOWN  # the Gram matrix of all points, where it is diagonal but for the constant
        # the last Newton step's factored system: (C, d, rows, kind, factor), rows its points in
        # the loss -- the leave-one-out leverages of the solution it ends on need the same one
        self._factor = None

    @property
    def work(self):
        """Newton steps so far."""
        return self.iterations

    def set_C(self, C):
        """Change C (the last solution stays the warm start)."""
        self.C = float(C)

    def _features(self, rows, d):
        """``[Phi[rows, :d], B]``: the augmented features of some points."""
        F = np.empty((len(rows), d + 1))
        F[:, :d] = self.Phi[rows, :d]
        F[:, d] = self.B
        return F

    def _weighted(self, rows, F):
        """``F`` with its rows scaled by the square roots of the points' weights (as is
        without weights): ``A_I^T W A_I = F_w^T F_w``."""
        if self.sample_weight is None:
            return F
        return F * np.sqrt(self.sample_weight[rows])[:, None]

    def _gram_of(self, active, d):
        """``A_I^T A_I`` for the active points ``I``, updated from the kept one when cheaper:
        extended by the new columns (along the D path) and by the points that enter or leave."""
        if self._active is not None and self._d <= d:
            added = np.flatnonzero(active & ~self._active)
            removed = np.flatnonzero(self._active & ~active)
            # in rows x (d + 1) products: the new columns' block, then the changed points
            extend = (d - self._d) * np.count_nonzero(self._active) * (d + self._d + 2) / (2 * (d + 1) ** 2)
            if extend + len(added) + len(removed) < np.count_nonzero(active):
                G = self._gram.copy() if self._d == d else self._extended(d)
                if len(added):
                    Fa = self._weighted(added, self._features(added, d))
                    G += Fa.T @ Fa
                if len(removed):
                    Fr = self._weighted(removed, self._features(removed, d))
                    G -= Fr.T @ Fr
                self._store(active, d, G)
                return G
        rows = np.flatnonzero(active)
        F = self._weighted(rows, self._features(rows, d))
        G = F.T @ F
        self._store(active, d, G)
        return G

    def _extended(self, d):
        """The kept Gram matrix (``d0`` columns and the constant) extended to ``d`` columns,
        over the same points: only the blocks of the new columns are computed."""
        d0, rows = self._d, np.flatnonzero(self._active)
        old = self._gram
        G = np.empty((d + 1, d + 1))
        G[:d0, :d0] = old[:d0, :d0]
        G[d, :d0] = G[:d0, d] = old[d0, :d0]
        G[d, d] = old[d0, d0]
        new = self._weighted(rows, self.Phi[rows, d0:d])
        cross = self._weighted(rows, self._features(rows, d0)).T @ new  # (d0 + 1, d - d0)
        G[:d0, d0:d] = cross[:d0]
        G[d0:d, :d0] = cross[:d0].T
        G[d, d0:d] = G[d0:d, d] = cross[d0]
        G[d0:d, d0:d] = new.T @ new
        return G

    def _store(self, active, d, G):
        self._d, self._active, self._gram = d, active.copy(), G

    def _margins(self, theta, d):
        return self.y * (self.Phi[:, :d] @ theta[:d] + self.B * theta[d])

    def solve(self, d):
        """The solution on the first ``d`` columns: ``(w, b)``, warm-started from the last one
        (its first ``d`` weights, new columns at 0)."""
        d = int(d)
        theta = np.zeros(d + 1)
        k = min(d, len(self.w))
        theta[:k] = self.w[:k]
        theta[d] = self.b / self.B
        m = self._margins(theta, d)
        for _ in range(self.max_iter):
            active = m < 1.0
            rows = np.flatnonzero(active)
            residual = self.y[rows] * (1.0 - m[rows])
            if self.sample_weight is not None:
                residual = residual * self.sample_weight[rows]
            grad = theta.copy()
            grad[:d] -= 2.0 * self.C * (self.Phi[rows, :d].T @ residual)
            grad[d] -= 2.0 * self.C * self.B * residual.sum()
            if _norm(grad) <= self.tol * (1.0 + _norm(theta)):
                break
            step = -self._newton_solve(grad, active, rows, d)
            # the system gave no direction (features of a huge dynamic range, e.g. a polynomial
            # kernel of degree 35): the gradient's
            if not np.any(step):
                step = -grad
            q = self._margins(step, d)
            t = self._line_search(theta, step, m, q)
            theta = theta + t * step
            m = m + t * q
            self.iterations += 1
            if abs(t - 1.0) <= 1e-12 and np.array_equal(m < 1.0, active):
                break  # the step reached the minimiser of the piece it started on: exact
        self.w, self.b = theta[:d].copy(), float(self.B * theta[d])
        return self.w, self.b

    def loo_margins(self, margins=None, groups=None):
        """The leave-one-out margins of every point, from the last solve, by the hat matrix.

        On the set ``I`` of points inside the margin the solution is that of a ridge
        regression (``theta = 2C M^{-1} A_I^T W 1``, ``M = Id + 2C A_I^T W A_I``), so that
        leaving point ``i`` of ``I`` out divides its residual ``1 - m_i`` by ``1 - h_i``, ``h_i
        = 2C w_i a_i^T M^{-1} a_i`` the leverage (Allen 1974; for the squared-hinge SVM
        Chapelle, Vapnik, Bousquet & Mukherjee 2002): ``m_i^{(-i)} = 1 - (1 - m_i) / (1 -
        h_i)``. A point outside the margin has no loss and leaves the solution unchanged:
        its margin is its own. Exact whenever leaving a point out moves no other point
        across the margin, and the approximation is first order otherwise. Costs about one
        Newton step: through the points inside the margin, the columns, or (orthogonal
        columns, few points out of the margin) the points out of it, whichever is cheaper --
        and less where the solve ended on an exact Newton step (the same points in the
        margin, columns and C), whose factored system it reuses (:meth:`_factored_leverage`).

        With ``groups`` the copies of a sample (points of identical features) are left out
        together: their leverages add up to the group's ``h_G`` (the rank-one block of the
        hat matrix on identical rows), and the model fitted without the group moves the
        copies' common decision value by ``delta_G = sum_G h_i r_i / (1 - h_G)``, ``r_i = y_i
        (1 - m_i)`` their residuals (Sherman-Morrison on the block; the sum over the copies
        inside the margin). A group of one sample is the formula above.

        Parameters
        ----------
        margins : ndarray (n,), optional
            The last solution's margins ``y_i (w . Phi_i + b)``, where the caller has them
            (computed here otherwise).
        groups : ndarray (n,) of int, optional
            The group of each point, identical features sharing one (their features must
            be equal); None: every point its own group.

        Returns
        -------
        ndarray (n,)
            ``y_i f^{(-i)}(x_i)``, the margin of point ``i`` under the model fitted without it
            (without its group).
        """
        d = len(self.w)
        m = self._margins(np.append(self.w, self.b / self.B), d) if margins is None else margins
        rows = np.flatnonzero(m < 1.0)
        if len(rows) == 0:
            return m
        F = self._weighted(rows, self._features(rows, d))
        C2 = 2.0 * self.C
        one_minus_h = self._factored_leverage(F, rows, m, d)
        if one_minus_h is None and complement_cheaper(len(rows), len(m) - len(rows), d):
            one_minus_h = self._complement_leverage(F, np.flatnonzero(m >= 1.0), d)
        if one_minus_h is None:
            try:
                one_minus_h = _points_leverage(F, C2) if len(rows) <= d + 1 else _columns_leverage(F, C2)
            except linalg.LinAlgError:  # the formed matrix's factor failed to rounding
                one_minus_h = _svd_leverage(F, C2)
        if groups is not None:
            return m - self.y * _group_shift(groups, rows, 1.0 - one_minus_h, self.y[rows] * (1.0 - m[rows]))
        out = m.copy()
        out[rows] = 1.0 - (1.0 - m[rows]) / np.maximum(one_minus_h, np.finfo(float).eps)
        return out

    def _factored_leverage(self, F, rows, m, d):
        """``1 - h`` of the points ``rows`` inside the margin (their weighted features ``F``)
        from the factor of the last Newton step, where that step was taken on the same points,
        columns and C -- as it is when the solve ended on an exact step: the leverages' matrix
        is the Newton system's (``Id + 2C A_I^T W A_I``, or its Woodbury forms). None otherwise."""
        cached = self._factor
        if cached is None or cached[0] != self.C or cached[1] != d or not np.array_equal(cached[2], rows):
            return None
        kind, factor = cached[3], cached[4]
        if kind == "complement":
            return self._complement_leverage(F, np.flatnonzero(m >= 1.0), d, parts=factor)
        if kind == "points":
            return _points_leverage(F, 2.0 * self.C, factor=factor)
        return _columns_leverage(F, 2.0 * self.C, factor=factor)

    def _complement_leverage(self, F, out, d, parts=None):
        """``1 - h`` of the points inside the margin (their weighted features ``F``) through
        the points ``out`` of it, as :meth:`_complement_solve` solves the Newton step: with
        ``M = h0 - 2C U^T U`` (``h0 = Id + 2C G``, ``G`` the Gram matrix of all points, diagonal
        but for the constant), ``f^T M^{-1} f = f^T h0^{-1} f + q^T S^{-1} q`` with ``q = U
        h0^{-1} f`` and ``S = Id / 2C - U h0^{-1} U^T`` (``parts``: :meth:`_complement`'s, where
        the caller has them). None where the columns are not orthogonal or ``S`` is not
        numerically positive definite."""
        parts = self._complement(out, d) if parts is None else parts
        if parts is None:
            return None
        h0, U, Y, factor = parts
        h = h0.quadratic_forms(F)
        if U is not None:
            Z = linalg.solve_triangular(factor, (F @ Y).T, trans="T", lower=False, check_finite=False)
            h += (Z * Z).sum(axis=0)
        return 1.0 - 2.0 * self.C * h

    def _newton_solve(self, grad, active, rows, d):
        """``(Id + 2C A_I^T A_I)^{-1} grad``: with fewer points in the loss than columns by the
        Woodbury identity (an ``|I| x |I|`` system); where the points out of the loss are
        fewer (by :func:`complement_cheaper`'s count) and the columns orthogonal, by the
        Woodbury identity on those points (:meth:`_complement_solve`); else by the Cholesky
        factor of the ``(d + 1) x (d + 1)`` matrix (its ``A_I^T A_I`` kept and updated between
        steps)."""
        C2 = 2.0 * self.C
        self._factor = None
        if len(rows) == 0:  # no point in the loss: the Hessian is the identity
            return grad.copy()
        if complement_cheaper(len(rows), len(self.y) - len(rows), d):
            step = self._complement_solve(grad, active, rows, d)
            if step is not None:
                return step
        try:
            if len(rows) < d + 1:
                Fw = self._weighted(rows, self._features(rows, d))
                M = Fw @ Fw.T
                _add_to_diagonal(M, 1.0 / C2)
                factor = _cholesky(M)
                self._factor = (self.C, d, rows, "points", factor)
                return grad - Fw.T @ _potrs(factor, Fw @ grad)
            H = C2 * self._gram_of(active, d)
            _add_to_diagonal(H, 1.0)
            factor = _cholesky(H)
            self._factor = (self.C, d, rows, "columns", factor)
            return _potrs(factor, grad)
        except linalg.LinAlgError:
            self._factor = None
            # features of very different scales (e.g. a polynomial kernel of high degree):
            # the Gram matrix's rounding swamps the identity and the factor fails, though
            # Id + 2C A^T A is positive definite; its singular vectors solve it stably
            self._active = None  # the kept Gram matrix is not to be updated from
            return _ridge_solve(self._weighted(rows, self._features(rows, d)), C2, grad)

    def _arrow_gram(self):
        """``(g, c, e)``: the Gram matrix ``[Phi, B]^T W [Phi, B]`` of all points (``W`` the
        weights) when ``Phi``'s columns are orthogonal -- ``diag(g)`` bordered by the constant's
        row ``c`` and corner ``e`` -- as the kernel-PCA features of the KPM's eigenvector bases
        are; else None. Checked once, on a random vector."""
        if self._arrow is _UNKNOWN:
            self._arrow = arrow_gram(self.Phi, self._line_weights, self.B)
        return self._arrow

    def _complement_solve(self, grad, active, rows, d):
        """The Newton step through the points *out* of the loss: with ``G`` the Gram matrix of
        all points (diagonal but for the constant, :meth:`_arrow_gram`) and ``U`` the features
        of the points out, ``A_I^T A_I = G - U^T U``, so that the Woodbury identity solves the
        system with ``Id + 2C G`` (in ``O(d)``) and an ``|out| x |out|`` matrix; one step of
        iterative refinement. None where the columns are not orthogonal or that matrix is not
        numerically positive definite (the caller then factors the whole matrix)."""
        parts = self._complement(np.flatnonzero(~active), d)
        if parts is None:
            return None
        self._factor = (self.C, d, rows, "complement", parts)
        h0, U, Y, factor = parts
        if U is None:
            return h0.solve(grad)
        C2 = 2.0 * self.C

        def solve(r):
            z = h0.solve(r)
            return z + Y @ lapack.dpotrs(factor, U @ z, lower=False)[0]

        x = solve(grad)
        residual = x + C2 * self._active_gram_product(active, x, d) - grad
        return x - solve(residual)

    def _active_gram_product(self, active, x, d):
        """``A_I^T W A_I x`` for the points ``active`` (``I``), through the whole feature
        matrix (zero weight off ``I``): no copy of the active rows, the complement's points
        being few."""
        v = self.Phi[:, :d] @ x[:d] + self.B * x[d]
        v *= np.where(active, self._line_weights, 0.0)
        out = np.empty(d + 1)
        out[:d] = self.Phi[:, :d].T @ v
        out[d] = self.B * v.sum()
        return out

    def _complement(self, out, d):
        """``(h0, U, Y, factor)``, the Woodbury identity through the points ``out`` of the
        loss: ``h0`` solves with ``Id + 2C G`` (``G`` the Gram matrix of all points,
        :meth:`_arrow_gram`), ``U`` holds the points' weighted features, ``Y = h0^{-1} U^T``
        and ``factor`` is the upper Cholesky factor of ``Id / 2C - U Y`` (``U``, ``Y`` and
        ``factor`` None without such points). None where the columns are not orthogonal or
        that matrix is not numerically positive definite."""
        arrow = self._arrow_gram()
        if arrow is None:
            return None
        C2 = 2.0 * self.C
        g, c, e = arrow
        h0 = _ArrowInverse(1.0 + C2 * g[:d], C2 * c[:d], 1.0 + C2 * e)
        if len(out) == 0:
            return h0, None, None, None
        U = self._weighted(out, self._features(out, d))
        Y = h0.solve(U.T)
        M = U @ Y
        M *= -1.0
        _add_to_diagonal(M, 1.0 / C2)
        try:
            factor = _cholesky(M)
        except linalg.LinAlgError:
            return None
        return h0, U, Y, factor

    def _line_search(self, theta, step, m, q):
        """The exact minimiser ``t > 0`` of the objective along ``theta + t step``
        (:func:`weighted_line_search`, the points' weights 1 without sample weights; ``m`` and
        ``q``: the margins of ``theta`` and of ``step``)."""
        return weighted_line_search(float(theta @ step), float(step @ step), m, q, 2.0 * self.C,
                                    self._line_weights)


_UNKNOWN = object()


def complement_cheaper(n_in, n_out, d):
    """Whether a Newton step through the ``n_out`` points out of the loss costs less (in
    multiply-adds) than one through the ``n_in`` points in it or through the ``(d + 1) x
    (d + 1)`` matrix: ``k^2 (d + 1) + k^3 / 3`` for a Woodbury system of ``k`` points (the
    complement's also ``4 n_in d`` for its refinement), ``(d + 1)^3 / 3`` for the factor."""
    direct = min(n_in * n_in * (d + 1) + n_in ** 3 / 3, (d + 1) ** 3 / 3)
    return n_out * n_out * (d + 1) + n_out ** 3 / 3 + 4 * n_in * d < direct


def arrow_gram(Phi, weights, B, *, rtol=1e-9, seed=0):
    """``(g, c, e)`` with ``[Phi, B]^T W [Phi, B] = [[diag(g), c], [c^T, e]]`` (``W`` the
    diagonal of ``weights``) when ``Phi``'s columns are orthogonal under ``W``, else None.

    The squared norms ``g``, the constant's row ``c`` and corner ``e`` cost ``O(n m)``;
    that ``Phi^T W Phi`` is diagonal is checked on one random vector ``v`` (a matrix that is
    not diagonal fails the check with probability one): ``|Phi^T W Phi v - g v| <= rtol
    max(g) |v|``."""
    Phi = np.asarray(Phi, dtype=float)
    if Phi.shape[1] == 0:
        return None
    g = weights @ (Phi * Phi)
    v = np.random.default_rng(seed).standard_normal(Phi.shape[1])
    if np.linalg.norm(Phi.T @ (weights * (Phi @ v)) - g * v) > rtol * max(float(g.max()), 1e-300) * np.linalg.norm(v):
        return None
    return g, B * (weights @ Phi), B * B * float(weights.sum())


class _ArrowInverse:
    """Solves with the symmetric matrix ``[[diag(a), b], [b^T, e]]`` (positive definite) in
    ``O(d)`` per right-hand side, by the Schur complement of its last entry."""

    def __init__(self, a, b, e):
        self.a, self.b = a, b
        self.schur = e - float(b @ (b / a))

    def solve(self, R):
        """``M^{-1} R`` for ``R`` of shape (d + 1,) or (d + 1, k)."""
        top, last = R[:-1], R[-1]
        x_last = (last - (self.b / self.a) @ top) / self.schur
        x_top = (top - np.multiply.outer(self.b, x_last)) / (self.a if R.ndim == 1 else self.a[:, None])
        return np.concatenate([x_top, np.asarray(x_last)[None]], axis=0)

    def quadratic_forms(self, F):
        """``f^T M^{-1} f`` for each row ``f`` of ``F`` (k, d + 1): with ``f = (u, c)``, ``u^T
        diag(a)^{-1} u + (c - b^T diag(a)^{-1} u)^2 / s``, ``s`` the Schur complement."""
        top = F[:, :-1]
        last = F[:, -1] - top @ (self.b / self.a)
        return (top * top) @ (1.0 / self.a) + last * last / self.schur


def _group_shift(groups, rows, h, residuals):
    """Per point, ``f - f^{(-G)}`` on its group G (:meth:`SquaredHingeSVM.loo_margins`):
    ``sum_G h_i r_i / (1 - h_G)`` over the points ``rows`` inside the margin (leverages
    ``h``, residuals ``r``); 0 for a group with no point inside the margin."""
    g = groups[rows]
    size = int(groups.max()) + 1
    h_group = np.bincount(g, weights=h, minlength=size)
    shift = np.bincount(g, weights=h * residuals, minlength=size) / np.maximum(1.0 - h_group, np.finfo(float).eps)
    return shift[groups]


def _points_leverage(F, C2, factor=None):
    """``1 - h`` of the rows of ``F`` (the weighted features of the points inside the
    margin), fewer than their columns: ``1 - h = diag(S^{-1}) / 2C`` with ``S = F F^T + Id /
    2C``, the row sums of squares of the inverse of its Cholesky factor (``factor``: that
    upper factor, where the caller has it)."""
    if factor is None:
        S = F @ F.T
        _add_to_diagonal(S, 1.0 / C2)
        factor = _cholesky(S)
    inverse, info = lapack.dtrtri(factor, lower=False)
    if info != 0:
        raise linalg.LinAlgError(f"trtri failed (info {info})")
    inverse = np.triu(inverse)  # (potrf and trtri leave the other triangle as it was)
    return (inverse * inverse).sum(axis=1) / C2


def _columns_leverage(F, C2, factor=None):
    """``1 - h`` of the rows of ``F``, more than their columns: ``h_i = 2C |R^{-T} f_i|^2``
    with ``Id + 2C F^T F = R^T R`` (``factor``: ``R``, where the caller has it)."""
    if factor is None:
        M = C2 * (F.T @ F)
        _add_to_diagonal(M, 1.0)
        factor = _cholesky(M)
    Z = linalg.solve_triangular(factor, F.T, trans="T", lower=False, check_finite=False)
    return 1.0 - C2 * (Z * Z).sum(axis=0)


def _svd_leverage(F, C2):
    """``1 - h`` of the rows of ``F``, ``h_i = C2 f_i^T (Id + C2 F^T F)^{-1} f_i``, from the
    singular value decomposition ``F = U S V^T``: ``h_i = sum_j U_ij^2 C2 s_j^2 / (1 + C2
    s_j^2)``; stable where the Cholesky factor of the formed matrix fails to rounding."""
    U, sv, _ = linalg.svd(F, full_matrices=False, check_finite=False)
    return 1.0 - (U * U) @ (C2 * sv**2 / (1.0 + C2 * sv**2))


def _ridge_solve(F, C2, g):
    """``(Id + C2 F^T F)^{-1} g`` by the singular value decomposition of ``F``: stable where the
    Cholesky factor of the formed matrix fails to rounding."""
    _, sv, Vt = linalg.svd(F, full_matrices=False, check_finite=False)
    proj = Vt @ g
    return g - Vt.T @ (proj * (C2 * sv**2 / (1.0 + C2 * sv**2)))


def _norm(v):
    """The Euclidean norm of a vector (``numpy.linalg.norm``'s arithmetic, without its
    dispatch)."""
    return math.sqrt(float(v @ v))


def _add_to_diagonal(M, value):
    """``M += value * Id`` in place (the diagonal as a view: no index arrays)."""
    diagonal = np.einsum("ii->i", M)
    diagonal += value


def _cholesky(M):
    """The upper Cholesky factor of a symmetric positive definite ``M`` (overwritten)."""
    factor, info = lapack.dpotrf(M, lower=False, clean=False, overwrite_a=True)
    if info != 0:
        raise linalg.LinAlgError(f"the Newton system is not positive definite (potrf info {info})")
    return factor


def _potrs(factor, rhs):
    """``M^{-1} rhs`` from the upper Cholesky factor of ``M`` (:func:`_cholesky`), by LAPACK's
    ``potrs`` called directly: the arithmetic of ``scipy.linalg.cho_solve`` without its
    wrappers, which cost as much as the factorisation at the small orders of most Newton steps
    (measured: ``docs/results/notes/code_measurements.md``)."""
    x, info = lapack.dpotrs(factor, rhs, lower=False)
    if info != 0:
        raise linalg.LinAlgError(f"potrs failed (info {info})")
    return x


@njit(cache=True)
def exact_line_search(a, c, m, q, C2):
    """The root of ``phi'(t) = a + t c - C2 sum_i [s_i - t q_i]_+ q_i`` (``s_i = 1 - m_i``):
    the step length minimising the objective along a direction with ``a = theta . step``,
    ``c = |step|^2`` and the margins ``m``, ``q`` of ``theta`` and of the step
    (:func:`weighted_line_search` with every weight 1)."""
    return weighted_line_search(a, c, m, q, C2, np.ones(m.shape[0]))


@njit(cache=True)
def weighted_line_search(a, c, m, q, C2, w):
    """The root of ``phi'(t) = a + t c - C2 sum_i w_i [s_i - t q_i]_+ q_i`` (``s_i = 1 - m_i``,
    ``w_i`` the points' weights): the step length minimising the objective along a direction
    with ``a = theta . step``, ``c = |step|^2`` and the margins ``m``, ``q`` of ``theta`` and
    of the step.

    ``phi'`` is linear between the breakpoints ``t_i = s_i / q_i``, where a point leaves
    (``q_i > 0``) or enters (``q_i < 0``) the loss, and increasing; the pieces are walked in
    the order of their breakpoints until the one that holds the root. Only the breakpoints
    before the root are sorted (few, from a Newton step)."""
    n = m.shape[0]
    S_s = 0.0
    S_q = 0.0
    t_break = np.empty(n)
    k = 0
    for i in range(n):
        s_i = 1.0 - m[i]
        if s_i > 0.0:
            S_s += w[i] * (s_i * q[i])
            S_q += w[i] * (q[i] * q[i])
        if q[i] != 0.0:
            t = s_i / q[i]
            if t > 0.0 and ((q[i] > 0.0) == (s_i > 0.0)):
                t_break[k] = t
                k += 1
    events = np.empty(k, dtype=np.int64)
    k = 0
    for i in range(n):
        s_i = 1.0 - m[i]
        if q[i] != 0.0:
            t = s_i / q[i]
            if t > 0.0 and ((q[i] > 0.0) == (s_i > 0.0)):
                events[k] = i
                k += 1
    if c + C2 * S_q <= 0.0:  # a zero step: no move
        return 0.0
    root = -(a - C2 * S_s) / (c + C2 * S_q)
    done = 0.0  # breakpoints up to here are walked
    while True:
        count = 0
        for j in range(k):
            if done < t_break[j] < root:
                count += 1
        if count == 0:
            return root
        before = np.empty(count, dtype=np.int64)
        count = 0
        for j in range(k):
            if done < t_break[j] < root:
                before[count] = j
                count += 1
        order = np.argsort(t_break[before], kind="mergesort")
        for o in order:
            j = before[o]
            root = -(a - C2 * S_s) / (c + C2 * S_q)
            if root <= t_break[j]:
                return root
            i = events[j]
            s_i = 1.0 - m[i]
            sign = -w[i] if q[i] > 0.0 else w[i]  # leaves the loss, or enters it
            S_s += sign * s_i * q[i]
            S_q += sign * q[i] * q[i]
            done = t_break[j]
        root = -(a - C2 * S_s) / (c + C2 * S_q)
