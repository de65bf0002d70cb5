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

from probes.adapters.body import CutEncoding, encoding_ended, undecodable

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


# The cut-body check (``body.encoding_ended``) reads more private parts: the response's
# ``_decoder``, httpx._decoders' GZipDecoder, DeflateDecoder and MultiDecoder (``children``),
# and each one's zlib ``decompressor.eof``. Decoding the raw bytes ourselves
# (``aiter_raw`` + zlib) would mean re-implementing every coding httpx decodes (br, zstd
# too) to replace four attribute reads, so the parts are kept and pinned here, by name.
PRIVATE_PARTS = "Response._decoder, GZipDecoder/DeflateDecoder/MultiDecoder, decompressor.eof"


def _read_cut(coding: str, raw: bytes) -> httpx.Response:
    response = httpx.Response(
        200, headers={"content-encoding": coding}, stream=httpx.ByteStream(raw)
    )
    response.read()
    return response


@pytest.mark.parametrize("coding", ["gzip", "deflate", "gzip, gzip"])
def test_the_private_parts_the_cut_check_reads_are_still_there(coding: str) -> None:
    encode = {"gzip": gzip.compress, "deflate": zlib.compress}
    whole = PLAIN * 50
    for name in reversed([c.strip() for c in coding.split(",")]):
        whole = encode[name](whole)
    complete = _read_cut(coding, whole)
    cut = _read_cut(coding, whole[: len(whole) // 2])
    assert hasattr(complete, "_decoder"), f"httpx moved {PRIVATE_PARTS}"
    assert encoding_ended(complete) is None
    with pytest.raises(CutEncoding, match=coding.split(",")[0]):
        encoding_ended(cut)
