"""A per-test deadline that ends a hung test, whatever it is blocked in.

pytest-timeout's ``signal`` method raises once, in whatever Python frame the main
thread runs when SIGALRM arrives. Inside an event loop that frame is usually a task
step or a callback, which catches the exception and goes on waiting, so the test
hangs for good. Its ``thread`` method ends the whole session with ``os._exit`` and
leaves the test's child processes running.

This plugin takes over pytest-timeout's timer (same ``timeout`` setting, marker and
command-line option). When a test passes its deadline:

1. it records every thread's stack, kills the child processes the test started (a
   read or wait on them returns at once), and raises ``TestTimeout`` in the main
   thread every second until pytest has the failure. ``TestTimeout`` is a
   ``SystemExit``, the one kind of exception asyncio lets out of a task step and a
   callback, and pytest reports it as this test's failure;
2. if the test has still not finished ``timeout_grace`` seconds later (stuck in C
   code, or in teardown), it kills every child process and ends the session, exit 1.

A session whose non-daemon threads outlive it is ended the same way. Child processes
are found in /proc (Linux, like the daemon's own process checks).
"""

from __future__ import annotations

import contextlib
import gc
import linecache
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

DEFAULT_GRACE_S = 60.0
REPEAT_S = 1.0
_PROMPT_SWITCH_S = 0.0001  # the GIL switch interval while a watcher reads /proc
# An emergency exit may come while the test spins in Python, when every source file
# read costs a GIL switch interval or more: look up only the frames that say where.
_EMERGENCY_LINES = 3


class TestTimeout(SystemExit):
    """A test ran past its deadline."""

    __test__ = False  # not a test class, despite the name


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "timeout_grace",
        "seconds a timed-out test gets to unwind before the session is ended",
        default=str(DEFAULT_GRACE_S),
    )


@dataclass
class Deadline:
    """One test's deadline, watched from a thread of its own."""

    item: pytest.Item
    timeout: float
    grace: float
    started: float  # CLOCK_BOOTTIME, the clock of a process's start time in /proc
    finished: threading.Event = field(default_factory=threading.Event)
    expired: bool = False
    delivered: bool = False  # a phase that ran past the deadline has ended
    stacks: Stacks | None = None

    @property
    def message(self) -> str:
        return f"Timeout: {self.item.nodeid} ran past its {self.timeout:g}s deadline"

    def watch(self) -> None:
        if self.finished.wait(self.timeout):
            return
        with _prompt_switches():
            self.stacks = Stacks.now()
            self.expired = True
            _kill(descendants(started_since=self.started))
        ends_at = time.monotonic() + self.grace
        main = threading.main_thread().ident
        assert main is not None
        while not self.delivered:
            signal.pthread_kill(main, signal.SIGALRM)
            if self.finished.wait(REPEAT_S):
                return
            if time.monotonic() > ends_at:
                self.end_session()
        if not self.finished.wait(max(0.0, ends_at - time.monotonic())):
            self.end_session()

    def end_session(self) -> None:
        _emergency_exit(
            self.item.config,
            f"{self.message} and did not end {self.grace:g}s later; ending the session",
            Stacks.now(),
        )


_current: Deadline | None = None


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    """Raise in the main thread while the current test is past its deadline. Stays
    installed between tests: a late alarm then does nothing (default: kill the run)."""
    __tracebackhide__ = True
    deadline = _current
    if deadline is not None and deadline.expired and not deadline.delivered:
        raise TestTimeout(deadline.message)


@pytest.hookimpl
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool:
    global _current
    grace = float(str(item.config.getini("timeout_grace")))
    started = time.clock_gettime(time.CLOCK_BOOTTIME)
    _current = Deadline(item, float(settings.timeout), grace, started)
    signal.signal(signal.SIGALRM, _on_alarm)  # again: a test may have replaced it
    threading.Thread(target=_current.watch, name=f"deadline {item.nodeid}", daemon=True).start()
    return True


@pytest.hookimpl
def pytest_timeout_cancel_timer(item: pytest.Item) -> bool:
    global _current
    if _current is not None and _current.item is item:
        _current.finished.set()
        _current = None
    return True


def _phase(item: pytest.Item) -> Generator[None, None, None]:
    """Around setup, call and teardown: once a phase that ran past the deadline ends,
    pytest holds its failure and the interrupts stop, before pytest's own code runs."""
    try:
        return (yield)
    finally:
        deadline = _current
        if deadline is not None and deadline.item is item and deadline.expired:
            deadline.delivered = True


pytest_runtest_setup = pytest.hookimpl(wrapper=True, tryfirst=True)(_phase)
pytest_runtest_call = pytest.hookimpl(wrapper=True, tryfirst=True)(_phase)
pytest_runtest_teardown = pytest.hookimpl(wrapper=True, tryfirst=True)(_phase)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    deadline = _current
    if deadline is None or deadline.item is not item or not deadline.expired:
        return report
    if report.passed and report.when == "call":  # it caught the timeout and carried on
        report.outcome = "failed"
        report.longrepr = deadline.message
    if deadline.stacks is not None:
        report.sections.append(("Stacks at the deadline", deadline.stacks.format()))
        deadline.stacks = None
    if report.when == "teardown":
        # What the interrupted test left (an event loop's subprocess transports, say) is
        # finalised now rather than at some later allocation. On Python 3.11 a finaliser
        # that fails inside the AST constructor (pytest formats its traceback, which
        # parses source) breaks that parse with "AST constructor recursion depth
        # mismatch": it broke the session's summary once, in a lazy import.
        gc.collect()
    return report


