"""Bounded waits for tests: every wait ends, and a timeout names what was awaited.

A deadline here only matters when something is already wrong, so the defaults are
long (the suite runs on loaded machines); a passing test never waits for one.
"""

from __future__ import annotations

import asyncio
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any, TypeVar

__all__ = [
    "read_line",
    "read_line_async",
    "start_server",
    "stop_server",
    "wait_until",
    "wait_until_async",
    "within",
]

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 60.0


def wait_until(
    predicate: Callable[[], bool], timeout: float = DEFAULT_TIMEOUT_S, what: str = ""
) -> None:
    """Poll ``predicate`` until true; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(0.02)


async def wait_until_async(
    predicate: Callable[[], bool], timeout: float = DEFAULT_TIMEOUT_S, what: str = ""
) -> None:
    """``wait_until`` for code running inside the event loop."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        await asyncio.sleep(0.02)


async def within(awaitable: Awaitable[T], timeout: float, what: str) -> T:
    """Await ``awaitable``, or fail naming ``what`` after ``timeout`` seconds."""
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None


def read_line(
    proc: subprocess.Popen[str], timeout: float = DEFAULT_TIMEOUT_S, what: str = "a line"
) -> str:
    """The next line of a child's stdout, stripped, waiting at most ``timeout`` seconds.

    A child that exits or stalls first is killed, and the failure carries its exit
    status and stderr (when piped), so a broken helper fails the test at once instead
    of leaving it blocked in ``readline()``.
    """
    assert proc.stdout is not None, "read_line needs stdout=subprocess.PIPE"
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: lines.put(_readline(proc.stdout)), daemon=True)
    reader.start()
    try:
        line = lines.get(timeout=timeout)
    except queue.Empty:
        failure = f"no {what} from {_describe(proc)} within {timeout}s"
    else:
        if line:
            return line.strip()
        failure = f"{_describe(proc)} closed stdout before {what}"
    failure += _stop(proc)
    reader.join(30)  # the child is gone: its stdout is at EOF
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    raise AssertionError(failure)


def start_server(
    command: list[str],
    log: Path,
    ready: Callable[[subprocess.Popen[bytes]], None],
    *,
    stop_timeout: float,
    user: str | None = None,
) -> subprocess.Popen[bytes]:
    """Start a server child with its output in ``log``; ``ready`` waits for it (with its
    own deadline) and raises if it never gets there, and then the child is stopped."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, user=user)
    try:
        ready(proc)
    except BaseException:
        stop_server(proc, stop_timeout)
        raise
    return proc


def stop_server(
    proc: subprocess.Popen[Any], timeout: float, how: signal.Signals = signal.SIGTERM
) -> None:
    """Stop a server child by its PID: ``how``, then SIGKILL if it is still there after
    ``timeout`` seconds; waits for it either way (no zombie, no stray listener)."""
    if proc.poll() is not None:
        return
    proc.send_signal(how)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


def _readline(stream: IO[str] | None) -> str:
    assert stream is not None
    try:
        return stream.readline()
    except ValueError:  # closed by the waiting side after a timeout
        return ""


def _describe(proc: subprocess.Popen[str]) -> str:
    args = proc.args
    text = " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)
    return f"child {proc.pid} ({text[:120]})"


def _stop(proc: subprocess.Popen[str]) -> str:
    """Kill the child if it still runs; its exit status and stderr, for a message."""
    if proc.poll() is None:
        proc.kill()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        return "; it did not exit after SIGKILL"
    err = ""
    if proc.stderr is not None:
        err = _read_rest(proc.stderr)
    return f"; exit status {proc.returncode}; stderr: {err.strip()[-2000:] or '(empty)'}"


def _read_rest(stream: IO[str], timeout: float = 10.0) -> str:
    """What is left on a dead child's pipe; a grandchild may still hold it open."""
    rest: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: rest.put(stream.read()), daemon=True).start()
    try:
        return rest.get(timeout=timeout)
    except queue.Empty:
        return "(still open: another process holds the pipe)"


async def read_line_async(
    proc: asyncio.subprocess.Process, timeout: float = DEFAULT_TIMEOUT_S, what: str = "a line"
) -> bytes:
    """``read_line`` for a child started with ``asyncio.create_subprocess_exec``."""
    assert proc.stdout is not None, "read_line_async needs stdout=PIPE"
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), timeout)
    except TimeoutError:
        raise AssertionError(
            f"no {what} from child {proc.pid} within {timeout}s{await _stop_async(proc)}"
        ) from None
    if not line:
        raise AssertionError(
            f"child {proc.pid} closed stdout before {what}{await _stop_async(proc)}"
        )
    return line.strip()


async def _stop_async(proc: asyncio.subprocess.Process) -> str:
    if proc.returncode is None:
        proc.kill()
    try:
        await asyncio.wait_for(proc.wait(), 30)
    except TimeoutError:
        return "; it did not exit after SIGKILL"
    err = b""
    if proc.stderr is not None:
        try:
            err = await asyncio.wait_for(proc.stderr.read(), 10)
        except TimeoutError:
            err = b"(still open: another process holds the pipe)"
    text = err.decode(errors="replace").strip()[-2000:] or "(empty)"
    return f"; exit status {proc.returncode}; stderr: {text}"
