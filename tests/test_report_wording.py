"""Words at the top of the report that a reader with two minutes could misread: a stable
phase's severity interval of -0.3 % to +0.3 % read "0 % to 0 %", an interval with no
width. (The two-stage "since" wording is test_report_render's first-stage test.)
"""

from __future__ import annotations

from pipeline.report.confidence import Evidence, grade


def test_a_stable_interval_that_rounds_to_zero_keeps_its_width() -> None:
    stable = Evidence(False, 30_000, 700, (-0.0028, 0.0025), None, 0.97)
    details = grade(stable).details.replace("\u00a0", " ")
    assert "severity 95 % CI within ±0.5 %" in details, details
    assert "0 % to 0 %" not in details, details
    moved = Evidence(True, 30_000, 700, (0.12, 0.32), 1e-9, 0.9)
    assert "severity 95 % CI +12 % to +32 %" in grade(moved).details.replace("\u00a0", " ")
