"""``mm2 backfill`` beside what operators do: its lease on the topics survives ``mm2 run`` stopping, starting
and restarting; a killed job's lease expires or is released, and a re-run resumes from what committed.

Every case ends with the target read by the read_committed test reader (it applies the transaction
markers itself): per partition exactly the source's records, in order, each once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from connect_core.kafka.client_logging import RDKAFKA_LOG
from embedded_kafka import KafkaCluster
from embedded_kafka.tail import TopicWatch
from mirror.driver.backfill_leases import Lease, decode_lease, leases_topic
from mirror.driver.driver import make_config
from mirror.jobs.backfill.flow import committed_offsets, resolve_flow
from mirror.jobs.backfill.handoff import ConfigTopicView, excludes, read_config_topic
from mirror.jobs.backfill.plan import assigned_partitions
from mirror.jobs.spark import DAEMON_MODULE
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_command, mm2_properties, write_properties
from tests.oracle.committed_reader import read_topic_committed

PARTITIONS = 3
TOPIC, REMOTE = "big", "A.big"


def produce(cluster: KafkaCluster, topic: str, first: int, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 20, "logger": RDKAFKA_LOG})
    for i in range(first, first + count):
        while True:
            try:
                producer.produce(topic, f"{topic}-{i}".encode(), f"k{i}".encode(), partition=i % PARTITIONS)
                break
            except BufferError:  # the local queue is full: let the broker take some first
                producer.poll(0.1)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


class CommittedDuplicate(Exception):
    """Not an AssertionError: a wait on ``exactly_once`` fails at once instead of polling on."""


def batches_between(cluster: KafkaCluster, topic: str, partition: int, low: int, high: int) -> str:
    """The log's batches in [low, high]: who wrote them, transactional or not (to explain a duplicate)."""
    from tests.oracle.committed_reader import leaders, raw_batches

    batches, _ = raw_batches(leaders(cluster, topic)[partition], topic, partition, 30.0)
    lines = []
    for batch in batches:
        if batch.next_offset >= low and batch.base_offset <= high:
            records = list(batch)
            lines.append(
                f"{batch.base_offset}-{batch.next_offset - 1} pid={batch.producer_id} "
                f"txn={batch.is_transactional} control={batch.is_control_batch} "
                f"{records[0].value if records and not batch.is_control_batch else ''!r}..."
                f"{records[-1].value if records and not batch.is_control_batch else ''!r}"
            )
    return "\n".join(lines)


#: why the last ``exactly_once`` said no (shown when a wait for it times out)
LAST_DIFFERENCE: list[str] = [""]


def source_values(source: KafkaCluster, topic: str) -> dict[int, list[bytes | None]]:
    """The source's values per partition (read once per wait: the source is no longer written to)."""
    return {p: [m.value() for m in msgs] for p, msgs in source.read_all(topic, timeout=180).items()}


def exactly_once(
    source: KafkaCluster,
    target: KafkaCluster,
    topic: str,
    remote: str,
    total: int,
    src: dict[int, list[bytes | None]] | None = None,
) -> bool:
    """The target's committed records are the source's, per partition, in order, each once (and all ``total``).

    ``src``: the source's values when the caller already read them (a source no longer written to).
    """
    if remote not in target.topic_names():
        return False
    if src is None:
        src = source_values(source, topic)
    if sum(len(v) for v in src.values()) < total:
        return False
    logs = read_topic_committed(target, remote)
    for p, values in src.items():
        log = logs.get(p)
        got = [r.value for r in log.committed] if log is not None else []
        if len(set(got)) != len(got) and log is not None:
            seen: dict[bytes | None, int] = {}
            dup = next(r for r in log.committed if r.value in seen or seen.setdefault(r.value, r.offset) is None)
            markers = [m for m in log.markers if seen[dup.value] - 5 <= m[0] <= dup.offset + 5][:20]
            raise CommittedDuplicate(
                f"{remote}-{p}: a committed duplicate: {dup.value!r} at offsets "
                f"{seen[dup.value]} and {dup.offset}; markers near: {markers}; "
                f"{len(got)} committed of {len(values)} source records; batches:\n"
                + batches_between(target, remote, p, seen[dup.value] - 200, dup.offset + 200)
            )
        if got != values:
            first = next(
                (i for i, (x, y) in enumerate(zip(got, values, strict=False)) if x != y), min(len(got), len(values))
            )
            LAST_DIFFERENCE[0] = (
                f"{remote}-{p}: {len(got)} committed of {len(values)}, first difference at {first}, "
                f"{log.open if log else 0} in open transactions, {log.aborted if log else 0} aborted"
            )
            return False
    return True


