"""One run alone: probe → row → spool, and exactly one row whatever happens to the run.

Built from real small parts: a spool in tmp_path, a gate with a real budget guard and
caps, and a plain async probe function (``LocalProbe``); no daemon, no scheduler.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import httpx

from pipeline.config import BudgetConfig, Config
from pipeline.daemon.budget import BudgetGuard, Reservation, Spend
from pipeline.daemon.contract import DaemonStats
from pipeline.daemon.gate import Gate
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.one_run import Runs
from pipeline.daemon.row_sink import RowSink
from pipeline.daemon.schedule import JobSpec, RunRequest, job_specs
from pipeline.daemon.spool import Spool
from probes.result import ProbeResult
from tests.support.daemon import LocalProbe, make_config

PLANNED = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@dataclass
class _Parts:
    """The run under test and what it writes to: its spool, stats and budget."""

    config: Config
    spool: Spool
    stats: DaemonStats
    budget: BudgetGuard
    runs: Runs
    observed: list[ProbeResult] = field(default_factory=list)
    stopping: list[bool] = field(default_factory=lambda: [False])

    @property
    def spec(self) -> JobSpec:
        return job_specs(self.config)["alpha/short"]

    def rows(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.spool.iter_pending()]

    def admit(self) -> Reservation:
        reservation = self.budget.reserve(self.spec.provider, self.spec.probe)
        assert isinstance(reservation, Reservation)
        return reservation


def _parts(
    tmp_path: Path,
    probe: Callable[[JobSpec], Any],
    after_result: Callable[[ProbeResult], None] | None = None,
) -> _Parts:
    config = make_config(tmp_path)
    spool = Spool(tmp_path / "spool")
    spool.open()
    stats, metrics = DaemonStats(), Metrics()
    budget = BudgetGuard(BudgetConfig())
    stopping = [False]
    gate = Gate(config, budget=budget, stopping=lambda: stopping[0])
    sink = RowSink(HeldRows(spool), stats=stats, metrics=metrics, site="test")
    observed: list[ProbeResult] = []
    runs = Runs(gate, probe, sink, metrics=metrics, after_result=after_result or observed.append)
    return _Parts(config, spool, stats, budget, runs, observed, stopping)


def _call(local: LocalProbe) -> Callable[[JobSpec], Any]:
    client = cast(httpx.AsyncClient, None)  # the protocol wants one; LocalProbe never uses it

    async def probe(spec: JobSpec) -> ProbeResult:
        return await local(spec.provider, spec.probe, client=client, probe_site="test")

    return probe


def test_a_probe_result_is_spooled_priced_observed_and_settled(tmp_path: Path) -> None:
    parts = _parts(tmp_path, _call(LocalProbe(input_tokens=1000, output_tokens=500)))

    asyncio.run(parts.runs.run(RunRequest(parts.spec, PLANNED), parts.admit()))
    parts.spool.close()

    [row] = parts.rows()
    assert row["run_status"] == "done" and row["provider"] == "alpha"
    assert abs(row["cost_usd"] - (1000 * 1.0 + 500 * 4.0) / 1e6) < 1e-12  # priced first
    assert [r.run_id for r in parts.observed] == [row["run_id"]]
    assert parts.stats.done == 1 and parts.runs.in_flight == 0
    assert parts.budget.spent_by("alpha").tokens == 1500  # what was used, not reserved


def test_a_failing_probe_function_leaves_one_aborted_row(tmp_path: Path) -> None:
    async def broken(spec: JobSpec) -> ProbeResult:
        raise KeyError("bug in a probe function")

    parts = _parts(tmp_path, broken)

    asyncio.run(parts.runs.run(RunRequest(parts.spec, PLANNED), parts.admit()))
    parts.spool.close()

    [row] = parts.rows()
    assert (row["run_status"], row["skip_reason"]) == ("aborted", "internal_error")
    assert row["error_detail"] == "KeyError"
    assert parts.observed == [] and parts.stats.aborted == 1
    assert parts.budget.spent_by("alpha") == Spend()  # nothing was sent


def test_a_failure_after_the_row_is_spooled_adds_no_second_row(tmp_path: Path) -> None:
    def corrupt(result: ProbeResult) -> None:
        raise RuntimeError("alert state corrupt")

    parts = _parts(tmp_path, _call(LocalProbe()), after_result=corrupt)

    asyncio.run(parts.runs.run(RunRequest(parts.spec, PLANNED), parts.admit()))
    parts.spool.close()

    assert [r["run_status"] for r in parts.rows()] == ["done"]


def test_a_run_cut_off_while_probing_is_aborted_and_its_reservation_spent(
    tmp_path: Path,
) -> None:
    local = LocalProbe(gate=asyncio.Event())  # never set: the probe hangs
    parts = _parts(tmp_path, _call(local))
    reservation = parts.admit()

    async def main() -> int:
        task = asyncio.ensure_future(parts.runs.run(RunRequest(parts.spec, PLANNED), reservation))
        await asyncio.wait_for(local.started.wait(), timeout=5)
        cancelled = parts.runs.cancel_unpersisted()
        await task
        return cancelled

    assert asyncio.run(main()) == 1
    parts.spool.close()

    [row] = parts.rows()
    assert (row["run_status"], row["skip_reason"]) == ("aborted", "shutdown")
    assert parts.budget.spent_by("alpha").tokens == reservation.tokens  # may have been billed


def test_a_run_the_stop_overtook_while_it_waited_for_a_slot_is_skipped(tmp_path: Path) -> None:
    hold = LocalProbe(gate=asyncio.Event())
    parts = _parts(tmp_path, _call(hold))
    spec = parts.spec  # alpha allows two probes at a time: two hold it, a third waits

    async def main() -> None:
        runs = [
            asyncio.ensure_future(parts.runs.run(RunRequest(spec, PLANNED), parts.admit()))
            for _ in range(3)
        ]
        while hold.active < 2:
            await asyncio.sleep(0.01)
        parts.stopping[0] = True
        assert hold.gate is not None
        hold.gate.set()
        await asyncio.wait_for(asyncio.gather(*runs), timeout=10)

    asyncio.run(main())
    parts.spool.close()

    rows = sorted((r["run_status"], r["skip_reason"], r["started_at"]) for r in parts.rows())
    assert [r[:2] for r in rows] == [("done", None), ("done", None), ("skipped", "shutdown")]
    assert rows[2][2] == PLANNED.isoformat()  # a skipped row is stamped when it was due
    assert parts.stats.rows == 3 and parts.budget.spent_by("alpha").tokens == 2 * 220
