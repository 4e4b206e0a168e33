import json

import numpy as np
import pytest
from typer.testing import CliRunner

from kpm_reproduce.cli import app
from kpm_reproduce.experiments.denoise import add_noise, usps_subset

runner = CliRunner()


def _ok(result):
    assert result.exit_code == 0, result.output + repr(result.exception)


def test_denoise_gaussians_smoke(tmp_path):
    res = runner.invoke(app, ["reproduce", "denoise-gaussians", "--sigmas", "0.05,0.4", "--components", "1,3",
                              "--seeds", "0", "--n-train", "12", "--n-test", "3", "--extra-kernel-c-factors", "2",
                              "--out", str(tmp_path), "--quiet"])
    _ok(res)
    rep = json.loads((tmp_path / "denoise_gaussians.json").read_text())
    ratio = np.array(rep["tables"][0]["ratio"])
    assert ratio.shape == (2, 2) and np.all(np.isfinite(ratio))
    assert ratio[0].min() > 1.0  # tiny clusters: kernel PCA far better than linear PCA
    assert len(rep["tables"]) == 2
    md = (tmp_path / "denoise_gaussians.md").read_text()
    assert "| 0.05 |" in md and (tmp_path / "denoise_gaussians.png").stat().st_size > 0


@pytest.mark.slow
def test_denoise_gaussians_resume_after_interrupt(tmp_path, monkeypatch):
    """Ctrl-C keeps the finished (factor, sigma, seed) tasks; --resume computes only the
    others, says so, and gives the numbers of an uninterrupted run; other settings are
    refused."""
    import kpm_reproduce.experiments.denoise as dn

    args = ["reproduce", "denoise-gaussians", "--sigmas", "0.05,0.4", "--components", "1,3",
            "--seeds", "0", "--n-train", "12", "--n-test", "3", "--extra-kernel-c-factors", "",
            "--quiet"]
    _ok(runner.invoke(app, args + ["--out", str(tmp_path / "whole")]))
    whole = json.loads((tmp_path / "whole" / "denoise_gaussians.json").read_text())

    task, calls = dn.gaussians_task, []

    def interrupted(**kw):
        calls.append(kw["sigma"])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return task(**kw)

    out = tmp_path / "parts"
    monkeypatch.setattr(dn, "gaussians_task", interrupted)
    res = runner.invoke(app, args + ["--out", str(out)])
    assert res.exit_code == 130 and "--resume" in res.output, res.output
    saved = json.loads((out / "runs" / "denoise_gaussians.json").read_text())
    assert not saved["complete"] and list(saved["results"]) == ["c_factor=20/sigma=0.05/seed=0"]
    assert not (out / "denoise_gaussians.json").exists()

    calls.clear()
    res = runner.invoke(app, args + ["--out", str(out), "--resume"])
    _ok(res)
    assert "1 of 2 tasks already done" in res.output and calls == [0.4]
    rep = json.loads((out / "denoise_gaussians.json").read_text())
    assert rep["tables"] == whole["tables"]

    calls.clear()  # everything done: a second resume recomputes nothing
    _ok(runner.invoke(app, args + ["--out", str(out), "--resume"]))
    assert calls == []
    res = runner.invoke(app, args[:-1] + ["--n-test", "4", "--quiet", "--out", str(out), "--resume"])
    assert res.exit_code == 2 and "different settings" in res.output, res.output


def test_denoise_2d_smoke(tmp_path):
    res = runner.invoke(app, ["reproduce", "denoise-2d", "--n-points", "40", "--kernel-c-grid", "0.2,1",
                              "--alpha-grid", "0.1", "--out", str(tmp_path), "--quiet"])
    _ok(res)
    rep = json.loads((tmp_path / "denoise_2d.json").read_text())
    for name in ("half circle", "square"):
        r = rep["results"][name]
        assert r["kernel_pca"]["curve_mse"] < r["noisy"]["curve_mse"]  # moved onto the curve
        assert r["kernel_pca"]["chamfer"] < r["linear_pca"]["chamfer"]
    assert (tmp_path / "denoise_2d.png").stat().st_size > 0


