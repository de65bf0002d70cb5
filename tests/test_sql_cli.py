"""`nerfwatch sql` and `nerfwatch releases` on real warehouse files, and the canned queries
on both lake backends."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.resources import sql_dir
from pipeline.warehouse import Warehouse
from pipeline.warehouse.queries import canned_queries, query_header
from tests.support.lock_holder import holding
from tests.support.planted import PlantedProvider, generate
from tests.support.waiting import read_line
from tests.support.warehouses import LAKE_BACKENDS
from tests.test_config import VALID

runner = CliRunner()


def nerfwatch(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_sql_formats(warehouse: Warehouse, tmp_path: Path) -> None:
    db = str(warehouse.path)
    query = "SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, 'y' ORDER BY a"
    code, out = nerfwatch("sql", query, "--db", db, "--format", "csv")
    assert code == 0 and out.splitlines() == ["a,b", "1,x", "2,y"]
    code, out = nerfwatch("sql", query, "--db", db, "--format", "json")
    assert code == 0 and json.loads(out) == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    target = tmp_path / "out.parquet"
    code, out = nerfwatch("sql", query, "--db", db, "--format", "parquet", "--out", str(target))
    assert code == 0 and pl.read_parquet(target)["a"].to_list() == [1, 2]
    code, out = nerfwatch("sql", query, "--db", db)
    assert code == 0 and "x" in out and "y" in out


def test_sql_from_file_and_bad_input(warehouse: Warehouse, tmp_path: Path) -> None:
    script = tmp_path / "q.sql"
    script.write_text("SELECT count(*) AS n FROM releases;\n")
    code, out = nerfwatch("sql", str(script), "--db", str(warehouse.path), "-f", "csv")
    assert code == 0 and int(out.splitlines()[1]) > 100
    code, out = nerfwatch("sql", str(tmp_path / "missing.sql"), "--db", str(warehouse.path))
    assert code == 2 and "no such SQL file" in out
    code, out = nerfwatch("sql", "SELECT 1", "--db", str(warehouse.path), "-f", "xml")
    assert code == 2 and "--format" in out
    code, out = nerfwatch("sql", "SELEC 1", "--db", str(warehouse.path))
    assert code == 2 and "syntax error" in out.lower() and "Traceback" not in out


def test_views_are_listed_through_sql(warehouse: Warehouse) -> None:
    code, out = nerfwatch(
        "sql",
        "SELECT table_name FROM information_schema.tables WHERE table_type = 'VIEW' ORDER BY 1",
        "--db",
        str(warehouse.path),
        "-f",
        "csv",
    )
    assert code == 0
    assert {"hourly", "daily", "long_context_penalty", "rate_limit_headroom"} <= set(
        out.splitlines()
    )


@pytest.mark.parametrize("name", sorted(canned_queries()))
def test_every_canned_query_has_a_header_and_runs(warehouse: Warehouse, name: str) -> None:
    text = (sql_dir() / "queries" / f"{name}.sql").read_text()
    header = query_header(text)
    assert header.get("name") == name and header.get("answers", "").endswith("?")
    code, out = nerfwatch("sql", name, "--db", str(warehouse.path), "-f", "csv")
    assert code == 0, out


@pytest.mark.parametrize("warehouse", LAKE_BACKENDS, indirect=True)
def test_sql_analyze_and_report_follow_a_config_that_names_a_lake(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    lake = warehouse.lake
    assert lake is not None
    warehouse.insert_frame("probe_results", generate([PlantedProvider("nova", "Nova")], 2, seed=1))
    lines = f'backend = "ducklake"\ncatalog = "{lake.catalog}"\ndata_path = "{lake.data_path}"'
    config = tmp_path / "nerfwatch.toml"
    config.write_text(
        VALID.replace('path = "data/nw.duckdb"', f'path = "data/nw.duckdb"\n{lines}', 1)
    )
    for name in sorted(canned_queries()):
        code, out = nerfwatch("sql", name, "--config", str(config), "-f", "csv")
        assert code == 0, f"{name}: {out}"
    code, out = nerfwatch("sql", "long_context_penalty_daily", "--config", str(config), "-f", "csv")
    assert len(out.splitlines()) > 1, out  # the planted rows were read from the lake
    code, out = nerfwatch("analyze", "--config", str(config))
    assert code == 0 and "done" in out, out
    reports = tmp_path / "reports"
    code, out = nerfwatch(
        "report", "--config", str(config), "--week", "2026-W02", "-o", str(reports)
    )
    assert code == 0, out
    assert "nova" in (reports / "nerfwatch-2026-W02.html").read_text(encoding="utf-8")
    assert not (tmp_path / "data" / "nw.duckdb").exists()


def test_sql_reports_a_held_lock_in_one_line(warehouse: Warehouse) -> None:
    with holding(warehouse.path) as holder:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "from pipeline.cli import main; main()",
                "sql",
                "SELECT 1",
                "--db",
                str(warehouse.path),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={"NERFWATCH_LOCK_WAIT_S": "0.5", "PATH": "/usr/bin:/bin"},
            cwd=Path(__file__).resolve().parents[1],
        )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"process {holder.pid}" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_releases_list_add_import(warehouse: Warehouse, tmp_path: Path) -> None:
    db = str(warehouse.path)
    code, out = nerfwatch("releases", "list", "--vendor", "Anthropic", "--db", db, "-f", "csv")
    assert code == 0 and len(out.splitlines()) > 5
    code, out = nerfwatch("releases", "add", "OpenAI", "GPT-7", "2026-12-01", "--db", db)
    assert code == 0, out
    code, out = nerfwatch("releases", "add", "OpenAl", "GPT-7", "2026-12-01", "--db", db)
    assert code == 2 and 'did you mean "OpenAI"' in out
    code, out = nerfwatch("releases", "add", "OpenAI", "GPT-7", "2026-13-01", "--db", db)
    assert code == 2 and "release_date" in out
    good = tmp_path / "good.csv"
    good.write_text(
        "vendor,model,release_date,kind,source_url,confidence\n"
        "Anthropic,Claude X,2026-10-01,major,https://example.org/x,high\n"
        "NewCo,Model 1,2026-09-01,major,,low\n"
    )
    code, out = nerfwatch("releases", "import", str(good), "--db", db)
    assert code == 2 and "good.csv:3" in out and "NewCo" in out
    code, out = nerfwatch("releases", "import", str(good), "--db", db, "--new-vendor")
    assert code == 0 and "imported 2" in out
    user = warehouse.query("SELECT model FROM releases WHERE origin = 'user' ORDER BY model")
    assert user["model"].to_list() == ["Claude X", "GPT-7", "Model 1"]


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ("OpenAI,GPT-X,2026-02-30,major,,high", "release_date"),
        ("OpenAI,,2026-02-01,major,,high", "model: missing value"),
        ("OpenAI,GPT-X,2026-02-01,major,,sure", "confidence"),
        ("OpenAI,GPT-X,2026-02-01,major,ftp://x,high", "source_url"),
        ("OpenAI,GPT-X,1999-02-01,major,,high", "outside"),
    ],
)
def test_import_rejects_bad_rows_and_writes_nothing(
    warehouse: Warehouse, tmp_path: Path, row: str, fragment: str
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "vendor,model,release_date,kind,source_url,confidence\n"
        "OpenAI,GPT-OK,2026-01-01,major,,high\n" + row + "\n"
    )
    code, out = nerfwatch("releases", "import", str(bad), "--db", str(warehouse.path))
    assert code == 2 and f"{bad}:3" in out and fragment in out, out
    assert warehouse.query("SELECT count(*) AS n FROM releases WHERE origin = 'user'")["n"][0] == 0


def test_import_reads_a_spreadsheet_export_or_names_the_line_that_is_not_text(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """Excel's UTF-8 export starts with a byte-order mark; a Latin-1 export is not UTF-8."""
    rows = "vendor,model,release_date\nOpenAI,GPT-\u00c9,2026-01-01\n"
    exported = tmp_path / "bom.csv"
    exported.write_bytes(b"\xef\xbb\xbf" + rows.encode())
    code, out = nerfwatch("releases", "import", str(exported), "--db", str(warehouse.path))
    assert code == 0 and "imported 1" in out, out
    latin = tmp_path / "latin.csv"
    latin.write_bytes(rows.encode("latin-1"))
    code, out = nerfwatch("releases", "import", str(latin), "--db", str(warehouse.path))
    assert code == 2 and f"{latin}:2: not UTF-8 text (byte 0xc9)" in out, out
    assert "Traceback" not in out