def until_exactly_once(
    source: KafkaCluster,
    target: KafkaCluster,
    topic: str,
    remote: str,
    total: int,
    what: str,
    proc: Mm2Process | None = None,
    timeout: float = 240,
) -> None:
    """Waits on the cheap sign first (the target's end offsets reach ``total``), then on the full check.

    The source is no longer written to: it is read once; the target (up to a million records, parsed in
    Python) is read every few seconds, not twice a second, so the copy it waits for gets the CPU.
    """
    with TopicWatch(target, remote, from_end=True) as ends:  # one client for the whole wait
        eventually(
            lambda: (tail := ends.tail()) is not None and sum(tail.end_offsets().values()) >= total,
            timeout,
            f"{what}: {total} records on the target",
            proc,
        )
    src = source_values(source, topic)
    try:
        eventually(lambda: exactly_once(source, target, topic, remote, total, src), timeout, what, proc, interval=3.0)
    except AssertionError as e:
        raise AssertionError(f"{LAST_DIFFERENCE[0]}\n{e}") from None


class Progress:
    """How far the target topic's log has grown: one kept consumer asking for watermarks (milliseconds a
    look, where reading the offsets topic takes a second or more). Counts aborted records too: a trigger only."""

    def __init__(self, cluster: KafkaCluster, topic: str, partitions: int) -> None:
        from confluent_kafka import Consumer, TopicPartition

        self.consumer = Consumer(
            {
                "bootstrap.servers": cluster.bootstrap_servers,
                "group.id": "story-progress",
                "allow.auto.create.topics": False,
            }
        )
        self.partitions = [TopicPartition(topic, p) for p in range(partitions)]

    def __call__(self) -> int:
        return sum(self.consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in self.partitions)

    def close(self) -> None:
        self.consumer.close()


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (Spark's Python daemon leaves the job's process group, so killpg misses it)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            parent = _parent(int(entry))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def spark_python_processes(job: int) -> list[int]:
    """The job's Spark Python daemon and the workers it forked (they share its command line: ``python -m``
    PySpark's daemon module, or the one mm2 gives local executors)."""
    daemons = (b"-m\0pyspark.daemon\0", f"-m\0{DAEMON_MODULE}\0".encode())
    return [pid for pid in descendants(job) if any(daemon in _cmdline(pid) for daemon in daemons)]


def spark_python_workers(job: int) -> list[int]:
    """Python workers of the job's Spark: processes below it forked by the pyspark daemon."""
    pyspark = set(spark_python_processes(job))
    return [pid for pid in pyspark if _parent(pid) in pyspark]  # forks share the daemon's command line


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


class Backfill:
    """``mm2 backfill`` in its own process group (the Spark JVM and Python workers with it), output to files."""

    def __init__(self, config: Path, tmp: Path, *args: str, name: str = "backfill") -> None:
        self.out, self.err = tmp / f"{name}.out", tmp / f"{name}.err"
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "MM2_LOG_LEVEL": "INFO"}
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mirror",
                    "backfill",
                    str(config),
                    "--source",
                    "A",
                    "--target",
                    "B",
                    "--topics",
                    TOPIC,
                    "--master",
                    "local[2]",
                    "--json",
                    *args,
                ],
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )

    def pause_copy(self) -> None:
        """SIGSTOP the Spark Python processes once the copy runs: the job holds its lease, its copy waits
        (the job's own process keeps renewing the lease and answering; a pause there could outlast a read)."""
        workers = eventually(lambda: spark_python_workers(self.proc.pid), 180, "the job's Spark tasks copying")
        self._paused = spark_python_processes(self.proc.pid) or workers
        for pid in self._paused:
            os.kill(pid, signal.SIGSTOP)

    def resume_copy(self) -> None:
        for pid in getattr(self, "_paused", []):
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        """SIGKILL to the job and everything it started (a lost driver host)."""
        below = descendants(self.proc.pid)
        for pid in [self.proc.pid, *below]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(30)

    def finish(self, timeout: float = 300) -> dict[str, Any]:
        code = self.proc.wait(timeout)
        assert code == 0, self.err.read_text()[-4000:]
        doc: dict[str, Any] = json.loads(self.out.read_text())
        return doc

    def close(self) -> None:
        self.resume_copy()
        if self.proc.poll() is None:
            self.kill()


