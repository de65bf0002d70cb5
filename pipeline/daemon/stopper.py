"""Stopping: the stop request (signals, ``stop()``, a caller's event, a time limit),
the flag every part consults, and the grace period for runs in flight.

The order of the whole stop is the service's (``service.Daemon._shutdown``); this part
owns only the request, the signals and the grace period.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from typing import Protocol

from pipeline.daemon.contract import DaemonStats

__all__ = ["Stopper"]

log = logging.getLogger("nerfwatch.daemon")

_AFTER_GRACE_S = 10.0  # for cancelled runs to spool their aborted rows


class _Fired(Protocol):
    @property
    def outstanding(self) -> int: ...

    async def wait_idle(self, timeout: float) -> None: ...


class _InFlight(Protocol):
    @property
    def in_flight(self) -> int: ...

    def cancel_unpersisted(self) -> int: ...


class Stopper:
    """Takes the stop request once (the first reason wins) and says when stopping began."""

    def __init__(
        self, stats: DaemonStats, *, install_signals: bool, on_reload: Callable[[], None]
    ) -> None:
        self._stats = stats
        self._install_signals = install_signals
        self._on_reload = on_reload
        self._requested = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stopping = False  # set by ``begin``: runs are refused from here on

    def is_stopping(self) -> bool:
        return self.stopping

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Remember the daemon's loop (for ``request`` from other threads)."""
        self._loop = loop

    def install_stop_signals(self) -> None:
        """SIGTERM/SIGINT stop (unless tuning turned signals off). Installed before the
        start-up, which may wait on a held warehouse for many seconds: a stop asked for
        then is taken when the start-up ends, and the daemon stops cleanly instead of
        dying mid-start."""
        if not self._install_signals or self._loop is None:
            return
        self._loop.add_signal_handler(signal.SIGTERM, self._request, "SIGTERM")
        self._loop.add_signal_handler(signal.SIGINT, self._request, "SIGINT")

    def install_reload_signal(self) -> None:
        """SIGHUP reloads the config; only once started, when there is a schedule to apply
        it to."""
        if not self._install_signals or self._loop is None:
            return
        self._loop.add_signal_handler(signal.SIGHUP, self._on_reload)

    def remove_signals(self) -> None:
        if not self._install_signals or self._loop is None:
            return
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._loop.remove_signal_handler(sig)

    def request(self, reason: str) -> None:
        """Ask for a stop (thread-safe)."""
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._request, reason)
        else:
            self._request(reason)

    def _request(self, reason: str) -> None:
        if not self._requested.is_set():
            log.info("stop requested (%s)", reason)
            self._stats.stop_reason = reason
            self._requested.set()

    async def wait(self, stop_after_s: float | None, stop_event: asyncio.Event | None) -> None:
        """Until a stop is requested, ``stop_event`` is set or ``stop_after_s`` passes."""
        waiters = [asyncio.ensure_future(self._requested.wait())]
        if stop_event is not None:
            waiters.append(asyncio.ensure_future(stop_event.wait()))
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=stop_after_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
        if not self._stats.stop_reason:
            self._stats.stop_reason = "stop_after" if not done else "stop_event"

    def begin(self) -> None:
        """From now on every part refuses new runs."""
        self.stopping = True

    async def end_fired(self, fired: _Fired) -> None:
        """After the scheduler's shutdown cancelled the runs it had fired but no gate had
        admitted yet (one waiting for a day's stored spend): wait for each to spool its
        ``shutdown`` row, which it does as it unwinds, after this call began."""
        if fired.outstanding:
            await fired.wait_idle(_AFTER_GRACE_S)

    async def end_in_flight(self, grace_s: float, fired: _Fired, runs: _InFlight) -> None:
        """Wait up to ``grace_s`` for fired runs, then cancel the runs still probing."""
        if fired.outstanding:
            await fired.wait_idle(grace_s)
        if runs.in_flight:
            log.warning("grace period over: aborting %d in-flight probes", runs.in_flight)
            runs.cancel_unpersisted()
            await fired.wait_idle(_AFTER_GRACE_S)
