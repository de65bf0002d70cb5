"""Run ids: UUIDv7, and within a process each sorts after every one made before it,
also when the wall clock steps back (RFC 9562 section 6.2)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import time_machine

from pipeline.analysis.orchestrate import run_analysis
from pipeline.analysis.phase_changes import phase_changes_since
from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import job_specs
from pipeline.warehouse import Warehouse
from probes.ids import MonotonicIds, new_run_id, run_id_at
from tests.support.daemon import make_config
from tests.support.planted import PlantedPhase, PlantedProvider, generate

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


def _fresh_process_at(when: datetime) -> MonotonicIds:
    """The id source of a new process whose wall clock reads ``when`` (pinned)."""
    return MonotonicIds(clock_ns=lambda: int(when.timestamp() * 1000) * 1_000_000)


def test_a_new_process_behind_the_stored_ids_mints_after_the_largest_it_is_told() -> None:
    """A process started with the clock stepped back (a VM restored, NTP) made ids that
    sorted before the stored ones; told the largest stored id, its ids sort after it,
    and its time field follows the clock again once the clock has caught up. An id
    that is no UUIDv7 says nothing about order and is ignored."""
    stored = _fresh_process_at(T0).next()
    behind = _fresh_process_at(T0 - timedelta(days=3))
    made = [behind.next(after=stored), behind.next(), behind.next(after=stored)]
    assert made == sorted(made) and made[0] > stored, (stored, made)
    assert {_unix_ms(i) for i in made} == {_unix_ms(stored)}
    far_v4 = str(uuid.UUID(int=((1 << 48) - 1) << 80 | 4 << 76 | 0b10 << 62))
    for junk in ("not-an-id", far_v4):
        other = _fresh_process_at(T0 - timedelta(days=3))
        own_ms = int((T0 - timedelta(days=3)).timestamp() * 1000)
        assert _unix_ms(other.next(after=junk)) == own_ms, junk


def test_an_analysis_run_after_a_clock_step_back_compares_with_the_run_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phase changes (what alerts are raised for) are those against the analysis run
    whose id sorts just before. A run made by a new process whose clock is three days
    behind (a VM restored from a snapshot) had an id before the stored run's, found no
    run before it, and reported every degraded phase again as new. Its id now sorts
    after the stored run's, and the unchanged data give no phase change."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    ongoing = [PlantedProvider("nova", "Nova", [PlantedPhase(30, 99, 1.5, 1.5)])]
    warehouse.insert_frame("probe_results", generate(ongoing, 40, seed=4))
    monkeypatch.setattr("probes.ids._PROCESS_IDS", _fresh_process_at(T0))
    first = run_analysis(warehouse)
    assert [c.label for c in phase_changes_since(warehouse, first)] == ["degraded"]
    monkeypatch.setattr("probes.ids._PROCESS_IDS", _fresh_process_at(T0 - timedelta(days=3)))
    second = run_analysis(warehouse)
    assert second > first
    assert phase_changes_since(warehouse, second) == []
