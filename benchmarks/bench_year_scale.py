"""A demanding user's year: many providers x 3 probes every 5 minutes, kept for ever.

Writes a warehouse of full-width probe rows (every ``probe_results`` column a live probe
fills: a UUIDv7-shaped run id, response headers as JSON, the answer text, rate limits,
usage, cost) straight into a real DuckDB file: the rows are generated inside DuckDB from
``range()`` with hash-based draws (deterministic, no Python row objects), one provider at a
time, and inserted in bulk into the migrated schema (primary key and index included). The
spool is bypassed on purpose: 8 M rows through it would measure the spool, not the reads.

Then runs each user-facing command in its own process, as a user would, and prints wall
seconds and peak RSS (``/usr/bin/time -v``): ``nerfwatch analyze``, ``nerfwatch report``,
``nerfwatch status``, and canned ``nerfwatch sql`` queries. ``--only`` picks commands;
``--keep`` keeps the file (it is deleted by default).

    .venv/bin/python benchmarks/bench_year_scale.py --providers 5 --days 90 --every 5
    .venv/bin/python benchmarks/bench_year_scale.py --providers 25 --days 365   # ~8 M rows

Disk: 380-510 bytes a row in the file (measured: 25 x 90 days 699 MB; so about 3 GB for
8 M rows); the size is printed after the build.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.warehouse import Warehouse  # noqa: E402

NERFWATCH = [sys.executable, "-m", "pipeline.cli"]

# (probe, task family, context class, prompt tokens): three probes per provider, two of
# them short context (one series in the analysis, which groups by context class).
PROBES = [
    ("short-arith", "arithmetic", "short", 400),
    ("short-reason", "multi_step", "short", 900),
    ("long-kv", "kv_lookup", "long", 32000),
]

# Deterministic draws: u(i, 'tag') is uniform on [0, 1), z(i, 'tag') standard normal.
_U = "((hash({i}, '{tag}') % 1000003)::DOUBLE / 1000003.0)"


def _u(tag: str, i: str = "i") -> str:
    return _U.format(i=i, tag=tag)


def _z(tag: str, i: str = "i") -> str:
    return (
        f"(sqrt(-2 * ln(greatest({_u(tag + 'a', i)}, 1e-9))) * cos(2 * pi() * {_u(tag + 'b', i)}))"
    )


def provider_sql(p: int, probe_no: int, n: int, start: datetime, every_min: float) -> str:
    """INSERT of one (provider, probe) series: ``n`` ticks from ``start``, every
    ``every_min`` minutes, with a daily rhythm, heavy tails, two outages, a planted
    slow phase (1.3x TTFT, 3x errors, 5 points fewer correct) on a third of the providers,
    and full-width text columns."""
    probe, family, ctx, tokens = PROBES[probe_no]
    name = f"prov{p:02d}"
    vendor = ["OpenAI", "Anthropic", "Google", "DeepSeek", "Moonshot"][p % 5]
    base = 350.0 * (1 + 0.2 * (p % 4)) * (4.0 if ctx == "long" else 1.0)
    key = f"{p}-{probe_no}"
    # outages: two 6-30 h holes per series; a slow phase on days [60 + 7 p % 40, +30)
    day = f"(i * {every_min} / 1440.0)"
    hour = f"((i * {every_min} / 60.0) % 24)"
    slow = f"({p} % 3 = 0 AND {day} >= {60 + (7 * p) % 40} AND {day} < {90 + (7 * p) % 40})"
    hole = " OR ".join(
        f"(i >= {int(n * ((p * 31 + probe_no * 7 + k * 53) % 97) / 97)}"
        f" AND i < {int(n * ((p * 31 + probe_no * 7 + k * 53) % 97) / 97)}"
        f" + {int((6 + (p + k) % 24) * 60 / every_min)})"
        for k in range(2)
    )
    err_p = f"(0.01 * CASE WHEN {slow} THEN 3 ELSE 1 END)"
    acc_p = f"(0.93 - CASE WHEN {slow} THEN 0.05 ELSE 0 END)"
    logt = (
        f"(ln({base}) + 0.3 * sin(2 * pi() * ({hour} - 9) / 24)"
        f" + CASE WHEN {slow} THEN ln(1.3) ELSE 0 END + 0.25 * {_z('t' + key)}"
        f" + CASE WHEN {_u('tail' + key)} < 0.01 THEN ln(1 + 5 * {_u('tv' + key)}) ELSE 0 END)"
    )
    epoch_ms = f"(epoch_ms(TIMESTAMPTZ '{start.isoformat()}') + (i * {every_min} * 60000)::BIGINT)"
    return f"""
