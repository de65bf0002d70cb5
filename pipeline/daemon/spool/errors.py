"""The spool's errors, apart so every spool module can raise them without a cycle."""

from __future__ import annotations

__all__ = ["SpoolError", "SpoolLocked"]


class SpoolError(Exception):
    """The spool directory cannot be used."""


class SpoolLocked(SpoolError):
    """Another daemon already owns this spool directory."""
