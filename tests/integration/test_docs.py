"""What the README and the documentation tell a user to run, runs as written."""

import doctest
import re
import shlex
from pathlib import Path

import pytest
from typer.main import get_command

from kpm_reproduce.cli import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.rst")),
         *sorted((ROOT / "docs" / "user_guide").glob("*.rst"))]


def test_readme_quick_start_runs_as_written():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "no python block in the README"
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"README block {i}", "README.md", 0))
    assert runner.failures == 0 and runner.tries > 3


def _code_lines(page):
    """The lines of a page's code: fenced blocks of markdown, indented literal blocks of
    reStructuredText (after a ``::`` or a ``code-block`` directive)."""
    text = page.read_text()
    if page.suffix == ".md":
        return [line for block in re.findall(r"```\w*\n(.*?)```", text, flags=re.S) for line in block.splitlines()]
    lines, out, literal = text.splitlines(), [], False
    for line in lines:
        if literal and line.strip() and not line.startswith((" ", "\t")):
            literal = False
        if literal:
            out.append(line)
        if line.rstrip().endswith("::") or line.lstrip().startswith((".. code-block::", ".. code::")):
            literal = True
    return out


def _kpm_command_lines():
    for page in PAGES:
        for line in _code_lines(page):
            line = line.strip().split("#")[0].strip()
            m = re.search(r"(?:^|&& |\.venv/bin/|\$ )(kpm (?:[a-z-]+)(?: .*)?)$", line)
            if m and not line.startswith(("`", "|", "*", ">>>")):
                yield page.name, m.group(1)


@pytest.mark.parametrize("page,line", list(_kpm_command_lines()))
def test_every_kpm_command_in_the_docs_parses(page, line):
    """Command names and options exist and their values are accepted (parsing only)."""
    words = shlex.split(line)[1:]
    if words == ["--version"]:
        return  # an eager option that exits (tested in test_cli.py)
    cmd, name = get_command(app), "kpm"
    # descend through the groups (read by what they have: typer bundles its own click, whose
    # classes are not click's), then parse the command's options and values
    while hasattr(cmd, "commands") and words and not words[0].startswith("-"):
        assert words[0] in cmd.commands, f"{page}: unknown command {words[0]!r} in {line!r}"
        name, cmd, words = words[0], cmd.commands[words[0]], words[1:]
    assert not hasattr(cmd, "commands"), f"{page}: {line!r} names a group, not a command"
    cmd.make_context(name, list(words), resilient_parsing=False)


def test_every_public_name_is_in_the_api_reference():
    """kpm's public names, every public function or class of its public top-level modules and
    every name a subpackage exports (its ``__all__``) have a page."""
    import importlib
    import inspect
    import pkgutil

    import kpm

    listed = set(re.findall(r"^   ([\w.]+)$", (ROOT / "docs" / "api.rst").read_text(), flags=re.M))
    missing = [n for n in kpm.__all__ if n not in listed]
    for info in pkgutil.iter_modules(kpm.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"kpm.{info.name}")
        for n in getattr(mod, "__all__", []):
            obj = getattr(mod, n)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and n not in kpm.__all__ \
                    and f"{info.name}.{n}" not in listed:
                missing.append(f"{info.name}.{n}")
    assert not missing, f"not in docs/api.rst: {missing}"


RESULTS = ROOT / "docs" / "results"


def _page_title(path):
    """The first heading of a markdown report (MyST makes it the page's title), outside code."""
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else re.match(r"#{1,6} +(.+?) *#* *$", line)
        if m:
            return m.group(1)
    return None


def test_every_results_page_opens_with_its_own_title():
    """The results index lists the reports by title: two pages must not read the same; and
    each report opens with it (the provenance line follows)."""
    pages = sorted(RESULTS.glob("*.md"))
    assert len(pages) > 20, f"the results pages are not in {RESULTS}"
    titles = {p.name: _page_title(p) for p in pages}
    assert not [n for n, t in titles.items() if t is None], "results pages without a title"
    late = [p.name for p in pages if not p.read_text(encoding="utf-8").startswith("# ")]
    assert not late, "results pages that do not open with their title"
    by_title = {}
    for name, title in titles.items():
        by_title.setdefault(title, []).append(name)
    assert not {t: n for t, n in by_title.items() if len(n) > 1}, "results pages with the same title"


