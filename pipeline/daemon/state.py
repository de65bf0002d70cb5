"""What the daemon reads back: a day's spend, alerts left open, prompt sizing.

All come from the warehouse (read-only) plus, for spend, rows still in the spool, so
a restart neither forgets the day's budget, nor re-sends an alert already open, nor
sizes its first prompts as if it had never seen the provider's tokenizer. A day's spend
is read at start and again for each day the budget first meets later (``DaySpend``).

A stored probe the provider took but whose usage never came back (its ``cost_usd`` is
NULL) counts at its worst case, as the budget settled it before the restart: counted as
$0, a restart forgot it and the day could spend past its cap. The same holds for such a
row still in the spool (``spool_spend``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime, time
from typing import Any

from pipeline.config import ProviderConfig
from pipeline.daemon.budget import (
    ABORTED_IN_FLIGHT,
    SENT_CLASSES,
    Spend,
    billed_without_usage,
    worst_case,
)
from pipeline.daemon.spool import Spool, SpoolError
from pipeline.daemon.spooled import SpooledProbe, spooled_object, spooled_probe
from pipeline.warehouse import Warehouse, WarehouseError

__all__ = [
    "DaySpend",
    "OtherSitesSpend",
    "add_spooled_spend",
    "learned_chars_per_token",
    "open_alerts",
    "spool_spend",
    "spooled_live_probe",
    "today_spend",
]

LEARN_MIN_CHARS = 2_000  # shorter prompts are dominated by the chat template's tokens
LEARN_LAST = 20  # the newest rows per (provider, family): a tokenizer can change

log = logging.getLogger(__name__)


def day_start(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


# As budget.billed_without_usage: no usage count, and a 2xx reply, a sent-then-silent
# class, or a run shutdown aborted mid-probe.
_BILLED_WITHOUT_USAGE = (
    "input_tokens IS NULL AND output_tokens IS NULL AND (http_status BETWEEN 200 AND 299"
    f" OR (http_status IS NULL AND error_class IN ({', '.join(map(repr, sorted(SENT_CLASSES)))}))"
    " OR (run_status = '{}' AND skip_reason = '{}'))".format(*ABORTED_IN_FLIGHT)
)
_DAY_SPEND = f"""
SELECT provider,
  sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) AS tokens,
  sum(CASE WHEN {_BILLED_WITHOUT_USAGE} THEN 0 ELSE coalesce(cost_usd, 0) END) AS cost,
  sum(CASE WHEN {_BILLED_WITHOUT_USAGE} THEN coalesce(context_target_tokens, 0) END) AS unknown_in,
  sum(CASE WHEN {_BILLED_WITHOUT_USAGE} THEN coalesce(max_output_tokens, 0) END) AS unknown_out
FROM probe_results
WHERE source = 'live' AND started_at >= ? AND started_at < ? {{site}}
GROUP BY provider
"""


def today_spend(
    warehouse: Warehouse,
    day: date,
    providers: Mapping[str, ProviderConfig],
    *,
    site: str | None = None,
    other_sites: bool = False,
) -> dict[str, Spend]:
    """Tokens and cost of live probes stored for ``day`` (UTC), per provider; a probe
    billed without usage at its worst case under the provider's configured prices.
    ``site``: only that probe site's rows (a lake), else every row; ``other_sites``:
    every row but that site's (a lake-wide budget's view of the others)."""
    bounds = [day_start(day), day_start(date.fromordinal(day.toordinal() + 1))]
    if site is None:
        frame = warehouse.query(_DAY_SPEND.format(site=""), bounds)
    else:
        where = "AND probe_site IS DISTINCT FROM ?" if other_sites else "AND probe_site = ?"
        frame = warehouse.query(_DAY_SPEND.format(site=where), [*bounds, site])
    out: dict[str, Spend] = {}
    for row in frame.iter_rows(named=True):
        name = row["provider"]
        spend = out[name] = Spend(float(row["tokens"] or 0), float(row["cost"] or 0))
        if row["unknown_in"] is None:  # no row billed without usage
            continue
        provider = providers.get(name)
        if provider is None:
            log.warning("%s: probes billed without usage on %s, but no prices: $0", name, day)
            spend.tokens += float(row["unknown_in"]) + float(row["unknown_out"])
            continue
        most = worst_case(provider, float(row["unknown_in"]), float(row["unknown_out"]))
        spend.tokens += most.tokens
        spend.cost_usd += most.cost_usd
        spend.worst_case_usd += most.cost_usd
    return out


def spool_spend(
    lines: Iterable[str], day: date, providers: Mapping[str, ProviderConfig] | None = None
) -> dict[str, Spend]:
    """The same sums over spooled rows not yet in the warehouse, a probe billed without
    usage at its worst case as in ``today_spend``."""
    out: dict[str, Spend] = {}
    for line in lines:
        row = spooled_object(line)
        probe = None if row is None else spooled_live_probe(row)
        if row is not None and probe is not None and probe.started_at.date() == day:
            add_spooled_spend(out, row, probe, providers or {})
    return out


def spooled_live_probe(row: dict[str, Any]) -> SpooledProbe | None:
    """``row`` as a live probe whose spend counts, or None (another source, an event,
    a damaged line: the next flush quarantines it)."""
    return spooled_probe(row) if row.get("source") == "live" else None


def add_spooled_spend(
    out: dict[str, Spend],
    row: dict[str, Any],
    probe: SpooledProbe,
    providers: Mapping[str, ProviderConfig],
) -> None:
    """Add one spooled live probe's spend to ``out`` (status decodes each line once and
    calls this, ``spool_spend`` for the budget's start)."""
    spend = out.setdefault(probe.provider, Spend())
    provider = providers.get(probe.provider)
    run = (probe.run_status, row.get("skip_reason"))
    unknown = billed_without_usage(
        probe.input_tokens, probe.output_tokens, probe.http_status, probe.error_class, run
    )
    if unknown and provider is not None:
        most = worst_case(provider, probe.context_target_tokens, probe.max_output_tokens)
        spend.tokens += most.tokens
        spend.cost_usd += most.cost_usd
        spend.worst_case_usd += most.cost_usd
        return
    spend.tokens += probe.tokens
    spend.cost_usd += probe.cost_usd


