"""Kernel expansions and the SVC adapters of the reduced-set methods (Schölkopf et al. 1999, §V).

A kernel machine decides with ``f(x) = sum_i alpha_i k(x_i, x) + b = <Psi, phi(x)> + b``;
this module holds the expansion ``Psi`` of one or several machines (:class:`Expansion`),
what makes one from a fitted :class:`sklearn.svm.SVC`, a list of binary ``SVC`` or a tuple
``(support_vectors, coef, intercept, kernel)`` (:func:`as_expansion`), the kernel
validation, the optimal coefficients of an expansion over given vectors and its error
``||Psi - Psi'||^2`` from kernels (the Proposition of Schölkopf et al. 1999, §V-B), and the
rules that turn the machines' decision values into labels (libsvm's one-vs-one vote,
scikit-learn's one-vs-rest shape).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg, sparse
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_array, check_is_fitted

from kpm.kernels import Kernel, make_kernel
from kpm.spectral.basis import RANK_RTOL, numerical_rank, rounding_level

__all__ = [
    "Expansion",
    "as_expansion",
    "expansion_classes",
    "expansion_error",
    "expansion_values",
    "machine_labels",
    "machine_optimal_coefficients",
    "optimal_coefficients",
    "ovo_to_ovr",
    "predict_labels",
    "solve_psd",
    "unit_scale",
    "validate_kernel",
]


def solve_psd(K, rhs):
    """``K^{-1} rhs`` for a symmetric PSD ``K``; the pseudo-inverse cut at the numerical rank
    (:func:`kpm.spectral.numerical_rank`) when ``K`` is singular to the rank tolerance."""
    K = np.asarray(K, dtype=float)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", linalg.LinAlgWarning)
            c, low = linalg.cho_factor(K, lower=True, check_finite=False)
        # the squared pivots of the factor bound the spectrum: a ratio above the rank
        # tolerance leaves K nonsingular; below it (duplicates), the pseudo-inverse is the
        # paper's prescription
        d = np.abs(np.diag(c))
        if d.min() ** 2 > RANK_RTOL * d.max() ** 2:
            return linalg.cho_solve((c, low), rhs, check_finite=False)
    except (linalg.LinAlgError, linalg.LinAlgWarning):
        pass
    w, V = linalg.eigh(K, check_finite=False)
    w, V = w[::-1], V[:, ::-1]
    r = numerical_rank(w, floor=rounding_level(len(K), float(np.max(np.abs(K)))))
    U = V[:, :r]
    return U @ ((U.T @ rhs) / (w[:r][:, None] if np.ndim(rhs) == 2 else w[:r]))


def unit_scale(K):
    """``K / max_i K_ii``: the selections and the optimal coefficients do not depend on the
    scale of the kernel matrix, while products of its entries underflow or overflow for
    data of extreme magnitude under a linear or polynomial kernel (1e-100 inputs: entries
    ~1e-200, their products 0)."""
    top = float(np.max(np.abs(np.diag(K)))) if len(K) else 0.0
    return K / top if top > 0 else K


def validate_kernel(kernel):
    if isinstance(kernel, Kernel):
        k = kernel
    elif isinstance(kernel, dict):
        k = make_kernel(**kernel)
    else:
        k = make_kernel(kernel)
    if k.is_precomputed:
        raise ValueError("a reduced set needs a kernel it can evaluate on new vectors, not 'precomputed'")
    return k


def optimal_coefficients(Z, X, alpha, kernel):
    r"""Optimal coefficients :math:`\beta = (K^z)^{-1} K^{zx} \alpha` of an expansion over ``Z``.

    Minimises :math:`\|\sum_i \alpha_i \phi(x_i) - \sum_j \beta_j \phi(z_j)\|^2` over
    :math:`\beta` for fixed ``Z`` (Schölkopf et al. 1999, Proposition; pseudo-inverse when
    :math:`K^z` is singular).

    Parameters
    ----------
    Z : array-like of shape (m, n_features)
        Reduced-set vectors.
    X : array-like of shape (n, n_features)
        Expansion vectors of ``Psi``.
    alpha : array-like of shape (n,) or (n_machines, n)
        Coefficients of ``Psi`` (several machines: one row each).
    kernel : Kernel, str, callable or dict
        The kernel (anything :func:`kpm.kernels.make_kernel` accepts, or a dict of its
        arguments).

    Returns
    -------
    beta : ndarray of shape (m,) or (n_machines, m)
    """
    kernel = validate_kernel(kernel)
    Z = check_array(Z, dtype=float)
    X = check_array(X, dtype=float)
    if Z.shape[1] != X.shape[1]:
        raise ValueError(f"Z has {Z.shape[1]} features but X has {X.shape[1]}")
    alpha = np.asarray(alpha, dtype=float)
    one = alpha.ndim == 1
    A = np.atleast_2d(alpha)
    if A.ndim != 2 or A.shape[1] != len(X):
        raise ValueError(f"alpha must have {len(X)} entries per machine, got shape {alpha.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("alpha contains NaN or infinite values")
    rhs = kernel(Z, X) @ A.T  # (m, n_machines)
    beta = solve_psd(kernel(Z), rhs).T
    return beta[0] if one else beta


def expansion_error(X, alpha, Z, beta, kernel):
    r""":math:`\|\sum_i \alpha_i \phi(x_i) - \sum_j \beta_j \phi(z_j)\|^2` computed from kernels.

    ``alpha``/``beta`` may hold one machine per row; the result then has one entry per
    machine.
    """
    kernel = validate_kernel(kernel)
    X = check_array(X, dtype=float)
    Z = check_array(Z, dtype=float, ensure_min_samples=0)
    A = check_array(np.atleast_2d(np.asarray(alpha, dtype=float)), input_name="alpha")
    B = check_array(np.atleast_2d(np.asarray(beta, dtype=float)), ensure_min_features=0, input_name="beta")
    if A.shape[1] != len(X) or B.shape[1] != len(Z) or len(A) != len(B):
        raise ValueError(
            f"shapes do not match: alpha {A.shape} for {len(X)} vectors, beta {B.shape} for {len(Z)}"
        )
    err = np.einsum("pi,ij,pj->p", A, kernel(X), A)
    if len(Z):
        err -= 2 * np.einsum("pj,ji,pi->p", B, kernel(Z, X), A)
        err += np.einsum("pj,jl,pl->p", B, kernel(Z), B)
    err = np.maximum(err, 0.0)
    return err[0] if np.ndim(alpha) == 1 else err


def machine_optimal_coefficients(exp, V, used):
    """Each machine's optimal coefficients (:func:`optimal_coefficients`) over the vectors
    ``V[used[p]]`` it uses (``used``: boolean, ``(n_machines, len(V))``), zero elsewhere."""
    B = np.zeros(used.shape)
    for p in range(len(B)):
        cols = np.flatnonzero(used[p])
        if len(cols):
            B[p, cols] = optimal_coefficients(V[cols], exp.V, exp.A[p], exp.kernel)
    return B


def expansion_values(kernel, X, V, B):
    """``sum_j B[p, j] k(V_j, x)`` for each row x of ``X`` and machine p, shape
    ``(n, n_machines)``; zeros for an empty expansion (no vectors: ``Psi = 0``, as for an SVC
    fitted on constant data, whose machine decides by its offset alone)."""
    if len(V) == 0:
        return np.zeros((len(X), len(B)))
    return kernel.matvec(X, B.T, V)


# ------------------------------------------------------------------- input expansion
class Expansion:
    """Vectors ``V`` (N, d), coefficients ``A`` (M, N), offsets ``b`` (M,), machine layout."""

    def __init__(self, V, A, b, kernel, mode, classes, pairs=None, ovr_shape=True, break_ties=False):
        self.V, self.A, self.b, self.kernel = V, A, b, kernel
        self.mode, self.classes, self.pairs, self.ovr_shape = mode, classes, pairs, ovr_shape
        self.break_ties = break_ties


def _svc_kernel(svc):
    kern = svc.kernel
    if callable(kern) or kern == "precomputed":
        raise ValueError(
            f"the SVC uses kernel={kern!r}: a reduced set needs a named kernel it can evaluate "
            "on new vectors ('rbf', 'poly', 'sigmoid', 'linear'); pass a kernel expansion "
            "(support_vectors, coef, intercept, kernel) instead"
        )
    gamma = getattr(svc, "_gamma", svc.gamma)
    if kern == "rbf":
        return make_kernel("rbf", gamma=float(gamma))
    if kern == "linear":
        return make_kernel("linear")
    return make_kernel(kern, gamma=float(gamma), degree=svc.degree, coef0=svc.coef0)


def _check_fitted_svc(svc):
    if not hasattr(svc, "dual_coef_") and not hasattr(svc, "fit"):
        raise ValueError(f"expected a fitted SVC, got {type(svc).__name__}")
    if not hasattr(svc, "support_vectors_") and hasattr(svc, "coef_"):
        raise ValueError(f"{type(svc).__name__} is not a kernel SVM with support vectors")
    try:
        check_is_fitted(svc, ["support_vectors_", "dual_coef_", "intercept_"])
    except NotFittedError as exc:
        raise NotFittedError(
            f"the {type(svc).__name__} is not fitted: fit it first (or use "
            "ReducedSetSVC(prefit=False) to fit and reduce in one step)"
        ) from exc
    if sparse.issparse(svc.support_vectors_):
        raise ValueError("SVCs fitted on sparse input are not supported: fit on a dense array")


def _from_svc(svc):
    _check_fitted_svc(svc)
    if not hasattr(svc, "classes_"):
        raise ValueError(
            f"{type(svc).__name__} is not a classifier (no classes_): pass a kernel expansion "
            "(support_vectors, coef, intercept, kernel) to reduce other kernel machines"
        )
    kernel = _svc_kernel(svc)
    V = np.asarray(svc.support_vectors_, dtype=float)
    classes = np.asarray(svc.classes_)
    if len(classes) == 2:
        A = np.asarray(svc.dual_coef_, dtype=float).reshape(1, -1)
        return Expansion(V, A, np.asarray(svc.intercept_, dtype=float).ravel(), kernel, "binary", classes)
    # one-vs-one: libsvm layout, support vectors grouped by class, pair (i, j) with i < j;
    # its decision value is positive for class i
    n_sup = np.asarray(svc.n_support_)
    start = np.concatenate([[0], np.cumsum(n_sup)])
    dual = np.asarray(svc.dual_coef_, dtype=float)
    n_cls = len(classes)
    pairs = [(i, j) for i in range(n_cls) for j in range(i + 1, n_cls)]
    A = np.zeros((len(pairs), len(V)))
    for p, (i, j) in enumerate(pairs):
        si = slice(start[i], start[i + 1])
        sj = slice(start[j], start[j + 1])
        A[p, si] = dual[j - 1, si]
        A[p, sj] = dual[i, sj]
    b = np.asarray(svc.intercept_, dtype=float).ravel()
    ovr = getattr(svc, "decision_function_shape", "ovr") == "ovr"
    ties = bool(getattr(svc, "break_ties", False))
    return Expansion(V, A, b, kernel, "ovo", classes, pairs, ovr, ties)


def _union(Vs, coefs, n_machines):
    """Stack several machines' vectors, merging identical rows."""
    V_all = np.vstack(Vs)
    uniq, inv = np.unique(V_all, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    A = np.zeros((n_machines, len(uniq)))
    off = 0
    for p, c in enumerate(coefs):
        np.add.at(A[p], inv[off : off + len(c)], c)
        off += len(c)
    return uniq, A


def _from_svc_list(svcs):
    if len(svcs) == 0:
        raise ValueError("the list of SVCs is empty")
    kernels, Vs, coefs, bs = [], [], [], []
    for k, s in enumerate(svcs):
        _check_fitted_svc(s)
        if len(s.classes_) != 2:
            raise ValueError(
                f"SVC number {k} of the list has {len(s.classes_)} classes: a list must hold "
                "binary one-vs-rest machines"
            )
        kernels.append(_svc_kernel(s))
        Vs.append(np.asarray(s.support_vectors_, dtype=float))
        coefs.append(np.asarray(s.dual_coef_, dtype=float).ravel())
        bs.append(float(np.ravel(s.intercept_)[0]))
    if any(k != kernels[0] for k in kernels):
        raise ValueError("the SVCs of the list use different kernels; reduce them one at a time")
    if len({V.shape[1] for V in Vs}) != 1:
        raise ValueError("the SVCs of the list were fitted on different numbers of features")
    V, A = _union(Vs, coefs, len(svcs))
    mode = "binary" if len(svcs) == 1 else "ovr"
    return Expansion(V, A, np.array(bs), kernels[0], mode, None)


def _from_tuple(exp):
    if isinstance(exp, dict):
        try:
            exp = (exp["support_vectors"], exp["coef"], exp["intercept"], exp["kernel"])
        except KeyError as exc:
            raise ValueError(
                f"a kernel expansion dict needs the keys support_vectors, coef, intercept, kernel; missing {exc}"
            ) from None
    if len(exp) != 4:
        raise ValueError(
            "a kernel expansion is (support_vectors, coef, intercept, kernel); got "
            f"{len(exp)} items"
        )
    V, A, b, kernel = exp
    V = check_array(V, dtype=float)
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if A.ndim != 2 or A.shape[1] != len(V):
        raise ValueError(
            f"coef must have shape (n_machines, {len(V)}) for {len(V)} support vectors, got {A.shape}"
        )
    b = np.atleast_1d(np.asarray(b, dtype=float)).ravel()
    if b.shape != (len(A),):
        raise ValueError(f"intercept must have one entry per machine ({len(A)}), got {b.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError("coef and intercept must be finite")
    kernel = validate_kernel(kernel)
    return Expansion(V, A, b, kernel, "binary" if len(A) == 1 else "ovr", None)


def as_expansion(est):
    """The :class:`Expansion` of a fitted ``SVC``, a list of fitted binary ``SVC``
    (one-vs-rest) or a kernel expansion ``(support_vectors, coef, intercept, kernel)``
    (or a dict with these keys)."""
    if isinstance(est, (tuple, dict)):
        return _from_tuple(est)
    if isinstance(est, list):
        return _from_svc_list(est)
    if hasattr(est, "dual_coef_") or hasattr(est, "fit"):
        return _from_svc(est)
    raise ValueError(
        "expected a fitted SVC, a list of fitted binary SVCs or a kernel expansion "
        f"(support_vectors, coef, intercept, kernel); got {type(est).__name__}"
    )


def ovo_to_ovr(D, n_classes):
    """One-vs-one decision values ``D`` (columns: pairs ``(i, j)``, ``i < j``, in libsvm's
    order) to one column per class, by scikit-learn's rule for ``SVC`` with
    ``decision_function_shape='ovr'``: the votes of each class (pair ``(i, j)`` votes for
    ``i`` when its value is ``>= 0``, else for ``j``) plus its summed confidence ``s``
    (``+D`` for ``i``, ``-D`` for ``j``) squashed to ``s / (3 (|s| + 1))``, which lies in
    ``(-1/3, 1/3)`` and so only orders classes with equal votes."""
    votes = np.zeros((len(D), n_classes))
    conf = np.zeros((len(D), n_classes))
    p = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            first = D[:, p] >= 0
            votes[first, i] += 1
            votes[~first, j] += 1
            conf[:, i] += D[:, p]
            conf[:, j] -= D[:, p]
            p += 1
    return votes + conf / (3 * (np.abs(conf) + 1))


def expansion_classes(exp, y=None):
    """The class labels of the machines of ``exp``: the SVC's (``y``, when given, must hold
    no other), else those of ``y`` (one machine: two classes; several, one-vs-rest: one
    class per machine), else ``[-1, 1]`` or ``0 .. n_machines - 1``."""
    M = len(exp.A)
    if exp.classes is not None:
        if y is not None and not np.all(np.isin(np.unique(y), exp.classes)):
            raise ValueError(
                f"y holds labels {np.setdiff1d(np.unique(y), exp.classes)} the SVC was not trained on"
            )
        return exp.classes
    if y is None:
        return np.array([-1, 1]) if M == 1 else np.arange(M)
    classes = np.unique(y)
    want = 2 if M == 1 else M
    if len(classes) != want:
        raise ValueError(
            f"the expansion has {M} machine(s) ({'binary' if M == 1 else 'one-vs-rest'}), "
            f"which needs {want} classes, but y has {len(classes)}"
        )
    return classes


def machine_labels(y, classes, mode, pairs):
    """Per machine of the layout ``mode`` (``'binary'``, ``'ovr'`` or ``'ovo'`` with its
    ``pairs``): (sample mask, +1/-1 labels of the masked samples)."""
    out = []
    if mode == "binary":
        out.append((np.ones(len(y), bool), np.where(y == classes[1], 1, -1)))
    elif mode == "ovr":
        for c in classes:
            out.append((np.ones(len(y), bool), np.where(y == c, 1, -1)))
    else:
        for i, j in pairs:
            mask = (y == classes[i]) | (y == classes[j])
            out.append((mask, np.where(y[mask] == classes[i], 1, -1)))
    return out


def predict_labels(D, classes, mode, pairs, *, ovr_shape=True, break_ties=False):
    """Class labels from raw decision values ``D`` (n, n_machines) by scikit-learn's rules
    for the machine layout ``mode``: binary, ``classes[1]`` where the value is positive;
    one-vs-rest, the argmax; one-vs-one, libsvm's vote (ties to the class listed first), or
    with ``break_ties`` and the ``'ovr'`` shape the argmax of :func:`ovo_to_ovr`."""
    if mode == "ovo" and break_ties and not ovr_shape:
        raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
    if mode == "ovo" and break_ties and ovr_shape:
        return classes[np.argmax(ovo_to_ovr(D, len(classes)), axis=1)]
    if mode == "binary":
        return classes[(D[:, 0] > 0).astype(int)]
    if mode == "ovr":
        return classes[np.argmax(D, axis=1)]
    votes = np.zeros((len(D), len(classes)), dtype=int)
    for p, (i, j) in enumerate(pairs):
        pos = D[:, p] > 0
        votes[pos, i] += 1
        votes[~pos, j] += 1
    return classes[np.argmax(votes, axis=1)]
