"""The historical series with documented breaks: well formed, and each one documented."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data" / "changepoints"
DOCUMENTED = ["historical.json", "documented_blind.json", "documented_blind_2.json"]


@pytest.mark.parametrize("file", DOCUMENTED)
def test_each_documented_series_is_well_formed_and_documented(file: str) -> None:
    series = json.loads((DATA / file).read_text())
    readme = (DATA / "README.md").read_text()
    assert series
    for name, item in series.items():
        values, cps = item["values"], item["cps"]
        # A missing value is null (detect() skips it); anything else is a finite number.
        present = [v for v in values if v is not None]
        assert all(math.isfinite(v) for v in present)
        assert len(present) >= 0.9 * len(values)
        assert cps == sorted(set(cps))
        assert all(0 < c < len(values) for c in cps)
        assert f"`{name}`" in readme
        assert item["first"] and item["step"]


@pytest.mark.parametrize("file", DOCUMENTED)
def test_each_documented_break_is_the_one_the_readme_cites(file: str) -> None:
    """The README's paragraph for a series gives each break in bold as ``**index (date)**``,
    with its event and citation: those indices, in order, are the file's change points."""
    series = json.loads((DATA / file).read_text())
    readme = (DATA / "README.md").read_text()
    for name, item in series.items():
        paragraph = re.search(
            rf"- \*\*`{re.escape(name)}`\*\*(.*?)(?=\n- \*\*`|\n\n|\Z)", readme, re.S
        )
        assert paragraph, f"{file}: no README paragraph for {name}"
        cited = [int(i) for i in re.findall(r"\*\*(\d+)\s+\(", paragraph.group(1))]
        assert cited == item["cps"], f"{file}: {name}"


@pytest.mark.parametrize(
    "file",
    [
        "visual_annotated.json",
        "visual_blind.json",
        "visual_holdout.json",
        "visual_holdout_2.json",
        "visual_holdout_3.json",
        "visual_unseen.json",
        "visual_unseen_2.json",
        "visual_unseen_3.json",
        "visual_unseen_4.json",
        "visual_unseen_5.json",
        "visual_unseen_6.json",
        "visual_unseen_7.json",
        "visual_unseen_8.json",
        "visual_unseen_9.json",
        "visual_unseen_10.json",
        "visual_unseen_11.json",
        "visual_unseen_12.json",
        "visual_unseen_13.json",
        "visual_unseen_14.json",
        "visual_unseen_15.json",
        "visual_unseen_16.json",
        "visual_unseen_17.json",
        "visual_unseen_18.json",
        "visual_unseen_19.json",
        "visual_unseen_20.json",
        "visual_unseen_21.json",
        "visual_unseen_22.json",
        "visual_unseen_23.json",
        "visual_unseen_24.json",
        "visual_unseen_25.json",
        "visual_unseen_26.json",
        "visual_unseen_27.json",
        "visual_unseen_28.json",
        "visual_unseen_29.json",
        "visual_unseen_30.json",
    ],
)
def test_each_visual_series_has_three_annotators_and_a_documented_source(file: str) -> None:
    series = json.loads((DATA / file).read_text())
    readme = (DATA / "README.md").read_text()
    assert len(series) >= 25  # the fourteenth lost 12 of 40 draws as near copies
    for name, item in series.items():
        values, marks = item["values"], item["annotations"]
        present = [v for v in values if v is not None]
        assert all(math.isfinite(v) for v in present)
        assert len(present) >= 0.75 * len(values)  # ozone and measles counts have gaps
        assert len(marks) == 3, name
        for annotator in marks:
            assert annotator == sorted(set(annotator))
            assert all(0 < c < len(values) for c in annotator)
        assert f"`{name}` {item['source']} ({len(values)})" in readme
