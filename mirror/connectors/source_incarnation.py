"""Which incarnation of a source topic a stored position belongs to, and what to do when it changed.

Why: a source topic deleted and recreated under the same name restarts its offsets at 0. A stored
position of the old incarnation then means nothing for the new one: resuming there skips the new
records below it (or waits forever for offsets the new topic will reach much later), and offset
syncs of the two incarnations would mix. Offsets alone cannot tell the two apart (the new topic may
already hold more records than the old position), topic ids can.

The topic id travels with the stored source offset, as an extra entry of the Connect offset value
(``{"offset": 41, "mm2.topic.id": "..."}``; Connect allows only primitive values there): the
source-partition key is unchanged and Java MirrorMaker reads only ``offset`` from that map, so both
still read each other's offsets. When a change was handled, ``mm2.recreated`` (a JSON string) keeps
the event, so that ``mm2 status`` shows it per partition for as long as the partition is mirrored.

Pure logic: no client is imported; the task looks the topic ids up and applies the decision.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from connect_core.api.errors import ConnectError
from mirror.client.formats import OFFSET_KEY, TopicPartition

#: Entries of the Connect offset value that carry the incarnation (Java MM2 ignores them).
TOPIC_ID_KEY = "mm2.topic.id"
RECREATED_KEY = "mm2.recreated"

#: The per-flow setting and its choices.
RECREATED_ACTION_CONFIG = "source.topic.recreated.action"
#: Metric/alert reason of a handled recreation.
REASON_RECREATED = "topic-recreated"


class RecreatedAction(StrEnum):
    """What the flow does when a mirrored source topic turns out to be a new incarnation."""

    MIRROR_FROM_START = "mirror-from-start"  # default: copy the new incarnation from its first record
    FAIL = "fail"  # stop the task with one clear error until an operator acts
    KEEP_POSITION = "keep-position"  # Java MirrorMaker: resume at the old position (may skip records)

    @classmethod
    def parse(cls, value: str) -> RecreatedAction:
        try:
            return cls(value.strip().lower())
        except ValueError as e:
            choices = ", ".join(a.value for a in cls)
            raise ValueError(f"Invalid value {value!r}: must be one of {choices}") from e


class SourceTopicRecreatedError(ConnectError):
    """The ``fail`` choice: the flow's task stops instead of mirroring a new incarnation."""


