"""Where the fetched data and the downloaded source files go (no heavy imports here)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "default_data_dir", "as_dir"]


def as_dir(path, what="path"):
    """``path`` as an expanded :class:`~pathlib.Path`; an error names ``what`` otherwise."""
    if not isinstance(path, (str, os.PathLike)) or str(path) == "":
        raise ValueError(f"{what} must be a folder path (str or os.PathLike), got {path!r}")
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise NotADirectoryError(f"{what} {p} exists and is not a folder")
    return p


def cache_dir(path=None) -> Path:
    """The cache of downloaded source files: ``path``, else ``$KPM_CACHE``, else the user
    cache folder of kpm (``pooch.os_cache("kpm")``: ``~/.cache/kpm`` on Linux,
    ``~/Library/Caches/kpm`` on macOS, ``%LOCALAPPDATA%\\kpm\\Cache`` on Windows)."""
    if path is not None:
        return as_dir(path, "cache_dir")
    if os.environ.get("KPM_CACHE"):
        return as_dir(os.environ["KPM_CACHE"], "KPM_CACHE")
    import pooch

    return Path(pooch.os_cache("kpm"))


def default_data_dir() -> Path:
    """Where ``kpm data fetch`` puts the data when not told: ``$KPM_DATA`` if set, else
    ``data/`` in :func:`cache_dir` (which the loaders read when ``KPM_DATA`` is not set
    and there is no ``../shared/data`` beside the checkout)."""
    if os.environ.get("KPM_DATA"):
        return as_dir(os.environ["KPM_DATA"], "KPM_DATA")
    return cache_dir() / "data"
