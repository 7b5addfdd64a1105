"""The job's lease on a real broker: renewed while held, released at the end, lost when released by hand
or taken over (and then the job is told, so it stops its Spark tasks)."""

from __future__ import annotations

import threading

from embedded_kafka import KafkaCluster, wait_for
from mirror.driver.backfill_leases import leases_topic
from mirror.driver.driver import make_config
from mirror.driver.lease_store import read_leases
from mirror.jobs.backfill.flow import resolve_flow
from mirror.jobs.backfill.lease import LeaseHolder, release_lease
from tests.e2e.mm2_helpers import mm2_properties


def test_a_held_lease_is_renewed_then_lost_when_released_by_hand(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
) -> None:
    a, b = two_clusters
    flow = resolve_flow(make_config(mm2_properties({"A": a, "B": b}, ["A->B"])), "A", "B")
    lost = threading.Event()
    holder = LeaseHolder(flow, ttl_s=3.0, on_lost=lost.set)
    try:
        taken = holder.take(["orders"], ["mm2-backfill-A-B-orders-0"])
        assert leases_topic("A") in b.topic_names()
        wait_for(
            lambda: (read_leases(flow.worker_props, "A").lease("A", "B") or taken).expires_at_ms > taken.expires_at_ms,
            30,
            0.2,
            "a renewal",
        )
        released = release_lease(flow)  # `mm2 backfill --release`: fences the ids, deletes the lease
        assert released is not None and released.job_id == holder.job_id
        assert lost.wait(30), "the holder saw its lease go and told the job"
        assert holder.lost == "released"
    finally:
        holder.release()
    assert read_leases(flow.worker_props, "A").lease("A", "B") is None


def test_a_lease_is_released_at_the_end_and_a_second_job_takes_over(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
) -> None:
    a, b = two_clusters
    flow = resolve_flow(make_config(mm2_properties({"A": a, "B": b}, ["A->B"])), "A", "B")
    first = LeaseHolder(flow, ttl_s=60.0)
    second = LeaseHolder(flow, ttl_s=60.0)
    try:
        first.take(["orders"], ["mm2-backfill-A-B-orders-0"])
        second.take(["orders"], ["mm2-backfill-A-B-orders-0"])  # a re-run after the first was killed
        first.renew()
        assert first.lost == f"taken over by job {second.job_id}"
        first.release()  # not its lease any more: left alone
        assert read_leases(flow.worker_props, "A").lease("A", "B").job_id == second.job_id  # type: ignore[union-attr]
    finally:
        second.release()
    assert read_leases(flow.worker_props, "A").lease("A", "B") is None
