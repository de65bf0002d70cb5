"""What each part of detect() is worth: the scores with one part switched off at a time.

Every part of ``pipeline.analysis.changepoints`` was added to fix something seen on some
series. This benchmark switches each off in turn (the others as they are) and scores the
result where the parts were chosen and where they were not:

* **the 500**: the series annotated by eye and looked at while developing
  (``bench_changepoints.py --by-length``'s), where most parts were chosen;
* **development**: the constructed series and the TSSB series (``development_set``);
* **blind** and **historical**: the documented breaks (27 annotated blind, 9 looked at).

A part that the 500 like and the other sets do not (or the reverse) is where development
fitted one kind of series; a part nothing misses is a candidate for removal. No batch kept
apart is scored. The parts are switched off by replacing one function or one field of the
reading for the duration of a run (``unittest.mock.patch``), so ``detect()`` itself is
unchanged; each is listed in ``PARTS`` with what it stands for.

Run: .venv/bin/python benchmarks/bench_changepoint_ablation.py   (about 11 minutes)
"""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_changepoints import score, the_500
from benchmarks.changepoint_devset import Series, development_set, documented_blind, historical
from pipeline.analysis import changepoints
from pipeline.analysis.changepoints.reading import Reading

CP = "pipeline.analysis.changepoints"


def _reading(**fields: Any) -> Callable[[], contextlib.AbstractContextManager[object]]:
    """Switch: a series read once gets a reading with ``fields`` changed."""

    def reading(level: float | None = None) -> Reading:
        return dataclasses.replace(Reading(level), **fields)

    return lambda: mock.patch(f"{CP}.Reading", reading)


def _replace(
    target: str, stand_in: Callable[..., object]
) -> Callable[[], contextlib.AbstractContextManager[object]]:
    """Switch: ``target`` (a dotted name) is replaced by ``stand_in``."""
    return lambda: mock.patch(f"{CP}.{target}", stand_in)


def _no_materiality() -> contextlib.AbstractContextManager[object]:
    """Switch: level, slope and spread changes all kept, however small beside the range."""
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch(f"{CP}.material", lambda x, breaks, fixed=(), *a: sorted(
        set(breaks) - set(fixed))))  # fmt: skip
    stack.enter_context(mock.patch(f"{CP}.material_spread", lambda x, spread, *a: sorted(spread)))
    return stack


# name, what switching it off means, the switch
PARTS: tuple[tuple[str, str, Callable[[], contextlib.AbstractContextManager[object]]], ...] = (
    ("cycle removal", "no cycle is removed first",
     _replace("remove_cycle", lambda x: (x, None))),
    ("spread search", "no change of spread is searched",
     _replace("spread_breaks", lambda *a: [])),
    ("random-walk route", "every window takes the AR(1) test",
     _replace("confirm.unit_root_plausible", lambda resid: False)),
    ("Newey-West check", "the F statistic is not discounted for dependence left",
     _reading(hac=False)),
    ("effective positions", "the search is paid for with every position (Bonferroni)",
     _reading(effective_positions=False)),
    ("growth null", "the smooth null is a polynomial only",
     _reading(growth_null=False)),
    ("spike rule", "an excursion that returns within 2 % is kept",
     _reading(spike_share=0.0)),
    ("gradual-bend merge", "a change spread over a wide ramp is kept",
     _replace("confirm.is_gradual", lambda *a: False)),
    ("kink re-placement", "a kink stays where the search put it",
     _replace("relocate", lambda z, confirmed, *a: list(confirmed))),
    ("level-shift pass", "no step absorbed by a curve is looked for",
     _replace("level_shifts", lambda *a: [])),
    ("materiality", "a change small beside the series' range is kept",
     _no_materiality),
)  # fmt: skip


def sets() -> dict[str, list[Series]]:
    """The series each column scores."""
    return {
        "the 500": the_500(),
        "development": development_set(),
        "blind": documented_blind(),
        "historical": historical(),
    }


def scores(columns: dict[str, list[Series]]) -> dict[str, tuple[float, float]]:
    """Mean F1 and cover of ``changepoints.detect`` (as a switch in force leaves it) on each
    set."""
    out = {}
    for name, series in columns.items():
        f1s, covers, _ = score(changepoints.detect, series)
        out[name] = (statistics.mean(f1s), statistics.mean(covers))
    return out


@contextlib.contextmanager
def switched_off(part: str) -> Iterator[None]:
    """``detect()`` with ``part`` (a name in ``PARTS``) switched off, inside the block."""
    switch = {name: make for name, _, make in PARTS}[part]
    with switch():
        yield


def main() -> None:
    columns = sets()
    print("F1 / cover with one part of detect() switched off (the others as they are)")
    titles = [f"{name} ({len(series)})" for name, series in columns.items()]
    print(f"{'switched off':<22}" + "".join(f"| {title:<21}" for title in titles))
    rows = [("nothing (today)", scores(columns))]
    for name, _, _ in PARTS:
        with switched_off(name):
            rows.append((name, scores(columns)))
    base = np.array(list(rows[0][1].values()))
    for name, result in rows:
        cells = np.array(list(result.values()))
        change = (cells - base).sum(axis=1)
        shown = [f"{f:.3f} / {c:.3f}" + (f" {d:+.3f}" if name != rows[0][0] else "")
                 for (f, c), d in zip(cells, change, strict=True)]  # fmt: skip
        print(f"{name:<22}" + "".join(f"| {cell:<21}" for cell in shown))
    print("\nthe last figure of a cell: F1 + cover minus today's; what each switch means:")
    for name, meaning, _ in PARTS:
        print(f"  {name:<22} {meaning}")


if __name__ == "__main__":
    main()
