"""bootstrap.py keeps installer chatter out of the log unless the install fails."""

from __future__ import annotations

import sys

import pytest

import bootstrap


def test_quiet_command_prints_nothing_when_it_succeeds(capfd: pytest.CaptureFixture[str]) -> None:
    bootstrap.run_quietly(sys.executable, "-c", "print('Reading package lists...' * 3)")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_quiet_command_shows_its_output_when_it_fails(capfd: pytest.CaptureFixture[str]) -> None:
    script = "import sys; print('E: Unable to locate package'); sys.exit(100)"
    with pytest.raises(SystemExit) as stop:
        bootstrap.run_quietly(sys.executable, "-c", script)
    assert stop.value.code == 100
    out, _ = capfd.readouterr()
    assert "E: Unable to locate package" in out
    assert "[bootstrap] failed (100)" in out
