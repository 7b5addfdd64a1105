"""Probe: a client reading a topic that is deleted (and recreated) under it, on an embedded Tansu broker.

librdkafka 2.5 and later (confluent-kafka 2.16.1 here) fetch by topic id (Fetch v13+) and apply the leader
hints of Fetch v16 answers (KIP-951). Tansu 0.6.0 answers a Fetch of a topic id it does not know (the topic
was deleted) with UNKNOWN_TOPIC_OR_PARTITION, a *zero* topic id, a current-leader hint (leader 0, epoch 0)
per partition and an empty node-endpoints list. librdkafka turns the hint into a metadata update for a topic
it can name neither by id (zero) nor by name (none at v13+) and looks the name NULL up in its metadata cache:
``strcmp(NULL, ...)`` in ``rd_kafka_metadata_update_op`` - the whole process dies of SIGSEGV. Apache Kafka
answers UNKNOWN_TOPIC_ID with the asked id instead, which librdkafka only warns about.

Each round starts its own broker, creates a 2-partition topic with OLD records per partition, starts the
client in a child process (so that its death is seen, not suffered), waits until it is reading, deletes the
topic, optionally recreates it and writes NEW records, and reports how the child ended.

Clients (``--client``):
  assign     a Consumer assign()-ed to both partitions at offset 0 (the replication consumer's shape)
  subscribe  a Consumer subscribe()-d in a group
  paused     assign, then pause() both partitions before the deletion and resume() them after the
             recreation (what a task could do if it knew in advance)
  admin      an AdminClient describing the topic and listing its offsets every 50 ms
  producer   a Producer writing to the topic every 20 ms
  batches    the batch path's fetcher (kafka-python Fetch, connect_core.kafka.batch_fetcher)

Usage: python tests/probes/deleted_topic_fetch.py [--client C] [--delete-only] [--rounds N] [--settle S]
           [--conf key=value ...] [--path DIR]   (``--path``: another confluent-kafka, e.g. a pip --target dir)
Prints one line per round: the child's exit (``SIGSEGV`` or the code), the seconds from the deletion to its
end, and what it read of the new incarnation.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TOPIC = "probe-events"
OLD = 50
NEW = 30
CHILD_DEADLINE_S = 30.0


# -- the child: one client, commands on stdin (DELETED, RECREATED), events on stdout -------------------


def _emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def _stdin_lines() -> Any:
    """Non-blocking reader of the parent's commands."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(sys.stdin, selectors.EVENT_READ)

    def read() -> str | None:
        if sel.select(0):
            line = sys.stdin.readline()
            return line.strip() if line else "EOF"
        return None

    return read


def _child_consumer(bootstrap: str, mode: str, conf: dict[str, str]) -> None:
    import confluent_kafka
    from confluent_kafka import Consumer, TopicPartition

    settings: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": f"probe-{mode}-{os.getpid()}",
        "enable.auto.commit": False,
        "allow.auto.create.topics": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        **conf,
    }
    consumer = Consumer(settings)
    parts = [TopicPartition(TOPIC, p, 0) for p in range(2)]
    if mode == "subscribe":
        consumer.subscribe([TOPIC])
    else:
        consumer.assign(parts)
    _emit("started", version=confluent_kafka.version(), librdkafka=confluent_kafka.libversion()[0])
    read = _stdin_lines()
    old = new = 0
    errors: list[str] = []
    ready = False
    deadline = time.monotonic() + CHILD_DEADLINE_S * 2
    while time.monotonic() < deadline:
        command = read()
        if command == "RECREATED" and mode == "paused":
            consumer.resume(parts)
            _emit("resumed")
        elif command == "EOF":
            break
        msg = consumer.poll(0.2)
        if msg is None:
            continue
        if msg.error() is not None:
            text = str(msg.error())
            if not errors or errors[-1] != text:
                errors.append(text)
            continue
        value = msg.value() or b""
        if value.startswith(b"new"):
            new += 1
        else:
            old += 1
        if not ready and old >= 2 * OLD:
            ready = True
            if mode == "paused":
                consumer.pause(parts)
            _emit("ready")
        if new >= 2 * NEW:
            break
    _emit("done", old=old, new=new, errors=errors[-5:])
    consumer.close()


