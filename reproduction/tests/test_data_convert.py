"""kpm_reproduce.data.convert: from source files in their original formats back to the data
files, bit for bit. The source files are written from the data files (source_writers.py);
the IDA and Pima files come out byte for byte as the public ones (their registry hashes)."""

import numpy as np
import pytest

import source_writers as sw
from kpm_reproduce.data import SOURCES
from kpm_reproduce.data import convert as cv

#: Arrays that cannot round-trip bit for bit through written sources, and why: flare_solar's
#: and splice's x_std are sums over the rows in the public file's order, which the data files
#: do not keep (the writers put a pattern's copies together). The sums are reordered, so the
#: last bits differ; against the real files (same order) they are bit-identical.
REORDERED_SUMS = {("flare_solar", "x_std"), ("splice", "x_std")}

FAST = ("heart", "titanic", "breast_cancer", "diabetis", "thyroid", "flare_solar", "splice")
SLOW = ("banana", "german", "image", "ringnorm", "waveform", "twonorm", "usps")


def _round_trip(data_dir, tmp_path, name):
    files = sw.write_sources(data_dir, name, tmp_path)
    arrays = cv.convert(name, {role: tmp_path / sf.key for role, sf in files.items()})
    return files, arrays, sw.load(data_dir, name)


def _assert_same(name, arrays, ref):
    assert list(arrays) == list(ref), "arrays and their order"
    for key, want in ref.items():
        got = arrays[key]
        assert got.dtype == want.dtype and got.shape == want.shape, (name, key)
        if (name, key) in REORDERED_SUMS:
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
        else:
            assert got.tobytes() == want.tobytes(), f"{name}: {key} differs"


@pytest.mark.parametrize("name", [*FAST, *(pytest.param(n, marks=pytest.mark.slow)
                                           for n in SLOW)])
def test_round_trip_bit_for_bit(data_dir, tmp_path, name):
    files, arrays, ref = _round_trip(data_dir, tmp_path, name)
    _assert_same(name, arrays, ref)
    if name in sw.BYTE_IDENTICAL:   # the written files are the public ones
        assert {r: f.sha256 for r, f in files.items()} == \
               {r: f.sha256 for r, f in SOURCES[name].items()}


def test_written_back_data_file_loads_as_the_original(data_dir, tmp_path):
    from kpm_reproduce import datasets as ds

    _, arrays, _ = _round_trip(data_dir, tmp_path, "heart")
    cv.write_npz(tmp_path / "out" / "raetsch" / "heart.npz", arrays)
    a = ds.load_raetsch("heart", 37, data_dir=tmp_path / "out")
    b = ds.load_raetsch("heart", 37, data_dir=data_dir)
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.y_test, b.y_test)
    assert not a.published and ds.n_published("heart", tmp_path / "out") == 10
    assert not list((tmp_path / "out" / "raetsch").glob(".*"))   # no temporary file left


def test_both_summation_orders_are_needed(data_dir, tmp_path):
    # twonorm's scaling is the pairwise one, flare_solar's the sequential one: each gives the
    # other's data file wrong in the last bits
    _, arrays, ref = _round_trip(data_dir, tmp_path, "twonorm")
    raw = sw.raw_values("twonorm", ref["x"])
    assert np.array_equal(cv.standardise(raw, "pairwise"), ref["x"])
    assert not np.array_equal(cv.standardise(raw, "sequential"), ref["x"])
    assert np.array_equal(cv.standardise(np.asfortranarray(raw), "pairwise"), ref["x"])
    f = sw.load(data_dir, "flare_solar")
    rows = f["x"][np.repeat(np.arange(len(f["x"])), f["multiplicity"])]
    assert not np.array_equal(cv.standardise(rows, "pairwise"), cv.standardise(rows, "sequential"))


def test_standardise_and_index_form_small():
    F = np.array([[1.0, 10.0], [2.0, 10.0], [3.0, 40.0], [2.0, 20.0]])
    Z = cv.standardise(F, "sequential")
    np.testing.assert_allclose(Z.mean(0), 0, atol=1e-15)
    np.testing.assert_allclose(Z.std(0, ddof=1), 1)
    with pytest.raises(ValueError, match="summation"):
        cv.standardise(F, "kahan")
    with pytest.raises(ValueError, match="at least 2 rows"):
        cv.standardise(F[:1])
    x = np.array([[0.5], [1.0], [0.5], [1.0], [2.0]])
    t = np.array([1, 1, 1, -1, 1])
    first, inverse = cv.index_form(x, t)
    assert first.tolist() == [0, 1, 3, 4]          # (1.0, +1) and (1.0, -1) are two patterns
    assert inverse.tolist() == [0, 1, 0, 2, 3]


