"""Download the pinned source files (pooch, SHA-256 checked, cached) and convert them."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from kpm_reproduce.data import paths as _paths
from kpm_reproduce.data.registry import BASE_URL, DATASETS, SOURCES

__all__ = ["FetchResult", "fetch_data", "fetch_sources", "output_file"]

_PARALLEL = 8   # downloads at a time


@dataclass
class FetchResult:
    """What :func:`fetch_data` did.

    Attributes
    ----------
    data_dir : Path
        The folder that now holds ``raetsch/NAME.npz`` and ``usps/usps.npz``: point
        ``KPM_DATA`` (or ``--data-dir``) at it.
    written, kept : list of Path
        Data files written now, and files that existed and were left as they were.
    downloaded : int
        Source files downloaded now (the others came from the cache).
    cache_dir : Path
        Where the source files are cached.
    """

    data_dir: Path
    cache_dir: Path
    written: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    downloaded: int = 0


def output_file(name):
    """The data file of ``name`` relative to the data folder (``raetsch/NAME.npz``, ...)."""
    return Path("usps/usps.npz") if name == "usps" else Path("raetsch") / f"{name}.npz"


def _check_datasets(datasets):
    if datasets is None:
        return list(DATASETS)
    if isinstance(datasets, str):
        datasets = [d for d in datasets.split(",") if d.strip()]
    try:
        names = [str(d).strip().lower().replace("-", "_") for d in datasets]
    except TypeError:
        raise ValueError(f"datasets must be names or a comma-separated string, got "
                         f"{datasets!r}") from None
    bad = [n for n in names if n not in SOURCES]
    if bad or not names:
        raise ValueError(f"unknown datasets {bad or datasets!r}; choose from "
                         f"{', '.join(DATASETS)}")
    return list(dict.fromkeys(names))


@contextlib.contextmanager
def _quiet_pooch():
    """Pooch logs one line per file; the caller reports per data set instead."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _pooch(cache, base_url, names):
    import pooch

    registry = {sf.key: f"sha256:{sf.sha256}" for n in names for sf in SOURCES[n].values()}
    return pooch.create(path=Path(cache) / "sources", base_url=base_url.rstrip("/") + "/",
                        registry=registry, retry_if_failed=1)


def _download(pup, sf, base_url):
    import requests

    url = sf.url(base_url)
    # pooch creates the file's folder with os.makedirs without exist_ok: two threads
    # downloading into one new folder race there, so the folders are made first
    (Path(pup.abspath) / sf.key).parent.mkdir(parents=True, exist_ok=True)
    try:
        return Path(pup.fetch(sf.key))
    except ValueError as exc:  # pooch: the hash does not match (the download is deleted)
        raise ValueError(f"{url} failed its SHA-256 check, so it is not the pinned file: "
                         f"{exc}") from None
    except requests.exceptions.RequestException as exc:
        raise OSError(f"cannot download {url}: {exc}; check the network connection, or "
                      "give a mirror of the pinned files (--mirror / base_url=)") from None


def fetch_sources(name, *, cache_dir=None, base_url=None):
    """Download (or find in the cache) the source files of ``name``; check their SHA-256.

    Parameters
    ----------
    name : str
        One of :data:`kpm_reproduce.data.DATASETS`.
    cache_dir : str or Path, optional
        The cache (default: :func:`kpm_reproduce.data.cache_dir`).
    base_url : str, optional
        Where the pinned files are served (default :data:`~kpm_reproduce.data.BASE_URL`):
        ``base_url/OWNER/REPO/COMMIT/PATH``.

    Returns
    -------
    dict
        ``{role: local path}``, as the converters take it.
    """
    (name,) = _check_datasets([name])
    cache = _paths.cache_dir(cache_dir)
    base = _check_base_url(base_url)
    return _download_all(_pooch(cache, base, [name]), SOURCES[name], base)


def _download_all(pup, files, base_url):
    """``{role: path}``: the files downloaded side by side (the time goes in round trips)."""
    from concurrent.futures import ThreadPoolExecutor

    with _quiet_pooch(), ThreadPoolExecutor(max_workers=_PARALLEL) as ex:
        paths = list(ex.map(lambda sf: _download(pup, sf, base_url), files.values()))
    return dict(zip(files, paths))


