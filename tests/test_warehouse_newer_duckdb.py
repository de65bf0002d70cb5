"""A warehouse file in a newer DuckDB's storage format stops the daemon and every command.

The file is ``fixtures/duckdb/written_by_duckdb_2.0.0.duckdb.gz`` (storage version 999;
DuckDB 1.5 reads 64 to 68), the one test_warehouse_extensions reads. Checked with the
``duckdb`` 2.0.1 wheel from PyPI in a separate venv: a 1.5 file that 2.0.1 only opens and
writes keeps its 1.5 format and still opens; a file 2.x creates, or copies with
``COPY FROM DATABASE`` into ``STORAGE_VERSION 'v2.0.0'``, is refused the same way.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.daemon import Daemon, DaemonError, DaemonTuning
from tests.support.daemon import make_config

NEWER_FILE = Path(__file__).parent / "fixtures" / "duckdb" / "written_by_duckdb_2.0.0.duckdb.gz"


def _newer_file(path: Path) -> str:
    """Write the DuckDB 2.0.0 file at ``path``; return its digest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.decompress(NEWER_FILE.read_bytes()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _untouched(path: Path, digest: str) -> bool:
    """Same bytes, and no WAL or other file written beside it."""
    beside = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))
    return hashlib.sha256(path.read_bytes()).hexdigest() == digest and beside == [path.name]


def _says_versions(message: str, path: Path) -> None:
    assert "\n" not in message.strip(), message
    assert str(path) in message, message
    assert "storage version 999" in message, message
    assert f"DuckDB {duckdb.__version__} reads 64 to 68" in message, message


def test_a_daemon_on_a_newer_duckdb_file_refuses_to_start(tmp_path: Path) -> None:
    """On the old code it logged 'warehouse not migrated yet ...; will retry at flush' and
    probed on, every flush failing and the spool growing for ever (the test timed out)."""
    config = make_config(tmp_path)
    path = config.warehouse.location
    assert isinstance(path, Path)
    digest = _newer_file(path)
    daemon = Daemon(config, tuning=DaemonTuning(install_signals=False, schedule_report=False))
    with pytest.raises(DaemonError) as caught:
        asyncio.run(asyncio.wait_for(daemon.run(), 60))
    assert caught.value.exit_code == 1
    _says_versions(str(caught.value), path)
    assert daemon.stats.scheduled == 0
    assert _untouched(path, digest)


@pytest.mark.parametrize(
    "command",
    [
        ["sql", "SELECT 1"],
        ["report", "--out", "r"],
        ["analyze"],
        ["releases", "list"],
        ["status"],
    ],
    ids=lambda command: "-".join(command[:2]),
)
def test_a_command_on_a_newer_duckdb_file_exits_1_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    path = tmp_path / "nerfwatch.duckdb"
    digest = _newer_file(path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, [*command, "--db", str(path)])
    assert result.exit_code == 1, result.output
    _says_versions(result.output, path)
    assert _untouched(path, digest)
