"""Literal secrets of mm2.properties become ``${mm2:KEY}`` references in the stored connector configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_core.api.errors import ConfigError
from connect_core.config.providers import resolve_config_providers
from connect_core.runtime.config_references import WorkerConfigTransformer
from mirror.driver.driver import desired_connector_configs, make_config
from mirror.driver.maker_config import SOURCE_CONNECTOR, SourceAndTarget
from mirror.driver.secret_refs import (
    Mm2PropertiesConfigProvider,
    is_secret_key,
    reference,
    with_provider,
    with_secret_references,
)

AB = SourceAndTarget("A", "B")
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="jaas-pw";'


def props(**extra: str) -> dict[str, str]:
    base = {
        "clusters": "A, B",
        "A.bootstrap.servers": "a:9092",
        "B.bootstrap.servers": "b:9092",
        "A->B.enabled": "true",
        "emit.heartbeats.enabled": "false",
    }
    base.update(extra)
    return base


@pytest.mark.parametrize(
    "key",
    [
        "ssl.key.password",
        "A.ssl.keystore.password",
        "source.cluster.ssl.truststore.password",
        "target.consumer.sasl.jaas.config",
        "A.ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.truststore.certificates",
        "A.producer.sasl.password",  # librdkafka's own key: any *.password
        "password",
        "value.converter.basic.auth.user.info",
    ],
)
def test_secret_keys(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["ssl.keystore.location", "sasl.mechanism", "A.bootstrap.servers", "passwords.enabled", "ssl.key.passwordx"]
)
def test_not_secret_keys(key: str) -> None:
    assert not is_secret_key(key)


def test_literal_secrets_become_references_to_the_key_they_were_read_from(tmp_path: Path) -> None:
    raw = props(
        **{
            "A.ssl.key.password": "a-key-pw",
            "B.sasl.jaas.config": JAAS,
            "ssl.truststore.password": "shared-trust-pw",  # top level: fanned out to both clusters
            "A->B.target.consumer.ssl.keystore.password": "flow-pw",
        }
    )
    derived = make_config(raw).connector_base_config(AB, SOURCE_CONNECTOR)
    stored = desired_connector_configs(make_config(raw, source=Path("/etc/mm2.properties")), AB)[SOURCE_CONNECTOR]
    assert stored["source.cluster.ssl.key.password"] == "${mm2:A.ssl.key.password}"
    assert stored["source.consumer.ssl.key.password"] == "${mm2:A.ssl.key.password}"
    assert stored["target.cluster.sasl.jaas.config"] == "${mm2:B.sasl.jaas.config}"
    assert stored["target.admin.sasl.jaas.config"] == "${mm2:B.sasl.jaas.config}"
    assert stored["source.cluster.ssl.truststore.password"] == "${mm2:ssl.truststore.password}"
    assert stored["target.consumer.ssl.keystore.password"] == "${mm2:A->B.target.consumer.ssl.keystore.password}"
    assert stored["source.cluster.bootstrap.servers"] == "a:9092"  # not a secret: unchanged
    secrets = {"a-key-pw", "jaas-pw", "shared-trust-pw", "flow-pw"}
    assert not [v for v in stored.values() if any(s in v for s in secrets)]
    # every reference resolves back to what the key held
    resolved = resolve_config_providers(stored, with_provider({}, _file(raw, tmp_path / "mm2.properties")))
    assert resolved == derived


def _file(raw: dict[str, str], path: Path) -> Path:
    path.write_text("".join(f"{k} = {v}\n" for k, v in raw.items()))
    return path


def test_references_already_there_stay_untouched() -> None:
    raw = props(
        **{
            "A.ssl.key.password": "${file:/run/secrets/a.properties:pw}",
            "B.sasl.jaas.config": 'x required username="u" password="${env:B_PW}";',
        }
    )
    assert with_secret_references(raw) == raw
    derived = make_config(raw).connector_base_config(AB, SOURCE_CONNECTOR)
    stored = desired_connector_configs(make_config(raw, source=Path("/x/mm2.properties")), AB)[SOURCE_CONNECTOR]
    assert stored == derived


def test_references_name_keys_not_values_so_nodes_with_other_values_agree(tmp_path: Path) -> None:
    node1 = props(**{"A.ssl.key.password": "same", "B.ssl.key.password": "same"})
    node2 = props(**{"A.ssl.key.password": "a-of-node-2", "B.ssl.key.password": "b-of-node-2"})
    first = desired_connector_configs(make_config(node1, source=tmp_path / "n1.properties"), AB)
    second = desired_connector_configs(make_config(dict(reversed(node2.items())), source=tmp_path / "n2"), AB)
    assert first == second  # no leader rewrites the other's configs
    stored = first[SOURCE_CONNECTOR]
    assert stored["source.cluster.ssl.key.password"] == reference("A.ssl.key.password")
    assert stored["target.cluster.ssl.key.password"] == reference("B.ssl.key.password")
    # node 2 resolves each to its own value for that key
    resolved = resolve_config_providers(stored, with_provider({}, _file(node2, tmp_path / "node2.properties")))
    assert resolved["source.cluster.ssl.key.password"] == "a-of-node-2"
    assert resolved["target.cluster.ssl.key.password"] == "b-of-node-2"


def test_a_key_the_syntax_cannot_carry_keeps_its_value() -> None:
    raw = {"odd{key}.password": "v", "A.ssl.key.password": "w"}
    assert with_secret_references(raw) == {"odd{key}.password": "v", "A.ssl.key.password": "${mm2:A.ssl.key.password}"}


def test_without_a_source_file_configs_stay_as_before() -> None:
    raw = props(**{"A.ssl.key.password": "pw"})
    assert desired_connector_configs(make_config(raw), AB)[SOURCE_CONNECTOR]["source.cluster.ssl.key.password"] == "pw"


def test_the_provider_reads_this_nodes_file_and_resolves_its_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MM2_TEST_SECRET", "from-env")
    path = _file(
        props(**{"A.ssl.key.password": "literal", "B.ssl.key.password": "${env:MM2_TEST_SECRET}"}),
        tmp_path / "mm2.properties",
    )
    provider = Mm2PropertiesConfigProvider()
    provider.configure({"file": str(path)})
    assert provider.get("", {"A.ssl.key.password", "B.ssl.key.password", "missing"}) == {
        "A.ssl.key.password": "literal",
        "B.ssl.key.password": "from-env",
    }
    path.write_text("A.ssl.key.password = rotated\n")  # read at each lookup: a rotated password is picked up
    assert provider.get("", {"A.ssl.key.password"}) == {"A.ssl.key.password": "rotated"}
    with pytest.raises(ConfigError):
        provider.get("some/path", {"A.ssl.key.password"})


def test_provider_without_file_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"needs the path of mm2\.properties"):
        Mm2PropertiesConfigProvider().configure({})


def test_worker_config_declares_the_provider_next_to_the_users_own(tmp_path: Path) -> None:
    path = _file(props(**{"A.ssl.key.password": "pw"}), tmp_path / "mm2.properties")
    worker = with_provider(
        {
            "config.providers": "file",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        },
        path,
    )
    assert worker["config.providers"] == "file,mm2"
    assert worker["config.providers.mm2.param.file"] == str(path.resolve())
    transformer = WorkerConfigTransformer(worker)
    assert transformer.transform({"k": "${mm2:A.ssl.key.password}", "n": "1"}) == {"k": "pw", "n": "1"}


def test_the_name_mm2_is_reserved() -> None:
    config = make_config(props(**{"config.providers": "vault, mm2"}))
    with pytest.raises(ConfigError, match="'mm2' is reserved"):
        config.validate()
