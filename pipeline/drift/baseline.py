"""The stored border-input baseline of one provider and model, and its daily samples.

A JSON file per (provider, model) under ``<data folder>/drift/``, not a warehouse table:
the reference is one small document that the user replaces whole when accepting a new
baseline (the old one is kept beside it, renamed), it must be readable by hand to audit an
alarm, and the daily distances are a few numbers per day. Writes go to a temporary file
that is renamed over the old one, so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipeline.atomic_files import write_text_atomically

__all__ = ["FORMAT", "Baseline", "DaySample", "DriftSettings", "baseline_path", "load", "save"]

FORMAT = 1


@dataclass(frozen=True, slots=True)
class DriftSettings:
    """Sizes of the three phases. Daily cost: ``inputs * per_input`` one-token calls (B3IT:
    20 x 10 = 200); discovery ``candidates * discovery_calls`` and the reference
    ``inputs * reference_calls`` are paid once per accepted baseline."""

    candidates: int = 80
    discovery_calls: int = 3
    inputs: int = 20
    reference_calls: int = 100
    per_input: int = 10
    temperature: float = 0.0
    logprob_calls: int = 0  # LT window per day where logprobs exist (0: off); LT paper: ~50
    seed_salt: str = ""  # leads every call's seed: independent repeats of the same design

    @property
    def daily_calls(self) -> int:
        return self.inputs * self.per_input


@dataclass(slots=True)
class DaySample:
    day: str  # ISO date
    distance: float | None
    calls: int
    failed: int
    counts: dict[str, dict[str, int]]  # border input -> first token -> count
    reported_models: list[str] = field(default_factory=list)
    logprobs: list[dict[str, float]] = field(default_factory=list)  # LT rows, token -> logprob
    input_tokens: dict[str, list[int]] = field(default_factory=dict)  # prompt -> counts seen


@dataclass(slots=True)
class Baseline:
    provider: str
    model: str
    accepted_at: str  # ISO UTC time the user accepted it
    settings: DriftSettings
    discovery: dict[str, list[str]]  # candidate -> first tokens seen
    reference: dict[str, dict[str, int]]  # border input -> first token -> count
    days: list[DaySample] = field(default_factory=list)
    logprob_reference: list[dict[str, float]] = field(default_factory=list)
    input_tokens: dict[str, list[int]] = field(default_factory=dict)  # prompt -> counts seen

    def token_count_changes(self, sample: DaySample) -> dict[str, tuple[list[int], list[int]]]:
        """Border inputs whose prompt the provider now counts differently: the same text
        in another tokenizer or chat template, i.e. probably another model."""
        return {
            prompt: (self.input_tokens[prompt], counted)
            for prompt, counted in sample.input_tokens.items()
            if counted and self.input_tokens.get(prompt) and counted != self.input_tokens[prompt]
        }

    def add_day(self, sample: DaySample) -> None:
        """Add or replace the sample of that day (a re-run replaces, never duplicates)."""
        self.days = sorted([d for d in self.days if d.day != sample.day] + [sample], key=_day)


def _day(sample: DaySample) -> str:
    return sample.day


def baseline_path(folder: Path, provider: str, model: str) -> Path:
    """``folder/drift/<provider>/<model>.json`` with unsafe characters replaced."""

    def safe(name: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]", "_", name)

    return folder / "drift" / safe(provider) / f"{safe(model)}.json"


def save(baseline: Baseline, path: Path) -> None:
    text = json.dumps({"format": FORMAT, **asdict(baseline)}, indent=1)
    write_text_atomically(path, text, make_folder=True)


def load(path: Path) -> Baseline:
    """Raises ``ValueError`` naming the file when it is not a baseline this code reads."""
    try:
        raw: dict[str, Any] = json.loads(path.read_text())
        if raw.pop("format") != FORMAT:
            raise ValueError("unknown format")
        raw["settings"] = DriftSettings(**raw["settings"])
        raw["days"] = [DaySample(**d) for d in raw["days"]]
        return Baseline(**raw)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a readable drift baseline ({exc})") from exc
