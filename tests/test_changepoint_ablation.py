"""The ablation benchmark's switches: each patches a name detect() really uses, undoes it on
leaving, and (for three parts whose effect is certain) changes what detect() reports."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.bench_changepoint_ablation import PARTS, switched_off
from pipeline.analysis import changepoints
from pipeline.analysis.changepoints import confirm

PATCHED = ("remove_cycle", "spread_breaks", "relocate", "level_shifts", "material",
           "material_spread", "Reading")  # fmt: skip


def _patched_names() -> tuple[object, ...]:
    own = tuple(getattr(changepoints, name) for name in PATCHED)
    return (*own, confirm.unit_root_plausible, confirm.is_gradual)


@pytest.mark.parametrize("part", [name for name, _, _ in PARTS])
def test_each_switch_replaces_something_and_restores_it(part: str) -> None:
    before = _patched_names()
    with switched_off(part):
        during = _patched_names()
    assert during != before, part  # a switch that patches nothing would measure nothing
    assert _patched_names() == before


def test_an_unknown_part_is_refused() -> None:
    with pytest.raises(KeyError), switched_off("no such part"):
        pass


def test_without_materiality_a_tiny_proven_step_on_a_large_curve_is_kept() -> None:
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 1.0, 400)
    x = 100.0 * t**2 + 0.6 * (np.arange(400) >= 200) + rng.normal(0.0, 0.05, 400)
    assert not any(abs(b - 200) <= 2 for b in changepoints.detect(x))  # 0.6 % of the range
    with switched_off("materiality"):
        assert any(abs(b - 200) <= 2 for b in changepoints.detect(x))


def test_without_the_spread_search_a_change_of_spread_is_missed() -> None:
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.normal(0.0, 1.0, 200), rng.normal(0.0, 5.0, 200)])
    assert any(abs(b - 200) <= 5 for b in changepoints.detect(x))
    with switched_off("spread search"):
        assert not any(abs(b - 200) <= 5 for b in changepoints.detect(x))