INSERT INTO probe_results BY NAME
WITH base AS (
  SELECT i,
         TIMESTAMPTZ '{start.isoformat()}' + to_microseconds((i * {every_min} * 60e6)::BIGINT)
             AS started_at,
         {_u("e" + key)} < {err_p} AS failed,
         {_u("c" + key)} < {acc_p} AS answered_right,
         exp({logt}) AS ttft,
         80 * exp(0.05 * {_z("s" + key)}) AS tps,
         60 + (hash(i, 'o{key}') % 200)::INTEGER AS out_tokens,
         hash(i, 'r{key}') AS r
  FROM range({n}) t(i)
  WHERE NOT ({hole})
)
SELECT
  -- UUIDv7 layout: 48-bit ms time, version 7, random
  lower(format('{{:012x}}-7{{:03x}}-{{:04x}}-{{:012x}}', {epoch_ms},
               (r % 4096)::BIGINT, (8 * 4096 + (r >> 12) % 16384)::BIGINT,
               ((r >> 26) % 281474976710656)::BIGINT)) AS run_id,
  started_at, 'live' AS source, 'probe-host-1' AS probe_site, 'done' AS run_status,
  '{name}' AS provider, '{vendor}' AS vendor, '{name}-model' AS model,
  '{name}-model-2026-01-01' AS reported_model,
  'https://api.{name}.example.com/v1' AS endpoint,
  CASE WHEN {p} % 2 = 0 THEN 'openai' ELSE 'anthropic' END AS wire_format,
  'tier-3' AS plan, '{probe}' AS probe, '{family}' AS task_family, 3 AS task_version,
  (r % 1000000)::BIGINT AS seed, '{ctx}' AS context_class,
  {tokens} AS context_target_tokens, 256 AS max_output_tokens, 0.0 AS temperature,
  true AS streamed,
  CASE WHEN failed THEN NULL ELSE ttft * 0.6 END AS headers_ms,
  CASE WHEN failed THEN NULL ELSE ttft END AS ttft_ms,
  CASE WHEN failed THEN NULL ELSE ttft * 1.02 END AS first_answer_ms,
  CASE WHEN failed THEN NULL ELSE ttft + out_tokens / tps * 1000 END AS last_token_ms,
  CASE WHEN failed THEN ttft ELSE ttft + out_tokens / tps * 1000 + 3 END AS total_ms,
  CASE WHEN failed THEN NULL ELSE 1000 / tps END AS itl_p50_ms,
  CASE WHEN failed THEN NULL ELSE 2500 / tps END AS itl_p95_ms,
  CASE WHEN failed THEN NULL ELSE 9000 / tps END AS itl_max_ms,
  CASE WHEN failed THEN NULL ELSE tps END AS output_tokens_per_s,
  CASE WHEN failed THEN 0 ELSE out_tokens END AS chunks,
  (r % 5) <> 0 AS connection_reused,
  CASE WHEN failed THEN NULL ELSE {tokens} + (r % 50)::INTEGER END AS input_tokens,
  CASE WHEN failed THEN NULL ELSE out_tokens END AS output_tokens,
  CASE WHEN failed THEN NULL ELSE 0 END AS cached_tokens,
  CASE WHEN failed OR '{family}' <> 'multi_step' THEN NULL ELSE out_tokens * 3 END
      AS reasoning_tokens,
  CASE WHEN failed THEN NULL ELSE ({tokens} * 2.5 + out_tokens * 10) / 1e6 END AS cost_usd,
  CASE WHEN failed THEN CASE WHEN r % 2 = 0 THEN 429 ELSE 529 END ELSE 200 END AS http_status,
  CASE WHEN NOT failed THEN 'ok' WHEN r % 2 = 0 THEN 'rate_limited' ELSE 'overloaded' END
      AS error_class,
  CASE WHEN failed THEN CASE WHEN r % 2 = 0 THEN 'rate_limit_exceeded'
       ELSE 'overloaded_error' END END AS error_code,
  CASE WHEN failed THEN 'Rate limit reached for requests; please try again later.' END
      AS error_detail,
  CASE WHEN failed THEN NULL ELSE 'stop' END AS finish_reason,
  'req_' || md5(r::VARCHAR)[:24] AS request_id,
  10000 AS rl_requests_limit, 9000 + (r % 1000)::BIGINT AS rl_requests_remaining,
  0.006 AS rl_requests_reset_s, 2000000 AS rl_tokens_limit,
  1990000 + (r % 10000)::BIGINT AS rl_tokens_remaining, 62.0 AS rl_tokens_reset_s,
  CASE WHEN failed THEN 2.0 END AS retry_after_s,
  format('{{{{"content-type": "text/event-stream", "date": "{{}}", "x-request-id": "req_{{}}",'
         ' "openai-processing-ms": "{{}}", "x-ratelimit-limit-requests": "10000",'
         ' "x-ratelimit-remaining-requests": "{{}}", "x-ratelimit-reset-requests": "6ms",'
         ' "x-ratelimit-limit-tokens": "2000000", "x-ratelimit-remaining-tokens": "{{}}",'
         ' "x-ratelimit-reset-tokens": "1m2s", "cf-ray": "{{}}-FRA", "server": "cloudflare",'
         ' "strict-transport-security": "max-age=31536000; includeSubDomains; preload",'
         ' "x-content-type-options": "nosniff", "alt-svc": "h3=\\":443\\"; ma=86400"}}}}',
         strftime(started_at, '%a, %d %b %Y %H:%M:%S GMT'), md5(r::VARCHAR)[:24],
         (ttft * 0.5)::INTEGER, 9000 + r % 1000, 1990000 + r % 10000,
         md5((r + 1)::VARCHAR)[:16])::JSON AS response_headers,
  (r % 1000)::VARCHAR AS expected_answer,
  CASE WHEN failed THEN NULL WHEN answered_right THEN (r % 1000)::VARCHAR
       ELSE (r % 1000 + 1)::VARCHAR END AS extracted_answer,
  CASE WHEN failed THEN NULL WHEN answered_right THEN 'correct' ELSE 'wrong' END AS score_strict,
  CASE WHEN failed THEN NULL WHEN answered_right THEN 'correct' ELSE 'wrong' END AS score_lenient,
  CASE WHEN r % 200 = 0 THEN ['truncated'] ELSE []::VARCHAR[] END AS sanity_flags,
  CASE WHEN failed THEN NULL ELSE 'Working through it step by step: the value asked for is '
       || CASE WHEN answered_right THEN (r % 1000)::VARCHAR ELSE (r % 1000 + 1)::VARCHAR END
       || '. Answer: ' || CASE WHEN answered_right THEN (r % 1000)::VARCHAR
       ELSE (r % 1000 + 1)::VARCHAR END END AS response_text,
  NULL AS reasoning_text, '0.9.0' AS nerfwatch_version,
  {tokens * 4} + (r % 200)::INTEGER AS prompt_chars,
  CASE WHEN {p} % 2 = 0 THEN 'fp_' || CASE WHEN {day} < 200 THEN 'a1b2c3' ELSE 'd4e5f6' END
  END AS system_fingerprint
