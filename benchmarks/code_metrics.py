"""Code metrics of the kpm package: size, long functions, cross-module private names, duplicates.

For a source tree (default ``src/kpm``) or for the package at one or more git revisions
(``--rev``, read with ``git archive``; nothing is checked out), with the standard library only:

* **package lines**: the non-blank lines, and all lines, of every ``*.py`` file of the tree;
* **long functions**: every function or method (nested ones too, each on its own) longer than
  ``--max-lines`` lines (default 80), counted from its ``def`` line to its last line
  (decorators not counted, docstring and comments counted);
* **cross-module private names**: a name with one leading underscore (``_y``, not ``__y__``)
  that one module of the package takes from *another* module of the package:

  - imported: ``from .x import _y``, ``from ..x import _y``, ``from kpm.x import _y``
    (importing a private *module*, ``from . import _highs`` or ``import kpm.hinge.highs``, is the
    package's own business and not counted; nor is a public name imported under a private
    alias, ``import numpy as _np``);
  - read as an attribute of a module or class of another module of the package that the
    module imported: ``x._y`` after ``from . import x`` / ``import kpm.x as x``,
    ``Kernel._block`` after ``from .kernels import Kernel``, ``kpm.config.x`` is not
    (``_config`` is a module); ``self._y`` and ``cls._y`` never count;
  - listed apart (``--show`` prints them), not in the count: ``obj._y`` on any other
    variable where ``_y`` is defined only in other modules of the package (a def or an
    assignment there) -- a static guess at a private method of another module's object;

* **duplicate pairs**: the number of pairs of places sharing 6 or more lines that the
  ``duplicates`` command (when it is on the PATH) reports over the tree;
* **the largest class**: the class with the most lines (``class`` line to its last line);
* **raises outside the validation layer**: ``raise ValueError(...)`` and ``raise
  TypeError(...)`` statements in modules other than the validation layer (``validation.py``
  or the ``validation`` package);
* **hand-rolled number checks**: ``isinstance(..., numbers.Integral)`` or
  ``isinstance(..., numbers.Real)`` outside the validation layer.

Run::

    python benchmarks/code_metrics.py                       # src/kpm of the working tree
    python benchmarks/code_metrics.py --rev 359a988 --rev HEAD --out docs/results --show

``--out`` writes ``code_metrics.md`` and ``code_metrics.json`` in that folder (default: print
the table only; the committed report is ``--out docs/results``), with the hand-written
``notes/code_metrics.md`` of that folder, if there is one, after the table.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

DUPLICATES_SECONDS = 300


@dataclass
class Metrics:
    """What :func:`measure` finds in one tree (sites as ``path:line: text``)."""

    tree: str
    files: int = 0
    lines_nonblank: int = 0
    lines_total: int = 0
    long_functions: list = field(default_factory=list)
    private_imports: list = field(default_factory=list)
    private_attributes: list = field(default_factory=list)
    private_object_attributes: list = field(default_factory=list)
    duplicate_pairs: int | None = None
    largest_class: str = ""
    largest_class_lines: int = 0
    raises_outside_validation: list = field(default_factory=list)
    number_checks: list = field(default_factory=list)

    @property
    def cross_module_private(self):
        return len(self.private_imports) + len(self.private_attributes)


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path, root, package):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts])


class _Package:
    """The modules of one tree: name -> path, and the names each module defines."""

    def __init__(self, root, package):
        self.root, self.package = Path(root), package
        self.paths = {_module_name(p, self.root, package): p for p in sorted(self.root.rglob("*.py"))}
        self.trees = {m: ast.parse(p.read_text(), filename=str(p)) for m, p in self.paths.items()}
        self.defined = {m: _defined_names(t) for m, t in self.trees.items()}

    def is_package(self, module):
        return self.paths[module].name == "__init__.py"

    def resolve(self, module, node):
        """The absolute module an ``ImportFrom`` in ``module`` reads from (None: outside)."""
        if node.level:
            base = module.split(".") if self.is_package(module) else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        return target if target == self.package or target.startswith(self.package + ".") else None


def _defined_names(tree):
    """Names a module defines anywhere: functions, classes, assigned names and attributes."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return names


