"""A lake's engine messages as one short line: a catalog commit that fails quotes every
statement of the commit (12 kB on a disk-full catalog, tests/test_lake_catalog_limits.py),
so the middle goes, and what failed (its start) and the server's reason (its end) stay."""

from __future__ import annotations

import pytest

from pipeline.warehouse import Lake
from pipeline.warehouse.lake_faults import lake_fault

SECRET = "s3-secret-never-shown"


def test_a_long_message_keeps_its_ends_on_one_short_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    lake = Lake("postgres:host=127.0.0.1 dbname=lake user=nerfwatch", "s3://nerfwatch/lake/")
    statements = ";\n".join(f"UPDATE t SET v = '{SECRET}' WHERE id = {i}" for i in range(400))
    message = (
        f'Failed to commit DuckLake transaction.\nFailed to execute query "{statements}": '
        'ERROR: could not extend file "base/16384/16665": No space left on device'
    )
    said = lake.scrub(message)
    assert "\n" not in said and len(said) < 1200, said
    assert SECRET not in said and SECRET[:8] not in said, said
    assert said.startswith("Failed to commit DuckLake transaction. Failed to execute query")
    assert said.endswith("No space left on device")
    assert "characters left out" in said
    assert lake_fault(said) == "the catalog's disk is full"


def test_a_short_message_is_kept_whole() -> None:
    lake = Lake("postgres:host=127.0.0.1 dbname=lake user=nerfwatch", "s3://nerfwatch/lake/")
    assert lake.scrub("FATAL:  sorry, too many clients\nalready") == (
        "FATAL: sorry, too many clients already"
    )
