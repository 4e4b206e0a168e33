"""HiGHS models for kpm's linear programmes, created without HiGHS's start-up banner.

HiGHS prints a version and copyright line to the process's standard output when the
first model of a process is created, before any option can silence it. kpm's
estimators are library code whose output belongs to the user, so the first model is
created with file descriptor 1 pointed at the null device (once per process, under a
lock); every later model starts silent by itself. All models are returned with
``output_flag`` off.
"""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["new_highs"]

_LOCK = threading.Lock()
_BANNER_SHOWN = False


def new_highs():
    """A new ``highspy.Highs`` model with its output off."""
    global _BANNER_SHOWN
    import highspy

    if not _BANNER_SHOWN:
        with _LOCK:
            if not _BANNER_SHOWN:
                h = _without_stdout(highspy.Highs)
                _BANNER_SHOWN = True
                h.setOptionValue("output_flag", False)
                return h
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def _without_stdout(make):
    """``make()`` with file descriptor 1 on the null device (C-level output included)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no usable descriptor 1: nothing to hide
        return make()
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                return make()
            finally:
                os.dup2(saved, 1)
    finally:
        os.close(saved)
