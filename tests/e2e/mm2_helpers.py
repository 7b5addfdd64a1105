"""Helpers for e2e tests that run ``mm2`` as a subprocess against embedded clusters."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from confluent_kafka import Message

from embedded_kafka import KafkaCluster, wait_for
from tests.oracle.committed_reader import PartitionLog, read_topic_committed

T = TypeVar("T")
#: A wait with a measure of progress ends at this many times its timeout, moving or not.
PROGRESS_CEILING = 3

#: What the single-broker test bed forces: every topic mm2 creates has one replica. Not a timing
#: shortcut: ``mm2 run`` in e2e tests otherwise runs with the product's defaults, and each test sets
#: only the setting it is about (one of the groups below, or its own).
TEST_BED_SETTINGS: dict[str, str] = {
    "replication.factor": "1",
    "checkpoints.topic.replication.factor": "1",
    "heartbeats.topic.replication.factor": "1",
    "offset-syncs.topic.replication.factor": "1",
    "offset.storage.replication.factor": "1",
    "status.storage.replication.factor": "1",
    "config.storage.replication.factor": "1",
}

#: A test about checkpoints sees them within seconds (default: every 60 s).
CHECKPOINTS: dict[str, str] = {"emit.checkpoints.interval.seconds": "1"}
#: A test about consumer-group offset sync (default: off; every 60 s when on).
GROUP_SYNC: dict[str, str] = {"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"}
#: A test that creates topics after mm2 started (default: found within 10 minutes).
NEW_TOPICS: dict[str, str] = {"refresh.topics.interval.seconds": "2"}
#: A test that creates consumer groups after mm2 started (default: found within 10 minutes).
NEW_GROUPS: dict[str, str] = {"refresh.groups.interval.seconds": "2"}
#: A test that changes a source topic's configs while mm2 runs (default: synced every 10 minutes).
CONFIG_SYNC: dict[str, str] = {"sync.topic.configs.interval.seconds": "2"}


def mm2_properties(clusters: Mapping[str, KafkaCluster], flows: list[str], **extra: str) -> dict[str, str]:
    """mm2.properties for ``clusters`` (alias -> cluster) with ``flows`` ("A->B") enabled, the product's
    defaults otherwise (``extra``: what the test is about)."""
    props = {"clusters": ", ".join(clusters)}
    for alias, cluster in clusters.items():
        props[f"{alias}.bootstrap.servers"] = cluster.bootstrap_servers
        # Tansu holds every group join for half the session timeout (broker-notes.md), Kafka does not:
        # without these the herders' rebalances alone take 5 s more on the test bed than on Kafka.
        props[f"{alias}.session.timeout.ms"] = "6000"
        props[f"{alias}.heartbeat.interval.ms"] = "1000"
    props.update(TEST_BED_SETTINGS)
    props["emit.heartbeats.enabled"] = "false"  # herders only for the flows under test ...
    for flow in flows:
        props[f"{flow}.enabled"] = "true"
        props[f"{flow}.emit.heartbeats.enabled"] = "true"  # ... and they do emit heartbeats
    props.update(extra)
    return props


def write_properties(path: Path, props: Mapping[str, str]) -> Path:
    path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
    return path


class Mm2Process:
    """``python -m mirror run ...`` with its output in a file (read it on failure)."""

    def __init__(
        self, config: Path, *args: str, log_dir: Path, name: str = "mm2", env: Mapping[str, str] | None = None
    ) -> None:
        self.log_path = log_dir / f"{name}.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mirror", "run", str(config), *args],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM and wait; returns the exit code (kills and fails loudly on a hang)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"mm2 did not stop within {timeout}s:\n{self.output()[-4000:]}") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def close(self) -> None:
        self.kill()
        self._log.close()


def eventually(
    predicate: Callable[[], T],
    timeout: float,
    what: str,
    proc: Mm2Process | None = None,
    interval: float = 0.5,
    progress: Callable[[], object] | None = None,
    explain: Callable[[], str] | None = None,
) -> T:
    """wait_for that shows the mm2 log's warnings and tail when it times out (or when mm2 died).

    ``interval``: seconds between looks; longer for a look that reads whole topics (CPU the others need).
    ``progress``: a measure of the work the wait is for (records copied so far...): while it keeps changing,
    ``timeout`` counts from its last change, so a starved machine that is slow but moving does not fail the
    wait, while one that stopped moving fails after ``timeout`` as before; at most ``PROGRESS_CEILING`` times
    ``timeout`` in all. A look that raises KeyError, AssertionError or TimeoutError (a topic read that ran out
    of time) counts as "not yet": only ``timeout`` decides that the wait failed. ``explain``: what the state
    is when the wait failed (which records differ...), for the failure message: a CI log is all there is.
    """

    def check() -> T:
        if proc is not None and not proc.alive():
            raise AssertionError(
                f"mm2 exited ({proc.proc.returncode}) while waiting for {what}:\n{proc.output()[-4000:]}"
            )
        try:
            return predicate()
        except (KeyError, AssertionError):
            return None  # type: ignore[return-value]
        except TimeoutError:  # a look that could not read a topic to its end in time (a busy machine): not yet
            return None  # type: ignore[return-value]

    start = time.monotonic()
    window_start, seen = start, progress() if progress is not None else None
    while True:
        window = min(timeout, start + PROGRESS_CEILING * timeout - window_start)
        try:
            return wait_for(check, max(window, interval), interval, what)
        except TimeoutError:
            now = time.monotonic()
            if progress is not None and now - start < PROGRESS_CEILING * timeout:
                current = progress()
                if current != seen:  # moving, only slowly: another window from now
                    window_start, seen = now, current
                    continue
            tail = _log_summary(proc.output()) if proc is not None else ""
            if explain is not None:
                tail = f"{_explained(explain)}\n{tail}"
            why = ""
            if progress is not None and now - start >= PROGRESS_CEILING * timeout:
                why = f" (still moving at {PROGRESS_CEILING} times its {timeout:.0f}s)"
            elif progress is not None:
                why = f" (no progress in the last {timeout:.0f}s)"
            raise AssertionError(f"timed out after {now - start:.0f}s waiting for {what}{why}\n{tail}") from None


def _explained(explain: Callable[[], str]) -> str:
    try:
        return explain()
    except Exception as e:  # the explanation is a courtesy: the timeout is the failure
        return f"(no explanation: {e!r})"


def _log_summary(output: str, warnings: int = 20) -> str:
    """The log's last warnings and errors (they may have scrolled out of the tail), then its tail."""
    flagged = [line for line in output.splitlines() if " WARNING " in line or " ERROR " in line][-warnings:]
    head = "last warnings and errors of the mm2 log:\n" + "\n".join(flagged) + "\n" if flagged else ""
    return f"{head}mm2 log tail:\n{output[-4000:]}"


