"""The decision of a round of zombie fencing (KIP-618), read from config-topic replays as Java writes them.

Every case is a config log in Java's record formats (``commit-``, ``tasks-fencing-`` with
``{"task-count": n}``) replayed by :class:`ConfigState`, then judged by :func:`plan_fencing` and
:func:`may_start_without_fencing`, with Java ``DistributedHerder.doFenceZombieSourceTasks``'s rules.
"""

from __future__ import annotations

import json

from connect_core.herder.distributed.zombie_fencing import (
    FencingPlan,
    may_start_without_fencing,
    plan_fencing,
    transactional_ids_to_fence,
)
from connect_core.storage import formats as f
from connect_core.storage.api import ClusterConfigState
from connect_core.storage.config_state import ConfigState

CONFIG = {"connector.class": "tests.distributed_plugins:IdleSourceConnector", "name": "c"}


class Log:
    """A config topic replayed record by record."""

    def __init__(self) -> None:
        self.state = ConfigState()
        self.offset = 0
        self.put(f.connector_key("c"), f.encode_connector_config(CONFIG))

    def put(self, key: str, value: bytes | None) -> Log:
        self.state.apply(key, value, self.offset)
        self.offset += 1
        return self

    def tasks(self, n: int, marker: str = "") -> Log:
        for i in range(n):
            self.put(f.task_key("c", i), f.encode_task_config({"task.index": str(i), "marker": marker}))
        return self.put(f.commit_key("c"), f.encode_task_commit(n))

    def fenced(self, n: int) -> Log:
        return self.put(f.task_count_record_key("c"), f.encode_task_count_record(n))

    def snapshot(self) -> ClusterConfigState:
        return self.state.snapshot()


def test_task_count_record_is_javas_key_and_value() -> None:
    # KafkaConfigBackingStore: TASK_COUNT_RECORD_KEY = "tasks-fencing-" + name, schema {"task-count": int32}
    assert f.task_count_record_key("MirrorSourceConnector") == "tasks-fencing-MirrorSourceConnector"
    assert json.loads(f.encode_task_count_record(3)) == {"task-count": 3}
    snap = Log().tasks(2).put("tasks-fencing-c", b'{"task-count":2}').snapshot()
    assert snap.task_count_record("c") == 2 and not snap.pending_fencing("c")


def test_first_generation_writes_the_record_and_fences_nothing() -> None:
    snap = Log().tasks(3).snapshot()
    assert snap.pending_fencing("c") and snap.task_count_record("c") is None
    assert plan_fencing(snap, "c") == FencingPlan(fence=0, record=3, generation=0)
    assert not may_start_without_fencing(snap, "c")


def test_record_after_the_latest_task_configs_means_nothing_to_do() -> None:
    snap = Log().tasks(3).fenced(3).snapshot()
    plan = plan_fencing(snap, "c")
    assert plan.nothing_to_do and plan.generation == 0
    assert may_start_without_fencing(snap, "c")


def test_new_generation_fences_the_previous_generations_task_count() -> None:
    # 3 tasks fenced, then 2 new task configs: the 3 old ids are fenced, then 2 recorded
    snap = Log().tasks(3).fenced(3).tasks(2, "v2").snapshot()
    assert snap.task_config_generation("c") == 1
    assert plan_fencing(snap, "c") == FencingPlan(fence=3, record=2, generation=1)
    assert not may_start_without_fencing(snap, "c")
    # and growing: the previous (smaller) count is what is fenced
    snap = Log().tasks(1).fenced(1).tasks(4, "v2").snapshot()
    assert plan_fencing(snap, "c") == FencingPlan(fence=1, record=4, generation=1)


def test_one_task_before_and_after_needs_only_the_record() -> None:
    # the new task's own init_transactions fences its single predecessor
    snap = Log().tasks(1).fenced(1).tasks(1, "v2").snapshot()
    assert plan_fencing(snap, "c") == FencingPlan(fence=0, record=1, generation=1)


def test_an_older_record_still_counts_after_several_generations() -> None:
    # two generations committed since the last record: the ids of the last *fenced* count are fenced
    snap = Log().tasks(2).fenced(2).tasks(5, "v2").tasks(3, "v3").snapshot()
    assert plan_fencing(snap, "c") == FencingPlan(fence=2, record=3, generation=2)


def test_a_deleted_and_recreated_connector_fences_the_old_generation() -> None:
    # Java keeps task-count records after a connector is deleted: its zombies may still run
    log = Log().tasks(2).fenced(2).put(f.connector_key("c"), None)
    log.put(f.connector_key("c"), f.encode_connector_config(CONFIG)).tasks(1)
    assert plan_fencing(log.snapshot(), "c").fence == 2


def test_transactional_ids_are_javas() -> None:
    assert transactional_ids_to_fence("mm2-B", "MirrorSourceConnector", 3) == [
        "mm2-B-MirrorSourceConnector-0",
        "mm2-B-MirrorSourceConnector-1",
        "mm2-B-MirrorSourceConnector-2",
    ]
    assert transactional_ids_to_fence("g", "c", 0) == []


def test_snapshots_are_independent_of_later_records() -> None:
    log = Log().tasks(2)
    before = log.snapshot()
    log.fenced(2)
    assert before.pending_fencing("c") and not log.snapshot().pending_fencing("c")
