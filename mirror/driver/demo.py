"""``mm2 demo``: MirrorMaker 2 working end to end on this machine in one command, told as a short story.

Starts two embedded clusters ``A`` and ``B`` (embedded_kafka), creates sample topics on A
and a consumer group that makes progress, produces a few records per second, runs the real driver
(:class:`mirror.driver.driver.MirrorMaker`, with its REST API and Prometheus metrics) in-process for
the flow ``A->B``, and shows per topic what was produced and mirrored, the lag and the latency.
At the end (``duration`` or Ctrl-C) it stops producing, waits until B has every record, compares
A and B partition by partition, stops MirrorMaker and its clients, then the clusters, and only then
reports the checked result. Nothing outside this process and its work directory is touched.

What is shown, and how, is the caller's :class:`DemoView` (the CLI's is in ``mirror.cli.demo_view``).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from embedded_kafka import EmbeddedKafkaCluster, KafkaCluster, free_port
from mirror.driver.demo_traffic import GroupCommitter, RemoteTail, SampleProducer, TopicRow, TrafficStats

TOPICS = {"orders": 3, "clicks": 2}
GROUP = "demo-app"
RECORDS_PER_SECOND = 4.0
PROGRESS_EVERY_S = 0.5
COMMIT_EVERY_S = 5.0
DRAIN_TIMEOUT_S = 60.0


def demo_properties(a: str, b: str, rest_port: int | None = None) -> dict[str, str]:
    """A small mm2.properties for the demo: A->B with fast refresh/checkpoint intervals."""
    props = {
        "clusters": "A, B",
        "A.bootstrap.servers": a,
        "B.bootstrap.servers": b,
        "A->B.enabled": "true",
        "emit.heartbeats.enabled": "false",  # no B->A herder: the demo is one direction
        "A->B.emit.heartbeats.enabled": "true",
        "refresh.topics.interval.seconds": "2",
        "refresh.groups.interval.seconds": "2",
        "emit.checkpoints.interval.seconds": "1",
        "emit.heartbeats.interval.seconds": "1",
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": "1",
        "B.offset.flush.interval.ms": "500",  # worker settings are per target cluster
        "replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "status.storage.partitions": "1",
        "B.session.timeout.ms": "3000",
        "B.heartbeat.interval.ms": "1000",
        "offset.lag.max": "5",
    }
    if rest_port is not None:
        props["dedicated.mode.enable.internal.rest"] = "true"
        props["listeners"] = f"http://127.0.0.1:{rest_port}"
    return props


@dataclass(frozen=True)
class DemoSetup:
    """What the demo built and where to look while it runs."""

    source: str
    target: str
    remote_topics: dict[str, str]
    rest_url: str
    metrics_url: str
    config_path: Path


@dataclass
class DemoOutcome:
    """The checked result: counts, and the partitions whose records differ between A and B."""

    produced: int
    mirrored: int
    drained: bool
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.drained and not self.differences and self.produced == self.mirrored


class DemoView(Protocol):
    """The story's narrator: the demo calls these in this order (``progress`` many times)."""

    def clusters_started(self, source: str, target: str) -> None: ...

    def topics_created(self, topics: dict[str, int], group: str, rate: float) -> None: ...

    def mirroring(self, setup: DemoSetup) -> None: ...

    def progress(self, elapsed_s: float, rows: list[TopicRow]) -> None: ...

    def note(self, line: str) -> None: ...

    def result(self, outcome: DemoOutcome) -> None: ...


def partition_differences(topic: str, source: dict[int, list[Any]], target: dict[int, list[Any]]) -> list[str]:
    """Pure: per partition, why the target's records are not the source's (empty when identical)."""
    out = []
    for p in sorted(set(source) | set(target)):
        src, dst = source.get(p, []), target.get(p, [])
        if src == dst:
            continue
        if len(src) != len(dst):
            out.append(f"{topic}[{p}]: {len(src)} records on A, {len(dst)} on B")
        else:
            first = next(i for i, (x, y) in enumerate(zip(src, dst, strict=True)) if x != y)
            out.append(f"{topic}[{p}]: record {first} differs")
    return out


def _record_views(cluster: KafkaCluster, topic: str) -> dict[int, list[Any]]:
    return {
        p: [(m.key(), m.value(), tuple(m.headers() or ()), m.timestamp()[1]) for m in msgs]
        for p, msgs in cluster.read_all(topic, timeout=30).items()
    }


