"""The validating walk over a parsed ``nerfwatch.toml``: types, unknown keys, locations.

Every problem becomes a ``ConfigError`` whose text is one line: file, line where known, the
key and what was expected.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.config.durations import DurationError, parse_duration
from pipeline.config.keys import SECTIONS, Key
from pipeline.config.toml_lines import KeyLines
from probes.result import INT64_MAX, INT64_MIN

__all__ = ["Checker", "ConfigError", "did_you_mean", "named_tables", "tables", "type_name"]

MAX_DURATION_S = 366 * 86400.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_NAME = 64  # characters of a provider or probe name


class ConfigError(ValueError):
    """A configuration problem, worded as one line for the user."""

    def __init__(self, file: str, line: int | None, key: str, message: str) -> None:
        self.file, self.line, self.key, self.message = file, line, key, message
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")


def did_you_mean(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``'; did you mean "x"?'`` for the closest choice, or an empty string."""
    hint = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=cutoff)
    return f'; did you mean "{hint[0]}"?' if hint else ""


def type_name(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "table",
    }.get(type(value), type(value).__name__)


@dataclass
class Checker:
    """Walks one parsed file and raises the first problem with its location."""

    file: str
    lines: KeyLines
    check_env: bool

    def fail(self, path: str, message: str) -> ConfigError:
        return ConfigError(self.file, self.lines.line_of(path), path, message)

    def table(self, data: Mapping[str, Any], path: str, schema_name: str) -> dict[str, Any]:
        """Check keys and types of one table against its schema; fill defaults."""
        schema = SECTIONS[schema_name]
        for key in data:
            if key not in schema:
                where = f"{path}.{key}" if path else key
                extra = did_you_mean(key, schema)
                known = ", ".join(sorted(schema))
                raise self.fail(where, f"unknown key (known keys: {known}){extra}")
        out: dict[str, Any] = {}
        for key, spec in schema.items():
            where = f"{path}.{key}" if path else key
            if key not in data:
                if spec.required:
                    raise ConfigError(
                        self.file,
                        self.lines.line_of(path) if path else None,
                        where,
                        f"missing required key (expected {spec.expected})",
                    )
                out[key] = spec.default
                continue
            out[key] = self.value(data[key], where, spec)
        return out

    def value(self, value: Any, path: str, spec: Key) -> Any:
        ok = isinstance(value, spec.types) and not (
            isinstance(value, bool) and bool not in spec.types
        )
        if not ok:
            raise self.fail(path, f"expected {spec.expected}, got {type_name(value)} {value!r}")
        if isinstance(value, str) and not value.strip():
            raise self.fail(path, f"expected {spec.expected}, got an empty string")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(path, f"expected {spec.expected}, got {value}")
        is_int = isinstance(value, int) and not isinstance(value, bool)
        if is_int and not INT64_MIN <= value <= INT64_MAX:
            raise self.fail(path, f"expected {spec.expected}, got {value} (beyond 64-bit integers)")
        return float(value) if spec.types == (int, float) else value

    def duration(self, text: str, path: str) -> float:
        """Seconds; at most a year, so no timer or date arithmetic can overflow."""
        try:
            seconds = parse_duration(text)
        except DurationError as exc:
            raise self.fail(path, str(exc)) from None
        if seconds > MAX_DURATION_S:
            raise self.fail(path, f"expected a duration of at most 366d, got {text!r}")
        return seconds

    def env_name(self, name: str, path: str) -> None:
        """A variable's name, never echoed when it is not one: it may be the key itself,
        pasted where its name belongs, and errors are printed and logged."""
        if not _ENV_NAME.fullmatch(name):
            raise self.fail(
                path,
                f"expected an environment variable name (letters, digits and _, not the key "
                f"itself, which belongs in the environment), got {len(name)} character(s) "
                "that are not one",
            )

    def env(self, name: str, path: str, what: str) -> None:
        self.env_name(name, path)
        if self.check_env and not os.environ.get(name):
            raise self.fail(path, f"environment variable {name} is not set ({what})")
        if self.check_env and not os.environ[name].strip():
            raise self.fail(path, f"environment variable {name} is set but blank ({what})")

    def name(self, value: str, path: str, seen: set[str], kind: str) -> str:
        if len(value) > MAX_NAME:  # a name is printed in tables, logs and the report
            raise self.fail(path, f"expected a name of at most {MAX_NAME} characters")
        if not _NAME.fullmatch(value):
            raise self.fail(path, f"expected a name of letters, digits, -, _ or ., got {value!r}")
        if value in seen:
            raise self.fail(path, f"duplicate {kind} name {value!r}")
        seen.add(value)
        return value


def tables(value: list[Any], path: str, c: Checker) -> list[dict[str, Any]]:
    """``value`` as a list of tables, or the first item that is not one as the error."""
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise c.fail(f"{path}[{i}]", f"expected a [[{path}]] table, got {type_name(item)}")
    return value


def named_tables(
    value: list[Any], section: str, kind: str, c: Checker, *, required: bool = True
) -> Iterator[tuple[str, dict[str, Any], str]]:
    """Each ``[[section]]`` table with its path and unique name (at least one if required)."""
    if required and not value:
        raise c.fail(section, f"expected at least one [[{section}]] table")
    seen: set[str] = set()
    for i, raw in enumerate(tables(value, section, c)):
        path = f"{section}[{i}]"
        table = c.table(raw, path, section)
        yield path, table, c.name(table["name"], f"{path}.name", seen, kind)
