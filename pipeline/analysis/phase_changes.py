"""What the daemon alerts on: how each provider's current phase differs from the one the
previous analysis run ended in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pipeline.warehouse import Warehouse

__all__ = ["PhaseChange", "phase_changes_since"]


@dataclass(frozen=True)
class PhaseChange:
    """A provider's current phase differs from the one the previous analysis run ended in."""

    provider: str
    model: str | None
    previous_stage: str | None
    stage: str
    label: str
    since: datetime
    severity: float | None
    severity_lo: float | None
    severity_hi: float | None
    analysis_id: str


def phase_changes_since(warehouse: Warehouse, analysis_id: str | None = None) -> list[PhaseChange]:
    """Phase changes of run ``analysis_id`` (default: the latest done run) against the done
    run before it. On a first run every non-stable current phase counts as a change."""
    runs = warehouse.query(
        "SELECT analysis_id FROM analysis_runs WHERE status = 'done' "
        "ORDER BY started_at DESC, analysis_id DESC"
    )["analysis_id"].to_list()
    if analysis_id is None:
        if not runs:
            return []
        analysis_id = runs[0]
    previous = next((r for r in runs if r < analysis_id), None)
    current = _last_phases(warehouse, analysis_id)
    before = _last_phases(warehouse, previous) if previous else {}
    changes = []
    for key, row in sorted(current.items()):
        old = before.get(key)
        old_stage = old["stage"] if old else None
        if old_stage == row["stage"] or (old is None and row["label"] == "stable"):
            continue
        changes.append(
            PhaseChange(
                key[0], key[1], old_stage, row["stage"], row["label"], row["start_at"],
                row["severity"], row["severity_lo"], row["severity_hi"], analysis_id,
            )
        )  # fmt: skip
    return changes


def _last_phases(warehouse: Warehouse, analysis_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    frame = warehouse.query(
        "SELECT * FROM phases WHERE analysis_id = ? "
        "QUALIFY row_number() OVER (PARTITION BY provider, model ORDER BY phase_no DESC) = 1",
        [analysis_id],
    )
    return {(r["provider"], r["model"]): r for r in frame.iter_rows(named=True)}
