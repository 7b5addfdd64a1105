"""KIP-875 for sink connectors: a sink's offsets are its consumer group's committed offsets.

Over REST they look like Java's: partition ``{"kafka_topic": t, "kafka_partition": p}``, offset
``{"kafka_offset": n}``. Reading them needs no state; altering or resetting them (the connector
STOPPED, its group without members) goes through the connector's ``alter_offsets`` hook first, then
to the group. Validation messages and error bodies are those Java's runtime gives, so tools written
against a Java worker read ours the same way.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from connect_core.api.connector import SinkConnector
from connect_core.api.errors import BadRequestError, ConnectError
from connect_core.kafka.group_offsets import GroupActiveError
from connect_core.model import TopicPartition

log = logging.getLogger(__name__)

KAFKA_TOPIC_KEY = "kafka_topic"
KAFKA_PARTITION_KEY = "kafka_partition"
KAFKA_OFFSET_KEY = "kafka_offset"

_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1

_NOT_STOPPED = (
    "Failed to {verb} consumer group offsets for connector {name} either because its tasks haven't stopped "
    "completely yet or the connector was resumed before the request to {verb} its offsets could be successfully "
    "completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't "
    "eventually succeed, the Connect cluster may need to be restarted to get rid of the zombie sink tasks."
)


class GroupAdmin(Protocol):
    """What modifying a sink's offsets needs of its group (``connect_core.kafka.group_offsets``)."""

    def committed(self, deadline: float) -> dict[TopicPartition, int]: ...

    def require_inactive(self, deadline: float) -> None: ...

    def alter(self, offsets: Mapping[TopicPartition, int], deadline: float) -> None: ...

    def delete_group(self, deadline: float) -> None: ...


def _java_text(value: Any) -> str:
    """The value as Java's String.valueOf shows it in a message (JSON null/true/false, numbers as given)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _parse_integer(value: Any, maximum: int) -> int | None:
    """An integer given as a JSON number or a string of digits (Java accepts both), else None."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    text = str(value)
    if not _INTEGER.fullmatch(text):
        return None
    number = int(text)
    return number if -maximum - 1 <= number <= maximum else None


def parse_sink_offsets(
    offsets: Iterable[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]],
) -> dict[TopicPartition, int | None]:
    """REST partitions/offsets as Kafka partitions and offsets (None = reset); BadRequestError says what
    is wrong. A partition named twice takes the later offset."""
    out: dict[TopicPartition, int | None] = {}
    for partition, offset in offsets:
        if partition is None:
            raise BadRequestError("The partition for a sink connector offset cannot be null or missing")
        if KAFKA_TOPIC_KEY not in partition or KAFKA_PARTITION_KEY not in partition:
            raise BadRequestError(
                f"The partition for a sink connector offset must contain the keys '{KAFKA_TOPIC_KEY}' and "
                f"'{KAFKA_PARTITION_KEY}'"
            )
        topic, number = partition[KAFKA_TOPIC_KEY], partition[KAFKA_PARTITION_KEY]
        if topic is None:
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        if number is None:
            raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
        parsed_partition = _parse_integer(number, _INT32_MAX)
        if parsed_partition is None:
            raise BadRequestError(
                f"Failed to parse the following Kafka partition value in the provided offsets: '{_java_text(number)}'. "
                "Partition values for sink connectors need to be integers."
            )
        if parsed_partition < 0:  # Java leaves this to the broker; the request is what is wrong
            raise BadRequestError(f"Kafka partitions may not be negative: {parsed_partition}")
        tp = TopicPartition(_java_text(topic), parsed_partition)
        if offset is None:
            out[tp] = None
            continue
        if KAFKA_OFFSET_KEY not in offset:
            raise BadRequestError(
                f"The offset for a sink connector should either be null or contain the key '{KAFKA_OFFSET_KEY}'"
            )
        value = offset[KAFKA_OFFSET_KEY]
        parsed_offset = _parse_integer(value, _INT64_MAX)
        if parsed_offset is None:
            raise BadRequestError(
                f"Failed to parse the following Kafka offset value in the provided offsets: '{_java_text(value)}'. "
                "Offset values for sink connectors need to be integers."
            )
        if parsed_offset < 0:  # Java fails on it later, with a 500 that does not say why
            raise BadRequestError(f"Kafka offsets may not be negative: {parsed_offset} for partition {tp}")
        out[tp] = parsed_offset
    return out


