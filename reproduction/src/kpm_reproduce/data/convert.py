"""Convert the public source files into the files the loaders read.

Each converter takes ``{role: local path}`` (the roles of
:data:`kpm_reproduce.data.registry.SOURCES`) and returns ``{array name: array}`` in the
order the file stores them; :func:`write_npz` writes them. The results equal, array for
array and bit for bit, the data files of the kpm project (the ``KPM_DATA`` folder): that is
what the tests check.

Index form (``raetsch/NAME.npz``)
---------------------------------
``x`` (float64, the unique (x, t) patterns in order of first appearance), ``t`` (int8,
±1), ``train`` / ``test`` (int32, one row of 0-based indices into ``x`` per realization; a
pattern that occurs m times in the data set occurs m times in every realization),
``realization_ids`` (int32, 1..R), ``published`` (int8: 1 for a published IDA split),
``origin`` (str, one line per realization), ``multiplicity`` (int32, occurrences of each
pattern in the whole set), ``seed`` (int64), and extra arrays for some sets.

Realizations
------------
Realizations 1-10 of banana, breast_cancer, german, heart, image, ringnorm, titanic and
waveform are the published IDA splits (Rätsch, Onoda & Müller 2001), read from their
``.asc`` files. Every other realization is a seeded random split of the row multiset::

    pool = np.repeat(np.arange(n_unique), multiplicity)
    rng = np.random.default_rng(seed)
    for each realization that is not published, in order:
        p = rng.permutation(len(pool)); train = pool[p[:n_train]]; test = pool[p[n_train:]]

with ``seed`` = 101, 102, ... for the 13 sets in alphabetical order.

The five reconstructed sets
---------------------------
No published copy of diabetis, flare_solar, splice, thyroid or twonorm was found; they are
rebuilt from their originals, and none of their splits is a published one:

* diabetis: UCI Pima Indians Diabetes; t = +1 for "tested positive"; each feature
  standardised over all 768 rows (ddof=1). Label polarity and scaling are not verified
  against Rätsch's file.
* thyroid: UCI new-thyroid; t = +1 for hyper- or hypothyroid, -1 for normal. ``x`` holds
  Rätsch's scaled values, taken from a copy of his file (Devn913/AGMR_entropy_sparse,
  ``thyroid.mat``, an exact affine image of the UCI data per feature) and matched row by
  row to the UCI file; ``x_uci_standardised`` is the UCI data standardised over all rows.
* flare_solar: UCI Solar Flare (second file); target: spot distribution ("O" open = -1;
  X, I, C = +1); features: attributes 4-9 and the three flare counts as raw integer codes.
  This reproduces the (x, t) multiset of the Rätsch copy in Devn913/AGMR_entropy_sparse
  exactly (144 unique patterns). ``x_std``: the same standardised over all 1066 rows.
* splice: UCI splice junctions without the 15 sequences holding D, N, S or R;
  t = +1 for a junction (EI or IE); one feature per position with A=1, G=2, C=3, T=4 (the
  map that reproduces the Rätsch copy's multiset). Extra arrays: ``x_std``, ``seq`` (the
  nucleotide string), ``uci_class`` and ``uci_id`` (from each pattern's first occurrence).
* twonorm: the 7400-case twonorm sample (Breiman 1996) of Devn913/AGMR_entropy_sparse,
  each feature standardised over all rows.

Standardisation means ``(F - mean) / std`` with ``std`` of ddof=1, over the rows in file order.
The sums behind mean and std were taken in two ways, which differ in the last bits: pairwise
along each column for twonorm (as NumPy does for the column-major array of a MATLAB file), one
row after the other for the four sets read from text files. :func:`standardise` does either,
so the results are bit-identical to the data files.
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["CONVERTERS", "SEEDS", "N_REALIZATIONS", "index_form", "seeded_splits",
           "standardise", "convert", "write_npz"]

_RAETSCH = ("banana", "breast_cancer", "diabetis", "flare_solar", "german", "heart", "image",
            "ringnorm", "splice", "thyroid", "titanic", "twonorm", "waveform")

#: The seed of each set's seeded splits: 101, 102, ... in alphabetical order.
SEEDS = {name: 101 + i for i, name in enumerate(_RAETSCH)}

#: Realizations per set (Rätsch's counts).
N_REALIZATIONS = {name: 20 if name in ("image", "splice") else 100 for name in _RAETSCH}

#: Training-set sizes of the reconstructed sets (Rätsch's).
_N_TRAIN = {"diabetis": 468, "flare_solar": 666, "splice": 1000, "thyroid": 140,
            "twonorm": 400}

_N_PUBLISHED = 10


class SourceFormatError(ValueError):
    """A source file does not hold what its converter expects."""


def _fail(path, msg):
    return SourceFormatError(f"{path}: {msg}")


# --------------------------------------------------------------------------- building blocks
def standardise(F, summation="pairwise"):
    """Each column of ``F`` minus its mean, divided by its standard deviation (ddof=1).

    Parameters
    ----------
    F : array of shape (n, d)
    summation : {"pairwise", "sequential"}
        How the two sums over the rows (mean, then squared deviations) are taken; the
        results differ in the last bits. ``"pairwise"``: NumPy's pairwise summation along
        each column held contiguously (as ``F.mean(0)`` and ``F.std(0, ddof=1)`` do for a
        column-major array, such as a MATLAB file's). ``"sequential"``: one row after the
        other, in order.
    """
    F = np.asarray(F, dtype=np.float64)
    if F.ndim != 2 or F.shape[0] < 2:
        raise ValueError(f"standardise needs a 2-D array with at least 2 rows, got {F.shape}")
    n = F.shape[0]
    if summation == "pairwise":
        cols = np.ascontiguousarray(F.T)              # each column contiguous
        mean = cols.sum(axis=1) / n
        sq = np.ascontiguousarray((cols - mean[:, None]) ** 2).sum(axis=1)
    elif summation == "sequential":
        mean = np.cumsum(F, axis=0)[-1] / n
        sq = np.cumsum((F - mean) ** 2, axis=0)[-1]
    else:
        raise ValueError(f"summation must be 'pairwise' or 'sequential', got {summation!r}")
    return (F - mean) / np.sqrt(sq / (n - 1))


def index_form(x, t):
    """Unique (x, t) rows in order of first appearance.

    Returns
    -------
    first : int array, the row of each pattern's first occurrence
    inverse : int array, the pattern of every row
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    t = np.asarray(t, dtype=np.int8).reshape(-1, 1)
    rows = np.ascontiguousarray(np.hstack([x.view(np.uint8).reshape(len(x), -1),
                                           t.view(np.uint8)]))
    keys = rows.view(np.dtype((np.void, rows.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first)                       # patterns by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.ravel()]


def seeded_splits(multiplicity, n_train, n_splits, seed):
    """``n_splits`` random splits of the row multiset (see the module docstring)."""
    pool = np.repeat(np.arange(len(multiplicity)), multiplicity)
    rng = np.random.default_rng(seed)
    train, test = [], []
    for _ in range(n_splits):
        p = rng.permutation(len(pool))
        train.append(pool[p[:n_train]])
        test.append(pool[p[n_train:]])
    return train, test


def _assemble(name, x, t, multiplicity, published_train, published_test, n_train, extra=()):
    """The index-form arrays: the published realizations first, then the seeded ones."""
    R, seed, k = N_REALIZATIONS[name], SEEDS[name], len(published_train)
    train, test = seeded_splits(multiplicity, n_train, R - k, seed)
    origin = [f"IDA published realization {r}" for r in range(1, k + 1)]
    origin += [f"reconstructed: numpy default_rng({seed}), permutation #{j} of the row multiset"
               for j in range(1, R - k + 1)]
    arrays = {
        "x": np.asarray(x, dtype=np.float64),
        "t": np.asarray(t, dtype=np.int8),
        "train": np.array(list(published_train) + train, dtype=np.int32),
        "test": np.array(list(published_test) + test, dtype=np.int32),
        "realization_ids": np.arange(1, R + 1, dtype=np.int32),
        "published": np.array([1] * k + [0] * (R - k), dtype=np.int8),
        "origin": np.array(origin),
        "multiplicity": np.asarray(multiplicity, dtype=np.int32),
        "seed": np.array(seed, dtype=np.int64),
    }
    arrays.update(extra)
    return arrays


def _from_rows(name, x_rows, t_rows, extra_rows=()):
    """Index form of a set given as one row per case (the reconstructed sets)."""
    first, inverse = index_form(x_rows, t_rows)
    mult = np.bincount(inverse)
    extra = {key: np.asarray(val)[first] for key, val in extra_rows}
    # strings: as wide as the longest kept one (as if built from the kept rows alone)
    extra = {key: np.array(val.tolist()) if val.dtype.kind == "U" else val
             for key, val in extra.items()}
    return _assemble(name, np.asarray(x_rows)[first], np.asarray(t_rows)[first], mult, [], [],
                     _N_TRAIN[name], extra)


# --------------------------------------------------------------------------- IDA .asc files
def _read_asc(path, columns=None):
    try:
        a = np.loadtxt(path, ndmin=2)
    except ValueError as exc:
        raise _fail(path, f"not a table of numbers ({exc})") from None
    if columns is not None and a.shape[1] != columns:
        raise _fail(path, f"expected {columns} column(s), got {a.shape[1]}")
    return a


def convert_ida(name, paths):
    """A set with published realizations: ``paths`` has the 40 roles
    ``{train,test}_{data,labels}_R`` (R = 1..10)."""
    xs, ts, parts = [], [], []
    for r in range(1, _N_PUBLISHED + 1):
        for part in ("train", "test"):
            X = _read_asc(paths[f"{part}_data_{r}"])
            T = _read_asc(paths[f"{part}_labels_{r}"], columns=1).ravel()
            if len(T) != len(X) or not np.all(np.isin(T, (-1.0, 1.0))):
                raise _fail(paths[f"{part}_labels_{r}"],
                            f"expected {len(X)} labels of -1 or +1")
            xs.append(X)
            ts.append(T)
            parts.append(len(X))
    X, T = np.vstack(xs), np.concatenate(ts).astype(np.int8)
    first, inverse = index_form(X, T)
    bounds = np.cumsum([0] + parts)
    idx = [inverse[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    train, test = idx[0::2], idx[1::2]
    mult = np.bincount(np.r_[train[0], test[0]], minlength=len(first))
    for r in range(_N_PUBLISHED):
        if len(train[r]) != len(train[0]) or not np.array_equal(
                np.bincount(np.r_[train[r], test[r]], minlength=len(first)), mult):
            raise _fail(paths[f"train_data_{r + 1}"],
                        "realization holds another row multiset than realization 1")
    return _assemble(name, X[first], T[first], mult, train, test, len(train[0]))


# --------------------------------------------------------------------------- UCI originals
def convert_diabetis(paths):
    """UCI Pima Indians Diabetes (CSV with a header line: 8 features and the 0/1 class)."""
    path = paths["uci"]
    raw = _read_csv_numbers(path, columns=9)
    if not np.all(np.isin(raw[:, 8], (0, 1))):
        raise _fail(path, "the last column (class) must be 0 or 1")
    t = np.where(raw[:, 8] == 1, 1, -1)
    return _from_rows("diabetis", standardise(raw[:, :8], "sequential"), t)


def _read_csv_numbers(path, columns):
    try:
        raw = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except ValueError as exc:
        raise _fail(path, f"not a CSV table of numbers after its header line ({exc})") from None
    if raw.shape[1] != columns:
        raise _fail(path, f"expected {columns} columns, got {raw.shape[1]}")
    return raw


def convert_thyroid(paths):
    """UCI new-thyroid (CSV: class 1/2/3 and 5 features) and Rätsch's scaled copy (MAT)."""
    raw = _read_csv_numbers(paths["uci"], columns=6)
    if not np.all(np.isin(raw[:, 0], (1, 2, 3))):
        raise _fail(paths["uci"], "the first column (class) must be 1, 2 or 3")
    t = np.where(raw[:, 0] == 1, -1, 1)
    uci = raw[:, 1:]
    data, target = _read_mat(paths["raetsch_mat"], uci.shape[1])
    match = _match_affine(uci, data, paths["raetsch_mat"])
    x = data[match]
    if not np.array_equal(target[match], t):
        raise _fail(paths["raetsch_mat"], "labels do not match the UCI classes row by row")
    extra = [("x_uci_standardised", standardise(uci, "sequential"))]
    return _from_rows("thyroid", x, t, extra)


def _match_affine(raw, scaled, path, tol=1e-6):
    """Row ``match[i]`` of ``scaled`` is row ``i`` of ``raw`` under a per-feature affine map."""
    if len(raw) != len(scaled):
        raise _fail(path, f"expected {len(raw)} rows, got {len(scaled)}")
    pred = np.empty_like(raw)
    for j in range(raw.shape[1]):
        slope, icept = np.polyfit(np.sort(raw[:, j]), np.sort(scaled[:, j]), 1)
        pred[:, j] = slope * raw[:, j] + icept
    dist = np.abs(pred[:, None, :] - scaled[None, :, :]).max(axis=2)
    match = dist.argmin(axis=1)
    if dist[np.arange(len(raw)), match].max() > tol or len(np.unique(match)) != len(raw):
        raise _fail(path, "is not a per-feature affine image of the UCI data, row by row")
    return match


def _read_mat(path, columns):
    import scipy.io

    try:
        m = scipy.io.loadmat(path)
        data = np.asarray(m["data"], dtype=np.float64)
        target = np.asarray(m["target"]).ravel()
    except Exception as exc:  # scipy raises many types for damaged or foreign files
        raise _fail(path, f"not a MAT file with arrays 'data' and 'target' ({exc})") from None
    if data.ndim != 2 or data.shape[1] != columns or len(target) != len(data):
        raise _fail(path, f"expected data (n, {columns}) and target (n,), got "
                          f"{data.shape} and {target.shape}")
    if not np.all(np.isin(target, (-1, 1))):
        raise _fail(path, "target must be -1 or +1")
    return data, target.astype(np.int8)


def convert_flare_solar(paths):
    """UCI Solar Flare, second file (whitespace separated, a header line, 13 columns)."""
    path = paths["uci"]
    rows = [line.split() for line in Path(path).read_text().splitlines()[1:] if line.strip()]
    if not rows or any(len(r) != 13 for r in rows):
        raise _fail(path, "expected a header line and rows of 13 fields")
    try:
        num = np.array([[float(v) for v in r[3:]] for r in rows])
    except ValueError as exc:
        raise _fail(path, f"fields 4-13 must be numbers ({exc})") from None
    dist = [r[2] for r in rows]
    if not set(dist) <= set("XOIC"):
        raise _fail(path, "field 3 (spot distribution) must be X, O, I or C")
    # attributes 4-9 (activity .. area) and the C, M, X counts; the area of the largest
    # spot (field 10) is constant and left out, as in Rätsch's copy
    feat = num[:, [0, 1, 2, 3, 4, 5, 7, 8, 9]]
    t = np.where(np.array(dist) == "O", -1, 1)
    return _from_rows("flare_solar", feat, t, [("x_std", standardise(feat, "sequential"))])


def convert_splice(paths):
    """UCI splice junctions as CSV (class, instance name, 60-nt sequence; a header line)."""
    path = paths["uci"]
    with open(path, newline="") as fh:
        rows = [[c.strip() for c in r] for r in list(csv.reader(fh))[1:] if r]
    if not rows or any(len(r) != 3 or len(r[2]) != 60 for r in rows):
        raise _fail(path, "expected rows of class, name and a 60-letter sequence")
    if not {r[0] for r in rows} <= {"EI", "IE", "N"}:
        raise _fail(path, "class must be EI, IE or N")
    rows = [r for r in rows if set(r[2]) <= set("ACGT")]   # drop the ambiguity codes
    code = np.zeros(256, dtype=np.float64)
    code[[ord(c) for c in "AGCT"]] = [1, 2, 3, 4]
    seq = np.array([r[2] for r in rows])
    feat = code[np.frombuffer("".join(seq).encode("ascii"), np.uint8)].reshape(len(rows), 60)
    t = np.where(np.isin([r[0] for r in rows], ("EI", "IE")), 1, -1)
    extra = [("seq", seq), ("x_std", standardise(feat, "sequential")),
             ("uci_class", np.array([r[0] for r in rows])),
             ("uci_id", np.array([r[1] for r in rows]))]
    return _from_rows("splice", feat, t, extra)


def convert_twonorm(paths):
    """The 7400-case twonorm sample (MAT: ``data`` 7400x20, ``target`` ±1)."""
    data, target = _read_mat(paths["mat"], 20)
    return _from_rows("twonorm", standardise(data, "pairwise"), target)


# --------------------------------------------------------------------------- USPS
def convert_usps(paths):
    """USPS from ``usps.h5``: groups ``train`` and ``test``, each with ``data`` (n, 256)
    in [0, 1] and ``target`` (digits 0-9)."""
    import h5py

    path = paths["h5"]
    out = {}
    try:
        with h5py.File(path, "r") as f:
            for part in ("train", "test"):
                out[f"x_{part}"] = np.asarray(f[part]["data"][:], dtype=np.float32)
                out[f"y_{part}"] = np.asarray(f[part]["target"][:])
    except (OSError, KeyError) as exc:
        raise _fail(path, f"not an HDF5 file with train/ and test/ data and target ({exc})") \
            from None
    for part in ("train", "test"):
        X, y = out[f"x_{part}"], out[f"y_{part}"]
        if X.ndim != 2 or X.shape[1] != 256 or y.shape != (len(X),) or \
                not np.all(np.isin(y, np.arange(10))):
            raise _fail(path, f"{part}: expected data (n, 256) and n digits 0-9")
        out[f"y_{part}"] = y.astype(np.int8)
    return {k: out[k] for k in ("x_train", "y_train", "x_test", "y_test")}


CONVERTERS = {
    **{name: (lambda paths, name=name: convert_ida(name, paths))
       for name in ("banana", "breast_cancer", "german", "heart", "image", "ringnorm",
                    "titanic", "waveform")},
    "diabetis": convert_diabetis,
    "flare_solar": convert_flare_solar,
    "splice": convert_splice,
    "thyroid": convert_thyroid,
    "twonorm": convert_twonorm,
    "usps": convert_usps,
}


def convert(name, paths):
    """The arrays of data set ``name`` from its source files ``{role: path}``."""
    if name not in CONVERTERS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(CONVERTERS))}")
    return CONVERTERS[name](paths)


def write_npz(path, arrays):
    """Write ``arrays`` to ``path`` (compressed npz) through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".npz")
    os.close(fd)
    try:
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
