"""The per-test deadline ends every kind of hang and leaves no child process behind.

Each case runs a real pytest session in a subprocess, on generated tests that hang
the ways this suite could: a blocking readline on a child that never writes, a wait
on a child that never exits, an event loop that never finishes (while busy tasks
swallow exceptions), a thread join, a test that catches the timeout and returns, a
thread left running after the session, and code that no signal can reach.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 2
GRACE_S = 8

_CONFTEST = 'pytest_plugins = ["tests.support.hang_guard"]\n'

_SETUP = """
import asyncio, os, signal, subprocess, sys, threading, time

def child(code="import time; time.sleep(3600)"):
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    with open(os.environ["CHILD_PIDS"], "a") as fh:
        fh.write(f"{proc.pid}\\n")
    return proc
"""

_RECOVERABLE = """
def test_readline_on_a_silent_child():
    child().stdout.readline()

def test_wait_on_a_child_that_never_exits():
    child().wait()

def test_event_loop_that_never_finishes_while_tasks_are_busy():
    async def busy():
        while True:
            sum(range(20_000))
            await asyncio.sleep(0)

    async def main():
        spinning = asyncio.create_task(busy())
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "import time; time.sleep(3600)", stdout=subprocess.PIPE
        )
        with open(os.environ["CHILD_PIDS"], "a") as fh:
            fh.write(f"{process.pid}\\n")
        await process.stdout.readline()
        await spinning

    asyncio.run(main())

def test_join_of_a_thread_that_never_ends():
    never = threading.Event()
    worker = threading.Thread(target=never.wait, daemon=True)
    worker.start()
    worker.join()

def test_that_swallows_the_timeout_still_fails():
    try:
        time.sleep(3600)
    except BaseException:
        pass

def test_the_session_goes_on():
    assert True

def test_leaves_a_thread_running():
    threading.Thread(target=threading.Event().wait).start()  # not a daemon: never ends
"""

_UNREACHABLE = """
def test_no_signal_reaches_it():
    child()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(3600)
"""


def _session(
    tmp_path: Path, tests: str, deadline_s: float, conftest: str = ""
) -> tuple[int, str, float, list[int]]:
    """Run pytest on ``tests`` in a child session; its exit status, output, seconds and
    the pids of the processes its tests started."""
    (tmp_path / "conftest.py").write_text(_CONFTEST + textwrap.dedent(conftest))
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\ntimeout = {TIMEOUT_S}\ntimeout_grace = {GRACE_S}\n"
    )
    (tmp_path / "test_hangs.py").write_text(textwrap.dedent(_SETUP) + textwrap.dedent(tests))
    pids = tmp_path / "pids.txt"
    pids.touch()
    env = dict(os.environ, PYTHONPATH=str(ROOT), CHILD_PIDS=str(pids))
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        raise AssertionError(f"the session still ran after {deadline_s}s:\n{out[-3000:]}") from None
    started = [int(line) for line in pids.read_text().split()]
    return proc.returncode, out, time.monotonic() - t0, started


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_every_hang_fails_its_test_and_the_session_goes_on(tmp_path: Path) -> None:
    status, out, seconds, children = _session(tmp_path, _RECOVERABLE, deadline_s=600)
    assert status == 1, out
    assert "5 failed, 2 passed" in out, out
    for name in (
        "test_readline_on_a_silent_child",
        "test_wait_on_a_child_that_never_exits",
        "test_event_loop_that_never_finishes_while_tasks_are_busy",
        "test_join_of_a_thread_that_never_ends",
        "test_that_swallows_the_timeout_still_fails",
    ):
        assert f"{name} ran past its {TIMEOUT_S}s deadline" in out, out
    # the thread left running would keep the process alive after the session
    assert f"the session finished but threads still run {GRACE_S}s later" in out, out
    assert len(children) == 3
    assert not [pid for pid in children if _alive(pid)]
    # The deadlines, not a crash, ended the tests. No upper bound on wall time here: a
    # loaded machine may take minutes to start the sessions; the messages above show
    # that the guard, not the outer deadline, ended every hang.
    assert seconds > 5 * TIMEOUT_S


def test_a_test_no_signal_reaches_ends_the_session_and_its_children(tmp_path: Path) -> None:
    status, out, seconds, children = _session(tmp_path, _UNREACHABLE, deadline_s=600)
    assert status == 1, out
    assert f"ran past its {TIMEOUT_S}s deadline and did not end {GRACE_S}s later" in out, out
    assert "test_no_signal_reaches_it" in out and "time.sleep(3600)" in out  # its stack
    assert len(children) == 1 and not _alive(children[0])
    assert seconds > TIMEOUT_S + GRACE_S  # ended by the guard's hard stop, after its grace


_SLOW_CLEANUP = f"""
import time

def pytest_configure(config):
    # runs after every pytest_unconfigure hook, before pytest flushes its output
    config.add_cleanup(lambda: time.sleep({GRACE_S} + 600))
"""


def test_a_session_ended_after_its_summary_keeps_the_summary(tmp_path: Path) -> None:
    # A main thread held up after the session has its summary in stdout's buffer when
    # the exit deadline ends the process; the exit flushes it first.
    status, out, seconds, _ = _session(
        tmp_path, "def test_fine():\n    assert True\n", deadline_s=600, conftest=_SLOW_CLEANUP
    )
    assert f"the session finished but threads still run {GRACE_S}s later" in out, out
    assert "1 passed" in out, out
    assert status == 1, out  # a session held up past its end fails, though its tests passed
    assert seconds < 600