@pytest.hookimpl
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Threads a test left running must not keep the finished session alive."""
    grace = float(str(config.getini("timeout_grace")))
    status = config.stash.get(_EXIT_STATUS, 1)

    def end_if_still_running() -> None:
        time.sleep(grace)
        names = [t.name for t in threading.enumerate() if not t.daemon and t.is_alive()]
        _emergency_exit(
            config,
            f"the session finished but threads still run {grace:g}s later: {names}",
            Stacks.now(),
            status=status or 1,
        )

    threading.Thread(target=end_if_still_running, name="exit deadline", daemon=True).start()


_EXIT_STATUS = pytest.StashKey[int]()


def descendants(started_since: float = 0.0) -> set[int]:
    """Pids of every process below this one (started since ``started_since``, seconds
    of CLOCK_BOOTTIME), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[tuple[int, float]]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # the process ended meanwhile
            continue
        start = int(fields[19]) / tick  # field 22 of stat: start time in clock ticks
        children.setdefault(int(fields[1]), []).append((int(stat.parent.name), start))
    found: set[int] = set()
    todo = [os.getpid()]
    while todo:
        for child, start in children.get(todo.pop(), []):
            if child not in found:
                todo.append(child)
                if start >= started_since - 1 / tick:  # stat rounds down to a tick
                    found.add(child)
    return found


def _kill(pids: set[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def _prompt_switches() -> Generator[None, None, None]:
    """Let a watcher thread get the GIL back quickly after each file it reads.

    A test spinning in Python keeps the GIL for a whole switch interval (5 ms) every
    time the watcher gives it up for a read, and finding the test's children reads
    every process's /proc/N/stat: one minute under a busy event loop, against a
    fraction of a second at 0.1 ms.
    """
    before = sys.getswitchinterval()
    sys.setswitchinterval(_PROMPT_SWITCH_S)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@dataclass
class Stacks:
    """Every other thread's stack, taken without reading a source file.

    A watcher thread must not look up source lines: each file read gives up the GIL,
    and a test spinning in Python takes it back for a whole switch interval, so
    formatting a few dozen frames took minutes. Lines are looked up when the stacks are
    formatted: in the main thread once the test has let go, or for the innermost
    frames only in an emergency exit.
    """

    threads: list[tuple[str, list[traceback.FrameSummary]]]

    @classmethod
    def now(cls) -> Stacks:
        names = {t.ident: t.name for t in threading.enumerate()}
        here = threading.get_ident()
        return cls(
            [
                (names.get(ident, str(ident)), _frames(frame))
                for ident, frame in sys._current_frames().items()
                if ident != here
            ]
        )

    def format(self, lines_per_thread: int | None = None) -> str:
        """The stacks as Python prints them, with the source line of every frame, or of
        only the innermost ``lines_per_thread`` frames of each thread."""
        out = []
        for name, frames in self.threads:
            out.append(f"--- thread {name} ---\n")
            looked_up_from = 0 if lines_per_thread is None else len(frames) - lines_per_thread
            for depth, frame in enumerate(frames):
                out.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}\n')
                line = ""
                if depth >= looked_up_from:
                    line = linecache.getline(frame.filename, frame.lineno or 0)
                if line.strip():
                    out.append(f"    {line.strip()}\n")
        return "".join(out)


def _frames(frame: FrameType) -> list[traceback.FrameSummary]:
    """The frames of one stack, outermost first. No file is read or even checked:
    ``StackSummary.extract`` would stat every file, giving up the GIL each time."""
    frames = [
        traceback.FrameSummary(f.f_code.co_filename, lineno, f.f_code.co_name, lookup_line=False)
        for f, lineno in traceback.walk_stack(frame)
    ]
    return frames[::-1]


def _emergency_exit(config: pytest.Config, why: str, stacks: Stacks, status: int = 1) -> None:
    """Kill every child process, say why on the real stderr, and exit at once, keeping
    what pytest already printed (its summary may still sit in stdout's buffer)."""
    sys.setswitchinterval(_PROMPT_SWITCH_S)  # for good: the process ends here
    _kill(descendants())
    capture = config.pluginmanager.getplugin("capturemanager")
    try:
        if capture is not None:
            capture.suspend_global_capture(in_=True)
    finally:
        _flush_standard_streams(config, within_s=2.0)
        text = stacks.format(lines_per_thread=_EMERGENCY_LINES)
        os.write(2, f"\n{why}\n{text}\n{why}\n".encode(errors="replace"))
        os._exit(status)


def _flush_standard_streams(config: pytest.Config, within_s: float) -> None:
    """Flush pytest's terminal and the standard streams from a helper thread: a main
    thread stuck mid-write holds the stream's lock, and an exit must not wait long."""

    def flush() -> None:
        for stream in (config.get_terminal_writer(), sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # closed, or replaced by a capture
                stream.flush()

    flusher = threading.Thread(target=flush, name="flush before exit", daemon=True)
    flusher.start()
    flusher.join(within_s)
