"""Smoke test of benchmarks/landmarks_width_sweep.py (small inputs)."""

import numpy as np

from kpm.kernels import make_kernel
from kpm.spectral.landmarks import nystroem_trace_error, select_landmarks


def test_width_sweep_small(tmp_path):
    import landmarks_width_sweep as w

    res = w.main(["--datasets", "twonorm", "--m", "20", "--seeds", "0", "--n-train", "300", "--sample", "100",
                  "--out", str(tmp_path)])
    rows = res["twonorm"]
    assert [r[0] for r in rows] == ["kpm-13", "median", "2 x median"]
    # the median row recomputed by hand for one rule
    from kpm.datasets import make_twonorm

    X, _ = make_twonorm(300, random_state=0)
    T = np.sort(np.random.default_rng(123).choice(300, 100, replace=False))
    k = make_kernel("rbf", sigma=rows[1][1])
    S = select_landmarks(X, 20, "rpcholesky", random_state=0, kernel=k)
    assert rows[1][2]["rpcholesky"] == nystroem_trace_error(k, X, S, sample=T)
    # a wider kernel is approximated better by the same number of landmarks
    assert rows[2][2]["uniform"] < rows[1][2]["uniform"] < rows[0][2]["uniform"]
    assert "| twonorm | median |" in (tmp_path / "landmarks_width_sweep.md").read_text()
