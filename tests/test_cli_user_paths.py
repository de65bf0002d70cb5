"""Paths as a new user types them: ``~`` the shell left alone, a stray space, a name too
long, an empty file given as the warehouse. Each is one line and exit 2, or just works."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import time_machine

from pipeline.cli import main
from pipeline.config import load_config
from pipeline.warehouse import Warehouse
from tests.test_config import VALID

TOO_LONG = "x" * 260  # every common file system stops at 255 bytes a name


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of its own, and a separate working folder that must stay empty of
    anything named '~'."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    monkeypatch.setenv("NW_TEST_KEY", "sk-test-secret-value")
    monkeypatch.setenv("NW_TEST_HOOK", "http://127.0.0.1:9/hook")
    return home


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    out, err = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), out, err.splitlines()


def nothing_named_tilde(work: Path) -> bool:
    return not any(part == "~" for path in work.rglob("*") for part in path.parts)


def test_config_with_an_unexpanded_tilde_is_read_from_home(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--config=~/nw.toml``: the old code looked for ./~/nw.toml and said 'not found'."""
    (home / "nw.toml").write_text(VALID, encoding="utf-8")
    code, out, err = run_main(["config", "check", "--config=~/nw.toml"], capsys)
    assert code == 0, err
    assert "config OK" in out
    assert f"warehouse: {home / 'data' / 'nw.duckdb'}" in out  # relative to the config's folder


