"""Three ``python -m mirror connect distributed`` processes on one broker share connectors and tasks.

Group timing is shortened (session 6 s, heartbeat 1 s, lost-work delay 20 s: well beyond the ~6-12 s
a SIGKILLed member takes to be noticed and its work reassigned without a delay, so timings tell the
two apart; the SIGTERM test, which checks that work moves at once, uses 150 s so that a loaded machine
cannot blur the two). The killed worker is a follower, except in the leader-death test: there, beyond Java
Connect, the new leader holds the dead leader's work for the delay too. Every test ends by
replaying the status topic: a task must never be RUNNING on two workers at once (a worker killed
with SIGKILL counts as stopped from the moment it was killed).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster, free_port, unique_name

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]  # the longest waits add up on a loaded machine

REPO = Path(__file__).resolve().parents[2]
CONNECTOR = "tests.distributed_plugins:IdleSourceConnector"
#: what running_tasks lists for connector "idle" of six_idle_tasks_two_per_worker: the connector and its 6 tasks
IDLE_UNITS = 7
DELAY_MS = 20000
# The SIGTERM test's delay: work that moves at all before it was not held, however slow the machine.
LONG_DELAY_MS = 150000
SESSION_TIMEOUT_S = 6.0


def http(method: str, url: str, body: Any = None, timeout: float = 10) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            payload = resp.read()
            return resp.status, (json.loads(payload) if payload else None)
    except urllib.error.HTTPError as e:
        payload = e.read()
        return e.code, (json.loads(payload) if payload else None)


def wait_for(what: str, predicate: Callable[[], Any], timeout: float, interval: float = 0.3) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except OSError as e:
            last = e
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@dataclass
class WorkerProc:
    port: int
    props_file: Path
    log_file: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def worker_id(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        log = self.log_file.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mirror", "connect", "distributed", str(self.props_file)],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ready(self) -> bool:
        if not self.alive():
            raise AssertionError(f"worker {self.port} exited: {self.log_file.read_text()[-3000:]}")
        status, _ = http("GET", f"{self.base}/connectors", timeout=5)
        return status == 200


@dataclass
class Cluster:
    kafka: KafkaCluster
    workdir: Path
    status_topic: str
    workers: list[WorkerProc] = field(default_factory=list)
    killed_at: dict[str, float] = field(default_factory=dict)  # worker id -> wall-clock ms

    def add_worker(self, group: str, topics: tuple[str, str, str], delay_ms: int = DELAY_MS) -> WorkerProc:
        port = free_port()
        i = len(self.workers)
        props = self.workdir / f"worker{i}.properties"
        props.write_text(
            f"bootstrap.servers={self.kafka.bootstrap_servers}\n"
            f"group.id={group}\n"
            "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
            "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
            f"config.storage.topic={topics[0]}\noffset.storage.topic={topics[1]}\nstatus.storage.topic={topics[2]}\n"
            "config.storage.replication.factor=-1\noffset.storage.replication.factor=-1\n"
            "status.storage.replication.factor=-1\noffset.storage.partitions=2\nstatus.storage.partitions=2\n"
            "session.timeout.ms=6000\nheartbeat.interval.ms=1000\n"
            f"scheduled.rebalance.max.delay.ms={delay_ms}\n"
            f"listeners=http://127.0.0.1:{port}\noffset.flush.interval.ms=2000\n"
        )
        w = WorkerProc(port, props, self.workdir / f"worker{i}.log")
        self.workers.append(w)
        return w

    def statuses(self, name: str, worker: WorkerProc | None = None) -> dict[str, Any] | None:
        """The connector's status as the first live worker (or ``worker``) answers it."""
        for w in [worker] if worker is not None else self.workers:
            if not w.alive():
                continue
            try:
                code, body = http("GET", f"{w.base}/connectors/{name}/status", timeout=5)
            except OSError:
                continue
            if code == 200:
                return dict(body)
        return None

    def running_tasks(self, names: list[str], worker: WorkerProc | None = None) -> dict[str, str] | None:
        """task -> worker id when every connector and task of ``names`` is RUNNING, else None (as the first live
        worker, or ``worker``, sees it: a task whose status that worker has not read yet is not listed)."""
        out: dict[str, str] = {}
        for name in names:
            st = self.statuses(name, worker)
            if st is None or st["connector"]["state"] != "RUNNING" or not st["tasks"]:
                return None
            for t in st["tasks"]:
                if t["state"] != "RUNNING":
                    return None
                out[f"{name}-{t['id']}"] = t["worker_id"]
            out[name] = st["connector"]["worker_id"]
        return out

    def agreed_running_tasks(self, names: list[str]) -> dict[str, str] | None:
        """:meth:`running_tasks` when every live worker shows the same placement, else None. Each worker reads
        the status topic on its own: one that has not read a task's RUNNING yet leaves the task out, so a test
        that kills a worker right after its own view showed it running could then read, from a survivor, a
        placement without the victim's tasks, as if they had moved."""
        views = [self.running_tasks(names, w) for w in self.workers if w.alive()]
        return views[0] if views and views[0] is not None and all(v == views[0] for v in views) else None

    def idle_units_on(self, workers: set[str]) -> dict[str, str] | None:
        """The idle connector's placement when all its units (the connector and its tasks) run on ``workers``."""
        p = self.running_tasks(["idle"])
        return p if p is not None and len(p) == IDLE_UNITS and set(p.values()) <= workers else None

    def leader(self) -> WorkerProc:
        """The worker that assigned the latest generation (only the leader logs "assigned generation")."""
        latest: tuple[int, WorkerProc] | None = None
        for w in self.workers:
            if w.alive():
                for g in re.findall(r"Leader \S+ assigned generation (\d+)", w.log_file.read_text(errors="replace")):
                    if latest is None or int(g) > latest[0]:
                        latest = (int(g), w)
        assert latest is not None, "no leader has assigned a generation yet"
        return latest[1]

    def held_lost_work(self, w: WorkerProc, since: int) -> bool:
        """``w`` (the leader) assigned a generation with a lost-work delay since log offset ``since``."""
        text = w.log_file.read_bytes()[since:].decode(errors="replace")
        return any(int(d) > 0 for d in re.findall(r"assigned generation \d+ \(\S+, delay (\d+) ms\)", text))

    def running_elsewhere_after_kill(self, victim: WorkerProc, tasks: list[str]) -> list[str]:
        """RUNNING statuses of ``tasks`` written by another worker after ``victim`` was SIGKILLed."""
        killed = self.killed_at[victim.worker_id]
        out = []
        for msgs in self.kafka.read_all(self.status_topic).values():
            for m in msgs:
                key, value = (m.key() or b"").decode(), m.value()
                if not value or not key.startswith("status-task-") or key[len("status-task-") :] not in tasks:
                    continue
                rec = json.loads(value)
                if rec["state"] == "RUNNING" and rec["worker_id"] != victim.worker_id and m.timestamp()[1] >= killed:
                    out.append(f"{key} on {rec['worker_id']}")
        return out

    def first_running_elsewhere_after_kill(self, victim: WorkerProc, units: list[str]) -> float | None:
        """Wall-clock ms of the first RUNNING status of ``units`` (connectors or tasks) written by another
        worker after ``victim`` was SIGKILLed, or None."""
        killed = self.killed_at[victim.worker_id]
        keys = {f"status-task-{u}" for u in units} | {f"status-connector-{u}" for u in units}
        first: float | None = None
        for msgs in self.kafka.read_all(self.status_topic).values():
            for m in msgs:
                key, value = (m.key() or b"").decode(), m.value()
                if not value or key not in keys:
                    continue
                rec = json.loads(value)
                ts = m.timestamp()[1]
                if rec["state"] == "RUNNING" and rec["worker_id"] != victim.worker_id and ts >= killed:
                    first = ts if first is None else min(first, ts)
        return first

    def kill(self, w: WorkerProc, sig: int) -> None:
        assert w.proc is not None
        if sig == signal.SIGKILL:
            self.killed_at[w.worker_id] = time.time() * 1000
        w.proc.send_signal(sig)

    def assert_never_ran_twice(self) -> None:
        history: dict[bytes, list[tuple[int, dict[str, Any]]]] = {}
        for msgs in self.kafka.read_all(self.status_topic).values():
            for m in msgs:
                key, value = m.key() or b"", m.value()
                if key.startswith(b"status-task-") and value:
                    history.setdefault(key, []).append((m.timestamp()[1], json.loads(value)))
        assert history, "no task statuses were written"
        for key, records in history.items():
            holder: str | None = None
            for ts, rec in records:
                state, worker = rec["state"], rec["worker_id"]
                if state == "RUNNING":
                    if holder is not None and holder != worker:
                        killed = self.killed_at.get(holder)
                        assert killed is not None and killed <= ts, (
                            f"{key.decode()} RUNNING on {worker} while still running on {holder}: {records}"
                        )
                    holder = worker
                elif worker == holder and state in ("UNASSIGNED", "FAILED", "DESTROYED"):
                    holder = None

    def stop_all(self) -> None:
        for w in self.workers:
            if w.alive():
                assert w.proc is not None
                w.proc.terminate()
        for w in self.workers:
            if w.proc is not None:
                try:
                    w.proc.wait(30)
                except subprocess.TimeoutExpired:
                    w.proc.kill()
                    w.proc.wait(5)


