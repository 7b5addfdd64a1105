"""Unsticking a consumer group whose coordinator keeps naming a departed member as its leader.

Tansu 0.6.0 (docs/testing.md, "A departed leader stays the group's leader") removes a leader that sends
LeaveGroup while its group is re-forming, but keeps it as the group's leader: every later JoinGroup
answer names it, nobody sends the assignment, and the group never forms. Joining again as a new member
changes nothing (a re-forming group picks a leader only when it has none). What does change it, in
Tansu's coordinator (``tansu-broker/src/coordinator/group/administrator.rs``): a leader that is a
*member* and stops contacting the group is evicted after one session timeout, and evicting the leader
clears it, so the next JoinGroup elects the joiner. Tansu also takes a member id the client chooses.

So, from a connection of its own, :class:`DepartedLeaderRelease` joins once under a throwaway member id
to learn whom the group names as leader, leaves again, joins once under the leader's id (which makes it
a member) and never contacts the group again: one session timeout later the coordinator evicts it and
a live member is elected at its next join. On Apache Kafka the first JoinGroup is refused with
UNKNOWN_MEMBER_ID (Kafka issues member ids itself) and nothing else is sent: there the release is one
harmless round trip. The decisions are pure functions (:func:`next_step`); the class does the I/O.
"""

from __future__ import annotations

import enum
import logging
import struct
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.protocol.consumer import JoinGroupRequest, LeaveGroupRequest
from kafka.protocol.metadata import FindCoordinatorRequest

from connect_core.api.errors import ConnectError
from connect_core.kafka.raw_fetch import bootstrapped_client

log = logging.getLogger(__name__)

CONSUMER_PROTOCOL_TYPE = "consumer"
#: A ConsumerProtocolSubscription v0 with no topics and no user data: a member the assignor gives nothing.
EMPTY_SUBSCRIPTION = struct.pack(">hii", 0, 0, -1)
#: Shortest stall before a release (see stall_timeout_s).
MIN_STALL_S = 30.0
_NONE = 0
_UNKNOWN_MEMBER_ID = 25
_GROUP_COORDINATOR = 0
#: JoinGroup v5-v7 carry group_instance_id (null here) and are what the worker group's client sends too.
_JOIN_MAX_VERSION = 7


class Step(enum.Enum):
    """What to do after the throwaway member's JoinGroup answer."""

    NOT_APPLICABLE = "the broker issues member ids itself (Apache Kafka): nothing to release"
    FAILED = "the coordinator answered with an error"
    PROBE_IS_LEADER = "the group had no leader and elected the probe: left to expire, never sent LeaveGroup"
    TAKE_OVER_LEADER = "the group names another member as leader: join under its id and let it expire"


def next_step(probe_member_id: str, error_code: int, leader: str) -> Step:
    """The decision after the probe's JoinGroup (pure).

    A probe that became leader must not leave: a leader leaving a re-forming group is the very fault
    this works around. Its session expiring clears the leadership instead.
    """
    if error_code == _UNKNOWN_MEMBER_ID:
        return Step.NOT_APPLICABLE
    if error_code != _NONE:
        return Step.FAILED
    if leader == probe_member_id or not leader:
        return Step.PROBE_IS_LEADER
    return Step.TAKE_OVER_LEADER


def consumer_protocols(strategies: str) -> list[tuple[str, bytes]]:
    """The consumer protocols of a librdkafka ``partition.assignment.strategy`` list, each with a
    subscription to nothing (pure)."""
    return [(name.strip(), EMPTY_SUBSCRIPTION) for name in strategies.split(",") if name.strip()]


def stall_timeout_s(session_timeout_ms: float, rebalance_timeout_ms: float) -> float:
    """How long a member waits for its join to complete a rebalance before it releases the group (pure).

    Three session timeouts (at least :data:`MIN_STALL_S`): a healthy join takes a few heartbeats (on
    Tansu about half a session timeout, and its SyncGroup waits up to most of one), and a leader that
    died without LeaveGroup is expired after one. Never longer than the rebalance timeout, after which a
    coordinator gives up on members that have not joined anyway.
    """
    return min(rebalance_timeout_ms / 1000.0, max(MIN_STALL_S, 3.0 * session_timeout_ms / 1000.0))


def release_due(now: float, pending_since: float | None, last_release: float | None, stall_s: float) -> bool:
    """Whether a join pending since ``pending_since`` calls for a release now (pure).

    Once it has completed no rebalance for ``stall_s``, and then again every ``stall_s`` while it stays
    incomplete (a release made for an earlier join does not count for this one).
    """
    if pending_since is None or now - pending_since < stall_s:
        return False
    return last_release is None or last_release < pending_since or now - last_release >= stall_s


@dataclass(frozen=True)
class ReleaseResult:
    """What one release did, for the log: the step taken, the leader the group named, how long it took."""

    step: Step
    leader: str
    seconds: float
    error_code: int = _NONE

    def describe(self) -> str:
        named = f"; the group named {self.leader!r} as leader" if self.leader else ""
        error = f" (error code {self.error_code})" if self.error_code else ""
        return f"{self.step.value}{error}{named} ({self.seconds:.1f} s)"


