"""The README documents every command, and every command and option has help text."""

from __future__ import annotations

import re
import shlex
import subprocess
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


def readme_section(title: str) -> str:
    """The README's ``## title`` section, up to the next ``## `` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, flags=re.S | re.M)
    assert match, f"README.md has no section '## {title}'"
    return match.group(1)


def toml_literal(value: Any) -> str:
    """A default as the README writes it: the TOML a user would type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, int) and value >= 10_000:
        return f"{value:_}"
    return repr(value)


def test_every_config_key_and_its_default_is_in_the_readme() -> None:
    """A key the checker accepts but the README omits is a setting nobody finds (the
    starter file comments only the common ones), and a stated default that is not the
    code's misleads. Keys with a scalar default must read ``key = default``."""
    from pipeline.config.keys import SECTIONS

    config = readme_section("Configuration")
    for section, keys in SECTIONS.items():
        if not section:
            continue
        header = {"providers": "[[providers]]", "probes": "[[probes]]"}.get(section)
        header = header or {"alerts.webhooks": "[[alerts.webhooks]]"}.get(section)
        header = header or {"budget.providers": "[budget.providers.NAME]"}.get(section)
        assert f"`{header or f'[{section}]'}`" in config, f"README: section {section}"
        for key, spec in keys.items():
            if isinstance(spec.default, bool | int | float | str):
                shown = f"`{key} = {toml_literal(spec.default)}`"
            elif f"{section}.{key}" in SECTIONS:  # a sub-table, shown by its header
                continue
            else:
                shown = f"`{key}`"
            assert shown in config, f"README configuration: [{section}] {shown} is missing"


def test_readme_canned_queries_views_and_tables_exist_and_are_named() -> None:
    """Every canned query, view and table is named in the README, and every one the README
    runs with ``nerfwatch sql NAME`` exists."""
    canned = {p.stem for p in (ROOT / "sql" / "queries").glob("*.sql")}
    assert len(canned) >= 10
    for name in canned:
        assert f"`{name}`" in README, f"README: canned query {name} is not named"
    for tokens in readme_commands("nerfwatch"):
        if tokens[:1] == ["sql"] and len(tokens) > 1 and re.fullmatch(r"[a-z_]+", tokens[1]):
            assert tokens[1] in canned, f"README runs `nerfwatch sql {tokens[1]}`: no such query"
    sql = {
        folder: "\n".join(f.read_text("utf-8") for f in (ROOT / "sql" / folder).glob("*.sql"))
        for folder in ("views", "schema")
    }
    views = set(re.findall(r"CREATE OR REPLACE VIEW (\w+)", sql["views"], flags=re.I))
    tables = set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", sql["schema"], flags=re.I))
    assert {"probes", "hourly"} <= views and "probe_results" in tables
    for name in sorted(views | tables):
        assert f"`{name}`" in README, f"README: view or table {name} is not named"


def test_every_repository_path_the_readme_names_exists() -> None:
    """A named file that was renamed or deleted sends the reader nowhere."""
    folders = "sql|tests|pipeline|probes|benchmarks|ops|docs|reports"
    named = set(re.findall(rf"`((?:{folders})/[^`\s*]+)`", README))
    scripts = re.findall(r"`(bench_\w+\.py|heldout_estimate\.py)`", README)
    named |= {f"benchmarks/{name}" for name in scripts}
    assert len(named) >= 20
    missing = sorted(path for path in named if not (ROOT / path.rstrip("/")).exists())
    assert not missing, f"README names paths that do not exist: {missing}"


def test_every_benchmark_is_in_the_readme_table() -> None:
    """Each committed ``benchmarks/bench_*.py`` prints figures a reader should find beside
    their target (a script still being written, not yet in git, is not held to it)."""
    listed = subprocess.run(
        ["git", "ls-files", "benchmarks/bench_*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert len(listed) >= 10
    table = readme_section("Benchmarks")
    for script in listed:
        name = Path(script).name
        assert f"| `{name}` |" in table, f"README benchmarks: {name} has no row"


def test_readme_says_which_commands_take_db_and_config() -> None:
    """The README says every warehouse command takes ``--db`` or ``--config`` except
    ``run`` (a config only) and ``simulate history`` (``--db`` only); a new exception
    must be written there too."""
    root = typer.main.get_command(app)
    only_config, only_db = set(), set()
    for path, command in commands(root):
        options = {o for p in command.params for o in p.opts}
        if "--config" in options and "--db" not in options:
            only_config.add(" ".join(path))
        if "--db" in options and "--config" not in options:
            only_db.add(" ".join(path))
    assert only_config == {"run", "config check"}, only_config  # config check: no warehouse
    assert only_db == {"simulate history"}, only_db
    sql = readme_section("SQL")
    assert "except `run` (a config\nonly) and `simulate history` (`--db` only)" in sql
