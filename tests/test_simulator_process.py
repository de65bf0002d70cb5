"""The simulator in a child process (benchmarks): it serves, and it is gone afterwards."""

from __future__ import annotations

import os

import httpx
import pytest

from probes.simulator import running_in_process

pytestmark = pytest.mark.slow


def test_serves_from_a_niced_child_and_stops_with_the_block() -> None:
    with running_in_process(time_scale=0, niceness=5) as sim:
        assert sim.pid != os.getpid()
        assert os.getpriority(os.PRIO_PROCESS, sim.pid) >= 5
        response = httpx.post(
            f"{sim.base_url}/nova/v1/chat/completions",
            json={"model": "nova-1", "messages": [{"role": "user", "content": "hi"}]},
            timeout=30,
        )
        assert response.status_code == 200
        assert response.json()["choices"][0]["message"]["content"]
    with pytest.raises(ProcessLookupError):
        os.kill(sim.pid, 0)  # reaped: the block waited for it