def test_import_rejects_unknown_columns(warehouse: Warehouse, tmp_path: Path) -> None:
    bad = tmp_path / "cols.csv"
    bad.write_text("vendor,model,date\nOpenAI,GPT,2026-01-01\n")
    code, out = nerfwatch("releases", "import", str(bad), "--db", str(warehouse.path))
    assert code == 2 and "release_date" in out


@pytest.mark.slow
def test_sql_while_another_process_writes(warehouse: Warehouse) -> None:
    """Readers interleave with a writer's short transactions; nobody sees a lock error."""
    root = Path(__file__).resolve().parents[1]
    command = [sys.executable, "-m", "tests.support.writer_loop", str(warehouse.path)]
    writer = subprocess.Popen(
        [*command, "--batches", "60", "--pause-after", "30"],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    assert read_line(writer, 120, "'started' from the writer") == "started"

    def count() -> int:
        sql = "SELECT count(*) AS n FROM probe_results"
        code, out = nerfwatch("sql", sql, "--db", str(warehouse.path), "-f", "csv")
        assert code == 0, out
        return int(out.splitlines()[1])

    assert read_line(writer, 120, "'paused' from the writer") == "paused"
    counts = [count()]  # mid-run, by handshake: no race with a fast writer
    writer.stdin.write("go\n")
    writer.stdin.close()
    deadline = time.monotonic() + 120
    while writer.poll() is None:
        assert time.monotonic() < deadline, "the writer did not finish its batches within 120s"
        counts.append(count())
    status = writer.wait(timeout=60)
    assert writer.stderr is not None
    err = writer.stderr.read()
    writer.stdout.close()
    writer.stderr.close()
    assert status == 0, err
    counts.append(count())
    assert counts[0] == 150
    assert counts == sorted(counts) and len(counts) >= 2
    assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 300
