"""Transport and protocol faults the simulator plays on demand.

Ask for one with the request header ``x-sim-fault: <name>`` (or give a scenario
provider ``faults = {name = probability}``). ``none`` turns off every random fault and
scenario error for that request. Timed faults use ``[faults]`` durations from the
scenario, multiplied by its ``time_scale``.

``FAULTS`` maps each name to what happens (streaming; the non-streaming variant is in
parentheses when it differs). Other modules import this table, e.g. to parametrize
reliability tests over every fault.
"""

from __future__ import annotations

__all__ = ["FAULTS", "NO_FAULT"]

NO_FAULT = "none"

FAULTS: dict[str, str] = {
    "reset_before_headers": "TCP reset (RST) after the request is read, before any response byte.",
    "reset_mid_stream": "Headers and a few chunks, then a TCP reset (non-streaming: reset "
    "after the headers and half the body).",
    "stall": "Headers and the first chunk, then silence until the client goes away "
    "(non-streaming: silence before the headers).",
    "slow_drip": "Headers and the first chunk, then one byte every [faults].drip_interval_s, "
    "forever: the rest of the stream, then SSE comment bytes. A per-read timeout never trips.",
    "malformed_json": "One data event with truncated JSON mid-stream, then the stream goes on "
    "normally (non-streaming: a truncated JSON body with status 200).",
    "no_done": "The stream ends cleanly after the finish chunk and usage but without "
    "`data: [DONE]` (Anthropic: without `message_stop`). (non-streaming: as truncated.)",
    "truncated": "The stream ends cleanly (no reset) in the middle of the content, before any "
    "finish_reason / message_delta and without a terminator (non-streaming: half a JSON body).",
    "html_502": "Status 502 with an HTML error page (content-type text/html), like a proxy.",
    "wrong_content_type": "Status 200 with a normal body labelled content-type text/html.",
    "redirect": "Status 302 to /_sim/moved (an HTML page), as a misconfigured base URL would.",
    "huge_chunk": "The whole answer in one data event padded with an unknown field of "
    "[faults].huge_chunk_bytes bytes (non-streaming: the same padding in the body).",
    "keepalive_minute": "`: keep-alive` SSE comments every [faults].keepalive_interval_s for "
    "[faults].keepalive_s before the first token (non-streaming: blank lines before the body).",
}
