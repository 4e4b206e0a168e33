"""The denoiser's number of components chosen from the data (``n_components='auto'``).

:class:`kpm.KernelPCADenoiser` cannot see the clean data. It estimates, from held-out
training points, the squared error of its output against the clean points, for every number
of components on a grid, and compares it with the error of the noisy input itself. The
model is the one of the denoising experiments (Mika et al. 1999): ``x = c + n``, ``c`` the
clean point, ``n`` isotropic noise of variance ``sigma^2`` per input feature.

1. *Noise level* (cross-validated probabilistic PCA; Tipping & Bishop 1999 estimate
   ``sigma^2`` as the mean of the discarded eigenvalues). Linear PCA is fitted on K - 1
   folds and reconstructs the held-out fold from its first q directions with error
   ``E_lin(q)`` per feature. If the signal lies in a linear subspace of dimension k, every
   direction beyond the k-th captures a held-out point's noise and nothing else, so the
   held-out residual variance per residual dimension, ``s(q) = E_lin(q) d / (d - q)``, is
   ``sigma^2`` for every ``q >= k`` (a plateau) and larger below k; on held-out points the
   estimate is not biased low by fitting the noise, as the training spectrum is. The noise
   level is identified when ``s`` reaches its minimum (to within ``plateau``) at some
   ``q_lin`` with ``1 <= q_lin <= d - 2`` (at least two noise directions) and the
   held-out variance along the ``q_lin``-th direction is ``gap`` times ``sigma^2`` or more
   (the weakest signal direction stands out of the noise); ``sigma^2 = s(q_lin)``.
   Otherwise -- data that fill their input space, isotropic data, fewer than three input
   features -- the noise cannot be told from the signal by any method that sees only the
   noisy data, and every component is kept with a warning.
2. *Risk* (Stein 1981). For a denoiser f fitted without the held-out point x,
   ``E||f(x) - c||^2 = E||f(x) - x||^2 - d sigma^2 + 2 sigma^2 E[div f(x)]``: the held-out
   reconstruction error corrected by the divergence, which Hutchinson's estimator gives
   from one random probe per point, ``b^T (f(x + eps b) - f(x)) / eps`` with ``b`` standard
   normal and ``eps = 0.1 sigma``. The kernel PCA denoiser is cross-validated on the same
   folds (fitted once per fold, the trailing coordinates set to zero for each q; refitted
   per q for the learned pre-image) for q on a geometric grid 1, 2, 3, 4, 6, 8, 12, ...
   up to the folds' rank, stopped once the estimate has risen twice past its minimum.
   The q of smallest estimate is kept. The input's risk is ``sigma^2`` per feature;
   ``LinearPCADenoiser(q_lin)``'s is ``E_lin(q_lin) - sigma^2 + 2 sigma^2 q_lin / d`` (the
   divergence of a projection onto q directions is q).
3. *Safety*. When the kept denoiser's estimate is not at least ``margin`` (10 %) below the
   input's, or exceeds ``LinearPCADenoiser(q_lin)``'s by more than half the margin (in units
   of the input's), a warning says so and names the better of ``LinearPCADenoiser(q_lin)``
   and the input. The margins absorb the estimates' sampling error (a few percent with 200
   held-out points). An estimate below zero by more than the margin (a squared error's
   expectation is not negative) means the noise model does not hold -- too few points, or a
   noise floor read off structure the folds do not share: every component is kept with a
   warning, as when the noise level cannot be estimated.

The cross-validation assumes the held-out training points are like the points to be
denoised: repeated noisy measurements of the same clean points in the training data (but
not among the test points) make it optimistic. Exactly duplicated rows are kept in one
fold.

References
----------
M. E. Tipping, C. M. Bishop, "Probabilistic principal component analysis", J. R. Stat. Soc.
B 61(3), 1999.

C. M. Stein, "Estimation of the mean of a multivariate normal distribution", Ann. Stat.
9(6), 1981.

M. F. Hutchinson, "A stochastic estimator of the trace of the influence matrix for
Laplacian smoothing splines", Commun. Stat. Simul. Comput. 18(3), 1989.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from kpm.preimage.noise import heldout_linear_pca, noise_level, stein_risk

__all__ = ["ComponentSelection", "select_components"]


@dataclass(frozen=True)
class ComponentSelection:
    """The outcome of :func:`select_components`.

    Attributes
    ----------
    n_components : int or None
        The number chosen (None: keep every component).
    noise_variance : float
        ``sigma^2`` per input feature (NaN when not identified).
    linear_components : int or None
        ``q_lin``, the dimension of the linear signal subspace (None when not identified).
    floor : float
        ``E_lin(q_lin)``, the held-out error of linear PCA at ``q_lin`` (NaN when not identified).
    linear_risk : float
        Stein's unbiased estimate of the squared error per feature of
        ``LinearPCADenoiser(linear_components)`` against the clean points.
    components : ndarray of int or None
        The grid of the kernel denoiser's cross-validation (None when it did not run).
    errors : ndarray or None
        Held-out reconstruction error per input feature on that grid.
    risks : ndarray or None
        Stein's unbiased estimate of the squared error per feature against the clean
        points on that grid (the input's is ``noise_variance``).
    message : str or None
        The warning issued, if any.
    """

    n_components: int | None
    noise_variance: float = float("nan")
    linear_components: int | None = None
    floor: float = float("nan")
    linear_risk: float = float("nan")
    components: np.ndarray | None = None
    errors: np.ndarray | None = None
    risks: np.ndarray | None = None
    message: str | None = None


def _grid(q_max):
    grid = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]
    return np.array(sorted({q for q in grid if q < q_max} | {q_max}), dtype=int)


def select_components(X, make_projection, *, n_folds=5, max_points=1000, max_test=200,
                      plateau=0.25, gap=2.5, margin=0.1, random_state=0):
    """Choose the kernel PCA denoiser's number of components (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The (noisy) training data.
    make_projection : callable
        ``make_projection(q)``: an unfitted :class:`kpm.KernelProjection` with q components
        (None: every component) and the denoiser's kernel and pre-image settings.
    n_folds : int, default=5
    max_points : int, default=1000
        The cross-validation runs on at most this many training points (a random subset).
    max_test : int, default=200
        At most this many held-out points are denoised per q (all folds together).
    plateau : float, default=0.25
        Relative tolerance of the noise plateau ``s(q)``.
    gap : float, default=2.5
        The held-out variance along the weakest linear signal direction must be at least
        ``gap`` times the noise variance (otherwise signal and noise are not told apart).
    margin : float, default=0.1
        The chosen denoiser must promise a risk at most ``1 - margin`` times the input's
        (``sigma^2`` per feature), or a warning is issued.
    random_state : int or RandomState
        Draws the subset and the folds.

    Returns
    -------
    ComponentSelection
    """
    rng = check_random_state(random_state)
    X, labels, E_lin = heldout_linear_pca(X, n_folds, max_points, rng)
    d = X.shape[1]
    sigma2, q_lin = noise_level(E_lin, d, plateau=plateau, gap=gap)
    unidentified = ComponentSelection(None, message=(
        "the noise level of the data cannot be estimated (linear PCA of held-out training "
        "points shows no isotropic noise floor below a distinct signal: the data fill their "
        f"input space, are isotropic, or have fewer than 3 features (here {d})), so the number "
        "of components is not chosen from the data and every component is kept; the denoised "
        "points may be further from the clean ones than the noisy input: pass n_components "
        "(checked on data with known clean points), or keep the input"))
    if q_lin is None:
        return unidentified
    floor = float(E_lin[q_lin])
    eps = 0.1 * np.sqrt(sigma2)  # finite-difference step, well below the noise
    # held-out points denoised per fold: at most max_test in all
    per_fold = max(1, max_test // n_folds)
    folds = []
    for f in range(n_folds):
        test = np.flatnonzero(labels == f)[:per_fold]
        train = labels != f
        if test.size == 0 or train.sum() < 3:
            continue
        Xt = X[test]
        probe = rng.standard_normal(Xt.shape)
        Xp = Xt + eps * probe
        proj = make_projection(None).fit(X[train])
        if proj.preimage_ is None:  # no pre-image for this kernel: the caller says so
            return ComponentSelection(None, sigma2, q_lin, floor)
        folds.append((train, Xt, Xp, probe, proj, proj.transform(Xt), proj.transform(Xp)))
    if not folds:  # too few points for the folds
        return unidentified
    grid = _grid(min(fold[4].n_components_ for fold in folds))
    counts = sum(len(fold[1]) for fold in folds)
    errors, div = np.full(len(grid), np.nan), np.full(len(grid), np.nan)
    for j, q in enumerate(grid):
        e = v = 0.0
        for train, Xt, Xp, probe, proj, Y, Yp in folds:
            if proj.preimage_ == "learned":  # the learned map depends on the components
                pq = make_projection(int(q)).fit(X[train])
                Z, Zp = pq.inverse_transform(pq.transform(Xt)), pq.inverse_transform(pq.transform(Xp))
            else:  # the leading eigenpairs are those of a fit with q components
                Z, Zp = _truncated_preimages(proj, Y, Xt, q), _truncated_preimages(proj, Yp, Xp, q)
            e += np.sum((Z - Xt) ** 2)
            # Hutchinson's estimate of the divergence: E[b^T (f(x + eps b) - f(x))] / eps
            v += np.sum(probe * (Zp - Z)) / eps
        errors[j], div[j] = e / (counts * d), v / counts
        risk = stein_risk(errors[:j + 1], div[:j + 1], sigma2, d)
        if j - int(np.argmin(risk)) >= 2:  # risen twice since its minimum: stop
            break
    done = ~np.isnan(errors)
    grid, errors, div = grid[done], errors[done], div[done]
    # Stein's unbiased risk estimate per feature; the input's is sigma^2
    risk = stein_risk(errors, div, sigma2, d)
    best = int(np.argmin(risk))
    q_best = int(grid[best])
    lin_risk = stein_risk(floor, q_lin, sigma2, d)
    found = dict(noise_variance=sigma2, linear_components=q_lin, floor=floor, linear_risk=lin_risk,
                 components=grid, errors=errors, risks=risk)
    if risk[best] < -margin * sigma2:
        # a squared error has a nonnegative expectation: an estimate below zero by more than
        # its sampling error means the noise model does not hold (too few points, a noise
        # level read off structure the folds do not share)
        return ComponentSelection(None, message=(
            f"the noise level of the data cannot be estimated: linear PCA's noise floor "
            f"({sigma2:.3g} per feature) gives a negative estimate of the kernel denoiser's "
            f"squared error ({risk[best]:.3g} per feature, Stein's unbiased risk estimate on "
            f"held-out training points), so the model of isotropic noise does not hold here "
            f"(too few points, {len(X)}?); every component is kept and the denoised points may be "
            f"further from the clean ones than the noisy input: keep the input, or pass "
            f"n_components (checked on data with known clean points)"), **found)
    # the better of the cheap references: the input (risk sigma^2) or linear PCA's projection
    better_input = risk[best] > (1.0 - margin) * sigma2
    better_linear = risk[best] > lin_risk + 0.5 * margin * sigma2
    if not (better_input or better_linear):
        return ComponentSelection(q_best, **found)
    use_linear = lin_risk <= (1.0 - margin) * sigma2
    what = ("is not expected to improve on the noisy input" if better_input else
            f"is expected to do worse than LinearPCADenoiser(n_components={q_lin})")
    msg = (f"kernel PCA denoising {what}: cross-validated "
           f"on held-out training points (Stein's unbiased risk estimate with the noise variance "
           f"{sigma2:.3g} per feature of linear PCA's noise floor), its best risk is "
           f"{risk[best]:.3g} per feature at {q_best} components against {sigma2:.3g} for the input "
           f"and {lin_risk:.3g} for LinearPCADenoiser(n_components={q_lin}): use "
           + (f"LinearPCADenoiser(n_components={q_lin})" if use_linear else "the input")
           + " instead, or pass n_components")
    return ComponentSelection(q_best, message=msg, **found)


def _truncated_preimages(proj, Y, X, q):
    """Pre-images of the first q coordinates of Y, the iterative ones started at X."""
    Yq = Y.copy()
    Yq[:, q:] = 0.0
    init = X if proj.preimage_ in ("fixed-point", "gradient") else None
    return proj.inverse_transform(Yq, init=init)

