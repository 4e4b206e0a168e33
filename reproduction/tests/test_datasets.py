"""Tests for kpm_reproduce.datasets: loaders, the benchmarks.mat reader, bad input."""

import numpy as np
import pytest
import scipy.io

from kpm_reproduce import datasets as ds


# --------------------------------------------------------------------------- real data
def test_load_raetsch_banana_realization_1(data_dir):
    s = ds.load_raetsch("banana", 1, data_dir=data_dir)
    assert s.name == "banana" and s.realization == 1 and s.published is True
    assert s.X_train.shape == (400, 2) and s.X_test.shape == (4900, 2)
    assert s.X_train.dtype == np.float64
    assert set(np.unique(s.y_train)) == {-1, 1}
    assert s.y_train.shape == (400,) and s.y_test.shape == (4900,)


def test_published_flags_and_counts(data_dir):
    assert ds.n_realizations("heart", data_dir=data_dir) == 100
    assert ds.n_realizations("image", data_dir=data_dir) == 20
    assert ds.n_published("heart", data_dir=data_dir) == 10
    assert ds.n_published("diabetis", data_dir=data_dir) == 0
    allr = ds.load_raetsch("heart", None, data_dir=data_dir)
    assert len(allr) == 100
    assert [s.realization for s in allr[:3]] == [1, 2, 3]
    assert [s.published for s in allr[8:12]] == [True, True, False, False]
    # different realizations are different splits
    assert not np.array_equal(allr[0].X_train, allr[1].X_train)


def test_sizes_of_the_six_kpm_sets(data_dir):
    sizes = {"breast_cancer": (200, 77), "diabetis": (468, 300), "flare_solar": (666, 400),
             "german": (700, 300), "heart": (170, 100)}
    for name, (ntr, nte) in sizes.items():
        s = ds.load_raetsch(name, 2, data_dir=data_dir)
        assert (len(s.y_train), len(s.y_test)) == (ntr, nte)


def test_list_datasets(data_dir):
    names = ds.list_datasets(data_dir)
    assert names == sorted(ds.RAETSCH_DATASETS)


def test_load_usps(data_dir):
    Xtr, ytr, Xte, yte = ds.load_usps(data_dir)
    assert Xtr.shape == (7291, 256) and Xte.shape == (2007, 256)
    assert Xtr.dtype == np.float64 and 0 <= Xtr.min() and Xtr.max() <= 1
    assert np.array_equal(np.bincount(ytr), [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644])
    assert ytr[0] == 6


def test_env_var_resolution(data_dir, monkeypatch):
    monkeypatch.setenv("KPM_DATA", str(data_dir))
    assert ds.data_dir() == data_dir
    assert ds.load_raetsch("heart", 1).X_train.shape == (170, 13)


# --------------------------------------------------------------------------- bad input
def test_unknown_name_lists_known(data_dir):
    with pytest.raises(ValueError, match="unknown dataset 'bananas'.*breast_cancer"):
        ds.load_raetsch("bananas", 1, data_dir=data_dir)


@pytest.mark.parametrize("r", [0, 101, -1, 2.5, "1", True])
def test_realization_out_of_range(data_dir, r):
    with pytest.raises(ValueError, match="realization"):
        ds.load_raetsch("heart", r, data_dir=data_dir)


def test_missing_directory_says_where(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match="nowhere.*KPM_DATA"):
        ds.load_raetsch("banana", 1, data_dir=missing)
    monkeypatch.setenv("KPM_DATA", str(missing))
    with pytest.raises(FileNotFoundError, match="KPM_DATA"):
        ds.load_usps()


def test_missing_file_in_existing_dir(tmp_path):
    (tmp_path / "raetsch").mkdir()
    with pytest.raises(FileNotFoundError, match="heart.npz"):
        ds.load_raetsch("heart", 1, data_dir=tmp_path)


def test_truncated_npz(tmp_path, data_dir):
    (tmp_path / "raetsch").mkdir()
    blob = (data_dir / "raetsch" / "heart.npz").read_bytes()
    (tmp_path / "raetsch" / "heart.npz").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(ValueError, match="corrupted or truncated"):
        ds.load_raetsch("heart", 1, data_dir=tmp_path)


