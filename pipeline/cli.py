"""The ``nerfwatch`` command. Thin: each command module in ``pipeline.commands`` parses
options and calls into the library; errors become one line and an exit status here."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

try:  # Typer 0.2x carries its own copy of Click and raises that copy's exceptions
    from typer._click import exceptions as click_errors
except ImportError:  # older Typer runs on Click itself
    from click import exceptions as click_errors  # type: ignore[no-redef]

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
from pipeline.commands.new_folders import forget, remove_empty_new_folders

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


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point. A failed command leaves no empty folder it created
    (``pipeline.commands.new_folders``); a folder that was there before stays."""
    forget()
    try:
        _run(argv)
    except SystemExit as stopped:
        if stopped.code not in (None, 0):
            remove_empty_new_folders()
        forget()
        raise
    except BaseException:  # a traceback (a bug) is a failure too
        remove_empty_new_folders()
        raise


def _run(argv: Sequence[str] | None) -> None:
    """Run the command and exit. A usage error (unknown option, missing value) is one line
    naming the command and how to get its help, and exit status 2, like every other bad input."""
    try:
        status = app(args=argv, prog_name="nerfwatch", standalone_mode=False)
    except click_errors.NoArgsIsHelpError:
        sys.exit(2)  # the help was printed by Typer; nothing was asked of the command
    except click_errors.UsageError as exc:
        command = f"{exc.ctx.command_path} --help" if exc.ctx else "--help"
        typer.echo(f"error: {exc.format_message()} (see '{command}')", err=True)
        sys.exit(exc.exit_code)
    except click_errors.ClickException as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(1)
    # a command returns None; typer.Exit(code) comes back as its code
    sys.exit(status if isinstance(status, int) else 0)


if __name__ == "__main__":  # `python -m pipeline.cli ...` without the console script
    main()
