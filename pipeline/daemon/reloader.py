"""SIGHUP: re-read and validate the config file, then apply it without losing in-flight
probes. An invalid file keeps the running config; warehouse, spool, metrics port, lock
wait and probe thread changes wait for a restart."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pipeline.config import Config
from pipeline.daemon.events import SessionEvents
from pipeline.daemon.tasks import BackgroundTasks

__all__ = ["Reloader", "load_config"]

log = logging.getLogger("nerfwatch.daemon")

_RESTART_ONLY = ("metrics_port", "lock_wait_s", "probe_threads")


def load_config(path: Path) -> Config:
    """The default loader (imported late, like the CLI does)."""
    module = importlib.import_module("pipeline.config")
    config: Config = module.load_config(path)
    return config


class Reloader:
    """Loads the file the running config came from and hands a valid one to ``apply``
    (which returns how many probe jobs it now runs)."""

    def __init__(
        self,
        *,
        current: Callable[[], Config],
        apply: Callable[[Config], int],
        events: SessionEvents,
        tasks: BackgroundTasks,
        loader: Callable[[Path], Config] | None = None,
    ) -> None:
        self._current = current
        self._apply = apply
        self._events = events
        self._tasks = tasks
        self._loader = loader or load_config

    def reload(self) -> None:
        """Re-read the config file in the background (what SIGHUP does)."""
        self._tasks.spawn(self.reload_now())

    async def reload_now(self) -> None:
        running = self._current()
        path = running.path
        if path is None:
            log.warning("reload ignored: the running config did not come from a file")
            return
        try:
            new = await asyncio.to_thread(self._loader, path)
        except Exception as exc:  # any invalid config: keep running the old one
            log.error("config reload failed, keeping the running config: %s", exc)
            self._events.record("reload_failed", str(exc)[:500])
            return
        jobs = self._apply(_keep_restart_only(running, new))
        log.info("config reloaded from %s: %d jobs", path, jobs)
        self._events.record("reload", f"{jobs} jobs")


def _keep_restart_only(running: Config, new: Config) -> Config:
    """``new``, with what only a restart may change taken from ``running`` (warned)."""
    if new.warehouse != running.warehouse:
        log.warning("config reload: warehouse/spool changes take effect after a restart")
        new = replace(new, warehouse=running.warehouse)
    old_d, new_d = running.daemon, new.daemon
    if any(getattr(old_d, key) != getattr(new_d, key) for key in _RESTART_ONLY):
        log.warning(
            "config reload: metrics_port, lock_wait and probe_threads take effect after a restart"
        )
    return new
