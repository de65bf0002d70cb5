"""One simulated provider probed by one short job: the config the clock-step and suspend
tests share, so a change to what "a minimal live daemon" means is made once."""

from __future__ import annotations

from pathlib import Path

from pipeline.config import Config, ProbeConfig, ProviderConfig
from probes.simulator import SimulatorHandle
from tests.support.daemon import make_config

__all__ = ["nova_config"]


def nova_config(
    tmp_path: Path, sim: SimulatorHandle, *, every_s: float | None = 1.0, cron: str | None = None
) -> Config:
    """The simulator's ``nova`` (priced, so budgets apply) and one ``short`` arithmetic
    probe at 300 tokens of context and 64 of output, every ``every_s`` or on ``cron``."""
    provider = ProviderConfig(
        name="nova",
        format="openai",
        base_url=sim.provider_url("nova"),
        model="nova-model",
        api_key_env=None,
        preset="simulator",
        price_input_per_mtok=1.0,
        price_output_per_mtok=4.0,
    )
    short = ProbeConfig(
        "short", "arithmetic", 300, every_s, cron, ("nova",), max_output_tokens=64, timeout_s=5.0
    )
    return make_config(tmp_path, providers=(provider,), probes=(short,))
