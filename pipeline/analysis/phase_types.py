"""The shapes phases work on: a provider's hourly signals, the segments cut from them, and
the phases they are merged into."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray", "IntArray", "Phase", "ProviderSeries", "Segment"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class ProviderSeries:
    """Hourly signals of one provider/model on a complete hourly grid (NaN/0 = missing)."""

    hours: NDArray[np.datetime64]
    short: FloatArray  # deseasonalized log TTFT p50, short context
    long: FloatArray | None = None  # deseasonalized log TTFT p50, long context
    n: IntArray | None = None  # probes per hour (all outcomes)
    n_errors: IntArray | None = None  # busy errors + timeouts
    n_scored: IntArray | None = None
    n_correct: IntArray | None = None
    n_flagged: IntArray | None = None
    speed: FloatArray | None = None  # deseasonalized log output tokens/s, short context

    def slowness(self) -> FloatArray | None:
        """Log seconds per output token: output speed turned so that up is worse, like
        TTFT, for the detectors and fits that look for a rise."""
        return None if self.speed is None else -self.speed


@dataclass(frozen=True)
class Segment:
    start: int
    end: int  # exclusive, hour index
    moved: dict[str, float] = field(default_factory=dict)  # signal -> effect
    pvalues: dict[str, float] = field(default_factory=dict)
    label: str = "stable"
    stage: str = "stable"
    onset_lo: int | None = None  # 95 % interval of a dated onset (hour index)
    onset_hi: int | None = None


@dataclass(frozen=True)
class Phase:
    phase_no: int
    label: str
    stage: str
    start: int
    end: int  # exclusive hour index
    severity: float
    severity_lo: float
    severity_hi: float
    confidence: float
    signals: list[str]
    start_lo: int | None = None  # 95 % interval of the start when dated by the ramp fit
    start_hi: int | None = None
