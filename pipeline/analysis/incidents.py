"""Vendor-wide incidents: several models or endpoints of one vendor degraded on the same days.

One endpoint degrading can be that endpoint's problem; two or more of a vendor's endpoints
degrading together points at shared infrastructure. A day counts when at least two of the
vendor's series are in a non-stable phase for most of that day (p_degraded >= 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

__all__ = ["VendorIncident", "vendor_incidents"]


@dataclass(frozen=True)
class VendorIncident:
    vendor: str
    start: date
    end: date  # inclusive last day
    members: list[str]
    detail: str


def vendor_incidents(
    degraded_days: dict[str, dict[str, set[date]]], min_members: int = 2
) -> list[VendorIncident]:
    """``degraded_days[vendor][member] = {days degraded}`` -> runs of joint degradation."""
    out: list[VendorIncident] = []
    for vendor, members in sorted(degraded_days.items()):
        if len(members) < min_members:
            continue
        days = sorted({d for ds in members.values() for d in ds})
        joint = [d for d in days if sum(d in ds for ds in members.values()) >= min_members]
        runs: list[list[date]] = []
        for d in joint:
            if runs and d - runs[-1][-1] <= timedelta(days=1):
                runs[-1].append(d)
            else:
                runs.append([d])
        for run in runs:
            involved = sorted(m for m, ds in members.items() if any(d in ds for d in run))
            out.append(
                VendorIncident(
                    vendor, run[0], run[-1], involved,
                    f"{len(involved)} of {len(members)} endpoints degraded together "
                    f"for {len(run)} day(s)",
                )
            )  # fmt: skip
    return out
