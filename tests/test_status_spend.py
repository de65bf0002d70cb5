"""``nerfwatch status`` shows today's spend as the budget guard counts it.

Status summed ``cost_usd``, which is NULL for a run billed without usage (cut off by
shutdown mid-probe, or a 2xx reply that sent no usage), so it said $0 for spend the
guard counts at its worst case: a user reading status to see how close the day is to
its cap was told less than the guard knew.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.commands.daemon import _print_status
from pipeline.daemon.budget import worst_case
from pipeline.daemon.flush import Flusher, SegmentWriter
from pipeline.daemon.spool import Spool
from pipeline.daemon.state import DaySpend
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import make_config

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _row(minutes: int, run_status: str = "done", **extra: object) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=NOW - timedelta(minutes=minutes),
        provider="alpha",
        model="m",
        probe="short",
        task_family="arithmetic",
        run_status=run_status,
        context_target_tokens=2_000,
        max_output_tokens=512,
        **extra,  # type: ignore[arg-type]
    )


def _append(spool: Spool, rows: list[ProbeResult]) -> None:
    async def append() -> None:
        for row in rows:
            await spool.append(row.to_json())

    asyncio.run(append())


def test_status_counts_runs_billed_without_usage_at_their_worst_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stored: a priced run and a run shutdown cut off mid-probe; still in the spool: a
    2xx reply without usage. Status shows the guard's figure, the worst cases apart."""
    config = make_config(tmp_path)
    alpha = config.provider("alpha")
    directory = config.warehouse.spool_dir
    warehouse = Warehouse(config.warehouse.path)
    priced = _row(30, input_tokens=1_000, output_tokens=100, cost_usd=0.0014, http_status=200)
    aborted = _row(20, run_status="aborted", skip_reason="shutdown")
    spool = Spool(directory)
    spool.open()
    flusher = Flusher(spool, SegmentWriter(warehouse, directory))
    try:
        _append(spool, [priced, aborted])
        assert flusher.flush_once().error is None
        _append(spool, [_row(10, http_status=200)])  # waits in the spool
        guard_reads = DaySpend(warehouse, spool)(NOW.date(), {"alpha": alpha})["alpha"]
        status = gather_status(config, lock_wait_s=5, now=NOW)
    finally:
        flusher.close()
        spool.close()

    assert status.warehouse_error is None and status.spool_depth == 1
    (shown,) = [p for p in status.providers if p.provider == "alpha"]
    at_worst = 2 * worst_case(alpha, 2_000, 512).cost_usd
    assert at_worst > 0
    assert shown.today_worst_case_usd == pytest.approx(at_worst)
    assert shown.today_cost_usd == pytest.approx(0.0014 + at_worst)
    assert shown.today_cost_usd == pytest.approx(guard_reads.cost_usd)
    assert shown.today_tokens == int(guard_reads.tokens) == 1_100 + 2 * (2_000 + 512)
    _print_status(status)
    out = capsys.readouterr().out
    assert f"{shown.today_cost_usd:.4f} ({at_worst:.4f} at most)" in out, out
    assert "what the budget counts" in out, out
