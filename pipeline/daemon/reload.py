"""SIGHUP: re-read and validate the config file, then apply it without losing in-flight
probes. An invalid file keeps the running config; warehouse, spool, metrics port and
lock wait changes wait for a restart."""

from __future__ import annotations

import asyncio
import importlib
import logging
from dataclasses import replace
from pathlib import Path

from pipeline.config import Config
from pipeline.daemon.jobs import Scheduling
from pipeline.daemon.schedule import job_specs

__all__ = ["Reloading"]

log = logging.getLogger("nerfwatch.daemon")


class Reloading(Scheduling):
    def reload(self) -> None:
        """Re-read the config file (what SIGHUP does)."""
        self._spawn(self._reload())

    async def _reload(self) -> None:
        path = self.config.path
        if path is None:
            log.warning("reload ignored: the running config did not come from a file")
            return
        loader = self._config_loader or _load_config
        try:
            new = await asyncio.to_thread(loader, path)
        except Exception as exc:  # any invalid config: keep running the old one
            log.error("config reload failed, keeping the running config: %s", exc)
            self._record_event("reload_failed", str(exc)[:500])
            return
        if new.warehouse != self.config.warehouse:
            log.warning("config reload: warehouse/spool changes take effect after a restart")
            new = replace(new, warehouse=self.config.warehouse)
        old_d, new_d = self.config.daemon, new.daemon
        restart = ("metrics_port", "lock_wait_s", "probe_threads")
        if any(getattr(old_d, key) != getattr(new_d, key) for key in restart):
            log.warning(
                "config reload: metrics_port, lock_wait and probe_threads take effect after a"
                " restart"
            )
        assert self._caps is not None
        self._caps.configure(new)
        self.budget.configure(new.budget)
        self.alerts.configure(new.alerts)
        self.config = new
        self._apply_jobs(job_specs(new))
        self._reschedule_report(new)
        log.info("config reloaded from %s: %d jobs", path, len(self._specs))
        self._record_event("reload", f"{len(self._specs)} jobs")


def _load_config(path: Path) -> Config:
    module = importlib.import_module("pipeline.config")
    config: Config = module.load_config(path)
    return config
