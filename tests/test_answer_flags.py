"""The flag rate counts flags about the answer's text, not the response's metadata.

``probes.flagged`` (the view every flag rate is built on: the report's chart and "This
week" column, the phases' flag signal, the "dumber answers" sign) counted any flag. A
server that reports 0 output tokens beside its text, a prompt cache, a reported model
name that differs or a count no column holds then read as flagged answers: 100 % for a
server that always reports usage that way. Rows go into a real warehouse on every
backend and are read back through the view.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from probes.runner import NO_OUTPUT_FLAG
from probes.sanity import ANSWER_FLAGS, FLAGS
from tests.support.warehouses import on_every_backend

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
METADATA_FLAGS = ["model_mismatch", "cache_hit", NO_OUTPUT_FLAG, "out_of_range:ttft_ms"]


def _row(flags: list[str]) -> dict[str, object]:
    return ProbeResult(
        run_id=new_run_id(), started_at=T0, provider="alpha", model="m", probe="short",
        task_family="arithmetic", context_class="short", error_class="ok", ttft_ms=100.0,
        total_ms=500.0, score_strict="correct", sanity_flags=flags,
    ).as_row()  # fmt: skip


def test_every_flag_is_decided_one_way_or_the_other() -> None:
    """A new flag in ``probes.sanity.FLAGS`` must be put on one side (and the view's list)."""
    assert set(FLAGS) == set(ANSWER_FLAGS) | {"model_mismatch", "cache_hit"}


@on_every_backend
@pytest.mark.parametrize("flag", [*ANSWER_FLAGS, *METADATA_FLAGS])
def test_only_answer_flags_count_as_flagged(warehouse: Warehouse, flag: str) -> None:
    warehouse.insert_rows("probe_results", [_row([flag]), _row([])], key="run_id")
    flagged = warehouse.query("SELECT flagged FROM probes ORDER BY flagged")["flagged"].to_list()
    assert flagged == [False, flag in ANSWER_FLAGS], flag


def test_an_answer_flag_beside_metadata_flags_still_counts(warehouse: Warehouse) -> None:
    warehouse.insert_rows("probe_results", [_row(["cache_hit", "repetition"])], key="run_id")
    assert warehouse.query("SELECT flagged FROM probes")["flagged"].to_list() == [True]
