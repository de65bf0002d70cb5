"""Hold a DuckDB file open from another process, as a user's `duckdb` shell would.

    python -m tests.support.lock_holder PATH [--read-only] [--seconds N]

Prints ``ready`` once the file is open, then holds it until stdin closes or N seconds
pass. Tests use it to prove that nothing surfaces a raw lock error.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--seconds", type=float, default=3600.0)
    args = parser.parse_args()
    con = duckdb.connect(args.path, read_only=args.read_only)
    con.execute("SELECT 1").fetchall()
    print("ready", flush=True)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait(args.seconds)
    con.close()


@contextmanager
def holding(path: Path, *, read_only: bool = False) -> Iterator[subprocess.Popen[str]]:
    """Context manager: another process holds ``path`` until the block ends."""
    cmd = [sys.executable, "-m", "tests.support.lock_holder", str(path)]
    if read_only:
        cmd.append("--read-only")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"lock holder did not start: {line!r}")
        yield proc
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()


if __name__ == "__main__":
    main()
