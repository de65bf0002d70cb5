#!/usr/bin/env python3
"""Set up nerfwatch from the lockfile and run it: the quick start's two commands.

    python3 bootstrap.py demo     # install from uv.lock, then run `nerfwatch demo`
    python3 bootstrap.py test     # install from uv.lock, then lint, type-check and test
    python3 bootstrap.py nerfwatch status   # install from uv.lock, then any nerfwatch command

Needs only Python >= 3.11. It installs uv (pinned) into .uv-bootstrap/ if uv is not on
PATH, then `uv sync --frozen` builds .venv exactly as uv.lock says. For the browser tests
it installs Debian's chromium, and for the lake tests Debian's PostgreSQL server, when
they are missing and the machine allows it (root + apt).
Anything after the command is passed on: `python3 bootstrap.py test -k config`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
UV_VERSION = "0.13.8"
CHROMIUM = Path("/usr/bin/chromium")
CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
COMMANDS = ("demo", "test", "nerfwatch")  # nerfwatch: any nerfwatch command, after the sync


def say(message: str) -> None:
    print(f"[bootstrap] {message}", flush=True)


def run(*args: str | Path, env: dict[str, str] | None = None) -> None:
    """Run a command in the checkout; stop with its exit status if it fails."""
    result = subprocess.run([str(a) for a in args], cwd=ROOT, env=env, check=False)  # noqa: S603
    if result.returncode != 0:
        say(f"failed ({result.returncode}): {' '.join(str(a) for a in args)}")
        sys.exit(result.returncode)


def run_quietly(*args: str | Path, env: dict[str, str] | None = None) -> None:
    """Like ``run``, but its output is shown only if it fails (apt prints ~100 lines)."""
    result = subprocess.run(  # noqa: S603
        [str(a) for a in args],
        cwd=ROOT,
        env=env,
        check=False,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    if result.returncode != 0:
        print(result.stdout, end="", flush=True)
        say(f"failed ({result.returncode}): {' '.join(str(a) for a in args)}")
        sys.exit(result.returncode)


def find_uv() -> Path:
    """uv on PATH, else a private copy installed with pip into .uv-bootstrap/."""
    found = shutil.which("uv")
    if found:
        return Path(found)
    home = ROOT / ".uv-bootstrap"
    uv = home / "bin" / "uv"
    if not uv.exists():
        say(f"installing uv {UV_VERSION} into {home.name}/")
        venv.EnvBuilder(with_pip=True, clear=True).create(home)
        run(home / "bin" / "python", "-m", "pip", "install", "--quiet", f"uv=={UV_VERSION}")
    return uv


def uv_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("UV_PYTHON", sys.executable)  # use this interpreter, never download one
    env.setdefault("UV_PYTHON_DOWNLOADS", "never")
    env.setdefault("UV_SYSTEM_CERTS", "true")  # trust the machine's certificate store
    return env


def sync(uv: Path) -> None:
    say("installing dependencies from uv.lock")
    run(uv, "sync", "--frozen", "--quiet", env=uv_env())


def ensure_chromium() -> None:
    """Debian's chromium for the browser tests, and a CJK font so they can see whether
    Chinese or Japanese names fit; nothing is downloaded outside apt."""
    if CHROMIUM.exists() and CJK_FONT.exists():
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        say("chromium or a CJK font is missing and cannot be installed here: browser tests skip")
        return
    say("installing Debian's chromium and a CJK font for the browser tests")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run_quietly("apt-get", "update", "-qq", env=env)
    run_quietly(
        "apt-get",
        "install",
        "-y",
        "-qq",
        "--no-install-recommends",
        "chromium",
        "fonts-liberation",
        "fonts-wqy-microhei",
        env=env,
    )


def ensure_postgres() -> None:
    """Debian's PostgreSQL server binaries for the lake tests' throwaway catalog cluster.

    Only the binaries are used (tests/support/postgres.py runs its own cluster in a temp
    dir); the package's default cluster is not created.
    """
    if any(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        say("PostgreSQL is missing and cannot be installed here; its lake tests will be skipped")
        return
    say("installing Debian's PostgreSQL server for the lake tests")
    conf = Path("/etc/postgresql-common/createcluster.conf")
    conf.parent.mkdir(parents=True, exist_ok=True)
    if not conf.exists():
        conf.write_text("create_main_cluster = false\n", encoding="utf-8")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run_quietly("apt-get", "update", "-qq", env=env)
    run_quietly("apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql", env=env)


def ensure_llama_server() -> None:
    """llama.cpp's llama-server for the real-server tests, built from PyPI's sdist.

    In CI (CI=true) or when NERFWATCH_LLAMA=build: about ten minutes once per machine,
    then cached. Elsewhere those tests are skipped with the reason.
    """
    ci = os.environ.get("CI", "").lower() == "true"
    if not ci and os.environ.get("NERFWATCH_LLAMA") != "build":
        return
    sys.path.insert(0, str(ROOT))
    from tests.support import llama_build  # standard library only

    if all(llama_build.binary(name) for name in llama_build.BINARIES):
        return
    if (shutil.which("cmake") is None or shutil.which("c++") is None) and os.geteuid() == 0:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run_quietly("apt-get", "update", "-qq", env=env)
        run_quietly("apt-get", "install", "-y", "-qq", "cmake", "g++", env=env)
    say("building llama.cpp's llama-server for the real-server tests (once per machine)")
    run_quietly(sys.executable, "-m", "tests.support.llama_build")


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        sys.exit(2)
    command, rest = argv[0], argv[1:]
    uv = find_uv()
    sync(uv)
    env = uv_env()
    if command == "demo":
        run(uv, "run", "--frozen", "nerfwatch", "demo", *rest, env=env)
    elif command == "nerfwatch":
        run(uv, "run", "--frozen", "nerfwatch", *rest, env=env)
    else:
        ensure_chromium()
        ensure_postgres()
        ensure_llama_server()
        say("ruff (lint and format)")
        run(uv, "run", "--frozen", "ruff", "check", ".", env=env)
        run(uv, "run", "--frozen", "ruff", "format", "--check", ".", env=env)
        say("mypy")
        run(uv, "run", "--frozen", "mypy", env=env)
        say("pytest")
        run(uv, "run", "--frozen", "pytest", *rest, env=env)


if __name__ == "__main__":
    main(sys.argv[1:])
