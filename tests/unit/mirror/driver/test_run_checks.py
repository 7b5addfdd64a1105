"""``mm2 run`` pre-flight checks that need no broker: each mistake is one line naming key and flow."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_core.api.errors import ConfigError
from mirror.cli.run_cmd import check_connector_configs, load_mm2_config, prepare
from mirror.driver.driver import make_config

BASE = {
    "clusters": "A, B",
    "A.bootstrap.servers": "127.0.0.1:1",
    "B.bootstrap.servers": "127.0.0.1:2",
    "A->B.enabled": "true",
}


def write(tmp_path: Path, props: dict[str, str]) -> Path:
    path = tmp_path / "mm2.properties"
    path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
    return path


def test_bad_connector_setting_names_the_key_and_the_flow() -> None:
    config = make_config({**BASE, "A->B.tasks.max": "many"})
    with pytest.raises(ConfigError) as info:
        check_connector_configs(config, config.herder_pairs())
    text = str(info.value)
    assert "tasks.max" in text and "A->B" in text and "\n" not in text


def test_unknown_policy_class_is_reported_before_any_cluster_is_contacted(tmp_path: Path) -> None:
    path = write(tmp_path, {**BASE, "replication.policy.class": "no.such.Policy"})
    with pytest.raises(ConfigError, match=r"replication\.policy\.class"):
        prepare(path, None)


def test_unresolvable_reference_in_a_worker_setting_fails_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MM2_NO_SUCH_VAR", raising=False)
    path = write(tmp_path, {**BASE, "B.bootstrap.servers": "${env:MM2_NO_SUCH_VAR}"})
    with pytest.raises(ConfigError, match="MM2_NO_SUCH_VAR"):
        prepare(path, None)


@pytest.mark.parametrize(
    ("extra", "clusters", "needle"),
    [
        ({"A->C.enabled": "true"}, None, "unknown cluster alias 'C'"),
        ({}, ["Z"], "unknown cluster alias 'Z'"),
        ({"B.bootstrap.servers": ""}, None, "cluster 'B' has no bootstrap servers"),
        (
            {"B->A.enabled": "true", "replication.policy.class": "IdentityReplicationPolicy"},
            None,
            "IdentityReplicationPolicy",
        ),
    ],
)
def test_config_mistakes(tmp_path: Path, extra: dict[str, str], clusters: list[str] | None, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_mm2_config(write(tmp_path, {**BASE, **extra}), clusters)
    assert needle in str(info.value)


def test_client_security_is_read_for_every_cluster_and_role_naming_alias_and_key(tmp_path: Path) -> None:
    """A store that cannot be read fails every command's file check, before any cluster is contacted."""
    missing = str(tmp_path / "absent.jks")
    for extra, key in (
        ({"A.security.protocol": "SSL", "A.ssl.truststore.location": missing}, "A.ssl.truststore.location"),
        (
            {"B.security.protocol": "SASL_SSL", "B.sasl.jaas.config": "com.example.Custom required;"},
            "B.sasl.jaas.config",
        ),
        ({"security.protocol": "SSL", "B.consumer.ssl.keystore.location": missing}, "B.consumer.ssl.keystore.location"),
    ):
        with pytest.raises(ConfigError) as info:
            load_mm2_config(write(tmp_path, {**BASE, **extra}))
        assert [i.key for i in info.value.issues] == [key], info.value
    assert load_mm2_config(write(tmp_path, {**BASE, "A.ssl.truststore.location": missing}))  # PLAINTEXT: unread


XF = "org.apache.kafka.connect.transforms."
FLOW_TRANSFORMS = {
    "A->B.transforms": "text,meta",
    "A->B.transforms.text.type": f"{XF}Cast$Value", "A->B.transforms.text.spec": "string",
    "A->B.transforms.text.predicate": "data",
    "A->B.transforms.meta.type": f"{XF}SetSchemaMetadata$Value", "A->B.transforms.meta.schema.name": "mirrored",
    "A->B.predicates": "data",
    "A->B.predicates.data.type": f"{XF}predicates.TopicNameMatches", "A->B.predicates.data.pattern": "A\\.orders",
}  # fmt: skip


def test_flow_transforms_reach_every_connector_of_the_flow_and_resolve_to_java_named_classes() -> None:
    from connect_core.api.records import SourceRecord
    from connect_core.api.schema import OPTIONAL_BYTES_SCHEMA, SchemaType
    from connect_core.transforms.cast import CastValue
    from connect_core.transforms.chain import TransformationChain
    from connect_core.transforms.set_schema_metadata import SetSchemaMetadataValue
    from mirror.driver.driver import desired_connector_configs
    from mirror.driver.maker_config import SourceAndTarget

    config = make_config({**BASE, **FLOW_TRANSFORMS})
    check_connector_configs(config, config.herder_pairs())  # no problem reported
    desired = desired_connector_configs(config, SourceAndTarget("A", "B"))
    for connector_config in desired.values():
        assert connector_config["transforms.text.type"] == f"{XF}Cast$Value"
        chain = TransformationChain.from_config(connector_config)
        assert [type(s.transformation) for s in chain.stages] == [CastValue, SetSchemaMetadataValue]
        # as MirrorSourceTask hands records over: raw bytes with an optional BYTES schema
        mirrored = chain.apply(SourceRecord({}, {}, "A.orders", 0, b"k", b"\x01\x02", None, 5,
                                            OPTIONAL_BYTES_SCHEMA, OPTIONAL_BYTES_SCHEMA))  # fmt: skip
        assert mirrored is not None and mirrored.value == "AQI=" and mirrored.key == b"k"
        assert (mirrored.value_schema.type, mirrored.value_schema.name) == (SchemaType.STRING, "mirrored")
        other = chain.apply(SourceRecord({}, {}, "heartbeats", 0, b"k", b"v", None, 5, None, OPTIONAL_BYTES_SCHEMA))
        assert other is not None and other.value == b"v"  # the predicate keeps Cast off other topics
        chain.close()


def test_bad_flow_transform_setting_names_the_flow_key() -> None:
    config = make_config({**BASE, **FLOW_TRANSFORMS, "A->B.transforms.text.spec": "x:uuid"})
    with pytest.raises(ConfigError) as info:
        check_connector_configs(config, config.herder_pairs())
    assert [(i.key, i.message) for i in info.value.issues] == [
        ("A->B.transforms.text.spec", "Invalid type found in casting spec: uuid (flow A->B)")]  # fmt: skip
    assert "\n" not in str(info.value)
