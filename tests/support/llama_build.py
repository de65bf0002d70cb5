"""Build llama.cpp's ``llama-server`` and ``llama-quantize`` from the llama-cpp-python sdist.

    python3 -m tests.support.llama_build        # prints the folder holding the binaries

The real-server tests need a real inference server. PyPI carries llama.cpp's C++ sources
inside the llama-cpp-python sdist (vendor/llama.cpp); this fetches that sdist from PyPI
(pinned version and sha256), builds the two tools with CMake on the CPU and keeps them in
a cache folder, so it runs once per machine (about ten minutes on two cores). Standard
library only: bootstrap runs it before the virtual environment matters.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

__all__ = ["BINARIES", "VERSION", "binary", "build", "cache_dir"]

VERSION = "0.3.36"
SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
BINARIES = ("llama-server", "llama-quantize")
_INDEX = "https://pypi.org/simple/llama-cpp-python/"  # PEP 691 JSON form of the index
_SDIST = f"llama_cpp_python-{VERSION}.tar.gz"
_CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_CURL=OFF",  # nothing is ever downloaded by the server
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DGGML_NATIVE=OFF",  # portable: the cache may move to another CPU
    "-DBUILD_SHARED_LIBS=OFF",
)
TIMEOUT_S = 3600


def cache_dir() -> Path:
    """``$NERFWATCH_LLAMA_DIR``, else ``~/.cache/nerfwatch/llama.cpp-<version>``."""
    explicit = os.environ.get("NERFWATCH_LLAMA_DIR")
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nerfwatch"
    return Path(explicit) if explicit else base / f"llama.cpp-{VERSION}"


def binary(name: str) -> Path | None:
    """The built tool, or None when it has not been built on this machine."""
    path = cache_dir() / "bin" / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _sdist(folder: Path) -> Path:
    index = urllib.request.Request(
        _INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(index, timeout=60) as reply:  # noqa: S310 - fixed https URL
        files = json.load(reply)["files"]
    url = next(f["url"] for f in files if f["filename"] == _SDIST)
    path = folder / _SDIST
    with urllib.request.urlopen(url, timeout=600) as reply, path.open("wb") as out:  # noqa: S310
        shutil.copyfileobj(reply, out)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256:
        raise RuntimeError(f"{path.name}: sha256 {digest} is not the pinned {SHA256}")
    return path


def build() -> Path:
    """Build into ``cache_dir()`` unless already there; return the ``bin`` folder."""
    target = cache_dir() / "bin"
    if all(binary(name) for name in BINARIES):
        return target
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is needed to build llama.cpp (Debian: cmake, g++)")
    with tempfile.TemporaryDirectory(prefix="nerfwatch-llama-") as tmp:
        work = Path(tmp)
        with tarfile.open(_sdist(work)) as archive:
            # The archive's sha256 is pinned; the data filter (Python 3.11.4 and newer; Debian
            # 12's python3 is 3.11.2) is defence in depth, not the check.
            if hasattr(tarfile, "data_filter"):
                archive.extractall(work, filter="data")
            else:
                archive.extractall(work)  # noqa: S202 - pinned sha256, see _sdist
        source = next(work.glob("llama_cpp_python-*")) / "vendor" / "llama.cpp"
        objects = work / "build"
        jobs = str(os.cpu_count() or 2)
        steps = [
            ["cmake", "-S", str(source), "-B", str(objects), *_CMAKE_FLAGS],
            ["cmake", "--build", str(objects), "--target", *BINARIES, "-j", jobs],
        ]
        for step in steps:
            subprocess.run(step, check=True, timeout=TIMEOUT_S)
        staging = target.with_name("bin.partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for name in BINARIES:
            shutil.copy2(objects / "bin" / name, staging / name)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)  # all or nothing: a half-built cache is never used
    return target


if __name__ == "__main__":
    try:
        print(build())
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"llama.cpp build failed: {exc}", file=sys.stderr)
        sys.exit(1)