def _long_functions(tree, rel, max_lines):
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    n = child.end_lineno - child.lineno + 1
                    if n > max_lines:
                        found.append(f"{rel}:{child.lineno}: {qual} ({n} lines)")
                visit(child, qual + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _largest_class(tree, rel):
    """``(qualified name, lines)`` of the longest class of a module (("", 0) without one)."""
    best = ("", 0)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            n = node.end_lineno - node.lineno + 1
            if n > best[1]:
                best = (f"{rel}:{node.lineno}: {node.name}", n)
    return best


def _in_validation_layer(module):
    return "validation" in module.split(".")[1:]


def _raise_sites(tree, rel):
    """``raise ValueError/TypeError(...)`` statements of a module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in ("ValueError", "TypeError"):
                out.append(f"{rel}:{node.lineno}: raise {exc.id}")
    return out


def _number_checks(tree, rel):
    """``isinstance(x, numbers.Integral)`` / ``numbers.Real`` checks of a module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            text = ast.unparse(node)
            if "numbers.Integral" in text or "numbers.Real" in text:
                out.append(f"{rel}:{node.lineno}: {text}")
    return out


def _private_sites(pkg, module, rel):
    """(imports, attributes on imported modules/classes, attributes on other objects)."""
    tree = pkg.trees[module]
    imports, attributes, objects = [], [], []
    bound = {}  # local name -> ("module", abs name) or ("object", defining module)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == pkg.package or a.name.startswith(pkg.package + "."):
                    if a.asname:  # import kpm.x as m: m is kpm.x
                        bound[a.asname] = ("module", a.name)
                    else:  # import kpm.x: binds kpm
                        bound[pkg.package] = ("module", pkg.package)
        elif isinstance(node, ast.ImportFrom):
            source = pkg.resolve(module, node)
            if source is None:
                continue
            for a in node.names:
                sub = f"{source}.{a.name}"
                if sub in pkg.paths:
                    bound[a.asname or a.name] = ("module", sub)
                    continue
                bound[a.asname or a.name] = ("object", source)
                if _is_private(a.name) and source != module:
                    imports.append(f"{rel}:{node.lineno}: from {source} import {a.name}")
    own = pkg.defined[module]
    elsewhere = set().union(*(d for m, d in pkg.defined.items() if m != module))
    private = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _is_private(n.attr)]
    for node in sorted(private, key=lambda n: (n.lineno, n.col_offset)):
        base = node.value
        if isinstance(base, ast.Name) and base.id in ("self", "cls"):
            continue
        target = _bound_target(base, bound, pkg.paths)
        if target is not None:
            kind, where = target
            if kind == "module" and f"{where}.{node.attr}" in pkg.paths:
                continue  # a private module of the package, not a private name
            if where != module:
                attributes.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
        elif node.attr in elsewhere and node.attr not in own:
            objects.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return imports, attributes, objects


def _bound_target(base, bound, modules):
    """What ``base`` names: ("module", name) or ("object", defining module) of the package,
    or None (anything else)."""
    if isinstance(base, ast.Name):
        return bound.get(base.id)
    if isinstance(base, ast.Attribute):  # kpm.kernels._sq_dists, kpm.kernels.Kernel._block
        parent = _bound_target(base.value, bound, modules)
        if parent and parent[0] == "module":
            sub = f"{parent[1]}.{base.attr}"
            return ("module", sub) if sub in modules else ("object", parent[1])
    return None


def count_duplicates(root):
    """Pairs reported by the ``duplicates`` command over ``root`` (None if it is missing)."""
    exe = shutil.which("duplicates")
    if exe is None:
        return None
    out = subprocess.run([exe, "--repo", str(root), "--most", "1", "--seconds", str(DUPLICATES_SECONDS)],
                         capture_output=True, text=True, timeout=DUPLICATES_SECONDS + 60).stdout
    if "incomplete:" in out:
        raise RuntimeError(f"duplicates did not finish over {root}:\n{out}")
    first = out.splitlines()[0] if out else ""
    if first.startswith("no duplicates"):
        return 0
    m = re.match(r"(\d+) pairs? of places", first)
    if not m:
        raise RuntimeError(f"unexpected output of duplicates over {root}:\n{out}")
    return int(m.group(1))


def measure(root, package="kpm", max_lines=80, duplicates=True, label=None):
    """Metrics of the package whose top folder is ``root`` (e.g. ``src/kpm``)."""
    root = Path(root)
    pkg = _Package(root, package)
    m = Metrics(tree=label or str(root), files=len(pkg.paths))
    for module, path in pkg.paths.items():
        rel = path.relative_to(root.parent).as_posix()
        lines = path.read_text().splitlines()
        m.lines_total += len(lines)
        m.lines_nonblank += sum(1 for line in lines if line.strip())
        m.long_functions += _long_functions(pkg.trees[module], rel, max_lines)
        imports, attributes, objects = _private_sites(pkg, module, rel)
        m.private_imports += imports
        m.private_attributes += attributes
        m.private_object_attributes += objects
        name, n = _largest_class(pkg.trees[module], rel)
        if n > m.largest_class_lines:
            m.largest_class, m.largest_class_lines = name, n
        if not _in_validation_layer(module):
            m.raises_outside_validation += _raise_sites(pkg.trees[module], rel)
            m.number_checks += _number_checks(pkg.trees[module], rel)
    if duplicates:
        m.duplicate_pairs = count_duplicates(root)
    return m


