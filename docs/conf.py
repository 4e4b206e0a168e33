"""Sphinx configuration of the kpm documentation site (``make docs``).

Stack: Sphinx + numpydoc (the API pages from the numpydoc docstrings, as scikit-learn's
own site), sphinx-gallery (the examples in ``examples/`` are executed and their figures
embedded), MyST (the reproduction reports in ``docs/results/`` are markdown files written by
``kpm reproduce``; they are included as they are) and the PyData theme.
"""

import os
import re
from pathlib import Path

import kpm

project = "kpm"
author = "the kpm developers"
copyright = "2026, the kpm developers"
release = version = kpm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "results/notes/*", "results/runs/*", "results/*/*",
                    "sg_execution_times.rst"]
templates_path = ["_templates"]

# API reference
autosummary_generate = True
autodoc_default_options = {}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

intersphinx_mapping = {}  # no network access while building

# the reports are markdown with dollar-free maths and plain tables
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
# reports written by the reproduction commands start at any heading level and link to
# their JSON files, which are not pages
suppress_warnings = ["myst.header", "myst.xref_missing", "misc.highlighting_failure"]

# the gallery: examples/ at the top of the repository, executed at build time
sphinx_gallery_conf = {
    "examples_dirs": str(Path(__file__).parent.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib",),
    "min_reported_time": 1,
    "show_memory": False,
}

sphinx_gallery_conf["doc_module"] = ("kpm",)
sphinx_gallery_conf["backreferences_dir"] = "generated/backreferences"

_ATTRIBUTE = re.compile(r"(?<![`\w:*/\\])([A-Za-z]\w*)_(?=[\s,.;:)\]]|$)")


def _escape_attribute_names(app, what, name, obj, options, lines):
    """``n_components_`` in running text is an attribute name, not a reST link target."""
    for i, line in enumerate(lines):
        if ":" in line.split(" ")[0]:  # a directive option or field
            continue
        parts = line.split("``")  # leave literals alone
        parts[::2] = [_ATTRIBUTE.sub(r"\1\\_", p) for p in parts[::2]]
        lines[i] = "``".join(parts)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_attribute_names, priority=600)


html_theme = "pydata_sphinx_theme"
html_title = f"kpm {version}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path = []
html_show_sourcelink = False
os.environ.setdefault("MPLBACKEND", "Agg")
