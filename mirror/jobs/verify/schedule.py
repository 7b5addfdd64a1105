"""Continuous verification inside ``mm2 run``: the verify job on a schedule, its results as metrics.

Off by default. ``verify.interval.seconds`` in mm2.properties (globally, or per flow as
``{source}->{target}.verify.interval.seconds``) turns it on for every enabled flow this node runs;
``verify.topics`` (a regex) and ``verify.chunk.records`` narrow and size it. Each flow gets its own
APScheduler-backed :class:`~mirror.connectors.scheduler.Scheduler` (one run at a time; an overrun skips
ticks rather than piling them up); the first run is one interval after start.

The runs compare in this process (:func:`mirror.jobs.verify.job.run_local`): ``mm2 run`` should not need
a JVM or the Spark extra; ``mm2 verify`` is the tool for big one-off proofs. A run that cannot read
a cluster counts as ``failed`` and logs one line; one that compared no record counts as
``nothing_compared`` (never ``equal``); the differences gauges keep the last completed run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from connect_core.api.errors import ConfigError, ConfigIssue
from mirror.connectors.scheduler import Scheduler
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.driver.metrics import Mm2Metrics
from mirror.jobs.verify.logic import DEFAULT_CHUNK_RECORDS, DIFFERENT, Verification

log = logging.getLogger(__name__)

VERIFY_INTERVAL = "verify.interval.seconds"
VERIFY_TOPICS = "verify.topics"
VERIFY_CHUNK_RECORDS = "verify.chunk.records"
_KINDS = ("missing", "extra", "mismatched")


@dataclass(frozen=True)
class VerifySettings:
    interval_s: float
    topics: str | None
    chunk_records: int


def _setting(config: MirrorMakerConfig, pair: SourceAndTarget, key: str) -> tuple[str, str | None]:
    flow_key = f"{pair}.{key}"
    if flow_key in config.raw:
        return flow_key, config.raw[flow_key]
    return key, config.raw.get(key)


def verify_settings(config: MirrorMakerConfig, pair: SourceAndTarget) -> VerifySettings | None:
    """The flow's scheduled-verification settings; None when off (the default). ConfigError on a bad value."""
    key, raw = _setting(config, pair, VERIFY_INTERVAL)
    if raw is None or not raw.strip():
        return None
    try:
        interval = float(raw)
    except ValueError:
        raise ConfigError([ConfigIssue(key, f"must be a number of seconds, not {raw!r}")]) from None
    if interval <= 0:
        return None
    chunk_key, chunk_raw = _setting(config, pair, VERIFY_CHUNK_RECORDS)
    try:
        chunk = int(chunk_raw) if chunk_raw is not None and chunk_raw.strip() else DEFAULT_CHUNK_RECORDS
    except ValueError:
        chunk = 0
    if chunk < 1:
        raise ConfigError([ConfigIssue(chunk_key, f"must be a positive number of records, not {chunk_raw!r}")])
    _, topics = _setting(config, pair, VERIFY_TOPICS)
    return VerifySettings(interval, topics.strip() if topics and topics.strip() else None, chunk)


def check_settings(config: MirrorMakerConfig, pairs: Iterable[SourceAndTarget]) -> None:
    """Fail ``mm2 run`` before it starts on a bad verification setting."""
    for pair in pairs:
        verify_settings(config, pair)


