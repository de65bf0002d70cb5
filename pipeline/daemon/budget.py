"""Daily token and cost caps, total and per provider, checked before each probe.

A probe is priced before it runs at its worst case (full context target in at the
dearest input rate, a cache write's included; every ``max_output_tokens`` out) and the
estimate is reserved until the real usage is known: a probe whose prompt is no larger
than its target then settles at or below its reservation, so admitting a probe only
while spend plus reservations fit the cap keeps the day's settled spend within it.
Long-context probes may only spend up to ``long_share`` of a cap, so as the day's spend
approaches the cap they stop first and the cheap short probes keep the time series
alive. Days are UTC days, and a run's spend counts on the day its row is stamped.

A day's ledger starts from what is already stored for it (``load_day``: the warehouse
and the spool, as at start-up), read the first time the guard is asked about that day,
not only for the day the process started on: a clock days ahead at boot and corrected
back later returns to a day whose spend this process never saw.

With ``budget.scope = "lake"`` (sites sharing one key) the caps also count the other
sites' stored spend (``load_others``), read again before admissions at most every
``others_every_s``: another site's run counts here once its row is in the lake, so the
sites together can pass a cap by what is in flight or not yet flushed at once (README).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime

from pipeline.config import BudgetConfig, BudgetLimits, ProbeConfig, ProviderConfig
from probes.pricing import cost_usd, worst_case_cost_usd
from probes.result import ProbeResult

__all__ = [
    "ABORTED_IN_FLIGHT",
    "SENT_CLASSES",
    "BudgetGuard",
    "DayLoader",
    "Reservation",
    "Spend",
    "billed_without_usage",
    "estimate",
    "result_usage",
    "worst_case",
]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Spend:
    tokens: float = 0.0
    cost_usd: float = 0.0
    unknown: bool = False  # billed, but no usage came back: settle at the reservation
    day: date | None = None  # the UTC day its row is stamped (None: the reservation's)
    # of cost_usd, what stored rows billed without usage count at their worst case
    # (``state.today_spend``): shown apart by ``nerfwatch status``, the guard adds it in;
    # not compared (what the caps see is tokens and cost_usd)
    worst_case_usd: float = field(default=0.0, compare=False)


@dataclass(slots=True)
class _Ledger:
    """One UTC day: settled spend and in-flight reservations, per provider."""

    spent: dict[str, Spend] = field(default_factory=dict)
    reserved: dict[str, Spend] = field(default_factory=dict)


_KEEP_DAYS = 7  # days either side of today whose ledgers are kept (others: read again)


@dataclass(frozen=True, slots=True)
class Reservation:
    provider: str
    tokens: float
    cost_usd: float
    day: date


def estimate(provider: ProviderConfig, probe: ProbeConfig) -> Reservation:
    """Worst-case tokens and cost of one run, for today's reservation.

    Not ``nerfwatch plan``'s per-run figure: that one is the expected cost (input at the
    input rate), which a cache-writing probe can exceed by a quarter or more.
    """
    most = worst_case(provider, probe.context_tokens, probe.max_output_tokens)
    return Reservation(provider.name, most.tokens, most.cost_usd, _today())


def worst_case(provider: ProviderConfig, context_tokens: float, max_output_tokens: float) -> Spend:
    """The most a run of this size can use: what a probe is reserved at, and what a
    stored row billed without usage counts at after a restart (``state.today_spend``)."""
    tokens = float(context_tokens + max_output_tokens)
    return Spend(tokens, worst_case_cost_usd(provider, context_tokens, max_output_tokens))


# Reached the provider without an answer it refused: the prompt may have been processed
# and billed though no usage came back (a cut stream never sends its usage chunk, §2).
# state.today_spend's SQL says the same for stored rows.
SENT_CLASSES = frozenset({"timeout_first_token", "stall"})


# A run cut off by shutdown while probing (``one_run``): settled at its reservation, since
# the provider may have billed it, and stored as a bare row without usage.
ABORTED_IN_FLIGHT = ("aborted", "shutdown")


def billed_without_usage(
    input_tokens: float | None,
    output_tokens: float | None,
    status: int | None,
    error_class: str | None,
    run: tuple[str | None, str | None] = (None, None),
) -> bool:
    """The provider took the probe (a 2xx reply, or sent and then silent, or ``run``, its
    status and skip reason, says shutdown cut it off mid-probe) but no usage came back:
    neither count is known."""
    if input_tokens is not None or output_tokens is not None:
        return False
    answered = status is not None and 200 <= status < 300
    sent = status is None and error_class in SENT_CLASSES
    return answered or sent or run == ABORTED_IN_FLIGHT


def _billed_without_usage(result: ProbeResult) -> bool:
    return billed_without_usage(
        result.input_tokens, result.output_tokens, result.http_status, result.error_class
    )


def result_usage(provider: ProviderConfig, result: ProbeResult) -> Spend:
    """What a finished probe consumed; fills ``cost_usd`` as the runner would when the
    probe function left it empty (same pricing code as ``probes.runner``). A probe the
    provider took but whose usage never came back is ``unknown``: settled at its
    reservation, not at nothing, since the provider may have billed it."""
    day = result.started_at.astimezone(UTC).date()
    if _billed_without_usage(result):
        return Spend(unknown=True, day=day)
    tokens = float((result.input_tokens or 0) + (result.output_tokens or 0))
    if result.cost_usd is None:
        result.cost_usd = cost_usd(
            provider,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cached_tokens=result.cached_tokens,
            cache_write_tokens=result.cache_write_tokens,
        )
    return Spend(tokens, result.cost_usd or 0.0, day=day)


def _today() -> date:
    return datetime.now(UTC).date()


# A UTC day's stored spend per provider, rows billed without usage at these providers' prices.
DayLoader = Callable[[date, Mapping[str, ProviderConfig]], Mapping[str, Spend]]
# The same for the other sites of a lake; None when it could not be read.
OthersLoader = Callable[[date, Mapping[str, ProviderConfig]], Mapping[str, Spend] | None]


class BudgetGuard:
    """Tracks each day's spend plus in-flight reservations against the caps.

    Days are kept apart, not cleared at midnight: a wall clock stepped back across
    midnight (NTP, a corrected clock) returns to a day whose spend is still known,
    instead of starting it afresh with a whole cap to spend again.
    """

    def __init__(
        self,
        budget: BudgetConfig,
        *,
        long_share: float = 0.8,
        today: Callable[[], date] = _today,
        load_day: DayLoader | None = None,
        load_others: OthersLoader | None = None,
        others_every_s: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget = budget
        self.long_share = long_share
        self._today = today
        self._day = today()
        self._days: dict[date, _Ledger] = {}  # a day has a ledger once its spend was read
        self.load_day = load_day  # None: nothing stored to read (tests, a fresh start)
        self._prices: dict[str, ProviderConfig] = {}  # what load_day prices stored rows at
        # budget.scope = "lake": the other sites' stored spend per day, as last read
        self.load_others = load_others
        self._others: dict[date, dict[str, Spend]] = {}
        self._others_read_at: dict[date, float] = {}
        self._others_every_s = others_every_s
        self._monotonic = monotonic
        self._reading_others = False
        # told every day's reservations after each change (``reserved.ReservedFile``), so
        # ``nerfwatch status`` in another process counts what is in flight as this does
        self.on_reserved: Callable[[Mapping[date, Mapping[str, Spend]]], None] | None = None

    @property
    def spent(self) -> dict[str, Spend]:
        """Today's settled spend per provider."""
        return self._ledger(self._day).spent

    @property
    def _reserved(self) -> dict[str, Spend]:
        return self._ledger(self._day).reserved

    def configure(self, budget: BudgetConfig) -> None:
        """New caps at once; a new ``scope`` only at a restart (start-up wires the reader
        of the other sites' spend, or not)."""
        if budget.scope != self.budget.scope:
            log.warning("config reload: budget.scope takes effect after a restart")
            budget = replace(budget, scope=self.budget.scope)
        self.budget = budget

    def use_prices(self, providers: Iterable[ProviderConfig]) -> None:
        """The providers a day's stored spend is priced with from now on (start and each
        reload), as new probes are: a day first read after a reload that changed a price
        or added a provider read its rows billed without usage at the start-up prices, or
        at $0. A provider a reload removed keeps its last prices: its rows still count
        against the total cap."""
        self._prices = {**self._prices, **{p.name: p for p in providers}}

    async def prepare(self) -> None:
        """Read today's stored spend in a thread, if not read yet, so that ``reserve``
        does not block the event loop on the warehouse (it would read it itself); and, for
        a lake-wide budget, the other sites' spend when due."""
        day = self._today()
        if day not in self._days and self.load_day is not None:
            spent = await asyncio.to_thread(self.load_day, day, dict(self._prices))
            if day not in self._days:  # not read meanwhile by a synchronous call
                self._start_ledger(day, spent)
        await self._read_others(day)

    async def _read_others(self, day: date) -> None:
        """The other sites' stored spend of ``day``, unless read within ``others_every_s``
        or being read (one read at a time; admissions meanwhile use the last one)."""
        last = self._others_read_at.get(day)
        due = last is None or self._monotonic() - last >= self._others_every_s
        if self.load_others is None or self._reading_others or not due:
            return
        self._reading_others = True
        try:
            others = await asyncio.to_thread(self.load_others, day, dict(self._prices))
        finally:
            self._reading_others = False
        self._others_read_at[day] = self._monotonic()
        if others is not None:  # else: unreadable, keep the last (logged by the reader)
            self._others[day] = {n: Spend(s.tokens, s.cost_usd) for n, s in others.items()}

    def _ledger(self, day: date) -> _Ledger:
        ledger = self._days.get(day)
        if ledger is None:
            stored = self.load_day(day, dict(self._prices)) if self.load_day else {}
            ledger = self._start_ledger(day, stored)
        return ledger

    def _start_ledger(self, day: date, spent: Mapping[str, Spend]) -> _Ledger:
        ledger = self._days[day] = _Ledger()
        for name, spend in spent.items():
            ledger.spent[name] = Spend(spend.tokens, spend.cost_usd)
        if spent:
            log.info("budget: %s starts from its stored spend (%d providers)", day, len(spent))
        return ledger

    def _roll(self) -> None:
        today = self._today()
        if today != self._day:
            self._day = today
            for old in [d for d in self._days if abs((d - today).days) > _KEEP_DAYS]:
                del self._days[old]
            for old in [d for d in self._others if abs((d - today).days) > _KEEP_DAYS]:
                del self._others[old]
            # a failed read stamps its day without a reading: prune the stamps on their own
            for old in [d for d in self._others_read_at if abs((d - today).days) > _KEEP_DAYS]:
                del self._others_read_at[old]

    def _totals(self, name: str | None) -> Spend:
        """Spent plus reserved (plus, for a lake-wide budget, the other sites' stored
        spend), for one provider or (None) all of them."""
        out = Spend()
        others = self._others.get(self._day, {})
        for source in (self.spent, self._reserved, others):
            for provider, spend in source.items():
                if name is None or provider == name:
                    out.tokens += spend.tokens
                    out.cost_usd += spend.cost_usd
        return out

    def _breach(
        self, limits: BudgetLimits | None, used: Spend, want: Reservation, share: float
    ) -> str | None:
        if limits is None:
            return None
        if (
            limits.daily_tokens is not None
            and used.tokens + want.tokens > limits.daily_tokens * share
        ):
            return f"tokens {used.tokens + want.tokens:.0f} > {limits.daily_tokens * share:.0f}"
        cap = limits.daily_cost_usd
        if cap is not None and used.cost_usd + want.cost_usd > cap * share:
            return f"cost ${used.cost_usd + want.cost_usd:.4f} > ${cap * share:.4f}"
        return None

    def reserve(self, provider: ProviderConfig, probe: ProbeConfig) -> Reservation | str:
        """A reservation, or the reason (text) why the probe would exceed a cap."""
        self._roll()
        want = replace(estimate(provider, probe), day=self._day)
        share = self.long_share if probe.context_class == "long" else 1.0
        scopes = (
            ("total", self.budget.total, None),
            (provider.name, self.budget.per_provider.get(provider.name), provider.name),
        )
        for label, limits, name in scopes:
            why = self._breach(limits, self._totals(name), want, share)
            if why is not None:
                return f"{label} daily budget: {why}"
        held = self._reserved.setdefault(provider.name, Spend())
        held.tokens += want.tokens
        held.cost_usd += want.cost_usd
        self._publish()
        return want

    def settle(self, reservation: Reservation, used: Spend | None) -> None:
        """Replace the reservation by what was really used (None: nothing was sent;
        ``unknown``: sent, usage never reported, so the worst case reserved).

        The spend counts on the day its row is stamped, as the stored spend does: a run
        reserved before midnight that probed after it counted on the day before, and the
        new day, read before its row was spooled, never counted it, so that day could
        spend past its cap until a restart read the row. Its row is spooled before it
        settles, so a day first read now already holds it."""
        self._roll()
        held = self._ledger(reservation.day).reserved.get(reservation.provider)
        if held is not None:
            held.tokens = max(held.tokens - reservation.tokens, 0.0)
            held.cost_usd = max(held.cost_usd - reservation.cost_usd, 0.0)
        self._publish()
        if used is None:
            return
        day = used.day or reservation.day
        if used.unknown:
            used = Spend(reservation.tokens, reservation.cost_usd)
        if day not in self._days and self.load_day is not None:
            self._ledger(day)  # read now, this run's row included
            return
        mine = self._ledger(day).spent.setdefault(reservation.provider, Spend())
        mine.tokens += used.tokens
        mine.cost_usd += used.cost_usd

    def reserved(self) -> dict[date, dict[str, Spend]]:
        """Every kept day's in-flight reservations per provider (copies)."""
        return {
            day: {n: Spend(s.tokens, s.cost_usd) for n, s in ledger.reserved.items()}
            for day, ledger in self._days.items()
            if ledger.reserved
        }

    def _publish(self) -> None:
        if self.on_reserved is not None:
            self.on_reserved(self.reserved())

    def spent_by(self, provider: str) -> Spend:
        """Today's settled spend of one provider."""
        self._roll()
        return self.spent.get(provider, Spend())

    def today_spend(self) -> dict[str, Spend]:
        self._roll()
        return {name: Spend(s.tokens, s.cost_usd) for name, s in self.spent.items()}
