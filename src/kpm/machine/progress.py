"""Progress lines of a KPM fit (the estimators' ``verbose``).

A fit with ``verbose >= 1`` writes one line to stderr per phase (the training data and the
basis, the cross-validation folds, the C stage, the full-data paths) and per finished
cross-validation fold; ``verbose >= 2`` also one line per D of the folds' paths advanced
together. Each line carries the estimator's name and the seconds since the fit began. The
object is small and picklable: it travels to the joblib workers of the folds, whose stderr
is the parent's.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

__all__ = ["Progress"]


@dataclass
class Progress:
    """Writes a fit's progress lines to stderr (nothing at ``verbose=0``).

    Parameters
    ----------
    name : str
        The estimator's name, the prefix of every line.
    verbose : int, default=0
        0: silent; 1: phases and folds; 2: also each D of the folds' paths.
    """

    name: str = "KPM"
    verbose: int = 0
    start: float = field(default_factory=time.monotonic)

    def __call__(self, message, level=1):
        """Write ``message`` when ``verbose >= level``."""
        if self.verbose >= level:
            print(f"[{self.name}] {time.monotonic() - self.start:8.1f} s  {message}", file=sys.stderr, flush=True)