class FlowVerifier:
    """One flow's verification runs and the metrics they move."""

    def __init__(
        self,
        config: MirrorMakerConfig,
        pair: SourceAndTarget,
        settings: VerifySettings,
        metrics: Mm2Metrics | None,
        stopping: threading.Event,
        timeout_s: float | None = None,
    ) -> None:
        """``timeout_s``: how long a run waits for a cluster (None: the verify job's default)."""
        # deferred, as in run(): every `mm2 run` reads this module, few flows verify (start-up CPU of mm2 run)
        from mirror.jobs.verify.plan import DEFAULT_TIMEOUT_S

        self.config = config
        self.pair = pair
        self.settings = settings
        self.metrics = metrics
        self.stopping = stopping
        self.timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
        self.last: Verification | None = None

    def run(self) -> Verification | None:
        """One verification; the result (None when it failed or was interrupted by a stop)."""
        # deferred: the verify job (and the Spark helpers it shares with `mm2 verify`) only once a flow verifies
        from mirror.jobs.verify.job import plan_verification, run_local

        pair, started = self.pair, time.monotonic()
        try:
            plan = plan_verification(
                self.config, pair.source, pair.target, self.settings.topics, self.settings.chunk_records, self.timeout_s
            )
            result = run_local(plan, should_continue=lambda: not self.stopping.is_set())
        except Exception as e:  # a cluster down: counted and logged, the next tick retries
            if not self.stopping.is_set():
                log.warning("Verification of %s failed: %s", pair, " ".join(str(e).split()) or type(e).__name__)
                self._ended("failed")
            return None
        if result is None:
            return None
        self.last = result
        totals = result.totals()
        if result.outcome != DIFFERENT:
            log.info(
                "Verification of %s: %s (%d records compared, %d pending)",
                pair,
                result.outcome.replace("_", " "),
                totals["compared"],
                totals["pending"],
            )
        else:
            log.warning(
                "Verification of %s: DIFFERENT (%d missing, %d extra, %d mismatched)",
                pair,
                totals["missing"],
                totals["extra"],
                totals["mismatched"],
            )
        m = self.metrics
        if m is not None:
            labels = (pair.source, pair.target)
            m.verify_records_compared.labels(*labels).inc(totals["compared"])
            for kind in _KINDS:
                m.verify_differences.labels(*labels, kind).set(totals[kind])
            m.verify_pending_records.labels(*labels).set(totals["pending"])
            m.verify_duration.labels(*labels).set(time.monotonic() - started)
            m.verify_last_success.labels(*labels).set(time.time())
        self._ended(result.outcome)
        return result

    def scheduled(self) -> None:
        """The schedule started: what the staleness alert compares the last success with."""
        m = self.metrics
        if m is not None:
            labels = (self.pair.source, self.pair.target)
            m.verify_interval.labels(*labels).set(self.settings.interval_s)
            m.verify_schedule_start.labels(*labels).set(time.time())

    def _ended(self, outcome: str) -> None:
        m = self.metrics
        if m is not None:
            labels = (self.pair.source, self.pair.target)
            m.verify_runs.labels(*labels, outcome).inc()
            m.verify_last_run.labels(*labels).set(time.time())


class ScheduledVerification:
    """Every enabled flow with ``verify.interval.seconds`` set, verified on its own schedule."""

    def __init__(
        self,
        config: MirrorMakerConfig,
        pairs: Iterable[SourceAndTarget],
        metrics: Mm2Metrics | None,
        stop_timeout_s: float = 10.0,
        verifier: Callable[..., FlowVerifier] = FlowVerifier,
    ) -> None:
        self._stopping = threading.Event()
        self._stop_timeout_s = stop_timeout_s
        self.verifiers: list[FlowVerifier] = []
        for pair in pairs:
            settings = verify_settings(config, pair)
            if settings is not None and config.flow_enabled(pair):
                self.verifiers.append(verifier(config, pair, settings, metrics, self._stopping))
        self._schedulers: list[Scheduler] = []

    def start(self) -> None:
        for v in self.verifiers:
            scheduler = Scheduler(f"Scheduler for verification of {v.pair}", self._stop_timeout_s)
            scheduler.schedule_repeating_delayed(v.run, v.settings.interval_s, f"verify {v.pair}")
            v.scheduled()
            self._schedulers.append(scheduler)
            log.info("Verifying %s every %gs", v.pair, v.settings.interval_s)

    def stop(self) -> None:
        """Stop scheduling; a run in progress stops after its current chunk."""
        self._stopping.set()
        for scheduler in self._schedulers:
            scheduler.close()


__all__ = ["FlowVerifier", "ScheduledVerification", "VerifySettings", "check_settings", "verify_settings"]
