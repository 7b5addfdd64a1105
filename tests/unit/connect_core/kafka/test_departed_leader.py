"""The decisions of the departed-leader release (connect_core.kafka.departed_leader); the release itself
runs against Tansu in tests/integration/connect_core/kafka/test_departed_leader.py."""

from __future__ import annotations

import struct

from connect_core.kafka.departed_leader import (
    EMPTY_SUBSCRIPTION,
    ReleaseResult,
    Step,
    consumer_protocols,
    next_step,
    release_due,
)


def test_apache_kafka_refuses_a_member_id_it_did_not_issue_so_nothing_more_is_sent() -> None:
    assert next_step("probe-1", 25, "") is Step.NOT_APPLICABLE  # UNKNOWN_MEMBER_ID


def test_any_other_error_is_a_failure() -> None:
    assert next_step("probe-1", 16, "") is Step.FAILED  # NOT_COORDINATOR
    assert next_step("probe-1", 15, "x") is Step.FAILED  # COORDINATOR_NOT_AVAILABLE


def test_a_group_naming_another_member_has_that_leader_taken_over_and_abandoned() -> None:
    assert next_step("probe-1", 0, "rdkafka-c1") is Step.TAKE_OVER_LEADER


def test_a_probe_elected_leader_never_leaves_it_expires() -> None:
    # leaving a re-forming group as its leader is the fault itself
    assert next_step("probe-1", 0, "probe-1") is Step.PROBE_IS_LEADER
    assert next_step("probe-1", 0, "") is Step.PROBE_IS_LEADER


def test_the_probe_subscribes_to_nothing_so_an_assignor_gives_it_nothing() -> None:
    version, topics, user_data = struct.unpack(">hii", EMPTY_SUBSCRIPTION)
    assert (version, topics, user_data) == (0, 0, -1)  # v0, no topics, null user data


def test_the_result_says_what_was_done_and_whom_the_group_named() -> None:
    text = ReleaseResult(Step.TAKE_OVER_LEADER, "rdkafka-c1", 7.25).describe()
    assert "join under its id" in text and "'rdkafka-c1'" in text and "7.2 s" in text
    assert "error code 25" in ReleaseResult(Step.NOT_APPLICABLE, "", 0.1, 25).describe()


def test_a_stalled_join_calls_for_a_release_once_per_stall_timeout_and_again_for_a_new_join() -> None:
    assert not release_due(100.0, None, None, 30.0)  # no join pending
    assert not release_due(129.0, 100.0, None, 30.0)  # pending for 29 s
    assert release_due(130.0, 100.0, None, 30.0)
    assert not release_due(140.0, 100.0, 130.0, 30.0)  # released 10 s ago
    assert release_due(160.0, 100.0, 130.0, 30.0)  # still pending a stall timeout after the release
    assert release_due(231.0, 200.0, 130.0, 30.0)  # a later join: the earlier release does not count


def test_a_consumer_offers_every_configured_strategy_subscribed_to_nothing() -> None:
    assert consumer_protocols("range, roundrobin") == [
        ("range", EMPTY_SUBSCRIPTION),
        ("roundrobin", EMPTY_SUBSCRIPTION),
    ]
    assert consumer_protocols("cooperative-sticky") == [("cooperative-sticky", EMPTY_SUBSCRIPTION)]
