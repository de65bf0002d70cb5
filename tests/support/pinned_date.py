"""``--pin-date``: run the whole session as if the wall clock read another date.

    pytest --pin-date "2026-11-22T23:50"    # a Sunday night, minutes before a new ISO week

Wall-clock reads in this process (``datetime.now``, ``time.time``) start at that moment
and tick on; monotonic clocks are untouched, so timeouts and waits behave as usual. It
proves what the suite claims: no test depends on the day it runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

__all__: list[str] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--pin-date",
        default=None,
        help="ISO date-time (UTC) the wall clock starts at for this session",
    )


@pytest.fixture(scope="session", autouse=True)
def _pinned_wall_clock(request: pytest.FixtureRequest) -> Iterator[None]:
    text = request.config.getoption("--pin-date")
    if not text:
        yield
        return
    import time_machine

    moment = datetime.fromisoformat(text)
    with time_machine.travel(moment, tick=True):
        yield
