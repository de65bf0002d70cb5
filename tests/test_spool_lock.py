"""Two daemons started on one data folder by mistake (same config, same site): the
second is refused before it writes anything, with one line naming the spool's lock and
the PID of the daemon holding it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.daemon.spool import Spool, SpoolLocked, list_segments
from probes.simulator import SimulatorHandle
from tests.support.daemon import every_second_probe, nerfwatch_run, simulator_provider, write_toml
from tests.support.waiting import wait_until

_MAIN = "from pipeline.cli import main; main()"


def test_a_second_spool_on_a_folder_names_the_lock_and_its_holder(tmp_path: Path) -> None:
    """The refusal said only 'in use by another daemon': no lock file, no PID to look at."""
    first = Spool(tmp_path / "spool")
    first.open()
    try:
        with pytest.raises(SpoolLocked) as refused:
            Spool(tmp_path / "spool").open()
    finally:
        first.close()
    lock = tmp_path / "spool" / ".lock"
    assert str(refused.value) == (
        f"spool {tmp_path / 'spool'} is in use by another daemon: {lock} is held by pid"
        f" {os.getpid()}"
    )


@pytest.mark.slow
def test_a_second_daemon_on_the_same_folder_is_refused_in_one_line(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    """``nerfwatch run`` twice on one config: the second exits 1 at once, before its
    warm start (no replay, no flush of the first one's spool), and the first runs on."""
    config = write_toml(
        tmp_path / "nerfwatch.toml",
        providers=[simulator_provider(simulator, "nova")],
        probes=[every_second_probe("short")],
        daemon={"flush_interval": "200ms"},
    )
    spool = tmp_path / "spool"
    with nerfwatch_run(config) as daemon:
        wait_until(lambda: bool(list_segments(spool)), 120, "the first daemon's spool segment")
        second = subprocess.run(
            [sys.executable, "-c", _MAIN, "run", "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=Path(__file__).resolve().parents[1],
        )
        assert daemon.poll() is None, "the first daemon must keep running"
    assert second.returncode == 1, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert f"{spool / '.lock'} is held by pid {daemon.pid}" in lines[0], lines
