"""The reloader alone: a valid file reaches ``apply`` (restart-only parts kept), an
invalid one keeps the running config; both leave a lifecycle event in a real spool."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

from pipeline.config import Config, WarehouseConfig
from pipeline.daemon.events import SessionEvents
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.reloader import Reloader
from pipeline.daemon.spool import Spool
from pipeline.daemon.tasks import BackgroundTasks
from tests.support.daemon import make_config


def _reload(tmp_path: Path, running: Config, loaded: Config | Exception) -> list[Config]:
    """Reload once; return what ``apply`` received. Events land in tmp_path/spool."""
    applied: list[Config] = []

    def loader(path: Path) -> Config:
        assert path == running.path
        if isinstance(loaded, Exception):
            raise loaded
        return loaded

    def apply(new: Config) -> int:
        applied.append(new)
        return 7

    async def main() -> None:
        spool = Spool(tmp_path / "spool")
        spool.open()
        tasks = BackgroundTasks()
        events = SessionEvents(HeldRows(spool), "session-1", tasks)
        reloader = Reloader(
            current=lambda: running, apply=apply, events=events, tasks=tasks, loader=loader
        )
        reloader.reload()
        await tasks.drain()
        spool.close()

    asyncio.run(main())
    return applied


def _events(tmp_path: Path) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in Spool(tmp_path / "spool").iter_pending()]
    return [(r["kind"], r["detail"]) for r in rows]


def test_a_valid_file_is_applied_but_the_warehouse_waits_for_a_restart(tmp_path: Path) -> None:
    running = replace(make_config(tmp_path), path=tmp_path / "nerfwatch.toml")
    moved = WarehouseConfig(path=tmp_path / "other.duckdb", spool_dir=tmp_path / "elsewhere")
    loaded = replace(running, warehouse=moved, budget=replace(running.budget))

    [applied] = _reload(tmp_path, running, loaded)

    assert applied.warehouse == running.warehouse
    assert _events(tmp_path) == [("reload", "7 jobs")]


def test_an_invalid_file_keeps_the_running_config(tmp_path: Path) -> None:
    running = replace(make_config(tmp_path), path=tmp_path / "nerfwatch.toml")

    applied = _reload(tmp_path, running, ValueError("probes.every: expected a duration"))

    assert applied == []
    [(kind, detail)] = _events(tmp_path)
    assert kind == "reload_failed" and "expected a duration" in detail


def test_a_config_not_read_from_a_file_is_not_reloaded(tmp_path: Path) -> None:
    running = make_config(tmp_path)  # path=None

    assert _reload(tmp_path, running, make_config(tmp_path)) == []
    assert _events(tmp_path) == []
