"""Segment files: their names, which entries of a folder are segments, and reading one."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from pipeline.daemon.spool.errors import SpoolError

__all__ = [
    "PREFIX",
    "SUFFIX",
    "Segment",
    "lines_of",
    "list_segments",
    "named_segments",
    "numbered_lines",
    "read_segment",
    "segment_bytes",
    "segment_name",
]

log = logging.getLogger("pipeline.daemon.spool")

PREFIX = "seg-"
SUFFIX = ".jsonl"


@dataclass(frozen=True, slots=True)
class Segment:
    seq: int
    path: Path


def segment_name(seq: int) -> str:
    return f"{PREFIX}{seq:012d}{SUFFIX}"


def named_segments(directory: Path) -> list[Segment]:
    """Every entry named like a segment, whatever it is, oldest first."""
    segments: list[Segment] = []
    if not directory.is_dir():
        return segments
    for path in directory.glob(f"{PREFIX}*{SUFFIX}"):
        digits = path.name[len(PREFIX) : -len(SUFFIX)]
        if digits.isdigit():
            segments.append(Segment(int(digits), path))
    return sorted(segments, key=lambda s: s.seq)


def list_segments(directory: Path) -> list[Segment]:
    """All segment files, oldest first.

    An entry named like a segment that is not a regular file (a directory, a FIFO, a
    symlink to either) is left out: reading it fails or, for a FIFO, blocks for ever, and
    that must stop neither the flush of the real segments nor ``nerfwatch status``.
    ``Spool.open`` names such entries in the log; they are never deleted.
    """
    return [s for s in named_segments(directory) if s.path.is_file()]


def read_segment(path: Path) -> list[str]:
    """Complete lines of a segment; a torn (newline-less) tail is dropped with a warning."""
    return [text for _, text in numbered_lines(path)]


def numbered_lines(path: Path) -> list[tuple[int, str]]:
    """``read_segment`` with each line's 1-based number in the file, for messages that must
    lead an operator to it (blank lines are skipped but counted, as an editor counts)."""
    return lines_of(segment_bytes(path), path)


def lines_of(data: bytes, path: Path) -> list[tuple[int, str]]:
    """``numbered_lines`` of bytes already read from ``path`` (one read serves a caller
    that also needs them raw)."""
    if not data:
        return []
    lines = data.split(b"\n")
    tail = lines.pop()  # empty when the file ends with a newline
    if tail:
        log.warning(
            "spool segment %s ends with a torn line (line %d, %d bytes); dropped",
            path,
            len(lines) + 1,
            len(tail),
        )
    return [(n, line.decode("utf-8", "replace")) for n, line in enumerate(lines, 1) if line]


def segment_bytes(path: Path) -> bytes:
    """A segment's bytes (none if it is gone); a ``SpoolError`` naming it when the kernel
    refuses the read (EIO, a segment swapped for a folder)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise SpoolError(f"spool segment {path} cannot be read: {exc.strerror}") from exc
