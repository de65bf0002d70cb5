"""Numbers in the report's words: a relative change that rounds to zero has no sign."""

from __future__ import annotations

import pytest

from pipeline.report import fmt


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (-0.001, "0 %"),
        (0.004, "0 %"),
        (0.0, "0 %"),
        (0.4, "+40 %"),
        (-0.2, "-20 %"),
        (-0.006, "-1 %"),
    ],
)
def test_a_relative_change_is_signed_unless_it_rounds_to_zero(value: float, shown: str) -> None:
    """A stable phase's severity interval read "-0 % to +0 %" in the demo."""
    assert fmt.rel(value).replace("\u00a0", " ") == shown
