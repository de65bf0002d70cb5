"""The tiny model's weights at another precision, written by llama.cpp's ``llama-quantize``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.llama_build import binary
from tests.support.mounts import unavailable

__all__ = ["QUANTIZE_DEADLINE_S", "quantize"]

QUANTIZE_DEADLINE_S = 120.0


def quantize(source: Path, target: Path, kind: str) -> Path:
    """``source`` (a GGUF) rewritten as ``kind`` (F16, Q8_0, Q4_0...) at ``target``."""
    exe = binary("llama-quantize")
    if exe is None:
        unavailable("llama-quantize is not built here (python3 -m tests.support.llama_build)")
        raise AssertionError("unreachable")
    done = subprocess.run(
        [str(exe), str(source), str(target), kind],
        capture_output=True,
        timeout=QUANTIZE_DEADLINE_S,
        check=False,
    )
    if done.returncode != 0 or not target.is_file():
        tail = (done.stdout + done.stderr).decode(errors="replace")[-1500:]
        raise RuntimeError(f"llama-quantize {kind} failed ({done.returncode}): {tail}")
    return target
