import json

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from kpm_reproduce.experiments.braun_table import WIDTH_FACTORS, krr_cv_errors, run_braun_table, svm_cv_errors
from kpm.kernels import make_kernel


def test_krr_cv_path_equals_refitting_kernel_ridge():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(60) > 0, 1.0, -1.0)
    K = make_kernel("rbf", sigma=1.5)(X)
    folds = list(StratifiedKFold(4, shuffle=True, random_state=1).split(X, y))
    alphas = [1e-3, 0.1, 1.0, 10.0]
    err = krr_cv_errors(K, y, folds, alphas)
    for j, a in enumerate(alphas):
        wrong = 0
        for tr, va in folds:
            m = KernelRidge(alpha=a, kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr])
            wrong += np.sum(np.where(m.predict(K[np.ix_(va, tr)]) > 0, 1, -1) != y[va])
        assert np.isclose(err[j], wrong / len(y))
    serr = svm_cv_errors(K, y, folds, [0.1, 10.0])
    wrong = sum(
        np.sum(SVC(kernel="precomputed", C=10.0).fit(K[np.ix_(tr, tr)], y[tr]).predict(K[np.ix_(va, tr)]) != y[va])
        for tr, va in folds
    )
    assert np.isclose(serr[1], wrong / len(y))


def test_smoke_one_realization(tmp_path, data_dir):
    s = run_braun_table(
        tmp_path, datasets=["heart", "titanic"], realizations=1, select_realizations=1,
        splice_encodings=False, data_dir=str(data_dir), progress=False,
    )
    assert set(s["rows"]) == {"heart", "titanic"}
    for name, row in s["rows"].items():
        assert row["n_realizations"] == 1
        assert row["sigma_factor"] in WIDTH_FACTORS
        for col in ("est_error", "kpcr", "kpcr_cv", "krr", "svm"):
            assert 0.0 <= row[col][0] <= 60.0
        assert 1 <= row["dim_median"] < 170
    md = (tmp_path / "braun_table.md").read_text()
    assert "| heart | 1/100 |" in md and "titanic" in md
    saved = json.loads((tmp_path / "braun_table.json").read_text())
    assert saved["rows"]["heart"]["kpcr"] == s["rows"]["heart"]["kpcr"]
    runs = json.loads((tmp_path / "runs" / "braun_table.json").read_text())
    assert "eval/heart/r001" in runs["results"] and "select/titanic/r001" in runs["results"]
    z = s["rows"]["titanic"]["null_space_noise"]
    assert z["n_realizations"] == 1 and 1 <= z["dim_median"] <= z["rank_median"] <= 150
    assert "Sensitivity" in md
    o = s["rows"]["heart"]["cv_one_se"]
    assert o["n_realizations"] == 1 and 1 <= o["dim_cv_median"] <= s["rows"]["heart"]["dim_cv_median"]
    # resuming recomputes nothing and gives the same table
    before = runs["results"]["eval/heart/r001"]["_elapsed_s"]
    s2 = run_braun_table(
        tmp_path, datasets=["heart", "titanic"], realizations=1, select_realizations=1,
        splice_encodings=False, data_dir=str(data_dir), progress=False, resume=True,
    )
    runs2 = json.loads((tmp_path / "runs" / "braun_table.json").read_text())
    assert runs2["results"]["eval/heart/r001"]["_elapsed_s"] == before
    assert s2["rows"] == s["rows"]


def test_splice_encodings_on_a_subset(data_dir):
    from kpm_reproduce.datasets import load_raetsch
    from kpm_reproduce.experiments.braun_table import _encode, _splice_grams, _splice_strings
    from kpm.relevance.pcr import KernelPCRClassifier

    sp = load_raetsch("splice", 1, data_dir=str(data_dir))
    Str, Ste = _splice_strings(sp)
    assert np.array_equal(_encode("raetsch", Str), sp.X_train)
    naive = _encode("naive", Str[:3])
    assert set(np.unique(naive)) <= {0.0, 1.0, 2.0, 3.0}
    assert naive[0, 0] == "ACGT".index(Str[0][0])
    assert _encode("onehot", Str[:3]).shape == (3, 240)
    ytr, yte = sp.y_train[:300], sp.y_test[:200]
    errs = {}
    for enc, p in (("wd", 5), ("onehot", 4.0)):
        Ktr, Kte = _splice_grams(enc, p, Str[:300], Ste[:200])
        c = KernelPCRClassifier(kernel="precomputed").fit(Ktr, ytr)
        errs[enc] = np.mean(c.predict(Kte) != yte)
    assert errs["wd"] < 0.25 and errs["onehot"] < 0.3


@pytest.mark.slow
def test_cli_smoke(tmp_path, data_dir):
    from typer.testing import CliRunner

    from kpm_reproduce.cli import app

    res = CliRunner().invoke(
        app,
        ["reproduce", "braun-table", "--datasets", "thyroid", "--realizations", "1",
         "--select-realizations", "1", "--out", str(tmp_path), "--data-dir", str(data_dir), "--quiet"],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "braun_table.md").exists()
    res = CliRunner().invoke(
        app, ["plot-relevance", "heart", "--sigma", "5", "--out", str(tmp_path), "--data-dir", str(data_dir)]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "relevance_heart_r1.png").stat().st_size > 0
    res = CliRunner().invoke(app, ["reproduce", "braun-table", "--datasets", "nope", "--out", str(tmp_path)])
    assert res.exit_code != 0


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown datasets"):
        run_braun_table(tmp_path, datasets=["nope"], progress=False)
    with pytest.raises(ValueError, match="realizations"):
        run_braun_table(tmp_path, datasets=["heart"], realizations=0, progress=False)


def test_splice_spectra_figure(tmp_path, data_dir):
    from kpm_reproduce.experiments.braun_table import splice_spectra_figure

    results = {
        "splice-select/onehot/r001": {"params": [3.0, 5.0], "nll": [0.1, -0.2], "dim": [40, 15],
                                      "sigma_median": 5.0},
    }
    path = splice_spectra_figure(tmp_path, data_dir=str(data_dir), results=results)
    assert path.exists() and path.stat().st_size > 0
    with pytest.raises(ValueError, match="no splice"):
        splice_spectra_figure(tmp_path, data_dir=str(data_dir), results={})
