"""Synthetic data of known Bayes error: Breiman's twonorm and ringnorm (Breiman 1996,
"Bias, variance and arcing classifiers", Technical Report 460, UC Berkeley).

Both are two-class Gaussian problems whose Bayes error is known in closed form
(:func:`bayes_error`), so that a classifier's test error can be judged against the best
achievable one at any sample size.
"""

from __future__ import annotations

import math

import numpy as np

from kpm.validation import check_generator, check_int, check_option

__all__ = ["make_twonorm", "make_ringnorm", "bayes_error"]


def _check_n(n, n_features):
    return check_int(n, "n", minimum=1), check_int(n_features, "n_features", minimum=1)


def make_twonorm(n, random_state=None, n_features=20):
    """Breiman's twonorm: class +1 ~ N(a·1, I), class -1 ~ N(-a·1, I), a = 2/sqrt(d).

    Classes have probability 1/2 each (labels drawn i.i.d.).

    Parameters
    ----------
    n : int
        Number of samples.
    random_state : int, Generator or None
    n_features : int, default=20

    Returns
    -------
    X : ndarray (n, n_features), y : ndarray of int in {-1, +1}
    """
    n, n_features = _check_n(n, n_features)
    rng = check_generator(random_state)
    a = 2.0 / math.sqrt(n_features)
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int64)
    X = rng.standard_normal((n, n_features)) + a * y[:, None]
    return X, y


def make_ringnorm(n, random_state=None, n_features=20):
    """Breiman's ringnorm: class +1 ~ N(0, 4I), class -1 ~ N(a·1, I), a = 1/sqrt(d).

    Classes have probability 1/2 each (labels drawn i.i.d.).

    Returns
    -------
    X : ndarray (n, n_features), y : ndarray of int in {-1, +1}
    """
    n, n_features = _check_n(n, n_features)
    rng = check_generator(random_state)
    a = 1.0 / math.sqrt(n_features)
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int64)
    Z = rng.standard_normal((n, n_features))
    X = np.where(y[:, None] == 1, 2.0 * Z, Z + a)
    return X, y


def bayes_error(name, n_features=20):
    """Bayes error of Breiman's twonorm / ringnorm, computed exactly (equal priors).

    * twonorm: the optimal rule is sign(1ᵀx); error = Φ(-‖a·1‖) = Φ(-a·sqrt(d)) = Φ(-2).
    * ringnorm: the likelihood-ratio rule picks N(a·1, I) iff
      ``‖x-μ‖² - ‖x‖²/4 < d·ln 4``. Completing the square with c = (4/3)μ, μ = a·1,
      this is ``‖x - c‖² < T`` with T = (4/3)(d ln 4 + ‖μ‖²/3), ‖μ‖² = a²d. Under N(0, 4I),
      ‖x-c‖²/4 is non-central χ²_d with non-centrality ‖c‖²/4; under N(μ, I), ‖x-c‖² is
      non-central χ²_d with non-centrality ‖μ-c‖² = ‖μ‖²/9. The error is the average of the
      two misclassification probabilities, evaluated with ``scipy.stats.ncx2`` (exact up to
      the special-function accuracy; no Monte-Carlo).

    Parameters
    ----------
    name : {'twonorm', 'ringnorm'}
    n_features : int, default=20

    Returns
    -------
    float
        Bayes error in [0, 1].
    """
    from scipy.stats import ncx2, norm

    d = check_int(n_features, "n_features", minimum=1)
    check_option(name, "name", ("twonorm", "ringnorm"))
    if name == "twonorm":
        a = 2.0 / math.sqrt(d)
        return float(norm.cdf(-a * math.sqrt(d)))
    a = 1.0 / math.sqrt(d)  # ringnorm
    mu2 = a * a * d  # ‖μ‖²
    T = (4.0 / 3.0) * (d * math.log(4.0) + mu2 / 3.0)
    c2 = (16.0 / 9.0) * mu2  # ‖c‖²
    err_wide = ncx2.cdf(T / 4.0, d, c2 / 4.0)  # N(0,4I) classified as N(μ,I)
    err_narrow = ncx2.sf(T, d, mu2 / 9.0)  # N(μ,I) classified as N(0,4I)
    return float(0.5 * (err_wide + err_narrow))
