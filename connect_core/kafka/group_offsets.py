"""A consumer group's committed offsets as the admin API sees them: read, write, and the group deleted.

What a sink connector's offsets are (KIP-875: a sink's offsets are its consumer group's). Errors that
mean "the group still has members" (a sink task not yet stopped, or the connector resumed meanwhile)
raise :class:`GroupActiveError`, whichever form the broker gives them in: Kafka and Tansu both report
AlterConsumerGroupOffsets errors per partition, and Tansu deletes a group that has members, so the
group's state is also asked before anything is changed (:meth:`GroupOffsetsAdmin.require_inactive`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import admin_config, create_admin
from connect_core.kafka.errors import is_retriable
from connect_core.kafka.types import ClientPartition
from connect_core.model import TopicPartition

log = logging.getLogger(__name__)

#: Errors a member-only operation gets while the group has members (Kafka's and Tansu's).
_ACTIVE_GROUP_CODES = frozenset(
    {
        KafkaError.UNKNOWN_MEMBER_ID,
        KafkaError.ILLEGAL_GENERATION,
        KafkaError.REBALANCE_IN_PROGRESS,
        KafkaError.GROUP_SUBSCRIBED_TO_TOPIC,
        KafkaError.NON_EMPTY_GROUP,
    }
)
#: Group states in which members are joined or joining.
_ACTIVE_STATES = frozenset({"STABLE", "PREPARING_REBALANCING", "COMPLETING_REBALANCING"})
_RETRY_BACKOFF_S = 0.2
#: One attempt's wait at most: a request lost with its connection is sent again (on a new client) rather
#: than waited for until the deadline.
ATTEMPT_TIMEOUT_S = 15.0


class GroupActiveError(ConnectError):
    """The group has active members: its offsets may only be changed by them."""


class GroupOffsetsError(ConnectError):
    """The broker refused or failed a group operation (the cause says why)."""


def _error(exc: BaseException) -> KafkaError | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


def _code(exc: BaseException) -> int | None:
    err = _error(exc)
    return None if err is None else int(err.code())


class GroupOffsetsAdmin:
    """Admin operations on one consumer group, each bounded by the caller's deadline."""

    def __init__(self, group: str, props: Mapping[str, Any] | None = None, *, client: AdminClient | None = None
                 ) -> None:  # fmt: skip
        if client is None:
            if props is None:
                raise ValueError("GroupOffsetsAdmin needs admin properties or a client")
            client = create_admin(admin_config(props))
        self.group = group
        self.client = client
        self._props = dict(props) if props is not None else None

    def _renew_client(self) -> None:
        """A new client after a lost connection: Tansu drops the connection of the first commit to a group
        it has just deleted, and librdkafka's client then sometimes never answers a request again (seen
        once in five runs: every retry on the same client timed out)."""
        if self._props is not None:
            self.client = create_admin(admin_config(self._props))

    def _call(self, what: str, deadline: float, fn: Any) -> Any:
        """``fn(timeout_s)`` retried on retriable errors until ``deadline``; others raise at once."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise GroupOffsetsError(f"Timed out while trying to {what} of consumer group {self.group}")
            try:
                return fn(min(max(remaining, 0.1), ATTEMPT_TIMEOUT_S))
            except KafkaException as e:
                err = _error(e)
                if err is not None and err.code() in _ACTIVE_GROUP_CODES:
                    raise GroupActiveError(f"Consumer group {self.group} has active members: {e}") from e
                if err is None or not is_retriable(err) or time.monotonic() + _RETRY_BACKOFF_S >= deadline:
                    raise GroupOffsetsError(f"Failed to {what} of consumer group {self.group}: {e}") from e
                log.debug("Retrying to %s of consumer group %s on a new client: %s", what, self.group, e)
            except TimeoutError as e:
                if time.monotonic() + _RETRY_BACKOFF_S >= deadline:
                    raise GroupOffsetsError(f"Timed out while trying to {what} of consumer group {self.group}") from e
            self._renew_client()
            time.sleep(_RETRY_BACKOFF_S)

    def committed(self, deadline: float) -> dict[TopicPartition, int]:
        """Every partition the group has an offset for (none for an unknown group)."""

        def run(timeout_s: float) -> dict[TopicPartition, int]:
            request = [ConsumerGroupTopicPartitions(self.group)]
            futures = self.client.list_consumer_group_offsets(request, request_timeout=timeout_s)
            result = futures[self.group].result(timeout=timeout_s + 1)
            out: dict[TopicPartition, int] = {}
            for tp in result.topic_partitions or []:
                if tp.error is not None:
                    raise KafkaException(tp.error)
                if tp.offset >= 0:  # a partition without an offset comes back as OFFSET_INVALID
                    out[TopicPartition(tp.topic, tp.partition)] = int(tp.offset)
            return out

        result: dict[TopicPartition, int] = self._call("list the offsets", deadline, run)
        return result

    def require_inactive(self, deadline: float) -> None:
        """GroupActiveError when the group has members (an unknown group has none)."""

        def run(timeout_s: float) -> tuple[str, int]:
            futures = self.client.describe_consumer_groups([self.group], request_timeout=timeout_s)
            try:
                description = futures[self.group].result(timeout=timeout_s + 1)
            except KafkaException as e:
                if _code(e) == KafkaError.GROUP_ID_NOT_FOUND:
                    return "DEAD", 0
                raise
            state = getattr(description.state, "name", str(description.state))
            return str(state), len(description.members or [])

        state, members = self._call("describe the members", deadline, run)
        if state in _ACTIVE_STATES or members:
            raise GroupActiveError(f"Consumer group {self.group} is {state} with {members} member(s)")

    def alter(self, offsets: Mapping[TopicPartition, int], deadline: float) -> None:
        """Commit ``offsets`` for the group; every partition's own error is checked (brokers report
        a group with members per partition, and the call itself still succeeds)."""
        if not offsets:
            return
        partitions = [ClientPartition(tp.topic, tp.partition, offset) for tp, offset in offsets.items()]

        def run(timeout_s: float) -> None:
            request = [ConsumerGroupTopicPartitions(self.group, partitions)]
            futures = self.client.alter_consumer_group_offsets(request, request_timeout=timeout_s)
            result = futures[self.group].result(timeout=timeout_s + 1)
            for tp in result.topic_partitions or []:
                if tp.error is not None:
                    raise KafkaException(tp.error)

        self._call("alter the offsets", deadline, run)

    def delete_group(self, deadline: float) -> None:
        """Delete the group and so all its offsets; an unknown group is already deleted."""

        def run(timeout_s: float) -> None:
            futures = self.client.delete_consumer_groups([self.group], request_timeout=timeout_s)
            try:
                futures[self.group].result(timeout=timeout_s + 1)
            except KafkaException as e:
                if _code(e) != KafkaError.GROUP_ID_NOT_FOUND:
                    raise

        self._call("delete the offsets", deadline, run)
