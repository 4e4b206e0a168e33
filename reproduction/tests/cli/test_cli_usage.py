"""The ``kpm`` command as a new user meets it: finished results are never replaced silently,
--report-only on an empty folder, -n beyond the data, one-line usage errors, warnings in
terms of the command's own options, the same inputs for both plot commands, tables that
are not wrapped in a pipe, no process left behind by a killed parallel run, and stored
results with impossible values computed again."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.main import get_command
from typer.testing import CliRunner

from kpm_reproduce.cli import app

TINY = ["--datasets", "heart", "-n", "1", "--C-grid", "1e-1:1e2:3", "--kpm-max-dim", "6",
        "--no-figure", "--quiet"]
KPM = str(Path(sys.executable).with_name("kpm"))


def _invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _lines(output):
    return [line for line in output.splitlines() if line.strip()]


def _reproduce_commands():
    group = get_command(app).commands["reproduce"]
    return sorted(group.commands.items())


# ------------------------------------------------ finished results, --resume, --overwrite
@pytest.mark.parametrize("name,cmd", _reproduce_commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_reproduce_command_has_resume_and_overwrite(name, cmd):
    opts = {o for p in cmd.params if p.param_type_name == "option" for o in p.opts}
    assert {"--resume", "--overwrite"} <= opts, name


def test_kpm13_refuses_to_replace_finished_results(tmp_path, data_dir):
    args = ["reproduce", "kpm-13", "--datasets", "heart", "-n", "1", "--C-grid", "1e-1:1e1:2",
            "--max-dim", "4", "--svm-realizations", "0", "--data-dir", data_dir, "--out",
            tmp_path, "--quiet"]
    assert _invoke(*args).exit_code == 0
    runs = next((tmp_path / "runs").glob("kpm13-*.json"))
    before = runs.read_text()
    res = _invoke(*args)
    assert res.exit_code == 2 and _lines(res.output) == [
        f"error: {runs} holds 1 finished task(s) of an earlier run; add --resume to reuse them "
        "(only the missing tasks are computed) or --overwrite to compute everything again and "
        "replace them"]
    assert runs.read_text() == before
    data = json.loads(before)
    data["results"]["kpm13/heart/r001"]["svm"]["error"] = 99.0  # recomputed or kept?
    runs.write_text(json.dumps(data))
    assert _invoke(*args, "--overwrite").exit_code == 0
    assert json.loads(runs.read_text())["results"]["kpm13/heart/r001"]["svm"]["error"] != 99.0


def test_denoise_refuses_to_replace_finished_results(tmp_path):
    args = ["reproduce", "denoise-2d", "--n-points", "20", "--kernel-c-grid", "0.5",
            "--alpha-grid", "1", "--out", tmp_path, "--quiet"]
    assert _invoke(*args).exit_code == 0
    res = _invoke(*args)
    assert res.exit_code == 2 and res.output.count("error:") == 1
    assert "denoise_2d.json holds" in res.output and "--overwrite" in res.output
    assert _invoke(*args, "--overwrite").exit_code == 0
    assert _invoke(*args, "--resume").exit_code == 0


@pytest.mark.parametrize("args", [
    ["reproduce", "kpm-table2", "--resume", "--overwrite"],
    ["reproduce", "kpm-13", "--report-only", "--overwrite"],
    ["reproduce", "scale", "--report-only", "--resume"],
    ["reproduce", "denoise-gaussians", "--resume", "--overwrite"],
])
def test_resume_overwrite_and_report_only_exclude_each_other(tmp_path, args):
    res = _invoke(*args, "--out", tmp_path / "out")
    assert res.exit_code == 2 and len(_lines(res.output)) == 1, res.output
    assert "exclude each other" in res.output and not (tmp_path / "out").exists()


def test_check_replace(tmp_path):
    from kpm_reproduce.experiments.runner import (ExistingResultsError, Task, check_replace,
                                                  run_tasks)

    path = tmp_path / "r.json"
    check_replace(path)  # no file: nothing to replace
    run_tasks([Task("a", dict, {"x": 1})], path, config={"v": 1}, progress=False)
    with pytest.raises(ExistingResultsError, match=r"r\.json holds 1 finished task\(s\) of an "
                                                   r"earlier run; add --resume"):
        check_replace(path, {"v": 1})
    with pytest.raises(ExistingResultsError, match="with other settings; add --overwrite"):
        check_replace(path, {"v": 2})
    check_replace(path, {"v": 1}, resume=True)
    check_replace(path, {"v": 2}, overwrite=True)
    with pytest.raises(ValueError, match="exclude each other"):
        check_replace(path, resume=True, overwrite=True)
    path.write_text("{ damaged")  # unknown content is not replaced silently either
    with pytest.raises(ExistingResultsError, match=r"not valid JSON.*add --overwrite"):
        check_replace(path)
    data = json.loads(json.dumps({"format": "kpm-runner/1", "config": {}, "results": {}}))
    path.write_text(json.dumps(data))  # a run that finished nothing: nothing to lose
    check_replace(path)


# ------------------------------------------------------------- --report-only, nothing there
@pytest.mark.parametrize("command", ["kpm-table2", "kpm-table1", "sfds-table", "kpm-13",
                                     "braun-table", "scale"])
@pytest.mark.parametrize("folder", ["mistyped", "empty"])
def test_report_only_without_results_is_one_error_naming_the_folder(tmp_path, data_dir,
                                                                   command, folder):
    out = tmp_path / folder
    if folder == "empty":
        out.mkdir()
    data = [] if command == "scale" else ["--data-dir", data_dir]
    res = _invoke("reproduce", command, "--report-only", "--out", out, *data)
    assert res.exit_code == 2, res.output
    assert len(_lines(res.output)) == 1 and res.output.startswith("error: "), res.output
    assert str(out) in res.output
    assert ("no such folder" if folder == "mistyped" and command not in ("braun-table", "scale")
            else "without --report-only first") in res.output
    assert not list(tmp_path.rglob("*.md"))  # no empty report


def test_report_only_names_the_results_of_other_settings(tmp_path, data_dir):
    args = ["reproduce", "kpm-table2", "--data-dir", data_dir, "--out", tmp_path, *TINY]
    assert _invoke(*args).exit_code == 0
    args[args.index("--C-grid") + 1] = "1e-1:1e2:4"  # not the settings of the saved run
    args[args.index("--kpm-max-dim") + 1] = "5"
    res = _invoke(*args, "--report-only")
    assert res.exit_code == 2 and len(_lines(res.output)) == 1
    saved = sorted(p.name for p in (tmp_path / "runs").glob("*.json"))
    assert "holds no results of `kpm reproduce kpm-table2` with these settings" in res.output
    assert all(name in res.output for name in saved) and "other settings" in res.output


# ------------------------------------------------------------ -n beyond the data's realizations
@pytest.mark.parametrize("command", ["kpm-table2", "kpm-table1", "sfds-table", "kpm-13"])
def test_n_beyond_the_realizations_is_a_warning_naming_the_cap(tmp_path, data_dir, command):
    res = _invoke("reproduce", command, "--datasets", "heart,breast_cancer", "-n", "1000",
                  "--report-only", "--out", tmp_path, "--data-dir", data_dir)
    lines = _lines(res.output)
    assert lines[0] == ("warning: -n 1000 is more than the number of realizations of heart "
                        "(100), breast_cancer (100); using all of them"), res.output
    assert res.exit_code == 2 and lines[1].startswith("error:")  # then: nothing to report


def test_n_within_the_realizations_says_nothing(data_dir):
    from kpm_reproduce.experiments import kpm_tables as kt

    said = []
    st = kt.Settings(datasets=["heart"], n_realizations=100, data_dir=data_dir, notify=said.append)
    assert said == [] and st.realizations["heart"] == list(range(1, 101))
    st = kt.Settings(datasets=["heart"], n_realizations=101, data_dir=data_dir, notify=said.append)
    assert len(said) == 1 and st.realizations["heart"] == list(range(1, 101))


def test_braun_table_warns_about_its_caps_too(tmp_path, data_dir):
    from kpm_reproduce.experiments.runner import atomic_write_json

    # a finished earlier run in --out: the command warns, then refuses to replace it
    atomic_write_json(tmp_path / "runs" / "braun_table.json",
                      {"format": "kpm-runner/1", "config": {}, "results": {"x": {"y": 1}}})
    res = _invoke("reproduce", "braun-table", "--datasets", "heart", "-n", "1000",
                  "--select-realizations", "200", "--out", tmp_path, "--data-dir", data_dir)
    lines = _lines(res.output)
    assert lines[:2] == [
        "warning: -n 1000 is more than the number of realizations of heart (100); using all of them",
        "warning: --select-realizations 200 is more than the number of realizations of heart "
        "(100); using all of them"], res.output
    assert res.exit_code == 2 and len(lines) == 3 and "--overwrite" in lines[2]


# ------------------------------------------------------------------ one line per usage error
@pytest.mark.parametrize("args", [
    ["reproduce", "kpm-table2", "-n", "0"],
    ["reproduce", "kpm-table2", "-n", "abc"],
    ["reproduce", "kpm-table2", "--jobs", "0"],
    ["reproduce", "kpm-table2", "--C-grid", "abc"],
    ["reproduce", "kpm-table2", "--no-such-option"],
    ["reproduce", "no-such-command"],
    ["no-such-command"],
    ["plot-selection"],
    ["plot-selection", "heart", "--cv-duplicates", "sometimes"],
    ["plot-relevance", "nothing.csv"],
    ["reproduce", "denoise-gaussians", "--sigmas", "a,b"],
])
def test_every_usage_error_is_one_error_line_and_exit_2(args):
    res = _invoke(*args)
    assert res.exit_code == 2, res.output
    lines = _lines(res.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    assert "╭" not in res.output and "Usage:" not in res.output and "Traceback" not in res.output


def test_usage_error_from_the_installed_command():
    """The console script: standard error holds the one line, standard output nothing."""
    p = subprocess.run([KPM, "reproduce", "kpm-table2", "-n", "0"], capture_output=True,
                       text=True, env={**os.environ, "COLUMNS": "60"})
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.splitlines() == [
        "error: invalid value for '--realizations' / '-n': Input should be greater than or "
        "equal to 1 (see 'kpm reproduce kpm-table2 --help')"]


# --------------------------------------------- plot commands: options named, same inputs
def test_duplicates_warning_names_the_commands_option(tmp_path, data_dir):
    args = ["plot-selection", "flare_solar", "--max-dim", "4", "--out", tmp_path,
            "--data-dir", data_dir]
    res = _invoke(*args)
    assert res.exit_code == 0, res.output
    warning = [line for line in _lines(res.output) if line.startswith("warning:") and "duplicated" in line]
    assert len(warning) == 1 and "--cv-duplicates group" in warning[0], res.output
    # the estimator's parameters are not named: the command's options are
    assert "cv_duplicates" not in res.output and "max_components" not in res.output
    res = _invoke(*args, "--cv-duplicates", "split")
    assert res.exit_code == 0 and "duplicated" not in res.output, res.output


def test_both_plot_commands_take_the_same_csv(tmp_path):
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    rows = np.r_[0:60, 400:460]
    csv = tmp_path / "cancer.csv"
    np.savetxt(csv, np.column_stack([y[rows], X[rows, :5]]), delimiter=",",
               header="label,a,b,c,d,e", comments="")
    for cmd in ("plot-selection", "plot-relevance"):
        res = _invoke(cmd, csv, "--label-column", "0", "--out", tmp_path)
        assert res.exit_code == 0, (cmd, res.output)
    assert (tmp_path / "kpm_selection_cancer.png").exists()
    assert (tmp_path / "relevance_cancer.png").exists()


def test_figure1_skipped_is_said(tmp_path, data_dir):
    args = [a for a in TINY if a != "--no-figure"]
    res = _invoke("reproduce", "kpm-table2", *args, "--data-dir", data_dir, "--out", tmp_path)
    assert res.exit_code == 0, res.output
    assert ("note: Figure 1 is drawn on flare_solar, which --datasets leaves out: not drawn "
            "(add flare_solar to --datasets to draw it, or pass --no-figure)") in res.output
    assert not list(tmp_path.glob("*.png"))


def test_tables_are_not_wrapped_when_stdout_is_not_a_terminal(monkeypatch, capsys):
    from rich.table import Table

    from kpm_reproduce.cli.common import console

    monkeypatch.delenv("COLUMNS", raising=False)
    table = Table(title="wide")
    for i in range(12):
        table.add_column(f"column number {i}")
    table.add_row(*[f"value {i}" for i in range(12)])
    con = console()
    assert not con.is_terminal
    con.print(table)
    lines = capsys.readouterr().out.splitlines()
    row = [line for line in lines if "value 0" in line]
    assert len(row) == 1 and "value 11" in row[0]  # one line, not wrapped at 80 columns


# ------------------------------------------------------------- stored results, impossible values
def _damage_values(tmp_path):
    svm = next((tmp_path / "runs").glob("svm_cv-*.json"))
    kall = next((tmp_path / "runs").glob("kpm_all-*.json"))
    s, k = json.loads(svm.read_text()), json.loads(kall.read_text())
    s["results"]["svm_cv/heart/r001"]["error"] = -5.0
    k["results"]["kpm_all/heart/r001"]["cv"]["D"] = 10 ** 9
    svm.write_text(json.dumps(s))
    kall.write_text(json.dumps(k))
    return svm, kall


def test_impossible_stored_values_are_computed_again_with_a_warning(tmp_path, data_dir):
    args = ["reproduce", "kpm-table2", "--data-dir", data_dir, "--out", tmp_path, *TINY]
    assert _invoke(*args).exit_code == 0
    good = json.loads((tmp_path / "kpm_table2.json").read_text())["per_realization"]["heart"][0]
    svm, kall = _damage_values(tmp_path)
    res = _invoke(*args, "--report-only")
    assert res.exit_code == 2 and len(_lines(res.output)) == 1
    assert "svm_cv/heart/r001" in res.output and "is -5.0, not in [0, 100]" in res.output
    res = _invoke(*args, "--resume")
    assert res.exit_code == 0, res.output
    warnings = [line for line in _lines(res.output) if line.startswith("warning:")]
    assert len(warnings) == 2, res.output
    assert "svm_cv/heart/r001 field 'error' is -5.0, not in [0, 100]" in warnings[0]
    assert "kpm_all/heart/r001 has cv D = 1000000000, beyond max_dim = 6" in warnings[1]
    again = json.loads((tmp_path / "kpm_table2.json").read_text())["per_realization"]["heart"][0]
    assert again["svm"]["error"] == good["svm"]["error"] and again["kpm"]["D"] == good["kpm"]["D"]


def test_kpm_all_path_of_the_wrong_length_is_impossible(data_dir):
    from kpm_reproduce.experiments.kpm_tables import SCHEMAS, SIGMAS, check_kpm_all, kpm_all_task
    from kpm_reproduce.experiments.runner import check_result, to_jsonable

    r = to_jsonable(kpm_all_task("heart", 1, SIGMAS["heart"], max_dim=5, data_dir=data_dir))
    assert check_result(r, SCHEMAS["kpm_all"], lambda x: check_kpm_all(x, 5)) is None
    short = {**r, "test_error_path": r["test_error_path"][:-1]}
    assert check_kpm_all(short, 5) == "has a test_error_path of 4 values, not max_dim = 5"
    assert check_kpm_all({**r, "max_dim": 7}, 5) == "has max_dim 7, beyond the bound 5 of its task"


def test_svm_cv_off_the_grid_is_impossible():
    from kpm_reproduce.experiments.kpm_tables import check_svm_cv

    r = {"cv_error": [10.0, 20.0, 30.0], "C_index": 1, "C": 1.0}
    assert check_svm_cv(r, [0.1, 1.0, 10.0]) is None
    assert check_svm_cv(r, [0.1, 2.0, 10.0]) == "has C = 1.0, not the grid's value 2.0 at C_index 1"
    assert check_svm_cv(r, [0.1, 1.0]) == "has 3 CV errors for a C grid of 2 values"


# ------------------------------------------------------------- SIGKILL of a parallel run
def _alive(proc):
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.slow
def test_sigkilled_parallel_reproduction_leaves_no_process_behind(tmp_path, data_dir):
    """``kpm reproduce kpm-table2 -j 2`` killed by SIGKILL: its loky workers (the busy one
    and the idle one), the loky and multiprocessing resource trackers, every descendant, is
    gone within a bounded time (without the watchdog they lived for minutes)."""
    import psutil

    cmd = [KPM, "reproduce", "kpm-table2", "--datasets", "heart", "-n", "1", "--C-grid",
           "1e-2:1e3:3000", "--kpm-max-dim", "6", "--no-figure", "--quiet", "-j", "2",
           "--data-dir", str(data_dir), "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    me = psutil.Process(proc.pid)
    seen = {}
    deadline = time.monotonic() + 120
    settled = None
    try:
        # wait for both workers (one task: one of them stays idle), then a second more
        while settled is None or time.monotonic() < settled:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, f"workers never started: {list(seen.values())}"
            for p in me.children(recursive=True):
                try:  # the latest command line: a child caught between fork and exec still
                    # shows its parent's (seen under load: a worker never recognised)
                    seen[p.pid] = (seen.get(p.pid, (p,))[0], " ".join(p.cmdline()))
                except psutil.Error:
                    pass
            if settled is None and sum("LokyProcess" in c for _, c in seen.values()) >= 2:
                settled = time.monotonic() + 1.0
            time.sleep(0.1)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert any("resource_tracker" in c for _, c in seen.values()), list(seen.values())
    deadline = time.monotonic() + 30
    while any(_alive(p) for p, _ in seen.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [c for p, c in seen.values() if _alive(p)]
    assert not left, left
