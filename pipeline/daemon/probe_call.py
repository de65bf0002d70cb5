"""Calling the probe function for one job: on the daemon's loop or a worker thread's.

The real runner (``probes.runner.run_probe``) also takes a chars-per-token estimator per
provider, learned from the warehouse at start and refined as results arrive; small test
functions do not take one, so the caller looks at the function's signature once.
"""

from __future__ import annotations

import inspect
from typing import Any

import httpx

from pipeline.config import ProviderConfig
from pipeline.daemon.contract import ProbeFunction
from pipeline.daemon.schedule import JobSpec
from pipeline.daemon.workers import ProbeWorkers
from probes.result import ProbeResult
from probes.sizing import CharsPerToken

__all__ = ["ProbeCaller", "default_probe_fn"]


def default_probe_fn() -> ProbeFunction:
    """The real runner (imported late: it pulls in every adapter and task family)."""
    from probes.runner import run_probe

    return run_probe


def _takes_estimator(fn: ProbeFunction) -> bool:
    try:
        return "estimator" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class ProbeCaller:
    """Runs ``probe_fn`` for a job with the daemon's client (or a worker's) and site."""

    def __init__(
        self,
        probe_fn: ProbeFunction,
        client: httpx.AsyncClient,
        *,
        site: str,
        workers: ProbeWorkers | None = None,
        estimators: dict[str, CharsPerToken] | None = None,
    ) -> None:
        self._fn = probe_fn
        self._client = client
        self._site = site
        self._workers = workers
        self._with_estimator = _takes_estimator(probe_fn)
        self._estimators = dict(estimators or {})

    async def __call__(self, spec: JobSpec) -> ProbeResult:
        extras: dict[str, Any] = {"source": "live", "probe_site": self._site}
        extras.update(self._extras(spec.provider))
        if self._workers is not None:
            return await self._workers.run(self._fn, spec.provider, spec.probe, **extras)
        return await self._fn(spec.provider, spec.probe, client=self._client, **extras)

    def _extras(self, provider: ProviderConfig) -> dict[str, Any]:
        if not self._with_estimator:
            return {}
        if provider.name not in self._estimators:
            self._estimators[provider.name] = CharsPerToken(provider.chars_per_token)
        return {"estimator": self._estimators[provider.name]}