class Leases:
    """The flow's latest backfill lease, for a wait that polls it: one kept client reads the leases topic on
    from where the last look ended (:func:`lease_of` reads it whole through new clients: one look)."""

    def __init__(self, b: KafkaCluster) -> None:
        self._watch = TopicWatch(b, leases_topic("A"))
        self._lease: Lease | None = None

    def __call__(self) -> Lease | None:
        tail = self._watch.tail()
        if tail is not None:
            for m in tail.read_to_end():
                self._lease = decode_lease(m.key(), m.value())
        return self._lease

    def close(self) -> None:
        self._watch.close()


def lease_of(b: KafkaCluster) -> Lease | None:
    if leases_topic("A") not in b.topic_names():
        return None
    lease = None
    for msgs in b.read_all(leases_topic("A")).values():
        for m in msgs:
            lease = decode_lease(m.key(), m.value())
    return lease


def config_view(props: dict[str, str]) -> ConfigTopicView:
    flow = resolve_flow(make_config(props), "A", "B")
    from connect_core.storage.internal_topics import store_client_props

    return read_config_topic(flow, store_client_props(flow.worker_props))


def tasks_hold(view: ConfigTopicView, topic: str) -> bool:
    return any(
        t == topic
        for props in view.tasks.values()
        for t, _ in assigned_partitions(props.get("task.assigned.partitions"))
    )


def committed_positions(props: dict[str, str], b: KafkaCluster) -> dict[tuple[str, int], int]:
    return committed_offsets(resolve_flow(make_config(props), "A", "B"), b.topic_names())


def run_the_flow_then_stop(a: KafkaCluster, b: KafkaCluster, config: Path, tmp_path: Path) -> None:
    """``mm2 run`` mirrors the first 300 records of TOPIC, then stops cleanly: a flow that ran."""
    before = Mm2Process(config, log_dir=tmp_path, name="mm2-before")
    try:
        until_exactly_once(a, b, TOPIC, REMOTE, 300, "the flow ran", before, timeout=120)
        assert before.terminate(60) == 0, before.output()[-3000:]
    finally:
        before.close()


def flow_props(a: KafkaCluster, b: KafkaCluster, **extra: str) -> dict[str, str]:
    return mm2_properties({"A": a, "B": b}, ["A->B"], topics=f"{TOPIC}, other", **extra)


#: For the tests that kill a job half-way: its transactions commit every second (a third of this), so the
#: kill lands after some commits and well before the last
SHORT_TRANSACTIONS = {"B.producer.transaction.timeout.ms": "3000"}
#: A job that must be caught copying (killed half-way, or paused) copies under a throughput cap: about 15
#: bytes a record, so these backlogs take 7-15 s to copy at the least, seconds past the job's first commit,
#: however fast the machine. The volume is not what these tests are about (600,000 records each cost a
#: minute of CPU to write, copy and read back); the seconds the copy runs for are.
SLOW_COPY = ("--throughput-limit", "60K")
KILLED_BACKLOG = 60_000
PAUSED_BACKLOG = 30_000
#: A backlog a job copies to its end while no mirror runs: one chunk, as 30,000 records were (not what it shows)
STOPPED_BACKLOG = 6_000


