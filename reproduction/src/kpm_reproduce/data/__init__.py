"""Fetch the benchmark data from pinned public sources and convert them.

``kpm data fetch`` (or :func:`fetch_data`) downloads the public source files of Rätsch's
IDA benchmarks and the USPS digits from addresses pinned to a commit
(:data:`SOURCES`), checks their SHA-256 with pooch, caches them (:func:`cache_dir`:
``$KPM_CACHE``, else the user cache folder) and converts them into the files the loaders of
:mod:`kpm_reproduce.datasets` read (``raetsch/NAME.npz``, ``usps/usps.npz``);
:mod:`kpm_reproduce.data.convert` tells how, data set by data set.

Examples
--------
>>> from kpm_reproduce.data import fetch_data
>>> result = fetch_data(["heart", "usps"], to="kpm-data")     # doctest: +SKIP
>>> result.data_dir                                            # doctest: +SKIP
PosixPath('kpm-data')
"""

from kpm_reproduce.data.fetch import FetchResult, fetch_data, fetch_sources, output_file
from kpm_reproduce.data.paths import cache_dir, default_data_dir
from kpm_reproduce.data.registry import BASE_URL, DATASETS, SOURCES, SourceFile, source_files


__all__ = ["BASE_URL", "DATASETS", "SOURCES", "SourceFile", "source_files", "cache_dir",
           "default_data_dir", "fetch_data", "fetch_sources", "FetchResult", "output_file"]
