import pytest
from typer.testing import CliRunner

from kpm_reproduce.cli import app


@pytest.mark.slow
def test_full_demo_writes_figure_and_table(tmp_path):
    """`kpm demo` (the `make demo` job): KPM with the three rules vs SVC, then the explicit map."""
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "kpm_selection_curve.png").stat().st_size > 10_000
    for text in ("KPM / CV", "KPM / slope", "SVC", "breast-cancer", "banana", "kernel PCA-L1"):
        assert text in result.output


def test_quick_demo_output_in_a_pipe_has_no_overlong_line(tmp_path):
    """Written to a file or a pipe (not a terminal) the demo's rules are 80 columns, not the
    console's unwrapped width (10,000 columns, so that tables are never wrapped)."""
    result = CliRunner().invoke(app, ["demo", "--quick", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    rules = [line for line in lines if line.startswith("─" * 5)]
    assert rules and all(len(line) <= 80 for line in rules), [len(line) for line in rules]
    assert max(len(line) for line in lines) < 200
