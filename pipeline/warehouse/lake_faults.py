"""What kind of fault a lake's error message shows, in a few words for a log line.

A flush that fails on a lake says so once per outage (``daemon.flush.daemon_side``), and
the engine's message alone leaves the reader to tell which server failed and whether
waiting helps: PostgreSQL down and S3 refusing the key pair look alike at a glance. The
class comes from the message's text (DuckDB's, already scrubbed of secrets; the flush
process sends only text), so it is a best effort: ``None`` when nothing matches.
"""

from __future__ import annotations

__all__ = ["lake_fault"]

# (class, any of these fragments); the first class with a fragment in the message wins,
# so the specific ones (clock, credentials, space) come before "out of reach".
_FAULTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("S3 says the clocks disagree", ("RequestTimeTooSkewed",)),  # a 403, not the keys'
    (
        "S3 refused the credentials",
        ("SignatureDoesNotMatch", "InvalidAccessKeyId", "HTTP 403", "AccessDenied"),
    ),
    ("S3 is throttling", ("HTTP 503", "SlowDown", "HTTP 429")),
    (
        "the catalog's disk is full",
        ("No space left on device", "could not extend file", "disk full"),
    ),
    (
        "the catalog refused the login",
        ("password authentication failed", "no password supplied", "no pg_hba.conf entry"),
    ),
    ("the catalog has no connection to spare", ("too many clients", "too many connections")),
    (
        "the catalog is out of reach",
        (
            "Unable to connect to Postgres",
            "server closed the connection unexpectedly",
            "terminating connection",
            "the database system is",  # starting up, shutting down, in recovery mode
            # a commit cut off with the server: DuckLake's ROLLBACK then fails, with
            # libpq's message empty (a catalog killed mid-commit, test_lake_crashes)
            'Failed to execute query "ROLLBACK"',
        ),
    ),
    ("S3 is out of reach", ("Could not connect to server", "HTTP GET error", "HTTP PUT error")),
)


def lake_fault(message: str) -> str | None:
    """The kind of fault ``message`` (a lake's error, one line) shows, or None."""
    for fault, fragments in _FAULTS:
        if any(fragment in message for fragment in fragments):
            return fault
    return None