class DaySpend:
    """One UTC day's live spend of this daemon's site: rows in the warehouse plus rows
    still in the spool. On a lake each site's cap is its own (its config's, probed with
    its keys) unless ``budget.scope = "lake"``: then ``OtherSitesSpend`` adds the other
    sites' stored spend, read again before admissions, not only when a day is first read.

    Flushes are held off (``paused``) between the two reads, so a row moving from the
    spool into the warehouse meanwhile is counted once. Best effort, as at start-up: a
    warehouse that cannot be read (busy, unreachable) or an unreadable segment is logged
    and its rows left out.
    """

    def __init__(
        self,
        warehouse: Warehouse,
        spool: Spool,
        *,
        site: str | None = None,
        paused: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self._warehouse = warehouse
        self._spool = spool
        self._site = site  # a lake: this site's rows (its spool holds only its own)
        self._paused = paused

    def __call__(self, day: date, providers: Mapping[str, ProviderConfig]) -> dict[str, Spend]:
        """``providers``: the prices rows billed without usage count at (the budget's
        current ones, reloads included)."""
        unreadable: list[SpoolError] = []
        with self._paused():
            try:
                spent = today_spend(self._warehouse, day, providers, site=self._site)
            except WarehouseError as exc:
                log.warning("could not read the spend of %s from the warehouse: %s", day, exc)
                spent = {}
            pending = spool_spend(self._spool.iter_pending(unreadable), day, providers)
        for error in unreadable:  # the flush names them too
            log.warning("the spend of %s leaves out what waits in it: %s", day, error)
        for name, spend in pending.items():
            mine = spent.setdefault(name, Spend())
            mine.tokens += spend.tokens
            mine.cost_usd += spend.cost_usd
            mine.worst_case_usd += spend.worst_case_usd
        return spent


class OtherSitesSpend:
    """One UTC day's stored live spend of every site but this one, for a budget whose
    caps span the lake (``budget.scope = "lake"``); read again and again through the
    day, since other sites spend meanwhile. None when the lake cannot be read (the
    guard then keeps what it read last)."""

    def __init__(self, warehouse: Warehouse, site: str) -> None:
        self._warehouse = warehouse
        self._site = site

    def __call__(
        self, day: date, providers: Mapping[str, ProviderConfig]
    ) -> dict[str, Spend] | None:
        try:
            return today_spend(self._warehouse, day, providers, site=self._site, other_sites=True)
        except WarehouseError as exc:
            log.warning("could not read the other sites' spend of %s: %s", day, exc)
            return None


def open_alerts(warehouse: Warehouse) -> set[str]:
    """Providers whose latest health alert is 'triggered' (not yet resolved)."""
    frame = warehouse.query(
        "SELECT provider FROM ("
        " SELECT provider, kind, row_number() OVER"
        "  (PARTITION BY provider ORDER BY occurred_at DESC) AS n"
        " FROM alert_events WHERE kind IN ('triggered', 'resolved') AND provider IS NOT NULL)"
        " WHERE n = 1 AND kind = 'triggered'"
    )
    return set(frame["provider"].to_list()) if frame.height else set()


def learned_chars_per_token(warehouse: Warehouse) -> dict[str, dict[str, float]]:
    """Per provider and task family, the median characters per token of recent prompts.

    From rows that report both the prompt's characters and the provider's input tokens
    (the template's few tokens are negligible at 2,000 characters and more).
    """
    frame = warehouse.query(
        "SELECT provider, task_family, median(prompt_chars / input_tokens) AS ratio FROM ("
        " SELECT provider, task_family, prompt_chars, input_tokens,"
        "  row_number() OVER (PARTITION BY provider, task_family ORDER BY started_at DESC) AS k"
        " FROM probe_results"
        " WHERE source = 'live' AND prompt_chars >= ? AND input_tokens > 0"
        ") WHERE k <= ? GROUP BY ALL",
        [LEARN_MIN_CHARS, LEARN_LAST],
    )
    out: dict[str, dict[str, float]] = {}
    for row in frame.iter_rows(named=True):
        out.setdefault(row["provider"], {})[row["task_family"]] = float(row["ratio"])
    return out