def _child_admin(bootstrap: str, conf: dict[str, str]) -> None:
    from confluent_kafka import TopicCollection, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap, "allow.auto.create.topics": False, **conf})
    _emit("started")
    _emit("ready")
    read = _stdin_lines()
    errors: list[str] = []
    ids: list[str] = []
    deadline = time.monotonic() + CHILD_DEADLINE_S
    while time.monotonic() < deadline and read() != "EOF":
        try:
            d = admin.describe_topics(TopicCollection([TOPIC]))[TOPIC].result(5)
            tid = str(d.topic_id)
            if not ids or ids[-1] != tid:
                ids.append(tid)
            admin.list_offsets({TopicPartition(TOPIC, p): OffsetSpec.latest() for p in range(2)})
        except Exception as e:
            text = type(e).__name__ + ": " + str(e)[:120]
            if not errors or errors[-1] != text:
                errors.append(text)
        time.sleep(0.05)
    _emit("done", topic_ids=ids, errors=errors[-5:])


def _child_producer(bootstrap: str, conf: dict[str, str]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "allow.auto.create.topics": False, "linger.ms": 0, **conf})
    _emit("started")
    errors: list[str] = []
    sent = [0]

    def report(err: Any, _msg: Any) -> None:
        if err is None:
            sent[0] += 1
        elif not errors or errors[-1] != str(err):
            errors.append(str(err))

    producer.produce(TOPIC, b"probe", partition=0, on_delivery=report)
    producer.flush(10)
    _emit("ready")
    read = _stdin_lines()
    deadline = time.monotonic() + CHILD_DEADLINE_S
    while time.monotonic() < deadline and read() != "EOF":
        try:
            producer.produce(TOPIC, b"probe", partition=0, on_delivery=report)
        except Exception as e:  # BufferError or unknown topic
            if not errors or errors[-1] != str(e):
                errors.append(str(e))
        producer.poll(0.02)
    producer.flush(5)
    _emit("done", delivered=sent[0], errors=errors[-5:])


def _child_batches(bootstrap: str) -> None:
    from connect_core.kafka.batch_fetcher import READ_COMMITTED, BatchFetcher

    fetcher = BatchFetcher(bootstrap, {}, "probe-batches", isolation_level=READ_COMMITTED)
    positions = {(TOPIC, p): 0 for p in range(2)}
    _emit("started")
    read = _stdin_lines()
    old = new = 0
    errors: list[str] = []
    gone = False  # the topic was reported unknown: what is read next is the new incarnation
    ready = False
    deadline = time.monotonic() + CHILD_DEADLINE_S * 2
    while time.monotonic() < deadline and read() != "EOF":
        try:
            answers = fetcher.fetch(positions, 500)
        except Exception as e:  # an error answer (the deleted topic) raises
            text = type(e).__name__ + ": " + str(e)[:160]
            if not errors or errors[-1] != text:
                errors.append(text)
            if "UnknownTopic" in text and not gone:
                gone = True
                positions = {(TOPIC, p): 0 for p in range(2)}  # a new incarnation starts at 0
            time.sleep(0.1)
            continue
        for key, answer in answers.items():
            for batch in answer.batches:
                positions[key] = batch.next_offset
                count = batch.next_offset - batch.base_offset
                if gone:
                    new += count
                else:
                    old += count
        if not ready and old >= 2 * OLD:
            ready = True
            _emit("ready")
        if new >= 2 * NEW:
            break
    _emit("done", old=old, new=new, errors=errors[-5:])
    fetcher.close()


def child_main(bootstrap: str, mode: str, conf: dict[str, str]) -> None:
    if mode in ("assign", "subscribe", "paused"):
        _child_consumer(bootstrap, mode, conf)
    elif mode == "admin":
        _child_admin(bootstrap, conf)
    elif mode == "producer":
        _child_producer(bootstrap, conf)
    elif mode == "batches":
        _child_batches(bootstrap)
    else:
        raise SystemExit(f"unknown client {mode!r}")


