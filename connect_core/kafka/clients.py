"""confluent-kafka (librdkafka) client configs built from Connect/Java-style client properties.

Users write Java client keys (``mm2.properties``, worker configs). librdkafka shares most of them,
names a few differently, and has no equivalent for the JVM-only ones (serializers, interceptors,
``max.block.ms``...). One table here renames or drops them (with a debug log naming the key), so the
rest of the runtime never sees a Java-only key. The security keys (Java stores, JAAS) are translated by
:mod:`connect_core.kafka.security`, the one place every client of the product goes through; librdkafka's
own keys given explicitly (``ssl.ca.location``, ``sasl.username``...) win. Every config we build sets
``allow.auto.create.topics=false`` (Tansu and some Kafka setups auto-create on a named metadata
request, which would hide "topic missing" bugs and create internal topics with wrong settings).

Every client logs through Python logging (:mod:`connect_core.kafka.client_logging`).

Keys librdkafka still rejects at construction as unknown are dropped with a warning and the client
is built again (:func:`create_producer` & co.), so an unusual Java-only key never stops a worker;
an invalid *value* is a ConfigError naming the key.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from connect_core.api.errors import ConfigError
from connect_core.kafka.client_logging import RDKAFKA_LOG, watch_admin
from connect_core.kafka.errors import from_exception
from connect_core.kafka.security import SECURITY_KEYS, librdkafka_security

log = logging.getLogger(__name__)

Role = Literal["producer", "consumer", "admin"]
C = TypeVar("C")

#: Java key -> librdkafka key, where they differ.
RENAMED: dict[str, str] = {
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "max.request.size": "message.max.bytes",
}

#: JVM-only keys with no librdkafka meaning (dropped for every role).
JAVA_ONLY: frozenset[str] = frozenset(
    {
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "interceptor.classes",
        "metric.reporters",
        "metrics.num.samples",
        "metrics.recording.level",
        "metrics.sample.window.ms",
        "auto.include.jmx.reporter",
        "enable.metrics.push",
        "max.block.ms",
        "default.api.timeout.ms",
        "max.poll.records",
        "exclude.internal.topics",
        "partitioner.class",
        "partitioner.ignore.keys",
        "partitioner.adaptive.partitioning.enable",
        "partitioner.availability.timeout.ms",
        "metadata.max.idle.ms",
        "security.providers",
        "sasl.login.class",
        "sasl.login.callback.handler.class",
        "sasl.client.callback.handler.class",
        "sasl.login.connect.timeout.ms",
        "sasl.login.read.timeout.ms",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
        "sasl.login.retry.backoff.ms",
        "sasl.login.retry.backoff.max.ms",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.oauthbearer.scope.claim.name",
        "sasl.oauthbearer.sub.claim.name",
        "sasl.oauthbearer.jwks.endpoint.url",
        "sasl.oauthbearer.expected.audience",
        "sasl.oauthbearer.expected.issuer",
        "sasl.oauthbearer.clock.skew.seconds",
        "ssl.provider",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.secure.random.implementation",
        "ssl.engine.factory.class",
        "buffer.memory",
        "internal.leave.group.on.close",
        "group.protocol",
    }
)

_PRODUCER_ONLY: frozenset[str] = frozenset(
    {
        "acks",
        "retries",
        "linger.ms",
        "batch.size",
        "batch.num.messages",
        "compression.type",
        "compression.level",
        "delivery.timeout.ms",
        "request.timeout.ms",
        "enable.idempotence",
        "transactional.id",
        "transaction.timeout.ms",
        "message.max.bytes",
        "queue.buffering.max.kbytes",
        "queue.buffering.max.messages",
        "message.timeout.ms",
    }
)

_CONSUMER_ONLY: frozenset[str] = frozenset(
    {
        "group.id",
        "group.instance.id",
        "auto.offset.reset",
        "enable.auto.commit",
        "auto.commit.interval.ms",
        "isolation.level",
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "max.poll.interval.ms",
        "fetch.min.bytes",
        "fetch.max.bytes",
        "fetch.wait.max.ms",
        "max.partition.fetch.bytes",
        "partition.assignment.strategy",
        "check.crcs",
        "enable.partition.eof",
        "client.rack",
    }
)

#: Keys a worker's top-level config shares with every client it builds (Java MirrorMakerConfig copies
#: the security ones into producer./consumer./admin. the same way).
SHARED_CLIENT_KEYS: tuple[str, ...] = (
    "bootstrap.servers",
    "client.dns.lookup",
    "security.protocol",
    "ssl.",
    "sasl.",
    "metadata.max.age.ms",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "retry.backoff.ms",
    "retry.backoff.max.ms",
    "connections.max.idle.ms",
    "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms",
    "receive.buffer.bytes",
    "send.buffer.bytes",
)

_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
    "range": "range",
    "roundrobin": "roundrobin",
    "cooperative-sticky": "cooperative-sticky",
}

#: librdkafka callbacks a caller may put in the properties: handed to the client as they are.
CALLBACK_KEYS: frozenset[str] = frozenset({"error_cb", "throttle_cb", "stats_cb", "oauth_cb", "logger"})


def client_props(worker_props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Client properties for one role of a worker: the shared keys, overridden by ``<prefix>*`` keys.

    ``client_props(worker, "producer.")`` gives what Java's worker hands its producers (minus the
    non-client keys, which librdkafka would reject).
    """
    out: dict[str, Any] = {
        k: v for k, v in worker_props.items() if k in SHARED_CLIENT_KEYS or k.startswith(("ssl.", "sasl."))
    }
    out.update({k[len(prefix) :]: v for k, v in worker_props.items() if prefix and k.startswith(prefix)})
    return out


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_text(v) for v in value)
    secret = getattr(value, "value", None)  # connect_core.config Password
    if isinstance(secret, str):
        return secret
    return str(value)


