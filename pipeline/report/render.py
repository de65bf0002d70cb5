"""Render the weekly report and the index of weeks to self-contained HTML files.

Jinja2 runs with ``autoescape=True`` (explicitly: the suffix-based default would leave
some names unescaped) and ``StrictUndefined`` (a missing value is a bug, not a blank).
Files are written atomically so a mail or web server never sees half a report.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pipeline.atomic_files import write_text_atomically
from pipeline.config import Config
from pipeline.report.build import build_context
from pipeline.report.context import IndexEntry
from pipeline.report.data import load_report_data, report_week
from pipeline.report.inert import Finalize
from pipeline.report.weeks import IsoWeek
from pipeline.resources import reports_dir
from pipeline.warehouse import Warehouse
from probes.secrets import Secrets

__all__ = [
    "environment",
    "render_index",
    "render_report",
    "render_weekly",
    "report_link",
]

_REPORT_FILE = re.compile(r"^nerfwatch-(\d{4})-W(\d{2})\.html$")


def environment(secrets: Secrets | None = None) -> Environment:
    """The one Jinja2 environment of the report templates; ``secrets`` are masked."""
    return Environment(
        loader=FileSystemLoader(reports_dir() / "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=Finalize(secrets),  # bidi controls shown, never obeyed; keys masked
    )


def render_index(out_dir: Path, env: Environment | None = None) -> Path:
    """(Re)write ``index.html`` listing every weekly report in ``out_dir``, newest first."""
    env = env or environment()
    entries = []
    for path in out_dir.glob("nerfwatch-*.html"):
        match = _REPORT_FILE.match(path.name)
        if match:
            week = IsoWeek(int(match[1]), int(match[2]))
            mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            entries.append(IndexEntry(week.label, path.name, mtime))
    entries.sort(key=lambda e: e.week, reverse=True)
    index = out_dir / "index.html"
    write_text_atomically(
        index, env.get_template("index.html").render(entries=entries), make_folder=True
    )
    return index


def render_report(
    warehouse: Warehouse,
    out_dir: Path,
    *,
    week: IsoWeek | None = None,
    now: datetime | None = None,
    secrets: Secrets | None = None,
) -> Path:
    """Render one week from ``warehouse`` into ``out_dir``; return the report's path.

    Without ``week``, the week ``report_week`` picks for ``now``. ``secrets`` (the
    config's keys) are masked wherever a server echoed them into stored text.
    """
    now = now or datetime.now(UTC)
    week = week or report_week(warehouse, now)
    data = load_report_data(warehouse, week, now=now)
    context = build_context(data, generated_at=now)
    env = environment(secrets)
    path = out_dir / week.filename
    write_text_atomically(
        path, env.get_template("weekly.html").render(report=context), make_folder=True
    )
    render_index(out_dir, env)
    return path


def render_weekly(
    config: Config, week: IsoWeek | None = None, *, now: datetime | None = None
) -> Path:
    """The scheduled entry point: render ``week`` (default: the latest) per ``config``."""
    warehouse = Warehouse(config.warehouse.location)
    secrets = Secrets(config.secret_values())
    return render_report(warehouse, config.report.out_dir, week=week, now=now, secrets=secrets)


def report_link(config: Config, path: Path) -> str:
    """What an alert should carry: a link under ``link_base_url`` if set, else the path."""
    base = config.report.link_base_url
    if base:
        return f"{base.rstrip('/')}/{path.name}"
    return str(path.resolve())
