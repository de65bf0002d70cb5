"""A refused write leaves nothing on disk, and "today" for the release calendar is a UTC day.

``releases add`` with an unknown vendor, or ``releases import`` of a file with a bad
header, created the warehouse file (and its folders) before refusing: the vendors were
read from the warehouse, and reading a missing file creates it.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import time_machine

from pipeline.releases import ReleaseError, parse_release, utc_today
from tests.support.cli import run_main

ROW = {"vendor": "OpenAI", "model": "GPT-X", "release_date": ""}


def test_releases_add_with_an_unknown_vendor_creates_no_warehouse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "new" / "nw.duckdb"
    code, out, err = run_main(
        ["releases", "add", "Nope", "M", "2026-01-01", "--db", str(db)], capsys
    )
    assert (code, out) == (2, "")
    assert err == ["error: release: vendor: unknown vendor 'Nope' (use --new-vendor to add it)"]
    assert list(tmp_path.iterdir()) == []  # the old code: new/nw.duckdb


def test_releases_import_of_a_bad_file_creates_no_warehouse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("name,date\nx,2026-01-01\n", encoding="utf-8")
    db = tmp_path / "new" / "nw.duckdb"
    code, out, err = run_main(["releases", "import", str(bad), "--db", str(db)], capsys)
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {bad}:1: header: missing column(s) vendor, model")
    assert [p.name for p in tmp_path.iterdir()] == ["bad.csv"]


def test_a_known_vendor_is_accepted_on_a_new_warehouse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Guard: the shipped calendar's vendors are known before the file exists."""
    db = tmp_path / "new" / "nw.duckdb"
    code, out, _ = run_main(
        ["releases", "add", "OpenAI", "GPT-Q", "2026-01-01", "--db", str(db)], capsys
    )
    assert (code, out) == (0, "recorded OpenAI GPT-Q on 2026-01-01\n")
    assert db.is_file()


def test_a_release_date_more_than_a_year_after_today_is_refused() -> None:
    today = date(2026, 5, 1)
    latest = parse_release(ROW | {"release_date": "2027-05-02"}, "r", {"OpenAI"}, today=today)
    assert latest.release_date == date(2027, 5, 2)
    with pytest.raises(
        ReleaseError, match=r"^r: release_date: 2027-05-03 is outside 2015-01-01\.\.2027-05-02$"
    ):
        parse_release(ROW | {"release_date": "2027-05-03"}, "r", {"OpenAI"}, today=today)


def test_today_is_the_utc_day_not_the_machines() -> None:
    """At 03:00 on 2 May in Kathmandu it is still 1 May in UTC (21:15); the old code used
    ``date.today()``, the machine's day."""
    with time_machine.travel(
        datetime(2026, 5, 2, 3, tzinfo=ZoneInfo("Asia/Kathmandu")), tick=False
    ):
        assert date.today() == date(2026, 5, 2)
        assert utc_today() == date(2026, 5, 1)
        with pytest.raises(ReleaseError, match=r"outside 2015-01-01\.\.2027-05-02$"):
            parse_release(ROW | {"release_date": "2027-05-03"}, "r", {"OpenAI"})


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (lambda p: p.mkdir(), "is a folder, not a warehouse file"),
        (
            lambda p: p.write_text("vendor,model\n", encoding="utf-8"),
            "is not a DuckDB warehouse file",
        ),
    ],
)
@pytest.mark.parametrize(
    "command", [["sql", "SELECT 1"], ["releases", "add", "OpenAI", "M", "2026-01-01"]]
)
def test_a_db_that_is_a_folder_or_another_file_is_one_line(
    make: object,
    line: str,
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """DuckDB's 'IO Error: ... Is a directory / not a valid DuckDB database file' exited 1,
    as if the system had failed; it is the user's input: exit 2, naming --db."""
    target = tmp_path / "given"
    assert callable(make)
    make(target)
    code, out, err = run_main([*command, "--db", str(target)], capsys)
    assert (code, out, err) == (2, "", [f"error: --db: {target} {line}"])
    assert [p.name for p in tmp_path.iterdir()] == ["given"]


def test_a_db_with_an_unexpanded_tilde_is_in_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--db=~/nw.duckdb`` reaches us unexpanded; the old code created a folder named '~'
    in the working folder."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    code, _, err = run_main(
        ["releases", "add", "OpenAI", "M", "2026-01-01", "--db=~/nw.duckdb"], capsys
    )
    assert code == 0, err
    assert (home / "nw.duckdb").is_file()
    assert list(work.iterdir()) == []