def _translate(props: Mapping[str, Any], role: Role) -> dict[str, Any]:
    conf: dict[str, Any] = {}
    for key, raw in props.items():
        if raw is None:
            continue
        if key in CALLBACK_KEYS and callable(raw):
            conf[key] = raw
            continue
        value = _text(raw).strip()
        if key in SECURITY_KEYS:
            continue  # translated as a whole below
        if key in JAVA_ONLY:
            log.debug("Ignoring Java-only client property %s for the %s", key, role)
            continue
        key = RENAMED.get(key, key)
        if role != "producer" and key in _PRODUCER_ONLY:
            log.debug("Ignoring producer property %s for the %s", key, role)
            continue
        if role != "consumer" and key in _CONSUMER_ONLY:
            log.debug("Ignoring consumer property %s for the %s", key, role)
            continue
        if key == "bootstrap.servers":
            value = ",".join(s.strip() for s in value.split(",") if s.strip())
        elif key == "auto.offset.reset" and value == "none":
            value = "error"
        elif key == "partition.assignment.strategy":
            names = [_ASSIGNORS.get(s.strip()) for s in value.split(",") if s.strip()]
            if None in names or not names:
                log.warning("Unsupported partition.assignment.strategy %r; using librdkafka's default", value)
                continue
            value = ",".join(n for n in names if n)
        conf[key] = value
    _add_security(conf, librdkafka_security(text_props(props)))
    conf["allow.auto.create.topics"] = False
    return conf


def _add_security(conf: dict[str, Any], security: dict[str, str]) -> None:
    """The translated security keys; librdkafka keys the user set explicitly win (files over PEM text)."""
    if "ssl.ca.location" in conf:
        security.pop("ssl.ca.pem", None)
    if "ssl.certificate.location" in conf or "ssl.key.location" in conf:
        security.pop("ssl.certificate.pem", None)
        security.pop("ssl.key.pem", None)
    for key, value in security.items():
        conf.setdefault(key, value)


def text_props(props: Mapping[str, Any]) -> dict[str, str]:
    """Client properties as text (Password values revealed): what the security translation reads."""
    return {k: _text(v) for k, v in props.items() if v is not None}


def producer_config(props: Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """librdkafka producer config from Java producer properties; ``overrides`` (librdkafka keys) win."""
    conf = _translate(props, "producer")
    # Java's default partitioner hashes keys with murmur2; librdkafka's default differs. Keyed
    # records (Connect's offsets/status topics, mirrored data without a partition) must land
    # where a Java client would put them.
    conf.setdefault("partitioner", "murmur2_random")
    conf.update(overrides or {})
    conf["allow.auto.create.topics"] = False
    return conf


def consumer_config(props: Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    conf = _translate(props, "consumer")
    conf.update(overrides or {})
    conf["allow.auto.create.topics"] = False
    return conf


def admin_config(props: Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    conf = _translate(props, "admin")
    conf.update(overrides or {})
    conf["allow.auto.create.topics"] = False
    return conf


_UNKNOWN_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')


def _construct(factory: Callable[[dict[str, Any]], C], conf: Mapping[str, Any], what: str) -> C:
    attempt = dict(conf)
    attempt.setdefault("logger", RDKAFKA_LOG)  # librdkafka's lines through Python logging, re-levelled
    while True:
        try:
            return factory(attempt)
        except KafkaException as e:
            err = e.args[0] if e.args else None
            text = err.str() if isinstance(err, KafkaError) else str(e)
            m = _UNKNOWN_PROPERTY.search(text)
            if m and m.group(1) in attempt and m.group(1) != "bootstrap.servers":
                log.warning("Ignoring client property %s: librdkafka does not know it (%s)", m.group(1), what)
                del attempt[m.group(1)]
                continue
            mapped = from_exception(e, f"Cannot create the {what}")
            if isinstance(mapped, ConfigError):
                raise mapped from e
            raise ConfigError(str(mapped)) from e


def create_producer(conf: Mapping[str, Any]) -> Producer:
    return _construct(Producer, conf, "producer")


def create_consumer(conf: Mapping[str, Any]) -> Consumer:
    return _construct(Consumer, conf, "consumer")


def create_admin(conf: Mapping[str, Any]) -> AdminClient:
    admin = _construct(AdminClient, conf, "admin client")
    watch_admin(admin)  # nobody polls an admin client: its log lines would never be handed over
    return admin