@pytest.fixture
def lost_work_delay_ms() -> int:
    """scheduled.rebalance.max.delay.ms of every worker; a test parametrizes it to change it."""
    return DELAY_MS


@pytest.fixture
def cluster(kafka_cluster: KafkaCluster, tmp_workdir: Path, lost_work_delay_ms: int) -> Iterator[Cluster]:
    prefix = unique_name("dist")
    topics = (f"{prefix}-configs", f"{prefix}-offsets", f"{prefix}-status")
    c = Cluster(kafka_cluster, tmp_workdir, topics[2])
    for _ in range(3):
        c.add_worker(prefix, topics, lost_work_delay_ms)
    for w in c.workers:
        w.start()
    try:
        for w in c.workers:
            wait_for(f"worker {w.port} REST", w.ready, 60)
        yield c
    finally:
        c.stop_all()


def by_worker(placement: dict[str, str], names: list[str]) -> dict[str, tuple[int, int]]:
    """worker id -> (connectors, tasks) it runs."""
    out: dict[str, tuple[int, int]] = {}
    for unit, worker in placement.items():
        c, t = out.get(worker, (0, 0))
        out[worker] = (c + 1, t) if unit in names else (c, t + 1)
    return out


def create(c: Cluster, via: WorkerProc, name: str, tasks: int) -> None:
    config = {"connector.class": CONNECTOR, "tasks.max": str(tasks)}
    code, body = wait_for(
        f"create {name} via {via.port}",
        lambda: (lambda r: r if r[0] != 409 else None)(http("POST", f"{via.base}/connectors",
                                                            {"name": name, "config": config}, timeout=60)),
        60,
    )  # fmt: skip
    assert code == 201, body
    assert body["name"] == name


