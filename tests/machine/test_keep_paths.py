"""What a fitted KPM keeps (``keep_paths``): without it, what prediction needs -- the kernel
expansion on the training points or the landmarks -- and the small diagnostics; with it, the
basis, the paths and the curves the path methods read. The fitted function is the same."""

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_moons
from sklearn.model_selection import GridSearchCV
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from kpm import KernelProjectionMachine, NystroemKPM


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(200, noise=0.3, random_state=0)
    Xt, _ = make_moons(1000, noise=0.3, random_state=1)
    return X, y, Xt


@pytest.mark.slow
def test_default_kpm_pickles_to_at_most_twice_a_tuned_svc():
    """The default KPM on 1257 standardised digits against the grid-searched SVC's best
    estimator (measured: 0.758 MB against 0.382 MB; 16.5 MB with the basis and the paths:
    the n x n eigenvectors and every fold's paths)."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    X, y = X[:1257], y[:1257]
    kpm = KernelProjectionMachine().fit(X, y)
    svc = GridSearchCV(SVC(), {"C": np.logspace(-2, 3, 11)}, cv=5).fit(X, y).best_estimator_
    kpm_bytes, svc_bytes = len(pickle.dumps(kpm)), len(pickle.dumps(svc))
    assert kpm_bytes <= 2 * svc_bytes, (kpm_bytes, svc_bytes)
    # what prediction needs is most of it: the training inputs and the dual coefficients
    assert kpm_bytes < kpm.X_fit_.nbytes + kpm.dual_coef_.nbytes + 20 * len(X) * 8


@pytest.mark.parametrize("kw", [{}, {"formulation": "paper", "max_components": 40}], ids=["default", "paper"])
def test_exact_predictions_are_the_same_pickled_and_with_the_paths(moons, kw):
    X, y, Xt = moons
    lean = KernelProjectionMachine(sigma=0.5, random_state=0, **kw).fit(X, y)
    full = KernelProjectionMachine(sigma=0.5, random_state=0, keep_paths=True, **kw).fit(X, y)
    copy = pickle.loads(pickle.dumps(lean))
    F = lean.decision_function(Xt)
    np.testing.assert_array_equal(copy.decision_function(Xt), F)
    np.testing.assert_array_equal(full.decision_function(Xt), F)
    np.testing.assert_array_equal(copy.predict(Xt), full.predict(Xt))
    np.testing.assert_array_equal(lean.selection_curve_["cv_error"], full.selection_curve_["cv_error"])
    # the path of the kept model gives the same function at the selected D
    P = full.predict_path(Xt)
    np.testing.assert_array_equal(P[:, list(full.path_dims_).index(full.n_components_)], lean.predict(Xt))
    assert len(pickle.dumps(lean)) < len(pickle.dumps(full)) / 4


def test_exact_path_methods_name_the_option(moons):
    X, y, Xt = moons
    m = KernelProjectionMachine(sigma=0.5, selection="penalty", max_components=20, formulation="paper",
                                random_state=0).fit(X, y)
    for call in (lambda: m.select_dim("slope"), m.extend_path, lambda: m.decision_function_path(Xt),
                 lambda: m.predict_path(Xt)):
        with pytest.raises(AttributeError, match=r"keep_paths=True"):
            call()
    for name in ("coef_path_", "intercept_path_", "path_dims_", "_subspace", "_model_kp", "_curves", "_Y"):
        assert not hasattr(m, name), name
    # the small diagnostics stay
    assert len(m.selection_curve_["D"]) == 20 and m.eigenvalues_.ndim == 1
    kept = KernelProjectionMachine(sigma=0.5, selection="penalty", max_components=20, formulation="paper",
                                   random_state=0, keep_paths=True).fit(X, y)
    assert kept.select_dim("penalty").n_components == m.n_components_
    # a refit without the option drops what the earlier fit kept
    kept.set_params(keep_paths=False).fit(X, y)
    with pytest.raises(AttributeError, match=r"keep_paths=True"):
        kept.select_dim("slope")


def test_nystroem_keeps_the_selected_eigenfunctions_only(moons):
    X, y, Xt = moons
    kw = dict(n_landmarks=60, sigma=0.5, max_components=30, random_state=0)
    lean = NystroemKPM(**kw).fit(X, y)
    full = NystroemKPM(**kw, keep_paths=True).fit(X, y)
    D = lean.n_components_
    assert D < 30 and lean.projection_.shape == (60, D) and full.projection_.shape == (60, 30)
    np.testing.assert_array_equal(lean.projection_, full.projection_[:, :D])
    copy = pickle.loads(pickle.dumps(lean))
    F = lean.decision_function(Xt)
    np.testing.assert_array_equal(copy.decision_function(Xt), F)
    np.testing.assert_array_equal(full.decision_function(Xt), F)
    # (the product with a narrower matrix: the same up to rounding)
    np.testing.assert_allclose(copy.transform_eigenfunctions(Xt), full.transform_eigenfunctions(Xt), rtol=1e-12,
                               atol=1e-12)
    with pytest.raises(ValueError, match="keep_paths=True"):
        lean.transform_eigenfunctions(Xt, D + 1)
    with pytest.raises(AttributeError, match="keep_paths=True"):
        lean.select_dim("cv")
    assert full.select_dim("cv").n_components == D
    size = len(pickle.dumps(lean))
    assert size < lean.landmarks_.nbytes + lean.dual_coef_.nbytes + lean.projection_.nbytes + 20_000, size
