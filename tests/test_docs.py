"""The README documents every command, and every command and option has help text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from pipeline.cli import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def commands(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every (sub)command under ``group`` (typer ships its own click, so duck-typed)."""
    if hasattr(group, "commands"):
        for name, sub in group.commands.items():
            yield (*prefix, name), sub
            yield from commands(sub, (*prefix, name))


def test_every_command_is_in_the_readme() -> None:
    root = typer.main.get_command(app)
    found = list(commands(root))
    assert len(found) >= 6
    for path, command in found:
        if hasattr(command, "commands"):
            continue
        *parents, leaf = path
        assert f"nerfwatch {' '.join(path)}" in README or (
            parents and f"nerfwatch {' '.join(parents)}" in README and f"`{leaf}`" in README
        ), f"nerfwatch {' '.join(path)} is not in README.md"


def test_every_command_and_option_has_help() -> None:
    root = typer.main.get_command(app)
    for path, command in commands(root):
        assert (command.help or command.short_help or "").strip(), f"{path} has no help"
        for param in command.params:
            if param.name == "help":
                continue
            assert getattr(param, "help", None), f"{' '.join(path)} {param.name} has no help"


def test_readme_quick_start_matches_ci() -> None:
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 bootstrap.py test" in README and "python3 bootstrap.py test" in ci
    assert "python3 bootstrap.py demo" in README
