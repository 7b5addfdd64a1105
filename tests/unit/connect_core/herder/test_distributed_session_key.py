"""Request signing (KIP-507) and DistributedConfig parsing, without a broker."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from connect_core.api.errors import BadRequestError, ConfigError
from connect_core.herder.distributed.herder_requests import RequestQueue
from connect_core.herder.distributed.session_key import (
    SIGNATURE_ALGORITHM_HEADER,
    SIGNATURE_HEADER,
    InternalRequestSignature,
    SessionKey,
    check_signature,
    signature_headers,
)
from connect_core.rest.errors import RestError
from connect_core.runtime.distributed_config import ConnectProtocol, DistributedConfig

BASE = {
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
}


def test_signature_is_java_compatible_hmac_of_the_body() -> None:
    key = SessionKey(b"k" * 32, "HmacSHA256", 1)
    body = b'[{"a":"b"}]'
    headers = signature_headers(key, "HmacSHA256", body)
    expected = base64.b64encode(hmac.new(b"k" * 32, body, hashlib.sha256).digest()).decode()
    assert headers == {SIGNATURE_HEADER: expected, SIGNATURE_ALGORITHM_HEADER: "HmacSHA256"}
    sig = InternalRequestSignature.from_headers(body, {k.lower(): v for k, v in headers.items()})
    assert sig is not None and sig.is_valid(key)
    check_signature(sig, ["HmacSHA256"], key)
    tampered = InternalRequestSignature.from_headers(body + b" ", headers)
    with pytest.raises(RestError) as e:
        check_signature(tampered, ["HmacSHA256"], key)
    assert e.value.status == 403


def test_signature_errors() -> None:
    key = SessionKey.generate("HmacSHA256", 256, 5)
    assert len(key.key) == 32 and "key=" not in repr(key)
    with pytest.raises(BadRequestError, match="missing required signature"):
        check_signature(None, ["HmacSHA256"], key)
    sig = InternalRequestSignature(b"x", "HmacSHA512", b"")
    with pytest.raises(BadRequestError, match="does not support"):
        check_signature(sig, ["HmacSHA256"], key)
    with pytest.raises(RestError) as e:
        check_signature(InternalRequestSignature(b"x", "HmacSHA256", b""), ["HmacSHA256"], None)
    assert e.value.status == 503
    with pytest.raises(BadRequestError):
        InternalRequestSignature.from_headers(b"", {SIGNATURE_HEADER: "AA", SIGNATURE_ALGORITHM_HEADER: "HmacMD5"})
    assert InternalRequestSignature.from_headers(b"", {}) is None
    assert SessionKey.from_map(key.to_map()) == key


def test_distributed_config_defaults_and_errors() -> None:
    c = DistributedConfig(BASE)
    assert c.connect_protocol is ConnectProtocol.SESSIONED
    assert (c.session_timeout_s, c.heartbeat_interval_s, c.rebalance_timeout_s) == (10.0, 3.0, 60.0)
    assert c.scheduled_rebalance_max_delay_ms == 300000 and c.worker_sync_timeout_s == 3.0
    with pytest.raises(ConfigError) as e:
        DistributedConfig({})
    for key in ("group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"):
        assert key in str(e.value)
    with pytest.raises(ConfigError, match=r"connect\.protocol"):
        DistributedConfig({**BASE, "connect.protocol": "bogus"})
    with pytest.raises(ConfigError, match="verification"):
        DistributedConfig({**BASE, "inter.worker.signature.algorithm": "HmacSHA512"})
    DistributedConfig({**BASE, "exactly.once.source.support": "preparing"}).check_supported()
    enabled = DistributedConfig({**BASE, "exactly.once.source.support": "enabled"})
    enabled.check_supported()
    assert enabled.exactly_once_source_enabled and enabled.exactly_once_source_support.value == "enabled"
    assert not DistributedConfig({**BASE, "exactly.once.source.support": "preparing"}).exactly_once_source_enabled
    with pytest.raises(ConfigError, match="String must be one of: disabled, preparing, enabled"):
        DistributedConfig({**BASE, "exactly.once.source.support": "on"})


def test_request_queue_orders_by_due_time_then_arrival() -> None:
    now = [0.0]
    q = RequestQueue(clock=lambda: now[0])
    ran: list[str] = []
    q.add(lambda: ran.append("late"), 5.0)
    _, first = q.add(lambda: ran.append("a"))
    assert first
    q.add(lambda: ran.append("b"))
    while (r := q.pop_due()) is not None:
        r.run()
    assert ran == ["a", "b"] and q.next_due() == 5.0
    now[0] = 5.0
    req = q.pop_due()
    assert req is not None
    req.run()
    assert ran[-1] == "late" and req.future.result() is None
