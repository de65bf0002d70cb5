"""The weekly HTML report: warehouse → typed context → Jinja2 → one self-contained file."""

from __future__ import annotations

from pipeline.report.render import render_index, render_report, render_weekly, report_link
from pipeline.report.weeks import IsoWeek, default_week, parse_week

__all__ = [
    "IsoWeek",
    "default_week",
    "parse_week",
    "render_index",
    "render_report",
    "render_weekly",
    "report_link",
]
