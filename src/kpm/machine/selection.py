"""Model-selection rules of the Kernel Projection Machine (Zwald, Vert, Blanchard & Massart
2004; Zwald & Blanchard 2005), as pure functions.

Every rule works on plain arrays describing a family of models, each with a
*complexity* (its dimension D) and a risk, so that the rules serve one kernel
(``dims = 1..max_dim``) as well as a joint family over several kernels (the same
D repeated, once per kernel) and the large-scale estimators.

Ties are always broken towards the **smaller** dimension, then towards the
earlier model in the arrays.

* :func:`select_cv` -- the minimiser of a cross-validated error curve.
* :func:`select_penalty` -- ``argmin_D R(D) + lam * D`` (Zwald & Blanchard 2005,
  eq. 3, with ``R`` the empirical hinge risk of the *clipped* function).
* :func:`penalty_path` -- the exact path ``lam -> D(lam)``: the vertices of the
  lower convex hull of the points ``(D, R(D))`` and the breakpoints between them.
* :func:`slope_heuristic` -- the dimension-jump rule: the largest jump of
  ``D(lam)`` happens at ``lam_jump``; use ``lam = slope_factor * lam_jump``
  (Birgé & Massart; ``slope_factor = 2``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kpm.validation import check_real

__all__ = [
    "select_cv",
    "select_penalty",
    "penalty_path",
    "PenaltyPath",
    "slope_heuristic",
    "candidate_penalties",
]


def _check_curve(dims, risks, name="risks"):
    dims, risks = _as_reals(dims, "dims"), _as_reals(risks, name)
    if dims.ndim != 1 or risks.shape != dims.shape:
        raise ValueError(f"dims and {name} must be 1-D arrays of the same length, got {dims.shape} and {risks.shape}")
    if len(dims) == 0:
        raise ValueError("the model family is empty")
    if not (np.all(np.isfinite(dims)) and np.all(np.isfinite(risks))):
        raise ValueError(f"dims and {name} must be finite (no NaN or inf)")
    if np.any(dims < 0) or np.any(dims != np.round(dims)):
        raise ValueError(f"dims must be non-negative integers (model dimensions), got {dims!r}")
    return dims, risks


def _as_reals(values, name):
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {values!r}") from None


def _argmin_small(values, dims, atol=0.0):
    """Index of the minimum of ``values``; ties (within ``atol``) -> smaller dim, then first."""
    best = values.min()
    cand = np.flatnonzero(values <= best + atol)
    return int(cand[np.lexsort((cand, dims[cand]))[0]])


def select_cv(dims, cv_errors, *, atol: float = 1e-12) -> int:
    """Index of the model with the smallest cross-validated error.

    Parameters
    ----------
    dims : array (m,)
        Dimension of each model.
    cv_errors : array (m,)
        Cross-validated error of each model.
    atol : float
        Errors within ``atol`` of the minimum count as ties; ties go to the
        smaller dimension, then to the earlier model.

    Returns
    -------
    int
        Index into the arrays.
    """
    dims, cv_errors = _check_curve(dims, cv_errors, "cv_errors")
    return _argmin_small(cv_errors, dims, check_real(atol, "atol", low=0.0))


def select_penalty(dims, risks, lam: float, *, atol: float = 1e-12) -> int:
    r"""Index of :math:`\operatorname{argmin}_D R(D) + \lambda D` (ties -> smaller D).

    Parameters
    ----------
    dims, risks : array (m,)
        Dimension D and empirical risk :math:`R(D)` of each model.
    lam : float
        Penalty :math:`\lambda \ge 0` per dimension.
    """
    dims, risks = _check_curve(dims, risks)
    lam = check_real(lam, "the penalty lam", low=0.0)
    return _argmin_small(risks + lam * dims, dims, check_real(atol, "atol", low=0.0))


@dataclass
class PenaltyPath:
    r"""The exact regularisation path of :math:`\operatorname{argmin}_D R(D) + \lambda D`.

    For ``breakpoints[k-1]`` :math:`> \lambda \ge` ``breakpoints[k]`` the selected model is
    ``vertices[k]`` (with ``breakpoints[-1] := +inf`` and ``breakpoints[len] := 0``);
    see :func:`penalty_path` and :meth:`selected`.

    Attributes
    ----------
    vertices : ndarray of int
        Indices of the selected models, in the order visited as ``lam`` decreases
        from ``+inf`` to 0 (increasing dimension, decreasing risk).
    breakpoints : ndarray
        ``breakpoints[k]`` is the value of ``lam`` at which the selection jumps from
        ``vertices[k]`` to ``vertices[k+1]`` (decreasing; length ``len(vertices) - 1``).
    jumps : ndarray
        ``dims[vertices[k+1]] - dims[vertices[k]]``.
    """

    vertices: np.ndarray
    breakpoints: np.ndarray
    jumps: np.ndarray

    def selected(self, lam: float) -> int:
        """Index of the model selected at ``lam`` (at a breakpoint: the smaller dimension)."""
        lam = check_real(lam, "the penalty lam", low=0.0)
        k = int(np.sum(self.breakpoints > lam))
        return int(self.vertices[k])


def penalty_path(dims, risks) -> PenaltyPath:
    r"""Exact path of :math:`D(\lambda) = \operatorname{argmin}_D R(D) + \lambda D`, :math:`\lambda` from :math:`\infty` to 0.

    The selected models are the vertices of the lower convex hull of the points
    :math:`(D, R(D))` that lie on its decreasing part; the selection jumps from vertex
    :math:`a` to the next vertex :math:`c` at
    :math:`\lambda = (R(a) - R(c)) / (D(c) - D(a))`. At :math:`\lambda = +\infty` the smallest dimension (with its smallest risk) is selected.

    Parameters
    ----------
    dims, risks : array (m,)

    Returns
    -------
    PenaltyPath
    """
    dims, risks = _check_curve(dims, risks)
    # for each distinct dimension keep the best model (smallest risk, then first)
    order = np.lexsort((np.arange(len(dims)), risks, dims))
    keep = []
    last = None
    for i in order:
        if last is None or dims[i] != dims[last]:
            keep.append(i)
            last = i
    keep = np.asarray(keep)
    x, r = dims[keep], risks[keep]
    # lower convex hull, monotone chain, left to right; drop collinear middle points
    hull: list[int] = []
    for j in range(len(x)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            cross = (x[b] - x[a]) * (r[j] - r[a]) - (r[b] - r[a]) * (x[j] - x[a])
            if cross <= 0:  # b is not strictly below the segment a-j
                hull.pop()
            else:
                break
        hull.append(j)
    # keep the strictly decreasing part only (lam >= 0 never selects a higher risk at larger D)
    verts = [hull[0]]
    for j in hull[1:]:
        if r[j] < r[verts[-1]]:
            verts.append(j)
        else:
            break
    verts = np.asarray(verts, dtype=int)
    bp = (r[verts[:-1]] - r[verts[1:]]) / (x[verts[1:]] - x[verts[:-1]])
    jumps = x[verts[1:]] - x[verts[:-1]]
    return PenaltyPath(vertices=keep[verts], breakpoints=bp, jumps=jumps.astype(int))


def slope_heuristic(dims, risks, slope_factor: float = 2.0) -> tuple[int, float, PenaltyPath]:
    """The slope heuristic by the largest dimension jump (Birgé & Massart).

    As ``lam`` decreases from ``+inf`` to 0 the selected dimension ``D(lam)``
    increases by jumps (:func:`penalty_path`). ``lam_jump`` is the breakpoint of
    the largest jump (ties: the first one met, i.e. the largest ``lam``); the
    selected model minimises ``R(D) + slope_factor * lam_jump * D``.

    Parameters
    ----------
    dims, risks : array (m,)
        Dimension and empirical risk of each model.
    slope_factor : float, default=2.0
        The factor between the minimal penalty and the one used.

    Returns
    -------
    index : int
        The selected model.
    lam_jump : float
        The penalty constant at the largest jump (0 when the path has no jump).
    path : PenaltyPath
    """
    slope_factor = check_real(slope_factor, "slope_factor", low=0.0, low_open=True)
    dims_a, risks_a = _check_curve(dims, risks)
    path = penalty_path(dims_a, risks_a)
    if len(path.jumps) == 0:
        return int(path.vertices[0]), 0.0, path
    k = int(np.argmax(path.jumps))  # first maximal jump = largest lam
    lam_jump = float(path.breakpoints[k])
    idx = select_penalty(dims_a, risks_a, slope_factor * lam_jump)
    return idx, lam_jump, path


def candidate_penalties(paths) -> np.ndarray:
    """Penalty values covering every distinct selection of several penalty paths.

    Between two consecutive breakpoints (of any path) every path selects a fixed
    model, so one value per interval -- the geometric mean of its ends, plus one
    value above the largest and one at 0 -- covers every distinct combination.

    Parameters
    ----------
    paths : iterable of PenaltyPath (or one PenaltyPath)

    Returns
    -------
    ndarray
        Candidate values, decreasing (the last is 0).
    """
    if isinstance(paths, PenaltyPath):
        paths = [paths]
    try:
        paths = list(paths)
    except TypeError:
        raise ValueError(f"paths must be an iterable of PenaltyPath, got {paths!r}") from None
    for p in paths:
        if not isinstance(p, PenaltyPath):
            raise ValueError(
                f"paths must hold PenaltyPath objects (from penalty_path), got {type(p).__name__} {p!r}"
            )
    bps = np.concatenate([np.asarray(p.breakpoints, dtype=float) for p in paths] + [np.zeros(0)])
    bps = np.unique(bps[bps > 0])[::-1]
    if len(bps) == 0:
        return np.array([1.0, 0.0])
    # sqrt(a) sqrt(b), not sqrt(a b): no overflow or underflow at any magnitude
    top = 2.0 * bps[0] if 2.0 * bps[0] < np.inf else np.nextafter(bps[0], np.inf)
    cands = [top]
    cands += list(np.sqrt(bps[:-1]) * np.sqrt(bps[1:]))
    cands += [0.5 * bps[-1], 0.0]
    return np.asarray(cands)
