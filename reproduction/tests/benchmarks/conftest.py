"""The scripts of benchmarks/ are plain programs, not a package: make them importable here."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