def test_corrupted_contents(tmp_path):
    (tmp_path / "raetsch").mkdir()
    x = np.zeros((5, 2))
    np.savez(tmp_path / "raetsch" / "heart.npz", x=x, t=np.array([1, -1, 1, 1, 3]),
             train=np.array([[0, 1]]), test=np.array([[2, 3]]), published=np.array([0]))
    with pytest.raises(ValueError, match="labels"):
        ds.load_raetsch("heart", 1, data_dir=tmp_path)
    np.savez(tmp_path / "raetsch" / "heart.npz", x=x, t=np.array([1, -1, 1, 1, -1]),
             train=np.array([[0, 9]]), test=np.array([[2, 3]]), published=np.array([0]))
    with pytest.raises(ValueError, match="out of range"):
        ds.load_raetsch("heart", 1, data_dir=tmp_path)
    np.savez(tmp_path / "raetsch" / "heart.npz", x=x, t=np.array([1, -1, 1, 1, -1]))
    with pytest.raises(ValueError, match="missing arrays"):
        ds.load_raetsch("heart", 1, data_dir=tmp_path)


def test_corrupted_usps(tmp_path):
    (tmp_path / "usps").mkdir()
    (tmp_path / "usps" / "usps.npz").write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(ValueError, match="USPS"):
        ds.load_usps(tmp_path)


# --------------------------------------------------------------------------- benchmarks.mat
def _write_mat(path, R=3, n=10, d=2, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    t = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)[:, None]
    train = np.stack([rng.permutation(n)[:6] + 1 for _ in range(R)]).astype(float)
    test = np.stack([np.setdiff1d(np.arange(n), tr - 1)[:4] + 1 for tr in train]).astype(float)
    scipy.io.savemat(path, {"heart": {"x": x, "t": t, "train": train, "test": test},
                            "banana": {"x": x[:, :1], "t": t, "train": train, "test": test}})
    return x, t.ravel(), train.astype(int) - 1, test.astype(int) - 1


def test_benchmarks_mat_reader(tmp_path):
    path = tmp_path / "benchmarks.mat"
    x, t, train, test = _write_mat(path)
    out = ds.read_benchmarks_mat(path)
    assert set(out) == {"heart", "banana"}
    x2, t2, tr2, te2 = ds.read_benchmarks_mat(path, "heart")
    np.testing.assert_array_equal(x2, x)
    np.testing.assert_array_equal(t2, t)
    np.testing.assert_array_equal(tr2, train)  # 1-based -> 0-based
    np.testing.assert_array_equal(te2, test)


def test_load_raetsch_falls_back_to_benchmarks_mat(tmp_path):
    (tmp_path / "raetsch").mkdir()
    x, t, train, test = _write_mat(tmp_path / "raetsch" / "benchmarks.mat")
    s = ds.load_raetsch("heart", 2, data_dir=tmp_path)
    np.testing.assert_array_equal(s.X_train, x[train[1]])
    np.testing.assert_array_equal(s.y_test, t[test[1]])
    assert s.published and ds.n_realizations("heart", tmp_path) == 3
    assert ds.list_datasets(tmp_path) == ["banana", "heart"]
    with pytest.raises(ValueError, match="no struct 'german'"):
        ds.load_raetsch("german", 1, data_dir=tmp_path)
    with pytest.raises(ValueError, match="1..3"):
        ds.load_raetsch("heart", 4, data_dir=tmp_path)


def test_benchmarks_mat_bad(tmp_path):
    p = tmp_path / "benchmarks.mat"
    _write_mat(p)
    blob = p.read_bytes()
    p.write_bytes(blob[: len(blob) // 3])
    with pytest.raises(ValueError, match="corrupted or truncated"):
        ds.read_benchmarks_mat(p)
    scipy.io.savemat(p, {"heart": {"x": np.zeros((3, 2)), "t": np.ones(3)}})
    with pytest.raises(ValueError, match="lacks fields"):
        ds.read_benchmarks_mat(p, "heart")
    scipy.io.savemat(p, {"heart": {"x": np.zeros((3, 2)), "t": np.ones(3),
                                   "train": np.array([[0.0, 1.0]]), "test": np.array([[3.0]])}})
    with pytest.raises(ValueError, match="out of range"):  # index 0 is invalid when 1-based
        ds.read_benchmarks_mat(p, "heart")


# --------------------------------------------------------------------------- generators
def test_parameters_through_the_validation_layer(data_dir, tmp_path):
    assert ds.load_raetsch("banana", realization=np.int64(2), data_dir=data_dir).realization == 2
    for bad in (True, 1.0, "1"):
        with pytest.raises(ValueError, match="realization must be an integer"):
            ds.load_raetsch("banana", realization=bad, data_dir=data_dir)
    with pytest.raises(ValueError, match="data_dir must be a path"):
        ds.data_dir(3)
    with pytest.raises(ValueError, match="path must be a file path"):
        ds.read_benchmarks_mat(None)
