"""The order a backfill attempt fences and reads its positions in (mirror.jobs.backfill.copy.resume_fenced)."""

from __future__ import annotations

from mirror.jobs.backfill.copy import resume_fenced


def attempt(number: int) -> tuple[str, list[str]]:
    steps: list[str] = []

    def read_committed() -> dict[bytes, int]:
        steps.append("read")
        return {b"unit": 41}

    def begin(committed: dict[bytes, int]) -> str:
        steps.append(f"begin at {committed}")
        return "copies"

    return resume_fenced(number, lambda: steps.append("fence"), read_committed, begin), steps


def test_a_first_attempt_begins_at_the_plans_positions_while_its_producer_fences() -> None:
    assert attempt(0) == ("copies", ["begin at {}", "fence"])  # nothing read: the plan was read after fencing


def test_a_retried_attempt_fences_before_it_reads_its_committed_positions() -> None:
    assert attempt(1) == ("copies", ["fence", "read", "begin at {b'unit': 41}"])
    assert attempt(3)[1] == ["fence", "read", "begin at {b'unit': 41}"]