def connector_offsets(committed: Mapping[TopicPartition, int]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The group's committed offsets in the REST shape, ordered by topic and partition."""
    return [
        ({KAFKA_TOPIC_KEY: tp.topic, KAFKA_PARTITION_KEY: tp.partition}, {KAFKA_OFFSET_KEY: offset})
        for tp, offset in sorted(committed.items())
    ]


def read_sink_offsets(name: str, admin: GroupAdmin, timeout_s: float) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """GET /connectors/{name}/offsets of a sink."""
    try:
        return connector_offsets(admin.committed(time.monotonic() + timeout_s))
    except ConnectError as e:
        log.error("Failed to retrieve consumer group offsets for sink connector %s: %s", name, e)
        raise ConnectError(f"Failed to retrieve consumer group offsets for sink connector {name}: {e}") from e


def _call_hook(name: str, connector: SinkConnector, config: dict[str, str],
               offsets: dict[TopicPartition, int | None]) -> bool:  # fmt: skip
    try:
        return bool(connector.alter_offsets(config, offsets))
    except NotImplementedError as e:
        raise ConnectError(
            f"Failed to modify offsets for connector {name} because it doesn't support external modification of offsets"
        ) from e
    except ConnectError:
        raise
    except Exception as e:
        log.error("Sink connector %s failed in alter_offsets", name, exc_info=True)
        raise ConnectError(f"Failed to modify offsets for sink connector {name}") from e


def success_message(handled: bool, is_reset: bool) -> str:
    """Java's answer to a successful PATCH/DELETE: a hook that did not handle it may keep its own offsets."""
    kind = "reset" if is_reset else "altered"
    if handled:
        return f"The offsets for this connector have been {kind} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {kind} successfully. However, if "
        f"this connector manages offsets externally, they will need to be manually {kind} in the system that "
        "the connector uses."
    )


def modify_sink_offsets(
    name: str,
    connector: SinkConnector,
    config: dict[str, str],
    requested: list[tuple[dict[str, Any], dict[str, Any] | None]] | None,
    admin: GroupAdmin,
    timeout_s: float,
) -> str:
    """PATCH (``requested``) or DELETE (None) a stopped sink's offsets; returns Java's success message.

    Partitions PATCHed to a null offset lose their offset. Kafka's way (OffsetDelete) is missing on
    some Kafka-protocol brokers, and confluent-kafka has no call for it; what all do is delete the whole group and
    commit again the offsets that stay. That is safe here only because the group was just seen without
    members (the connector is STOPPED), and it is what Java itself does for a full reset. Should the
    worker die between the two steps, the kept partitions restart from ``auto.offset.reset``. (Some brokers
    drop the connection of the first commit to a group they just deleted: the commit is retried.)
    """
    deadline = time.monotonic() + timeout_s
    is_reset = requested is None
    if requested is None:
        try:
            wanted: dict[TopicPartition, int | None] = dict.fromkeys(admin.committed(deadline))
        except ConnectError as e:
            log.error("Listing the offsets of sink connector %s to reset them: %s", name, e)
            raise ConnectError(
                f"Failed to list offsets prior to resetting offsets for sink connector {name}: {e}"
            ) from e
    else:
        wanted = parse_sink_offsets(requested)
    handled = _call_hook(name, connector, config, wanted)
    try:
        _write(admin, wanted, is_reset, deadline)
    except GroupActiveError as e:
        log.error("Modifying the offsets of sink connector %s: %s", name, e)
        raise ConnectError(_NOT_STOPPED.format(verb="reset" if is_reset else "alter", name=name)) from e
    except ConnectError as e:
        # Java's two texts differ ("for connector" / "for sink connector"): kept, so clients match them
        what = (
            "reset consumer group offsets for sink connector" if is_reset
            else "alter consumer group offsets for connector"
        )  # fmt: skip
        log.error("Failed to %s %s: %s", what, name, e)
        raise ConnectError(f"Failed to {what} {name}: {e}") from e
    return success_message(handled, is_reset)


def _write(admin: GroupAdmin, wanted: dict[TopicPartition, int | None], is_reset: bool, deadline: float) -> None:
    admin.require_inactive(deadline)
    to_alter = {tp: offset for tp, offset in wanted.items() if offset is not None}
    if is_reset:
        admin.delete_group(deadline)
    elif len(to_alter) < len(wanted):
        kept = {tp: offset for tp, offset in admin.committed(deadline).items() if tp not in wanted}
        admin.delete_group(deadline)
        admin.alter({**kept, **to_alter}, deadline)
    else:
        admin.alter(to_alter, deadline)
