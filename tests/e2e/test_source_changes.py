"""``mm2 run`` with stock settings while the source changes under the mirror (issue 38).

mm2 is stopped while the topic is recreated, and the new incarnation holds more records than the old
position (the case an offset comparison alone misses). Default: every record of the new incarnation
reaches the same remote topic in order after the old ones, the event is logged once per partition,
counted in ``mm2_source_changes_total`` and shown by ``mm2 status``. ``fail``: the task stops with one
clear error, ``mm2 status`` shows why, and nothing on the target changes. Records deleted on the source
before they were mirrored are counted exactly, said once and alerted by the shipped rule.

Recreated while ``mm2 run`` runs, the running task finds the new topic id and handles it the same way. That
case runs on the batch path: on the test broker a librdkafka consumer reading a topic that is deleted dies of
SIGSEGV (docs/testing.md, ``tests/probes/deleted_topic_fetch.py``), so the record path (stock settings) is
shown with mm2 stopped, which is also what a supervised mm2 goes through after such a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from embedded_kafka import KafkaCluster, free_port
from embedded_kafka.cluster import EmbeddedKafkaCluster
from mirror.jobs.translate.checkpoints import LatestCheckpoints
from tests.e2e.metrics_harness import PrometheusServer, prometheus_binary, scrape, total, wait_until
from tests.e2e.mm2_helpers import (
    CHECKPOINTS,
    Mm2Process,
    commit_group,
    eventually,
    group_offsets,
    mm2_command,
    mm2_properties,
    status_json,
    write_properties,
)

STARTUP_S = 120.0
OLD = 20  # records per partition before the recreation
NEW = 35  # records per partition of the new incarnation: more than the old position
OLD_GROUP_AT = 12  # a group's position in the old incarnation
NEW_GROUP_AT = 30  # a group's position in the new incarnation (beyond the old one's end)


def records(tag: str, count: int) -> list[dict[str, object]]:
    return [
        {"key": f"k{i % 3}".encode(), "value": f"{tag}-{p}-{i}".encode(), "partition": p}
        for i in range(count)
        for p in range(2)
    ]


def values(cluster: KafkaCluster, topic: str) -> dict[int, list[bytes | None]]:
    return {p: [m.value() for m in msgs] for p, msgs in cluster.read_all(topic).items()}


def expected(tag: str, count: int, p: int) -> list[bytes | None]:
    return [f"{tag}-{p}-{i}".encode() for i in range(count)]


def mirrored(b: KafkaCluster, want: dict[int, list[bytes | None]]) -> bool:
    return "A.events" in b.topic_names() and values(b, "A.events") == want


def verify_json(config: Path) -> str:
    run = mm2_command("verify", str(config), "--source", "A", "--target", "B", "--topics", "events", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def checkpointed(b: KafkaCluster, group: str) -> bool:
    if "A.checkpoints.internal" not in b.topic_names():
        return False
    latest = LatestCheckpoints()
    for msgs in b.read_all("A.checkpoints.internal").values():
        for m in msgs:
            latest.on_record(m.key(), m.value(), m.timestamp()[1])
    return {tp.partition for tp in latest.groups.get(group, {})} == {0, 1}


def first_run(a: KafkaCluster, b: KafkaCluster, config: Path, tmp_path: Path, old_group: str | None = None) -> None:
    """Mirror the first incarnation (``old_group`` consumed part of it and is checkpointed), stop mm2 (its
    offsets are flushed at stop), recreate the topic (which deletes the group's offsets on the source)."""
    a.create_topic("events", 2)
    a.produce("events", records("old", OLD))
    if old_group is not None:
        commit_group(a, old_group, {("events", p): OLD_GROUP_AT for p in range(2)})
        # checkpoints every second in this setup run only (the default is a minute): what is under test is
        # the second run, with stock settings
        config = write_properties(
            tmp_path / "first.properties",
            {**dict(line.split(" = ", 1) for line in config.read_text().splitlines()), **CHECKPOINTS},
        )
    mm2 = Mm2Process(config, log_dir=tmp_path, name="first")
    try:
        eventually(
            lambda: mirrored(b, {p: expected("old", OLD, p) for p in range(2)}),
            STARTUP_S,
            "the first incarnation on B",
            mm2,
        )
        if old_group is not None:
            eventually(lambda: checkpointed(b, old_group), STARTUP_S, "checkpoints of the old group", mm2, 2.0)
        assert mm2.terminate() == 0
    finally:
        mm2.close()
    a.delete_topic("events")
    a.create_topic("events", 2)
    a.produce("events", records("new", NEW))


def test_a_topic_recreated_while_mm2_was_stopped_is_mirrored_from_its_start_and_said(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    prometheus_binary()  # fail first, with the install hint, if the server is missing
    a, b = two_clusters
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics="events"))
    first_run(a, b, config, tmp_path, old_group="app-old")
    commit_group(a, "app-new", {("events", p): NEW_GROUP_AT for p in range(2)})  # consumed the new incarnation

    port = free_port()
    mm2 = Mm2Process(config, "--metrics-port", str(port), log_dir=tmp_path, name="second")
    try:
        with PrometheusServer(tmp_path / "prometheus", free_port(), [f"127.0.0.1:{port}"]) as prom:
            want = {p: expected("old", OLD, p) + expected("new", NEW, p) for p in range(2)}
            eventually(lambda: mirrored(b, want), STARTUP_S, "the new incarnation after the old one on B", mm2)
            samples = eventually(lambda: scrape(port), 30, "metrics", mm2)
            for p in range(2):
                assert (
                    total(
                        samples,
                        "mm2_source_changes_total",
                        topic="A.events",
                        partition=str(p),
                        reason="topic-recreated",
                    )
                    == 1
                )

            # the shipped alert rule, unchanged, in a real Prometheus scraping this mm2
            # (Prometheus may evaluate the rule first with one partition's event scraped: the value then follows)
            def firing() -> list[tuple[str, str, str]]:
                return [
                    (a["labels"]["topic"], a["labels"]["reason"], a["value"])
                    for a in prom.alerts()
                    if a["labels"].get("alertname") == "MM2SourceChanged" and a["state"] == "firing"
                ]

            wait_until(
                lambda: firing() == [("A.events", "topic-recreated", "2e+00")],
                60,
                "MM2SourceChanged firing for both partitions' events",
            )
        assert mm2.terminate() == 0
        log = mm2.output()
    finally:
        mm2.close()
    lines = [line for line in log.splitlines() if "source topic events was deleted and recreated" in line]
    assert len(lines) == 2, lines  # once per partition
    for p in range(2):
        assert (
            sum(
                f"partition {p}: the old incarnation was mirrored through offset {OLD - 1} ({OLD} records)" in line
                for line in lines
            )
            == 1
        )
    assert all("ERROR" in line for line in lines)

    flow = status_json(config)["flows"][0]
    changes = {(c["topic"], c["partition"]): c for c in flow["source_changes"]}
    assert set(changes) == {("events", 0), ("events", 1)}
    assert all(
        c["reason"] == "topic-recreated" and f"mirrored through offset {OLD - 1}" in c["detail"]
        for c in changes.values()
    )
    mirrored_to = {p["partition"]: p["mirrored_offset"] for p in flow["partitions"] if p["topic"] == "events"}
    assert mirrored_to == {0: NEW, 1: NEW}  # positions of the new incarnation, nothing lagging
    # mm2 verify: the new incarnation is equal on the target, and the recreation is said as a known gap
    verify = json.loads(verify_json(config))
    assert verify["equal"] is True, verify
    assert [(p["partition"], p["compared"], bool(p["source_recreated"])) for p in verify["partitions"]] == [
        (0, NEW, True),
        (1, NEW, True),
    ]

    # failover: the new incarnation's group is placed exactly, the one left on the old incarnation is reported
    run = mm2_command(
        "translate-offsets", str(config), "--source", "A", "--target", "B", "--apply", "--json", "--master", "local[1]"
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {
        (g["group"], p["partition"]): (p["source_offset"], p["target_offset"], p["reread"], p["status"], p["applied"])
        for g in json.loads(run.stdout)["groups"]
        for p in g["partitions"]
    }
    assert rows == {
        **{("app-new", p): (NEW_GROUP_AT, OLD + NEW_GROUP_AT, 0, "ok", True) for p in range(2)},
        **{("app-old", p): (OLD_GROUP_AT, None, None, "old-incarnation", False) for p in range(2)},
    }
    assert group_offsets(b, "app-new", "A.events", 2) == {p: OLD + NEW_GROUP_AT for p in range(2)}
    assert group_offsets(b, "app-old", "A.events", 2) == {}  # nothing written for it


def test_the_fail_choice_stops_the_task_with_one_clear_error_and_changes_nothing_on_the_target(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    config = write_properties(
        tmp_path / "mm2.properties",
        mm2_properties({"A": a, "B": b}, ["A->B"], topics="events", **{"A->B.source.topic.recreated.action": "fail"}),
    )
    first_run(a, b, config, tmp_path)
    before = values(b, "A.events")

    mm2 = Mm2Process(config, log_dir=tmp_path, name="second")
    try:

        def failed_task() -> dict[str, object] | None:
            flow = status_json(config)["flows"][0]
            for connector in flow["connectors"]:
                if connector["name"] == "MirrorSourceConnector":
                    for task in connector["tasks"]:
                        if task["state"] == "FAILED":
                            return dict(task)
            return None

        task = eventually(failed_task, STARTUP_S, "the source task FAILED", mm2, interval=2.0)
        assert "Source topic events was deleted and recreated" in str(task["trace"])
        assert "source.topic.recreated.action=fail" in str(task["trace"])
        assert values(b, "A.events") == before  # nothing on the target changed
        assert mm2.alive()  # the flow's task failed, not mm2
    finally:
        mm2.terminate()
        mm2.close()
    flow = status_json(config)["flows"][0]
    assert flow["source_changes"] == []  # nothing was handled: the operator decides
    assert json.dumps(flow).count("deleted and recreated") >= 1


def test_records_deleted_before_they_were_mirrored_are_counted_exactly_and_alerted(
    durable_cluster_factory: Callable[[list[str]], list[KafkaCluster]],
    cluster_factory: Callable[[list[str]], list[KafkaCluster]],
    tmp_path: Path,
) -> None:
    """The source on durable storage, where removing the oldest batch objects moves a log start (Tansu has
    no retention): records written while mm2 was stopped are deleted before it could mirror them."""
    prometheus_binary()
    (a,) = durable_cluster_factory(["A"])
    (b,) = cluster_factory(["B"])
    assert isinstance(a, EmbeddedKafkaCluster)
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics="events"))
    a.create_topic("events", 2)
    a.produce("events", records("v", 10))
    mm2 = Mm2Process(config, log_dir=tmp_path, name="first")
    try:
        eventually(lambda: mirrored(b, {p: expected("v", 10, p) for p in range(2)}), STARTUP_S, "10 records", mm2)
        assert mm2.terminate() == 0
    finally:
        mm2.close()
    a.produce("events", [{"value": f"v-{p}-{i}".encode(), "partition": p} for i in range(10, 20) for p in range(2)])
    for p in range(2):  # offsets 10..14 of each partition go before mm2 is back: 5 records never mirrored
        assert a.delete_records_below("events", p, 15) == 15

    port = free_port()
    mm2 = Mm2Process(config, "--metrics-port", str(port), log_dir=tmp_path, name="second")
    try:
        with PrometheusServer(tmp_path / "prometheus", free_port(), [f"127.0.0.1:{port}"]) as prom:
            want = {p: expected("v", 10, p) + [f"v-{p}-{i}".encode() for i in range(15, 20)] for p in range(2)}
            eventually(lambda: mirrored(b, want), STARTUP_S, "the records still on the source", mm2)

            def lost_counted() -> bool:
                samples = scrape(port)
                return all(
                    total(samples, "mm2_source_records_lost_total", topic="A.events", partition=str(p)) == 5
                    for p in range(2)
                )

            eventually(lost_counted, 60, "5 lost records per partition in /metrics", mm2)
            firing = wait_until(
                lambda: [
                    a
                    for a in prom.alerts()
                    if a["labels"].get("alertname") == "MM2SourceChanged" and a["state"] == "firing"
                ],
                60,
                "MM2SourceChanged firing",
            )
            assert [(a["labels"]["topic"], a["labels"]["reason"]) for a in firing] == [("A.events", "records-lost")]
        assert mm2.terminate() == 0
        log = mm2.output()
    finally:
        mm2.close()
    lines = [line for line in log.splitlines() if "were deleted on the source" in line]
    assert len(lines) == 2 and all(
        "5 records of source topic events partition" in line and "(offsets 10 to 14)" in line and "ERROR" in line
        for line in lines
    ), lines
    changes = status_json(config)["flows"][0]["source_changes"]
    assert [(c["topic"], c["partition"], c["reason"]) for c in changes] == [
        ("events", 0, "records-lost"),
        ("events", 1, "records-lost"),
    ]
    assert all(
        c["detail"].startswith("5 records deleted on the source before they were mirrored (last: offsets 10 to 14)")
        for c in changes
    )
    verify = json.loads(verify_json(config))  # equal where records exist, the deleted ones a known gap
    assert verify["equal"] is True, verify
    assert [(p["partition"], p["compared"], p["lost_on_source"]) for p in verify["partitions"]] == [
        (0, 5, 5),
        (1, 5, 5),
    ]