def test_dask_report_titles_say_how_d_was_chosen():
    """benchmarks/bench_dask_kpm.py writes the title each committed report has (the runs of
    the same n differ by the rule that chose D), so a refreshed report keeps it."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location(
        "bench_dask_kpm", ROOT / "benchmarks" / "bench_dask_kpm.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    titles = set()
    for name in ("dask_kpm", "dask_kpm_1e7", "dask_kpm_1e7_cv"):
        run = json.loads((RESULTS / f"{name}.json").read_text())
        written = bench.report(run["results"], run["command"]).splitlines()[0]
        assert written == "# " + _page_title(RESULTS / f"{name}.md"), name
        titles.add(written)
    assert len(titles) == 3


# --- every repository path the pages name exists --------------------------------------------

#: A repository path in running text or code: a top-level folder of the repository (or the
#: package folder ``kpm/``, ``kpm_reproduce/``, read under its source folder), a slash, then
#: path characters; not inside a URL or a longer path (the character before it is none of
#: ``\w./:@~-``). It stops at the first character a path here never holds (space, quote,
#: backquote, ``:`` of ``file.py:12``, ``<`` of a placeholder, ``*`` of a pattern).
REPO_PATH = re.compile(
    r"(?<![\w./:@~-])((?:src|tests|benchmarks|reproduction|docs|examples|kpm|kpm_reproduce)"
    r"/[\w.-][\w./-]*)")
#: Folders a build or a run writes (ignored by git): a page may name them before they exist.
GENERATED = ("docs/_build", "docs/generated", "docs/auto_examples", "docs/results/runs")
#: Reports whose paths are those of past revisions, which they name.
PAST_REVISIONS = {"docs/results/code_metrics.md": "its sites are at the two revisions it compares"}


def _path_pages():
    yield ROOT / "README.md"
    for ext in ("rst", "md"):
        for page in sorted((ROOT / "docs").rglob(f"*.{ext}")):
            if not page.relative_to(ROOT).as_posix().startswith(GENERATED):
                yield page
    yield from sorted((ROOT / "examples").glob("*.py"))


def _repo_path(name):
    """The path relative to the repository's root that ``name`` stands for."""
    name = name.rstrip(".")  # the full stop of a sentence
    head = name.split("/", 1)[0]
    if head == "kpm":
        return "src/" + name
    if head == "kpm_reproduce":
        return "reproduction/src/" + name
    return name


def _provenance_line(page, number, line):
    """A report's provenance (the ``>`` line under its title): the command as run at the
    commit it names, which may have moved since; it is history, not a pointer."""
    return page.parent.name == "results" and number <= 5 and line.startswith(
        ("> Generated by", "> Numbers from"))


def missing_paths(text, root=ROOT, page=None):
    """``(line number, name)`` of each repository path in ``text`` that is not under ``root``."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if page is not None and _provenance_line(page, number, line):
            continue
        for m in REPO_PATH.finditer(line):
            path = _repo_path(m.group(1))
            if not path.startswith(GENERATED) and not (root / path).exists():
                out.append((number, m.group(1)))
    return out


def test_the_path_check_finds_a_missing_path(tmp_path):
    """The check below can fail: made-up paths are found, real ones pass, URLs and longer
    paths are not read as repository paths."""
    (tmp_path / "src" / "kpm").mkdir(parents=True)
    (tmp_path / "src" / "kpm" / "base.py").write_text("")
    (tmp_path / "tests").mkdir()
    text = ("see `src/kpm/base.py` and kpm/base.py.\n"
            "tested in ``tests/test_gone.py``, kpm/experiments/braun_table.py:450 and\n"
            "(benchmarks/bench_gone.py), not https://github.com/x/kpm/src/a.py nor /opt/docs/x.md\n"
            "nor tests/<subpackage>/test_<module>.py")
    assert missing_paths(text, tmp_path) == [
        (2, "tests/test_gone.py"), (2, "kpm/experiments/braun_table.py"),
        (3, "benchmarks/bench_gone.py")]


def test_every_repository_path_in_the_docs_exists():
    """README.md, docs/**/*.rst, docs/**/*.md and examples/*.py name only paths that exist
    (a moved test file, a module moved to the reproduction package)."""
    missing = []
    for page in _path_pages():
        name = page.relative_to(ROOT).as_posix()
        if name in PAST_REVISIONS:
            continue
        missing += [f"{name}:{number}: {path}"
                    for number, path in missing_paths(page.read_text(encoding="utf-8"), ROOT, page)]
    assert not missing, "paths that do not exist in the repository:\n" + "\n".join(missing)
