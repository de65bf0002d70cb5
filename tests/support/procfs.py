"""What processes hold open and who their children are, read from /proc (Linux): for the
kill -9 tests, which must catch a process at a given moment (holding a file, inside a
transaction) rather than after a sleep."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["group_local_ports", "open_targets", "processes"]


def processes(
    *, ppid: int | None = None, pgrp: int | None = None, living: bool = False
) -> list[int]:
    """PIDs whose parent is ``ppid`` or whose process group is ``pgrp``; ``living``: not
    zombies (a zombie has closed its files and released its locks)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields after the name: state, ppid, pgrp, ...
        if living and fields[0] in ("Z", "X"):
            continue
        if int(fields[1]) == ppid or int(fields[2]) == pgrp:
            found.append(int(stat.parent.name))
    return found


def open_targets(pid: int) -> list[str]:
    """What each of ``pid``'s file descriptors points to (empty once it is gone)."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return []
    targets = []
    for fd in fds:
        try:
            targets.append(os.readlink(fd))
        except OSError:
            continue
    return targets


def group_local_ports(pgid: int) -> set[int]:
    """Local ports of the TCP sockets any process of group ``pgid`` has open (a client's
    local port is ``client_port`` in PostgreSQL's ``pg_stat_activity``)."""
    inodes = {
        target[8:-1]
        for pid in processes(pgrp=pgid)
        for target in open_targets(pid)
        if target.startswith("socket:[")
    }
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports
