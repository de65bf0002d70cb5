"""Run ids: UUIDv7, and within a process each sorts after every one made before it,
also when the wall clock steps back (RFC 9562 section 6.2)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import time_machine

from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import job_specs
from probes.ids import new_run_id, run_id_at
from tests.support.daemon import make_config

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _unix_ms(run_id: str) -> int:
    return uuid.UUID(run_id).int >> 80


@pytest.mark.parametrize("step", [timedelta(seconds=60), timedelta(hours=2), timedelta(days=3)])
def test_ids_made_after_a_backward_step_sort_after_the_earlier_ones(step: timedelta) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        before = [new_run_id() for _ in range(3)]
        clock.move_to(T0 - step)
        after = [new_run_id() for _ in range(3)]
    made = before + after
    assert made == sorted(made), made


def test_the_time_field_waits_at_the_last_id_until_the_clock_catches_up() -> None:
    from probes.ids import MonotonicIds

    now_ms = [1_700_000_000_000]
    ids = MonotonicIds(clock_ns=lambda: now_ms[0] * 1_000_000)
    first = ids.next()
    now_ms[0] -= 7_200_000  # NTP steps back two hours
    held = [ids.next() for _ in range(3)]
    now_ms[0] = 1_700_000_000_005  # the clock has caught up: its own time again
    caught_up = ids.next()
    assert [first, *held, caught_up] == sorted([first, *held, caught_up])
    assert {_unix_ms(i) for i in held} == {1_700_000_000_000}
    assert _unix_ms(caught_up) == 1_700_000_000_005


def test_ids_within_one_millisecond_sort_in_the_order_made() -> None:
    with time_machine.travel(T0 + timedelta(days=3650), tick=False):  # later than any test
        made = [new_run_id() for _ in range(5_000)]
    assert made == sorted(made) and len(set(made)) == len(made)
    assert len({_unix_ms(i) for i in made}) == 1
    for text in (made[0], run_id_at(1_700_000_000_000)):
        parsed = uuid.UUID(text)
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122, text


def test_a_full_counter_moves_on_to_the_next_millisecond() -> None:
    from probes.ids import MonotonicIds

    ids = MonotonicIds(clock_ns=lambda: 1_700_000_000_000 * 1_000_000)
    first = ids.next()
    ids._counter = (1 << 42) - 1  # as if 2**42 ids had been made in this millisecond
    second = ids.next()
    assert first < second and _unix_ms(second) == _unix_ms(first) + 1


def test_a_skipped_row_made_later_sorts_after_rows_made_before_it(tmp_path: Path) -> None:
    """A misfire row is stamped with the run's planned time (hours ago after a suspend)
    but made now: by id it comes after the rows stored before it."""
    spec = next(iter(job_specs(make_config(tmp_path)).values()))
    with time_machine.travel(T0 + timedelta(hours=6), tick=False):
        stored = new_run_id()
        missed = bare_row(spec, T0, "skipped", "misfire", site="test")
    assert missed.started_at == T0
    assert missed.run_id > stored
