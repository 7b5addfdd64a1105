"""${provider:[path:]key} resolution (Kafka ConfigTransformer syntax, stricter errors)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from connect_core.api.errors import ConfigError
from connect_core.config.providers import (
    ENV_PROVIDER_CLASS,
    FILE_PROVIDER_CLASS,
    ConfigTransformer,
    find_references,
    instantiate_providers,
    resolve_config_providers,
)

ENV = {"MM2_USER": "alice", "MM2_PASS": "hunter2", "EMPTY": ""}


@pytest.fixture
def secrets(tmp_path: Path) -> Path:
    p = tmp_path / "secrets.properties"
    p.write_text("db.password=pa55word\nuser = bob\nwith\\:colon=yes\n", encoding="utf-8")
    return p


def test_find_references_follows_kafka_pattern() -> None:
    refs = find_references("x ${env:A} y ${file:/etc/s.properties:k} ${dir:/run:a:b}")
    assert [(r.provider, r.path, r.key) for r in refs] == [
        ("env", "", "A"),
        ("file", "/etc/s.properties", "k"),
        ("dir", "/run", "a:b"),
    ]
    assert find_references("no refs ${here} $env:X {env:Y}") == []


def test_builtin_env_and_file_without_declaration(secrets: Path) -> None:
    props = {
        "user": "${env:MM2_USER}",
        "jaas": 'user="${env:MM2_USER}" password="${file:' + str(secrets) + ':db.password}";',
        "plain": "no references",
        "empty": "${env:EMPTY}",
        "number": 5,
    }
    out = resolve_config_providers(props, environ=ENV)
    assert out == {
        "user": "alice",
        "jaas": 'user="alice" password="pa55word";',
        "plain": "no references",
        "empty": "",
        "number": 5,
    }
    assert props["user"] == "${env:MM2_USER}"  # input untouched


def test_declared_providers_kafka_style(secrets: Path) -> None:
    props = {
        "config.providers": "vault, secrets",
        "config.providers.vault.class": ENV_PROVIDER_CLASS,
        "config.providers.secrets.class": FILE_PROVIDER_CLASS,
        "config.providers.secrets.param.allowed.paths": str(secrets.parent),
        "a": "${vault:MM2_PASS}",
        "b": f"${{secrets:{secrets}:user}}",
    }
    out = resolve_config_providers(props, environ=ENV)
    assert out["a"] == "hunter2" and out["b"] == "bob"


def test_declared_name_overrides_builtin(tmp_path: Path) -> None:
    f = tmp_path / "x.properties"
    f.write_text("MM2_USER=from-file\n")
    props = {
        "config.providers": "env",
        "config.providers.env.class": FILE_PROVIDER_CLASS,
        "k": f"${{env:{f}:MM2_USER}}",
    }
    assert resolve_config_providers(props, environ=ENV)["k"] == "from-file"


def test_strict_kafka_mode_requires_declaration() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_config_providers({"k": "${env:MM2_USER}"}, builtin=False, environ=ENV)
    assert info.value.issues[0].key == "k"
    assert "unknown config provider 'env'" in str(info.value)


def test_provider_props_from_worker(secrets: Path) -> None:
    worker = {
        "config.providers": "e",
        "config.providers.e.class": ENV_PROVIDER_CLASS,
    }
    connector = {"k": "${e:MM2_USER}"}
    assert resolve_config_providers(connector, worker, environ=ENV) == {"k": "alice"}


def test_env_allowlist_pattern() -> None:
    props = {
        "config.providers": "env",
        "config.providers.env.class": ENV_PROVIDER_CLASS,
        "config.providers.env.param.allowlist.pattern": "MM2_U.*",
        "ok": "${env:MM2_USER}",
        "blocked": "${env:MM2_PASS}",
    }
    with pytest.raises(ConfigError) as info:
        resolve_config_providers(props, environ=ENV)
    assert [i.key for i in info.value.issues] == ["blocked"]


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("${env:NOPE_NOT_SET}", "environment variable NOPE_NOT_SET is not set"),
        ("${file:/definitely/missing.properties:k}", "/definitely/missing.properties"),
        ("${file:SECRETS:missing.key}", "key missing.key not found"),
        ("${vault:secret/path:k}", "unknown config provider 'vault'"),
        ("${env:some/path:X}", "path is not supported"),
        ("${file:k}", "needs a path"),
    ],
)
def test_unresolvable_reference_names_key_and_reference(secrets: Path, value: str, fragment: str) -> None:
    value = value.replace("SECRETS", str(secrets))
    with pytest.raises(ConfigError) as info:
        resolve_config_providers({"ssl.key.password": value, "fine": "x"}, environ=ENV)
    assert [i.key for i in info.value.issues] == ["ssl.key.password"]
    msg = str(info.value)
    assert value in msg
    assert fragment in msg
    assert "\n" not in msg


def test_all_failures_reported_together_without_values(secrets: Path) -> None:
    props = {
        "a": "${env:MISSING_A}",
        "b": f"${{file:{secrets}:nope}} and ${{file:{secrets}:db.password}}",
        "c": "${env:MM2_PASS}",
    }
    with pytest.raises(ConfigError) as info:
        resolve_config_providers(props, environ=ENV)
    assert [i.key for i in info.value.issues] == ["a", "b"]
    text = str(info.value)
    assert "pa55word" not in text and "hunter2" not in text


def test_file_allowed_paths_enforced(secrets: Path, tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    props = {
        "config.providers": "file",
        "config.providers.file.class": FILE_PROVIDER_CLASS,
        "config.providers.file.param.allowed.paths": str(allowed),
        "k": f"${{file:{allowed}/../{secrets.name}:user}}",
    }
    with pytest.raises(ConfigError, match=r"not in allowed\.paths"):
        resolve_config_providers(props)


def test_bad_provider_declarations() -> None:
    with pytest.raises(ConfigError) as info:
        instantiate_providers(
            {
                "config.providers": "a,b,c",
                "config.providers.b.class": "no.such.module.Provider",
                "config.providers.c.class": FILE_PROVIDER_CLASS,
                "config.providers.c.param.allowed.paths": "relative/dir",
            }
        )
    keys = [i.key for i in info.value.issues]
    assert keys == [
        "config.providers.a.class",
        "config.providers.b.class",
        "config.providers.c.param.allowed.paths",
    ]


class UpperProvider:
    """A custom provider loaded by Python dotted name."""

    def configure(self, params: Mapping[str, str]) -> None:
        self.suffix = params.get("suffix", "")

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        return {k: k.upper() + self.suffix for k in keys}

    def close(self) -> None:
        pass


def test_custom_python_provider_and_lenient_mode() -> None:
    props = {
        "config.providers": "up",
        "config.providers.up.class": f"{__name__}.UpperProvider",
        "config.providers.up.param.suffix": "!",
        "k": "${up:hello}-${nope:x}",
    }
    out = resolve_config_providers(props, strict=False)
    assert out["k"] == "HELLO!-${nope:x}"  # Kafka leaves unresolvable references as they are


def test_transformer_reads_each_file_once(secrets: Path) -> None:
    calls: list[tuple[str, frozenset[str]]] = []

    class Counting:
        def configure(self, params: Mapping[str, str]) -> None:
            pass

        def get(self, path: str, keys: set[str]) -> dict[str, str]:
            calls.append((path, frozenset(keys)))
            return {k: "v" for k in keys}

        def close(self) -> None:
            pass

    t = ConfigTransformer({"c": Counting()})
    out = t.transform({"a": "${c:/p:x}", "b": "${c:/p:y}${c:/p:x}", "d": "${c:/q:z}"})
    assert out == {"a": "v", "b": "vv", "d": "v"}
    assert sorted(calls, key=lambda c: c[0]) == [("/p", frozenset({"x", "y"})), ("/q", frozenset({"z"}))]
