"""Connect's group sub-protocol: the bytes workers put in JoinGroup metadata and SyncGroup assignments.

Byte-compatible with Kafka's ``ConnectProtocol`` (V0, protocol name ``default``, eager) and
``IncrementalCooperativeConnectProtocol`` (V1 ``compatible`` and V2 ``sessioned``, KIP-415/KIP-507),
so Python and Java workers can share one Connect group. All integers are big-endian; Kafka's
``STRING`` is an int16 length plus UTF-8, ``NULLABLE_BYTES`` an int32 length (-1 = null) plus bytes,
an array an int32 count (-1 = null) plus its elements::

    Subscription V0        version:int16  url:string  config-offset:int64
    Subscription V1/V2     version:int16  url:string  config-offset:int64  allocation:nullable_bytes
                           (allocation = the worker's current assignment, itself a V1/V2 assignment)
    Assignment V0          version:int16  error:int16 leader:string leader-url:string config-offset:int64
                           assignment:[connector:string tasks:[int32]]
    Assignment V1/V2       ... as V0 ... revoked:[connector:string tasks:[int32]] (nullable)  delay:int32

Task id -1 (:data:`CONNECTOR_TASK`) in a ``tasks`` array stands for the connector instance itself.
V1/V2 readers tolerate missing trailing fields (V0 bytes decode as V1 with no revocations and no
delay); V0 readers ignore trailing bytes (so V1/V2 bytes decode as V0). Versions above 2 are read as
V2, as Kafka does, so newer workers can still join.

Ordering: Kafka writes a worker's assigned connectors in ``java.util.HashSet`` order, which depends on
the JDK; the order carries no meaning, and we write them in the order given. Everything else
(revocations, tasks) is written in the same order as Kafka.

Pure: no I/O, no Kafka client.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from connect_core.model import ConnectorTaskId

CONNECT_PROTOCOL_V0 = 0
CONNECT_PROTOCOL_V1 = 1
CONNECT_PROTOCOL_V2 = 2
CONNECTOR_TASK = -1

NO_ERROR = 0
CONFIG_MISMATCH = 1  # the leader was behind the config log: members read to its end and rejoin


class SchemaError(ValueError):
    """Bytes that do not follow Connect's group protocol (Kafka's ``SchemaException``)."""


class ConnectProtocolCompatibility(enum.Enum):
    """``connect.protocol``: which sub-protocols a worker offers, by config name.

    ``value`` is the config name; :attr:`protocol` the name on the wire; :attr:`version` the header.
    """

    EAGER = "eager"
    COMPATIBLE = "compatible"
    SESSIONED = "sessioned"

    @property
    def protocol(self) -> str:
        return _WIRE_NAMES[self]

    @property
    def version(self) -> int:
        return _VERSIONS[self]

    @classmethod
    def compatibility(cls, name: str) -> ConnectProtocolCompatibility:
        """By config name, case-insensitive (``connect.protocol=Sessioned`` works as in Java)."""
        for mode in cls:
            if mode.value == name.strip().lower():
                return mode
        raise ValueError(f"Unknown Connect protocol compatibility mode: {name}")

    @classmethod
    def from_protocol(cls, protocol: str) -> ConnectProtocolCompatibility:
        """By wire name (``default``, ``compatible``, ``sessioned``), case-insensitive."""
        for mode in cls:
            if mode.protocol == protocol.lower():
                return mode
        raise ValueError(f"Not found Connect protocol compatibility mode for protocol: {protocol}")

    @classmethod
    def from_version(cls, version: int) -> ConnectProtocolCompatibility:
        for mode in cls:
            if mode.version == version:
                return mode
        raise ValueError(f"Unknown Connect protocol version: {version}")


_WIRE_NAMES = {
    ConnectProtocolCompatibility.EAGER: "default",
    ConnectProtocolCompatibility.COMPATIBLE: "compatible",
    ConnectProtocolCompatibility.SESSIONED: "sessioned",
}
_VERSIONS = {
    ConnectProtocolCompatibility.EAGER: CONNECT_PROTOCOL_V0,
    ConnectProtocolCompatibility.COMPATIBLE: CONNECT_PROTOCOL_V1,
    ConnectProtocolCompatibility.SESSIONED: CONNECT_PROTOCOL_V2,
}


# ----------------------------------------------------------------------------- values


@dataclass(frozen=True)
class ExtendedAssignment:
    """One worker's assignment (Kafka's ``ExtendedAssignment``; V0 ones have no revocations or delay).

    In a SyncGroup assignment of the cooperative protocols, ``connectors``/``tasks`` are only what is
    *newly* assigned; the coordinator adds what the worker already ran (minus ``revoked_*``) before
    handing it to the listener, so listeners always see the complete assignment.
    """

    version: int
    error: int
    leader: str | None
    leader_url: str | None
    offset: int
    connectors: tuple[str, ...] = ()
    tasks: tuple[ConnectorTaskId, ...] = ()
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay: int = 0

    @property
    def failed(self) -> bool:
        return self.error != NO_ERROR

    @staticmethod
    def empty() -> ExtendedAssignment:
        """The "no assignment yet" value; it is sent as a null allocation."""
        return EMPTY_ASSIGNMENT


EMPTY_ASSIGNMENT = ExtendedAssignment(CONNECT_PROTOCOL_V1, NO_ERROR, None, None, -1)


@dataclass(frozen=True)
class WorkerState:
    """What a worker tells the group when joining: its REST URL and newest config-log offset."""

    url: str
    offset: int


@dataclass(frozen=True)
class ExtendedWorkerState(WorkerState):
    """V1/V2 join metadata: also the worker's current assignment, so the leader knows who runs what."""

    assignment: ExtendedAssignment = field(default=EMPTY_ASSIGNMENT)


