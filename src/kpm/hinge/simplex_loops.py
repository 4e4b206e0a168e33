"""Compiled inner loop of :mod:`kpm.hinge.simplex` (numba).

The exact KPM path takes about 10^4 simplex pivots per cross-validation fold, each
O(n p) with p = D + 1 small; written with numpy calls the interpreter overhead of
the ~30 small array operations per pivot costs more than the arithmetic. This
module holds the pivot loop only; the state, the warm start and the checks stay in
:class:`kpm.hinge.simplex.HingeSimplex`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# return codes of pivot_loop
OPTIMAL = 0
REFACTOR = 1
UNBOUNDED = -1
SMALL_PIVOT = -2


@njit(cache=True, fastmath=True)
def ratio_test(st, q, r, c, slope0, cand, ratio):
    """The long-step ratio test along a direction with residual change ``q``.

    ``slope0`` is the objective's slope at 0+ counting the violated rows; rows on
    their kink (``r ~ 0``, satisfied) are breakpoints at step 0 when ``q < 0``. Every
    breakpoint at which the weighted slope is still negative is passed. Basis rows
    must have ``st = 0``. ``cand`` and ``ratio`` are scratch arrays of length n.
    Returns ``(j, alpha, crossed)``: the entering row (-1 when there is no
    breakpoint), the step and the rows passed before it.
    """
    n = q.shape[0]
    qmax = 0.0
    for i in range(n):
        if abs(q[i]) > qmax:
            qmax = abs(q[i])
    qtol = 1e-12 * qmax
    m = 0
    jmin = -1
    amin = np.inf
    for i in range(n):
        sq = st[i] * q[i]
        if sq > qtol:
            ai = abs(r[i]) / sq
            cand[m] = i
            ratio[m] = ai
            m += 1
            if ai < amin:
                amin = ai
                jmin = i
    none = np.empty(0, dtype=np.int64)
    if jmin < 0:
        return -1, 0.0, none
    thr = -1e-13 * max(1.0, abs(slope0))
    if slope0 + c[jmin] * st[jmin] * q[jmin] >= thr:
        return jmin, amin, none
    order = np.argsort(ratio[:m], kind="mergesort")
    cum = slope0
    stop = m - 1
    for o in range(m):
        cum += c[cand[order[o]]] * st[cand[order[o]]] * q[cand[order[o]]]
        if cum >= thr:
            stop = o
            break
    crossed = np.empty(stop, dtype=np.int64)
    for o in range(stop):
        crossed[o] = cand[order[o]]
    return cand[order[stop]], ratio[order[stop]], crossed


@njit(cache=True, fastmath=True)
def move(A, p, st, r, g, c, alpha, q, crossed, j):
    """Take the step ``alpha`` of :func:`ratio_test`: the crossed rows change sides
    (and ``g`` with them), the residuals move by ``alpha q``, row j joins the basis.
    Returns the change of the number of violated rows."""
    dv = 0
    for i in crossed:
        st[i] = -st[i]
        dv += 1 if st[i] > 0.0 else -1
        for a in range(p):
            g[a] += c[i] * st[i] * A[i, a]
    if alpha != 0.0:
        for i in range(r.shape[0]):
            r[i] += alpha * q[i]
    if st[j] > 0.0:
        dv -= 1
        for a in range(p):
            g[a] -= c[j] * A[j, a]
    st[j] = 0.0
    r[j] = 0.0
    return dv


@njit(cache=True, fastmath=True)
def pivot_loop(A, p, Binv, B, st, r, g, w, norms, c, tol, max_updates):
    """Run simplex pivots on the hinge LP until optimal or ``max_updates`` pivots.

    Arrays are updated in place: ``Binv`` (p x p, Fortran order: the inverse of
    ``A[B, :p]``), ``B`` (basis rows), ``st`` (+1 violated, -1 satisfied, 0 basic),
    ``r`` (residuals ``a_i^T w - rhs_i``), ``g`` (weighted sum ``sum c_i a_i`` of the
    violated rows), ``w`` and ``norms`` (squared column norms of ``Binv``, the
    steepest-edge weights); ``c`` holds the row weights (the loss is
    ``sum_i c_i max(0, -r_i)``; 1 unless duplicated rows were merged).
    Returns ``(pivots, code)``.
    """
    n = A.shape[0]
    t = np.empty(p)
    d = np.empty(p)
    col = np.empty(p)
    row = np.empty(p)
    q = np.empty(n)
    cand = np.empty(n, dtype=np.int64)
    ratio = np.empty(n)
    nviol = 0
    for i in range(n):
        if st[i] > 0.0:
            nviol += 1
    pivots = 0
    while pivots < max_updates:
        if nviol == 0:
            # zero risk: the global minimum (and g, exactly 0, would give t = rounding
            # noise times a possibly huge inverse)
            for a in range(p):
                g[a] = 0.0
            return pivots, OPTIMAL
        # multipliers t = -Binv^T g; pricing: steepest edge in w-space
        k = -1
        best = 0.0
        for i in range(p):
            acc = 0.0
            for a in range(p):
                acc += g[a] * Binv[a, i]
            ti = -acc
            t[i] = ti
            ci = c[B[i]]
            v = -ti if -ti > ti - ci else ti - ci
            if v > tol:
                score = v * v / norms[i]
                if score > best:
                    best = score
                    k = i
        if k < 0:
            return pivots, OPTIMAL
        s = 1.0 if t[k] < 0.0 else -1.0
        slope0 = t[k] if s > 0.0 else c[B[k]] - t[k]
        for a in range(p):
            d[a] = s * Binv[a, k]
        for i in range(n):
            acc = 0.0
            for a in range(p):
                acc += A[i, a] * d[a]
            q[i] = acc
        for a in range(p):
            q[B[a]] = 0.0
        j, alpha, crossed = ratio_test(st, q, r, c, slope0, cand, ratio)
        if j < 0:
            return pivots, UNBOUNDED
        qj = q[j]
        if abs(qj) < 1e-14:
            return pivots, SMALL_PIVOT
        nviol += move(A, p, st, r, g, c, alpha, q, crossed, j)
        if alpha != 0.0:
            for a in range(p):
                w[a] += alpha * d[a]
        leaving = B[k]
        r[leaving] = s * alpha
        if s < 0.0 and alpha > 0.0:
            st[leaving] = 1.0
            nviol += 1
            for a in range(p):
                g[a] += c[leaving] * A[leaving, a]
        else:
            st[leaving] = -1.0
        # Sherman-Morrison: row k of A_B replaced by a_j; new column norms on the fly
        for i in range(p):
            acc = 0.0
            for a in range(p):
                acc += A[j, a] * Binv[a, i]
            row[i] = acc
        row[k] -= 1.0
        f = 1.0 / (s * qj)
        for a in range(p):
            col[a] = Binv[a, k] * f
        for i in range(p):
            ri = row[i]
            nrm = 0.0
            for a in range(p):
                v = Binv[a, i] - col[a] * ri
                Binv[a, i] = v
                nrm += v * v
            norms[i] = nrm
        B[k] = j
        pivots += 1
    return pivots, REFACTOR
