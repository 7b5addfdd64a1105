"""Worker/connector config definitions, override policies, topic-creation groups and error tolerance."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError, DataError, RetriableError
from connect_core.runtime.connector_config import (
    ConnectorConfig,
    SourceConnectorConfig,
    ToleranceType,
    topic_creation_group_for,
)
from connect_core.runtime.tolerance import SKIP, RetryWithToleranceOperator, Stage, ToleranceExceededError
from connect_core.runtime.worker_config import (
    SOURCE_PRODUCER_DEFAULTS,
    StandaloneConfig,
    WorkerConfig,
    admin_props,
    override_policy,
    producer_props,
)

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
BASE = {"key.converter": BYTES, "value.converter": BYTES}


def test_worker_defaults_match_kafka() -> None:
    c = WorkerConfig(BASE)
    assert c.get("bootstrap.servers") == ["localhost:9092"]
    assert c.offset_flush_interval_s == 60.0
    assert c.offset_flush_timeout_s == 5.0
    assert c.task_shutdown_timeout_s == 5.0
    assert c.topic_creation_enable is True
    assert c.topic_tracking_enable is True
    assert c.get("header.converter") == "org.apache.kafka.connect.storage.SimpleHeaderConverter"
    assert c.get("listeners") == ["http://:8083"]
    assert c.override_policy().name == "All"


def test_worker_requires_converters_and_reports_every_bad_key() -> None:
    with pytest.raises(ConfigError) as e:
        WorkerConfig({"offset.flush.interval.ms": "soon"})
    keys = {i.key for i in e.value.issues}
    assert {"key.converter", "value.converter", "offset.flush.interval.ms"} <= keys


def test_standalone_offset_file_and_unknown_keys_kept() -> None:
    c = StandaloneConfig({**BASE, "offset.storage.file.filename": "/tmp/x", "producer.linger.ms": "7"})
    assert c.offset_file == "/tmp/x"
    assert c.raw()["producer.linger.ms"] == "7"
    assert StandaloneConfig(BASE).offset_file is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("All", "All"),
        ("none", "None"),
        ("org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy", "Principal"),
    ],
)
def test_override_policy_names(name: str, expected: str) -> None:
    assert override_policy(name).name == expected


def test_override_policy_rejects_unknown_and_enforces() -> None:
    with pytest.raises(ConfigError):
        WorkerConfig({**BASE, "connector.client.config.override.policy": "Some"})
    none = override_policy("None")
    errors = [cv.errors for cv in none.validate({"linger.ms": "5"})]
    assert errors == [["The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration."]]
    principal = override_policy("Principal")
    assert principal.is_allowed("sasl.jaas.config") and not principal.is_allowed("acks")


def test_producer_props_layering_and_policy() -> None:
    worker = {**BASE, "bootstrap.servers": "b:1", "security.protocol": "SSL", "producer.linger.ms": "50",
              "consumer.fetch.min.bytes": "9"}  # fmt: skip
    props = producer_props(worker, {"producer.override.acks": "1"}, override_policy("All"), "cid")
    assert props["bootstrap.servers"] == "b:1"
    assert props["security.protocol"] == "SSL"
    assert props["linger.ms"] == "50"  # worker producer. override beats our default
    assert props["acks"] == "1"  # connector override beats everything
    assert props["enable.idempotence"] == SOURCE_PRODUCER_DEFAULTS["enable.idempotence"]
    assert "fetch.min.bytes" not in props and props["client.id"] == "cid"
    with pytest.raises(ConfigError) as e:
        producer_props(worker, {"producer.override.acks": "1"}, override_policy("None"), "cid")
    assert e.value.issues[0].key == "producer.override.acks"
    admin = admin_props({**worker, "admin.request.timeout.ms": "3"}, {}, override_policy("None"), "a")
    assert admin["request.timeout.ms"] == "3" and "linger.ms" not in admin


def test_connector_config_defaults_and_validation() -> None:
    c = ConnectorConfig({"name": "c", "connector.class": "X"})
    assert c.tasks_max == 1 and c.enforce_tasks_max
    assert c.errors_tolerance is ToleranceType.NONE
    assert c.errors_retry_timeout_ms == 0 and c.errors_retry_max_delay_ms == 60000
    with pytest.raises(ConfigError) as e:
        ConnectorConfig({"name": "", "connector.class": "X", "tasks.max": "0", "errors.tolerance": "some"})
    assert {i.key for i in e.value.issues} >= {"name", "tasks.max", "errors.tolerance"}
    with pytest.raises(ConfigError):
        ConnectorConfig({"name": "c", "connector.class": "X", "transforms": "a,a"})


def test_topic_creation_groups() -> None:
    props = {
        "name": "c",
        "connector.class": "X",
        "topic.creation.groups": "compacted,default",
        "topic.creation.default.replication.factor": "3",
        "topic.creation.default.partitions": "5",
        "topic.creation.default.include": "ignored.*",
        "topic.creation.default.retention.ms": "1000",
        "topic.creation.compacted.include": "c-.*,d-.*",
        "topic.creation.compacted.exclude": "c-x",
        "topic.creation.compacted.partitions": "1",
        "topic.creation.compacted.cleanup.policy": "compact",
    }
    conf = SourceConnectorConfig(props)
    groups = conf.topic_creation_groups()
    assert [g.name for g in groups] == ["compacted", "default"]
    compacted, default = groups
    assert (compacted.partitions, compacted.replication_factor) == (1, 3)
    assert compacted.other_configs == {"cleanup.policy": "compact"}
    assert default.other_configs == {"retention.ms": "1000"}
    assert topic_creation_group_for(groups, "c-1") is compacted
    assert topic_creation_group_for(groups, "c-x") is default  # excluded from compacted
    assert topic_creation_group_for(groups, "xc-1") is default  # full match, not search
    assert SourceConnectorConfig(props, topic_creation_enabled=False).topic_creation_groups() == []
    with pytest.raises(ConfigError) as e:
        SourceConnectorConfig({"name": "c", "connector.class": "X", "topic.creation.default.partitions": "0"})
    keys = {i.key for i in e.value.issues}
    assert keys == {"topic.creation.default.partitions", "topic.creation.default.replication.factor"}


def test_tolerance_none_fails_and_all_skips() -> None:
    none = RetryWithToleranceOperator(0, 1000, ToleranceType.NONE)
    with pytest.raises(ToleranceExceededError) as e:
        none.handle(Stage.VALUE_CONVERTER, DataError("bad"))
    assert isinstance(e.value.__cause__, DataError)
    tolerant = RetryWithToleranceOperator(0, 1000, ToleranceType.ALL)
    assert tolerant.handle(Stage.VALUE_CONVERTER, DataError("bad")) is SKIP
    assert tolerant.total_skipped == 1 and tolerant.total_failures == 1


def test_tolerance_retries_retriable_errors_until_success_or_timeout() -> None:
    clock = [0.0]
    attempts: list[int] = []

    class Op:
        def __init__(self, succeed_after: int) -> None:
            self.n = succeed_after

        def __call__(self) -> str:
            attempts.append(1)
            if len(attempts) < self.n:
                raise RetriableError("later")
            return "ok"

    import threading

    class FakeEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            clock[0] += timeout or 0
            return False

    op = RetryWithToleranceOperator(10_000, 1000, ToleranceType.NONE, stop_event=FakeEvent(), clock=lambda: clock[0])
    assert op.handle(Stage.TRANSFORMATION, RetriableError("x"), Op(3)) == "ok"
    assert op.total_retries == 3 and op.total_failures == 0
    attempts.clear()
    clock[0] = 0.0
    op2 = RetryWithToleranceOperator(2_000, 1000, ToleranceType.ALL, stop_event=FakeEvent(), clock=lambda: clock[0])
    assert op2.handle(Stage.TRANSFORMATION, RetriableError("x"), Op(1000)) is SKIP
    assert 2.0 <= clock[0] <= 2.01  # backoff 0.3, 0.6, then capped by the deadline
    no_retry = RetryWithToleranceOperator(0, 1000, ToleranceType.NONE)
    with pytest.raises(ToleranceExceededError):
        no_retry.handle(Stage.TRANSFORMATION, RetriableError("x"), Op(1))
