"""Smoke test of the panel benchmark (benchmarks/bench_kpm_panel.py) at tiny sizes, one split."""

import json
import warnings

import numpy as np
import pytest


@pytest.mark.slow
def test_panel_report_holds_the_numbers_of_direct_fits(tmp_path, monkeypatch):
    import bench_kpm_panel as bench
    from kpm_reproduce.experiments import provenance

    from kpm import KernelProjectionMachine, median_sigma

    # the checkout as the run found it, then as its own saved record leaves it (--out docs/results)
    versions = iter(["kpm 0.1.0, commit 0123456789"])
    monkeypatch.setattr(provenance, "code_version", lambda: next(versions, "kpm 0.1.0, commit 0123456789 with uncommitted changes to src/kpm/x.py"))
    argv = ["--quick", "--sets", "wine", "classification", "--sizes", "150", "300", "450",
            "--kpm-max-n", "250", "--out", str(tmp_path)]
    bench.main(argv)
    result = json.loads((tmp_path / "kpm_panel.json").read_text())
    text = (tmp_path / "kpm_panel.md").read_text()
    assert "with kpm 0.1.0, commit 0123456789, on " in text.splitlines()[2]
    recs = result["records"]
    assert set(recs) == {f"{s}/median/0/{m}{t}" for s in ("wine", "classification n=150", "classification n=300",
                                                          "classification n=450") for m in ("kpm", "svc")
                         for t in ("", "/1thread")}
    assert [(r["label"], r["n_train"]) for r in result["rows"]] == [
        ("wine", 124), ("classification n=150", 105), ("classification n=300", 210),
        ("classification n=450", 315)]

    # the wine cell, recomputed: same split, same width, the same two estimators
    Xtr, Xte, ytr, yte, sigma = bench.prepare("wine", 0, "median")
    assert sigma == pytest.approx(median_sigma(Xtr), rel=1e-12)
    np.testing.assert_allclose(Xtr.mean(axis=0), 0, atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kpm = KernelProjectionMachine(sigma=sigma, random_state=0).fit(Xtr, ytr)
        svc = bench.make_estimator("svc", sigma).fit(Xtr, ytr)
    k, s = recs["wine/median/0/kpm"], recs["wine/median/0/svc"]
    assert (k["status"], s["status"]) == ("ok", "ok")
    assert k["sigma"] == s["sigma"] == pytest.approx(sigma, rel=1e-12)
    assert k["test_error"] == np.mean(kpm.predict(Xte) != yte)
    assert s["test_error"] == np.mean(svc.predict(Xte) != yte)
    assert (k["D"], k["C"], s["C"]) == (kpm.n_components_, kpm.C_, svc.best_params_["C"])
    assert svc.param_grid == {"C": bench.C_GRID} and svc.cv == 5
    assert svc.estimator.gamma == pytest.approx(1 / (2 * sigma**2))
    row = result["rows"][0]
    assert row["ratio"] == pytest.approx(k["wall_s"] / s["wall_s"])
    assert row["gap"] == pytest.approx(100 * (k["test_error"] - s["test_error"]))
    k1, s1 = recs["wine/median/0/kpm/1thread"], recs["wine/median/0/svc/1thread"]
    assert row["one_thread"]["ratio"] == pytest.approx(k1["wall_s"] / s1["wall_s"])
    assert (k1["test_error"], k1["D"], k1["C"]) == (k["test_error"], k["D"], k["C"])  # the same fit
    assert (f"| wine | 124 | 13 | 3 | median | {sigma:.4g} | 0 | {k['wall_s']:.2f} | {s['wall_s']:.2f} | "
            f"{row['ratio']:.2f} | {k1['wall_s']:.2f} | {s1['wall_s']:.2f} | {row['one_thread']['ratio']:.2f} | "
            f"{k['cpu_s'] / s['cpu_s']:.2f} | {100 * k['test_error']:.2f} | "
            f"{100 * s['test_error']:.2f} | {row['gap']:+.2f} | {kpm.n_components_} | {kpm.C_:.3g} | "
            f"{svc.best_params_['C']:.3g} |") in text

    # the KPM skipped above --kpm-max-n, the SVC not; the exponents are the slopes of the fits run
    big = recs["classification n=450/median/0/kpm"]
    assert big == {"status": "skipped", "n_train": 315, "reason": "n_train 315 > --kpm-max-n 250"}
    assert recs["classification n=450/median/0/svc"]["status"] == "ok"
    assert "| classification n=450 | 315 | 20 | 2 | median |" in text and "| skipped |" in text
    growth = result["summary"]["growth"]

    def slope(n, m):
        t = [recs[f"classification n={k}/median/0/{m}"]["wall_s"] for k in n]
        n_train = [recs[f"classification n={k}/median/0/{m}"]["n_train"] for k in n]
        return np.polyfit(np.log(n_train), np.log(t), 1)[0]

    assert growth["kpm"]["n_train"] == [105, 210] and growth["svc"]["n_train"] == [105, 210, 315]
    assert growth["kpm"]["exponent"] == pytest.approx(slope((150, 300), "kpm"))
    assert growth["svc"]["exponent"] == pytest.approx(slope((150, 300, 450), "svc"))
    assert growth["svc_same_sizes"]["exponent"] == pytest.approx(slope((150, 300), "svc"))
    assert (f"KPM n^{growth['kpm']['exponent']:.2f} over n_train = 105, 210; SVC grid "
            f"n^{growth['svc_same_sizes']['exponent']:.2f} over the same sizes, "
            f"n^{growth['svc']['exponent']:.2f} over n_train = 105, 210, 315") in text

    t210 = recs["classification n=300/median/0/kpm"]["wall_s"]
    guess = t210 * 1.5 ** growth["kpm"]["exponent"]
    assert result["summary"]["kpm_extrapolated"] == [pytest.approx(
        {"n_train": 315, "wall_s": guess, "svc_wall_s": recs["classification n=450/median/0/svc"]["wall_s"]})]
    assert f"The KPM at n_train = 315, not run: about {guess:.0f} s" in text

    # the summary: median and worst over the rows both methods ran, the skipped row named
    summ = result["summary"]
    ratios = [r["ratio"] for r in result["rows"][:3]]
    gaps = [r["gap"] for r in result["rows"][:3]]
    assert summ["rows_compared"] == 3 and summ["incomplete"] == ["classification n=450 (median)"]
    assert summ["median_ratio"] == pytest.approx(np.median(ratios))
    assert summ["worst_ratio"] == pytest.approx(max(ratios))
    assert summ["mean_gap"] == pytest.approx(np.mean(gaps))
    assert f"median {np.median(ratios):.2f} over the 3 rows both methods ran" in text
    assert f"- mean gap ≤ 0.3 point: {'met' if np.mean(gaps) <= 0.3 else '**not met**'}" in text
    assert text.startswith("# The default KPM against the SVC grid a user runs: the panel\n\n> Generated by "
                           "`python bench_kpm_panel.py --quick --sets wine classification")
    assert "Load (1-minute average" in text and "--kpm-max-n" in text

    # --resume keeps every finished fit and runs only what is missing (the skipped KPM again)
    again = bench.main([*argv, "--resume"])
    assert again["resumed"] == 14 and again["threads"] == result["threads"]
    assert again["wall_s"] > result["wall_s"]  # summed over the runs
    assert again["records"]["wine/median/0/kpm"] == k
    assert again["records"]["classification n=450/median/0/kpm"] == big


def test_tuned_widths_follow_the_standardisation(data_dir):
    import bench_kpm_panel as bench

    from kpm import median_sigma
    from kpm_reproduce.datasets import load_raetsch
    from kpm_reproduce.experiments import kpm13, kpm_tables

    raw = load_raetsch("splice", 2, data_dir=data_dir).X_train
    Xtr, _, _, _, sigma = bench.prepare("splice", 2, "likelihood", data_dir=data_dir)
    assert sigma == pytest.approx(kpm13.SIGMAS["splice"] * median_sigma(Xtr) / median_sigma(raw), rel=1e-12)
    assert sigma / kpm13.SIGMAS["splice"] == pytest.approx(0.914, abs=0.01)  # splice's raw codes
    *_, sigma = bench.prepare("banana", 1, "paper", data_dir=data_dir)
    assert sigma == pytest.approx(kpm_tables.SIGMAS["banana"], rel=0.01)  # already standardised
    assert bench.widths_of("image", bench.WIDTHS) == ["median", "likelihood"]
    assert bench.widths_of("german", bench.WIDTHS) == ["median", "paper", "likelihood"]
    assert bench.widths_of("wine", ["likelihood"]) == []
    with pytest.raises(ValueError, match="no paper width for 'image'"):
        bench.prepare("image", 1, "paper", data_dir=data_dir)


def test_plan_and_arguments(tmp_path):
    import bench_kpm_panel as bench

    rows = bench.plan(["digits", "classification", "image", "wine"], [100, 200], ["median", "likelihood"],
                      None, 5)
    assert rows == [("digits", None, "median", [0]), ("classification", 100, "median", [0]),
                    ("classification", 200, "median", [0]), ("image", None, "median", [1, 2]),
                    ("image", None, "likelihood", [1, 2]), ("wine", None, "median", [0, 1, 2, 3, 4])]
    for bad in (["--sets", "iris"], ["--splits", "0"], ["--sizes", "5"], ["--realizations", "0"],
                ["--sets", "wine", "--widths", "paper"]):
        with pytest.raises(SystemExit):
            bench.main([*bad, "--out", str(tmp_path)])
    assert not (tmp_path / "kpm_panel.json").exists()


@pytest.mark.slow
def test_a_fit_over_the_time_limit_is_stopped_and_the_worker_restarted():
    import bench_kpm_panel as bench

    worker = bench.FitWorker()
    try:
        job = {"name": "classification", "split": 0, "width": "median", "method": "kpm", "n": 1500}
        assert worker.run(job, time_limit=0.2) == {"status": "timeout", "wall_s": 0.2}
        rec = worker.run({"name": "wine", "split": 1, "width": "median", "method": "svc"})
        assert rec["status"] == "ok" and rec["n_train"] == 124
        # the worker starts at the default threads, whatever this process's environment says
        assert rec["threads"] == "default" and rec["blas_threads"] == worker.threads["openblas"]
        one = worker.run({"name": "wine", "split": 1, "width": "median", "method": "svc", "threads": "1"})
        assert one["threads"] == "1" and one["blas_threads"] == 1
    finally:
        worker.close()


@pytest.mark.slow
def test_repeats_keep_the_shortest_time_of_the_same_fit(tmp_path):
    """--repeats runs each fit again (the same model) and keeps its shortest time."""
    import bench_kpm_panel as bench

    bench.main(["--quick", "--sets", "wine", "--repeats", "3", "--out", str(tmp_path)])
    result = json.loads((tmp_path / "kpm_panel.json").read_text())
    assert result["config"]["repeats"] == 3
    for method in ("kpm", "svc"):
        rec = result["records"][f"wine/median/0/{method}"]
        assert len(rec["wall_runs"]) == 3 and rec["wall_s"] == min(rec["wall_runs"])
    single = bench.fit_one("wine", 0, "median", "kpm")
    again = result["records"]["wine/median/0/kpm"]
    assert (again["test_error"], again["D"], again["C"]) == (single["test_error"], single["D"], single["C"])
    assert single["wall_runs"] == [single["wall_s"]]
    assert "Each fit was run 3 times" in (tmp_path / "kpm_panel.md").read_text()


@pytest.mark.slow
def test_both_thread_columns_and_the_background_load_gone_after_the_run(tmp_path, monkeypatch):
    """A tiny run under one busy process: every fit at the default threads (the worker started
    without the thread variables, which this process sets to 1) and at one thread, both ratios
    in the report (the default threads' first), and the busy process gone after the run."""
    import os

    import bench_kpm_panel as bench

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    result = bench.main(["--quick", "--sets", "wine", "--repeats", "1", "--background-load", "1",
                         "--out", str(tmp_path)])
    recs = result["records"]
    assert sorted(recs) == ["wine/median/0/kpm", "wine/median/0/kpm/1thread", "wine/median/0/svc",
                            "wine/median/0/svc/1thread"]
    default = result["threads"]["openblas"]
    # OpenBLAS's default: the cores it may use (not the OPENBLAS_NUM_THREADS=1 of this process)
    assert default > 1 if len(os.sched_getaffinity(0)) > 1 else default == 1
    for m in ("kpm", "svc"):
        assert recs[f"wine/median/0/{m}"]["blas_threads"] == default
        assert recs[f"wine/median/0/{m}/1thread"]["blas_threads"] == 1
    assert len(result["background_pids"]) == 1
    for pid in result["background_pids"]:
        assert not os.path.exists(f"/proc/{pid}")  # stopped and reaped
    text = (tmp_path / "kpm_panel.md").read_text()
    assert ("| KPM s, default threads | SVC s, default threads | ratio, default threads | KPM s, 1 thread | "
            "SVC s, 1 thread | ratio, 1 thread |") in text
    assert "Background load: 1 process spinning on the cores" in text
    assert f"default BLAS threads {result['threads']}" in text
    assert text.index("### At the default threads") < text.index("### At one thread")


def test_a_row_of_several_splits_gives_its_gap_with_the_standard_error():
    import bench_kpm_panel as bench

    def rec(error, wall):
        return {"status": "ok", "wall_s": wall, "cpu_s": wall, "test_error": error, "C": 1.0, "D": 5,
                "sigma": 2.0, "n_train": 140, "n_features": 60, "n_classes": 2}

    kpm_errors, svc_errors = [0.15, 0.10, 0.20], [0.10, 0.10, 0.12]
    records = {}
    for sp, (e_k, e_s) in enumerate(zip(kpm_errors, svc_errors)):
        records[bench.record_key("wine", None, "median", sp, "kpm")] = rec(e_k, 0.1)
        records[bench.record_key("wine", None, "median", sp, "svc")] = rec(e_s, 0.5)
    records[bench.record_key("banana", None, "median", 1, "kpm")] = rec(0.10, 0.1)
    records[bench.record_key("banana", None, "median", 1, "svc")] = rec(0.11, 0.5)
    rows = bench.summarise_rows(records, [("wine", None, "median", [0, 1, 2]), ("banana", None, "median", [1])])
    per_split = [5.0, 0.0, 8.0]
    assert rows[0]["gap"] == pytest.approx(np.mean(per_split))
    assert rows[0]["gap_se"] == pytest.approx(np.std(per_split, ddof=1) / np.sqrt(3))
    assert "gap_se" not in rows[1]  # one split: no standard error
    table = "\n".join(bench.table_lines(rows))
    assert f"| {np.mean(per_split):+.2f} ± {np.std(per_split, ddof=1) / np.sqrt(3):.2f} |" in table
    assert f"| {-1.0:+.2f} |" in table
    summ = bench.summary(rows)
    assert summ["gaps_above_1"] == [f"wine (median) +4.33 ± {np.std(per_split, ddof=1) / np.sqrt(3):.2f}"]
    assert "1 of 2 rows more than 1 point behind (wine (median) +4.33 ± 2.33;" in "\n".join(bench.summary_lines(summ))


def test_a_row_of_many_splits_gives_their_range_and_the_median_d_and_c():
    """Past five splits a row gives its splits as a range and D and C as median [min–max];
    up to five, every value."""
    import bench_kpm_panel as bench

    Ds, Cs = [140, 38, 140, 94, 140, 140, 120], [1.0, 0.316, 1.0, 3.16, 1.0, 1.0, 1000.0]
    records = {}
    for sp, (D, C) in enumerate(zip(Ds, Cs)):
        for method, err in (("kpm", 0.1), ("svc", 0.1)):
            records[bench.record_key("wine", None, "median", sp, method)] = {
                "status": "ok", "wall_s": 0.1, "cpu_s": 0.1, "test_error": err, "C": C, "D": D,
                "sigma": 2.0, "n_train": 140, "n_features": 60, "n_classes": 2}
    splits = list(range(len(Ds)))
    rows = bench.summarise_rows(records, [("wine", None, "median", splits), ("wine", None, "median", splits[:3])])
    many, few = bench.table_lines(rows)[2:]
    assert "| 0–6 |" in many and "| 140 [38–140] | 1 [0.316–1e+03] | 1 [0.316–1e+03] |" in many
    assert "| 0, 1, 2 |" in few and "| 140, 38, 140 | 1, 0.316, 1 |" in few
    for sp, C in enumerate([0.316, 1.0, 0.316, 1.0, 0.316, 1.0]):  # six: the lower median, a grid value
        records[bench.record_key("wine", None, "median", sp, "kpm")]["C"] = C
    six = bench.table_lines(bench.summarise_rows(records, [("wine", None, "median", splits[:6])]))[2]
    assert "| 0–5 |" in six and "| 0.316 [0.316–1] |" in six  # not numpy's median 0.658
