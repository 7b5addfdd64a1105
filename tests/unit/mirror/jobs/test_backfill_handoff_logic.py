"""The hand-off's pure parts: does a stored config exclude the topics, and task configs without them."""

from __future__ import annotations

from connect_core.storage.formats import (
    commit_key,
    connector_key,
    encode_connector_config,
    encode_task_commit,
    encode_task_config,
    task_key,
)
from mirror.client.filters import TOPICS_EXCLUDE_ALIAS_CONFIG, TOPICS_EXCLUDE_CONFIG
from mirror.connectors.config import TASK_TOPIC_PARTITIONS
from mirror.driver.backfill_leases import Lease, with_lease
from mirror.jobs.backfill.copy import SOURCE_CONNECTOR
from mirror.jobs.backfill.handoff import ConfigTopicView, excludes, without_partitions


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


def _fold(records: list[tuple[str, bytes, int]], topics: set[str]) -> ConfigTopicView:
    view = ConfigTopicView(topics=frozenset(topics))
    for key, value, ts in records:
        view.apply(key.encode(), value, ts)
    return view


def _commit(tasks: dict[int, str], ts: int) -> list[tuple[str, bytes, int]]:
    out = [
        (task_key(SOURCE_CONNECTOR, t), encode_task_config({TASK_TOPIC_PARTITIONS: parts}), ts)
        for t, parts in tasks.items()
    ]
    return [*out, (commit_key(SOURCE_CONNECTOR), encode_task_commit(len(tasks)), ts)]


def test_the_tasks_that_ran_the_topics_are_known_from_history_even_after_the_exclusion() -> None:
    """CI: the job's first read came after the driver had committed no task for the flow's only topic, took
    "no task" for "no task ran it", and planned from offsets the stopping task had not flushed yet."""
    config = [(connector_key(SOURCE_CONNECTOR), encode_connector_config({"x": "1"}), 1)]
    owning = _commit({0: "solo-0,solo-1", 1: "other-0"}, 10)
    view = _fold(config + owning + _commit({}, 20), {"solo"})
    assert view.tasks == {} and view.owners == {0} and view.released_ts == 20


def test_a_commit_that_still_assigns_the_topics_is_not_their_release() -> None:
    view = _fold(_commit({0: "solo-0"}, 10) + _commit({0: "solo-0", 1: "x-0"}, 20), {"solo"})
    assert view.owners == {0} and view.released_ts is None
    later = _fold(_commit({0: "solo-0"}, 10) + _commit({0: "x-0"}, 20) + _commit({0: "x-0", 1: "y-0"}, 30), {"solo"})
    assert later.owners == {0} and later.released_ts == 20, "the first commit without them"


def test_topics_no_commit_ever_assigned_have_no_owners() -> None:
    view = _fold(_commit({0: "other-0"}, 10), {"solo"})
    assert view.owners == frozenset() and view.released_ts is None and view.commit_ts == 10
