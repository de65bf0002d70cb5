"""The canned ``slowest_hours`` question ranks whole hours, not single answers.

It read the ``hourly`` view, which splits an hour by probe and source, so at one probe an
hour each "hour" held one answer and its "p95" was that answer: one slow answer among many
fast ones ranked above an hour that was slow throughout.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pipeline.warehouse import Warehouse
from pipeline.warehouse.queries import resolve_sql
from probes.ids import new_run_id
from probes.result import ProbeResult

# DuckDB's now() reads the machine clock, so the rows sit two and three days back from it
# (inside any 7-day window whatever the date); only hours relative to each other matter.
_NOW = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
SLOW_HOUR = _NOW - timedelta(days=2)
ONE_SLOW_ANSWER_HOUR = _NOW - timedelta(days=3)


def _probe(at: datetime, probe: str, ttft_ms: float) -> dict[str, object]:
    return ProbeResult(
        run_id=new_run_id(), started_at=at + timedelta(minutes=5), provider="p", model="m",
        probe=probe, task_family="arith", context_class="short", error_class="ok",
        ttft_ms=ttft_ms, total_ms=ttft_ms + 400.0, score_strict="correct",
    ).as_row()  # fmt: skip


def test_an_hour_slow_throughout_outranks_one_slow_answer(warehouse: Warehouse) -> None:
    rows = [_probe(SLOW_HOUR, f"probe_{i}", 900.0) for i in range(4)]
    rows += [_probe(ONE_SLOW_ANSWER_HOUR, "probe_0", 5_000.0)]
    rows += [_probe(ONE_SLOW_ANSWER_HOUR, f"probe_{i}", 200.0) for i in range(1, 4)]
    warehouse.insert_rows("probe_results", rows, key="run_id")
    found = warehouse.query(resolve_sql("slowest_hours")).to_dicts()
    assert found[0]["hour"].astimezone(UTC) == SLOW_HOUR, found
    assert found[0]["ttft_p50_ms"] == 900.0, found
    assert [row["answers"] for row in found] == [4, 4], found
    assert found[0]["ttft_p95_ms"] is None, "a p95 of 4 answers is shown"


def test_an_hour_with_too_few_answers_is_left_out(warehouse: Warehouse) -> None:
    rows = [_probe(SLOW_HOUR, "probe_0", 9_000.0), _probe(SLOW_HOUR, "probe_1", 9_000.0)]
    warehouse.insert_rows("probe_results", rows, key="run_id")
    assert warehouse.query(resolve_sql("slowest_hours")).is_empty()