FROM base
"""


def copy_sql(p: int, like: int) -> str:
    """INSERT of provider ``p`` as a renamed copy of provider ``like``'s rows (a new
    random part in each run id): generating full-width rows costs about 10 k rows/s on
    this machine, copying several times that, and the analysis does the same work on a
    copy as on a fresh draw."""
    name, src = f"prov{p:02d}", f"prov{like:02d}"
    return f"""
INSERT INTO probe_results BY NAME
SELECT * REPLACE (
  left(run_id, 24) || lpad(format('{{:x}}', hash(run_id, {p}) % 281474976710656), 12, '0')
      AS run_id,
  '{name}' AS provider, replace(model, '{src}', '{name}') AS model,
  replace(reported_model, '{src}', '{name}') AS reported_model,
  replace(endpoint, '{src}', '{name}') AS endpoint)
FROM probe_results WHERE provider = '{src}'
"""


def build(
    path: Path, providers: int, days: float, every_min: float, end: datetime, fresh: int = 5
) -> int:
    """Create and fill the warehouse; return the number of probe rows. The first ``fresh``
    providers are drawn, the others are renamed copies of them."""
    n = int(days * 1440 / every_min)
    start = end - timedelta(minutes=n * every_min)
    wh = Warehouse(path)
    wh.migrate()
    for p in range(providers):
        t0 = time.perf_counter()
        if p < fresh:
            for probe_no in range(len(PROBES)):
                wh.execute(provider_sql(p, probe_no, n, start, every_min))
        else:
            wh.execute(copy_sql(p, p % fresh))
        print(f"  provider {p + 1}/{providers} stored in {time.perf_counter() - t0:.1f} s",
              flush=True)  # fmt: skip
    return int(wh.query("SELECT count(*) AS n FROM probe_results")["n"][0])


_FIELDS = {
    "wall": re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)"),
    "rss_kb": re.compile(r"Maximum resident set size \(kbytes\): (\d+)"),
    "user": re.compile(r"User time \(seconds\): (\S+)"),
    "sys": re.compile(r"System time \(seconds\): (\S+)"),
}


def _seconds(clock: str) -> float:
    parts = [float(x) for x in clock.split(":")]
    return sum(v * 60**k for k, v in enumerate(reversed(parts)))


def measure(
    label: str, args: list[str], cwd: Path, blas_threads: int | None = None
) -> dict[str, object]:
    """Run one command under ``/usr/bin/time -v``; its wall time, CPU and peak RSS.
    ``blas_threads``: OPENBLAS_NUM_THREADS for the command (unset: OpenBLAS's default,
    one thread per CPU)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if blas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *NERFWATCH, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
    )
    found = {k: rx.search(proc.stderr) for k, rx in _FIELDS.items()}
    if any(m is None for m in found.values()):
        raise SystemExit(f"{label}: /usr/bin/time printed no figures:\n{proc.stderr[-2000:]}")
    wall = _seconds(found["wall"].group(1))  # type: ignore[union-attr]
    rss = int(found["rss_kb"].group(1)) / 1024  # type: ignore[union-attr]
    cpu = float(found["user"].group(1)) + float(found["sys"].group(1))  # type: ignore[union-attr]
    status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
    print(f"{label:28} {wall:8.1f} s wall {cpu:8.1f} s CPU {rss:8.0f} MB peak RSS  {status}"
          f"  {tail[0][:70] if tail else ''}", flush=True)  # fmt: skip
    if proc.returncode != 0:
        print("    " + proc.stderr.strip().splitlines()[0][:200] if proc.stderr.strip() else "")
    return {"label": label, "wall": wall, "cpu": cpu, "rss_mb": rss, "status": status}


