"""``nerfwatch status`` counts the runs in flight, as the budget guard does.

An admitted run holds its worst-case cost reserved until its row is stored; status read
only stored and spooled rows, so while a run was in flight (a burst, a slow provider) it
said less than the guard counted. The daemon now publishes its reservations
(``pipeline.daemon.reserved``) and status adds them, shown apart.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from pipeline.commands.daemon import _print_status
from pipeline.config import load_config
from pipeline.daemon.budget import worst_case
from pipeline.daemon.reserved import RESERVED_NAME, read_reserved
from pipeline.daemon.status import DaemonStatus, ProviderStatus, gather_status
from probes.simulator import SimulatorHandle
from tests.support.daemon import free_port, nerfwatch_run, scrape, simulator_provider, write_toml
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

CONTEXT, OUT = 300, 256  # the probe's context target and output cap: its reservation


def _nova(status: DaemonStatus) -> ProviderStatus:
    (nova,) = [p for p in status.providers if p.provider == "nova"]
    return nova


def test_status_counts_a_run_held_mid_probe_at_its_reservation(
    tmp_path: Path, simulator: SimulatorHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real daemon whose one probe the simulator holds (headers, a first chunk, then
    silence): status shows its worst case in flight. Stopped, the run is aborted and
    stored at that same worst case, and nothing is in flight any more."""
    port = free_port()
    path = write_toml(
        tmp_path / "nerfwatch.toml",
        providers=[simulator_provider(simulator, "nova", headers={"x-sim-fault": "stall"})],
        probes=[
            {
                "name": "short",
                "task": "arithmetic",
                "context": CONTEXT,
                "max_output_tokens": OUT,
                # the first run comes within a minute (the job's spread offset) and is
                # held for up to its timeout, a minute: long enough to read status twice
                "every": "1m",
                "timeout": "1m",
                "read_timeout": "1m",
            }
        ],
        daemon={"shutdown_grace": "200ms", "metrics_port": port, "flush_interval": "200ms"},
    )
    config = load_config(path)
    held = worst_case(config.provider("nova"), CONTEXT, OUT)
    with nerfwatch_run(path, output=tmp_path / "daemon.log") as proc:
        wait_until(lambda: scrape(port, "nerfwatch_probes_in_flight") == 1, 180, "a held probe")
        # the daemon writes its reservations at the end of the loop turn that made them
        # (reserved.py), a moment after the probe counts as in flight: wait for that turn
        seen: list[ProviderStatus] = []
        wait_until(
            lambda: seen.append(_nova(gather_status(config))) or seen[-1].today_reserved_usd > 0,
            60,
            "status to show the held run's reservation",
        )
        during = seen[-1]
        _print_status(gather_status(config))
        held_on = scrape(port, "nerfwatch_probes_in_flight") == 1
        assert held_on, "the probe's minute ran out before status was read: a stalled machine?"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0, (tmp_path / "daemon.log").read_text()
    after = _nova(gather_status(config))

    # Before the fix status said $0 and 0 tokens while the guard held the worst case.
    assert during.today_reserved_usd == pytest.approx(held.cost_usd) and held.cost_usd > 0
    assert during.today_cost_usd == pytest.approx(held.cost_usd)
    assert during.today_reserved_tokens == during.today_tokens == CONTEXT + OUT
    out = capsys.readouterr().out
    assert f"{held.cost_usd:.4f} ({held.cost_usd:.4f} in flight)" in out, out
    assert "runs in flight at their worst case" in out, out
    # Aborted mid-probe: stored at the worst case the guard settled it at, none in flight.
    assert after.today_reserved_usd == 0 and after.today_reserved_tokens == 0
    assert after.today_cost_usd == pytest.approx(held.cost_usd)
    assert after.today_worst_case_usd == pytest.approx(held.cost_usd)
    assert not (config.warehouse.spool_dir / RESERVED_NAME).exists()


def test_a_dead_daemons_reservations_are_ignored_with_a_note(tmp_path: Path) -> None:
    """A daemon killed (-9) never removes its file: a run it held is not in flight."""
    code = "import os; print(os.getpid())"
    gone = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True, check=True)
    pid = int(gone.stdout)
    spool = tmp_path / "spool"
    spool.mkdir()
    held = {"2026-03-02": {"nova": {"tokens": 556.0, "cost_usd": 0.0013}}}
    (spool / RESERVED_NAME).write_text(json.dumps({"pid": pid, "reserved": held}))
    reading = read_reserved(spool, date(2026, 3, 2))
    assert reading.by_provider == {}
    assert reading.note is not None and f"no longer running (pid {pid})" in reading.note


def test_a_running_daemons_reservations_of_that_day_are_read(tmp_path: Path) -> None:
    """A live pid's file: that day's reservations, no other day's; a torn file is a note."""
    spool = tmp_path / "spool"
    spool.mkdir()
    held = {
        "2026-03-02": {"nova": {"tokens": 556.0, "cost_usd": 0.0013}},
        "2026-03-03": {"nova": {"tokens": 9.0, "cost_usd": 9.0}},
    }
    path = spool / RESERVED_NAME
    path.write_text(json.dumps({"pid": os.getpid(), "reserved": held}))
    reading = read_reserved(spool, date(2026, 3, 2))
    assert reading.note is None
    assert (reading.by_provider["nova"].tokens, reading.by_provider["nova"].cost_usd) == (
        556.0,
        0.0013,
    )
    path.write_text('{"pid": 1, "reser')
    torn = read_reserved(spool, date(2026, 3, 2))
    assert torn.by_provider == {} and torn.note is not None and RESERVED_NAME in torn.note
