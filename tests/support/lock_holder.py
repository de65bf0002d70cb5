"""Hold a DuckDB file open from another process, as a user's `duckdb` shell would.

    python -m tests.support.lock_holder PATH [--read-only] [--seconds N] [--wait S]

Prints ``ready`` once the file is open, then holds it until stdin closes or N seconds
pass. With ``--wait`` it retries for up to S seconds while another process (a daemon's
flush) has the file. Tests use it to prove that nothing surfaces a raw lock error.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from tests.support.waiting import read_line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--wait", type=float, default=0.0)
    args = parser.parse_args()
    con = _connect(args.path, args.read_only, args.wait)
    con.execute("SELECT 1").fetchall()
    print("ready", flush=True)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait(args.seconds)
    con.close()


def _connect(path: str, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return duckdb.connect(path, read_only=read_only)
        except duckdb.IOException:  # "Could not set lock on file": someone writes
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def holding(path: Path, *, read_only: bool = False) -> Iterator[subprocess.Popen[str]]:
    """Context manager: another process holds ``path`` until the block ends.

    A holder that cannot open the file fails the block at once, with its stderr.
    """
    cmd = [sys.executable, "-m", "tests.support.lock_holder", str(path)]
    if read_only:
        cmd.append("--read-only")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        cmd,
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = read_line(proc, 120, f"'ready' from the holder of {path.name}")
        assert line == "ready", f"the holder of {path.name} said {line!r}"
        yield proc
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
            raise AssertionError(f"the holder of {path.name} did not let go within 60s") from None
        finally:
            for stream in (proc.stdout, proc.stderr):
                if stream:
                    stream.close()


if __name__ == "__main__":
    main()
