"""The running task's look-out for recreated source topics: the rule, and the non-blocking lookups around it."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from embedded_kafka.cluster import wait_for
from mirror.connectors.source_incarnation_watch import IncarnationChange, TopicIdWatch, changed_topics


def test_a_changed_id_is_a_change_and_becomes_the_known_one() -> None:
    known = {"a": "id1", "b": "id2"}
    assert changed_topics(known, {"a": "id9", "b": "id2"}) == [IncarnationChange("a", "id1", "id9")]
    assert known == {"a": "id9", "b": "id2"}
    assert changed_topics(known, {"a": "id9", "b": "id2"}) == []  # said once


def test_a_missing_topic_keeps_its_id_so_its_recreation_is_found_later() -> None:
    known = {"a": "id1"}
    assert changed_topics(known, {}) == []  # deleted, not recreated yet
    assert known == {"a": "id1"}
    assert changed_topics(known, {"a": "id2"}) == [IncarnationChange("a", "id1", "id2")]


def test_a_topic_first_seen_is_remembered_not_reported() -> None:
    known: dict[str, str] = {}
    assert changed_topics(known, {"a": "id1"}) == []
    assert known == {"a": "id1"}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Lookup:
    """Answers with ``ids`` once released (a lookup that takes its time on another thread)."""

    def __init__(self, ids: dict[str, str]) -> None:
        self.ids = ids
        self.release = threading.Event()
        self.calls: list[list[str]] = []

    def __call__(self, topics: Sequence[str], timeout_s: float) -> dict[str, str]:
        self.calls.append(list(topics))
        assert self.release.wait(10)
        return dict(self.ids)


def test_the_watch_looks_up_when_due_without_blocking_and_reports_a_change_once() -> None:
    clock = Clock()
    lookup = Lookup({"events": "new"})
    watch = TopicIdWatch({}, ["events", "events"], {"events": "old"}, interval_s=5.0, lookup=lookup, clock=clock)
    try:
        assert watch.poll() == [] and lookup.calls == []  # not due yet
        clock.now = 5.0
        assert watch.poll() == []  # started, on another thread
        assert watch.started == 1 and watch.answered == 0
        assert watch.poll() == []  # still under way: poll never waits
        lookup.release.set()
        changes = wait_for(watch.poll, 10, 0.01, "the lookup answered")
        assert changes == [IncarnationChange("events", "old", "new")]
        assert watch.answered == 1 and lookup.calls == [["events"]]
        assert watch.poll() == []  # next one not due
    finally:
        watch.close()


def test_request_now_starts_a_lookup_at_the_next_poll_and_a_failed_one_counts_as_not_answered() -> None:
    clock = Clock()
    failures = [RuntimeError("broker away")]

    def lookup(topics: Sequence[str], timeout_s: float) -> dict[str, str]:
        if failures:
            raise failures.pop()
        return {"events": "old"}

    watch = TopicIdWatch({}, ["events"], {"events": "old"}, interval_s=60.0, lookup=lookup, clock=clock)
    try:
        watch.request_now()
        watch.poll()
        assert watch.started == 1
        wait_for(lambda: watch.poll() == [] and watch.started == 0, 10, 0.01, "the failed lookup taken back")
        assert watch.answered == 0
        watch.request_now()
        watch.poll()
        wait_for(lambda: watch.poll() == [] and watch.answered == 1, 10, 0.01, "an answer without a change")
    finally:
        watch.close()