RUNNING_OLD = 200  # records per partition before the recreation (mm2 running)
RUNNING_NEW = 260  # of the new incarnation: more than the old position (an offset comparison misses it)
RUNNING_OLD_GROUP_AT = 120
RUNNING_NEW_GROUP_AT = 230


def test_a_topic_recreated_while_mm2_runs_is_found_mirrored_from_its_start_and_said(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    """The source topic deleted and recreated under a running ``mm2 run``: the running task finds the new topic
    id, says it once per partition, and mirrors the new incarnation from its start after the old records.

    Stock settings: the batch path (``batch.copy.enabled``, on by default). On the test broker a librdkafka
    consumer reading a topic that is deleted dies of SIGSEGV (docs/testing.md,
    ``tests/probes/deleted_topic_fetch.py``); the batch path's fetcher does not, and the detection is the same
    task code for both paths. Checkpoints every second, so that the
    group left on the old incarnation is known to the target before the deletion.
    """
    a, b = two_clusters
    props = mm2_properties({"A": a, "B": b}, ["A->B"], topics="events")
    config = write_properties(tmp_path / "mm2.properties", {**props, **CHECKPOINTS})
    a.create_topic("events", 2)
    a.produce("events", records("old", RUNNING_OLD))
    commit_group(a, "app-old", {("events", p): RUNNING_OLD_GROUP_AT for p in range(2)})
    port = free_port()
    mm2 = Mm2Process(config, "--metrics-port", str(port), log_dir=tmp_path, name="running")
    try:
        old = {p: expected("old", RUNNING_OLD, p) for p in range(2)}
        eventually(lambda: mirrored(b, old), STARTUP_S, "the first incarnation on B", mm2, 1.0)
        eventually(lambda: checkpointed(b, "app-old"), STARTUP_S, "checkpoints of the old group", mm2, 2.0)
        a.delete_topic("events")
        a.create_topic("events", 2)
        a.produce("events", records("new", RUNNING_NEW))
        want = {p: old[p] + expected("new", RUNNING_NEW, p) for p in range(2)}

        def on_target() -> int:
            return sum(len(v) for v in values(b, "A.events").values())

        eventually(
            lambda: mirrored(b, want), STARTUP_S, "the new incarnation after the old one on B", mm2, 2.0, on_target
        )
        commit_group(a, "app-new", {("events", p): RUNNING_NEW_GROUP_AT for p in range(2)})
        samples = eventually(lambda: scrape(port), 30, "metrics", mm2)
        for p in range(2):
            counted = total(
                samples, "mm2_source_changes_total", topic="A.events", partition=str(p), reason="topic-recreated"
            )
            assert counted == 1, (p, counted)
        assert mm2.alive()
        assert mm2.terminate() == 0
        log = mm2.output()
    finally:
        mm2.close()
    assert values(b, "A.events") == want  # nothing copied twice, nothing out of order
    lines = [line for line in log.splitlines() if "source topic events was deleted and recreated" in line]
    assert len(lines) == 2 and all("ERROR" in line for line in lines), lines  # once per partition
    for p in range(2):
        through = f"partition {p}: the old incarnation was mirrored through offset {RUNNING_OLD - 1}"
        assert sum(through in line for line in lines) == 1, lines
    starts = [line for line in log.splitlines() if "replicating" in line and "topic-partitions" in line]
    assert len(starts) == 1, starts  # found by the running task, not by a restart of it

    flow = status_json(config)["flows"][0]
    changes = {(c["topic"], c["partition"]): c for c in flow["source_changes"]}
    assert set(changes) == {("events", 0), ("events", 1)}
    assert all(c["reason"] == "topic-recreated" for c in changes.values())

    run = mm2_command(
        "translate-offsets", str(config), "--source", "A", "--target", "B", "--apply", "--json", "--master", "local[1]"
    )
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {
        (g["group"], p["partition"]): (p["source_offset"], p["target_offset"], p["status"], p["applied"])
        for g in json.loads(run.stdout)["groups"]
        for p in g["partitions"]
    }
    assert rows == {
        **{("app-new", p): (RUNNING_NEW_GROUP_AT, RUNNING_OLD + RUNNING_NEW_GROUP_AT, "ok", True) for p in range(2)},
        **{("app-old", p): (RUNNING_OLD_GROUP_AT, None, "old-incarnation", False) for p in range(2)},
    }
    assert group_offsets(b, "app-new", "A.events", 2) == {p: RUNNING_OLD + RUNNING_NEW_GROUP_AT for p in range(2)}
    assert group_offsets(b, "app-old", "A.events", 2) == {}