@pytest.mark.slow
def test_denoise_usps_smoke(tmp_path, data_dir):
    args = ["reproduce", "denoise-usps", "--n-train-per-digit", "8", "--n-test-per-digit", "2",
            "--kpca-components", "2,8,32", "--linear-components", "2,8",
            "--grid-components", "2,8", "--extra-kernel-c", "128", "--learned-alphas", "1",
            "--gradient-images", "2", "--perf-images", "10", "--perf-components", "8",
            "--data-dir", str(data_dir), "--out", str(tmp_path), "--quiet"]
    _ok(runner.invoke(app, args + ["--stages", "linear,kernel"]))
    md = (tmp_path / "denoise_usps.md").read_text()
    assert "PARTIAL RESULTS" in md and "perf, learned, gradient, widths" in md
    first = json.loads((tmp_path / "denoise_usps.json").read_text())
    res = runner.invoke(app, args + ["--resume"])
    _ok(res)
    assert "resuming" in res.output and "2 of 4 tasks already done" in res.output
    saved = json.loads((tmp_path / "runs" / "denoise_usps.json").read_text())
    assert saved["complete"] and set(saved["results"]) == {
        "linear", "kernel", "perf", "widths/c=128", "learned/q=32", "gradient/q=32"}
    assert "PARTIAL" not in (tmp_path / "denoise_usps.md").read_text()
    rep = json.loads((tmp_path / "denoise_usps.json").read_text())
    c_key = next(iter(first["kpca"]))  # the main width: finished stage kept, not recomputed
    assert rep["kpca"][c_key] == first["kpca"][c_key]
    assert len(rep["kpca"]) == 2  # main width + the extra width of the 'widths' stage
    assert rep["missing_stages"] == []
    assert set(rep["ratios"]) == {"gaussian", "speckle"}
    for r in rep["ratios"].values():
        assert r["optimal_ratio"] > 0 and np.isfinite(r["optimal_ratio"])
    methods = {r["method"] for r in rep["comparison"]}
    assert methods == {"fixed-point", "learned", "gradient"}
    for r in rep["comparison"]:
        if r["method"] == "gradient":
            assert r["max_abs_diff_to_fixed_point"] < 1e-3
    assert rep["performance"]["n_images"] == 10
    assert rep["performance"]["learned"]["mse"] > 0
    for f in ("denoise_usps.md", "denoise_usps_digits.png", "denoise_usps_mse.png"):
        assert (tmp_path / f).stat().st_size > 0


def test_usps_protocol_helpers(data_dir):
    X, y, T, yt = usps_subset(data_dir, 5, 2, seed=0)
    assert X.shape == (50, 256) and T.shape == (20, 256)
    assert np.all(np.bincount(y) == 5) and np.all(np.bincount(yt) == 2)
    assert X.min() >= -1 and X.max() <= 1 and X.min() < -0.5  # scaled to [-1, 1]
    rng = np.random.default_rng(0)
    S = add_noise(T, "speckle", 0.4, rng)
    changed = S != T
    assert 0.2 < changed.mean() < 0.45  # p=0.4, some pixels already black/white
    assert set(np.unique(S[changed])) <= {-1.0, 1.0}
    G = add_noise(T, "gaussian", 0.5, rng)
    assert abs(np.std(G - T) - 0.5) < 0.05
    with pytest.raises(ValueError, match="noise"):
        add_noise(T, "salt", 0.1, rng)


def test_bad_cli_values(tmp_path):
    res = runner.invoke(app, ["reproduce", "denoise-gaussians", "--sigmas", "0.1,-1", "--out", str(tmp_path)])
    assert res.exit_code != 0


def test_denoise_causes_smoke(tmp_path, data_dir):
    from kpm_reproduce.experiments.denoise import speckle

    res = runner.invoke(app, ["reproduce", "denoise-causes", "--seeds", "1", "--kernel-c-values", "128",
                              "--kpca-components", "4,16", "--n-train-per-digit", "12",
                              "--n-test-per-digit", "2", "--data-dir", str(data_dir),
                              "--out", str(tmp_path), "--quiet"])
    _ok(res)
    rep = json.loads((tmp_path / "denoise_causes.json").read_text())
    factors = [r["factor"] for r in rep["usps"]["rows"]]
    assert factors[0] == "baseline" and factors.count("MSE normalisation") == 5
    assert factors.count("speckle model") == 2 and factors[-2:] == ["subset", "width"]
    base = rep["usps"]["rows"][0]["ratios"]
    # normalisations by a constant factor leave the ratios unchanged
    for r in rep["usps"]["rows"][1:3]:
        for nz in ("gaussian", "speckle"):
            assert r["ratios"][nz]["optimal_ratio"] == pytest.approx(base[nz]["optimal_ratio"])
    sq = rep["square"]
    for g in sq["grid"]:
        assert g["chamfer"] == pytest.approx((g["curve_mse"] + g["coverage"]) / 2)
    assert "> Generated by" in (tmp_path / "denoise_causes.md").read_text()
    # the speckle models
    X = np.array([[-1.0, 1.0, 0.5] * 1000])
    rng = np.random.default_rng(0)
    inv = speckle(X, 0.4, "invert", rng)
    assert np.mean(inv != X) == pytest.approx(0.4, abs=0.03) and np.all((inv == X) | (inv == -X))
    assert np.all(np.isin(speckle(X, 0.4, "white", rng), [-1.0, 1.0, 0.5]))
    with pytest.raises(ValueError, match="speckle model"):
        speckle(X, 0.4, "pepper", rng)