def test_init_with_an_unexpanded_tilde_writes_in_home(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(["init", "~/starter.toml"], capsys)
    assert code == 0, err
    assert (home / "starter.toml").is_file()
    assert list(Path.cwd().iterdir()) == []  # the old code: ./~/ ... 'No such file'


def test_sql_out_with_an_unexpanded_tilde_writes_in_home(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = home / "nw.duckdb"
    Warehouse(db).migrate()
    code, _, err = run_main(
        ["sql", "SELECT 1 AS a", "--format", "csv", "--out=~/a.csv", "--db", str(db)], capsys
    )
    assert code == 0, err
    assert (home / "a.csv").read_text(encoding="utf-8") == "a\n1\n"
    assert list(Path.cwd().iterdir()) == []


def test_report_out_with_an_unexpanded_tilde_writes_in_home(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old code wrote the report under ./~/reports in the working folder."""
    db = home / "nw.duckdb"
    Warehouse(db).migrate()
    with time_machine.travel(datetime(2026, 5, 1, 12, tzinfo=UTC), tick=False):
        code, out, err = run_main(
            ["report", "--week", "2026-W10", "--out=~/reports", "--db", str(db)], capsys
        )
    assert code == 0, err
    assert Path(out.strip()).parent == home / "reports"
    assert nothing_named_tilde(Path.cwd()) and list(Path.cwd().iterdir()) == []


def test_releases_import_of_an_unexpanded_tilde_reads_from_home(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "r.csv").write_text("vendor,model,release_date\nOpenAI,Q,2026-01-01\n", "utf-8")
    db = home / "nw.duckdb"
    code, out, err = run_main(["releases", "import", "~/r.csv", "--db", str(db)], capsys)
    assert code == 0, err
    assert out.startswith("imported 1 new release(s) from ")


def test_simulate_history_db_with_an_unexpanded_tilde_is_in_home(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``simulate history`` opened --db itself: the last fix did not reach it."""
    end = "2026-05-01T00:00:00"
    with time_machine.travel(datetime(2026, 5, 1, 12, tzinfo=UTC), tick=False):
        code, _, err = run_main(
            ["simulate", "history", "--days", "1", "--end", end, "--db=~/sim.duckdb"], capsys
        )
    assert code == 0, err
    assert (home / "sim.duckdb").is_file()
    assert list(Path.cwd().iterdir()) == []


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("nerfwatch.toml ", "the name ends with a space"),
        (" nerfwatch.toml", "the name begins with a space"),
        ("conf /nerfwatch.toml", "the folder name 'conf ' ends with a space"),
    ],
)
def test_a_config_name_with_a_stray_space_says_so(
    given: str, hint: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old message was 'file not found (create one with `nerfwatch init`)'."""
    code, out, err = run_main(["config", "check", "--config", given], capsys)
    assert (code, out, err) == (2, "", [f"error: {given}: file not found ({hint})"])


def test_a_db_name_with_a_stray_space_says_so(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Warehouse(Path("nw.duckdb")).migrate()
    code, out, err = run_main(["sql", "SELECT 1", "--db", "nw.duckdb "], capsys)
    assert (code, out) == (2, "")
    assert err == ["error: --db: no warehouse at 'nw.duckdb ' (the name ends with a space)"]


@pytest.mark.parametrize(
    "command",
    [
        ["releases", "add", "OpenAI", "M", "2026-01-01"],
        ["simulate", "history", "--days", "1", "--end", "2026-05-01T00:00:00"],
    ],
)
def test_a_db_name_too_long_is_one_line_and_creates_nothing(
    command: list[str], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old code created ./new/, then failed with an OSError traceback (errno 36)."""
    db = f"new/{TOO_LONG}.duckdb"
    with time_machine.travel(datetime(2026, 5, 1, 12, tzinfo=UTC), tick=False):
        code, out, err = run_main([*command, "--db", db], capsys)
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: --db: {db}: the name 'xxxxxxxxxxxxxxxxxxxx...' is 267 ")
    assert list(Path.cwd().iterdir()) == []


def test_a_warehouse_path_too_long_in_the_config_is_one_line(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old code raised OSError (File name too long) from the path check: a traceback."""
    config = Path("nw.toml")
    config.write_text(VALID.replace("data/nw.duckdb", f"data/{TOO_LONG}"), encoding="utf-8")
    code, out, err = run_main(["config", "check", "--config", str(config)], capsys)
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: nw.toml:2: warehouse.path: {home.parent / 'work'}/data/")


@pytest.mark.parametrize(
    "command", [["sql", "SELECT 1"], ["releases", "add", "OpenAI", "M", "2026-01-01"]]
)
def test_an_empty_file_as_db_is_refused_in_one_line(
    command: list[str], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``touch nw.duckdb`` then a command: DuckDB refuses the empty file ('not a valid
    DuckDB database file', exit 1, as if the system failed). It is the user's input: one
    line, exit 2, and the file is left as it was (never replaced behind their back)."""
    empty = Path("nw.duckdb")
    empty.touch()
    code, out, err = run_main([*command, "--db", str(empty)], capsys)
    assert (code, out) == (2, "")
    assert err == [
        "error: --db: nw.duckdb is an empty file, not a DuckDB warehouse file "
        "(remove it to start a new warehouse there)"
    ]
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in Path.cwd().iterdir()) == ["nw.duckdb"]


def test_every_path_key_of_the_config_expands_a_tilde(home: Path) -> None:
    """Guard: ``warehouse.path``, ``spool_dir``, ``report.out_dir`` and a lake's sqlite
    catalog and local ``data_path`` share ``expand_home``; a relative path still starts at
    the config's folder, not the working folder."""
    text = VALID.replace(
        'path = "data/nw.duckdb"',
        'path = "~/w/nw.duckdb"\nspool_dir = "spool"\nbackend = "ducklake"\n'
        'catalog = "sqlite:~/lake/cat.sqlite"\ndata_path = "~/lake/files"',
        1,
    ).replace("[report]\n", '[report]\nout_dir = "~/reports"\n', 1)
    folder = home / "conf"
    folder.mkdir()
    (folder / "nw.toml").write_text(text, encoding="utf-8")
    cfg = load_config("~/conf/nw.toml")
    assert cfg.path == folder / "nw.toml"
    assert cfg.warehouse.path == home / "w" / "nw.duckdb"
    assert cfg.warehouse.spool_dir == folder / "spool"
    assert cfg.report.out_dir == home / "reports"
    lake = cfg.warehouse.lake
    assert lake is not None
    assert (lake.catalog, lake.data_path) == (
        f"sqlite:{home / 'lake' / 'cat.sqlite'}",
        f"{home / 'lake' / 'files'}/",
    )


@pytest.mark.parametrize(
    "command",
    [
        ["releases", "import", "r.csv ", "--db", "nw.duckdb"],
        ["simulate", "history", "--scenario", "r.csv ", "--db", "nw.duckdb"],
    ],
)
def test_an_input_file_name_with_a_stray_space_says_so(
    command: list[str], home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old lines were 'r.csv : cannot read: No such file or directory' and
    'r.csv : cannot read scenario (No such file or directory)'."""
    Path("r.csv").write_text("vendor,model,release_date\n", encoding="utf-8")
    code, out, err = run_main(command, capsys)
    assert (code, out, err) == (
        2,
        "",
        ["error: r.csv : file not found (the name ends with a space)"],
    )
    assert sorted(p.name for p in Path.cwd().iterdir()) == ["r.csv"]
