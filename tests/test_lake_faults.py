"""The flush's outage line names what failed: the kinds of fault a lake's messages show.

The messages are DuckDB's, captured on a real PostgreSQL catalog and SeaweedFS data
(tests/test_lake_crashes.py meets the first and the S3 one through the daemon's flush)."""

from __future__ import annotations

import pytest

from pipeline.warehouse.lake_faults import lake_fault

LAKE = "lake postgres:host=127.0.0.1 port=52485 dbname=lake_0 user=nerfwatch"
OBJECT = "http://127.0.0.1:39037/nerfwatch/lake_0/main/probe_results/ducklake-01a2.parquet"


@pytest.mark.parametrize(
    ("message", "fault"),
    [
        (
            f"cannot open warehouse {LAKE} (data s3://nerfwatch/lake_0/): IO Error: Failed to"
            f' query most recent snapshot for DuckLake: Unable to connect to Postgres at "host='
            '127.0.0.1": connection to server at "127.0.0.1", port 52485 failed: Connection'
            " refused Is the server running on that host and accepting TCP/IP connections?",
            "the catalog is out of reach",
        ),
        (
            "insert into probe_results failed: TransactionContext Error: Failed to commit:"
            ' Failed to execute query "ROLLBACK": ',
            "the catalog is out of reach",
        ),
        (
            "insert into probe_results failed: IO Error: Could not connect to server error"
            f" for HTTP GET to '{OBJECT}'",
            "S3 is out of reach",
        ),
        (
            f"insert into probe_results failed: HTTP Error: HTTP GET error reading '{OBJECT}'"
            " in region 'us-east-1' (HTTP 403 Forbidden) SignatureDoesNotMatch: The request"
            " signature we calculated does not match the signature you provided.",
            "S3 refused the credentials",
        ),
        (
            "insert into probe_results failed: HTTP Error: HTTP PUT error (HTTP 503 Service"
            " Unavailable) SlowDown: Please reduce your request rate.",
            "S3 is throttling",
        ),
        (
            "insert failed: HTTP Error (HTTP 403 Forbidden) RequestTimeTooSkewed",
            "S3 says the clocks disagree",  # a 403 too, but not the credentials' fault
        ),
        (
            "migration failed: ERROR: could not extend file base/16384/2619: No space left"
            " on device",
            "the catalog's disk is full",
        ),
        (
            'FATAL: password authentication failed for user "nerfwatch"',
            "the catalog refused the login",
        ),
        ("FATAL: sorry, too many clients already", "the catalog has no connection to spare"),
        ("Binder Error: Referenced column x not found", None),
    ],
)
def test_a_lake_message_is_classed_by_what_failed(message: str, fault: str | None) -> None:
    assert lake_fault(message) == fault
