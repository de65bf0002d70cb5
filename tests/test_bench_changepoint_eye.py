"""The constructed series annotated by eye: each is what its maker and seed build, with three
annotators; and the benchmark scores the construction against the eye as it says."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.bench_changepoint_eye import by_kind
from benchmarks.changepoint_devset import (
    KINDS,
    Series,
    constructed,
    constructed_by_eye,
    made,
)

DATA = Path(__file__).resolve().parent / "data" / "changepoints"


def test_each_series_is_its_makers_output_for_its_seed() -> None:
    raw = json.loads((DATA / "constructed_by_eye.json").read_text())
    assert len(raw) == 66
    for name, item in raw.items():
        values, cps = made(item["kind"], item["seed"])
        # the plots the annotators saw were drawn from values rounded to 4 decimals
        assert np.allclose(item["values"], values, rtol=0, atol=1e-4), name
        assert item["cps"] == cps, name
        assert len(item["annotations"]) == 3, name
        for marks in item["annotations"]:
            assert marks == sorted(set(marks))
            assert all(0 < c < len(values) for c in marks)


def test_no_seed_is_one_the_change_point_benchmark_draws() -> None:
    """Kind k's s-th series uses seed 1000 k + s, and the benchmark draws s < 1000 (the
    development set's and the fresh seeds'); these use s >= 1000, so none is among them."""
    for name, item in json.loads((DATA / "constructed_by_eye.json").read_text()).items():
        assert item["seed"] - 1000 * list(KINDS).index(item["kind"]) >= 1000, name


def test_made_is_what_the_development_set_draws() -> None:
    first = next(constructed(1))
    values, cps = made(first.kind, 0)
    assert np.array_equal(values, first.values) and cps == first.cps


def test_the_data_readme_describes_the_file() -> None:
    assert "`constructed_by_eye.json`" in (DATA / "README.md").read_text()


def _series(kind: str, cps: list[int], marks: list[list[int]]) -> Series:
    values = np.zeros(100)
    return Series(f"t/{kind}", kind, values, cps, tuple(marks))


def test_the_construction_is_scored_against_the_eye_and_each_detector_against_both() -> None:
    agreed = _series("steps", [50], [[50], [50], [50]])
    disputed = _series("random-walk", [], [[30], [30], [31]])
    table = by_kind([agreed, disputed], {"nothing": lambda values: []})
    assert table["steps"]["built vs eye"] == [(1.0, 1.0)]
    assert table["random-walk"]["built vs eye"][0][0] < 1.0  # people marked a turn
    assert table["random-walk"]["nothing vs built"] == [(1.0, 1.0)]
    assert table["steps"]["nothing vs built"][0][0] < 1.0  # a built step was missed


def test_the_loader_keeps_kind_construction_and_marks_apart() -> None:
    series = constructed_by_eye()
    assert {s.kind for s in series} == set(KINDS)
    assert all(len(s.annotators()) == 3 for s in series)
