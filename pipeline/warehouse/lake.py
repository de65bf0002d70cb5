"""Where a lake lives: its catalog, its data, and the names of its S3 settings.

A DuckLake warehouse is a SQL catalog (SQLite for one machine, PostgreSQL for several)
plus Parquet data files in a folder or under an ``s3://`` prefix. This module only
describes and checks that; ``pipeline.warehouse.ducklake`` opens it. S3 credentials are
never part of the description: it names environment variables, read when connecting.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["Lake", "LakeSpecError", "check_catalog", "check_data_path"]

_PASSWORD = re.compile(r"(^|\s)password\s*=", re.IGNORECASE)
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
# An engine's message kept whole up to this length; past it, its start (what failed) and
# its end (the server's reason) are kept: a catalog commit that fails quotes every
# statement of the commit, inlined rows' values included, kilobytes on one log line.
_MESSAGE_ENDS = 500


class LakeSpecError(ValueError):
    """A catalog or data path that cannot name a lake (the message says why)."""


def check_catalog(catalog: str) -> tuple[str, str]:
    """``sqlite:PATH`` or ``postgres:CONNINFO`` split into (kind, target), or LakeSpecError."""
    kind, sep, target = catalog.partition(":")
    if not sep or kind not in ("sqlite", "postgres"):
        raise LakeSpecError(
            f'expected "sqlite:PATH" or "postgres:<libpq conninfo>", got {catalog!r}'
        )
    if not target.strip():
        raise LakeSpecError(f"{kind}: catalog needs a {'path' if kind == 'sqlite' else 'conninfo'}")
    if kind == "postgres" and (_PASSWORD.search(target) or "://" in target):
        raise LakeSpecError(
            "postgres conninfo must not carry a password (nor be a URL that may): give "
            '"host=... port=... dbname=... user=..." and the password in PGPASSWORD or ~/.pgpass'
        )
    return kind, target


def check_data_path(data_path: str) -> str:
    """A local folder or ``s3://bucket/prefix``, ending in ``/``; else LakeSpecError."""
    if "://" in data_path:
        parts = urlsplit(data_path)
        if parts.scheme != "s3" or not _BUCKET.match(parts.netloc):
            raise LakeSpecError(
                f'expected a local folder or "s3://bucket/prefix", got {data_path!r}'
            )
        if parts.username or parts.password or parts.query:
            raise LakeSpecError("an s3:// data path carries no credentials or query")
    elif not data_path.strip():
        raise LakeSpecError("expected a local folder or s3://bucket/prefix, got nothing")
    return data_path if data_path.endswith("/") else data_path + "/"


@dataclass(frozen=True, slots=True)
class Lake:
    """A DuckLake warehouse. The ``*_env`` fields name environment variables (never
    values) holding the S3 endpoint (``http://host:port`` or ``https://...``), region,
    key id and secret; they matter only for an ``s3://`` data path."""

    catalog: str
    data_path: str
    s3_endpoint_env: str = "AWS_ENDPOINT_URL"
    s3_region_env: str = "AWS_REGION"
    s3_key_id_env: str = "AWS_ACCESS_KEY_ID"
    s3_secret_env: str = "AWS_SECRET_ACCESS_KEY"  # noqa: S105 (a variable's name, not a value)

    def __post_init__(self) -> None:
        check_catalog(self.catalog)
        object.__setattr__(self, "data_path", check_data_path(self.data_path))

    @property
    def where(self) -> str:
        """How messages name the lake (no secrets: the conninfo has no password)."""
        return f"lake {self.catalog} (data {self.data_path})"

    @property
    def kind(self) -> str:
        return check_catalog(self.catalog)[0]

    @property
    def on_s3(self) -> bool:
        return self.data_path.startswith("s3://")

    def local_paths(self) -> list[Path]:
        """Folders the lake writes on this machine (created before the first attach)."""
        paths = [] if self.on_s3 else [Path(self.data_path)]
        kind, target = check_catalog(self.catalog)
        if kind == "sqlite":
            paths.append(Path(target).parent)
        return paths

    def catalog_exists(self) -> bool:
        """False only when we can tell cheaply that the catalog was never created."""
        kind, target = check_catalog(self.catalog)
        return kind != "sqlite" or Path(target).exists()

    def quotes_its_data(self, message: str) -> bool:
        """Whether an engine's message names one of this lake's data files: a read that
        failed there is the lake out of reach, not the query's fault. S3 is quoted as
        ``s3://bucket/prefix/...``, a path-style ``http(s)://host/bucket/prefix/...`` or a
        virtual-hosted ``https://bucket.host/prefix/...``."""
        if not self.on_s3:
            return self.data_path in message
        parts = urlsplit(self.data_path)
        bucket, prefix = parts.netloc, parts.path.lstrip("/")
        return f"{bucket}/{prefix}" in message or (
            f"//{bucket}." in message and f"/{prefix}" in message
        )

    def scrub(self, text: object) -> str:
        """``text`` (an engine's message) on one line, with the secrets this lake is opened
        with (the S3 key pair, a PostgreSQL catalog's PGPASSWORD) replaced by ``***``:
        DuckDB may quote what it was given."""
        message = str(text)
        for name in (self.s3_key_id_env, self.s3_secret_env, "PGPASSWORD"):
            value = os.environ.get(name, "")
            if value.strip():
                message = message.replace(value, "***")
        return _shortened(" ".join(message.split()))

    def s3_settings(self) -> dict[str, str]:
        """The S3 secret's options from the environment; names the missing variable."""
        endpoint = os.environ.get(self.s3_endpoint_env, "")
        values = {
            self.s3_key_id_env: os.environ.get(self.s3_key_id_env, ""),
            self.s3_secret_env: os.environ.get(self.s3_secret_env, ""),
        }
        missing = [name for name, value in values.items() if not value]
        if missing:
            raise LakeSpecError(
                f"{self.data_path} is on S3 but {', '.join(missing)} is not set in the environment"
            )
        settings = {
            "KEY_ID": values[self.s3_key_id_env],
            "SECRET": values[self.s3_secret_env],
            "REGION": os.environ.get(self.s3_region_env, "") or "us-east-1",
        }
        if endpoint:
            parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
            settings |= {
                "ENDPOINT": parts.netloc,
                "USE_SSL": str(parts.scheme == "https").lower(),
                "URL_STYLE": "path",
            }
        return settings


def _shortened(message: str) -> str:
    """``message`` with its middle left out past ``2 * _MESSAGE_ENDS`` characters (secrets
    are replaced before, so no part of one is left)."""
    if len(message) <= 2 * _MESSAGE_ENDS + 50:
        return message
    left_out = len(message) - 2 * _MESSAGE_ENDS
    return (
        f"{message[:_MESSAGE_ENDS]} ... ({left_out} characters left out) ... "
        f"{message[-_MESSAGE_ENDS:]}"
    )
