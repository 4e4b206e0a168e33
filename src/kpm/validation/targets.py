"""Targets: class labels and the real-valued targets the estimators fit.

* :func:`one_vs_rest` -- class labels (any type scikit-learn accepts as classification
  targets: strings, integers, booleans, ...) to their classes, codes and the {-1, +1}
  targets of the one-vs-rest problems (:func:`ovr_targets`), as every classifier of kpm
  codes them;
* :func:`relevance_targets` -- the targets of a relevant-dimension estimate (Braun, Buhmann &
  Müller 2008): real targets where y is a float array, else class labels coded as the
  classifiers code them.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

__all__ = ["one_vs_rest", "ovr_targets", "relevance_targets"]


def one_vs_rest(y, who):
    """``(classes, codes, Y)``: the classes, each sample's class code and the targets in
    {-1, +1} of the one-vs-rest problems (two classes: one problem, ``classes[1]`` positive)."""
    try:
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:  # an object array of labels that cannot be ordered: mixed types
        kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel()})
        raise ValueError(f"y mixes labels of types that cannot be compared ({', '.join(kinds)}); "
                         f"{who} needs class labels of one type") from None
    codes = np.asarray(codes).ravel()
    if len(classes) < 2:
        raise ValueError(f"y has only one class ({classes[0]!r}); {who} needs samples of at least 2 classes")
    return classes, codes, ovr_targets(codes, len(classes))


def ovr_targets(codes, n_classes):
    """The targets in {-1, +1} of the one-vs-rest problems from class codes: (n, 1) for two
    classes (code 1 positive), else (n, n_classes)."""
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)


def relevance_targets(y, who):
    """The targets (n, n_targets) of a relevant-dimension estimate.

    A float y is a real target: one column (finite values). Any other y -- strings,
    integers, booleans, objects -- is class labels, coded as the classifiers code them
    (:func:`one_vs_rest`): one {-1, +1} column for two classes (the relevant dimension of two
    classes coded by any two numbers is the same with an intercept), one per class
    otherwise, whose contributions the two-component model fits jointly (as
    :class:`kpm.KernelPCRClassifier` does). Integer class codes thus give the same targets as
    the labels they code; a real target of integer values is given as floats.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if y.dtype.kind == "f":
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite values")
        return y.astype(np.float64)[:, None]
    if y.dtype.kind == "c":
        raise ValueError("y must be real targets or class labels, got complex values")
    return one_vs_rest(y, who)[2]
