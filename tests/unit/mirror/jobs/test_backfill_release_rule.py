"""The hand-off's release rule: only an instance's own stop report proves its offsets are final."""

from __future__ import annotations

from mirror.jobs.backfill.release_rule import CLOCK_SLACK_MS, TaskStatusRecord, graceful_timeout_ms, release_of

COMMIT = 10_000
GRACE = 5_000


def verdict(
    records: list[TaskStatusRecord], old: set[int], now: int = COMMIT + 100
) -> tuple[bool, list[int], list[int]]:
    found = release_of(records, old, COMMIT, now, GRACE)
    return found.released, found.abandoned, found.waiting


def test_a_stop_report_after_the_commit_releases_the_task() -> None:
    records = [TaskStatusRecord(0, "RUNNING", 1_000), TaskStatusRecord(0, "UNASSIGNED", COMMIT + 50)]
    assert verdict(records, {0}) == (True, [], [])


def test_a_failure_report_after_the_commit_releases_it_too() -> None:
    assert verdict([TaskStatusRecord(0, "FAILED", COMMIT)], {0}) == (True, [], [])


def test_reports_before_the_commit_prove_nothing() -> None:
    assert verdict([TaskStatusRecord(0, "UNASSIGNED", COMMIT - 1)], {0}) == (False, [], [0])


def test_the_leaders_tombstone_alone_is_not_a_stop_while_the_instance_may_still_be_stopping() -> None:
    """The failure seen in CI: the old instance was cancelled, the leader deleted its status, and the job
    took that as the stop and planned from offsets that instance never committed (every copy duplicated)."""
    records = [TaskStatusRecord(0, "RUNNING", 1_000), TaskStatusRecord(0, None, COMMIT + 10)]
    assert verdict(records, {0}, now=COMMIT + 10 + GRACE) == (False, [], [0])


def test_a_newer_instance_running_is_not_the_old_ones_stop_either() -> None:
    records = [TaskStatusRecord(0, "RUNNING", COMMIT + 10)]
    assert verdict(records, {0}, now=COMMIT + 1_000) == (False, [], [0])


def test_a_sign_older_than_the_graceful_timeout_without_a_stop_report_means_abandoned() -> None:
    records = [TaskStatusRecord(0, None, COMMIT + 10), TaskStatusRecord(1, "UNASSIGNED", COMMIT + 20)]
    now = COMMIT + 10 + GRACE + CLOCK_SLACK_MS + 1
    assert verdict(records, {0, 1}, now=now) == (True, [0], [])


def test_a_task_with_no_record_at_all_keeps_the_job_waiting() -> None:
    assert verdict([TaskStatusRecord(1, "UNASSIGNED", COMMIT + 20)], {0, 1}, now=COMMIT + 60_000) == (False, [], [0])


def test_new_task_ids_need_no_report() -> None:
    assert verdict([], set()) == (True, [], [])


def test_the_graceful_timeout_comes_from_the_flows_worker_config() -> None:
    assert graceful_timeout_ms({"task.shutdown.graceful.timeout.ms": "1500"}) == 1500
    assert graceful_timeout_ms({}) == 5000
    assert graceful_timeout_ms({"task.shutdown.graceful.timeout.ms": "soon"}) == 5000
