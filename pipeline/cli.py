"""The ``nerfwatch`` command. Thin: each command module in ``pipeline.commands`` parses
options and calls into the library; errors become one line and an exit status here."""

from __future__ import annotations

import typer

from pipeline.commands import (
    analyze,
    daemon,
    demo,
    drift,
    foundation,
    probe,
    report,
    simulate,
    warehouse,
)

__all__ = ["app", "main"]

app = typer.Typer(
    name="nerfwatch",
    help="Measure whether your LLM API provider got slower or dumber.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for module in (foundation, simulate, probe, drift, daemon, analyze, report, demo, warehouse):
    module.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
