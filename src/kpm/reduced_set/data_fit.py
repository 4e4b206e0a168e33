"""Fits of a reduced machine on the training set: decision values, coefficients, offsets.

Beyond Schölkopf et al. (1999), following their closing remark (approximate ``f`` where
the data are rather than ``Psi`` in feature space): :func:`data_fit` moves the vectors,
coefficients and offsets of all machines to fit the original decision values by least
squares, :func:`fit_coef_on_data` refits the coefficients only. :func:`fit_offsets`
recomputes each machine's offset on the training set (the mean rule, or the offset of fewest
errors, :func:`min_error_offset`).
"""

from __future__ import annotations

import zlib

import numpy as np
from scipy import linalg
from sklearn.utils.class_weight import compute_class_weight

from kpm.kernels import Kernel
from kpm.reduced_set.expansion import expansion_values, machine_labels

__all__ = [
    "AUTO_HELD_OUT_SHARE",
    "auto_offset_rule",
    "data_fit",
    "data_objective",
    "distinct_rows",
    "fit_coef_on_data",
    "fit_offsets",
    "held_out_rows",
    "row_fractions",
    "min_error_offset",
    "sample_class_weights",
    "training_agreement",
]

#: the share of the training weight that the rows outside the support vectors must carry for
#: ``threshold='auto'`` to take the mean rule over them (else the original offset is kept)
AUTO_HELD_OUT_SHARE = 0.5


def data_objective(params, X, F, mask, gamma, m, d, scale, weight=None):
    """``sum_{x, p} w_x (F_p(x) - g_p(x) - b_p)^2 / scale`` and its gradient in ``(Z, B, b)``.

    ``g_p(x) = sum_j B_pj k(z_j, x)`` (Gaussian kernel); ``params`` = ``Z.ravel()``, then
    ``B.ravel()`` (``(M, m)``, entries outside ``mask`` held at 0), then ``b`` (``(M,)``);
    ``weight``: the sample weights ``w_x`` (default 1). With the residuals
    ``R = F - K^{xz} B' - b``, ``R_w = w R`` and ``W = (R_w B) * K^{xz}``:
    ``d/dB = -2 (R_w' K^{xz}) / scale``, ``d/db = -2 sum_x R_w / scale`` and
    ``d/dz_j = -4 gamma (sum_x W_xj (x - z_j)) / scale``.
    """
    M = len(mask)
    Z = params[: m * d].reshape(m, d)
    B = params[m * d : m * d + M * m].reshape(M, m) * mask
    b = params[m * d + M * m :]
    Kx = Kernel("rbf", gamma=gamma)(X, Z)
    R = F - Kx @ B.T - b
    Rw = R if weight is None else weight[:, None] * R
    f = float(np.sum(R * Rw)) / scale
    g_B = (-2.0 / scale) * (Rw.T @ Kx) * mask
    g_b = (-2.0 / scale) * Rw.sum(axis=0)
    W = (Rw @ B) * Kx
    g_Z = (-4.0 * gamma / scale) * (W.T @ X - W.sum(axis=0)[:, None] * Z)
    return f, np.concatenate([g_Z.ravel(), g_B.ravel(), g_b])


def data_fit(exp, X, Z, B, *, maxiter, validation_fraction, weight=None, check_every=10):
    """Joint L-BFGS descent over the vectors, coefficients and offsets of all machines
    on the training set: minimise the (weighted) squared difference between the original
    and the reduced decision values, ``sum_{x, p} w_x (f_p(x) - g_p(x) - b_p)^2`` (every
    machine keeps the vectors it uses: ``B``'s zero pattern is held). Beyond Schölkopf et
    al. (1999): it approximates ``f`` where the data are, their closing remark, instead of
    ``||Psi - Psi'||``. Early stopping: a ``validation_fraction`` of the rows of ``X``, chosen
    by their content (:func:`row_fractions`, so that repeated rows and integer weights give
    the same split), is held out and the iterate with the lowest held-out error (checked
    every ``check_every`` iterations) is returned; ``validation_fraction=0`` returns the
    last iterate."""
    from scipy.optimize import minimize

    m, d = Z.shape
    if m == 0:  # Psi = 0: no vectors to move, the offsets are refitted afterwards
        return Z, B
    M = len(B)
    w = np.ones(len(X)) if weight is None else np.asarray(weight, dtype=float)
    # the distinct rows with their summed weights: the same sums for repeated rows
    X, _, w = distinct_rows(X, np.zeros(len(X)), w)
    mask = (B != 0).astype(float)
    F = exp.kernel.matvec(X, exp.A.T, exp.V)  # original decision values without offsets
    held = row_fractions(X) < validation_fraction
    va, tr = np.flatnonzero(held), np.flatnonzero(~held)
    if not w[tr].sum() > 0:  # the points fitted carry no weight: fit them all
        va, tr = va[:0], np.arange(len(X))
    n_val = len(va)
    b0 = w[tr] @ (F[tr] - exp.kernel.matvec(X[tr], B.T, Z)) / w[tr].sum()
    x0 = np.concatenate([Z.ravel(), (B * mask).ravel(), b0])
    scale = max(float(w[tr] @ np.sum(F[tr] ** 2, axis=1)), 1e-300)
    args = (X[tr], F[tr], mask, exp.kernel.gamma, m, d, scale, w[tr])
    best = {"x": x0, "val": np.inf}

    def held_out(x):
        return data_objective(x, X[va], F[va], mask, exp.kernel.gamma, m, d, 1.0, w[va])[0]

    if n_val:
        best["val"] = held_out(x0)
    count = [0]

    def callback(xk):
        count[0] += 1
        if n_val and count[0] % check_every == 0:
            v = held_out(xk)
            if v < best["val"]:
                best.update(x=xk.copy(), val=v)

    res = minimize(data_objective, x0, args=args, jac=True, method="L-BFGS-B",
                   callback=callback, options={"maxiter": int(maxiter)})
    x = res.x
    if n_val and held_out(x) > best["val"]:
        x = best["x"]
    return x[: m * d].reshape(m, d), x[m * d : m * d + M * m].reshape(M, m) * mask