@pytest.mark.parametrize("leaving_role", ["follower", "leader"])
@pytest.mark.parametrize("lost_work_delay_ms", [LONG_DELAY_MS], ids=["long-delay"])
def test_work_is_spread_writes_are_forwarded_and_sigterm_moves_work_at_once(
    cluster: Cluster, leaving_role: str
) -> None:
    names = ["c0", "c1", "c2"]
    # One create through each worker: at most one of them is the leader, so the others are forwarded.
    for w, name in zip(cluster.workers, names, strict=True):
        create(cluster, w, name, 2)

    def lists_all(w: WorkerProc) -> bool:
        code, listed = http("GET", f"{w.base}/connectors")
        return code == 200 and sorted(listed) == names

    for w in cluster.workers:  # every worker lists all three (409 while a rebalance is pending, as Java)
        wait_for(f"{w.port} lists c0..c2", lambda w=w: lists_all(w), 30)  # type: ignore[misc]

    def balanced() -> dict[str, str] | None:
        placement = cluster.running_tasks(names)
        if placement is None:
            return None
        counts = by_worker(placement, names)
        return placement if sorted(counts.values()) == [(1, 2)] * 3 else None

    placement = wait_for("3 connectors and 6 tasks spread evenly", balanced, 60)
    assert set(placement.values()) == {w.worker_id for w in cluster.workers}

    # SIGTERM: the worker stops its work, leaves the group, and its work moves without the 20 s delay,
    # also when it was the leader (the new leader sees in the status topic that the work was released).
    leader = cluster.leader()
    leaving = leader if leaving_role == "leader" else next(w for w in cluster.workers if w is not leader)
    moved = [u for u, wid in placement.items() if wid == leaving.worker_id]
    t0 = time.monotonic()
    cluster.kill(leaving, signal.SIGTERM)
    assert leaving.proc is not None
    assert leaving.proc.wait(30) == 0
    remaining = {w.worker_id for w in cluster.workers if w is not leaving}

    def moved_on() -> dict[str, str] | None:
        p = cluster.running_tasks(names)
        return p if p is not None and set(p.values()) <= remaining else None

    # Held work would wait the whole lost-work delay (150 s here): work running elsewhere well before it,
    # within a wait that is generous for a loaded machine, was not held.
    after = wait_for("work of the stopped worker running elsewhere", moved_on, LONG_DELAY_MS / 1000 / 2)
    elapsed = time.monotonic() - t0
    assert elapsed < LONG_DELAY_MS / 1000, f"work moved only after {elapsed:.1f}s (the lost-work delay is 150 s)"
    assert all(after[u] in remaining for u in moved)
    if leaving_role == "leader":
        # A survivor took over as leader: a create through either survivor is accepted (forwarded to it) and
        # the new connectors run there, as their status says.
        survivors = [w for w in cluster.workers if w is not leaving]
        for w, name in zip(survivors, ["c3", "c4"], strict=True):
            create(cluster, w, name, 1)

        def new_work_running() -> dict[str, str] | None:
            p = cluster.running_tasks(["c3", "c4"])
            return p if p is not None and set(p.values()) <= remaining else None

        wait_for("connectors created after the leader left running on the survivors", new_work_running, 60)
        # and the one that took over saw the work released, so it held nothing
        logs = "".join(w.log_file.read_text(errors="replace") for w in survivors)
        assert "took over from" in logs and "released their work cleanly" in logs
    cluster.assert_never_ran_twice()


