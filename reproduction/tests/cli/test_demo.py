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
