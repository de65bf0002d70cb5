"""The report's "same model name, same model?" section, from the fixed_answers_changed sign.

One line per provider with a stored drift baseline, in plain words: whether the answers to
fixed one-token questions still match the accepted baseline, and since when they differ.
"""

from __future__ import annotations

import polars as pl

from pipeline.report import fmt
from pipeline.report.context import FixedAnswersView
from pipeline.report.data import ReportData

__all__ = ["fixed_answers"]

SIGN = "fixed_answers_changed"  # pipeline.drift.signs.SIGN (the report reads tables only)


def fixed_answers(data: ReportData) -> list[FixedAnswersView]:
    table = data.result("warning_signs")
    if table.height == 0:
        return []
    views = []
    for row in table.filter(pl.col("sign") == SIGN).sort("provider").iter_rows(named=True):
        detail = str(row.get("detail") or "")
        changed = bool(row["fires"])
        evidence = "tested with the other signs under false-discovery control"
        if fmt.known(row["qvalue"]):
            evidence = f"q = {row['qvalue']:.2g}" + (
                ", three days in a row or more" if row.get("persistent") else ""
            )
        sentence = detail[:1].upper() + detail[1:]
        views.append(FixedAnswersView(str(row["provider"]), sentence, evidence, changed))
    return views
