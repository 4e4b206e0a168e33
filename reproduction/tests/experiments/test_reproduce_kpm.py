"""Smoke tests of `kpm reproduce kpm-table2 | kpm-table1 | sfds-table` and `kpm datasets`.

Small settings (one data set, 1-2 realizations, a 4-value C grid, D <= 12) are passed
explicitly here; the commands' defaults are the papers' protocols.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kpm_reproduce.cli import app
from kpm_reproduce.experiments import kpm_tables as kt
from kpm_reproduce.experiments.runner import load_results

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "results"
SMALL = ["--datasets", "heart", "--C-grid", "1e-1:1e2:4", "--kpm-max-dim", "12", "--quiet"]


def _invoke(args):
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output + repr(res.exception)
    return res


@pytest.mark.usefixtures("data_dir")  # the settings count the realizations of each set
def test_defaults_are_the_papers_protocol():
    assert kt.C_GRID.size == 100 and kt.C_GRID[0] == pytest.approx(1e-2)
    assert kt.C_GRID[-1] == pytest.approx(1e3)
    st = kt.Settings(progress=False)
    assert st.cv == 5 and st.kpm_params == {} and st.datasets == kt.KPM_DATASETS
    assert st.kpm_max_dim == kt.KPM_MAX_DIM == 60
    assert st.realizations["banana"] == list(range(1, 101))
    assert kt.SIGMAS["heart"] == 7.7460


def test_kpm_datasets_command(data_dir):
    res = _invoke(["datasets", "--data-dir", str(data_dir)])
    assert "breast_cancer" in res.output and "4900" in res.output and "USPS" in res.output
    res = CliRunner().invoke(app, ["datasets", "--data-dir", "/nonexistent/kpm"])
    assert res.exit_code == 2 and "does not exist" in res.output


@pytest.fixture(scope="module")
def committed_tables():
    """The committed reports of Tables 1 and 2 and of the SFdS table (read once)."""
    return tuple(json.loads((RESULTS / f"{name}.json").read_text())
                 for name in ("kpm_table1", "kpm_table2", "sfds_table"))


@pytest.mark.parametrize("dataset", kt.KPM_DATASETS)
def test_the_papers_kpm_still_gives_the_committed_tables(dataset, data_dir, committed_tables):
    """The papers' KPM (``formulation='paper'``) on realizations 1 and 2 gives the D and test
    error the committed Tables 1 and 2 and the SFdS table report: D by CV, λ by CV, the
    slope heuristic, and Table 1's fixed D. A change of the library that moves the papers'
    numbers must come with regenerated reports."""
    table1, table2, sfds = committed_tables
    fixed_D = {c["dataset"]: int(c["param_median"]) for c in table1["cells"] if c["method"] == "KPM (fixed D)"}
    for r in (1, 2):
        now = kt.kpm_all_task(dataset, r, kt.SIGMAS[dataset], max_dim=kt.KPM_MAX_DIM, data_dir=data_dir)
        t2 = next(x for x in table2["per_realization"][dataset] if x["realization"] == r)
        sf = next(x for x in sfds["per_realization"][dataset] if x["realization"] == r)
        for rule, ref in (("cv", t2["kpm"]), ("penalty", sf["kpm_cv"]), ("slope", sf["kpm_slope"])):
            assert (now[rule]["D"], now[rule]["error"]) == (ref["D"], pytest.approx(ref["error"], abs=1e-9)), rule
        t1 = next(x for x in table1["per_realization"][dataset] if int(x["realization"]) == r)
        fixed = kt.kpm_fixed_task(dataset, r, kt.SIGMAS[dataset], fixed_D[dataset], data_dir=data_dir)
        assert fixed["D"] == t1["kpm"]["D"] and fixed["error"] == pytest.approx(t1["kpm"]["error"], abs=1e-3)


def test_table2_smoke_and_resume(tmp_path, data_dir):
    out = tmp_path / "res"
    args = ["reproduce", "kpm-table2", "-n", "1", "--out", str(out), "--data-dir",
            str(data_dir), "--no-figure", *SMALL]
    _invoke(args)
    data = json.loads((out / "kpm_table2.json").read_text())
    row = data["per_realization"]["heart"][0]
    assert row["realization"] == 1 and row["published"] is True
    # the command reports what its tasks compute on their own
    svm = kt.svm_cv_task("heart", 1, kt.SIGMAS["heart"], np.logspace(-1, 2, 4), data_dir=data_dir)
    kpm = kt.kpm_all_task("heart", 1, kt.SIGMAS["heart"], max_dim=12, data_dir=data_dir)["cv"]
    assert (row["svm"]["error"], row["svm"]["C"]) == (pytest.approx(svm["error"]), pytest.approx(svm["C"]))
    assert (row["kpm"]["D"], row["kpm"]["error"]) == (kpm["D"], pytest.approx(kpm["error"]))
    md = (out / "kpm_table2.md").read_text()
    assert "heart" in md and "17.59 ± 3.30" in md and "PARTIAL" in md  # 1 of 100 realizations
    assert data["complete"] is False
    # --resume: nothing is recomputed, the numbers are the same
    runs = sorted((out / "runs").glob("*.json"))
    stamps = {p: load_results(p)["results"] for p in runs}
    _invoke(args + ["--resume"])
    for p in runs:
        assert load_results(p)["results"] == stamps[p]


def test_sfds_smoke_reuses_svm_cache(tmp_path, data_dir):
    out = tmp_path / "res"
    common = ["-n", "1", "--out", str(out), "--data-dir", str(data_dir), "--no-figure", *SMALL]
    _invoke(["reproduce", "kpm-table2", *common])
    svm_file = next((out / "runs").glob("svm_cv-*.json"))
    before = load_results(svm_file)["results"]
    _invoke(["reproduce", "sfds-table", *common, "--resume"])
    assert load_results(svm_file)["results"] == before  # the SVM was not run twice
    data = json.loads((out / "sfds_table.json").read_text())
    row = data["per_realization"]["heart"][0]
    assert row["svm"] == json.loads((out / "kpm_table2.json").read_text())[
        "per_realization"]["heart"][0]["svm"]
    assert row["kpm_cv"]["lambda"] >= 0 and row["kpm_slope"]["lambda"] >= 0
    assert "KPM/slope" in (out / "sfds_table.md").read_text()


def test_table1_smoke(tmp_path, data_dir):
    out = tmp_path / "res"
    _invoke(["reproduce", "kpm-table1", "-n", "1", "--out", str(out), "--data-dir",
             str(data_dir), *SMALL])
    data = json.loads((out / "kpm_table1.json").read_text())
    fixed = data["fixed"]
    # with one realization the "median of the CV choices" is that realization's choice
    assert fixed["D"]["heart"] == fixed["cv_choices_first5"]["heart"]["D"][0]
    assert fixed["C"]["heart"] == fixed["cv_choices_first5"]["heart"]["C"][0]
    row = data["per_realization"]["heart"][0]
    assert row["kpm"]["D"] == fixed["D"]["heart"] and row["svm"]["C"] == fixed["C"]["heart"]


def test_report_only_needs_saved_results_and_tabulates_a_partial_run(tmp_path, data_dir):
    kw = dict(datasets=["heart"], n_realizations=2, C_grid=[1.0], data_dir=data_dir,
              progress=False, figure=False, kpm_max_dim=4)
    with pytest.raises(FileNotFoundError, match=r"nothing: no such folder; --report-only"):
        kt.run_table2(kt.Settings(out=tmp_path / "nothing", report_only=True, **kw))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"empty holds no results of `kpm reproduce "
                                                r"kpm-table2` with these settings \(no runs/svm_cv-"):
        kt.run_table2(kt.Settings(out=tmp_path / "empty", report_only=True, **kw))
    assert not list((tmp_path / "empty").iterdir())  # nothing written
    kt.run_table2(kt.Settings(out=tmp_path / "one", **{**kw, "n_realizations": 1}))
    rep = kt.run_table2(kt.Settings(out=tmp_path / "one", report_only=True, **kw))
    assert rep["complete"] is False and [c["n"] for c in rep["cells"]] == [1, 1]
    assert "PARTIAL" in (tmp_path / "one" / "kpm_table2.md").read_text()


def test_bad_input(tmp_path, data_dir):
    res = CliRunner().invoke(app, ["reproduce", "kpm-table2", "--datasets", "image", "--out",
                                   str(tmp_path), "--data-dir", str(data_dir)])
    assert res.exit_code == 2 and "not in the KPM tables" in res.output
    res = CliRunner().invoke(app, ["reproduce", "kpm-table2", "--datasets", "nope", "--out",
                                   str(tmp_path), "--data-dir", str(data_dir)])
    assert res.exit_code == 2 and "'nope' is not in the KPM tables" in res.output
    res = CliRunner().invoke(app, ["reproduce", "sfds-table", "--C-grid", "1:2", "--out",
                                   str(tmp_path)])
    assert res.exit_code != 0 and "LO:HI:N" in res.output
    res = CliRunner().invoke(app, ["reproduce", "kpm-table2", "--scheduler",
                                   "tcp://127.0.0.1:1", "--scheduler-timeout", "2", "--datasets", "heart", "-n", "1",
                                   "--out", str(tmp_path), "--data-dir", str(data_dir), "--quiet"])
    assert res.exit_code == 2 and "did not answer" in res.output


def test_localcluster_two_realizations_match_local(tmp_path, data_dir):
    from distributed import LocalCluster

    kw = dict(datasets=["heart"], n_realizations=2, C_grid=np.logspace(-1, 2, 4),
              kpm_max_dim=12, data_dir=data_dir, progress=False, figure=False)
    local = kt.run_table2(kt.Settings(out=tmp_path / "local", jobs=1, **kw))
    # threads in this process (processes=True works too but costs ~30 s of start-up on a
    # loaded 2-core machine); the work still goes through the TCP scheduler and 2 workers
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp://",
                      host="127.0.0.1", scheduler_port=0, dashboard_address=None) as cluster:
        dist = kt.run_table2(kt.Settings(out=tmp_path / "dask",
                                         scheduler=cluster.scheduler_address, **kw))
    strip = lambda rows: [{m: {k: v for k, v in r[m].items() if not k.startswith(("_", "time"))}
                           for m in ("kpm", "svm")} for r in rows]
    assert strip(local["per_realization"]["heart"]) == strip(dist["per_realization"]["heart"])
    workers = {r["svm"]["_worker"] for r in dist["per_realization"]["heart"]}
    assert all(":" in w for w in workers)


def test_combined_kpm_fit_equals_separate_fits(data_dir):
    """kpm_all_task derives the CV, λ-CV and slope choices from one fit: same as 3 fits."""
    from kpm_reproduce.datasets import load_raetsch
    from kpm import KernelProjectionMachine

    r = kt.kpm_all_task("heart", 2, kt.SIGMAS["heart"], max_dim=15, data_dir=data_dir)
    s = load_raetsch("heart", 2, data_dir=data_dir)
    for sel, key in (("cv", "cv"), ("slope", "slope"), ("penalty", "penalty")):
        m = KernelProjectionMachine(sigma=kt.SIGMAS["heart"], selection=sel, max_components=15,
                                    random_state=2, formulation="paper").fit(s.X_train, s.y_train)
        assert m.n_components_ == r[key]["D"], sel
        assert 100 * np.mean(m.predict(s.X_test) != s.y_test) == pytest.approx(r[key]["error"])
    assert len(r["test_error_path"]) == 15


def test_repeated_points_merged_with_weights_same_svm():
    """Merging repeated (x, y) pairs with sample_weight solves the same SVM problem."""
    from sklearn.svm import SVC

    from kpm.kernels import pairwise_kernel

    rng = np.random.default_rng(0)
    base = rng.standard_normal((30, 3))
    yb = np.where(base[:, 0] + 0.5 * rng.standard_normal(30) > 0, 1, -1)
    rep = rng.integers(1, 5, size=30)
    X, y = np.repeat(base, rep, axis=0), np.repeat(yb, rep)
    K = pairwise_kernel(X, sigma=1.5)
    idx = np.arange(len(y))
    rows, counts = kt._unique_rows(X, y, idx)
    assert rows.size == 30 and np.array_equal(np.sort(counts), np.sort(rep))
    Xt = rng.standard_normal((200, 3))
    for C in (0.1, 1.0, 30.0):
        merged, used = kt._fit_svc(K, X, y, idx, C)
        plain = SVC(C=C, kernel="precomputed").fit(K, y)
        f1 = merged.decision_function(pairwise_kernel(Xt, X[used], sigma=1.5))
        f2 = plain.decision_function(pairwise_kernel(Xt, X, sigma=1.5))
        np.testing.assert_allclose(f1, f2, atol=2e-2)
        assert np.mean(np.sign(f1) != np.sign(f2)) <= 0.01


def test_figure1_smoke(tmp_path, data_dir):
    st = kt.Settings(datasets=["flare_solar"], n_realizations=1, C_grid=np.logspace(-1, 1, 3),
                     kpm_max_dim=6, data_dir=data_dir, out=tmp_path, progress=False)
    path = kt.figure1(st)
    assert path.exists() and path.stat().st_size > 10_000


def test_fixed_D_read_off_the_path_equals_a_fixed_D_fit(data_dir):
    r = kt.kpm_all_task("heart", 3, kt.SIGMAS["heart"], max_dim=15, data_dir=data_dir)
    for D in (1, 4, 9):
        fixed = kt.kpm_fixed_task("heart", 3, kt.SIGMAS["heart"], D, data_dir=data_dir)
        assert fixed["error"] == pytest.approx(r["test_error_path"][D - 1], abs=1e-3)
