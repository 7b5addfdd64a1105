"""``mm2 run`` through broker crashes: the target broker, then the source broker, SIGKILLed and restarted
while a producer keeps writing to the source. Nothing the source holds may be missing on the target
(in particular nothing the producer got acknowledged), each partition keeps its order, and the
at-least-once duplicates are counted and printed. A third case runs the flow exactly-once
(``B.exactly.once.source.support = enabled``): what a read_committed consumer of B reads holds no
duplicate at all (the suite's reader applies the transaction markers, since Tansu shows aborted records).

The clusters are embedded Tansu brokers on durable storage (S3 on a local moto server), so a restarted
broker has its topics, records and group offsets back, as a real one does. ``mm2 run`` runs with the
product's defaults: offsets are flushed every 60 s, so the task restart a long target outage causes
replays what was copied since the last flush (Kafka's Connect does the same). Each broker is killed
between two bursts of the producer, with nothing in flight to it: Tansu's S3 engine can lose a batch it
acknowledged just before a SIGKILL, which Kafka never does and which must not be counted against mm2.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from embedded_kafka import EmbeddedKafkaCluster, KafkaCluster, free_port, unique_name
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_properties, write_properties
from tests.e2e.sequenced_producer import SequencedProducer, TailReader, compare, decode, sequences
from tests.oracle.committed_reader import read_topic_committed

Factory = Callable[[Sequence[str]], list[KafkaCluster]]
# alone: its durable brokers each talk to a local S3 server at raised priority; three such tests beside the rest
# starved the suite on 2 cores (this wave: heavy tests past their timeouts)
pytestmark = [pytest.mark.timeout(900), pytest.mark.alone]

STARTUP_S = 90.0
#: After a restart with the defaults the flow replays its whole topic (no offsets committed yet) through
#: Tansu's S3 engine, whose fetches slow down with the number of batches: 60-90 s on a busy 2-core
#: machine, twice that when the machine itself is slowed. A bound, not an expectation.
RECOVERY_S = 240.0
PARTITIONS = 3
#: The producer writes a burst of BURST records to each partition every BURST_INTERVAL_S, one batch each:
#: 10 records a second. The durable engine's fetches, and so the S3 server's CPU, grow with the batches a
#: partition holds (a fetch lists them all): half as many bursts as the producer's default.
BURST = 10
BURST_INTERVAL_S = 1.0
#: How long a broker stays down, counted in records the producer writes to each partition meanwhile (10
#: a second when the machine keeps up): about 8 s, longer than the herder's session timeout on the test
#: bed (6 s), so mm2's connections, in-flight requests and group membership all run into the outage.
OUTAGE_RECORDS = 80
OFFSETS_TOPIC = "mm2-offsets.A.internal"
EXACTLY_ONCE = "exactly-once"
RECORD_PATH = "record-path"


def committed_sequences(cluster: KafkaCluster, topic: str) -> dict[int, list[int]]:
    """Per partition, the sequence numbers a read_committed consumer of ``topic`` sees, in order."""
    return {
        partition: [decode(record.value)[1] for record in log.committed]
        for partition, log in read_topic_committed(cluster, topic, timeout_s=RECOVERY_S).items()
    }


def _missing_on_b(source: dict[int, list[int]], tail: TailReader, b: KafkaCluster, remote: str) -> str:
    """What the tail consumer lacks, and whether B holds it behind an open transaction (the test's reader
    applies the markers itself, so it reads past a stuck last stable offset) or not at all."""
    lost = compare(source, tail.seqs).lost
    lines = [f"tail consumer lacks {sum(map(len, lost.values()))}: " + str({p: s[:10] for p, s in lost.items()})]
    logs = read_topic_committed(b, remote, timeout_s=30.0)
    for partition, log in sorted(logs.items()):
        held = {decode(r.value)[1] for r in log.committed}
        absent = [s for s in lost.get(partition, []) if s not in held]
        lines.append(
            f"B-{partition}: high watermark {log.high_watermark}, last stable offset {log.last_stable_offset}, "
            f"committed {len(log.committed)}, open {log.open}, undecided {len(log.undecided)}, aborted {log.aborted}; "
            f"of the lacking, not committed on B: {absent[:10]}"
        )
    return "\n".join(lines)


def _quiesce(producer: SequencedProducer) -> None:
    """Pause the producer until every record it wrote so far is acknowledged (or failed)."""
    producer.pause()
    eventually(lambda: producer.outstanding() == 0, RECOVERY_S, "every record so far acknowledged")


def _shifted(marks: dict[int, int], by: int) -> dict[int, int]:
    return {p: mark + by for p, mark in marks.items()}


def _produced_through(producer: SequencedProducer, marks: dict[int, int]) -> bool:
    produced = producer.next_seqs()
    return all(produced[p] >= mark for p, mark in marks.items())


def _acked_through(producer: SequencedProducer, marks: dict[int, int]) -> bool:
    acked = producer.acked_through()
    return all(acked[p] >= mark for p, mark in marks.items())


def _source_offsets_committed(target: KafkaCluster) -> bool:
    """True once the flow's offset store on the target holds a MirrorSourceConnector offset."""
    if OFFSETS_TOPIC not in target.topic_names():
        return False
    try:  # 25 partitions through the S3 engine: on a starved machine a read can take long, then it is "not yet"
        stored = target.read_all(OFFSETS_TOPIC, STARTUP_S, consumer_overrides={"fetch.wait.max.ms": 1000})
    except TimeoutError:
        return False
    return any(b"MirrorSourceConnector" in (m.key() or b"") for msgs in stored.values() for m in msgs)


