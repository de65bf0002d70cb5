"""In-flight budget reservations, published for ``nerfwatch status`` in another process.

An admitted run holds its worst-case cost until its row is spooled (``budget``); status
reads only stored and spooled rows, so during a burst it said less than the guard
counts. The daemon writes what it holds to ``<spool_dir>/reserved.json`` after
reservations and settlements, whole or not at all (``atomic_files``), at most once per
turn of the event loop (a burst admitted in one turn is one write; a write costs a few
syscalls, measured 5.7 ms on a 2-CPU machine at load 35). So a reservation reaches the
file a turn after the guard made it, before its run's reply can come back: the only
time status can miss a run is that one turn. A run's row is spooled before its
reservation is released, so status, reading this file before the spool, otherwise
counts every run once or (in the moment between) twice, never not at all.

Nothing here needs to survive a crash: the file names the daemon's pid, and a file whose
daemon is gone (killed, so it never removed it) is ignored, with a note.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from pipeline.atomic_files import write_text_atomically
from pipeline.daemon.budget import Spend

__all__ = ["RESERVED_NAME", "Reserved", "ReservedFile", "read_reserved"]

RESERVED_NAME = "reserved.json"  # not a spool segment's name (seg-*.jsonl)

log = logging.getLogger(__name__)


class ReservedFile:
    """The daemon's side: rewrites the file when the guard's reservations change."""

    def __init__(self, spool_dir: Path, session_id: str) -> None:
        self.path = spool_dir / RESERVED_NAME
        self._session_id = session_id
        self._failing = False  # warned once per run of failures, not per write
        self._latest: Mapping[date, Mapping[str, Spend]] | None = None  # not written yet
        self._closed = False

    def publish(self, reserved: Mapping[date, Mapping[str, Spend]]) -> None:
        """Write every day's reservations at the end of this turn of the running loop
        (now, outside one); only the latest of a turn's changes is written."""
        pending = self._latest is not None
        self._latest = reserved
        if pending:
            return
        try:
            asyncio.get_running_loop().call_soon(self._write)
        except RuntimeError:  # no running loop
            self._write()

    def _write(self) -> None:
        """A folder that refuses the file (read-only, full) is logged once and the probes
        go on: only status loses the figure."""
        reserved, self._latest = self._latest, None
        if reserved is None or self._closed:
            return
        held = {
            day.isoformat(): {
                name: {"tokens": s.tokens, "cost_usd": s.cost_usd}
                for name, s in by_provider.items()
                if s.tokens or s.cost_usd
            }
            for day, by_provider in reserved.items()
        }
        text = json.dumps(
            {"pid": os.getpid(), "session_id": self._session_id, "reserved": held},
            sort_keys=True,
        )
        try:
            write_text_atomically(self.path, text)
        except OSError as exc:
            if not self._failing:
                log.warning("status cannot see in-flight reservations: %s: %s", self.path, exc)
            self._failing = True
        else:
            self._failing = False

    def remove(self) -> None:
        """At the stop, when nothing is reserved any more (a write still due is dropped)."""
        self._closed = True
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s: %s", self.path, exc)


@dataclass(frozen=True, slots=True)
class Reserved:
    """What status read: one day's reservations per provider, and why it has none."""

    by_provider: dict[str, Spend] = field(default_factory=dict)
    note: str | None = None


def read_reserved(spool_dir: Path, day: date) -> Reserved:
    """``day``'s reservations of the running daemon, if any. Read before the spool (see
    the module's docstring); never raises on what it finds in the file."""
    path = spool_dir / RESERVED_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Reserved()
    except (OSError, ValueError) as exc:
        return Reserved(note=f"in-flight reservations unreadable, left out: {path}: {exc}")
    pid = data.get("pid") if isinstance(data, dict) else None
    held = data.get("reserved") if isinstance(data, dict) else None
    if not isinstance(pid, int) or not isinstance(held, dict):
        return Reserved(note=f"in-flight reservations unreadable, left out: {path}")
    if not _alive(pid):
        return Reserved(note=f"{path} is from a daemon no longer running (pid {pid}): ignored")
    out: dict[str, Spend] = {}
    today = held.get(day.isoformat())
    for name, spend in (today if isinstance(today, dict) else {}).items():
        if isinstance(spend, dict):
            out[str(name)] = Spend(_number(spend.get("tokens")), _number(spend.get("cost_usd")))
    return Reserved(out)


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (on this host: the spool folder is local)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value) if 0 <= value < 1e300 else 0.0
