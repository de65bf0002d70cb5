"""Scenario files, the scenario clock, phase switches and the demand rhythm."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
import pytest

from probes.simulator import ScenarioError, SimulatorHandle, bundled_scenario, load_scenario, model
from probes.simulator.scenario import Clock, Rhythm
from probes.tasks import FAMILIES

MINIMAL = '[[providers]]\nname = "p"\nvendor = "V"\nformat = "openai"\nmodel = "m"\n'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_scenario_plays_three_differing_cycles() -> None:
    scenario = load_scenario(bundled_scenario())
    assert len(scenario.providers) >= 3
    cycles = set()
    for provider in scenario.providers:
        stages = [p.stage for p in provider.phases]
        assert {"subtle", "long_context", "major"} <= set(stages)
        assert provider.releases
        cycles.add(tuple(p.start_day for p in provider.phases))
    assert len(cycles) == len(scenario.providers)
    assert scenario.clock.length_days >= 170


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = 'x'\n", "providers"),
        (MINIMAL + "colour = 'red'\n", "unknown key(s) ['colour']"),
        (MINIMAL.replace('"openai"', '"grpc"'), "key 'format'"),
        (MINIMAL + "output_tps = 'fast'\n", "key 'output_tps': expected a number"),
        (MINIMAL + "[[providers.phases]]\nstage = 'meltdown'\nday = 3\n", "key 'stage'"),
        (MINIMAL + "[[providers.phases]]\nstage = 'major'\ndate = 2026-01-01\n", "[clock].start"),
        (MINIMAL + "errors = { teapot = 0.1 }\n", "key 'errors'"),
        ("[[providers]\n", "invalid TOML"),
    ],
)
def test_bad_scenarios_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(path) in str(info.value) and message in str(info.value)


TWO_PROVIDERS = (
    MINIMAL
    + "[[providers.phases]]\nstage = 'stable'\nday = 0\n"
    + "[[providers.phases]]\nstage = 'major'\nday = 5\n"
    + MINIMAL.replace('"p"', '"q"')
    + "[[providers.phases]]\nstage = 'stable'\nday = 0\n"
    + "[[providers.phases]]\nstage = 'major'\nday = 9\n"
)


@pytest.mark.parametrize(
    ("old", "occurrence", "new", "label"),
    [
        ("stage = 'major'", 2, "stage = 'meltdown'", "providers[1].phases[1]: key 'stage'"),
        ("day = 0", 2, "day = nan", "providers[1].phases[0]: key 'day'"),
        ('model = "m"', 1, "model = 3", "providers[0]: key 'model'"),
        ('model = "m"', 2, 'model = "m"\ncolour = "red"', "providers[1]: unknown key(s)"),
    ],
)
def test_a_scenario_error_names_the_line_of_the_key(
    tmp_path: Path, old: str, occurrence: int, new: str, label: str
) -> None:
    """Nested arrays count from 0 again in each provider, so the second provider's first
    phase is found at its own line, not at the first provider's."""
    lines = TWO_PROVIDERS.splitlines()
    index = [i for i, line in enumerate(lines) if line == old][occurrence - 1]
    lines[index] = new
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    named_line = index + 1 if "unknown" not in label else index + 2
    assert str(info.value).startswith(f"{path}:{named_line}: {label}")


def test_dates_and_day_offsets_agree(tmp_path: Path) -> None:
    text = (
        "[clock]\nstart = 2026-05-01\n"
        + MINIMAL
        + "[[providers.phases]]\nstage = 'stable'\nday = 0\n"
        + "[[providers.phases]]\nstage = 'major'\ndate = 2026-06-10\n"
        + "[[providers.releases]]\ndate = 2026-07-01\nmodel = 'm-2'\n"
    )
    provider = load_scenario(_write(tmp_path, text)).providers[0]
    assert provider.phases[1].start_day == 40
    assert provider.model_at(60) == "m" and provider.model_at(61) == "m-2"


def test_clock_anchors_the_last_day_to_today() -> None:
    clock = Clock(length_days=180)
    start = clock.start_at(date(2026, 11, 20))
    assert start == datetime(2026, 5, 25, tzinfo=UTC)
    assert start + timedelta(days=179) == datetime(2026, 11, 20, tzinfo=UTC)
    assert Clock(start=date(2026, 1, 2)).start_at() == datetime(2026, 1, 2, tzinfo=UTC)


def test_ramps_blend_phase_values() -> None:
    provider = load_scenario(bundled_scenario()).provider("nova")
    subtle = next(p for p in provider.phases if p.stage == "subtle")
    days = np.array([subtle.start_day - 1, subtle.start_day + subtle.ramp_days / 2, 70.0])
    pv = model.phase_values(provider, days)
    assert pv.latency_long[0] == 1.0
    assert pv.latency_long[1] == pytest.approx(1 + (subtle.latency_long - 1) / 2)
    assert pv.latency_long[2] == pytest.approx(subtle.latency_long)
    flat = model.phase_values(provider, days, step_scale=0.0)
    assert np.all(flat.latency_long == 1.0)


