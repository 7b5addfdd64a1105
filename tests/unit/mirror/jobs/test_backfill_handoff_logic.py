"""The hand-off's pure parts: does a stored config exclude the topics, and task configs without them."""

from __future__ import annotations

from mirror.client.filters import TOPICS_EXCLUDE_ALIAS_CONFIG, TOPICS_EXCLUDE_CONFIG
from mirror.connectors.config import TASK_TOPIC_PARTITIONS
from mirror.driver.backfill_leases import Lease, with_lease
from mirror.jobs.backfill.handoff import excludes, without_partitions


def test_a_config_excludes_the_topics_only_when_each_is_named_exactly() -> None:
    lease = Lease("A", "B", "j", ("orders", "a.b"), 1)
    assert excludes(with_lease({}, lease), {"orders", "a.b"})
    assert excludes({TOPICS_EXCLUDE_CONFIG: "x, orders"}, {"orders"})
    assert not excludes({TOPICS_EXCLUDE_CONFIG: "x, orders.*"}, {"orders"}), "only the lease's exact entry counts"
    assert excludes({TOPICS_EXCLUDE_ALIAS_CONFIG: "orders"}, {"orders"})
    assert not excludes({}, {"orders"}) and not excludes(None, {"orders"})


def test_task_configs_lose_exactly_the_partitions_of_the_topics() -> None:
    tasks = {
        0: {TASK_TOPIC_PARTITIONS: "orders-0,other-1,orders-2", "x": "1"},
        1: {TASK_TOPIC_PARTITIONS: "orders-1"},
        2: {TASK_TOPIC_PARTITIONS: "orders-x-3,other-0"},
    }
    out = without_partitions(tasks, {"orders"})
    assert out == {
        0: {TASK_TOPIC_PARTITIONS: "other-1", "x": "1"},
        1: {TASK_TOPIC_PARTITIONS: ""},
        2: {TASK_TOPIC_PARTITIONS: "orders-x-3,other-0"},
    }