# -- the parent: broker, topic, child, deletion ----------------------------------------------------------


def _records(tag: str, count: int) -> list[dict[str, Any]]:
    return [{"value": f"{tag}-{p}-{i}".encode(), "partition": p} for i in range(count) for p in range(2)]


def one_round(args: argparse.Namespace) -> dict[str, Any]:
    from embedded_kafka.cluster import EmbeddedKafkaCluster

    cluster = EmbeddedKafkaCluster("probe").start()
    env = dict(os.environ)
    if args.path:
        env["PYTHONPATH"] = os.pathsep.join([args.path, str(ROOT)])
    else:
        env["PYTHONPATH"] = str(ROOT)
    child: subprocess.Popen[str] | None = None
    events: list[dict[str, Any]] = []
    try:
        cluster.create_topic(TOPIC, 2)
        cluster.produce(TOPIC, _records("old", OLD))
        command = [sys.executable, __file__, "--child", args.client, "--bootstrap", cluster.bootstrap_servers]
        for kv in args.conf:
            command += ["--conf", kv]
        child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        assert child.stdin is not None and child.stdout is not None

        def next_event() -> dict[str, Any] | None:
            assert child is not None and child.stdout is not None
            line = child.stdout.readline()
            if not line:
                return None
            event = json.loads(line)
            events.append(event)
            return dict(event)

        while (event := next_event()) is not None and event["event"] != "ready":
            pass
        if event is None:
            return _outcome(child, events, None)
        time.sleep(args.settle)  # e.g. a paused consumer's fetch in flight is answered first
        deleted_at = time.monotonic()
        cluster.delete_topic(TOPIC)
        child.stdin.write("DELETED\n")
        child.stdin.flush()
        if not args.delete_only:
            try:
                cluster.create_topic(TOPIC, 2)
                cluster.produce(TOPIC, _records("new", NEW))
            except Exception as e:  # e.g. the client under test re-created the topic in between
                events.append({"event": "parent-error", "error": f"{type(e).__name__}: {e}"})
            if child.poll() is None:
                child.stdin.write("RECREATED\n")
                child.stdin.flush()
        else:
            try:  # the client goes on meeting the deleted topic for 5 s
                child.wait(5.0)
            except subprocess.TimeoutExpired:
                child.stdin.write("EOF\n")
                child.stdin.flush()
        try:
            child.wait(CHILD_DEADLINE_S * 3)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        while next_event() is not None:
            pass
        return _outcome(child, events, deleted_at)
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        cluster.stop()


def _outcome(child: subprocess.Popen[str], events: list[dict[str, Any]], deleted_at: float | None) -> dict[str, Any]:
    rc = child.returncode
    end = "SIGSEGV" if rc == -signal.SIGSEGV else ("SIGABRT" if rc == -signal.SIGABRT else str(rc))
    done = next((e for e in events if e["event"] == "done"), None)
    failed = [e["error"] for e in events if e["event"] == "parent-error"]
    started = next((e for e in events if e["event"] == "started"), {})
    stderr = child.stderr.read() if child.stderr is not None else ""
    return {
        "exit": end,
        "after_delete_s": None if deleted_at is None else round(time.monotonic() - deleted_at, 1),
        "lib": {k: v for k, v in started.items() if k != "event"},
        "result": None if done is None else {k: v for k, v in done.items() if k != "event"},
        "stderr_tail": stderr.strip().splitlines()[-3:],
        **({"recreate_failed": failed} if failed else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--client", default="assign")
    parser.add_argument("--delete-only", action="store_true")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--settle", type=float, default=0.0, help="seconds between ready and the deletion")
    parser.add_argument("--conf", action="append", default=[])
    parser.add_argument("--path", default="")
    parser.add_argument("--child", default="")
    parser.add_argument("--bootstrap", default="")
    args = parser.parse_args()
    conf = dict(kv.split("=", 1) for kv in args.conf)
    if args.child:
        child_main(args.bootstrap, args.child, conf)
        return
    for n in range(args.rounds):
        print(json.dumps({"round": n + 1, "client": args.client, **one_round(args)}), flush=True)


if __name__ == "__main__":
    main()