def test_seeded_splits_recipe():
    mult = np.array([2, 1, 3])
    train, test = cv.seeded_splits(mult, 4, 2, seed=7)
    rng = np.random.default_rng(7)
    pool = np.array([0, 0, 1, 2, 2, 2])
    for tr, te in zip(train, test):
        p = rng.permutation(6)
        assert tr.tolist() == pool[p[:4]].tolist() and te.tolist() == pool[p[4:]].tolist()
        assert np.bincount(np.r_[tr, te]).tolist() == [2, 1, 3]


# --------------------------------------------------------------------------- bad sources
def test_bad_ida_files_name_the_file(data_dir, tmp_path):
    files = sw.write_sources(data_dir, "titanic", tmp_path)
    paths = {role: tmp_path / sf.key for role, sf in files.items()}
    paths["test_labels_3"].write_text("   2.0000000e+00\n" * 2051)
    with pytest.raises(ValueError, match="titanic_test_labels_3.asc.*-1 or \\+1"):
        cv.convert("titanic", paths)
    paths["test_labels_3"].write_text("not numbers\n")
    with pytest.raises(ValueError, match="titanic_test_labels_3.asc: not a table of numbers"):
        cv.convert("titanic", paths)
    sw.write_sources(data_dir, "titanic", tmp_path)
    paths["train_data_2"].write_text(paths["train_data_1"].read_text().replace(
        "-9.2253555e-01", "-9.2253556e-01", 1))
    with pytest.raises(ValueError, match="another row multiset"):
        cv.convert("titanic", paths)


def test_bad_uci_files_name_the_file(data_dir, tmp_path):
    files = sw.write_sources(data_dir, "thyroid", tmp_path)
    paths = {role: tmp_path / sf.key for role, sf in files.items()}
    uci = paths["uci"].read_text()
    paths["uci"].write_text(uci.replace("\n1,", "\n4,", 1))
    with pytest.raises(ValueError, match="new-thyroid.data: the first column"):
        cv.convert("thyroid", paths)
    lines = uci.splitlines(keepends=True)    # two rows swap values: no longer affine row by row
    a, b = lines[1].split(","), lines[2].split(",")
    lines[1] = ",".join(a[:2] + b[2:3] + a[3:])
    lines[2] = ",".join(b[:2] + a[2:3] + b[3:])
    paths["uci"].write_text("".join(lines))
    with pytest.raises(ValueError, match="thyroid.mat: is not a per-feature affine image"):
        cv.convert("thyroid", paths)
    paths["raetsch_mat"].write_bytes(b"MATLAB 5.0 broken")
    paths["uci"].write_text(uci)
    with pytest.raises(ValueError, match="thyroid.mat: not a MAT file"):
        cv.convert("thyroid", paths)
    with pytest.raises(ValueError, match="unknown dataset 'thyroids'"):
        cv.convert("thyroids", paths)


def test_bad_flare_and_splice_files(tmp_path):
    p = tmp_path / "flare.data2"
    p.write_text(sw.FLARE_HEADER + "H A Q 1 3 1 1 1 1 1 0 0 0\n")
    with pytest.raises(ValueError, match="flare.data2: field 3"):
        cv.convert("flare_solar", {"uci": p})
    p.write_text(sw.FLARE_HEADER + "H A O 1 3 1 1 1 1 1 0 0\n")
    with pytest.raises(ValueError, match="rows of 13 fields"):
        cv.convert("flare_solar", {"uci": p})
    s = tmp_path / "splice.csv"
    s.write_text(sw.SPLICE_HEADER + "XX,    ID-1,                           " + "A" * 60 + "\n")
    with pytest.raises(ValueError, match="splice.csv: class must be EI, IE or N"):
        cv.convert("splice", {"uci": s})
    s.write_text(sw.SPLICE_HEADER + "EI,    ID-1,                           " + "A" * 59 + "\n")
    with pytest.raises(ValueError, match="60-letter sequence"):
        cv.convert("splice", {"uci": s})


def test_registry_pins_every_file():
    import re

    from kpm_reproduce.data import BASE_URL, DATASETS, source_files

    assert set(SOURCES) == set(DATASETS) and len(DATASETS) == 14
    keys = [sf.key for files in SOURCES.values() for sf in files.values()]
    assert len(keys) == len(set(keys)) == 8 * 40 + 7
    for files in SOURCES.values():
        for sf in files.values():
            assert re.fullmatch(r"[0-9a-f]{40}", sf.commit) and re.fullmatch(r"[0-9a-f]{64}",
                                                                              sf.sha256)
            assert sf.url() == f"https://raw.githubusercontent.com/{sf.repo}/{sf.commit}/{sf.path}"
            assert sf.url("http://mirror/x/") == f"http://mirror/x/{sf.key}"
    roles = {f"{p}_{k}_{r}" for p in ("train", "test") for k in ("data", "labels")
             for r in range(1, 11)}
    assert all(set(SOURCES[n]) == roles for n in sw.IDA_SETS)
    assert BASE_URL == "https://raw.githubusercontent.com/"
    assert source_files("thyroid") == SOURCES["thyroid"]
    with pytest.raises(ValueError, match="unknown dataset 'nope'"):
        source_files("nope")