@dataclass(frozen=True)
class RecreatedEvent:
    """A source partition found to belong to a new incarnation of its topic."""

    topic: str
    partition: int
    previous_topic_id: str
    topic_id: str
    previous_offset: int  # the last offset mirrored from the old incarnation
    detected_at_ms: int

    def encode(self) -> str:
        """The RECREATED_KEY value: compact JSON."""
        return json.dumps(
            {
                "previous.topic.id": self.previous_topic_id,
                "topic.id": self.topic_id,
                "previous.offset": self.previous_offset,
                "detected.at.ms": self.detected_at_ms,
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def decode(cls, topic: str, partition: int, raw: Any) -> RecreatedEvent | None:
        """The event stored in an offset value, or None when there is none (or it is unreadable)."""
        if not isinstance(raw, str):
            return None
        try:
            data = json.loads(raw)
            return cls(
                topic,
                partition,
                str(data["previous.topic.id"]),
                str(data["topic.id"]),
                int(data["previous.offset"]),
                int(data["detected.at.ms"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    def describe(self, flow: str, action: RecreatedAction = RecreatedAction.MIRROR_FROM_START) -> str:
        """The one ERROR line of the event: flow, topic, partition, offsets and count."""
        head = (
            f"{flow}: source topic {self.topic} was deleted and recreated (topic id {self.previous_topic_id} -> "
            f"{self.topic_id}); partition {self.partition}: the old incarnation was mirrored through offset "
            f"{self.previous_offset} ({self.previous_offset + 1} records)"
        )
        if action is RecreatedAction.KEEP_POSITION:
            return (
                f"{head}; {RECREATED_ACTION_CONFIG}={action.value}: resuming at offset {self.previous_offset + 1} "
                f"of the new incarnation, its {self.previous_offset + 1} records below it are never mirrored"
            )
        return (
            f"{head}; the new incarnation is mirrored from its start into the same remote topic, offset syncs "
            "and mappings of the old incarnation are not used for it"
        )


@dataclass(frozen=True)
class StartDecision:
    """Where a partition starts and what its records carry in their offset value."""

    position: int | None  # the offset to start at; None: no stored position (auto.offset.reset applies)
    extra: dict[str, Any] | None  # entries added to every offset value (None: the topic id is unknown)
    event: RecreatedEvent | None = None  # a recreation found now
    from_beginning: bool = False  # start at the partition's log start (a new incarnation)


def incarnation_entries(offset_value: Mapping[str, Any] | None) -> dict[str, Any]:
    """The incarnation entries of a stored offset value ({} when absent: written by Java MM2 or a backfill)."""
    if offset_value is None:
        return {}
    return {k: offset_value[k] for k in (TOPIC_ID_KEY, RECREATED_KEY) if isinstance(offset_value.get(k), str)}


def decide_start(
    tp: TopicPartition,
    offset_value: Mapping[str, Any] | None,
    topic_id: str | None,
    action: RecreatedAction,
    now_ms: int | None = None,
) -> StartDecision:
    """Where the task resumes ``tp``, given its stored offset value and the source topic's id now.

    * no stored position: start per auto.offset.reset, remember the id;
    * no id stored (older writer) or none known now: resume at the position (nothing to compare);
    * same id: resume at the position, keep any earlier event on record;
    * another id: a new incarnation. ``mirror-from-start`` starts at 0 and records the event;
      ``keep-position`` resumes where the old one stopped (Java's behaviour) and records it too;
      ``fail`` raises :class:`SourceTopicRecreatedError`.
    """
    offset = _offset(offset_value)
    stored = incarnation_entries(offset_value)
    current = {TOPIC_ID_KEY: topic_id} if topic_id else None
    if offset < 0:
        return StartDecision(None, current)
    position = offset + 1
    previous_id = stored.get(TOPIC_ID_KEY)
    if current is None or not previous_id:
        return StartDecision(position, current if current is not None else (stored or None))
    if previous_id == topic_id:
        return StartDecision(position, {**current, **stored})
    event = RecreatedEvent(
        tp.topic,
        tp.partition,
        previous_id,
        str(topic_id),
        offset,
        int(time.time() * 1000) if now_ms is None else now_ms,
    )
    if action is RecreatedAction.FAIL:
        raise SourceTopicRecreatedError(
            f"Source topic {tp.topic} was deleted and recreated (topic id {previous_id} -> {topic_id}); partition "
            f"{tp.partition} was mirrored through offset {offset} of the old incarnation. The flow is set to "
            f"{RECREATED_ACTION_CONFIG}=fail: nothing is mirrored until an operator decides (set it to "
            f"{RecreatedAction.MIRROR_FROM_START.value} to mirror the new incarnation from its start, or reset the "
            "flow's source offsets) and restarts the task"
        )
    marked = {**current, RECREATED_KEY: event.encode()}
    if action is RecreatedAction.KEEP_POSITION:
        return StartDecision(position, marked, event)
    return StartDecision(None, marked, event, from_beginning=True)


def _offset(offset_value: Mapping[str, Any] | None) -> int:
    if offset_value is None:
        return -1
    raw = offset_value.get(OFFSET_KEY)
    if raw is None or isinstance(raw, bool):
        return -1
    try:
        return int(raw)
    except (TypeError, ValueError):
        return -1


__all__ = [
    "REASON_RECREATED",
    "RECREATED_ACTION_CONFIG",
    "RECREATED_KEY",
    "TOPIC_ID_KEY",
    "RecreatedAction",
    "RecreatedEvent",
    "SourceTopicRecreatedError",
    "StartDecision",
    "decide_start",
    "incarnation_entries",
]
