"""Benchmark data: Rätsch's IDA benchmarks and the USPS digits.

Where the data live
-------------------
Every loader takes ``data_dir``; when it is ``None`` the directory is, in this order,

1. the ``KPM_DATA`` environment variable,
2. ``../shared/data`` beside the repository (``<repo>/../shared/data``) if it exists,
3. the folder ``kpm data fetch`` fills by default (:func:`kpm_reproduce.data.default_data_dir`:
   ``data/`` in the kpm cache) if it exists.

That directory holds ``raetsch/NAME.npz`` (index form, see :mod:`kpm_reproduce.data.convert`)
and ``usps/usps.npz``. ``kpm data fetch`` (or :func:`kpm_reproduce.data.fetch_data`)
downloads them from their public sources, pinned and hash-checked, and converts them. The Rätsch data may also be given as Gavin Cawley's public
``benchmarks.mat`` (one MATLAB struct per data set with fields ``x``, ``t``, ``train``,
``test``; ``train``/``test`` hold 1-based row indices), placed at ``raetsch/benchmarks.mat``
or ``benchmarks.mat`` in the data directory; it is used for any data set that has no
``.npz``. :func:`read_benchmarks_mat` reads such a file directly.

Examples
--------
>>> from kpm_reproduce.datasets import load_raetsch, n_realizations
>>> split = load_raetsch("banana", realization=1)          # doctest: +SKIP
>>> split.X_train.shape, split.published                    # doctest: +SKIP
((400, 2), True)
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from kpm.validation import check_int

__all__ = [
    "RAETSCH_DATASETS",
    "Split",
    "data_dir",
    "list_datasets",
    "n_realizations",
    "load_raetsch",
    "load_usps",
    "read_benchmarks_mat",
]

#: The 13 data sets of Rätsch's IDA benchmark repository (our file names).
RAETSCH_DATASETS = (
    "banana",
    "breast_cancer",
    "diabetis",
    "flare_solar",
    "german",
    "heart",
    "image",
    "ringnorm",
    "splice",
    "thyroid",
    "titanic",
    "twonorm",
    "waveform",
)

_REPO_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"


@dataclass(frozen=True, eq=False)
class Split:
    """One train/test realization of a benchmark data set.

    Attributes
    ----------
    name : str
        Data set name.
    realization : int
        1-based realization number.
    X_train, X_test : ndarray of float64, shape (n_train, d), (n_test, d)
    y_train, y_test : ndarray of int, values in {-1, +1}
    published : bool
        True when this is the published IDA split with that number; False when it is a
        reconstructed (seeded) split, see :mod:`kpm_reproduce.data.convert`.
    """

    name: str
    realization: int
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    published: bool

    def __repr__(self):
        return (
            f"Split({self.name!r}, realization={self.realization}, "
            f"train={self.X_train.shape}, test={self.X_test.shape}, "
            f"published={self.published})"
        )


# --------------------------------------------------------------------------- data dir
def data_dir(data_dir=None) -> Path:
    """Resolve the data directory (argument, else ``KPM_DATA``, else ``../shared/data``, else
    the folder ``kpm data fetch`` fills by default).

    Parameters
    ----------
    data_dir : str or Path, optional
        Explicit directory.

    Returns
    -------
    Path

    Raises
    ------
    FileNotFoundError
        If the resolved directory does not exist; the message says where to put the data.
    """
    if data_dir is not None:
        if not isinstance(data_dir, (str, os.PathLike)):
            raise ValueError(f"data_dir must be a path (str or os.PathLike), got {data_dir!r}")
        d, how = Path(data_dir).expanduser(), "the data_dir argument / --data-dir option"
    elif os.environ.get("KPM_DATA"):
        d, how = Path(os.environ["KPM_DATA"]).expanduser(), "the KPM_DATA environment variable"
    else:
        return _default_dir()
    if not d.is_dir():
        raise FileNotFoundError(
            f"benchmark data directory {d} (from {how}) does not exist: "
            f"`kpm data fetch --to {d}` downloads the data there; or point KPM_DATA / "
            "--data-dir at the folder that holds raetsch/NAME.npz and usps/usps.npz"
        )
    return d


def _default_dir():
    """``../shared/data`` beside the repository, else the folder ``kpm data fetch`` fills."""
    if _REPO_DATA.is_dir():
        return _REPO_DATA
    from kpm_reproduce.data import default_data_dir

    fetched = default_data_dir()
    if fetched.is_dir():
        return fetched
    raise FileNotFoundError(
        f"no benchmark data directory found: `kpm data fetch` downloads the data into "
        f"{fetched}, where they are found; or set the KPM_DATA environment variable (or pass "
        "--data-dir / data_dir=) to a folder holding raetsch/NAME.npz and usps/usps.npz "
        f"(the default {_REPO_DATA} does not exist either)"
    )


def _fetch_hint(root, names):
    return (f"`kpm data fetch --datasets {','.join(names)} --to {root}` downloads "
            f"{'it' if len(names) == 1 else 'them'} from the public sources")


def _mat_candidates(root: Path):
    return [root / "raetsch" / "benchmarks.mat", root / "benchmarks.mat"]


def _check_name(name) -> str:
    if not isinstance(name, str):
        raise ValueError(f"dataset name must be a string, got {type(name).__name__}")
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    key = {"breast": "breast_cancer", "flare": "flare_solar", "diabetes": "diabetis"}.get(key, key)
    if key not in RAETSCH_DATASETS:
        raise ValueError(
            f"unknown dataset {name!r}; known datasets: {', '.join(RAETSCH_DATASETS)}"
        )
    return key


# --------------------------------------------------------------------------- raw arrays
def _validate_index_form(name, x, t, train, test, published, source):
    def bad(msg):
        return ValueError(f"{source}: corrupted data for {name!r}: {msg}")

    if x.ndim != 2 or x.shape[0] == 0:
        raise bad(f"x must be a non-empty 2-D array, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise bad("x contains NaN or infinite values")
    if t.shape != (x.shape[0],):
        raise bad(f"t has shape {t.shape}, expected ({x.shape[0]},)")
    if not np.all(np.isin(t, (-1, 1))):
        raise bad("labels t must be -1 or +1")
    for lab, idx in (("train", train), ("test", test)):
        if idx.ndim != 2 or idx.shape[0] == 0 or idx.shape[1] == 0:
            raise bad(f"{lab} must be a non-empty (realizations, n) index array, got {idx.shape}")
        if idx.min() < 0 or idx.max() >= x.shape[0]:
            raise bad(f"{lab} indices out of range [0, {x.shape[0]})")
    if train.shape[0] != test.shape[0]:
        raise bad(f"train has {train.shape[0]} realizations but test has {test.shape[0]}")
    if published.shape != (train.shape[0],):
        raise bad(f"published flags have shape {published.shape}, expected ({train.shape[0]},)")


def _read_npz(path: Path, name: str):
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in ("x", "t", "train", "test") if k not in z.files]
            if missing:
                raise ValueError(f"{path}: corrupted data for {name!r}: missing arrays {missing}")
            x = np.asarray(z["x"], dtype=np.float64)
            t = np.asarray(z["t"]).astype(np.int64)
            train = np.asarray(z["train"]).astype(np.int64)
            test = np.asarray(z["test"]).astype(np.int64)
            published = (
                np.asarray(z["published"]).astype(bool)
                if "published" in z.files
                else np.zeros(train.shape[0], dtype=bool)
            )
    except ValueError:
        raise
    except (OSError, zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise ValueError(
            f"{path}: cannot read {name!r} (corrupted or truncated file: {exc}); "
            "replace it with a fresh copy"
        ) from exc
    _validate_index_form(name, x, t, train, test, published, path)
    return x, t, train, test, published


def read_benchmarks_mat(path, name=None):
    """Read Rätsch's data sets from a public ``benchmarks.mat`` file.

    The file holds one MATLAB struct per data set with fields ``x`` (N, d), ``t`` (N,) or
    (N, 1) in {-1, +1}, ``train`` (R, n_train) and ``test`` (R, n_test) of **1-based** row
    indices into ``x``.

    Parameters
    ----------
    path : str or Path
        The ``.mat`` file.
    name : str, optional
        Return only this data set.

    Returns
    -------
    dict
        ``{name: (x, t, train, test)}`` with 0-based int64 indices, or a single tuple
        ``(x, t, train, test)`` when ``name`` is given.

    Raises
    ------
    ValueError
        Unreadable/truncated file, missing struct or fields, indices out of range.
    """
    import scipy.io

    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a file path (str or os.PathLike), got {path!r}")
    path = Path(path)
    try:
        raw = scipy.io.loadmat(path, squeeze_me=False, struct_as_record=True)
    except FileNotFoundError:
        raise
    except Exception as exc:  # scipy raises many types for truncated / non-mat files
        raise ValueError(
            f"{path}: cannot read benchmarks.mat (corrupted or truncated file: {exc})"
        ) from exc
    structs = {}
    for key, val in raw.items():
        if key.startswith("__"):
            continue
        if isinstance(val, np.ndarray) and val.dtype.names:
            structs[key.lower().replace("-", "_")] = val
    if name is not None:
        key = _check_name(name)
        if key not in structs:
            raise ValueError(
                f"{path} has no struct {key!r}; it holds: {', '.join(sorted(structs)) or 'none'}"
            )
        wanted = [key]
    else:
        wanted = sorted(structs)
    out = {}
    for key in wanted:
        s = structs[key]
        fields = s.dtype.names
        missing = [f for f in ("x", "t", "train", "test") if f not in fields]
        if missing:
            raise ValueError(f"{path}: struct {key!r} lacks fields {missing}")
        rec = s.reshape(-1)[0]
        x = np.asarray(rec["x"], dtype=np.float64)
        t = np.asarray(rec["t"]).reshape(-1).astype(np.int64)
        train = np.atleast_2d(np.asarray(rec["train"])).astype(np.int64) - 1
        test = np.atleast_2d(np.asarray(rec["test"])).astype(np.int64) - 1
        published = np.ones(train.shape[0], dtype=bool)
        _validate_index_form(key, x, t, train, test, published, path)
        out[key] = (x, t, train, test)
    return out[wanted[0]] if name is not None else out


@lru_cache(maxsize=32)
def _raw_cached(path_str, mtime, size, name, kind):
    path = Path(path_str)
    if kind == "npz":
        return _read_npz(path, name)
    x, t, train, test = read_benchmarks_mat(path, name)
    return x, t, train, test, np.ones(train.shape[0], dtype=bool)


def _locate(name, root: Path):
    npz = root / "raetsch" / f"{name}.npz"
    if npz.is_file():
        return npz, "npz"
    for mat in _mat_candidates(root):
        if mat.is_file():
            return mat, "mat"
    raise FileNotFoundError(
        f"no data for {name!r} in {root}: expected {npz} (or raetsch/benchmarks.mat); "
        f"{_fetch_hint(root, [name])}, or point KPM_DATA / --data-dir elsewhere"
    )


def _raw(name, data_dir_=None):
    key = _check_name(name)
    root = data_dir(data_dir_)
    path, kind = _locate(key, root)
    st = path.stat()
    x, t, train, test, published = _raw_cached(str(path), st.st_mtime_ns, st.st_size, key, kind)
    return key, x, t, train, test, published


# --------------------------------------------------------------------------- public API
def list_datasets(data_dir=None):
    """Names of the Rätsch data sets available in the data directory (sorted).

    A data set counts as available when ``raetsch/NAME.npz`` exists, or when a
    ``benchmarks.mat`` holds its struct.
    """
    root = globals()["data_dir"](data_dir)
    names = {n for n in RAETSCH_DATASETS if (root / "raetsch" / f"{n}.npz").is_file()}
    for mat in _mat_candidates(root):
        if mat.is_file():
            try:
                names |= set(read_benchmarks_mat(mat)) & set(RAETSCH_DATASETS)
            except ValueError:
                pass
    return sorted(names)


def n_realizations(name, data_dir=None) -> int:
    """Number of train/test realizations of data set ``name`` (100; 20 for image, splice)."""
    return int(_raw(name, data_dir)[3].shape[0])


def n_published(name, data_dir=None) -> int:
    """Number of realizations of ``name`` that are the published IDA splits."""
    return int(_raw(name, data_dir)[5].sum())


def load_raetsch(name, realization=1, data_dir=None):
    """Load one (or every) train/test realization of a Rätsch benchmark data set.

    Parameters
    ----------
    name : str
        One of :data:`RAETSCH_DATASETS` (``'banana'``, ``'breast_cancer'``, ...).
    realization : int or None, default=1
        1-based realization number; ``None`` returns the list of all realizations.
    data_dir : str or Path, optional
        Data directory (see the module docstring).

    Returns
    -------
    Split or list of Split

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones), realization out of range,
        corrupted file.
    FileNotFoundError
        Data directory or file missing (the message says where to put the data).
    """
    key, x, t, train, test, published = _raw(name, data_dir)
    R = train.shape[0]
    if realization is None:
        return [_make_split(key, r, x, t, train, test, published) for r in range(1, R + 1)]
    realization = check_int(realization, "realization", minimum=None)
    if not 1 <= realization <= R:
        raise ValueError(
            f"realization {realization} out of range for {key!r}: it has realizations 1..{R}"
        )
    return _make_split(key, realization, x, t, train, test, published)


def _make_split(key, r, x, t, train, test, published):
    tr, te = train[r - 1], test[r - 1]
    return Split(
        name=key,
        realization=r,
        X_train=x[tr].copy(),
        y_train=t[tr].astype(np.int64),
        X_test=x[te].copy(),
        y_test=t[te].astype(np.int64),
        published=bool(published[r - 1]),
    )


def load_usps(data_dir=None):
    """Load USPS (standard 7291/2007 split).

    Returns
    -------
    X_train : ndarray of float64, shape (7291, 256), in [0, 1]
    y_train : ndarray of int64, digits 0..9
    X_test : ndarray of float64, shape (2007, 256), in [0, 1]
    y_test : ndarray of int64
    """
    root = globals()["data_dir"](data_dir)
    path = root / "usps" / "usps.npz"
    if not path.is_file():
        raise FileNotFoundError(
            f"USPS not found: expected {path} (arrays x_train, y_train, x_test, y_test); "
            f"{_fetch_hint(root, ['usps'])}"
        )
    try:
        with np.load(path, allow_pickle=False) as z:
            arrs = [z[k] for k in ("x_train", "y_train", "x_test", "y_test")]
    except KeyError as exc:
        raise ValueError(f"{path}: corrupted USPS file, missing array {exc}") from exc
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"{path}: cannot read USPS (corrupted or truncated: {exc})") from exc
    Xtr, ytr, Xte, yte = arrs
    Xtr, Xte = Xtr.astype(np.float64), Xte.astype(np.float64)
    ytr, yte = ytr.astype(np.int64).ravel(), yte.astype(np.int64).ravel()
    for X, y, lab in ((Xtr, ytr, "train"), (Xte, yte, "test")):
        if X.ndim != 2 or X.shape[1] != 256 or X.shape[0] != y.shape[0]:
            raise ValueError(f"{path}: corrupted USPS {lab} arrays {X.shape}, {y.shape}")
        if not np.all(np.isfinite(X)) or X.min() < 0 or X.max() > 1:
            raise ValueError(f"{path}: USPS {lab} pixels must be finite and in [0, 1]")
    return Xtr, ytr, Xte, yte
