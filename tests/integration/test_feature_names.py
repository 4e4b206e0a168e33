"""Every transformer names its output columns: ``get_feature_names_out``, ``set_output``
(pandas) and the feature names of a pipeline's steps."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from kpm import (KernelPCADenoiser, KernelPCAL1, KernelProjection, LinearPCADenoiser, PCAL1,
                 RelevantDimension)

X, y = make_classification(60, n_features=4, n_informative=3, n_redundant=0, random_state=0)
COLS = [f"f{i}" for i in range(4)]


def _cases():
    return [
        (KernelProjection(n_components=3, sigma=2.0), [f"kernelprojection{i}" for i in range(3)]),
        (KernelProjection(n_components=3, sigma=2.0, residual=True),
         [f"kernelprojection{i}" for i in range(4)]),
        (PCAL1(2, random_state=0), ["pcal10", "pcal11"]),
        (KernelPCAL1(2, sigma=2.0, random_state=0), ["kernelpcal10", "kernelpcal11"]),
        (KernelPCADenoiser(n_components=3, random_state=0), COLS),
        (LinearPCADenoiser(n_components=2), COLS),
    ]


@pytest.mark.parametrize("est,names", _cases(), ids=lambda v: type(v).__name__ if not isinstance(v, list) else "")
def test_names_and_pandas_output(est, names):
    df = pd.DataFrame(X, columns=COLS)
    Z = est.set_output(transform="pandas").fit(df, y).transform(df)
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == names
    assert list(est.get_feature_names_out()) == names
    np.testing.assert_allclose(Z.to_numpy(), est.set_output(transform="default").transform(df))


def test_relevant_dimension_names():
    rd = RelevantDimension(sigma=2.0).fit(X, y)
    assert list(rd.get_feature_names_out()) == [f"relevantdimension{i}" for i in range(rd.n_components_)]
    Z = rd.set_output(transform="pandas").transform(X)
    assert Z.shape == (60, rd.n_components_) and Z.columns[0] == "relevantdimension0"


def test_pipeline_feature_names():
    pipe = make_pipeline(KernelProjection(n_components=5, sigma=2.0), PCAL1(2, random_state=0),
                         LogisticRegression()).fit(pd.DataFrame(X, columns=COLS), y)
    assert list(pipe[:-1].get_feature_names_out()) == ["pcal10", "pcal11"]
    assert list(pipe[:1].get_feature_names_out()) == [f"kernelprojection{i}" for i in range(5)]


def _every_estimator():
    """Every public estimator of kpm, small enough to fit in a second."""
    from kpm import (KernelPCRClassifier, KernelPCRRegressor, KernelProjectionMachine, NystroemKPM,
                     ReducedSetSVC)

    return [est for est, _ in _cases()] + [
        RelevantDimension(sigma=2.0),
        KernelPCRClassifier(sigma=2.0),
        KernelPCRRegressor(sigma=2.0),
        KernelProjectionMachine(sigma=2.0, random_state=0),
        NystroemKPM(n_landmarks=30, sigma=2.0, max_components=10, random_state=0),
        ReducedSetSVC(),
        ReducedSetSVC(n_vectors=25, random_state=0),
    ]


@pytest.mark.parametrize("est", _every_estimator(), ids=lambda e: type(e).__name__)
def test_a_dataframe_gives_no_feature_name_warning(est):
    """Fitted on a DataFrame, an estimator must not re-enter its own public validation with
    the ndarray it made of it (scikit-learn then warns that X has no feature names), and it
    takes the same DataFrame at prediction without a warning."""
    import warnings

    df = pd.DataFrame(X, columns=COLS)
    target = X[:, 0] + X[:, 1] if type(est).__name__ == "KernelPCRRegressor" else y
    with warnings.catch_warnings():
        # the warnings about feature names are errors; others (a model's own diagnostics,
        # e.g. kernel PCR naming a better kernel ridge on this linear target) are not the point
        warnings.filterwarnings("error", message=".*feature names")
        est.fit(df, target)
        for method in ("predict", "decision_function", "transform", "score"):
            if hasattr(est, method):
                getattr(est, method)(*((df, target) if method == "score" else (df,)))
    assert list(est.feature_names_in_) == COLS