def _check_base_url(base_url):
    if base_url is None:
        return os.environ.get("KPM_DATA_MIRROR") or BASE_URL
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http:// or https:// address, got {base_url!r}")
    return base_url


def _stderr(msg):
    print(msg, file=sys.stderr)


def fetch_data(datasets=None, to=None, *, cache_dir=None, base_url=None, force=False,
               log=None):
    """Download, check and convert the benchmark data; return where they are.

    Every source file is a file of a public repository at a pinned commit
    (:data:`kpm_reproduce.data.SOURCES`); its SHA-256 is checked, it is cached, and it is
    converted into ``raetsch/NAME.npz`` or ``usps/usps.npz`` under ``to``
    (:mod:`kpm_reproduce.data.convert` tells how). The result equals the kpm project's data
    files bit for bit.

    Parameters
    ----------
    datasets : list of str or str, optional
        Names from :data:`kpm_reproduce.data.DATASETS` (a list or ``"heart,usps"``);
        default: all 13 Rätsch sets and USPS.
    to : str or Path, optional
        The data folder to fill (default: ``$KPM_DATA`` if set, else
        :func:`kpm_reproduce.data.default_data_dir`, which the loaders also read).
    cache_dir : str or Path, optional
        Where the source files are cached (default: ``$KPM_CACHE``, else the user cache
        folder, see :func:`kpm_reproduce.data.cache_dir`).
    base_url : str, optional
        A mirror of the pinned files (``base_url/OWNER/REPO/COMMIT/PATH``; default
        ``$KPM_DATA_MIRROR``, else ``https://raw.githubusercontent.com/``). The same hashes
        are checked.
    force : bool
        Rebuild data files that exist already (they are kept otherwise).
    log : callable, optional
        Called with one line of text per step (default: print to standard error).

    Returns
    -------
    FetchResult

    Raises
    ------
    ValueError
        Unknown data set name, a bad ``base_url``, or a download whose SHA-256 does not
        match (the message names the file).
    OSError
        A download that fails (network) or a folder that cannot be written.
    """
    names = _check_datasets(datasets)
    if not isinstance(force, bool):
        raise ValueError(f"force must be True or False, got {force!r}")
    log = _stderr if log is None else log
    if not callable(log):
        raise ValueError(f"log must be callable, got {log!r}")
    target = _paths.default_data_dir() if to is None else _paths.as_dir(to, "to")
    cache = _paths.cache_dir(cache_dir)
    base = _check_base_url(base_url)
    result = FetchResult(data_dir=target, cache_dir=cache)
    todo = [n for n in names if force or not (target / output_file(n)).is_file()]
    result.kept = [target / output_file(n) for n in names if n not in todo]
    if todo:
        log(f"source files are cached in {cache} (set KPM_CACHE to move the cache); "
            f"missing ones are downloaded from {base}")
    for name in todo:
        result.written.append(_build(name, target, cache, base, log, result))
    if result.written:
        _write_manifest(target, result.written)
    return result


def _build(name, target, cache, base, log, result):
    from kpm_reproduce.data.convert import convert, write_npz

    files = SOURCES[name]
    cached = sum((cache / "sources" / sf.key).is_file() for sf in files.values())
    paths = _download_all(_pooch(cache, base, [name]), files, base)
    result.downloaded += len(files) - cached
    out = write_npz(target / output_file(name), convert(name, paths))
    log(f"{name}: {len(files)} source file(s) ({len(files) - cached} downloaded), SHA-256 "
        f"checked -> {out}")
    return out


def _write_manifest(target, written):
    """``SOURCES.json`` in the data folder: the pinned sources of every file written."""
    path = target / "SOURCES.json"
    try:
        manifest = json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError):
        manifest = {}
    by_file = {str(output_file(n)): n for n in SOURCES}
    for out in written:
        rel = str(out.relative_to(target))
        manifest[rel] = [{"url": sf.url(), "sha256": sf.sha256}
                         for sf in SOURCES[by_file[rel]].values()]
    path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