def run_demo(
    duration_s: float | None,
    view: DemoView,
    workdir: Path,
    should_stop: Callable[[], bool] = lambda: False,
    herder: str | None = None,
) -> DemoOutcome | None:
    """The whole demo; returns the checked outcome (None when stopped before MirrorMaker ran)."""
    from prometheus_client import start_http_server

    from mirror.driver.driver import MirrorMaker, make_config
    from mirror.driver.herder_factory import default_factory
    from mirror.driver.metrics import Mm2Metrics

    remote_topics = {t: f"A.{t}" for t in TOPICS}
    stats = TrafficStats(remote_topics)
    a, b = EmbeddedKafkaCluster("A"), EmbeddedKafkaCluster("B")
    driver: MirrorMaker | None = None
    metrics_server: Any = None
    producer: SampleProducer | None = None
    committer: GroupCommitter | None = None
    tail: RemoteTail | None = None
    outcome: DemoOutcome | None = None
    try:
        a.start()
        b.start()
        view.clusters_started(a.bootstrap_servers, b.bootstrap_servers)
        for topic, partitions in TOPICS.items():
            a.create_topic(topic, partitions)
        producer = SampleProducer(a, list(TOPICS), stats, RECORDS_PER_SECOND)
        producer.start()
        committer = GroupCommitter(a, GROUP, TOPICS)
        committer.commit_progress()  # the group exists before MirrorMaker starts, so it is checkpointed
        view.topics_created(dict(TOPICS), GROUP, RECORDS_PER_SECOND)

        rest_port, metrics_port = free_port(), free_port()
        props = demo_properties(a.bootstrap_servers, b.bootstrap_servers, rest_port)
        config_path = workdir / "mm2.properties"
        config_path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
        metrics = Mm2Metrics()
        served = start_http_server(metrics_port, addr="127.0.0.1", registry=metrics.registry)
        metrics_server = served[0] if served else None  # (server, thread) on prometheus-client >= 0.20
        view.note("Starting MirrorMaker for A->B (a few seconds) ...")
        driver = MirrorMaker(make_config(props), default_factory(herder), metrics=metrics)
        driver.start(interrupted=should_stop)
        if should_stop():
            return None
        view.mirroring(
            DemoSetup(
                a.bootstrap_servers,
                b.bootstrap_servers,
                remote_topics,
                rest_url=f"http://127.0.0.1:{rest_port}/A/B/connectors",
                metrics_url=f"http://127.0.0.1:{metrics_port}/metrics",
                config_path=config_path,
            )
        )

        tail = RemoteTail(b, {remote_topics[t]: n for t, n in TOPICS.items()}, stats)
        started = time.monotonic()
        next_commit = started + COMMIT_EVERY_S
        while not should_stop() and (duration_s is None or time.monotonic() - started < duration_s):
            tail.poll(PROGRESS_EVERY_S)
            view.progress(time.monotonic() - started, stats.rows())
            if time.monotonic() >= next_commit:
                committer.commit_progress()
                next_commit = time.monotonic() + COMMIT_EVERY_S

        producer.halt.set()
        producer.join(15)
        if producer.error is not None:
            raise producer.error
        stopped = f"producing after {time.monotonic() - started:.0f} s; waiting for the last records to reach B ..."
        if should_stop():
            view.note(f"Interrupted (Ctrl-C again quits at once): stopped {stopped}")
        else:
            view.note(f"Stopped {stopped}")
        drain_deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while not stats.drained() and time.monotonic() < drain_deadline:
            tail.poll(PROGRESS_EVERY_S)
            view.progress(time.monotonic() - started, stats.rows())
        drained = stats.drained()
        view.progress(time.monotonic() - started, stats.rows())
        view.note("Comparing A and B partition by partition ...")
        differences = [
            d
            for t, r in remote_topics.items()
            for d in partition_differences(r, _record_views(a, t), _record_views(b, r))
        ]
        outcome = DemoOutcome(stats.produced, stats.mirrored, drained, differences)
        view.note("Stopping MirrorMaker and the clusters ...")
    finally:
        if producer is not None:
            producer.halt.set()
            producer.join(15)
        if driver is not None:
            driver.stop(30)
        if metrics_server is not None:
            metrics_server.shutdown()
        for closer in (tail, committer):
            if closer is not None:
                closer.close()
        driver = None
        gc.collect()  # the connectors' admin clients go with their last reference, before the brokers
        b.stop()
        a.stop()
    if outcome is not None:
        view.result(outcome)
    return outcome
