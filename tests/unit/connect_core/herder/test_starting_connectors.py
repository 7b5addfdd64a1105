"""The hold that lets connectors started together write their task configs before one rebalance."""

from __future__ import annotations

from connect_core.herder.distributed.starting_connectors import StartingConnectors


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_holds_while_any_connector_started_together_has_not_reported() -> None:
    clock = Clock()
    starting = StartingConnectors(hold_s=3.0, clock=clock)
    assert starting.hold_until() is None
    starting.begin("source")
    clock.now += 1.0
    starting.begin("heartbeat")  # the same round: the hold still ends 3 s after the first began
    assert starting.hold_until() == 103.0
    starting.done("source")
    assert starting.hold_until() == 103.0
    starting.done("heartbeat")
    assert starting.hold_until() is None


def test_a_connector_that_never_reports_holds_no_longer_than_the_bound_nor_a_later_round() -> None:
    clock = Clock()
    starting = StartingConnectors(hold_s=3.0, clock=clock)
    starting.begin("stuck")
    clock.now += 3.0
    assert starting.hold_until() is None
    starting.begin("next")  # a later round holds for its own bound, not the stuck one's
    assert starting.hold_until() == 106.0
    starting.done("next")
    assert starting.hold_until() is None


def test_done_for_a_connector_never_begun_changes_nothing() -> None:
    starting = StartingConnectors(hold_s=3.0, clock=Clock())
    starting.done("other")
    assert starting.hold_until() is None