@pytest.mark.parametrize(
    "flush_ms",
    [
        # the product's defaults: no offset flush before the crash, the restarted task replays everything
        pytest.param(None, id="defaults"),
        # the setting this case is about: offsets committed before the crash must be behind what B had
        # acknowledged, or the restarted task skips records (the classic replicator loss)
        pytest.param("2000", id="offsets-committed-before-the-crash"),
        # exactly-once (KIP-618): B, read as read_committed, holds every record once despite both crashes
        pytest.param(EXACTLY_ONCE, id="exactly-once"),
        # the record path (batch.copy.enabled = false; the other cases copy batches, the default): librdkafka's
        # consumer and producer must reconnect and carry on through both crashes; offsets flushed as above
        pytest.param(RECORD_PATH, id="record-path"),
    ],
)
def test_target_then_source_broker_crash_loses_nothing(
    durable_cluster_factory: Factory, tmp_path: Path, flush_ms: str | None
) -> None:
    a, b = durable_cluster_factory(["A", "B"])
    assert isinstance(a, EmbeddedKafkaCluster) and isinstance(b, EmbeddedKafkaCluster)
    topic = unique_name("events")
    remote = f"A.{topic}"
    a.create_topic(topic, PARTITIONS)
    exactly_once = flush_ms == EXACTLY_ONCE
    if exactly_once:  # Apache's dedicated mode fences zombies over the internal REST API (KIP-710)
        settings = {
            "B.exactly.once.source.support": "enabled",
            "dedicated.mode.enable.internal.rest": "true",
            "listeners": f"http://127.0.0.1:{free_port()}",
        }
    elif flush_ms == RECORD_PATH:
        settings = {"A->B.batch.copy.enabled": "false", "B.offset.flush.interval.ms": "2000"}
    else:
        settings = {} if flush_ms is None else {"B.offset.flush.interval.ms": flush_ms}  # worker settings: per target
    config = write_properties(
        tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics=topic, **settings)
    )
    producer = SequencedProducer(a, topic, PARTITIONS, burst=BURST, interval=BURST_INTERVAL_S)
    producer.start()
    mm2 = Mm2Process(config, log_dir=tmp_path)
    started = time.monotonic()

    def phase(what: str) -> None:  # shown with the failure: where the time went
        print(f"{time.monotonic() - started:6.1f} s  {what}", flush=True)

    tail: TailReader | None = None
    try:
        try:
            eventually(lambda: remote in b.topic_names(), STARTUP_S, f"{remote} on B", mm2)
            tail = TailReader(b, remote, PARTITIONS)

            def copied(marks: dict[int, int], what: str, timeout: float = RECOVERY_S) -> None:
                assert tail is not None
                # a starved machine copies slowly: the wait runs while records keep arriving on B
                eventually(
                    lambda: tail.reached(marks),
                    timeout,
                    what,
                    mm2,
                    progress=lambda: sum(len(s) for s in tail.seqs.values()),
                )

            copied(dict.fromkeys(range(PARTITIONS), 0), "the first records on B", STARTUP_S)
            if flush_ms is not None and not exactly_once:  # exactly-once commits offsets with every transaction
                eventually(lambda: _source_offsets_committed(b), STARTUP_S, "source offsets committed on B", mm2)

            # The target crashes: mm2's producer, its internal topics and its group coordinator are gone.
            # Between two bursts, once B holds everything so far (see the source's crash below for why).
            _quiesce(producer)
            copied(producer.acked_through(), "B holding every record so far")
            phase("B killed")
            b.kill()
            producer.resume()
            outage = _shifted(producer.next_seqs(), OUTAGE_RECORDS)
            eventually(lambda: _acked_through(producer, outage), RECOVERY_S, "A taking records while B is down")
            b.restart()
            phase("B restarted")
            copied(producer.next_seqs(), "records written after B's restart, on B")

            # The source crashes: mm2's consumer and its offset-sync producer lose it; so does our producer.
            # Between two bursts: Tansu's S3 engine loses, now and then, the batch it acknowledged just
            # before a SIGKILL (probed without mm2: 10 acknowledged records of 1,430 gone after 6 kills;
            # Kafka acknowledges acks=all only once a record is safe), which would be counted against mm2.
            # What is written during the outage still waits in the producer and goes through the restart.
            _quiesce(producer)
            phase("A killed")
            a.kill()
            producer.resume()
            outage = _shifted(producer.next_seqs(), OUTAGE_RECORDS)
            eventually(lambda: _produced_through(producer, outage), RECOVERY_S, "the producer queueing while A is down")
            a.restart()
            phase("A restarted")
            eventually(lambda: _acked_through(producer, outage), RECOVERY_S, "the producer resuming after A's restart")
            copied(producer.next_seqs(), "records written after A's restart, on B")
            phase("records written after A's restart on B")
            assert mm2.alive(), mm2.output()[-4000:]
        finally:
            producer.finish()

        phase("producer stopped")
        source = sequences(a, topic, RECOVERY_S)
        phase("A read")
        for partition, acked in producer.acked.items():
            missing = acked - set(source[partition])
            assert not missing, f"A lost acknowledged records of partition {partition}: {sorted(missing)[:20]}"
        assert tail is not None
        eventually(
            lambda: not compare(source, tail.drain()).lost,
            RECOVERY_S,
            "every record of A on B",
            mm2,
            explain=lambda: _missing_on_b(source, tail, b, remote),
        )
        phase("every record of A on B")
        report = compare(source, sequences(b, remote, RECOVERY_S))  # a fresh read of everything B holds now
        phase("B read")
        print(
            f"\nbroker restarts, A->B: {report.summary()}; producer: "
            f"{sum(map(len, producer.acked.values()))} acknowledged, "
            f"{sum(map(len, producer.failed.values()))} unacknowledged, fatal errors: {producer.fatal_errors}"
        )
        assert not report.lost, report.summary()
        assert not report.out_of_order, f"order broken on B: {report.out_of_order}"
        if exactly_once:  # what a read_committed consumer of B sees (Tansu shows aborted records)
            committed = compare(source, committed_sequences(b, remote))
            print(f"read_committed: {committed.summary()}")
            assert not committed.lost and not committed.out_of_order, committed.summary()
            assert not any(committed.duplicates.values()), committed.summary()
        # a broker restart is routine: no stack trace in the operator's log
        assert "Traceback" not in mm2.output(), mm2.output()[-6000:]
    finally:
        if tail is not None:
            tail.close()
        mm2.terminate()
        mm2.close()
