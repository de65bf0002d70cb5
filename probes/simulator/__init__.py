"""A local LLM provider for tests, benchmarks and the demo (see README.md here).

One loopback server plays several simulated providers in the OpenAI Chat Completions and
Anthropic Messages wire formats, following a scenario of degradation phases; the same
scenario model writes synthetic history straight into the warehouse.
"""

from __future__ import annotations

from probes.simulator.faults import FAULTS, NO_FAULT
from probes.simulator.loader import ScenarioError, bundled_scenario, load_scenario
from probes.simulator.process import SimulatorProcess, running_in_process
from probes.simulator.running import SimulatorHandle, configure, running, serve
from probes.simulator.scenario import Scenario

__all__ = [
    "FAULTS",
    "NO_FAULT",
    "Scenario",
    "ScenarioError",
    "SimulatorHandle",
    "SimulatorProcess",
    "bundled_scenario",
    "configure",
    "load_scenario",
    "running",
    "running_in_process",
    "serve",
]
