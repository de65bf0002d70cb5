"""The canned ``cache_hits`` question counts the probes nerfwatch itself calls cache hits.

A server that reuses the chat template's few tokens ahead of the nonce (llama.cpp reports
them on every prompt) has not served a cached answer; the query once counted every probe
with any cached token, so such a provider read as all cache hits.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.warehouse import Warehouse
from pipeline.warehouse.queries import resolve_sql
from probes.ids import new_run_id
from probes.result import ProbeResult
from probes.sanity import cache_hit

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)


def _probe(provider: str, cached: int, prompt: int) -> dict[str, object]:
    flags = ["cache_hit"] if cache_hit(cached, prompt) else []  # as the runner sets it
    return ProbeResult(
        run_id=new_run_id(), started_at=T0, provider=provider, model="m", probe="long",
        task_family="kv_lookup", context_class="long", error_class="ok", ttft_ms=100.0,
        total_ms=500.0, score_strict="correct", input_tokens=prompt, cached_tokens=cached,
        sanity_flags=flags,
    ).as_row()  # fmt: skip


def test_template_tokens_are_not_cache_hits_but_a_cached_prompt_is(warehouse: Warehouse) -> None:
    rows = [_probe("template", 40, 2_000) for _ in range(3)]
    rows += [_probe("cached", 1_900, 2_000), _probe("cached", 0, 2_000)]
    warehouse.insert_rows("probe_results", rows, key="run_id")
    found = warehouse.query(resolve_sql("cache_hits"))
    by_provider = {row["provider"]: row for row in found.iter_rows(named=True)}
    assert by_provider["cached"]["cache_hits"] == 1, found
    assert by_provider["template"]["cache_hits"] == 0, found
    assert by_provider["template"]["any_cached"] == 3, found