def fit_coef_on_data(exp, X, V, B, weight=None):
    """(Weighted) least-squares fit of each machine's original decision values on ``X`` over
    the reduced vectors it uses (with a free offset); machines using the same vectors share
    one solve."""
    if not len(V):
        return np.zeros_like(B)
    F = exp.kernel.matvec(X, exp.A.T, exp.V)  # (n, M), without offsets
    Kx = exp.kernel(X, V)
    sw = np.ones(len(X)) if weight is None else np.sqrt(np.asarray(weight, dtype=float))
    out = np.zeros_like(B)
    used = B != 0
    groups = {}
    for p in range(len(B)):
        groups.setdefault(used[p].tobytes(), []).append(p)
    for rows in groups.values():
        cols = np.flatnonzero(used[rows[0]])
        D = np.hstack([Kx[:, cols], np.ones((len(X), 1))]) * sw[:, None]
        W = linalg.lstsq(D, F[:, rows] * sw[:, None], check_finite=False)[0]
        out[np.ix_(rows, cols)] = W[:-1].T
    return out


def min_error_offset(g, lab, b_ref, weight=None):
    """Offset b minimising the (weighted) errors of sign(g + b) against ``lab``; ties: closest
    to b_ref."""
    w = np.ones(len(g)) if weight is None else np.asarray(weight, dtype=float)
    g, lab, w = g[w > 0], lab[w > 0], w[w > 0]  # a zero weight removes the sample
    order = np.argsort(g)
    gs, ls, ws = g[order], lab[order], w[order]
    # threshold t = -b between consecutive sorted values: predict +1 when g > t
    # errors(t) = weight of (positives with g <= t) + weight of (negatives with g > t)
    pos_le = np.concatenate([[0.0], np.cumsum(ws * (ls == 1))])
    neg_gt = np.concatenate([[0.0], np.cumsum((ws * (ls == -1))[::-1])])[::-1]
    errors = pos_le + neg_gt  # index k: t between gs[k-1] and gs[k]
    lo = np.concatenate([[-np.inf], gs])
    hi = np.concatenate([gs, [np.inf]])
    # between equal values the interval is empty: no threshold splits tied points (all of
    # them fell on one side, by their order in the sort: constant g took the offset 0)
    errors[lo >= hi] = np.inf
    best = errors <= errors.min() + 1e-12 * max(float(w.sum()), 1.0)
    t_ref = -b_ref
    # distance of t_ref to each optimal interval [lo, hi)
    dist = np.where(t_ref < lo, lo - t_ref, np.where(t_ref >= hi, t_ref - hi, 0.0))
    dist[~best] = np.inf
    k = int(np.argmin(dist))
    if dist[k] == 0.0:
        return b_ref
    # inside the interval, half a gap away from its end nearer to t_ref (or its midpoint)
    if np.isfinite(lo[k]) and np.isfinite(hi[k]):
        t = 0.5 * (lo[k] + hi[k])
    elif np.isfinite(lo[k]):
        t = lo[k] + max(abs(t_ref - lo[k]), 1e-12)
    else:
        t = hi[k] - max(abs(hi[k] - t_ref), 1e-12)
    return -float(t)


def distinct_rows(X, y, weight):
    """The distinct ``(row, label)`` pairs of positive weight, in sorted order, with their
    summed weights: the same for integer weights and for rows repeated as often."""
    keep = weight > 0
    X, y, weight = X[keep], y[keep], weight[keep]
    codes = np.unique(y, return_inverse=True)[1].ravel()
    _, first, inv = np.unique(np.column_stack([X, codes]), axis=0, return_index=True,
                              return_inverse=True)
    return X[first], y[first], np.bincount(np.ravel(inv), weights=weight, minlength=len(first))