def test_rhythm_peaks_where_configured() -> None:
    rhythm = Rhythm(daily_amplitude=0.3, weekly_amplitude=0.1, peak_hour_utc=15, peak_weekday=2.5)
    wednesday = datetime(2026, 11, 18, tzinfo=UTC).timestamp()
    hours = wednesday + np.arange(24) * 3600.0
    demand = model.demand(rhythm, hours)
    assert int(np.argmax(demand)) == 15 and int(np.argmin(demand)) == 3
    week = datetime(2026, 11, 16, 12, tzinfo=UTC).timestamp() + np.arange(7) * 86400.0
    assert int(np.argmax(model.demand(rhythm, week))) == 2  # Wednesday
    assert np.allclose(model.demand(rhythm, hours, strength=0.0), 1.0)


def _ask(sim: SimulatorHandle, provider: str, at: datetime, prompt: str) -> httpx.Response:
    url = sim.provider_url(provider) + "/chat/completions"
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
    headers = {"x-sim-at": at.isoformat(), "x-sim-seed": "5"}
    return httpx.post(url, json=body, headers=headers, timeout=30)


def _plan(response: httpx.Response) -> dict[str, str]:
    return dict(part.split("=", 1) for part in response.headers["x-sim-plan"].split(";"))


def test_phase_switch_is_visible_on_the_wire(simulator: SimulatorHandle) -> None:
    provider = simulator.scenario.provider("nova")
    start = simulator.state.start
    major = next(p for p in provider.phases if p.stage == "major")
    before = start + timedelta(days=10, hours=15)
    during = start + timedelta(days=major.start_day + major.ramp_days + 2, hours=15)
    long_prompt = FAMILIES["kv_lookup"].item(3, 16_000).prompt
    quiet, busy = (
        _ask(simulator, "nova", before, long_prompt),
        _ask(simulator, "nova", during, long_prompt),
    )
    assert quiet.headers["x-sim-phase"] == "stable" and busy.headers["x-sim-phase"] == "major"
    ratio = float(_plan(busy)["ttft_ms"]) / float(_plan(quiet)["ttft_ms"])
    assert ratio == pytest.approx(major.latency_long, rel=0.01)  # same seed, same noise
    assert float(_plan(busy)["tps"]) < float(_plan(quiet)["tps"])
    assert int(busy.headers["x-ratelimit-limit-requests"]) < int(
        quiet.headers["x-ratelimit-limit-requests"]
    )
    release = next(r for r in provider.releases)
    after = start + timedelta(days=release.day + 1)
    assert _ask(simulator, "nova", after, "hi").json()["model"] == release.model
    state = httpx.get(simulator.base_url + "/_sim/state", params={"at": during.isoformat()}).json()
    assert state["providers"]["nova"]["stage"] == "major"
    assert state["providers"]["nova"]["latency_long"] == pytest.approx(major.latency_long)


def test_live_server_really_sleeps_the_planned_ttft(
    simulator_factory: Callable[..., SimulatorHandle],
) -> None:
    sim = simulator_factory(None, time_scale=0.2, quiet=True)
    response = _ask(sim, "nova", sim.state.now(), FAMILIES["arithmetic"].item(1, 200).prompt)
    planned_ms = float(_plan(response)["ttft_ms"]) * 0.2
    measured_ms = (
        int(response.headers["x-sim-first-token-ns"]) - int(response.headers["x-sim-received-ns"])
    ) / 1e6
    assert planned_ms * 0.98 <= measured_ms <= planned_ms + 250


def test_rhythm_is_visible_on_the_wire(simulator: SimulatorHandle) -> None:
    day = simulator.state.start + timedelta(days=5)  # a stable stretch
    prompt = FAMILIES["arithmetic"].item(2, 200).prompt
    peak = [_ask(simulator, "nova", day.replace(hour=15), prompt) for _ in range(3)]
    trough = [_ask(simulator, "nova", day.replace(hour=3), prompt) for _ in range(3)]
    assert all(
        float(_plan(p)["demand"]) > float(_plan(t)["demand"])
        for p, t in zip(peak, trough, strict=True)
    )
    # same seed: only the Poisson background load differs, and it is larger at the peak
    assert float(_plan(peak[0])["load"]) >= float(_plan(trough[0])["load"])


def test_requests_in_flight_add_to_the_queue(simulator: SimulatorHandle) -> None:
    """Same seed, same instant: three stalled streams in flight raise the load by three."""
    at = simulator.state.start + timedelta(days=5, hours=15)
    prompt = FAMILIES["arithmetic"].item(6, 200).prompt
    alone = _plan(_ask(simulator, "nova", at, prompt))
    url = simulator.provider_url("nova") + "/chat/completions"
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    with ExitStack() as stack:
        client = stack.enter_context(httpx.Client(timeout=30))
        readers = []  # keep the iterators: dropping one closes its stream
        for _ in range(3):
            stream = stack.enter_context(
                client.stream("POST", url, json=body, headers={"x-sim-fault": "stall"})
            )
            readers.append(stream.iter_bytes())
            next(readers[-1])  # headers and a first chunk: it is in flight
        crowded = _plan(_ask(simulator, "nova", at, prompt))
    assert float(crowded["load"]) == float(alone["load"]) + 3
    assert float(crowded["ttft_ms"]) > float(alone["ttft_ms"])