def six_idle_tasks_two_per_worker(cluster: Cluster) -> dict[str, str]:
    """Connector "idle" with 6 tasks, once they run 2 per worker: unit -> worker id."""
    create(cluster, cluster.workers[0], "idle", 6)

    def spread() -> dict[str, str] | None:
        p = cluster.agreed_running_tasks(["idle"])
        if p is None:
            return None
        tasks = [wid for u, wid in p.items() if u != "idle"]
        return p if sorted(tasks.count(w.worker_id) for w in cluster.workers) == [2, 2, 2] else None

    return wait_for("6 tasks, 2 per worker", spread, 60)


def test_sigkilled_worker_keeps_its_work_for_the_delay_and_gets_it_back(cluster: Cluster) -> None:
    placement = six_idle_tasks_two_per_worker(cluster)
    leader = cluster.leader()
    # keep the connector and the leader alive
    victim = next(w for w in cluster.workers if w is not leader and placement["idle"] != w.worker_id)
    victim_tasks = sorted(u for u, wid in placement.items() if wid == victim.worker_id and u != "idle")
    assert len(victim_tasks) == 2
    mark = leader.log_file.stat().st_size
    t0 = time.monotonic()
    cluster.kill(victim, signal.SIGKILL)
    assert victim.proc is not None
    victim.proc.wait(10)

    # The group notices the death (after the session timeout) and the leader holds the lost work back ...
    wait_for(
        "the leader to hold the dead worker's work for the delay",
        lambda: cluster.held_lost_work(leader, mark),
        40,
        interval=0.5,
    )
    noticed = time.monotonic() - t0
    assert noticed >= SESSION_TIMEOUT_S - 1.5, f"death noticed {noticed:.1f}s after SIGKILL, session is 6 s"
    assert not cluster.running_elsewhere_after_kill(victim, victim_tasks)

    # ... and the worker returns within the delay (same REST address, so the same worker id): it gets
    # exactly its own tasks back, and nobody else ever ran them in between.
    victim.start()
    wait_for("restarted worker REST", victim.ready, 60)

    def back() -> dict[str, str] | None:
        p = cluster.running_tasks(["idle"])
        if p is None:
            return None
        tasks = [wid for u, wid in p.items() if u != "idle"]
        return p if sorted(tasks.count(w.worker_id) for w in cluster.workers) == [2, 2, 2] else None

    final = wait_for("work back on the returning worker", back, 60)
    returned = sorted(u for u, wid in final.items() if wid == victim.worker_id and u != "idle")
    assert returned == victim_tasks, f"the returning worker got {returned}, it ran {victim_tasks}"
    assert not cluster.running_elsewhere_after_kill(victim, victim_tasks), "lost work reassigned before the delay"
    cluster.assert_never_ran_twice()


