"""Where a command writes and how it says it could not: ``--out`` errors name the option and
the path with status 2, files appear whole or not at all, and usage errors are one line."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from pipeline.atomic_files import replacing, write_text_atomically
from pipeline.cli import app, main
from pipeline.warehouse import Warehouse

QUERY = "SELECT 1 AS a, 'x' AS b"


def invoke(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output.strip().splitlines()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "result.csv"
    target.write_text("old, whole\n")
    with pytest.raises(RuntimeError), replacing(target) as temporary:
        temporary.write_text("new but only ha")
        raise RuntimeError("disk full halfway")
    assert target.read_text() == "old, whole\n"
    assert leftovers(tmp_path) == []


def test_a_finished_write_replaces_the_file_readable_by_all(tmp_path: Path) -> None:
    target = tmp_path / "deeper" / "report.html"
    write_text_atomically(target, "<p>new</p>\n", make_folder=True)
    assert target.read_text() == "<p>new</p>\n"
    assert target.stat().st_mode & 0o777 == 0o644
    assert leftovers(target.parent) == []


def test_a_folder_is_not_replaced_by_a_file(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(IsADirectoryError), replacing(tmp_path / "taken"):
        pass
    assert (tmp_path / "taken").is_dir() and leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("in_the_way/out.csv", "Not a directory"),
        ("no_such_folder/out.csv", "No such file or directory"),
        ("a_folder", "Is a directory"),
    ],
)
def test_sql_out_that_cannot_be_written_names_the_option_and_path(
    name: str, reason: str, warehouse: Warehouse, tmp_path: Path
) -> None:
    (tmp_path / "in_the_way").write_text("a file, not a folder\n")
    (tmp_path / "a_folder").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    target = tmp_path / name
    code, lines = invoke("sql", QUERY, "--db", str(warehouse.path), "-f", "csv", "-o", str(target))
    assert code == 2, lines
    assert lines == [f"error: --out: cannot write {target}: {reason}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "parquet"])
def test_sql_out_writes_every_format_whole(fmt: str, warehouse: Warehouse, tmp_path: Path) -> None:
    target = tmp_path / f"out.{fmt}"
    target.write_text("an older result\n")
    code, lines = invoke("sql", QUERY, "--db", str(warehouse.path), "-f", fmt, "-o", str(target))
    assert code == 0 and lines == []
    if fmt == "parquet":
        assert pl.read_parquet(target).rows() == [(1, "x")]
    else:
        text = target.read_text()
        assert "x" in text and "older" not in text and text.endswith("\n")
    assert leftovers(tmp_path) == []


def test_sql_parquet_without_out_is_refused_before_the_warehouse_is_read(
    tmp_path: Path,
) -> None:
    code, lines = invoke("sql", QUERY, "--db", str(tmp_path / "absent.duckdb"), "-f", "parquet")
    assert code == 2 and lines == ["error: --format parquet needs --out FILE"]


def test_report_out_under_a_file_names_the_option(warehouse: Warehouse, tmp_path: Path) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("a file where the folder should be\n")
    args = ["report", "--week", "2026-W47", "--db", str(warehouse.path)]
    code, lines = invoke(*args, "--out", str(blocker / "weekly"))
    assert code == 2, lines
    assert lines == [f"error: --out: cannot write {blocker / 'weekly'}: Not a directory"]
    code, lines = invoke(*args, "--out", str(tmp_path / "fine"))
    assert code == 0, lines
    assert lines == [str(tmp_path / "fine" / "nerfwatch-2026-W47.html")]
    assert leftovers(tmp_path / "fine") == []


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    out, err = capsys.readouterr()
    code = stopped.value.code
    assert isinstance(code, int)
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["bogus"], "error: No such command 'bogus'. (see 'nerfwatch --help')"),
        (
            ["report", "--nope"],
            "error: No such option: --nope (see 'nerfwatch report --help')",
        ),
        (
            ["warehouse", "migrate", "--db", "x.duckdb"],
            "error: Missing option '--to'. (see 'nerfwatch warehouse migrate --help')",
        ),
        (
            ["simulate", "history", "--days", "ten"],
            "error: Invalid value for '--days': 'ten' is not a valid float. "
            "(see 'nerfwatch simulate history --help')",
        ),
    ],
)
def test_a_usage_error_is_one_line_and_status_2(
    argv: list[str],
    line: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(argv, capsys)
    assert (code, out, err.splitlines()) == (2, "", [line])
    assert list(tmp_path.iterdir()) == []


def test_help_and_a_command_s_own_status_pass_through_main(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["--help"], capsys)
    assert code == 0 and "Usage: nerfwatch" in out and err == ""
    code, out, err = run_main([], capsys)  # no command: the help, and status 2
    assert code == 2 and "Usage: nerfwatch" in out
    code, out, err = run_main(["sql", "SELECT 1", "--db", "absent.duckdb"], capsys)
    assert code == 2 and err.startswith("error: --db: no warehouse at absent.duckdb")
