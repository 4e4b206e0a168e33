"""Smoke test of benchmarks/bench_projection_budget.py: a small n under a budget below its
kernel matrix (the matrix-free solver) and above it."""

import json

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel


def test_budget_run_certifies_the_eigenpairs_of_the_dense_solution(tmp_path):
    import bench_projection_budget as bench

    n = 600  # kernel matrix 2.7 MiB: over a 1 MiB budget
    result = bench.main(["--sizes", str(n), "--budget-gib", str(1 / 1024), "--components", "8",
                         "--out", str(tmp_path)])
    (rec,) = result["records"]
    assert rec["solver"] == "matrix-free"
    X = bench._data(n)
    K = rbf_kernel(X, gamma=1.0 / bench.N_FEATURES)
    H = np.eye(n) - 1.0 / n
    dense = np.linalg.eigvalsh(H @ K @ H)[::-1][:8]
    np.testing.assert_allclose(rec["eigenvalues"], dense, rtol=1e-9)
    assert rec["check_residual_max"] < 1e-9
    saved = json.loads((tmp_path / "projection_budget.json").read_text())
    assert saved["records"] == result["records"]
    row = [ln for ln in (tmp_path / "projection_budget.md").read_text().splitlines() if ln.startswith(f"| {n} |")]
    assert len(row) == 1 and "| matrix-free |" in row[0]


def test_independent_residuals_see_a_wrong_eigenpair():
    import bench_projection_budget as bench

    X = bench._data(200)
    K = rbf_kernel(X, gamma=1.0 / bench.N_FEATURES)
    H = np.eye(200) - 1.0 / 200
    w, U = np.linalg.eigh(H @ K @ H)
    w, U = w[::-1][:4], U[:, ::-1][:, :4]
    kernel = lambda A, B: rbf_kernel(A, B, gamma=1.0 / bench.N_FEATURES)  # noqa: E731
    good = bench.check_residuals(kernel, X, U, w, block=64)
    assert good.max() < 1e-12
    bad = U.copy()
    bad[:, 2] = U[:, 3]  # the third pair's vector replaced by the fourth's
    res = bench.check_residuals(kernel, X, bad, w, block=64)
    # K~ u_4 - lambda_3 u_4 = (lambda_4 - lambda_3) u_4
    np.testing.assert_allclose(res[2], abs(w[2] - w[3]) / w[0], rtol=1e-6)
    assert res[[0, 1, 3]].max() < 1e-12
