"""Commands of this area (placeholder until implemented)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``nerfwatch`` app."""
    del app
