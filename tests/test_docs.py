"""The README documents every command, and every command and option has help text."""

from __future__ import annotations

import re
import shlex
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main
from typer.testing import CliRunner

import bootstrap
from pipeline.cli import app
from pipeline.config.starter import STARTER_CONFIG
from probes.adapters.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


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


def test_help_shows_no_value_for_flags() -> None:
    """A flag takes no value, so ``--help`` must not print a type such as ``<bool>`` beside
    it (typer 0.29 does, for every flag including ``--help`` itself)."""
    root = typer.main.get_command(app)
    paths = [(), *(path for path, _ in commands(root))]
    runner = CliRunner()
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, result.output
        assert "--help" in result.output
        assert "<bool>" not in result.output, f"nerfwatch {' '.join(path)} --help:\n{result.output}"


def readme_commands(program: str) -> list[list[str]]:
    """Every ``program ...`` the README shows, in ``sh`` blocks and in inline code, as
    tokens (comments and the placeholder ``...`` dropped)."""
    blocks = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
    lines = [line for block in blocks for line in block.splitlines()]
    lines += re.findall(r"`([^`]+)`", re.sub(r"```.*?```", "", README, flags=re.S))
    found = []
    for line in lines:
        line = line.split("#", 1)[0].replace("\n", " ").strip()
        if line.startswith(f"{program} "):
            words = shlex.split(line)[len(program.split()) :]
            found.append([t for t in words if t != "..."])
    return found


def test_readme_nerfwatch_commands_and_options_exist() -> None:
    root = typer.main.get_command(app)
    shown = readme_commands("nerfwatch")
    assert len(shown) >= 20
    for tokens in shown:
        command: Any = root
        while tokens and hasattr(command, "commands") and tokens[0] in command.commands:
            command = command.commands[tokens.pop(0)]
        assert not hasattr(command, "commands") or not tokens, f"unknown command in {tokens}"
        options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        for token in tokens:
            token = token.strip("[]")  # optional parts are shown in brackets
            if token.startswith("-"):
                assert token.split("=")[0] in options, f"README: {command.name} has no {token}"


def test_readme_bootstrap_and_venv_commands_exist() -> None:
    for tokens in readme_commands("python3 bootstrap.py"):
        assert tokens[0] in bootstrap.COMMANDS, f"bootstrap.py has no command {tokens[0]}"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name in set(re.findall(r"\.venv/bin/(\w+)", README)):
        assert name in scripts or (Path(sys.prefix) / "bin" / name).exists(), name


def test_readme_says_when_uv_run_works() -> None:
    """bootstrap may install uv privately, so a bare ``uv run`` is not a promise we keep."""
    paragraphs = README.split("\n\n")
    for paragraph in (p for p in paragraphs if "uv run" in p):
        assert "on your PATH" in paragraph, paragraph


def test_every_preset_is_in_the_readme_and_the_starter_config() -> None:
    """A user who cannot find a preset (llamacpp was in neither) configures a plain one and
    loses what it does, e.g. sizing long prompts with the server's own /tokenize."""
    listed = re.search(r"`preset` \(wire quirks: ([^)]*)\)", README)
    assert listed, "README: the [[providers]] row no longer lists the presets"
    for name in PRESETS:
        assert re.search(rf"\b{re.escape(name)}\b", listed.group(1)), f"README: preset {name}"
        assert f'preset = "{name}"' in STARTER_CONFIG, f"nerfwatch init: preset {name}"