COMMANDS = {
    "analyze": ["analyze"],
    "report": ["report", "--out", "{out}"],
    "status": ["status"],
    "sql-slowest_hours": ["sql", "slowest_hours"],
    "sql-provider_comparison": ["sql", "provider_comparison"],
    "sql-hourly": ["sql", "SELECT count(*) AS buckets FROM hourly"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", type=int, default=5)
    parser.add_argument("--days", type=float, default=90.0)
    parser.add_argument("--every", type=float, default=5.0, help="minutes between probes")
    parser.add_argument("--fresh", type=int, default=5, help="providers drawn, not copied")
    parser.add_argument("--dir", type=Path, default=None, help="folder for the file")
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands to time")
    parser.add_argument("--keep", action="store_true", help="keep the warehouse file")
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="OPENBLAS_NUM_THREADS for the commands"
    )
    parser.add_argument("--db", type=Path, default=None, help="reuse this warehouse")
    args = parser.parse_args()
    if args.providers < 1 or args.days <= 0 or args.every <= 0:
        raise SystemExit("--providers, --days and --every must be positive")
    folder = Path(tempfile.mkdtemp(dir=args.dir, prefix="year-scale-"))
    try:
        path = args.db or folder / "year.duckdb"
        if args.db is None:
            end = datetime.now(UTC).replace(second=0, microsecond=0)
            print(f"building {args.providers} providers x {len(PROBES)} probes x "
                  f"{args.days:g} days every {args.every:g} min", flush=True)  # fmt: skip
            t0 = time.perf_counter()
            rows = build(path, args.providers, args.days, args.every, end, max(1, args.fresh))
            took = time.perf_counter() - t0
            size = path.stat().st_size
            print(f"stored {rows:,} rows in {took:.0f} s; file {size / 2**20:,.0f} MB "
                  f"({size / max(rows, 1):.0f} bytes/row)", flush=True)  # fmt: skip
        for name in args.only.split(","):
            argv = [a.format(out=folder / "reports") for a in COMMANDS[name]]
            measure(name, [*argv, "--db", str(path)], folder, args.blas_threads)
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
