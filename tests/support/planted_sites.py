"""A planted history probed from three sites: each site's rows generated on their own
(own noise, gaps and phases), so per-site analysis has something to tell apart.

nova slows down (x1.8 TTFT) from day 20 to 30 at frankfurt only; sable slows down from
day 12 to 22 at every site.
"""

from __future__ import annotations

import polars as pl

from tests.support.planted import PlantedPhase, PlantedProvider, generate

__all__ = ["DAYS", "SITES", "site_history", "three_site_history"]

SITES = ("frankfurt", "virginia", "shanghai")
DAYS = 35


def site_history(site: str, seed: int, regional_here: bool) -> pl.DataFrame:
    """One site's rows; nova's slowdown only where ``regional_here``."""
    nova = PlantedProvider(
        "nova", "NovaCorp", [PlantedPhase(20, 30, short=1.8, long=1.8)] if regional_here else []
    )
    sable = PlantedProvider("sable", "Sable", [PlantedPhase(12, 22, short=1.8, long=1.8)])
    rows = generate([nova, sable], DAYS, cadence_min=10, seed=seed)
    return rows.with_columns(
        pl.lit(site).alias("probe_site"), (pl.lit(f"{site}-") + pl.col("run_id")).alias("run_id")
    )


def three_site_history() -> pl.DataFrame:
    """Every site's rows, nova's slowdown at frankfurt alone."""
    return pl.concat(
        [site_history(site, seed, site == "frankfurt") for seed, site in enumerate(SITES)]
    )
