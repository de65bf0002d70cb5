"""A new user's bad arguments: each is one line on stderr naming the option, exit status 2,
nothing on stdout and nothing written (no report page, no analysis run, no network call).

Dates "in the future" are checked against a pinned clock in the pure helpers; the CLI runs
use year 9999, later than any clock this suite will meet.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import typer

from pipeline.cli import main
from pipeline.commands.analyze import parse_since
from pipeline.commands.drift import parse_day
from pipeline.commands.report import refuse_a_future_week
from pipeline.report.weeks import IsoWeek
from pipeline.warehouse import Warehouse
from tests.support.cli import run_main
from tests.support.mounts import unwritable_folder

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)  # a Friday, in ISO week 2026-W18

# a provider nobody answers for: a call reaching it would fail as a network error
CONFIG = """\
[warehouse]
path = "nw.duckdb"

[[providers]]
name = "nova"
format = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "nova-chat"

[[probes]]
name = "short"
task = "arithmetic"
every = "10m"
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A real, migrated, empty warehouse file."""
    path = tmp_path / "nw.duckdb"
    Warehouse(path).migrate()
    return path


def analysis_runs(path: Path) -> int:
    frame = Warehouse(path).query("SELECT count(*) AS n FROM analysis_runs")
    return int(frame["n"][0])


@pytest.mark.parametrize("fmt", ["xml", "parquet"])
def test_releases_list_refuses_a_format_in_one_line(
    fmt: str, db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(["releases", "list", "--format", fmt, "--db", str(db)], capsys)
    assert (code, out) == (2, "")
    assert err == [f"error: --format: expected one of table, csv, json, got {fmt!r}"]


@pytest.mark.parametrize("text", ["2026-05-02", "2026-05-01T12:00:01", "2026-05-01T13:00+00:00"])
def test_since_after_now_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"^--since: .* is in the future \(now 2026-05-01 12:00"):
        parse_since(text, now=NOW)


def test_since_up_to_now_is_accepted() -> None:
    assert parse_since("2026-05-01T12:00", now=NOW) == NOW
    assert parse_since("2026-04-30", now=NOW) == datetime(2026, 4, 30, tzinfo=UTC)


def test_analyze_with_a_future_since_records_no_run(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_main(["analyze", "--since", "9999-12-31", "--db", str(db)], capsys)
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith("error: --since: '9999-12-31' is in the future")
    assert analysis_runs(db) == 0


def test_a_week_that_has_not_begun_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    refuse_a_future_week(IsoWeek(2026, 18), NOW)  # the current week: a partial report
    refuse_a_future_week(IsoWeek(2025, 52), NOW)
    with pytest.raises(typer.Exit):
        refuse_a_future_week(IsoWeek(2026, 19), NOW)
    assert capsys.readouterr().err.splitlines() == [
        "error: --week: 2026-W19 has not begun (it starts 2026-05-04, now is 2026-05-01 12:00 UTC)"
    ]


def test_report_for_a_future_week_writes_nothing(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "reports"
    argv = ["report", "--week", "9999-W01", "--db", str(db), "--out", str(out_dir)]
    code, out, err = run_main(argv, capsys)
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith("error: --week: 9999-W01 has not begun (it starts 9999-01-04")
    assert not out_dir.exists()


def test_python_m_pipeline_cli_runs_the_command() -> None:
    """Without the console script, ``python -m pipeline.cli`` must not exit 0 doing nothing."""
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "bogus"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: No such command 'bogus'. (see 'nerfwatch --help')\n"


def test_drift_day_must_be_a_real_day_not_after_today(
    capsys: pytest.CaptureFixture[str],
) -> None:
    today = NOW.date()
    assert parse_day("2026-05-01", today) == today
    for text, line in [
        ("2026-05-02", "error: --day: 2026-05-02 is in the future (today is 2026-05-01, UTC)"),
        ("2026-02-30", "error: --day: expected YYYY-MM-DD, got '2026-02-30'"),
    ]:
        with pytest.raises(typer.Exit):
            parse_day(text, today)
        assert capsys.readouterr().err.splitlines() == [line]
    assert date.fromisoformat("2026-04-30") == parse_day("2026-04-30", today)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["discover", "nova", "--candidates", "0"], "--candidates"),
        (["discover", "nova", "--calls", "-1"], "--calls"),
        (["discover", "nova", "--inputs", "0"], "--inputs"),
        (["discover", "nova", "--reference-calls", "0"], "--reference-calls"),
        (["discover", "nova", "--per-input", "0"], "--per-input"),
        (["discover", "nova", "--logprob-calls", "-5"], "--logprob-calls"),
        (["discover", "nova", "--temperature", "nan"], "--temperature"),
        (["discover", "nova", "--temperature", "-0.5"], "--temperature"),
        (["discover", "nova", "--temperature", "7"], "--temperature"),
        (["sample", "nova", "--day", "9999-12-31"], "--day"),
        (["sample", "nova", "--day", "2026-02-30"], "--day"),
    ],
)
def test_drift_refuses_unusable_options_before_any_call(
    args: list[str],
    option: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "nerfwatch.toml"
    config.write_text(CONFIG, encoding="utf-8")
    code, out, err = run_main(["drift", *args, "--config", str(config)], capsys)
    assert (code, out, len(err)) == (2, "", 1), err
    assert option in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nerfwatch.toml"]


def _file_size_limit() -> None:
    """In the child only: files stop growing at 8 KiB, like a disk that is full (Python
    ignores SIGXFSZ, so the write fails with EFBIG instead of killing the process)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))


