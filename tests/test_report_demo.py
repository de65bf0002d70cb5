"""``nerfwatch demo`` end to end: simulator, history, live daemon, analysis, report."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app


def test_demo_refuses_a_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me", encoding="utf-8")
    result = CliRunner().invoke(app, ["demo", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "not made by nerfwatch demo" in result.output
    assert (tmp_path / "precious.txt").exists()


@pytest.mark.slow
def test_demo_end_to_end(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    args = ["demo", "--dir", str(folder), "--days", "14", "--live-seconds", "8"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = Path(result.stdout.strip().splitlines()[-1])
    assert report.exists() and report.parent == folder / "reports"
    html = report.read_text(encoding="utf-8")
    assert 'id="synthetic-banner"' in html and "Not analysed yet" not in html
    rerun = CliRunner().invoke(app, [*args[:3], "--days", "2", "--live-seconds", "3"])
    assert rerun.exit_code == 0, rerun.output  # an earlier demo folder is rebuilt
