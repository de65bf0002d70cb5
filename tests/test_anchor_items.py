"""Anchor items: a probe with ``anchor_items = N`` draws every item from N fixed ones, the
same in every process and week, so the paired test behind ``dumber_answers`` gets the
same items in its baseline and recent windows (fresh random items never pair)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from pipeline.analysis.paired_items import paired_tests
from pipeline.config import ConfigError, load_config
from probes.runner import draw_seed
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe
from tests.test_config import VALID

ANSWER = (
    b'data: {"choices":[{"index":0,"delta":{"content":"7"},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def test_anchored_probes_draw_from_a_fixed_set_the_same_in_another_process() -> None:
    probe = short_probe(anchor_items=3)
    here = {draw_seed(probe) for _ in range(300)}
    assert len(here) == 3
    code = (
        "import json; from probes.runner import draw_seed; "
        "from tests.support.probing import short_probe; "
        "print(json.dumps(sorted({draw_seed(short_probe(anchor_items=3)) for _ in range(300)})))"
    )
    there = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert set(json.loads(there.stdout)) == here
    assert {draw_seed(short_probe(name="other", anchor_items=3)) for _ in range(300)} != here
    assert len({draw_seed(short_probe()) for _ in range(50)}) == 50  # default: fresh items


def test_a_probe_sent_with_anchor_items_carries_one_of_the_anchor_seeds() -> None:
    probe = short_probe(anchor_items=2)
    anchors = {draw_seed(probe) for _ in range(200)}
    headers = {"content-type": "text/event-stream"}
    with serving(lambda _n, _reused: Reply(body=ANSWER, headers=headers)) as srv:
        results = probe_n(loopback_provider(srv.port), probe, 12, seed=None)
    assert {r.seed for r in results} <= anchors
    assert all(r.score_strict is not None for r in results)


def test_anchored_rows_give_the_paired_test_pairs_and_fresh_rows_none() -> None:
    t0 = datetime(2026, 11, 1, tzinfo=UTC)

    def rows(seeds: list[int], window: str, wrong: set[int]) -> list[dict[str, object]]:
        return [
            {
                "provider": "p", "model": "m", "task_family": "arithmetic", "seed": s,
                "score_strict": "wrong" if s in wrong else "correct", "window": window,
                "started_at": t0 + timedelta(hours=i),
            }
            for i, s in enumerate(seeds)
        ]  # fmt: skip

    probe = short_probe(anchor_items=20)
    anchors = sorted({draw_seed(probe) for _ in range(2_000)})
    assert len(anchors) == 20
    frame = pl.DataFrame(
        rows(anchors * 3, "baseline", set()) + rows(anchors, "recent", set(anchors[:6]))
    )
    test = paired_tests(frame)[("p", "m")]
    assert test.pairs == 20 and test.became_wrong == 6 and test.became_right == 0
    assert test.p_worse < 0.05
    fresh = [draw_seed(short_probe()) for _ in range(80)]
    unpaired = pl.DataFrame(rows(fresh[:60], "baseline", set()) + rows(fresh[60:], "recent", set()))
    assert paired_tests(unpaired) == {}


@pytest.mark.parametrize("value", [-1, 100_001])
def test_anchor_items_out_of_range_is_refused_with_its_key(tmp_path, value: int) -> None:
    path = tmp_path / "nerfwatch.toml"
    path.write_text(
        VALID.replace('task = "arithmetic"', f'task = "arithmetic"\nanchor_items = {value}', 1)
    )
    with pytest.raises(ConfigError) as err:
        load_config(path, check_env=False)
    assert "anchor_items" in str(err.value) and str(value) in str(err.value)
