"""Connect's group sub-protocol bytes: exact layouts (built here independently with struct) and the
cross-version reads Kafka's ConnectProtocolCompatibilityTest checks."""

from __future__ import annotations

import struct

import pytest

from connect_core.herder.distributed.protocol import (
    CONFIG_MISMATCH,
    CONNECT_PROTOCOL_V0,
    CONNECT_PROTOCOL_V1,
    CONNECT_PROTOCOL_V2,
    EMPTY_ASSIGNMENT,
    NO_ERROR,
    ConnectProtocolCompatibility,
    ExtendedAssignment,
    ExtendedWorkerState,
    SchemaError,
    WorkerState,
    deserialize_assignment,
    deserialize_assignment_v0,
    deserialize_metadata,
    deserialize_metadata_v0,
    metadata_request,
    serialize_assignment,
    serialize_assignment_for,
    serialize_assignment_v0,
    serialize_metadata,
    serialize_metadata_v0,
)
from connect_core.model import ConnectorTaskId

LEADER_URL = "leaderUrl:8083"
T1_0 = ConnectorTaskId("connector1", 0)
T2_0 = ConnectorTaskId("connector2", 0)
T3_0 = ConnectorTaskId("connector3", 0)


def s(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def conn_array(entries: list[tuple[str, list[int]]] | None) -> bytes:
    if entries is None:
        return struct.pack(">i", -1)
    out = struct.pack(">i", len(entries))
    for name, ids in entries:
        out += s(name) + struct.pack(">i", len(ids)) + b"".join(struct.pack(">i", i) for i in ids)
    return out


def assignment(version: int = CONNECT_PROTOCOL_V1, **kw: object) -> ExtendedAssignment:
    base: dict[str, object] = dict(version=version, error=NO_ERROR, leader="leader", leader_url=LEADER_URL, offset=1)
    base.update(kw)
    return ExtendedAssignment(**base)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- exact bytes


def test_v0_metadata_bytes() -> None:
    assert serialize_metadata_v0(WorkerState("http://w1:8083/", 42)) == (
        struct.pack(">h", 0) + s("http://w1:8083/") + struct.pack(">q", 42)
    )


def test_v1_metadata_with_no_assignment_has_null_allocation() -> None:
    state = ExtendedWorkerState("http://w1:8083/", -1)
    assert serialize_metadata(state, sessioned=False) == (
        struct.pack(">h", 1) + s("http://w1:8083/") + struct.pack(">q", -1) + struct.pack(">i", -1)
    )
    assert serialize_metadata(state, sessioned=True)[:2] == struct.pack(">h", 2)


def test_v2_assignment_bytes_and_metadata_embedding() -> None:
    a = assignment(
        CONNECT_PROTOCOL_V2,
        offset=7,
        connectors=("c1",),
        tasks=(ConnectorTaskId("c1", 0), ConnectorTaskId("c2", 3)),
        revoked_connectors=("c3",),
        revoked_tasks=(ConnectorTaskId("c3", 1), ConnectorTaskId("c4", 0)),
        delay=1500,
    )
    expected = (
        struct.pack(">hh", 2, 0)
        + s("leader")
        + s(LEADER_URL)
        + struct.pack(">q", 7)
        + conn_array([("c1", [-1, 0]), ("c2", [3])])
        + conn_array([("c3", [-1, 1]), ("c4", [0])])
        + struct.pack(">i", 1500)
    )
    assert serialize_assignment(a, sessioned=True) == expected
    meta = serialize_metadata(ExtendedWorkerState("u", 7, a), sessioned=True)
    assert meta == struct.pack(">h", 2) + s("u") + struct.pack(">q", 7) + struct.pack(">i", len(expected)) + expected
    assert deserialize_metadata(meta) == ExtendedWorkerState("u", 7, a)


def test_v0_assignment_bytes_drop_revocations_and_delay() -> None:
    a = assignment(CONNECT_PROTOCOL_V0, connectors=("c1",), tasks=(T2_0,), revoked_connectors=("x",), delay=9)
    assert serialize_assignment_v0(a) == (
        struct.pack(">hh", 0, 0)
        + s("leader")
        + s(LEADER_URL)
        + struct.pack(">q", 1)
        + conn_array([("c1", [-1]), ("connector2", [0])])
    )


def test_empty_assignment_serialises_to_null() -> None:
    assert serialize_assignment(None, sessioned=True) is None
    assert serialize_assignment(EMPTY_ASSIGNMENT, sessioned=False) is None
    assert deserialize_assignment(None) is None


def test_utf8_names_and_multibyte_lengths() -> None:
    a = assignment(connectors=("caf\u00e9-\u4e2d",), tasks=(ConnectorTaskId("caf\u00e9-\u4e2d", 2),))
    data = serialize_assignment(a, sessioned=False)
    assert data is not None
    assert s("caf\u00e9-\u4e2d") in data  # length counts UTF-8 bytes, not characters
    assert deserialize_assignment(data) == a


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("sessioned", [False, True])
def test_extended_assignment_round_trip(sessioned: bool) -> None:
    version = CONNECT_PROTOCOL_V2 if sessioned else CONNECT_PROTOCOL_V1
    a = assignment(
        version,
        error=CONFIG_MISMATCH,
        offset=2**40,
        connectors=("a", "b"),
        tasks=(ConnectorTaskId("a", 0), ConnectorTaskId("b", 1), ConnectorTaskId("z", 5)),
        revoked_connectors=("q",),
        revoked_tasks=(ConnectorTaskId("q", 0),),
        delay=300000,
    )
    out = deserialize_assignment(serialize_assignment(a, sessioned))
    assert out == a
    assert out is not None and out.failed


def test_metadata_round_trip_keeps_previous_assignment() -> None:
    prev = assignment(CONNECT_PROTOCOL_V1, connectors=("c",), tasks=(ConnectorTaskId("c", 0),))
    state = ExtendedWorkerState("http://w:8083", 12, prev)
    assert deserialize_metadata(serialize_metadata(state, sessioned=False)) == state


# ----------------------------------------------------------- cross-version (Kafka's compatibility test)


def empty_state(version: int) -> ExtendedWorkerState:
    return ExtendedWorkerState(LEADER_URL, 1, assignment(version))


def test_eager_to_eager_metadata() -> None:
    assert deserialize_metadata_v0(serialize_metadata_v0(WorkerState(LEADER_URL, 1))) == WorkerState(LEADER_URL, 1)


@pytest.mark.parametrize("sessioned", [False, True])
def test_coop_and_sessioned_metadata_read_by_coop_and_eager(sessioned: bool) -> None:
    version = CONNECT_PROTOCOL_V2 if sessioned else CONNECT_PROTOCOL_V1
    meta = serialize_metadata(empty_state(version), sessioned)
    coop = deserialize_metadata(meta)
    assert (coop.url, coop.offset) == (LEADER_URL, 1)
    assert coop.assignment.version == version
    assert deserialize_metadata_v0(meta) == WorkerState(LEADER_URL, 1)


def test_eager_metadata_read_by_coop_has_empty_assignment() -> None:
    state = deserialize_metadata(serialize_metadata_v0(WorkerState(LEADER_URL, 1)))
    assert (state.url, state.offset) == (LEADER_URL, 1)
    assert state.assignment == EMPTY_ASSIGNMENT


def test_eager_to_eager_assignment() -> None:
    a = assignment(CONNECT_PROTOCOL_V0, connectors=("connector1", "connector3"), tasks=(T2_0,))
    out = deserialize_assignment_v0(serialize_assignment_v0(a))
    assert not out.failed and out.leader == "leader" and out.offset == 1
    assert out.connectors == ("connector1", "connector3")
    assert out.tasks == (T2_0,)


def test_coop_assignment_read_by_eager_and_eager_read_by_coop() -> None:
    coop = assignment(CONNECT_PROTOCOL_V1, leader="member", connectors=("connector2",), tasks=(T1_0, T3_0))
    data = serialize_assignment(coop, sessioned=False)
    assert data is not None
    as_eager = deserialize_assignment_v0(data)  # V0 reader ignores revoked + delay
    assert (as_eager.leader, as_eager.offset, as_eager.connectors, as_eager.tasks) == (
        "member",
        1,
        ("connector2",),
        (T1_0, T3_0),
    )
    eager = assignment(CONNECT_PROTOCOL_V0, connectors=("connector1", "connector3"), tasks=(T2_0,))
    as_coop = deserialize_assignment(serialize_assignment_v0(eager))
    assert as_coop is not None
    assert as_coop.version == CONNECT_PROTOCOL_V0
    assert as_coop.connectors == ("connector1", "connector3") and as_coop.tasks == (T2_0,)
    assert as_coop.revoked_connectors == () and as_coop.revoked_tasks == () and as_coop.delay == 0


def test_null_arrays_decode_as_empty_and_newer_versions_parse() -> None:
    data = (
        struct.pack(">hh", 7, 0)  # a future protocol version is read as the newest we know
        + s("l")
        + s("u")
        + struct.pack(">q", 3)
        + conn_array(None)
        + conn_array(None)
        + struct.pack(">i", 5)
    )
    a = deserialize_assignment(data)
    assert a is not None
    assert (a.version, a.connectors, a.tasks, a.revoked_connectors, a.delay) == (7, (), (), (), 5)
    with pytest.raises(SchemaError):
        deserialize_assignment_v0(data)  # the V0 schema's assignment array is not nullable


# ----------------------------------------------------------------------------- malformed input


def test_negative_version_is_rejected() -> None:
    bad = struct.pack(">h", -1) + s("u") + struct.pack(">q", 0)
    with pytest.raises(SchemaError, match="Unsupported subscription version"):
        deserialize_metadata(bad)
    with pytest.raises(SchemaError):
        deserialize_metadata_v0(bad)


@pytest.mark.parametrize("cut", [1, 3, 5, 12])
def test_truncated_assignment_is_rejected(cut: int) -> None:
    data = serialize_assignment(assignment(connectors=("c1",)), sessioned=False)
    assert data is not None
    with pytest.raises(SchemaError):
        deserialize_assignment(data[:cut])


def test_missing_mandatory_field_is_rejected_but_trailing_optional_fields_default() -> None:
    head = struct.pack(">hh", 1, 0) + s("l") + s("u")
    with pytest.raises(SchemaError, match="config-offset"):
        deserialize_assignment(head)
    a = deserialize_assignment(head + struct.pack(">q", 9))
    assert a is not None and a.offset == 9 and a.connectors == () and a.delay == 0


def test_unencodable_values_are_rejected() -> None:
    with pytest.raises(SchemaError, match="leader"):
        serialize_assignment(assignment(leader=None), sessioned=False)
    with pytest.raises(SchemaError, match="longer than"):
        serialize_metadata_v0(WorkerState("x" * 40000, 0))
    with pytest.raises(SchemaError):
        serialize_assignment_for(CONNECT_PROTOCOL_V1, EMPTY_ASSIGNMENT)


# ----------------------------------------------------------------------------- protocol selection


def test_metadata_request_offers_protocols_in_preference_order() -> None:
    state = ExtendedWorkerState(LEADER_URL, 5)
    sessioned = metadata_request(state, ConnectProtocolCompatibility.SESSIONED)
    assert [name for name, _ in sessioned] == ["sessioned", "compatible", "default"]
    assert [struct.unpack(">h", meta[:2])[0] for _, meta in sessioned] == [2, 1, 0]
    assert [n for n, _ in metadata_request(state, ConnectProtocolCompatibility.COMPATIBLE)] == ["compatible", "default"]
    assert metadata_request(state, ConnectProtocolCompatibility.EAGER) == [("default", serialize_metadata_v0(state))]


def test_compatibility_names_and_versions() -> None:
    c = ConnectProtocolCompatibility
    assert c.compatibility("Sessioned") is c.SESSIONED
    assert c.from_protocol("default") is c.EAGER
    assert c.from_version(1) is c.COMPATIBLE
    assert [(m.protocol, m.version) for m in c] == [("default", 0), ("compatible", 1), ("sessioned", 2)]
    with pytest.raises(ValueError):
        c.compatibility("default")  # the config name is "eager"; "default" is only the wire name
    with pytest.raises(ValueError):
        c.from_version(3)
