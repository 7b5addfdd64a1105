"""Bundled transformations, predicates and the chain configured the way Connect configures it."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.records import SourceRecord
from connect_core.transforms import (
    DropHeaders,
    Filter,
    HasHeaderKey,
    InsertHeader,
    Predicate,
    RecordIsTombstone,
    RegexRouter,
    TimestampRouter,
    TopicNameMatches,
    Transformation,
    TransformationChain,
)
from connect_core.transforms.date_format import SimpleDateFormat
from connect_core.transforms.java_regex import compile_java_regex, expand_java_replacement


def rec(topic: str = "orders", value: object = b"v", headers: list | None = None, ts: int | None = 0) -> SourceRecord:
    return SourceRecord({"p": 1}, {"o": 2}, topic, 3, b"k", value, headers, ts)


def regex_router(regex: str, replacement: str) -> RegexRouter:
    t = RegexRouter()
    t.configure({"regex": regex, "replacement": replacement})
    return t


def test_protocols() -> None:
    for cls in (RegexRouter, TimestampRouter, InsertHeader, DropHeaders, Filter):
        assert isinstance(cls(), Transformation)
    for pcls in (TopicNameMatches, HasHeaderKey, RecordIsTombstone):
        assert isinstance(pcls(), Predicate)


@pytest.mark.parametrize(
    ("regex", "replacement", "topic", "expected"),
    [
        ("(.*)", "A.$1", "orders", "A.orders"),  # MirrorMaker-style prefixing
        ("(.*)-(\\d+)", "$2_$1", "abc-12", "12_abc"),
        ("(?<name>[a-z]+)\\.raw", "${name}.clean", "orders.raw", "orders.clean"),
        ("(.*)", "\\$$1", "x", "$x"),  # escaped dollar
        ("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "$10$11", "abcdefghij", "ja1"),  # $11 > groups: $1 then "1"
        ("orders", "renamed", "orders", "renamed"),
        ("ord", "renamed", "orders", "orders"),  # Java matches(): the whole topic must match
        ("\\Qa.b\\E(.*)", "x$1", "a.bc", "xc"),
    ],
)
def test_regex_router_java_semantics(regex: str, replacement: str, topic: str, expected: str) -> None:
    r = rec(topic)
    out = regex_router(regex, replacement).apply(r)
    assert out is not None and out.topic == expected
    assert (out.key, out.value, out.kafka_partition, out.timestamp) == (r.key, r.value, r.kafka_partition, r.timestamp)
    assert out.source_offset == r.source_offset
    if topic == expected:
        assert out is r


def test_regex_router_config_errors_name_the_key() -> None:
    with pytest.raises(ConfigError) as e:
        RegexRouter().configure({"regex": "(", "replacement": "x"})
    assert e.value.issues[0].key == "regex"
    with pytest.raises(ConfigError) as e:
        RegexRouter().configure({"regex": ".*"})
    assert e.value.issues[0].key == "replacement"
    with pytest.raises(ConfigError) as e:
        RegexRouter().configure({"regex": ".*", "replacement": "bad$"})
    assert e.value.issues[0].key == "replacement"
    with pytest.raises(DataError):
        regex_router("(.*)", "$2").apply(rec())


def test_java_replacement_helper() -> None:
    m = compile_java_regex("(a)(b)").fullmatch("ab")
    assert m is not None
    assert expand_java_replacement(m, "$2$1\\\\") == "ba\\"


def test_timestamp_router() -> None:
    t = TimestampRouter()
    t.configure({})
    ts = 1_700_000_000_123  # 2023-11-14T22:13:20.123Z
    out = t.apply(rec("orders", ts=ts))
    assert out is not None and out.topic == "orders-20231114"
    t.configure({"topic.format": "${timestamp}/${topic}/${topic}", "timestamp.format": "yyyy-MM-dd'T'HH:mm:ss.SSS"})
    out = t.apply(rec("o", ts=ts))
    assert out is not None and out.topic == "2023-11-14T22:13:20.123/o/o"
    with pytest.raises(DataError, match="Timestamp missing"):
        t.apply(rec(ts=None))
    with pytest.raises(ConfigError) as e:
        t.configure({"timestamp.format": "yyyy-qq"})
    assert e.value.issues[0].key == "timestamp.format"


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("yyyyMMdd", "20240305"),
        ("yy-M-d H:m:s", "24-3-5 7:8:9"),
        ("EEE, d MMM yyyy hh:mm a", "Tue, 5 Mar 2024 07:08 AM"),
        ("EEEE MMMM D", "Tuesday March 65"),
        ("'day' dd 'o''clock' ''", "day 05 o'clock '"),
        ("HH:mm:ss.SSS Z X z", "07:08:09.004 +0000 Z UTC"),
        ("k K h", "7 7 7"),
    ],
)
def test_simple_date_format(pattern: str, expected: str) -> None:
    import datetime as dt

    ms = int(dt.datetime(2024, 3, 5, 7, 8, 9, 4000, tzinfo=dt.UTC).timestamp() * 1000)
    assert SimpleDateFormat(pattern).format_millis(ms) == expected


def test_insert_and_drop_headers() -> None:
    ins = InsertHeader()
    ins.configure({"header": "origin", "value.literal": "A"})
    original_headers = [("x", b"1")]
    r = rec(headers=original_headers)
    out = ins.apply(r)
    assert out is not None and out.headers == [("x", b"1"), ("origin", "A")]
    assert original_headers == [("x", b"1")]  # not mutated
    out2 = ins.apply(rec(headers=None))
    assert out2 is not None and out2.headers == [("origin", "A")]
    drop = DropHeaders()
    drop.configure({"headers": "x, origin"})
    dropped = drop.apply(rec(headers=[("x", b"1"), ("y", None), ("origin", b"A"), ("x", b"2")]))
    assert dropped is not None and dropped.headers == [("y", None)]
    with pytest.raises(ConfigError) as e:
        DropHeaders().configure({"headers": ""})
    assert e.value.issues[0].key == "headers"
    with pytest.raises(ConfigError) as e:
        InsertHeader().configure({"header": "h"})
    assert e.value.issues[0].key == "value.literal"


def test_filter_and_predicates() -> None:
    assert Filter().apply(rec()) is None
    p = TopicNameMatches()
    p.configure({"pattern": "ord.*"})
    assert p.test(rec("orders")) and not p.test(rec("xorders"))
    with pytest.raises(ConfigError) as e:
        TopicNameMatches().configure({"pattern": ""})
    assert e.value.issues[0].key == "pattern"
    h = HasHeaderKey()
    h.configure({"name": "trace"})
    assert h.test(rec(headers=[("a", b""), ("trace", None)])) and not h.test(rec(headers=None))
    t = RecordIsTombstone()
    t.configure({})
    assert t.test(rec(value=None)) and not t.test(rec(value=b""))


CHAIN = {
    "transforms": "route, dropTombstones,tag",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": "(.*)",
    "transforms.route.replacement": "B.$1",
    "transforms.route.predicate": "notInternal",
    "transforms.route.negate": "true",
    "transforms.dropTombstones.type": "Filter",
    "transforms.dropTombstones.predicate": "tomb",
    "transforms.tag.type": "connect_core.transforms.builtin:InsertHeader",
    "transforms.tag.header": "via",
    "transforms.tag.value.literal": "mm2",
    "predicates": "notInternal,tomb",
    "predicates.notInternal.type": "TopicNameMatches",
    "predicates.notInternal.pattern": "__.*",
    "predicates.tomb.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
}


def test_chain_from_connector_config() -> None:
    chain = TransformationChain.from_config(CHAIN)
    assert len(chain) == 3 and [s.alias for s in chain.stages] == ["route", "dropTombstones", "tag"]
    out = chain.apply(rec("orders"))
    assert out is not None and out.topic == "B.orders" and out.headers == [("via", "mm2")]
    internal = chain.apply(rec("__consumer_offsets"))
    assert internal is not None and internal.topic == "__consumer_offsets"  # negated predicate skips routing
    assert chain.apply(rec("orders", value=None)) is None  # filtered: later stages never run
    chain.close()


def test_empty_chain_is_falsy_and_identity() -> None:
    chain = TransformationChain.from_config({"transforms": ""})
    r = rec()
    assert not chain and chain.apply(r) is r
    assert not TransformationChain.from_config({})


@pytest.mark.parametrize(
    ("change", "bad_key", "fragment"),
    [
        ({"transforms": "a,a", "transforms.a.type": "Filter"}, "transforms", "Duplicate alias"),
        ({"transforms": "a"}, "transforms.a.type", "Missing required configuration"),
        ({"transforms": "a", "transforms.a.type": "NoSuchTransform"}, "transforms.a.type", "could not be found"),
        ({"transforms": "a", "transforms.a.type": "TopicNameMatches"}, "transforms.a.type", "is not a transformation"),
        ({"transforms": "a", "transforms.a.type": "RegexRouter", "transforms.a.regex": "(",
          "transforms.a.replacement": "x"}, "transforms.a.regex", "regular expression"),
        ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.negate": "true"},
         "transforms.a.negate", "no config 'transforms.a.predicate'"),
        ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"},
         "transforms.a.predicate", "not listed"),
        ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "predicates": "p"},
         "predicates.p.type", "Missing required configuration"),
        ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "predicates": "p",
          "predicates.p.type": "TopicNameMatches"}, "predicates.p.pattern", "Missing required"),
        ({"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "predicates": "p",
          "predicates.p.type": "RecordIsTombstone", "transforms.a.negate": "maybe"},
         "transforms.a.negate", "true or false"),
    ],
)  # fmt: skip
def test_chain_config_errors_name_the_full_key(change: dict, bad_key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as e:
        TransformationChain.from_config(change)
    assert [i.key for i in e.value.issues] == [bad_key]
    assert fragment in str(e.value)