def row_fractions(X):
    """A number in ``[0, 1)`` per row of ``X``, a function of the row's content alone (the
    CRC-32 of its bytes over 2^32): a split by it keeps repeated rows together and does not
    depend on the order of the rows or on the other rows."""
    return np.array([zlib.crc32(np.ascontiguousarray(x).tobytes()) for x in X], dtype=float) / 2.0**32


def held_out_rows(exp, X):
    """The rows of ``X`` that are none of the expansion vectors that ``exp`` uses (by content,
    so repeated rows go together): held out from the expansion."""
    used = exp.V[np.any(exp.A != 0, axis=0)]
    centres = {np.ascontiguousarray(v).tobytes() for v in used}
    return np.array([np.ascontiguousarray(x).tobytes() not in centres for x in X], dtype=bool)


def auto_offset_rule(exp, X, weight=None):
    """The offset rule of ``threshold='auto'`` on the training set ``X``: ``('mean', rows)``,
    the mean rule over the ``rows`` held out from the expansion (:func:`held_out_rows`), when
    they carry at least :data:`AUTO_HELD_OUT_SHARE` of the training weight; else ``('keep',
    None)``. At a support vector ``x_i`` the original value ``f(x_i)`` holds the point's own
    term ``alpha_i k(x_i, x_i)``, which a reduced expansion does not reproduce term by term:
    the mean difference there is biased (wide data, where every training point is a support
    vector and ``k(x_i, x_j)`` is small for ``i != j``: ``f`` varies five times more at the
    training points than at fresh ones, and the mean rule shifted the offset of a
    constructed reduced set by a third of that spread)."""
    rows = held_out_rows(exp, X)
    w = np.ones(len(X)) if weight is None else np.asarray(weight, dtype=float)
    if rows.any() and w[rows].sum() >= AUTO_HELD_OUT_SHARE * w.sum() and w[rows].sum() > 0:
        return "mean", rows
    return "keep", None


def fit_offsets(exp, X, y, classes, V, B, threshold, weight=None):
    """Offsets of the reduced machines ``(V, B)`` of the expansion ``exp`` on ``(X, y)``:
    ``'keep'`` the original ones; ``'mean'`` the (weighted) mean difference between the
    original and the reduced decision values over each machine's samples; ``'error'`` the
    offset of fewest (weighted) training errors closest to the mean one."""
    if threshold == "keep":
        return exp.b.copy()
    w = np.ones(len(X)) if weight is None else weight
    f = exp.kernel.matvec(X, exp.A.T, exp.V) + exp.b  # original decision values
    g = expansion_values(exp.kernel, X, V, B)
    b = np.empty(len(exp.b))
    for p, (mask, lab) in enumerate(machine_labels(np.asarray(y), classes, exp.mode, exp.pairs)):
        if not mask.any() or not w[mask].sum() > 0:
            b[p] = exp.b[p]
            continue
        fp, gp, wp = f[mask, p], g[mask, p], w[mask]
        b_mean = float(wp @ (fp - gp) / wp.sum())
        b[p] = b_mean if threshold == "mean" else min_error_offset(gp, lab, b_mean, wp)
    return b


def sample_class_weights(class_weight, classes, svc, y, weight):
    """Per-sample class weights of the fits on the training set ``y`` (sample weights
    ``weight``): ``class_weight`` when given (``'balanced'``: from the weighted class
    counts), else the fitted SVC's ``class_weight_`` (ones for an expansion)."""
    if class_weight is not None:
        if isinstance(class_weight, dict):
            unknown = [c for c in class_weight if c not in classes]
            if unknown:
                raise ValueError(
                    f"class_weight names class(es) {unknown} not among the classes {classes.tolist()}"
                )
        present = np.unique(y)
        per = compute_class_weight(class_weight, classes=present, y=y, sample_weight=weight)
        return per[np.searchsorted(present, y)]
    svc_cw = getattr(svc, "class_weight_", None)
    if svc_cw is not None and len(svc_cw) == len(classes):
        return np.asarray(svc_cw, dtype=float)[np.searchsorted(classes, y)]
    return np.ones(len(y))


def training_agreement(f, g, labels, y, weight):
    """How close reduced decision values ``g`` (n, n_machines) and their ``labels`` are to
    the original decision values ``f`` on the training set ``y``: the (weighted) accuracy
    and the share of the variation of ``f`` that ``g`` reproduces,
    ``R^2 = 1 - sum w (f - g)^2 / sum w (f - mean f)^2`` over all machines."""
    acc = float(weight @ (labels == y) / weight.sum())
    spread = weight @ np.sum((f - weight @ f / weight.sum()) ** 2, axis=1)
    miss = weight @ np.sum((f - g) ** 2, axis=1)
    r2 = 1.0 - float(miss / spread) if spread > 0 else (1.0 if miss == 0 else -np.inf)
    return acc, r2
