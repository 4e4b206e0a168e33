"""Fixtures shared by the library's tests (tests/) and the reproduction's (reproduction/tests/)."""

import os
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parent


def _data_dir() -> Path:
    env = os.environ.get("KPM_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The benchmark data directory; its absence is a test failure, never a skip."""
    d = _data_dir()
    if not d.is_dir():
        pytest.fail(f"benchmark data directory {d} is missing: set KPM_DATA to the folder holding raetsch/ and usps/")
    return d