def test_sigkilled_worker_that_stays_away_loses_its_work_after_the_delay(cluster: Cluster) -> None:
    placement = six_idle_tasks_two_per_worker(cluster)
    leader = cluster.leader()
    victim = next(w for w in cluster.workers if w is not leader and placement["idle"] != w.worker_id)
    mark = leader.log_file.stat().st_size
    t0 = time.monotonic()
    cluster.kill(victim, signal.SIGKILL)
    assert victim.proc is not None
    victim.proc.wait(10)
    remaining = {w.worker_id for w in cluster.workers if w is not victim}

    wait_for("tasks reassigned to the surviving workers", lambda: cluster.idle_units_on(remaining), 90, interval=0.5)
    elapsed = time.monotonic() - t0
    assert cluster.held_lost_work(leader, mark), "the leader never held the lost work back"
    # Without the delay the work moves once the death is noticed (session 6 s + a rebalance: ~6-12 s);
    # with it, not before the 20 s delay has run out after that.
    assert elapsed >= DELAY_MS / 1000, f"reassigned after {elapsed:.1f}s, before the {DELAY_MS} ms delay"
    cluster.assert_never_ran_twice()


def test_sigkilled_leader_keeps_its_work_for_the_delay_then_loses_it(cluster: Cluster) -> None:
    """Beyond Java Connect (whose new leader reassigns a dead leader's work at once): the worker that
    takes over rebuilds the last generation from the members' join metadata and holds the work nobody
    reports for scheduled.rebalance.max.delay.ms, measured here from the SIGKILL."""
    placement = six_idle_tasks_two_per_worker(cluster)
    victim = cluster.leader()
    victim_units = sorted(u for u, wid in placement.items() if wid == victim.worker_id)
    assert len([u for u in victim_units if u != "idle"]) == 2
    survivors = [w for w in cluster.workers if w is not victim]
    marks = {w.port: w.log_file.stat().st_size for w in survivors}
    t0 = time.monotonic()
    cluster.kill(victim, signal.SIGKILL)
    assert victim.proc is not None
    victim.proc.wait(10)

    def new_leader_holding() -> WorkerProc | None:
        for w in survivors:
            text = w.log_file.read_bytes()[marks[w.port] :].decode(errors="replace")
            if "took over from" in text and cluster.held_lost_work(w, marks[w.port]):
                return w
        return None

    # A survivor takes over once the death is noticed (session 6 s) and holds the dead leader's work ...
    new_leader = wait_for("a new leader holding the dead leader's work", new_leader_holding, 40, interval=0.5)
    noticed = time.monotonic() - t0
    assert not cluster.first_running_elsewhere_after_kill(victim, victim_units), "reassigned at once"

    # ... and only when the delay has run out do the survivors run it.
    remaining = {w.worker_id for w in survivors}

    wait_for(
        "the dead leader's work running on the survivors", lambda: cluster.idle_units_on(remaining), 60, interval=0.5
    )
    elapsed = time.monotonic() - t0
    first = cluster.first_running_elsewhere_after_kill(victim, victim_units)
    assert first is not None
    held_s = (first - cluster.killed_at[victim.worker_id]) / 1000
    assert held_s >= DELAY_MS / 1000, f"the dead leader's work ran elsewhere {held_s:.1f}s after the kill"
    print(
        f"new leader {new_leader.port} noticed after {noticed:.1f}s; work ran elsewhere {held_s:.1f}s after the "
        f"kill; all running after {elapsed:.1f}s"
    )
    cluster.assert_never_ran_twice()
