"""An installed wheel works outside the checkout: sql/, reports/ and data/ travel with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def uv() -> str:
    found = shutil.which("uv") or str(ROOT / ".uv-bootstrap" / "bin" / "uv")
    if not Path(found).exists():
        pytest.skip("uv is not available")
    return found


@pytest.mark.slow
def test_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    env = dict(os.environ, UV_PYTHON=sys.executable, UV_PYTHON_DOWNLOADS="never")
    env.pop("VIRTUAL_ENV", None)
    dist = tmp_path / "dist"
    subprocess.run(
        [uv(), "build", "--wheel", "--out-dir", str(dist), str(ROOT)],
        check=True,
        env=env,
        capture_output=True,
        timeout=300,
    )
    wheel = next(dist.glob("nerfwatch-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "pipeline/_bundled/sql/schema/001_probe_results.sql" in names
    assert "pipeline/_bundled/data/releases.csv" in names
    assert any(n.startswith("pipeline/_bundled/reports/") for n in names)

    venv = tmp_path / "venv"
    subprocess.run([uv(), "venv", str(venv)], check=True, env=env, capture_output=True, timeout=300)
    subprocess.run(
        [uv(), "pip", "install", "--python", str(venv / "bin" / "python"), str(wheel)],
        check=True,
        env=env,
        capture_output=True,
        timeout=600,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    exe = str(venv / "bin" / "nerfwatch")
    create = "from pipeline.warehouse import Warehouse; Warehouse('w.duckdb').migrate()"
    subprocess.run(
        [str(venv / "bin" / "python"), "-c", create], cwd=elsewhere, check=True, timeout=120
    )  # reading commands refuse a missing warehouse
    out = subprocess.run(
        [exe, "sql", "SELECT count(*) AS n FROM releases", "--db", "w.duckdb", "--format", "csv"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.splitlines()[1]) > 100
    init = subprocess.run(
        [exe, "init"], cwd=elsewhere, capture_output=True, text=True, check=False, timeout=60
    )
    assert init.returncode == 0, init.stderr
    check = subprocess.run(
        [exe, "config", "check"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "config OK" in check.stdout
