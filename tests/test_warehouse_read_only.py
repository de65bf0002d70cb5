"""An old warehouse nobody may write (a read-only mount, an archived copy) can still be read.

A reader migrates a file that lacks this code's migrations before reading it; on a file it
cannot write, that failed and so did the read ('cannot open warehouse ...: Read-only file
system', exit 1), though every table the file has was there to read.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.warehouse.migrations import load_migrations
from tests.support.mounts import unavailable
from tests.test_upgrade import OLDEST, _old_warehouse


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        unavailable(f"mount {' '.join(args)}: {done.stderr.strip()}")


@contextmanager
def _read_only_old_warehouse(folder: Path) -> Iterator[Path]:
    """ace7eeb's warehouse (schema 005) on a tmpfs then remounted read-only (root ignores
    permission bits, a read-only mount stops it too)."""
    folder.mkdir()
    _mount("-t", "tmpfs", "-o", "size=64m", "tmpfs", str(folder))
    try:
        path = _old_warehouse(folder, OLDEST)
        _mount("-o", "remount,ro", str(folder))
        yield path
    finally:
        subprocess.run(["umount", str(folder)], timeout=30, check=False)


def test_an_old_warehouse_on_a_read_only_mount_is_read_as_it_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with _read_only_old_warehouse(tmp_path / "archive") as path:
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        query = "SELECT count(DISTINCT run_id) AS n FROM probe_results"
        result = CliRunner().invoke(app, ["sql", query, "--db", str(path), "--format", "csv"])
        assert result.exit_code == 0, result.output  # the old code: 1, Read-only file system
        assert result.output.split() == ["n", "25"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_report_on_an_old_read_only_warehouse_refuses_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report needs tables the old schema lacks: it failed on the first one ('Catalog
    Error: Table with name site_phases does not exist!'). It now names the file, its schema
    version and what to do, and writes no page."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "reports"
    latest = max(m.number for m in load_migrations())
    with _read_only_old_warehouse(tmp_path / "archive") as path:
        argv = ["report", "--db", str(path), "--out", str(out), "--week", "2026-W10"]
        result = CliRunner().invoke(app, argv)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == (
        f"error: warehouse {path} has schema version 5, this nerfwatch needs {latest}, and it "
        "cannot be written to upgrade it; copy it somewhere writable and run "
        "`nerfwatch report --db COPY` (`nerfwatch sql` reads it as it stands)"
    )
    assert not out.exists()
