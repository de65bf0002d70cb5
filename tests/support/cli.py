"""``nerfwatch`` run in-process as its console script runs it, with what it printed."""

from __future__ import annotations

import pytest

from pipeline.cli import main

__all__ = ["run_main"]


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    """Exit status, stdout, and stderr's lines of ``nerfwatch ARGV``."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    out, err = capsys.readouterr()
    assert isinstance(stopped.value.code, int)
    return stopped.value.code, out, err.splitlines()
