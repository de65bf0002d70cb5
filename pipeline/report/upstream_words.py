"""The upstream-mix part of a response_metadata_changed sign, as the report's words.

The analysis writes the sign's detail as "; "-separated parts, each opening with its kind
(``pipeline.analysis.metadata_sign``); the upstream mix's part reads
"upstream_provider served by A 80 %, ... -> B 95 %, ... (p=0.001)". Its words say what
changed better than a token count, so the report shows them as the sign's effect; the
p-value stays in the hover detail (q-values go to the verdict's details).
"""

from __future__ import annotations

__all__ = ["served_by"]

_PREFIX = (
    "upstream_provider "  # pipeline.analysis.upstream_mix.COLUMN (the report reads tables only)
)


def served_by(detail: str) -> str | None:
    """ "served by A 80 % → B 95 % ..." from a metadata sign's detail, or None without one."""
    for part in detail.split("; "):
        if part.startswith(_PREFIX + "served by "):
            words = part.removeprefix(_PREFIX).rsplit(" (p=", 1)[0]
            return words.replace(" -> ", " \u2192 ")
    return None
