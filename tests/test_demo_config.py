"""The demo leaves ``nerfwatch.toml`` beside its data; reading commands use it (or --db)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.config import default_config, load_config
from pipeline.config.writer import write_demo_config
from pipeline.demo import DemoOptions, run_demo
from pipeline.warehouse import Warehouse
from probes.simulator import configure

BASE_URL = "http://127.0.0.1:45678"


def test_demo_config_round_trips_and_passes_config_check(tmp_path: Path) -> None:
    providers = configure(None).providers
    path = write_demo_config(tmp_path, BASE_URL, providers)
    loaded = load_config(path)  # check_env: the simulator needs no key
    expected = default_config(BASE_URL, providers, tmp_path)
    assert loaded.providers == expected.providers
    assert loaded.probes == expected.probes
    assert loaded.warehouse.path == (tmp_path / "nerfwatch.duckdb").resolve()
    assert loaded.warehouse.spool_dir == (tmp_path / "spool").resolve()
    assert loaded.report.out_dir == (tmp_path / "reports").resolve()
    assert "nerfwatch simulate serve --port 45678" in path.read_text(encoding="utf-8")
    result = CliRunner().invoke(app, ["config", "check", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert "config OK" in result.output


@pytest.mark.slow
def test_status_sql_report_read_the_demo_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "demo"
    run_demo(DemoOptions(folder, days=3, live_seconds=2, speed=60))
    monkeypatch.chdir(tmp_path)  # nothing here: every path comes from the options
    db = folder / "nerfwatch.duckdb"
    last = Warehouse(db).query("SELECT max(started_at) AS t FROM probe_results")["t"][0]
    year, week, _ = last.isocalendar()
    live = "SELECT DISTINCT provider FROM probe_results WHERE source = 'live'"
    probed_live = set(Warehouse(db).query(live)["provider"].to_list())
    runner = CliRunner()
    by_db = tmp_path / "by-db"
    for source, out, out_dir in (
        (["--config", str(folder / "nerfwatch.toml")], [], folder / "reports"),
        (["--db", str(db)], ["--out", str(by_db)], by_db),
    ):
        status = runner.invoke(app, ["status", *source])
        assert status.exit_code == 0, status.output
        # With the config every provider is listed; without it, those the daemon probed
        # (a 2 s live run on a loaded machine may not have reached every one).
        shown = {"nova"} if source[0] == "--config" else probed_live
        assert all(p in status.output for p in shown) and "spool depth:" in status.output
        count = "SELECT count(*) AS n FROM probe_results"
        sql = runner.invoke(app, ["sql", count, "-f", "csv", *source])
        assert sql.exit_code == 0 and int(sql.output.splitlines()[1]) > 0, sql.output
        args = ["report", "--week", f"{year}-W{week:02d}", *out, *source]
        report = runner.invoke(app, args)
        assert report.exit_code == 0, report.output
        assert Path(report.output.strip()) == out_dir / f"nerfwatch-{year}-W{week:02d}.html"
        assert Path(report.output.strip()).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["by-db", "demo"]
