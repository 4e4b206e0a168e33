"""Figures of fitted models (the ``plot`` extra: ``pip install kpm[plot]`` for matplotlib).

* :func:`plot_selection_curve`: risk versus dimension D of a fitted Kernel Projection
  Machine, as in Figure 1 (left panel) of Blanchard, Massart, Vert & Zwald (2004): the
  test error when test data are given, the cross-validated error, and the empirical
  (training) hinge risk.
* :func:`plot_relevance`: the contributions ``|s_i|`` of the kernel PCA directions to the
  labels (``u_i^T y`` without an intercept) with the two-component split of the relevant
  dimension (Braun, Buhmann & Müller).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from kpm.validation import check_bool, check_int

__all__ = ["plot_selection_curve", "plot_relevance"]


def _pyplot():
    """``matplotlib.pyplot``, or an ImportError naming the extra that installs it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "kpm's figures need matplotlib, which the 'plot' extra installs: pip install 'kpm[plot]'"
        ) from exc
    return plt


def plot_selection_curve(model, ax=None, *, X_test=None, y_test=None, max_components=None, title=None):
    """Draw risk versus dimension D for a fitted :class:`~kpm.KernelProjectionMachine`.

    Curves (for the winning kernel of a kernel list): the test 0-1 error of
    ``f_D`` for every D (if ``X_test``/``y_test`` are given), the pooled
    cross-validated 0-1 error (if the model ran CV), the empirical hinge risk
    ``R_n(f_D)`` and the clipped risk ``R_n(clip f_D)`` (dashed), the penalised
    criterion when a penalty was used, and a vertical line at the selected D.

    Parameters
    ----------
    model : KernelProjectionMachine
        A fitted model.
    ax : matplotlib Axes, optional
        Where to draw (a new figure otherwise).
    X_test, y_test : array-like, optional
        Test data for the test-error curve (which needs a model fitted with
        ``keep_paths=True``).
    max_components : int, optional
        Last D shown.
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    plt = _pyplot()

    check_is_fitted(model, "selection_curve_")
    max_components = check_int(max_components, "max_components", minimum=1, allow_none=True)
    if (X_test is None) != (y_test is None):
        raise ValueError("give both X_test and y_test, or neither")
    curve = model.selection_curve_
    mask = curve["kernel"] == model.kernel_index_
    D = curve["D"][mask]
    if max_components is not None:
        keep = D <= max_components
        mask = np.flatnonzero(mask)[keep]
        D = D[keep]
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))

    if X_test is not None:
        y_test = np.asarray(y_test)
        P = model.predict_path(X_test)
        test_err = (P != y_test[:, None]).mean(axis=0)
        Dt = np.asarray(model.path_dims_)
        keep = Dt <= D.max()
        ax.plot(Dt[keep], test_err[keep], "-", color="C0", label="test error")
    cv = curve["cv_error"][mask]
    if np.any(np.isfinite(cv)):
        ax.plot(D, cv, "-", color="C1", label="CV error")
    ax.plot(D, curve["hinge_risk"][mask], "--", color="C2", label="empirical hinge risk")
    ax.plot(D, curve["clipped_risk"][mask], ":", color="C2", label="empirical clipped risk")
    crit = curve["criterion"][mask]
    if np.any(np.isfinite(crit)):
        ax.plot(D, crit, "-.", color="C3", label=f"penalised criterion (λ={model.penalty_:.3g})")
    ax.axvline(model.n_components_, color="k", lw=0.8, alpha=0.6, label=f"selected D = {model.n_components_}")
    ax.set_xlabel("dimension D")
    ax.set_ylabel("risk")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def plot_relevance(model, ax=None, *, max_index=None, log=True):
    """Plot ``|s_i|`` with the fitted two-component split (the slides' figure).

    Parameters
    ----------
    model : fitted RelevantDimension or kernel PCR estimator
        Any object with ``s_``, ``sigma1_sq_``, ``sigma2_sq_`` and the model's cut
        ``d_hat``: ``relevant_dim_`` (kernel PCR, whose ``n_components_`` may differ), else
        ``n_components_`` (:class:`~kpm.RelevantDimension`).
    ax : matplotlib Axes, optional
    max_index : int, optional
        Plot only the first ``max_index`` contributions (default ``min(n, 4 d_hat + 50)``).
    log : bool, default=True
        Logarithmic y axis.

    Returns
    -------
    ax : matplotlib Axes
    """
    cut = "relevant_dim_" if hasattr(model, "relevant_dim_") else "n_components_"
    for attr in ("s_", cut, "sigma1_sq_", "sigma2_sq_"):
        if not hasattr(model, attr):
            raise ValueError(f"plot_relevance needs a fitted model with attribute {attr!r}")
    max_index = check_int(max_index, "max_index", minimum=1, allow_none=True)
    log = check_bool(log, "log")
    if ax is None:
        _, ax = _pyplot().subplots(figsize=(6, 3.5))
    s = np.asarray(model.s_)
    a = np.sqrt((s**2).sum(axis=1)) if s.ndim == 2 else np.abs(s)
    d = int(getattr(model, cut))
    m = min(len(a), 4 * d + 50 if max_index is None else max_index)
    idx = np.arange(1, m + 1)
    ax.plot(idx, a[:m], ".", ms=3, color="0.3", label=r"$|s_i|$ (model.s_)")
    ax.axvline(d + 0.5, color="C3", lw=1, label=rf"$\hat d = {d}$")
    ax.hlines(np.sqrt(model.sigma1_sq_), 1, d, colors="C0", lw=2, label=r"$\sigma_1$")
    ax.hlines(np.sqrt(model.sigma2_sq_), d + 1, m, colors="C1", lw=2, label=r"$\sigma_2$")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("kernel PCA component i (decreasing eigenvalue)")
    ax.set_ylabel(r"$|s_i|$")
    ax.legend(fontsize=8, loc="upper right")
    return ax
