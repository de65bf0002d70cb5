"""Border-input tracking: selection, distances, the alarm rule and its null."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.analysis.border_inputs import (
    candidate_prompts,
    day_distance,
    select_border_inputs,
    total_variation,
)
from pipeline.analysis.drift_alarm import (
    AlarmRule,
    NullModel,
    false_alarm_rate,
    judge_series,
    simulate_null,
)
from pipeline.drift.baseline import Baseline, DaySample, DriftSettings, baseline_path, load, save
from pipeline.drift.collect import call_seed

NULL = NullModel(mean=0.25, sd=0.03, draws=1000)


def test_candidates_are_a_fixed_list_of_distinct_prompts() -> None:
    first = candidate_prompts(200)
    assert first == candidate_prompts(200)
    assert len(first) == len(set(first)) > 100
    assert candidate_prompts(5) == ["a", "b", "c", "d", "e"]


def test_only_varying_inputs_are_kept_most_balanced_first() -> None:
    answers = {
        "x": ["A", "A", "A"],  # certain: says nothing about a change
        "y": ["A", "B", "A", "A"],  # balance 0.25
        "z": ["A", "B", "C", "A"],  # balance 0.5
        "w": ["B", "A", "A", "B"],  # balance 0.5, ties broken by the prompt
    }
    assert select_border_inputs(answers, keep=10) == ["w", "z", "y"]
    assert select_border_inputs(answers, keep=2) == ["w", "z"]


def test_total_variation_is_half_the_l1_distance_of_shares() -> None:
    assert total_variation({"A": 5}, {"A": 50}) == 0.0
    assert total_variation({"A": 3}, {"B": 7}) == 1.0
    assert total_variation({"A": 1, "B": 1}, {"A": 3, "B": 1}) == pytest.approx(0.25)
    assert total_variation({}, {"A": 1}) == 0.0


def test_the_day_distance_averages_the_inputs_sampled_that_day() -> None:
    reference = {"p": {"A": 10}, "q": {"A": 5, "B": 5}}
    assert day_distance(reference, {"p": {"B": 4}, "q": {"A": 2, "B": 2}}) == 0.5
    assert day_distance(reference, {"p": {"A": 4}}) == 0.0  # q failed that day
    assert day_distance(reference, {}) is None


def test_three_out_days_in_a_row_make_one_alarm_then_a_cooldown() -> None:
    rule = AlarmRule()
    series = [0.25, 0.26, 0.24, 0.70, 0.71, 0.69, 0.70, 0.72]
    verdicts = judge_series(series, NULL, rule)
    assert [v.out for v in verdicts] == [False] * 3 + [True] * 5
    assert [v.alarm for v in verdicts] == [False] * 5 + [True, False, False]
    assert {v.baseline for v in verdicts} == {"null"}
    assert verdicts[0].threshold == pytest.approx(0.2)  # max(0.2, 4 x 0.03)


def test_a_spike_of_two_days_is_no_alarm() -> None:
    verdicts = judge_series([0.25, 0.9, 0.9, 0.25, 0.9, 0.25], NULL)
    assert not any(v.alarm for v in verdicts)


def test_after_enough_history_the_baseline_is_the_trailing_window() -> None:
    """A level that moved long ago is the new normal: history, not the null, judges it."""
    series = [0.6] * 12
    verdicts = judge_series(series, NULL, AlarmRule(min_history_days=7, exclude_days=4))
    assert [v.baseline for v in verdicts][-1] == "history"
    assert verdicts[-1].baseline_mean == pytest.approx(0.6)
    assert not verdicts[-1].out
    assert verdicts[0].out and verdicts[2].alarm  # while the null still judged


def test_the_null_is_seeded_and_zero_for_certain_inputs() -> None:
    reference = {"p": {"A": 60, "B": 40}, "q": {"A": 30, "B": 30, "C": 40}}
    assert simulate_null(reference, 10, seed=3) == simulate_null(reference, 10, seed=3)
    certain = simulate_null({"p": {"A": 100}}, 10, seed=3)
    assert certain.mean == 0.0 and certain.sd == 0.0
    spread = simulate_null(reference, 10, seed=3)
    assert 0.1 < spread.mean < 0.4 and spread.sd > 0


def test_the_false_alarm_rate_is_measured_not_assumed() -> None:
    reference = {f"p{i}": {"A": 50, "B": 30, "C": 20} for i in range(10)}
    default = false_alarm_rate(reference, 10, days=30, runs=40, seed=1)
    assert default.alarms == 0 and default.days == 1200
    assert default.upper95 == pytest.approx(0.0025, rel=0.05)  # about 3 / 1200
    hair_trigger = AlarmRule(min_abs=0.0, sigmas=1.0, consecutive=1, cooldown_days=0)
    loose = false_alarm_rate(reference, 10, rule=hair_trigger, days=30, runs=40, seed=1)
    assert 0.1 < loose.per_day < 0.6 and loose.runs_with_alarm == 40


def test_a_baseline_file_round_trips_and_a_day_is_replaced_not_duplicated(
    tmp_path: Path,
) -> None:
    baseline = Baseline(
        provider="p/1", model="m:x", accepted_at="2026-03-01T00:00:00+00:00",
        settings=DriftSettings(inputs=2, per_input=3), discovery={"a": ["A", "B"]},
        reference={"a": {"A": 2, "B": 1}},
    )  # fmt: skip
    baseline.add_day(DaySample("2026-03-03", 0.4, 6, 0, {"a": {"A": 3}}))
    baseline.add_day(DaySample("2026-03-02", 0.1, 6, 0, {"a": {"A": 2, "B": 1}}))
    baseline.add_day(DaySample("2026-03-03", 0.2, 6, 1, {"a": {"B": 2}}))
    path = baseline_path(tmp_path, "p/1", "m:x")
    assert path == tmp_path / "drift" / "p_1" / "m_x.json"
    save(baseline, path)
    again = load(path)
    assert again == baseline
    assert [(d.day, d.distance) for d in again.days] == [("2026-03-02", 0.1), ("2026-03-03", 0.2)]
    path.write_text("{}")
    with pytest.raises(ValueError, match="not a readable drift baseline"):
        load(path)


def test_call_seeds_are_stable_and_distinct() -> None:
    assert call_seed("day 2026-03-02", "a", 0) == call_seed("day 2026-03-02", "a", 0)
    seeds = {call_seed("day 2026-03-02", "a", i) for i in range(100)}
    assert len(seeds) == 100 and max(seeds) < 2**31


def test_a_prompt_counted_differently_is_a_tokenizer_sign() -> None:
    baseline = Baseline(
        provider="p", model="m", accepted_at="2026-03-01T00:00:00+00:00",
        settings=DriftSettings(), discovery={}, reference={"a": {"A": 1}, "b": {"B": 1}},
        input_tokens={"a": [12], "b": [13]},
    )  # fmt: skip
    same = DaySample("2026-03-02", 0.1, 2, 0, {}, input_tokens={"a": [12], "b": [13]})
    other = DaySample("2026-03-03", 0.1, 2, 0, {}, input_tokens={"a": [15], "b": []})
    assert baseline.token_count_changes(same) == {}
    assert baseline.token_count_changes(other) == {"a": ([12], [15])}  # b: no count came
