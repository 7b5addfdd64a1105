"""Pure helpers of the embedded clusters: record specs, names, waiting and capability bookkeeping."""

from __future__ import annotations

import time

import pytest

from embedded_kafka import BrokerCapabilities, ExternalKafkaCluster, unique_name, wait_for
from embedded_kafka.cluster import _produce_kwargs
from embedded_kafka.probing import CAPABILITIES, TANSU_GAPS, _Result, capability_skip_reason


def test_record_spec_shorthands_and_full_dicts() -> None:
    assert _produce_kwargs(b"v") == {"value": b"v"}
    assert _produce_kwargs("s") == {"value": "s"}
    assert _produce_kwargs(None) == {"value": None}
    full = _produce_kwargs({"key": b"k", "value": None, "headers": {"a": b"1"}, "timestamp": 5.0, "partition": "2"})
    assert full == {"key": b"k", "value": None, "headers": [("a", b"1")], "timestamp": 5, "partition": 2}
    assert _produce_kwargs({"headers": [("h", None), ("h", b"x")]})["headers"] == [("h", None), ("h", b"x")]
    assert "key" not in _produce_kwargs({"value": b"v", "key": None})


def test_record_spec_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="unknown record keys \\['valeu'\\]"):
        _produce_kwargs({"valeu": b"typo"})


def test_unique_names_differ_and_keep_the_prefix() -> None:
    names = {unique_name("topic") for _ in range(100)}
    assert len(names) == 100
    assert all(n.startswith("topic-") for n in names)


def test_wait_for_returns_the_truthy_value() -> None:
    calls = iter([0, None, "done"])
    assert wait_for(lambda: next(calls), timeout=5, interval=0.001) == "done"


def test_wait_for_times_out_with_the_message() -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="never"):
        wait_for(lambda: False, timeout=0.05, interval=0.01, message="never")
    elapsed = time.monotonic() - started
    # at least its timeout; the upper bound is loose (load delays each 10 ms nap), a wait_for that
    # ignored its timeout would never return at all
    assert 0.05 <= elapsed < 30


def _cluster_with(results: dict[str, tuple[bool, str]]) -> ExternalKafkaCluster:
    """A cluster whose capability answers are preset, so nothing is probed."""
    cluster = ExternalKafkaCluster("X", "unused:9092")
    caps = BrokerCapabilities(cluster)
    for name, (ok, why) in results.items():
        caps._results[name] = _Result(ok, why)
    cluster._capabilities = caps
    return cluster


def test_skip_reason_names_cluster_capability_and_reason() -> None:
    good = _cluster_with({"create_partitions": (True, "works")})
    bad = _cluster_with({"create_partitions": (False, "not advertised")})
    assert capability_skip_reason([good], ["create_partitions"]) is None
    reason = capability_skip_reason([good, bad], ["create_partitions"])
    assert reason == "cluster 'X' lacks create_partitions: not advertised"


def test_unknown_capability_is_rejected_before_probing() -> None:
    caps = BrokerCapabilities(ExternalKafkaCluster("X", "unused:9092"))
    with pytest.raises(ValueError, match="unknown broker capability 'acls'"):
        caps.supports("acls")


def test_every_capability_has_a_tansu_note() -> None:
    assert set(TANSU_GAPS) == set(CAPABILITIES)
    assert all("broker-notes.md" in why for why in TANSU_GAPS.values())
