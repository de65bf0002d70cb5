"""Bounded waits on real child processes: a line, or a failure that says why, in time."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from tests.support.waiting import read_line, read_line_async, wait_until, within

_FAILS = "import sys; sys.exit('cannot open the database: it is locked')"
_SILENT = "import time; time.sleep(3600)"
_HALF_A_LINE = "import sys, time; sys.stdout.write('hold'); sys.stdout.flush(); time.sleep(3600)"


def _child(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_read_line_returns_the_line() -> None:
    with _child("print('ready', flush=True)") as proc:
        assert read_line(proc, 60, "'ready'") == "ready"
        assert proc.wait(timeout=60) == 0


def test_a_child_that_dies_fails_at_once_with_its_stderr() -> None:
    proc = _child(_FAILS)
    t0 = time.monotonic()
    with pytest.raises(AssertionError) as info:
        read_line(proc, 60, "'ready' from the holder")
    message = str(info.value)
    assert "closed stdout before 'ready' from the holder" in message
    assert "exit status 1" in message and "it is locked" in message
    assert time.monotonic() - t0 < 30  # the exit ended the wait, not the deadline


@pytest.mark.parametrize("code", [_SILENT, _HALF_A_LINE], ids=["silent", "half a line"])
def test_a_stalled_child_fails_at_the_deadline_and_is_killed(code: str) -> None:
    proc = _child(code)
    t0 = time.monotonic()
    with pytest.raises(AssertionError, match=r"no 'ready' from child \d+ .* within 0\.5s"):
        read_line(proc, 0.5, "'ready'")
    assert time.monotonic() - t0 < 30
    assert proc.returncode == -9


def test_read_line_async_fails_with_the_childs_stderr() -> None:
    async def main() -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _FAILS, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        await read_line_async(proc, 60, "'holding'")

    with pytest.raises(AssertionError) as info:
        asyncio.run(main())
    assert "closed stdout before 'holding'" in str(info.value)
    assert "it is locked" in str(info.value)


def test_read_line_async_kills_a_silent_child_at_the_deadline() -> None:
    async def main() -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _SILENT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        with pytest.raises(AssertionError, match=r"no 'holding' from child \d+ within 0\.5s"):
            await read_line_async(proc, 0.5, "'holding'")
        return proc

    assert asyncio.run(main()).returncode == -9


def test_within_and_wait_until_name_what_they_waited_for() -> None:
    with pytest.raises(AssertionError, match=r"timed out after 0\.2s waiting for the event"):
        asyncio.run(within(asyncio.Event().wait(), 0.2, "the event"))
    with pytest.raises(AssertionError, match=r"timed out after 0\.2s waiting for the flag"):
        wait_until(lambda: False, 0.2, "the flag")
