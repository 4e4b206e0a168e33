"""The library stands alone: numerical dependencies only; Dask and matplotlib are extras."""

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMERICAL = {"numpy", "scipy", "scikit-learn", "highspy", "numba", "joblib", "threadpoolctl"}
NOT_NEEDED = ("dask", "distributed", "matplotlib", "typer", "click", "kpm_reproduce", "pooch")

FIT_EVERYTHING = """
import sys
import numpy as np
from sklearn.datasets import make_moons
import kpm
X, y = make_moons(120, noise=0.2, random_state=0)
kpm.KernelProjection(n_components=5, sigma=0.5).fit_transform(X)
kpm.KernelProjectionMachine(sigma=0.5, random_state=0).fit(X, y).predict(X)
kpm.KernelProjectionMachine(sigma=0.5, selection="slope").fit(X, y).predict(X)
kpm.NystroemKPM(n_landmarks=30, sigma=0.5, max_components=10, random_state=0).fit(X, y).predict(X)
kpm.KernelPCADenoiser(n_components=3, sigma=0.5).fit(X).transform(X)
print(" ".join(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_required_dependencies_are_numerical():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in project["dependencies"]}
    assert names <= NUMERICAL, names - NUMERICAL
    assert "scripts" not in project  # the `kpm` command belongs to the reproduction
    extras = project["optional-dependencies"]
    assert any(d.startswith("dask[distributed]") for d in extras["dask"])
    assert any(d.startswith("matplotlib") for d in extras["plot"])


def test_fitting_the_estimators_imports_nothing_of_the_extras_or_the_reproduction():
    out = subprocess.run([sys.executable, "-c", FIT_EVERYTHING], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "kpm" in loaded and not loaded & set(NOT_NEEDED), loaded & set(NOT_NEEDED)


def test_the_extras_name_themselves_when_missing():
    """Without matplotlib, kpm.plotting raises an ImportError naming kpm[plot]; without
    distributed, NystroemKPM(client=...) one naming kpm[dask] (both simulated by blocking the
    import)."""
    code = """
import sys
sys.modules["matplotlib"] = None
sys.modules["matplotlib.pyplot"] = None
sys.modules["distributed"] = None
from sklearn.datasets import make_moons
import kpm
from kpm.plotting import plot_selection_curve
X, y = make_moons(60, noise=0.2, random_state=0)
m = kpm.KernelProjectionMachine(sigma=0.5, formulation="paper", random_state=0).fit(X, y)
for call in (lambda: plot_selection_curve(m),
             lambda: kpm.NystroemKPM(n_landmarks=20, client=object()).fit(X, y)):
    try:
        call()
    except ImportError as exc:
        print("ImportError:", exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'kpm[plot]'" in out and "pip install 'kpm[dask]'" in out, out


def _part(module):
    """The part of kpm that a dotted module name belongs to: ``kpm.<part>...`` -> part."""
    names = module.split(".")
    return names[1] if names[0] == "kpm" and len(names) > 1 else None


def _imported_modules(path, module):
    """Every module imported anywhere in the file (function-local imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield ".".join(base + ([node.module] if node.module else []))
            else:
                yield node.module
                yield from (f"{node.module}.{alias.name}" for alias in node.names)


def package_graph():
    """Edges between the parts of kpm (subpackages and top-level modules), from the imports
    of every module: ``{part: {imported part: [file, ...]}}``."""
    src = ROOT / "src"
    graph = {}
    for path in sorted((src / "kpm").rglob("*.py")):
        module = ".".join(path.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
        part = _part(module)
        if part is None:  # kpm/__init__.py: the lazy exports name every part
            continue
        graph.setdefault(part, {})
        for imported in _imported_modules(path, module):
            other = _part(imported)
            if other is not None and other != part:
                graph[part].setdefault(other, []).append(str(path.relative_to(ROOT)))
    return graph


def find_cycle(graph):
    """A cycle of the directed graph as a list of nodes (first == last), or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for succ in sorted(graph.get(node, ())):
            if state.get(succ) == "open":
                return path[path.index(succ):] + [succ]
            if succ not in state:
                found = visit(succ, path + [succ])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_find_cycle_sees_a_function_local_import(tmp_path):
    """The checker itself: a cycle made by an import inside a function is found."""
    pkg = tmp_path / "kpm"
    for name, text in {"a/__init__.py": "from kpm.b.x import f\n",
                       "b/__init__.py": "",
                       "b/x.py": "def f():\n    from kpm.a import g\n    return g\n"}.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    edges = {"a": set(), "b": set()}
    for part, module, path in (("a", "kpm.a", pkg / "a/__init__.py"), ("b", "kpm.b.x", pkg / "b/x.py")):
        edges[part] |= {_part(m) for m in _imported_modules(path, module)} - {part}
    assert find_cycle(edges) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_subpackages_import_one_another_one_way():
    """No cycle between kpm's subpackages (and top-level modules), counting every import of
    every module wherever it stands, so that none is hidden inside a function."""
    graph = package_graph()
    assert {"decomposition", "denoising", "preimage", "spectral"} <= set(graph)
    assert "preimage" in graph["decomposition"] and "decomposition" in graph["denoising"]
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle) + ": " + "; ".join(
        f"{a} -> {b} in {sorted(set(graph[a][b]))}" for a, b in zip(cycle, cycle[1:]))
