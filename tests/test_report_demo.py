"""``nerfwatch demo`` end to end: simulator, history, live daemon, analysis, report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.report import IsoWeek
from pipeline.warehouse import Warehouse


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
    # the first line over the cards: kestrel (quantized, its signs firing) first, then picks
    short = re.search(r'id="in-short"><strong>In short.</strong> ([^<]*)</p>', html)
    assert short and re.match(r"(Needs attention|Watch): kestrel \(", short[1]), short
    assert "Send traffic to " in short[1], short[1]
    # kestrel is in its quantized phase today: the fixed questions say so, the others not
    section = html[html.index('id="fixed-answers"') :]
    section = section[: section.index("</ul>")]
    assert re.search(
        r"<strong>kestrel</strong>: The answers to fixed questions changed on "
        r"\d{4}-\d\d-\d\d; same model name \(kestrel-chat\)",
        section,
    ), section
    assert "<strong>nova</strong>: Answers to fixed questions as before" in section
    assert "TV is the total variation distance" in section  # the lines' unit, said once
    # The report covers the live run, on a Monday too (the default week is last week).
    live = (
        "SELECT min(started_at) AS a, max(started_at) AS b FROM probe_results WHERE source = 'live'"
    )
    span = Warehouse(folder / "nerfwatch.duckdb").query(live).row(0, named=True)
    middle = span["a"] + (span["b"] - span["a"]) / 2
    assert report.name == IsoWeek.containing(middle).filename
    # The demo leaves its config beside its data: the reading commands take it.
    config = ["--config", str(folder / "nerfwatch.toml")]
    for command in (["status"], ["sql", "SELECT count(*) AS n FROM probes"], ["report"]):
        done = CliRunner().invoke(app, [*command, *config])
        assert done.exit_code == 0, (command, done.output)
    status = CliRunner().invoke(app, ["status", "--db", str(folder / "nerfwatch.duckdb")])
    assert status.exit_code == 0 and "kestrel" in status.output
    rerun = CliRunner().invoke(app, [*args[:3], "--days", "2", "--live-seconds", "3"])
    assert rerun.exit_code == 0, rerun.output  # an earlier demo folder is rebuilt
