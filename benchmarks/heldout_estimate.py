"""What detect() should score on the held-out collection, from the first looks at batches
annotated by eye, with a bootstrap interval.

The held-out collection cannot be scored here. What can: each batch annotated by eye was
scored once, when it was first looked at, by the detect() of that day and by z-scored binary
segmentation (``bench_changepoints.py --unseen`` or ``--judge``; the data README records each
look). Binary segmentation is the one detector measured on both sides, so the estimate is
the ratio of the means over the first looks (detect() over binary segmentation), applied to
binary segmentation's held-out figures that the issue reports.

**Assumptions.** The ratio carries over: the held-out series and their annotators relate to
binary segmentation as our batches and annotators do. Our annotators are language-model
sessions and mark more than people; the batches were chosen to resemble the held-out list,
not drawn from it. A batch's figures are those of detect() as it was at that look; later
changes judged on other data are not credited to it.

**Which detect().** Where a first look judged a candidate that was then adopted (the
seventeenth, eighteenth, nineteenth, twenty-third, twenty-ninth and thirty-fifth batches), two
figures exist: the committed detect()'s, unbiased for that day's detector but blind to the
change adopted, and the candidate's, which is today's detector there but biased upwards,
since it was adopted because it scored well on that very batch. Both estimates are printed;
today's detect() lies between them or near the first.

**Uncertainty.** Batches, not series, are resampled (20,000 draws, fixed seed): series of
one batch share a source and annotators, so they are not independent. With seventeen batches
the interval is rough; the share of resamples that reach the goal on each measure is printed
beside it, not a probability that the goal is met.

Run: .venv/bin/python benchmarks/heldout_estimate.py
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

ISSUE_BINSEG = (0.671, 0.663)  # z-scored binary segmentation on the held-out collection
GOAL = (0.75, 0.72)  # F1, cover
RESAMPLES = 20_000
SEED = 30030
COLUMNS = ("before", "adopted", "binseg")


@dataclass(frozen=True, slots=True)
class FirstLook:
    """One batch's first look: mean F1 and cover of detect() (as committed before the look,
    and as adopted at it) and of z-scored Binseg."""

    batch: str
    before: tuple[float, float]
    adopted: tuple[float, float]
    binseg: tuple[float, float]


# From the data README (tests/data/changepoints/README.md), batch by batch: every first look
# from the fifteenth batch on (the twenty-ninth's look judged a candidate then adopted, the
# thirtieth's one that was not; the twenty-first, twenty-second and twenty-eighth were first
# scored in the thirty-sixth session, by a detect() two changes newer, judging one that was
# not adopted; the thirty-fifth's, in the thirty-ninth, judged one that was adopted).
# Earlier first looks scored a detect() many changes older and are left out, as in every
# estimate since the twenty-eighth session.
FIRST_LOOKS = (
    FirstLook("fifteenth (visual_unseen_10)", (0.724, 0.682), (0.724, 0.682), (0.742, 0.647)),
    FirstLook("sixteenth (visual_unseen_11)", (0.790, 0.727), (0.790, 0.727), (0.734, 0.683)),
    FirstLook("seventeenth (visual_unseen_12)", (0.761, 0.708), (0.769, 0.712), (0.730, 0.676)),
    FirstLook("eighteenth (visual_unseen_13)", (0.785, 0.741), (0.834, 0.789), (0.734, 0.665)),
    FirstLook("nineteenth (visual_unseen_14)", (0.677, 0.644), (0.687, 0.657), (0.753, 0.680)),
    FirstLook("twentieth (visual_unseen_15)", (0.763, 0.753), (0.763, 0.753), (0.743, 0.714)),
    FirstLook("twenty-third (visual_unseen_18)", (0.612, 0.622), (0.659, 0.650), (0.606, 0.704)),
    FirstLook("twenty-fourth (visual_unseen_19)", (0.558, 0.556), (0.558, 0.556), (0.435, 0.616)),
    FirstLook("twenty-fifth (visual_unseen_20)", (0.689, 0.635), (0.689, 0.635), (0.689, 0.660)),
    FirstLook("twenty-sixth (visual_unseen_21)", (0.764, 0.714), (0.764, 0.714), (0.743, 0.692)),
    FirstLook("twenty-first (visual_unseen_16)", (0.761, 0.730), (0.761, 0.730), (0.731, 0.708)),
    FirstLook("twenty-second (visual_unseen_17)", (0.811, 0.774), (0.811, 0.774), (0.714, 0.659)),
    FirstLook("twenty-seventh (visual_unseen_22)", (0.752, 0.762), (0.752, 0.762), (0.716, 0.715)),
    FirstLook("twenty-eighth (visual_unseen_23)", (0.620, 0.616), (0.620, 0.616), (0.650, 0.652)),
    FirstLook("twenty-ninth (visual_unseen_24)", (0.700, 0.793), (0.704, 0.793), (0.578, 0.665)),
    FirstLook("thirtieth (visual_unseen_25)", (0.432, 0.497), (0.432, 0.497), (0.602, 0.720)),
    FirstLook("thirty-fifth (visual_unseen_30)", (0.578, 0.681), (0.599, 0.692), (0.506, 0.658)),
)


@dataclass(frozen=True, slots=True)
class Estimate:
    """The held-out estimate (F1, cover), its 95 % bootstrap interval and the share of
    resamples at or above the goal on each measure."""

    point: tuple[float, float]
    low: tuple[float, float]
    high: tuple[float, float]
    reaching_goal: tuple[float, float]


def estimate(
    looks: tuple[FirstLook, ...] = FIRST_LOOKS,
    adopted: bool = False,
    issue_binseg: tuple[float, float] = ISSUE_BINSEG,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """Ratio of means (detect() over z-scored Binseg) times Binseg's held-out figures; the
    interval from resampling whole batches. ``adopted``: detect() as adopted at each look
    rather than as committed before it."""
    detect = np.array([look.adopted if adopted else look.before for look in looks])
    binseg = np.array([look.binseg for look in looks])
    scale = np.asarray(issue_binseg)
    point = detect.mean(axis=0) / binseg.mean(axis=0) * scale
    draws = np.random.default_rng(seed).integers(0, len(looks), size=(resamples, len(looks)))
    boot = detect[draws].mean(axis=1) / binseg[draws].mean(axis=1) * scale
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    reaching = (boot >= np.asarray(GOAL)).mean(axis=0)
    return Estimate(_pair(point), _pair(low), _pair(high), _pair(reaching))


def _pair(values: NDArray[np.float64]) -> tuple[float, float]:
    return float(values[0]), float(values[1])


def main() -> None:
    print("First looks at batches annotated by eye (means; F1 / cover)")
    print(_row("batch", ("detect() before", "detect() adopted", "binseg z-scored")))
    for look in FIRST_LOOKS:
        print(_row(look.batch, tuple(_fmt(getattr(look, f)) for f in COLUMNS)))
    means = [_mean([getattr(look, f) for look in FIRST_LOOKS]) for f in COLUMNS]
    print(_row("mean", tuple(_fmt(pair) for pair in means)))
    print(f"\nheld-out Binseg (the issue): {_fmt(ISSUE_BINSEG)}; goal {_fmt(GOAL)}")
    for adopted in (False, True):
        result = estimate(adopted=adopted)
        print(
            f"detect() {'adopted' if adopted else 'before '}: {_fmt(result.point)}, 95 % "
            f"{_fmt(result.low)} to {_fmt(result.high)}; resamples at the goal: "
            f"F1 {result.reaching_goal[0]:.1%}, cover {result.reaching_goal[1]:.1%}"
        )


def _row(label: str, cells: tuple[str, ...]) -> str:
    return f"{label:<34}" + "".join(f"| {cell:>16} " for cell in cells).rstrip()


def _mean(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    return _pair(np.mean(np.array(pairs), axis=0))


def _fmt(pair: tuple[float, ...]) -> str:
    return f"{pair[0]:.3f} / {pair[1]:.3f}"


if __name__ == "__main__":
    main()
