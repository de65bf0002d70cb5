"""Line numbers for keys of a TOML file, so config errors can say where.

``tomllib`` returns plain dicts without positions; this scans the text for table headers
and ``key =`` lines and maps paths such as ``providers[1].model`` to their line. It reads
the common layout (one key per line, ``[table]`` and ``[[array]]`` headers) and simply
returns ``None`` for anything fancier.
"""

from __future__ import annotations

import re
from collections import defaultdict

__all__ = ["KeyLines"]

_ARRAY_HEADER = re.compile(r"^\s*\[\[\s*([^\]]+?)\s*\]\]\s*(#.*)?$")
_TABLE_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+|\"[^\"]+\")\s*=")


def _clean(dotted: str) -> list[str]:
    return [part.strip().strip('"') for part in dotted.split(".")]


class KeyLines:
    """Maps key paths (``probes[0].every``, ``budget.providers.x``) to 1-based lines."""

    def __init__(self, text: str) -> None:
        self._lines: dict[str, int] = {}
        counters: dict[str, int] = defaultdict(lambda: -1)
        current = ""
        for number, line in enumerate(text.splitlines(), start=1):
            if match := _ARRAY_HEADER.match(line):
                name = ".".join(_clean(match[1]))
                counters[name] += 1
                for inner in [c for c in counters if c.startswith(f"{name}.")]:
                    del counters[inner]  # a new [[providers]] starts its [[providers.phases]] at 0
                current = self._array_path(name, counters)
            elif match := _TABLE_HEADER.match(line):
                current = self._array_path(".".join(_clean(match[1])), counters, header=False)
            elif match := _KEY.match(line):
                key = match[1].strip('"')
                path = f"{current}.{key}" if current else key
                self._lines.setdefault(path, number)
                continue
            else:
                continue
            self._lines.setdefault(current, number)

    @staticmethod
    def _array_path(name: str, counters: dict[str, int], header: bool = True) -> str:
        """``alerts.webhooks`` inside its second entry → ``alerts.webhooks[1]``."""
        parts = name.split(".")
        out: list[str] = []
        for i in range(len(parts)):
            prefix = ".".join(parts[: i + 1])
            out.append(parts[i])
            if prefix in counters and (header or i < len(parts) - 1):
                out[-1] = f"{parts[i]}[{counters[prefix]}]"
        return ".".join(out)

    def line_of(self, path: str) -> int | None:
        """The line of ``path``, else of its nearest enclosing table, else None."""
        while path:
            if path in self._lines:
                return self._lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return None