def test_init_on_a_full_disk_leaves_no_half_config(tmp_path: Path) -> None:
    target = tmp_path / "nerfwatch.toml"
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "init", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=_file_size_limit,
    )
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == f"error: {target}: cannot write the config (File too large)\n"
    assert list(tmp_path.iterdir()) == []  # neither a partial file nor a temporary


def test_demo_dir_under_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    folder = tmp_path / "a-file" / "demo"
    code, out, err = run_main(["demo", "--dir", str(folder)], capsys)
    assert (code, out) == (2, "")
    assert [line for line in err if line.strip()] == [
        f"error: --dir: cannot write {folder}: Not a directory"
    ]


def test_demo_dir_on_a_read_only_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with unwritable_folder(tmp_path) as locked:
        folder = locked / "demo"
        code, out, err = run_main(["demo", "--dir", str(folder)], capsys)
        assert list(locked.iterdir()) == []
    lines = [line for line in err if line.strip()]
    assert (code in (1, 2), out, len(lines)) == (True, "", 1), err  # 1: EROFS, 2: EACCES
    assert lines[0].startswith(f"error: --dir: cannot write {folder}: ")


def test_a_warehouse_cut_short_by_a_full_disk_is_not_left_to_block_later_runs(
    tmp_path: Path,
) -> None:
    """DuckDB's header needs 12 KiB; at 8 KiB the new file is cut inside it. Left behind,
    every later open failed ('Could not read enough bytes'), even with space again."""
    db = tmp_path / "nw.duckdb"
    argv = ["releases", "add", "OpenAI", "GPT-X", "2026-01-01", "--db", str(db)]
    command = [sys.executable, "-m", "pipeline.cli", *argv]
    full = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=_file_size_limit,
    )
    assert (full.returncode, full.stdout, len(full.stderr.splitlines())) == (1, "", 1)
    assert full.stderr.startswith(f"error: cannot open warehouse {db}: ")
    assert "File too large" in full.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with pytest.raises(SystemExit) as again:  # with space again, the same command works
        main(argv)
    assert again.value.code == 0


def test_a_sql_file_that_is_not_utf8_names_the_file_and_line(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = tmp_path / "q.sql"
    query.write_bytes(b"SELECT 1,\n'\xff' AS x\n")
    code, out, err = run_main(["sql", str(query), "--db", str(db)], capsys)
    assert (code, out) == (2, "")
    assert err == [f"error: {query}:2: not UTF-8 text (byte 0xff)"]


def test_simulate_history_refuses_an_end_in_the_future(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "h.duckdb"
    argv = ["simulate", "history", "--db", str(db), "--days", "1", "--end", "9998-12-31"]
    code, out, err = run_main(argv, capsys)
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith("error: --end: 9998-12-31 00:00 UTC is in the future (now ")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("statement", "written"),
    [
        ("COPY (SELECT 1) TO 'out.csv'", "out.csv"),
        ("SELECT 1; EXPORT DATABASE 'dump'", "dump"),
        ("ATTACH 'other.duckdb' AS other", "other.duckdb"),
    ],
)
def test_sql_does_not_write_files(
    db: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    statement: str,
    written: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["sql", statement, "--db", str(db)], capsys)
    assert code == 2 and len(err) == 1 and "refused" in err[0], (code, out, err)
    assert not (tmp_path / written).exists()


@pytest.mark.parametrize(
    "statement",
    [
        "INSTALL httpfs",
        "FORCE INSTALL httpfs FROM core",
        "LOAD httpfs",
        "SET autoinstall_known_extensions = true; SELECT 1",
        "SET extension_directory = 'ext'; SELECT 1",
    ],
)
def test_sql_downloads_no_extension(
    db: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    statement: str,
) -> None:
    """INSTALL on a read-only connection created ~/.duckdb/extensions/... and tried to
    download; nothing is downloaded at run time, so it is refused before it runs."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["sql", statement, "--db", str(db)], capsys)
    assert code == 2 and len(err) == 1 and "refused" in err[0], (code, out, err)
    assert list(home.iterdir()) == [], "a read created files under HOME"
    assert not (tmp_path / "ext").exists()
