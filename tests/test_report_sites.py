"""The weekly report puts probe sites side by side when there are several: one line per
site and a plain sentence on where a slowdown was seen; with one site the page has no
such section."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import IsoWeek, render_report
from pipeline.report.sites import scope_sentence
from pipeline.warehouse import Warehouse
from tests.support.planted import START
from tests.support.planted_sites import SITES, site_history, three_site_history

pytestmark = pytest.mark.slow

NOW = START + timedelta(days=33)  # pinned: the week that ends the planted history
_ROW = re.compile(r"<tr><td>([a-z]+)</td><td class=\"num\">[\d,]+</td>")


def _page(warehouse: Warehouse, tmp_path: Path) -> str:
    run_analysis(warehouse)
    path = render_report(warehouse, tmp_path, week=IsoWeek.containing(NOW), now=NOW)
    return path.read_text(encoding="utf-8")


def _section(page: str, provider: str) -> str:
    start = page.index(f'<p class="site-scope">{provider}:')
    end = page.find('<p class="site-scope">', start + 1)
    return page[start : end if end > 0 else page.index("</table>", start)]


def test_sites_side_by_side_say_regional_or_every_site(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    warehouse.insert_frame("probe_results", three_site_history())
    page = _page(warehouse, tmp_path)
    assert 'id="sites"' in page
    nova, sable = _section(page, "nova"), _section(page, "sable")
    assert "nova: slower from frankfurt only (2026-01-25 to " in nova, nova
    assert "sable: slower at every site (2026-01-17 to " in sable, sable
    for view in (nova, sable):
        assert sorted(_ROW.findall(view)) == sorted(SITES), view
    assert nova.count("stable this week") == 2 and sable.count("stable this week") == 3
    frankfurt = re.search(r"<td>frankfurt</td>.*?</tr>", nova)
    assert frankfurt and "degraded 2026-01-25 to 2026-02-04" in frankfurt.group(0), nova


def test_one_site_keeps_the_report_as_it_was(warehouse: Warehouse, tmp_path: Path) -> None:
    warehouse.insert_frame("probe_results", site_history("frankfurt", 0, True))
    page = _page(warehouse, tmp_path)
    assert 'id="sites"' not in page and "site-scope" not in page


def test_a_simulated_history_and_live_probes_are_not_two_sites(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The demo's case: simulated history under its own site label beside live probes
    from this host. Sites are compared within a source, so there is nothing to compare."""
    live = site_history("thishost", 1, False).with_columns(source=pl.lit("live"))
    warehouse.insert_frame("probe_results", pl.concat([site_history("frankfurt", 0, True), live]))
    page = _page(warehouse, tmp_path)
    assert 'id="sites"' not in page and "site-scope" not in page
    assert warehouse.query("SELECT count(*) AS n FROM site_phases")["n"][0] == 0


def test_undecided_scope_says_the_overlap_could_be_chance() -> None:
    row = {
        "scope": "undecided", "sites": ["b", "a"], "n_sites": 3, "pvalue": 0.31,
        "start_at": START, "end_at": START + timedelta(days=2),
    }  # fmt: skip
    assert scope_sentence(row) == (
        "slower at 2 of 3 sites (2026-01-05 to 2026-01-07), but the overlap could be "
        "chance (p = 0.31): regional or provider-wide is unclear"
    )


def test_undecided_scope_without_a_test_says_so() -> None:
    """Too little data for the overlap test leaves its p-value empty (the demo: synthetic
    history from one site, a few live seconds from another)."""
    row = {
        "scope": "undecided", "sites": ["b", "a"], "n_sites": 2, "pvalue": None,
        "start_at": START, "end_at": START + timedelta(days=2),
    }  # fmt: skip
    assert scope_sentence(row) == (
        "slower at 2 of 2 sites (2026-01-05 to 2026-01-07), but the overlap could not be "
        "tested: regional or provider-wide is unclear"
    )
