"""A probe in flight while the machine sleeps: its latency is not a measurement.

The daemon runs in-process with the real runner against the simulator over loopback. A
suspend is what the kernel's clocks show: the wall clock jumps (time_machine) and
``CLOCK_BOOTTIME`` gains the time slept on ``CLOCK_MONOTONIC``, which stops (here it
simply keeps ticking, as it does while awake). The old code stored the probe's awake time
as its latency, a plausible figure for a request that really took nine hours.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import time_machine

from pipeline.config import ProbeConfig, ProviderConfig
from pipeline.daemon import Daemon, DaemonTuning
from pipeline.warehouse import Warehouse
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.simulator import SimulatorHandle
from tests.support.nova_daemon import nova_config
from tests.support.waiting import wait_until_async, within

QUIET = DaemonTuning(install_signals=False, schedule_report=False)
NINE_HOURS = timedelta(hours=9)


class Machine:
    """``time.clock_gettime_ns`` as the kernel answers after ``suspend``: BOOTTIME ahead
    of MONOTONIC by the time slept."""

    def __init__(self) -> None:
        self.slept_ns = 0
        self._real = time.clock_gettime_ns

    def clock_gettime_ns(self, clock: int) -> int:
        extra = self.slept_ns if clock == getattr(time, "CLOCK_BOOTTIME", -1) else 0
        return self._real(clock) + extra


class SleepsDuringSecondProbe:
    """The real runner; the machine suspends just after the second probe has begun."""

    def __init__(self, machine: Machine, clock: time_machine.Coordinates) -> None:
        self.machine, self.clock = machine, clock
        self.run_ids: list[str] = []

    async def __call__(
        self, provider: ProviderConfig, probe: ProbeConfig, **kwargs: Any
    ) -> ProbeResult:
        if len(self.run_ids) == 1:
            self.machine.slept_ns += int(NINE_HOURS.total_seconds() * 1e9)
            self.clock.shift(NINE_HOURS)
        self.run_ids.append("")  # claimed before the await: one probe is "the second"
        result = await run_probe(provider, probe, **kwargs)
        self.run_ids[self.run_ids.index("")] = result.run_id
        return result


@pytest.mark.skipif(not hasattr(time, "CLOCK_BOOTTIME"), reason="CLOCK_BOOTTIME is Linux's")
def test_a_probe_the_machine_slept_through_has_no_latency_and_is_flagged(
    tmp_path: Path,
    simulator: SimulatorHandle,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = nova_config(tmp_path, simulator, every_s=10.0)
    machine = Machine()
    monkeypatch.setattr(time, "clock_gettime_ns", machine.clock_gettime_ns)

    async def main() -> list[str]:
        start = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
        with time_machine.travel(start, tick=True) as clock:
            runner = SleepsDuringSecondProbe(machine, clock)
            daemon = Daemon(config, probe_fn=runner, tuning=QUIET)  # type: ignore[arg-type]
            task = asyncio.create_task(daemon.run())
            await wait_until_async(
                lambda: len(runner.run_ids) >= 3 and "" not in runner.run_ids[:3],
                what="three probes done, one across the suspend",
            )
            daemon.stop()
            await within(task, 120, "the daemon to stop")
            return runner.run_ids

    with caplog.at_level(logging.WARNING, logger="nerfwatch.daemon"):
        run_ids = asyncio.run(main())
    rows = Warehouse(config.warehouse.location).query(
        "SELECT run_id, error_class, ttft_ms, total_ms, output_tokens, score_strict,"
        " sanity_flags FROM probe_results WHERE run_status = 'done'"
    )
    by_id = {r["run_id"]: r for r in rows.iter_rows(named=True)}
    slept = by_id[run_ids[1]]
    assert slept["ttft_ms"] is None and slept["total_ms"] is None, slept
    assert "suspended" in slept["sanity_flags"], slept
    # what was measured without a clock stays: the answer, its score, the usage
    assert slept["error_class"] == "ok" and slept["output_tokens"], slept
    assert slept["score_strict"] is not None, slept
    for run_id in (run_ids[0], run_ids[2]):
        awake = by_id[run_id]
        assert awake["ttft_ms"] is not None and 0 <= awake["ttft_ms"] <= awake["total_ms"]
        assert "suspended" not in (awake["sanity_flags"] or []), awake
    said = [r.getMessage() for r in caplog.records if "slept" in r.getMessage()]
    assert said == [
        "probe nova/short was in flight while the machine slept 32400 s: its timings are"
        " dropped and the row is flagged 'suspended'"
    ]