def measure_rev(rev, repo=".", subdir=None, **kw):
    """Metrics of ``subdir`` (default ``src/<package>``) at git revision ``rev`` (extracted
    with ``git archive``)."""
    subdir = subdir or f"src/{kw.get('package', 'kpm')}"
    sha = subprocess.run(["git", "rev-parse", "--short=7", rev], cwd=repo, capture_output=True,
                         text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "tree.tar"
        subprocess.run(["git", "archive", "-o", str(archive), rev, subdir], cwd=repo, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(Path(tmp) / "tree", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        return measure(Path(tmp) / "tree" / subdir, label=f"{subdir} at {sha}", **kw)


def table(results, max_lines=80):
    """A markdown table, one column per tree."""
    def dup(m):
        return "n/a (no `duplicates` command)" if m.duplicate_pairs is None else str(m.duplicate_pairs)

    rows = [
        ("Python files", lambda m: str(m.files)),
        ("package lines (non-blank)", lambda m: str(m.lines_nonblank)),
        ("package lines (all)", lambda m: str(m.lines_total)),
        (f"functions/methods over {max_lines} lines", lambda m: str(len(m.long_functions))),
        ("cross-module private names (imports + module/class attributes)",
         lambda m: f"{m.cross_module_private} ({len(m.private_imports)} + {len(m.private_attributes)})"),
        ("private attributes of other modules' objects (static guess, not in the count above)",
         lambda m: str(len(m.private_object_attributes))),
        ("`duplicates` pairs (6+ lines)", dup),
        ("the largest class (lines)", lambda m: f"{m.largest_class_lines} (`{m.largest_class.split(': ')[-1]}`)"),
        ("`raise ValueError/TypeError` outside the validation layer",
         lambda m: str(len(m.raises_outside_validation))),
        ("`isinstance(..., numbers.Integral/Real)` outside the validation layer", lambda m: str(len(m.number_checks))),
    ]
    out = ["| metric | " + " | ".join(f"`{m.tree}`" for m in results) + " |",
           "|---|" + "---:|" * len(results)]
    out += [f"| {name} | " + " | ".join(f(m) for m in results) + " |" for name, f in rows]
    return out


def sites(results):
    """The named sites behind the counts, one section per tree."""
    out = []
    for m in results:
        out += ["", f"### `{m.tree}`", ""]
        for title, items in [("Long functions", m.long_functions),
                             ("Cross-module private imports", m.private_imports),
                             ("Private attributes of imported modules/classes", m.private_attributes),
                             ("Private attributes of other modules' objects (guess)",
                              m.private_object_attributes),
                             ("Number checks outside the validation layer", m.number_checks)]:
            out.append(f"{title} ({len(items)}):" + ("" if items else " none"))
            out += [f"- `{s}`" for s in items]
            out.append("")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", nargs="*", type=Path, help="package folders (default: src/kpm unless --rev)")
    ap.add_argument("--rev", action="append", default=[], help="a git revision of this repository (repeatable)")
    ap.add_argument("--package", default="kpm", help="the package's import name")
    ap.add_argument("--max-lines", type=int, default=80, help="a function longer than this is long")
    ap.add_argument("--no-duplicates", action="store_true", help="do not run the duplicates command")
    ap.add_argument("--show", action="store_true", help="list the sites behind the counts")
    ap.add_argument("--out", type=Path, help="write code_metrics.md and .json in this folder")
    args = ap.parse_args(argv)
    kw = dict(package=args.package, max_lines=args.max_lines, duplicates=not args.no_duplicates)
    trees = args.tree or ([] if args.rev else [Path("src/kpm")])
    results = [measure_rev(r, **kw) for r in args.rev] + [measure(t, **kw) for t in trees]
    lines = table(results, args.max_lines) + (sites(results) if args.show else [])
    print("\n".join(lines))
    if args.out:
        from kpm_reproduce.experiments.provenance import header

        args.out.mkdir(parents=True, exist_ok=True)
        notes = args.out / "notes" / "code_metrics.md"  # hand-written, kept beside the report
        md = ["# Code metrics of the package", "", *header(),
              "Definitions: `benchmarks/code_metrics.py` (module docstring).", "",
              *table(results, args.max_lines), "",
              *([notes.read_text().rstrip(), ""] if notes.is_file() else []),
              "## Sites", *sites(results)]
        (args.out / "code_metrics.md").write_text("\n".join(md).rstrip() + "\n")
        data = [{**asdict(m), "cross_module_private": m.cross_module_private} for m in results]
        (args.out / "code_metrics.json").write_text(json.dumps(data, indent=1) + "\n")
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
