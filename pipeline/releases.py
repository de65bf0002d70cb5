"""The release calendar: the shipped curated list plus the user's own additions.

Bundled rows (``data/releases.csv``) are loaded by the warehouse itself; this module adds,
validates and lists rows. Imported files are checked whole before anything is written,
so a bad line leaves the warehouse untouched.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl

from pipeline.config.checker import did_you_mean
from pipeline.resources import data_dir
from pipeline.text_files import NotUtf8, decode_utf8
from pipeline.warehouse import Warehouse

__all__ = [
    "CONFIDENCE",
    "RELEASE_SCHEMA",
    "Release",
    "ReleaseError",
    "add_release",
    "import_releases",
    "known_vendors",
    "list_releases",
    "parse_release",
    "utc_today",
]

CONFIDENCE = ("high", "medium", "low")
_REQUIRED = ("vendor", "model", "release_date")
_COLUMNS = ("vendor", "model", "release_date", "kind", "source_url", "confidence")
RELEASE_SCHEMA: dict[str, pl.DataType] = {
    "vendor": pl.String(),
    "model": pl.String(),
    "release_date": pl.Date(),
    "kind": pl.String(),
    "source_url": pl.String(),
    "confidence": pl.String(),
    "origin": pl.String(),  # bundled | user | synthetic
}
_EARLIEST = date(2015, 1, 1)


class ReleaseError(ValueError):
    """A release row that cannot be accepted, worded as one line with its location."""


@dataclass(frozen=True, slots=True)
class Release:
    vendor: str
    model: str
    release_date: date
    kind: str = "major"
    source_url: str | None = None
    confidence: str = "medium"


def known_vendors(warehouse: Warehouse, extra: Iterable[str] = ()) -> set[str]:
    """Vendors already in the calendar or configured; new names need ``allow_new_vendor``.

    A warehouse file not created yet knows the shipped calendar's vendors, read from the
    bundled CSV: querying it would create the file, and a refused row must leave nothing."""
    if warehouse.lake is None and not warehouse.path.exists():
        return _bundled_vendors() | set(extra)
    rows = warehouse.query("SELECT DISTINCT vendor FROM releases")
    return set(rows["vendor"].to_list()) | set(extra)


def _bundled_vendors() -> set[str]:
    with (data_dir() / "releases.csv").open(encoding="utf-8", newline="") as handle:
        return {row["vendor"] for row in csv.DictReader(handle)}


def utc_today() -> date:
    """Today's date in UTC: the product counts UTC days, whatever the machine's zone."""
    return datetime.now(UTC).date()


def parse_release(
    raw: dict[str, str | None],
    where: str,
    vendors: set[str],
    *,
    allow_new_vendor: bool = False,
    today: date | None = None,
) -> Release:
    """Validate one row (``where`` names it in errors, e.g. ``file.csv:7``). A date more
    than a year after ``today`` (default: the UTC day now) is refused as a typo."""
    values = {k: (v or "").strip() for k, v in raw.items() if k is not None}
    for column in _REQUIRED:
        if not values.get(column):
            raise ReleaseError(f"{where}: {column}: missing value")
    vendor = values["vendor"]
    if vendor not in vendors and not allow_new_vendor:
        hint = _vendor_hint(vendor, vendors) or " (use --new-vendor to add it)"
        raise ReleaseError(f"{where}: vendor: unknown vendor {vendor!r}{hint}")
    try:
        day = date.fromisoformat(values["release_date"])
    except ValueError:
        raise ReleaseError(
            f"{where}: release_date: expected YYYY-MM-DD, got {values['release_date']!r}"
        ) from None
    latest = (today or utc_today()) + timedelta(days=366)
    if not _EARLIEST <= day <= latest:
        raise ReleaseError(f"{where}: release_date: {day} is outside {_EARLIEST}..{latest}")
    confidence = values.get("confidence") or "medium"
    if confidence not in CONFIDENCE:
        raise ReleaseError(f"{where}: confidence: expected high, medium or low, got {confidence!r}")
    url = values.get("source_url") or None
    if url is not None and not re.match(r"^https?://\S+$", url):
        raise ReleaseError(f"{where}: source_url: expected an http(s) URL, got {url!r}")
    return Release(
        vendor=vendor,
        model=values["model"],
        release_date=day,
        kind=values.get("kind") or "major",
        source_url=url,
        confidence=confidence,
    )


def _store(warehouse: Warehouse, releases: list[Release]) -> int:
    """Write user rows in one transaction; a user row replaces a bundled row with its key."""
    rows = [asdict(r) | {"origin": "user"} for r in releases]
    frame = pl.DataFrame(rows, schema=RELEASE_SCHEMA).unique(["vendor", "model", "release_date"])
    return warehouse.replace_rows(
        "releases",
        frame,
        key=["vendor", "model", "release_date"],
        replace_where="origin = 'bundled'",
    )


def add_release(warehouse: Warehouse, release: Release) -> int:
    """Add one release; returns 1 if it was new, 0 if already recorded."""
    return _store(warehouse, [release])


def import_releases(
    warehouse: Warehouse,
    path: Path,
    *,
    extra_vendors: Iterable[str] = (),
    allow_new_vendor: bool = False,
) -> int:
    """Validate every row of a CSV, then add them all in one go; returns rows added."""
    try:
        text = decode_utf8(path.read_bytes())
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read: {exc.strerror}") from None
    except NotUtf8 as exc:
        raise ReleaseError(f"{path}:{exc.line}: {exc}") from None
    vendors = known_vendors(warehouse, extra_vendors)
    with io.StringIO(text, newline="") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [c for c in _REQUIRED if c not in header]
        if missing:
            raise ReleaseError(
                f"{path}:1: header: missing column(s) {', '.join(missing)}; "
                f"expected {', '.join(_COLUMNS)}"
            )
        unknown = [c for c in header if c not in _COLUMNS]
        if unknown:
            raise ReleaseError(f"{path}:1: header: unknown column(s) {', '.join(unknown)}")
        releases = [
            parse_release(
                row, f"{path}:{reader.line_num}", vendors, allow_new_vendor=allow_new_vendor
            )
            for row in reader
        ]
    if not releases:
        raise ReleaseError(f"{path}: no rows to import")
    return _store(warehouse, releases)


def _vendor_hint(vendor: str, vendors: Iterable[str]) -> str:
    return did_you_mean(vendor, vendors, cutoff=0.5)  # vendor names are short: be lenient


def list_releases(warehouse: Warehouse, vendor: str | None = None) -> pl.DataFrame:
    """The calendar, newest first, optionally for one vendor.

    An unknown vendor is a ``ReleaseError`` (with a did-you-mean), not an empty table
    that reads as "no releases".
    """
    if vendor is not None:
        vendors = known_vendors(warehouse)
        if vendor not in vendors:
            hint = _vendor_hint(vendor, vendors) or f" (known: {', '.join(sorted(vendors))})"
            raise ReleaseError(f"unknown vendor {vendor!r}{hint}")
    where, params = ("WHERE vendor = ?", [vendor]) if vendor else ("", None)
    return warehouse.query(
        f"SELECT vendor, model, release_date, kind, confidence, origin, source_url "
        f"FROM releases {where} ORDER BY release_date DESC, vendor, model",
        params,
    )
