"""Probe: Tansu keeps a departed leader as the group leader when the leader leaves a group that is
already re-forming (Forming.leave does not clear state.leader)
new members then never get an assignment.

Steps, on a fresh Tansu broker, group G with 2 partitions, cooperative-sticky (same with range):
  1. C1 joins alone (Tansu makes the first joiner leader), then C2 joins
  both assigned.
  2. C2 closes (LeaveGroup) -> group re-forming, leader C1 still a member.
  3. C1 closes (LeaveGroup) -> C1 removed, but the group's leader stays C1.
  4. N1, N2 join: JoinGroup answers name C1 as leader, SyncGroup fails REBALANCE_IN_PROGRESS, again and again.
  5. Recovery attempts: <mode>.
Usage: python tansu_dangling_leader.py BOOTSTRAP MODE  (MODE: none | recreate | leader-first)
"""

import sys
import time
import uuid

from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, mode = sys.argv[1], sys.argv[2]
CAP = float(sys.argv[4]) if len(sys.argv) > 4 else 40
strategy = sys.argv[3] if len(sys.argv) > 3 else "cooperative-sticky"
topic, group = f"probe-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
admin = AdminClient({"bootstrap.servers": bootstrap, "allow.auto.create.topics": False})
admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)


def consumer(name):
    assigned = []
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": name,
            "partition.assignment.strategy": strategy,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
            "allow.auto.create.topics": False,
            "enable.auto.commit": False,
        }
    )

    def on_assign(cons, parts):
        if strategy == "cooperative-sticky":
            cons.incremental_assign(parts)
        else:
            cons.assign(parts)
        assigned.append(time.monotonic())

    c.subscribe([topic], on_assign=on_assign)
    return c, assigned


def poll_until(members, cond, limit):
    t = time.monotonic()
    while time.monotonic() - t < limit:
        for c, _ in members:
            c.poll(0.05)
        if cond():
            return time.monotonic() - t
    return None


c1 = consumer("c1")
poll_until([c1], lambda: c1[1], 60)
c2 = consumer("c2")
n = len(c1[1])
poll_until([c1, c2], lambda: c2[1] and len(c1[1]) > n, 60)
c2[0].close()  # C1 closes right after: the group is still re-forming
c1[0].close()
n1, n2 = consumer("n1"), consumer("n2")
took = poll_until([n1, n2], lambda: n1[1] and n2[1], CAP)
print(f"{strategy}: new members assigned after {took if took is None else round(took, 1)} s (cap {CAP} s)")
if took is None and mode == "recreate":
    n1[0].close()
    n2[0].close()
    n1, n2 = consumer("n1"), consumer("n2")
    took = poll_until([n1, n2], lambda: n1[1] and n2[1], CAP)
    print(f"  after closing both and joining with fresh consumers: {took if took is None else round(took, 1)} s")
if took is None and mode == "recreate-one":
    n1[0].close()
    n1 = consumer("n1")
    took = poll_until([n1, n2], lambda: n1[1] and n2[1], CAP)
    print(f"  after one member closed and joined anew: {took if took is None else round(took, 1)} s")
if took is None and mode == "recreate-staggered":
    n1[0].close()
    n2[0].close()
    n1 = consumer("n1")
    t1 = poll_until([n1], lambda: n1[1], 40)
    n2 = consumer("n2")
    t2 = poll_until([n1, n2], lambda: n2[1], 40)
    print(f"  fresh consumers one after the other: first assigned after {t1}, second after {t2}")
for c, _ in (n1, n2):
    c.close()
