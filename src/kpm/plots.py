"""Figures of the Kernel Projection Machine.

:func:`selection_curve` draws the NIPS 2004 paper's Figure 1 (left panel): the
risk of the KPM versus the dimension D -- test error when test data are given,
the cross-validated error, and the empirical (training) hinge risk.
"""

from __future__ import annotations

import numpy as np

__all__ = ["selection_curve"]


def selection_curve(model, ax=None, *, X_test=None, y_test=None, max_dim=None, title=None):
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
        Test data for the test-error curve.
    max_dim : int, optional
        Last D shown.
    title : str, optional

    Returns
    -------
    matplotlib Axes
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "selection_curve_")
    if (X_test is None) != (y_test is None):
        raise ValueError("give both X_test and y_test, or neither")
    curve = model.selection_curve_
    mask = curve["kernel"] == model.kernel_index_
    D = curve["D"][mask]
    if max_dim is not None:
        if isinstance(max_dim, bool) or int(max_dim) < 1:
            raise ValueError(f"max_dim must be a positive int, got {max_dim!r}")
        keep = D <= int(max_dim)
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
    ax.axvline(model.dim_, color="k", lw=0.8, alpha=0.6, label=f"selected D = {model.dim_}")
    ax.set_xlabel("dimension D")
    ax.set_ylabel("risk")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return ax
