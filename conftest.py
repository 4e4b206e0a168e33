"""Fixtures shared by the library's tests (tests/) and the reproduction's (reproduction/tests/).

The library's tests need no benchmark data. Tests of the reproduction that read Rätsch's
benchmarks or USPS ask for the ``data_dir`` fixture: where the data are not found (``KPM_DATA``,
else ``../shared/data`` beside the checkout, else the folder ``kpm data fetch`` fills, as the
loaders look) they are skipped, and the run ends with one line saying how many and how to get
the data. With ``KPM_REQUIRE_DATA=1`` (set by CI) missing data fail those tests instead.
"""

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parent

#: The reason of every skip for missing data (the summary line counts the skips by it).
NO_DATA = "needs the benchmark data"


def _locate_data():
    """The benchmark data folder as the loaders find it, or ``(None, why it was not found)``."""
    from kpm_reproduce.datasets import data_dir

    try:
        return data_dir(), None
    except FileNotFoundError as exc:
        return None, str(exc)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The benchmark data directory; skipped where it is missing, a failure with
    ``KPM_REQUIRE_DATA=1``."""
    d, why = _locate_data()
    if d is None:
        if os.environ.get("KPM_REQUIRE_DATA", "") not in ("", "0"):
            pytest.fail(f"KPM_REQUIRE_DATA is set and {why}")
        pytest.skip(f"{NO_DATA} ({why})")
    return d


def pytest_terminal_summary(terminalreporter):
    """One line for the tests skipped for missing data, one for any other skips."""
    skipped = terminalreporter.stats.get("skipped", [])
    n = sum(1 for r in skipped if NO_DATA in str(r.longrepr))
    if n:
        terminalreporter.write_line(
            f"{n} test{'s' if n > 1 else ''} skipped: {'they need' if n > 1 else 'it needs'} the benchmark data "
            "(Rätsch's benchmarks and USPS), not found here. `.venv/bin/kpm data fetch` downloads them "
            "into the cache where the tests find them, or set KPM_DATA to a folder holding raetsch/ and usps/.",
            yellow=True)
    if len(skipped) > n:
        terminalreporter.write_line(f"{len(skipped) - n} other test(s) skipped (`pytest -rs` lists them with their reasons).")