# ----------------------------------------------------------------------------- primitive codec


class _Writer:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int16(self, v: int) -> None:
        self.parts.append(struct.pack(">h", v))

    def int32(self, v: int) -> None:
        self.parts.append(struct.pack(">i", v))

    def int64(self, v: int) -> None:
        self.parts.append(struct.pack(">q", v))

    def string(self, v: str | None, field_name: str) -> None:
        if v is None:
            raise SchemaError(f"Error writing field '{field_name}': null value for a non-nullable string")
        data = v.encode("utf-8")
        if len(data) > 0x7FFF:
            raise SchemaError(f"Error writing field '{field_name}': string longer than 32767 bytes")
        self.int16(len(data))
        self.parts.append(data)

    def nullable_bytes(self, v: bytes | None) -> None:
        if v is None:
            self.int32(-1)
        else:
            self.int32(len(v))
            self.parts.append(v)

    def connector_assignments(self, entries: list[tuple[str, list[int]]] | None, field_name: str) -> None:
        if entries is None:
            self.int32(-1)
            return
        self.int32(len(entries))
        for connector, task_ids in entries:
            self.string(connector, field_name)
            self.int32(len(task_ids))
            for t in task_ids:
                self.int32(t)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.data = bytes(data)
        self.pos = 0

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _take(self, n: int, field_name: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise SchemaError(f"Error reading field '{field_name}': buffer underflow")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int16(self, field_name: str) -> int:
        return int(struct.unpack(">h", self._take(2, field_name))[0])

    def int32(self, field_name: str) -> int:
        return int(struct.unpack(">i", self._take(4, field_name))[0])

    def int64(self, field_name: str) -> int:
        return int(struct.unpack(">q", self._take(8, field_name))[0])

    def string(self, field_name: str) -> str:
        n = self.int16(field_name)
        if n < 0:
            raise SchemaError(f"Error reading field '{field_name}': string length {n} cannot be negative")
        try:
            return self._take(n, field_name).decode("utf-8")
        except UnicodeDecodeError as e:
            raise SchemaError(f"Error reading field '{field_name}': {e}") from None

    def nullable_bytes(self, field_name: str) -> bytes | None:
        n = self.int32(field_name)
        if n == -1:
            return None
        if n < 0:
            raise SchemaError(f"Error reading field '{field_name}': bytes size {n} cannot be negative")
        return self._take(n, field_name)

    def connector_assignments(self, field_name: str) -> list[tuple[str, list[int]]] | None:
        count = self.int32(field_name)
        if count == -1:
            return None
        if count < 0 or count > self.remaining():
            raise SchemaError(f"Error reading field '{field_name}': invalid array size {count}")
        out: list[tuple[str, list[int]]] = []
        for _ in range(count):
            connector = self.string("connector")
            n_tasks = self.int32("tasks")
            if n_tasks < 0 or n_tasks * 4 > self.remaining():
                raise SchemaError(f"Error reading field 'tasks': invalid array size {n_tasks}")
            out.append((connector, [self.int32("tasks") for _ in range(n_tasks)]))
        return out


def _read_version(r: _Reader) -> int:
    version = r.int16("version")
    if version < CONNECT_PROTOCOL_V0:
        raise SchemaError(f"Unsupported subscription version: {version}")
    return version


def _header(version: int) -> _Writer:
    w = _Writer()
    w.int16(version)
    return w


# ----------------------------------------------------------------------------- assignment maps


def _assigned_map(connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> list[tuple[str, list[int]]]:
    """Group by connector: each distinct connector first with the -1 sentinel, then tasks in order."""
    by_connector: dict[str, list[int]] = {}
    for c in connectors:
        if c not in by_connector:
            by_connector[c] = [CONNECTOR_TASK]
    for t in tasks:
        by_connector.setdefault(t.connector, []).append(t.task)
    return list(by_connector.items())


def _split_map(entries: list[tuple[str, list[int]]] | None) -> tuple[tuple[str, ...], tuple[ConnectorTaskId, ...]]:
    if not entries:
        return (), ()
    connectors: list[str] = []
    tasks: list[ConnectorTaskId] = []
    for connector, task_ids in entries:
        for t in task_ids:
            if t == CONNECTOR_TASK:
                connectors.append(connector)
            else:
                tasks.append(ConnectorTaskId(connector, t))
    return tuple(connectors), tuple(tasks)


# ----------------------------------------------------------------------------- V0 (eager, "default")


def serialize_metadata_v0(state: WorkerState) -> bytes:
    w = _header(CONNECT_PROTOCOL_V0)
    w.string(state.url, "url")
    w.int64(state.offset)
    return w.getvalue()


def deserialize_metadata_v0(data: bytes | bytearray | memoryview) -> WorkerState:
    """Read any version's metadata as V0 (trailing fields of newer versions are ignored)."""
    r = _Reader(data)
    _read_version(r)
    url = r.string("url")
    return WorkerState(url, r.int64("config-offset"))


def _write_assignment_v0_body(w: _Writer, a: ExtendedAssignment) -> None:
    w.int16(a.error)
    w.string(a.leader, "leader")
    w.string(a.leader_url, "leader-url")
    w.int64(a.offset)
    w.connector_assignments(_assigned_map(a.connectors, a.tasks), "assignment")


def serialize_assignment_v0(assignment: ExtendedAssignment) -> bytes:
    """An eager (V0) assignment; revocations and delay are not part of V0 and are dropped."""
    w = _header(CONNECT_PROTOCOL_V0)
    _write_assignment_v0_body(w, assignment)
    return w.getvalue()


def deserialize_assignment_v0(data: bytes | bytearray | memoryview) -> ExtendedAssignment:
    """Read any version's assignment as V0 (strict: the V0 fields must all be present)."""
    r = _Reader(data)
    version = _read_version(r)
    error = r.int16("error")
    leader = r.string("leader")
    leader_url = r.string("leader-url")
    offset = r.int64("config-offset")
    entries = r.connector_assignments("assignment")
    if entries is None:
        raise SchemaError("Error reading field 'assignment': null array in a V0 assignment")
    connectors, tasks = _split_map(entries)
    return ExtendedAssignment(version, error, leader, leader_url, offset, connectors, tasks)


# ----------------------------------------------------------------------------- V1/V2 (cooperative)


def serialize_assignment(assignment: ExtendedAssignment | None, sessioned: bool) -> bytes | None:
    """A V1 (or V2 when ``sessioned``) assignment; ``None`` for no/empty assignment (a null allocation)."""
    if assignment is None or assignment == EMPTY_ASSIGNMENT:
        return None
    w = _header(CONNECT_PROTOCOL_V2 if sessioned else CONNECT_PROTOCOL_V1)
    _write_assignment_v0_body(w, assignment)
    revoked: dict[str, list[int]] = {}
    for c in assignment.revoked_connectors:
        if c not in revoked:
            revoked[c] = [CONNECTOR_TASK]
    for t in assignment.revoked_tasks:
        revoked.setdefault(t.connector, []).append(t.task)
    w.connector_assignments(list(revoked.items()), "revoked")
    w.int32(assignment.delay)
    return w.getvalue()


def deserialize_assignment(data: bytes | bytearray | memoryview | None) -> ExtendedAssignment | None:
    """Read a V0, V1 or V2 assignment (missing trailing fields take their defaults); ``None`` for null."""
    if data is None:
        return None
    r = _Reader(data)
    version = _read_version(r)

    def present() -> bool:
        return r.remaining() > 0

    if not present():
        raise SchemaError("Missing value for field 'error' which has no default value.")
    error = r.int16("error")
    if not present():
        raise SchemaError("Missing value for field 'leader' which has no default value.")
    leader = r.string("leader")
    if not present():
        raise SchemaError("Missing value for field 'leader-url' which has no default value.")
    leader_url = r.string("leader-url")
    if not present():
        raise SchemaError("Missing value for field 'config-offset' which has no default value.")
    offset = r.int64("config-offset")
    assigned = r.connector_assignments("assignment") if present() else None
    revoked = r.connector_assignments("revoked") if present() else None
    delay = r.int32("delay") if present() else 0
    connectors, tasks = _split_map(assigned)
    revoked_connectors, revoked_tasks = _split_map(revoked)
    return ExtendedAssignment(
        version, error, leader, leader_url, offset, connectors, tasks, revoked_connectors, revoked_tasks, delay
    )


def serialize_metadata(state: ExtendedWorkerState, sessioned: bool) -> bytes:
    """V1 (or V2 when ``sessioned``) join metadata carrying the worker's current assignment."""
    w = _header(CONNECT_PROTOCOL_V2 if sessioned else CONNECT_PROTOCOL_V1)
    w.string(state.url, "url")
    w.int64(state.offset)
    w.nullable_bytes(serialize_assignment(state.assignment, sessioned))
    return w.getvalue()


def deserialize_metadata(data: bytes | bytearray | memoryview) -> ExtendedWorkerState:
    """Read V0, V1 or V2 join metadata; a V0 worker (or a null allocation) has the empty assignment."""
    r = _Reader(data)
    _read_version(r)
    url = r.string("url")
    offset = r.int64("config-offset")
    allocation = r.nullable_bytes("allocation") if r.remaining() > 0 else None
    assignment = deserialize_assignment(allocation)
    return ExtendedWorkerState(url, offset, assignment if assignment is not None else EMPTY_ASSIGNMENT)


def metadata_request(
    state: ExtendedWorkerState, compatibility: ConnectProtocolCompatibility
) -> list[tuple[str, bytes]]:
    """The (protocol name, metadata) pairs a worker offers in JoinGroup, most preferred first."""
    eager = (ConnectProtocolCompatibility.EAGER.protocol, serialize_metadata_v0(state))
    if compatibility is ConnectProtocolCompatibility.EAGER:
        return [eager]
    out: list[tuple[str, bytes]] = []
    if compatibility is ConnectProtocolCompatibility.SESSIONED:
        out.append((ConnectProtocolCompatibility.SESSIONED.protocol, serialize_metadata(state, True)))
    out.append((ConnectProtocolCompatibility.COMPATIBLE.protocol, serialize_metadata(state, False)))
    out.append(eager)
    return out


def serialize_assignment_for(protocol_version: int, assignment: ExtendedAssignment) -> bytes:
    """The leader's SyncGroup bytes for one member under the group's chosen protocol version."""
    if protocol_version == CONNECT_PROTOCOL_V0:
        return serialize_assignment_v0(assignment)
    data = serialize_assignment(assignment, protocol_version >= CONNECT_PROTOCOL_V2)
    if data is None:  # only the EMPTY sentinel serialises to null; the leader never assigns it
        raise SchemaError("cannot send the empty sentinel assignment to a member")
    return data
