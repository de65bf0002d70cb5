"""``nerfwatch status`` decodes each waiting spool line's JSON once.

It decoded every line three times: to tell which segments the warehouse already holds
(``stored_segments``), for today's spend (``spool_spend``) and for last probes, errors
and rows lost (its own loop). A spool that grew for hours behind a held warehouse is
what status is run to look at, so the cost was paid when it mattered most.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.daemon.budget import worst_case
from pipeline.daemon.spool import Spool
from pipeline.daemon.state import DaySpend
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import make_config

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _row(minutes: int, **extra: Any) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=NOW - timedelta(minutes=minutes),
        provider="alpha",
        model="m",
        probe="short",
        task_family="arithmetic",
        run_status="done",
        context_target_tokens=2_000,
        max_output_tokens=512,
        **extra,
    )


def test_each_waiting_line_is_decoded_once_and_the_figures_are_the_guards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = make_config(tmp_path)
    alpha = config.provider("alpha")
    Warehouse(config.warehouse.path).migrate()  # so status asks which segments it holds
    rows = [
        _row(30, input_tokens=1_000, output_tokens=100, cost_usd=0.0014, http_status=200),
        _row(20, http_status=200),  # billed without usage: its worst case
        _row(10, error_class="overloaded", error_detail="busy", http_status=529),
    ]
    lines = [row.to_json() for row in rows]
    spool = Spool(config.warehouse.spool_dir)
    spool.open()
    try:

        async def append() -> None:
            for line in lines:
                await spool.append(line)

        asyncio.run(append())
        guard_reads = DaySpend(Warehouse(config.warehouse.path), spool)(
            NOW.date(), {"alpha": alpha}
        )["alpha"]
    finally:
        spool.close()

    decoded: Counter[str] = Counter()
    real_loads = json.loads

    def counting_loads(text: str | bytes, *args: Any, **kwargs: Any) -> Any:
        if isinstance(text, str) and text in lines:
            decoded[text] += 1
        return real_loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting_loads)
    status = gather_status(config, lock_wait_s=5, now=NOW)
    monkeypatch.undo()

    # Before the fix each line was decoded three times.
    assert decoded == Counter(dict.fromkeys(lines, 1)), decoded
    assert status.warehouse_error is None and status.spool_depth == 3
    (shown,) = [p for p in status.providers if p.provider == "alpha"]
    at_worst = worst_case(alpha, 2_000, 512)
    assert shown.today_cost_usd == pytest.approx(guard_reads.cost_usd)
    assert shown.today_cost_usd == pytest.approx(0.0014 + at_worst.cost_usd)
    assert shown.today_tokens == int(guard_reads.tokens) == 1_100 + 2_512
    assert shown.last_error == "overloaded: busy"
    assert shown.last_probe_at == NOW - timedelta(minutes=10)