_JOINED = re.compile(r"Joined group at generation (\d+) and got assignment: .* revoked=\[\]/\[\] delay=0ms")


def group_settled(procs: list[Mm2Process]) -> int | None:
    """The generation every node's herder last joined, when that join revoked nothing and scheduled no
    follow-up rebalance and no node has started another since; else None (read from the nodes' logs).

    Tests that stop one node of a group wait for this first: on Tansu 0.6.0 a leader that leaves while the
    group is re-forming stays its leader and the others wait for minutes (docs/testing.md, Tansu faults),
    a fault no real broker has and no member can mend; a rolling restart on Kafka moves node by node too."""
    generations = set()
    for proc in procs:
        events = [
            ln for ln in proc.output().splitlines() if "Joined group at generation" in ln or "Rebalance started" in ln
        ]
        match = _JOINED.search(events[-1]) if events else None
        if match is None:
            return None
        generations.add(int(match.group(1)))
    return generations.pop() if len(generations) == 1 else None


def record_view(msg: Message) -> tuple[Any, ...]:
    """What must be identical between a source record and its replica."""
    return (msg.key(), msg.value(), tuple(msg.headers() or ()), msg.timestamp()[1])


def partitions_view(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[Any, ...]]]:
    return {p: [record_view(m) for m in msgs] for p, msgs in cluster.read_all(topic).items()}


def committed_view(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[Any, ...]]]:
    """:func:`partitions_view` as a read_committed consumer sees the topic, decided by the suite's oracle."""
    return {p: committed_records(log) for p, log in read_topic_committed(cluster, topic).items()}


def committed_records(log: PartitionLog) -> list[tuple[Any, ...]]:
    """The records a read_committed consumer sees in one partition, as :func:`record_view` shows a record."""
    return [(r.key, r.value, r.headers, r.timestamp) for r in log.committed]


def mirrored_identically(
    source: KafkaCluster, topic: str, target: KafkaCluster, remote: str, at_least: int | None = None
) -> bool:
    """True when the remote topic holds exactly the source partitions' records (same order).

    The target is read as a read_committed consumer sees it, by the suite's oracle: backfill and
    exactly-once write it in transactions, and a plain read (Tansu's read_committed too) would count an
    aborted copy as present, hiding a gap behind it or showing a duplicate that no consumer sees.
    """
    if remote not in target.topic_names():
        return False
    src = partitions_view(source, topic)
    if at_least is not None and sum(len(v) for v in src.values()) < at_least:
        return False
    # A cheap look first (tests call this in a loop while the copy runs): what a plain read shows includes every
    # committed record, so fewer records there than on the source means not yet, without decoding anything.
    plain = target.read_all(remote)
    if sum(len(v) for v in plain.values()) < sum(len(v) for v in src.values()):
        return False
    return src == committed_view(target, remote)


