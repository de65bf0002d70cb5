"""Find the files nerfwatch ships beside its code: sql/, reports/ and data/.

In a checkout they sit at the top of the repository; an installed wheel carries them
inside the package (``pipeline/_bundled``). This module is the one place that knows both.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_dir", "reports_dir", "resource_dir", "sql_dir"]

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


def resource_dir(name: str) -> Path:
    """Return the directory of a shipped resource (``sql``, ``reports`` or ``data``)."""
    for candidate in (_PACKAGE / "_bundled" / name, _CHECKOUT / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"nerfwatch resource directory {name!r} is missing from the install")


def sql_dir() -> Path:
    return resource_dir("sql")


def reports_dir() -> Path:
    return resource_dir("reports")


def data_dir() -> Path:
    return resource_dir("data")
