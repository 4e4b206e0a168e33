"""Sphinx configuration of the kpm documentation site (``make docs``).

Stack: Sphinx + numpydoc (the API pages from the numpydoc docstrings, as scikit-learn's
own site), sphinx-gallery (the examples in ``examples/`` are executed and their figures
embedded), MyST (the reproduction reports in ``docs/results/`` are markdown files written by
``kpm reproduce``; they are included as they are) and the PyData theme. The maths is typeset
in the browser by MathJax 3, served with the site (``_static/mathjax``, fonts included), so
the pages need no network.
"""

import os
import re
import shutil
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
    # no sg_execution_times page: linked from nowhere, it loads jQuery, DataTables and
    # Bootstrap from CDNs (each example's page gives its own running time)
    "write_computation_times": False,
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


# MathJax served with the site: the browser component ``tex-chtml.js`` of MathJax 3.2.2 and
# what it loads on demand (TeX extensions, the CommonHTML fonts, the menu and accessibility
# modules), from the copy of MathJax's distribution in the ``django-static-mathjax`` package
# (the docs extra; an unmodified MathJax, importable as ``mathjax``)
mathjax_path = "mathjax/tex-chtml.js"  # relative: under _static/ of the built site
# an undefined TeX macro is a TeX error (shown as such; docs/check_site.py looks for them),
# not its name in red
mathjax3_config = {"tex": {"packages": {"[-]": ["noundefined"]}}}


def _mathjax_files():
    import mathjax

    root = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (root / Path(mathjax_path).name).is_file():
        raise RuntimeError(f"no MathJax browser component {mathjax_path!r} under {root}: "
                           "reinstall the docs extra (pip install -e '.[docs]')")
    return root


def _unused_mathjax_files(root):
    """The other combined components, the SVG output and the node.js adaptors."""
    def ignore(folder, names):
        where = Path(folder).relative_to(root).as_posix()
        if where == ".":
            return [n for n in names
                    if n == "adaptors" or (n.endswith(".js") and n != Path(mathjax_path).name)]
        return [n for n in names if n != "chtml"] if where == "output" else []
    return ignore


def _copy_mathjax(app):
    """Copy MathJax into ``_static/mathjax`` before the pages are written (so that its URL
    carries the file's checksum like the theme's own files)."""
    if app.builder.format != "html":
        return
    root = _mathjax_files()
    shutil.copytree(root, Path(app.outdir) / "_static" / "mathjax",
                    ignore=_unused_mathjax_files(root), dirs_exist_ok=True)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_attribute_names, priority=600)
    app.connect("builder-inited", _copy_mathjax)


html_theme = "pydata_sphinx_theme"
html_title = f"kpm {version}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
# the reports are mostly wide tables: without the section navigation (the list of all the
# reports, which the results index and the previous/next links also give) they get about
# 340 px more at a 1280 px window, and 32 of their 49 tables that scrolled sideways no longer
# do (docs/check_site.py counts them)
html_sidebars = {"results/*": []}
html_static_path = ["_static"]
html_css_files = ["kpm.css"]
html_js_files = ["kpm.js"]  # break opportunities in long dotted names (see the file)
# the page's table of contents names a class's methods without the class
# (decision_function_path(), not KernelProjectionMachine.decision_function_path())
toc_object_entries_show_parents = "hide"
html_show_sourcelink = False
os.environ.setdefault("MPLBACKEND", "Agg")
