"""The robustness report: one markdown file that two programs fill in, a section each.

``benchmarks/fuzz_inputs.py`` (generated inputs against every public estimator and
function) and ``benchmarks/sweep_real_data.py`` (every classifier on real data sets)
each own one section of ``robustness.md``; :func:`write_section` replaces that
section and keeps the other, so the report stays one current file per experiment
whichever program ran last.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["REPORT_NAME", "write_section"]

REPORT_NAME = "robustness.md"
_TITLE = (
    "# Robustness: generated inputs and real data\n\n"
    "Two programs fill this report, one section each: `benchmarks/fuzz_inputs.py` and "
    "`benchmarks/sweep_real_data.py`. Each section opens with its own provenance line "
    "(command, code version, machine, date).\n"
)


def _markers(key):
    return f"<!-- BEGIN {key} -->", f"<!-- END {key} -->"


def write_section(out_dir, key, lines):
    """Write ``lines`` (markdown, a list of str) as section ``key`` of ``out_dir/robustness.md``.

    The file is created with the report's title if missing; an existing section of the
    same key is replaced in place, any other section is kept. Returns the file's path.
    """
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", key):
        raise ValueError(f"section key must be a lower-case identifier, got {key!r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / REPORT_NAME
    text = path.read_text() if path.exists() else _TITLE
    begin, end = _markers(key)
    block = "\n".join([begin, *lines, end])
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text.rstrip("\n") + "\n")
    tmp.replace(path)
    return path
