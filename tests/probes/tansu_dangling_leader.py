"""Probe: Tansu keeps a departed leader as the group leader when the leader leaves a group that is
already re-forming (its Forming-state leave does not clear the leader); new members then never get an
assignment. And the recovery its coordinator's source allows (connect_core.kafka.departed_leader).

Each round, on a fresh topic (2 partitions) and group, cooperative-sticky (same with range):
  1. C1 joins alone (Tansu makes the first joiner leader), then C2 joins: both assigned.
  2. C2 closes (LeaveGroup) -> the group re-forms, leader C1 still a member.
  3. C1 closes (LeaveGroup) -> C1 removed, but the group's leader stays C1.
  4. N1, N2 join: JoinGroup answers name C1 as leader, SyncGroup fails REBALANCE_IN_PROGRESS, again and again.
  5. MODE none:    wait up to CAP s for both to be assigned.
     MODE recreate: after STALL s, close both and join with fresh consumers; wait up to CAP s.
     MODE release:  after STALL s, run DepartedLeaderRelease (a throwaway member learns the named leader,
                    leaves, joins under the leader's id and is never heard of again: Tansu evicts it one
                    session timeout later and elects a live member); wait up to CAP s.
Usage: python tansu_dangling_leader.py BOOTSTRAP MODE [STRATEGY] [ROUNDS] [STALL] [CAP]
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from typing import Any

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from connect_core.kafka.departed_leader import DepartedLeaderRelease, ReleaseResult, consumer_protocols

bootstrap, mode = sys.argv[1], sys.argv[2]
strategy = sys.argv[3] if len(sys.argv) > 3 else "cooperative-sticky"
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 1
STALL = float(sys.argv[5]) if len(sys.argv) > 5 else 15.0
CAP = float(sys.argv[6]) if len(sys.argv) > 6 else 60.0
SESSION_MS = 6000
admin = AdminClient({"bootstrap.servers": bootstrap, "allow.auto.create.topics": False})

Member = tuple[Any, list[float]]


def consumer(topic: str, group: str, name: str) -> Member:
    assigned: list[float] = []
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": name,
            "partition.assignment.strategy": strategy,
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": 1000,
            "allow.auto.create.topics": False,
            "enable.auto.commit": False,
        }
    )

    def on_assign(cons: Any, parts: Any) -> None:
        if strategy == "cooperative-sticky":
            cons.incremental_assign(parts)
        else:
            cons.assign(parts)
        assigned.append(time.monotonic())

    c.subscribe([topic], on_assign=on_assign)
    return c, assigned


def poll_until(members: list[Member], cond: Any, limit: float) -> float | None:
    t = time.monotonic()
    while time.monotonic() - t < limit:
        for c, _ in members:
            c.poll(0.05)
        if cond():
            return time.monotonic() - t
    return None


def one_round() -> str:
    topic, group = f"probe-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)
    c1 = consumer(topic, group, "c1")
    poll_until([c1], lambda: c1[1], 60)
    c2 = consumer(topic, group, "c2")
    n = len(c1[1])
    poll_until([c1, c2], lambda: c2[1] and len(c1[1]) > n, 60)
    old_leader = c1[0].memberid()
    c2[0].close()  # C1 closes right after: the group is still re-forming
    c1[0].close()
    n1, n2 = consumer(topic, group, "n1"), consumer(topic, group, "n2")
    both = lambda: n1[1] and n2[1]  # noqa: E731
    took = poll_until([n1, n2], both, STALL if mode != "none" else CAP)
    if took is not None:
        line = f"assigned after {took:.1f} s without help"
    elif mode == "recreate":
        n1[0].close()
        n2[0].close()
        n1, n2 = consumer(topic, group, "n1"), consumer(topic, group, "n2")
        took = poll_until([n1, n2], both, CAP)
        line = f"stalled {STALL:.0f} s; fresh consumers assigned after {took if took is None else round(took, 1)} s"
    elif mode == "release":
        results: list[ReleaseResult | BaseException] = []

        def release() -> None:
            try:
                results.append(
                    DepartedLeaderRelease(
                        bootstrap, {}, group, consumer_protocols(strategy), session_timeout_ms=SESSION_MS,
                        rebalance_timeout_ms=300000, client_id="probe",
                    ).run()
                )  # fmt: skip
            except BaseException as e:  # reported below
                results.append(e)

        thread = threading.Thread(target=release, daemon=True)
        thread.start()
        took = poll_until([n1, n2], both, CAP)
        thread.join(30)
        result = results[0] if results else "still running"
        named = result.leader == old_leader if isinstance(result, ReleaseResult) else "?"
        said = result.describe() if isinstance(result, ReleaseResult) else result
        line = (f"stalled {STALL:.0f} s; release: {said} [named leader is the departed C1: {named}]; both assigned "
                f"{'never' if took is None else f'{took:.1f} s'} after the release started")  # fmt: skip
    else:
        line = f"not assigned within {STALL if mode != 'none' else CAP:.0f} s"
    for c, _ in (n1, n2):
        c.close()
    return line


for i in range(ROUNDS):
    print(f"{strategy} {mode} round {i + 1}: {one_round()}", flush=True)
