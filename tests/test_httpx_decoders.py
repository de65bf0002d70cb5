"""The body reader trusts httpx's private ``httpx._decoders.SUPPORTED_DECODERS`` to say
which content-encodings httpx decodes (a coding missing from it is passed through as if
plain, and ``body.undecodable`` refuses it). httpx has no public equivalent, so these tests
pin the contract: the table exists where it is read, and it matches what a real
``httpx.Response`` decodes. An httpx upgrade that moves or changes it fails here, by name,
instead of reading a compressed stream as plain text."""

from __future__ import annotations

import gzip
import importlib
import zlib

import httpx
import pytest

from probes.adapters.body import undecodable

IMPORT = "httpx._decoders.SUPPORTED_DECODERS"
PLAIN = b'data: {"choices": []}\n\n'
ENCODE = {"identity": lambda b: b, "gzip": gzip.compress, "deflate": zlib.compress}


def _table() -> dict[str, object]:
    module = importlib.import_module("httpx._decoders")
    table = getattr(module, "SUPPORTED_DECODERS", None)
    assert isinstance(table, dict), (
        f"httpx {httpx.__version__} no longer has {IMPORT}, which probes/adapters/body.py "
        "reads to know which content-encodings httpx decodes; re-check before widening the pin"
    )
    return table


def _decoded(coding: str, raw: bytes) -> bytes:
    """What a real httpx response yields for ``raw`` sent with ``coding``."""
    response = httpx.Response(200, headers={"content-encoding": coding}, content=raw)
    return response.read()


def test_the_private_table_is_where_the_body_reader_reads_it() -> None:
    assert {"identity", "gzip", "deflate"} <= set(_table()), f"{IMPORT} lost a coding"


@pytest.mark.parametrize("coding", sorted(ENCODE))
def test_every_coding_in_the_table_is_decoded_by_httpx(coding: str) -> None:
    assert coding in _table(), f"{IMPORT} no longer lists {coding}"
    assert _decoded(coding, ENCODE[coding](PLAIN)) == PLAIN
    assert undecodable(httpx.Headers({"content-encoding": coding})) is None


@pytest.mark.parametrize("coding", ["compress", "x-gzip", "snappy"])
def test_a_coding_outside_the_table_is_passed_through_and_refused(coding: str) -> None:
    """The failure the table guards against: httpx hands these bytes back undecoded."""
    assert coding not in _table()
    raw = gzip.compress(PLAIN)
    assert _decoded(coding, raw) == raw, f"httpx now decodes {coding}: update {IMPORT} use"
    assert undecodable(httpx.Headers({"content-encoding": f"gzip, {coding}"})) == coding