class DepartedLeaderRelease:
    """One release attempt against one group (see the module docstring); blocking, on the caller's thread.

    ``protocols`` are (name, metadata) pairs as the group's members offer them (a join naming none of
    the group's protocol is refused): for consumers, :func:`consumer_protocols`; a group of another
    ``protocol_type`` (Connect workers) passes a member's own. A coordinator may hold each JoinGroup for
    a while (Tansu: half a session timeout).
    """

    def __init__(
        self,
        bootstrap_servers: str,
        client_configs: Mapping[str, Any],
        group_id: str,
        protocols: Sequence[tuple[str, bytes]],
        *,
        protocol_type: str = CONSUMER_PROTOCOL_TYPE,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        client_id: str,
    ) -> None:
        self.group_id = group_id
        self.protocols = list(protocols)
        self.protocol_type = protocol_type
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.client_id = client_id
        # Each request waits at least 30 s (a session timeout and 10 s more when longer): Apache Kafka refuses
        # the probe's join at once and a stalled Tansu group answered within seconds in the probe runs; a
        # join held longer fails this release, and the member's next stall period tries again.
        self._timeout_ms = max(30_000, session_timeout_ms + 10_000)
        self._configs = {
            "bootstrap_servers": bootstrap_servers,
            "client_id": client_id,
            "request_timeout_ms": self._timeout_ms,
            **dict(client_configs),
        }

    def run(self) -> ReleaseResult:
        """Probe, and take over and abandon the named leader if the group names another member."""
        started = time.monotonic()
        client = bootstrapped_client(self._configs, self._timeout_ms, ConnectError)
        try:
            node = self._coordinator(client)
            probe = f"{self.client_id}-release-{uuid.uuid4()}"
            answer = self._join(client, node, probe)
            step = next_step(probe, answer.error_code, answer.leader)
            if step is Step.TAKE_OVER_LEADER:
                self._leave(client, node, probe)
                self._join(client, node, answer.leader)
            return ReleaseResult(step, answer.leader, time.monotonic() - started, answer.error_code)
        finally:
            client.close()

    def _send(self, client: Any, node: Any, request: Any) -> Any:
        return client.send_and_receive(node, request, timeout_ms=self._timeout_ms)

    def _coordinator(self, client: Any) -> Any:
        node = client.least_loaded_node(bootstrap_fallback=True)
        request = FindCoordinatorRequest(
            key=self.group_id, key_type=_GROUP_COORDINATOR, coordinator_keys=[self.group_id]
        )
        response = self._send(client, node, request)
        found = response.coordinators[0] if getattr(response, "coordinators", None) else response
        return client.cluster.add_coordinator(found, _GROUP_COORDINATOR, self.group_id)

    def _join(self, client: Any, node: Any, member_id: str) -> Any:
        request = JoinGroupRequest(
            group_id=self.group_id,
            session_timeout_ms=self.session_timeout_ms,
            rebalance_timeout_ms=self.rebalance_timeout_ms,
            member_id=member_id,
            group_instance_id=None,
            protocol_type=self.protocol_type,
            protocols=[
                JoinGroupRequest.JoinGroupRequestProtocol(name=name, metadata=metadata)
                for name, metadata in self.protocols
            ],
            reason="releasing a departed leader",
            max_version=_JOIN_MAX_VERSION,
        )
        return self._send(client, node, request)

    def _leave(self, client: Any, node: Any, member_id: str) -> None:
        request = LeaveGroupRequest(
            group_id=self.group_id,
            member_id=member_id,
            members=[LeaveGroupRequest.MemberIdentity(member_id=member_id, group_instance_id=None, reason=None)],
        )
        self._send(client, node, request)


def consumer_group_release(java_props: Mapping[str, str], consumer_config: Mapping[str, Any]) -> Callable[[], str]:
    """A release of a librdkafka consumer's group, with the consumer's own servers, security and settings
    (``java_props`` the Java-style client properties, ``consumer_config`` the librdkafka ones made of them);
    it answers what it did, for the log."""
    from connect_core.kafka.security import kafka_python_security

    def number(key: str, default: int) -> int:
        try:
            return int(str(consumer_config.get(key, default)).strip())
        except ValueError:
            return default

    strategies = str(consumer_config.get("partition.assignment.strategy", "range,roundrobin"))

    def release() -> str:
        return (
            DepartedLeaderRelease(
                str(java_props.get("bootstrap.servers", "")),
                kafka_python_security(java_props),
                str(consumer_config.get("group.id", "")),
                consumer_protocols(strategies),
                session_timeout_ms=number("session.timeout.ms", 45_000),
                rebalance_timeout_ms=number("max.poll.interval.ms", 300_000),
                client_id=f"{consumer_config.get('client.id', 'connect')}-release",
            )
            .run()
            .describe()
        )

    return release