def mirrored_at_least_once(
    source: KafkaCluster, topic: str, target: KafkaCluster, remote: str, at_least: int | None = None
) -> bool:
    """True when each remote partition holds every source record in order, repeats allowed (no gap): the
    promise where a copier was abandoned after copying past its last committed position."""
    src = partitions_view(source, topic)
    if remote not in target.topic_names() or (at_least is not None and sum(map(len, src.values())) < at_least):
        return False
    got = committed_view(target, remote)
    for p, want in src.items():
        found = 0
        for record in got.get(p, []):
            if found < len(want) and record == want[found]:
                found += 1
        if found < len(want):
            return False
    return True


def eventually_mirrored(
    source: KafkaCluster,
    topic: str,
    target: KafkaCluster,
    remote: str,
    proc: Mm2Process,
    at_least: int | None = None,
    *,
    at_least_once: bool = False,
    timeout: float = 120,
) -> None:
    """Wait until the remote topic mirrors the source identically (``at_least_once``: no gap, repeats allowed);
    a failure says how they differ (:func:`mirror_difference`) beside the mm2 log."""
    check = mirrored_at_least_once if at_least_once else mirrored_identically
    eventually(
        lambda: check(source, topic, target, remote, at_least=at_least),
        timeout,
        f"{remote} mirrored {'at least once' if at_least_once else 'identically'} (at least {at_least or 0} records)",
        proc,
        explain=lambda: mirror_difference(source, topic, target, remote),
    )


def mirror_difference(source: KafkaCluster, topic: str, target: KafkaCluster, remote: str) -> str:
    """Per partition, how the remote topic differs from the source: the explanation of a failed wait for
    :func:`mirrored_identically` (a gap, a duplicate, an open transaction hiding the rest...)."""
    src = partitions_view(source, topic)
    logs = read_topic_committed(target, remote)
    lines = [f"{remote} on {target.name} against {topic} on {source.name}:"]
    for p in sorted(set(src) | set(logs)):
        lines.append(f"  partition {p}: {_partition_difference(src.get(p, []), logs.get(p))}")
    return "\n".join(lines)


def _partition_difference(want: list[tuple[Any, ...]], log: PartitionLog | None) -> str:
    got = committed_records(log) if log is not None else []
    values = [r[1] for r in got]
    first = next((i for i, (x, y) in enumerate(zip(want, got, strict=False)) if x != y), min(len(want), len(got)))
    out = f"source {len(want)}, target committed {len(got)}"
    if log is not None:
        out += f" (aborted {log.aborted}, open {log.open}, undecided {len(log.undecided)}"
        out += f", last stable offset {log.last_stable_offset}, high watermark {log.high_watermark})"
    out += f", {len(values) - len(set(values))} repeated values, first difference at index {first}"
    if first < min(len(want), len(got)):
        out += f": source {want[first][:2]!r}, target {got[first][:2]!r}"
    return out


def mm2_command(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``mm2 ARGS`` to completion: wide, plain output (no colour, no terminal) and warnings only."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "MM2_LOG_LEVEL": "WARNING"}
    return subprocess.run(
        [sys.executable, "-m", "mirror", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def mm2_status(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirror", "status", str(config), *extra], capture_output=True, text=True, timeout=90
    )


def status_json(config: Path) -> dict[str, Any]:
    run = mm2_status(config, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    data: dict[str, Any] = json.loads(run.stdout)
    return data


def group_offsets(cluster: KafkaCluster, group: str, topic: str, partitions: int) -> dict[int, int]:
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka import TopicPartition as TP

    request = [ConsumerGroupTopicPartitions(group, [TP(topic, p) for p in range(partitions)])]
    admin = cluster.admin()  # keep the client alive until the future completes
    result = admin.list_consumer_group_offsets(request)[group].result(timeout=10)
    return {tp.partition: tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def commit_group(cluster: KafkaCluster, group: str, offsets: Mapping[tuple[str, int], int]) -> None:
    from confluent_kafka import TopicPartition as TP

    consumer = cluster.consumer(**{"group.id": group})
    try:
        consumer.commit(offsets=[TP(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def now_ms() -> int:
    return int(time.time() * 1000)


def published_through(cluster: KafkaCluster, mappings_topic: str, topic: str) -> dict[int, int]:
    """Per partition of ``topic``: the source offset after the newest copy the flow's offset mappings
    (on ``cluster``, where the offset-syncs topic is) say the target acknowledged."""
    from mirror.connectors.offset_mapping_index import OffsetMappingIndex

    if mappings_topic not in cluster.topic_names():
        return {}
    index = OffsetMappingIndex()
    for msgs in cluster.read_all(mappings_topic).values():
        for m in msgs:
            index.on_record(m.key(), m.value())
    return {tp.partition: index.copied_through(tp) for tp in index.topic_partitions() if tp.topic == topic}
