"""The reduction of an expansion at a given budget by one of the methods.

Dispatches a method (``'select'``, ``'select-l1'``, ``'construct'``, ``'burges'``) to the
algorithms of :mod:`kpm.reduced_set.selection` and :mod:`kpm.reduced_set.construction`:
either one budget of distinct vectors shared by all machines, each machine with its optimal
coefficients over the shared set (:func:`reduce_shared`), or a budget per machine
(:func:`reduce_per_machine`), the machines' vectors then stacked.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from kpm.reduced_set.construction import construct_shared, construct_single, joint_gradient
from kpm.reduced_set.expansion import optimal_coefficients, solve_psd, unit_scale
from kpm.reduced_set.selection import select_l1_shared, select_l1_single, select_path

__all__ = ["reduce_per_machine", "reduce_shared"]


def reduce_shared(exp, method, m, *, l1_weights, max_iter, tol, n_restarts, gradient_maxiter,
                  random_state):
    """One budget of ``m`` distinct vectors (fewer than the support vectors used) for all
    machines of ``exp``, optimal coefficients each; returns the vectors and the
    coefficients ``(n_machines, m)``."""
    kernel = exp.kernel
    used = np.flatnonzero(np.any(exp.A != 0, axis=0))
    Xs, A = exp.V[used], exp.A[:, used]
    if method == "select":
        keep, _ = select_path(unit_scale(kernel(Xs)), A, m)
        Z = Xs[keep]
    elif method == "select-l1":
        Z = Xs[select_l1_shared(unit_scale(kernel(Xs)), A, m, l1_weights)]
    else:
        Z, B = construct_shared(
            kernel, Xs, A, m, solver="burges" if method == "burges" else "fixed-point",
            max_iter=max_iter, tol=tol, n_restarts=n_restarts, rng=check_random_state(random_state),
        )
        if gradient_maxiter > 0:
            Z, B = joint_gradient(kernel, Xs, A, Z, B, gradient_maxiter)
        return Z, np.atleast_2d(B)
    return Z, np.atleast_2d(optimal_coefficients(Z, Xs, A, kernel))


def _select_per_machine(exp, method, targets, l1_weights):
    """Selection per machine: each keeps ``targets[p]`` of its own support vectors."""
    M, N = exp.A.shape
    K_all = unit_scale(exp.kernel(exp.V))
    B_full = np.zeros((M, N))
    for p in range(M):
        sup = np.flatnonzero(exp.A[p])
        alpha = exp.A[p, sup]
        m = targets[p]
        if m >= len(sup):
            B_full[p, sup] = alpha
            continue
        K = K_all[np.ix_(sup, sup)]
        if method == "select":
            keep, beta = select_path(K, alpha, m)
        else:
            keep = select_l1_single(K, alpha, m, l1_weights)
            beta = solve_psd(K[np.ix_(keep, keep)], K[keep] @ alpha)
        B_full[p, sup[keep]] = beta
    used = np.flatnonzero(np.any(B_full != 0, axis=0))
    return exp.V[used], B_full[:, used]


def reduce_per_machine(exp, method, targets, *, l1_weights, max_iter, tol, n_restarts,
                       gradient_maxiter, random_state):
    """A budget per machine (``targets[p]`` vectors for machine p); returns all machines'
    vectors and the coefficients ``(n_machines, n_vectors)``, zero where a machine does not
    use a vector."""
    if method in ("select", "select-l1"):
        return _select_per_machine(exp, method, targets, l1_weights)
    kernel = exp.kernel
    rng = check_random_state(random_state)
    Zs, Bs = [], []
    for p in range(len(exp.A)):
        sup = np.flatnonzero(exp.A[p])
        Xs, alpha = exp.V[sup], exp.A[p, sup]
        m = targets[p]
        if m >= len(sup):
            Z, beta = Xs, alpha
        else:
            if method == "burges":
                Z, beta = construct_shared(
                    kernel, Xs, alpha[None, :], m, solver="burges", max_iter=max_iter, tol=tol,
                    n_restarts=n_restarts, rng=rng,
                )
                beta = beta[0]
            else:
                Z, beta = construct_single(
                    kernel, Xs, alpha, m, max_iter=max_iter, tol=tol, n_restarts=n_restarts, rng=rng,
                )
            if gradient_maxiter > 0:
                Z, beta = joint_gradient(kernel, Xs, alpha, Z, beta, gradient_maxiter)
        Zs.append(Z)
        Bs.append(beta)
    V = np.vstack(Zs)
    B = np.zeros((len(exp.A), len(V)))
    off = 0
    for p, beta in enumerate(Bs):
        B[p, off : off + len(beta)] = beta
        off += len(beta)
    return V, B
