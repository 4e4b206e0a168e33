"""Tests for kpm.datasets: Breiman's twonorm and ringnorm generators and their Bayes errors."""

import numpy as np
import pytest

from kpm import datasets as ds


def test_generators_shapes_and_determinism():
    X, y = ds.make_twonorm(500, random_state=1)
    X2, y2 = ds.make_twonorm(500, random_state=1)
    assert X.shape == (500, 20) and np.array_equal(X, X2) and np.array_equal(y, y2)
    assert set(np.unique(y)) == {-1, 1}
    X, y = ds.make_ringnorm(300, random_state=0, n_features=5)
    assert X.shape == (300, 5)
    with pytest.raises(ValueError, match="n must be >= 1"):
        ds.make_twonorm(0)
    with pytest.raises(ValueError, match="name must be one of"):
        ds.bayes_error("waveform")


def test_twonorm_moments_and_bayes():
    X, y = ds.make_twonorm(40000, random_state=0)
    a = 2 / np.sqrt(20)
    np.testing.assert_allclose(X[y == 1].mean(0), a, atol=0.03)
    np.testing.assert_allclose(X[y == -1].mean(0), -a, atol=0.03)
    from scipy.stats import norm
    assert ds.bayes_error("twonorm") == pytest.approx(norm.cdf(-2.0), rel=1e-12)
    err = np.mean(np.sign(X.sum(1)) != y)  # the Bayes rule
    assert abs(err - ds.bayes_error("twonorm")) < 4 * np.sqrt(0.0228 / 40000)


def test_ringnorm_bayes_matches_monte_carlo():
    n, d = 100000, 20
    X, y = ds.make_ringnorm(n, random_state=3)
    assert X[y == 1].std() == pytest.approx(2.0, abs=0.02)
    mu = np.full(d, 1 / np.sqrt(d))
    # exact likelihood-ratio rule: choose N(mu, I) (label -1) when its density is larger
    llr = -0.5 * ((X - mu) ** 2).sum(1) + (X**2).sum(1) / 8 + d / 2 * np.log(4)
    err = np.mean(np.where(llr > 0, -1, 1) != y)
    be = ds.bayes_error("ringnorm")
    assert 0.01 < be < 0.02
    assert abs(err - be) < 4 * np.sqrt(be / n)


def test_parameters_through_the_validation_layer():
    with pytest.raises(ValueError, match="n_features must be >= 1"):
        ds.make_ringnorm(10, n_features=0)
    with pytest.raises(ValueError, match="random_state must be None"):
        ds.make_twonorm(10, random_state="seed")
    with pytest.raises(ValueError, match="n_features must be an integer"):
        ds.bayes_error("twonorm", n_features=2.0)
    X1, _ = ds.make_twonorm(5, random_state=np.random.default_rng(3))
    X2, _ = ds.make_twonorm(np.int64(5), random_state=3)
    np.testing.assert_array_equal(X1, X2)