@pytest.mark.spark
def test_backfill_while_mm2_run_is_stopped_then_mm2_run_continues_exactly(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    for topic in (TOPIC, "other"):
        a.create_topic(topic, PARTITIONS)
    produce(a, TOPIC, 0, 300)
    props = flow_props(a, b)
    config = write_properties(tmp_path / "mm2.properties", props)
    first = Mm2Process(config, log_dir=tmp_path, name="mm2-first")
    try:
        until_exactly_once(a, b, TOPIC, REMOTE, 300, "the flow ran", first, timeout=120)
        assert first.terminate(60) == 0, first.output()[-3000:]
    finally:
        first.close()

    produce(a, TOPIC, 300, STOPPED_BACKLOG)  # the backlog piled up while the mirror was stopped
    run = mm2_command(
        "backfill",
        str(config),
        "--source",
        "A",
        "--target",
        "B",
        "--topics",
        TOPIC,
        "--master",
        "local[2]",
        "--json",
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert summary["handed_off_from_live"] is False
    assert summary["totals"]["records_copied"] == STOPPED_BACKLOG, "from the position the stopped mirror flushed"
    assert lease_of(b) is None, "released at the end"
    assert exactly_once(a, b, TOPIC, REMOTE, STOPPED_BACKLOG + 300)

    produce(a, TOPIC, 1_000_000, 300)
    second = Mm2Process(config, log_dir=tmp_path, name="mm2-second")
    try:
        until_exactly_once(
            a,
            b,
            TOPIC,
            REMOTE,
            STOPPED_BACKLOG + 600,
            "mm2 run continues from the backfill's committed end",
            second,
            timeout=180,
        )
        assert second.terminate(60) == 0, second.output()[-3000:]
    finally:
        second.close()


@pytest.mark.spark
def test_mm2_run_started_then_restarted_during_a_backfill_leaves_the_leased_topic_alone(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    """One paused job, two ``mm2 run`` processes: the one started during the job leaves the leased topic to it,
    the one that replaces it (a new leader, from the config topic) keeps the exclusion, and live tailing owns
    the topic again, exactly, once the job is done."""
    a, b = two_clusters
    for topic in (TOPIC, "other"):
        a.create_topic(topic, PARTITIONS)
    produce(a, TOPIC, 0, 300)
    produce(a, "other", 0, 300)
    props = flow_props(a, b)
    config = write_properties(tmp_path / "mm2.properties", props)
    run_the_flow_then_stop(a, b, config, tmp_path)
    # the backlog piles up while the mirror is stopped (a running one would copy it before the job starts)
    produce(a, TOPIC, 300, PAUSED_BACKLOG)
    job = Backfill(config, tmp_path, *SLOW_COPY)
    mm2: Mm2Process | None = None
    restarted: Mm2Process | None = None

    def taken() -> bool:
        view = config_view(props)
        return excludes(view.connector_config, {TOPIC}) and bool(view.tasks) and not tasks_hold(view, TOPIC)

    try:
        job.pause_copy()  # mm2 run starts and restarts while the job holds the topic and copies
        assert lease_of(b) is not None
        mm2 = Mm2Process(config, log_dir=tmp_path, name="mm2-first")
        produce(a, "other", 300, 300)
        until_exactly_once(a, b, "other", "A.other", 600, "mm2 run mirrors the other topic", mm2, timeout=180)
        assert taken(), "mm2 run started during the job leaves the leased topic alone"
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
        restarted = Mm2Process(config, log_dir=tmp_path, name="mm2-restarted")
        produce(a, "other", 600, 300)
        until_exactly_once(a, b, "other", "A.other", 900, "the restarted mm2 run mirrors", restarted, timeout=180)
        assert taken(), "the new leader derived the same exclusion"
        job.resume_copy()
        summary = job.finish()
        assert summary["totals"]["records_copied"] == PAUSED_BACKLOG, "the job copied it all (a duplicate shows below)"
        produce(a, TOPIC, 1_000_000, 300)
        until_exactly_once(
            a,
            b,
            TOPIC,
            REMOTE,
            PAUSED_BACKLOG + 600,
            "live tailing owns the topic after the job, exactly",
            restarted,
            timeout=180,
        )
        assert tasks_hold(config_view(props), TOPIC), "the topic is back in the tasks' assignments"
        assert restarted.terminate(60) == 0, restarted.output()[-3000:]
    finally:
        job.close()
        if mm2 is not None:
            mm2.close()
        if restarted is not None:
            restarted.close()


@pytest.mark.spark
def test_a_killed_backfills_lease_expires_and_live_tailing_takes_over_exactly(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    for topic in (TOPIC, "other"):
        a.create_topic(topic, PARTITIONS)
    produce(a, TOPIC, 0, 300)
    props = flow_props(a, b, **SHORT_TRANSACTIONS)
    config = write_properties(tmp_path / "mm2.properties", props)
    run_the_flow_then_stop(a, b, config, tmp_path)
    produce(a, TOPIC, 300, KILLED_BACKLOG)  # piled up while the mirror was stopped
    job: Backfill | None = None
    mm2: Mm2Process | None = None
    try:
        progress = Progress(b, REMOTE, PARTITIONS)
        job = Backfill(config, tmp_path, "--lease-ttl", "6", *SLOW_COPY)  # the test is about expiry: a short lease
        leases = Leases(b)
        try:
            eventually(lambda: leases() is not None, 180, "the job's lease")
        finally:
            leases.close()
        mm2 = Mm2Process(config, log_dir=tmp_path)  # started during the job: it must wait for the lease
        try:  # killed once it copied a third of the backlog (several transactions of a second each)
            eventually(lambda: progress() >= 300 + KILLED_BACKLOG // 3, 240, "the job copies", mm2)
        finally:
            progress.close()
        job.kill()  # its lease stays behind until it expires (on a starved machine it may have expired already)
        eventually(lambda: "expired" in mm2.output(), 120, "mm2 run sees the lease expire", mm2)
        produce(a, TOPIC, 1_000_000, 300)
        until_exactly_once(
            a,
            b,
            TOPIC,
            REMOTE,
            KILLED_BACKLOG + 600,
            "live tailing takes over from what the job committed, exactly",
            mm2,
            timeout=240,
        )
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        if job is not None:
            job.close()
        if mm2 is not None:
            mm2.close()


@pytest.mark.spark
@pytest.mark.timeout(600)  # three jobs (three Spark start-ups) and an mm2 run: minutes beside the suite
def test_a_rerun_after_a_killed_backfill_resumes_from_what_committed_and_release_frees_a_lease(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    for topic in (TOPIC, "other"):
        a.create_topic(topic, PARTITIONS)
    produce(a, TOPIC, 0, KILLED_BACKLOG)
    props = flow_props(a, b, **SHORT_TRANSACTIONS)
    config = write_properties(tmp_path / "mm2.properties", props)

    progress = Progress(b, REMOTE, PARTITIONS)
    first = Backfill(config, tmp_path, *SLOW_COPY, name="first")
    try:  # killed once it copied a third of the backlog (several transactions of a second each)
        eventually(lambda: REMOTE in b.topic_names() and progress() >= KILLED_BACKLOG // 3, 240, "the first job copies")
        first.kill()
    finally:
        first.close()
        progress.close()
    held = lease_of(b)
    assert held is not None, "killed while it held its lease, half-way"
    done = committed_positions(props, b)
    assert 0 < sum(position + 1 for position in done.values()) < KILLED_BACKLOG

    rerun = Backfill(config, tmp_path, name="rerun")  # takes over the killed job's lease, fencing its transactions
    try:
        summary = rerun.finish()
    finally:
        rerun.close()
    starts = {p["partition"]: p["from"] for p in summary["partitions"]}
    for (topic, p), position in done.items():
        assert topic == TOPIC and starts.get(p, position + 1) >= position + 1
    assert f"backfill lease of job {held.job_id}" in rerun.err.read_text(), "the re-run took the lease over"
    # resumed from the committed chunks: only what the killed job had not committed is copied again
    assert summary["totals"]["records_planned"] == KILLED_BACKLOG - sum(position + 1 for position in done.values())
    assert lease_of(b) is None and exactly_once(a, b, TOPIC, REMOTE, KILLED_BACKLOG)

    nothing = mm2_command("backfill", str(config), "--source", "A", "--target", "B", "--release")
    assert nothing.returncode == 0 and "No backfill lease on A->B" in nothing.stdout, nothing.stderr

    # a job killed before it copied anything: --release fences it and frees the topic for mm2 run at once
    produce(a, TOPIC, KILLED_BACKLOG, 300)
    third = Backfill(config, tmp_path, "--lease-ttl", "600", name="third")
    leases = Leases(b)
    try:
        eventually(lambda: leases() is not None, 180, "the third job's lease")
        third.kill()
    finally:
        third.close()
        leases.close()
    released = mm2_command("backfill", str(config), "--source", "A", "--target", "B", "--release")
    assert released.returncode == 0, released.stderr
    assert released.stdout.startswith("Released the backfill lease of job ") and "(big)" in released.stdout
    assert lease_of(b) is None
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        until_exactly_once(
            a, b, TOPIC, REMOTE, KILLED_BACKLOG + 300, "mm2 run takes the topic at once", mm2, timeout=180
        )
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        mm2.close()
