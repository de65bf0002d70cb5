"""A failed command leaves no empty folder it created; folders that were there stay.

A writing command on a lake makes its local data folder before it attaches the catalog;
with the catalog out of reach it failed and left that folder, empty, behind.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.commands.new_folders import forget, note_folder, remove_empty_new_folders
from tests.test_config import VALID


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A loopback port bound but not listening: every connection is refused, and no other
    process can take the port while the test runs."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NW_TEST_KEY", "sk-test-secret-value")
    monkeypatch.setenv("NW_TEST_HOOK", "http://127.0.0.1:9/hook")
    return tmp_path


def lake_config(folder: Path, port: int, data_path: str) -> Path:
    """A config whose lake has a PostgreSQL catalog at ``port`` and local data files."""
    lake = (
        'backend = "ducklake"\n'
        f'catalog = "postgres:host=127.0.0.1 port={port} dbname=nw user=nw"\n'
        f'data_path = "{data_path}"'
    )
    path = folder / "nw.toml"
    path.write_text(
        VALID.replace('path = "data/nw.duckdb"', f'path = "data/nw.duckdb"\n{lake}', 1), "utf-8"
    )
    return path


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    _, err = capsys.readouterr()
    assert isinstance(stopped.value.code, int)
    return stopped.value.code, err.splitlines()


def test_a_lake_out_of_reach_leaves_no_data_folder(
    work: Path, refusing_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old code left ./lake/files (empty) behind."""
    config = lake_config(work, refusing_port, "lake/files")
    code, err = run_main(
        ["releases", "add", "OpenAI", "M", "2026-01-01", "-c", str(config)], capsys
    )
    assert (code, len(err)) == (1, 1)
    assert err[0].startswith("error: cannot open warehouse lake postgres:")
    assert sorted(p.name for p in work.iterdir()) == ["nw.toml"]


def test_a_folder_that_was_there_before_stays(
    work: Path, refusing_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only what the failed command created goes: ./lake existed (empty), ./lake/files not."""
    (work / "lake").mkdir()
    config = lake_config(work, refusing_port, "lake/files")
    code, _ = run_main(["releases", "add", "OpenAI", "M", "2026-01-01", "-c", str(config)], capsys)
    assert code == 1
    assert sorted(str(p.relative_to(work)) for p in work.rglob("*")) == ["lake", "nw.toml"]


def test_a_new_folder_that_holds_something_is_kept(tmp_path: Path) -> None:
    """Guard: removal is ``rmdir``, so whatever a command wrote keeps its folder."""
    forget()
    note_folder(tmp_path / "a" / "b" / "c")
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "kept.txt").write_text("x", encoding="utf-8")
    remove_empty_new_folders()
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "a",
        "a/b",
        "a/b/kept.txt",
    ]


def test_a_command_that_succeeds_keeps_the_folders_it_made(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Guard: the new folders go only on a failure."""
    code, err = run_main(
        ["releases", "add", "OpenAI", "M", "2026-01-01", "--db", "new/deeper/nw.duckdb"], capsys
    )
    assert code == 0, err
    assert (work / "new" / "deeper" / "nw.duckdb").is_file()
