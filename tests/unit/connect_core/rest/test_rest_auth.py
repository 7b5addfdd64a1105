"""Basic-auth configuration as Java's extension reads it: JAAS file, credentials file, header parsing."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from connect_core.api.errors import ConfigError
from connect_core.rest.auth import (
    BASIC_AUTH_EXTENSION,
    AuthRequest,
    BasicAuthenticator,
    basic_credentials,
    load_authenticator,
    parse_jaas,
)

EXT = {"rest.extension.classes": BASIC_AUTH_EXTENSION}


def header(value: str) -> AuthRequest:
    return AuthRequest("GET", "/connectors", {"authorization": value})


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_basic_credentials_parsing_follows_java() -> None:
    assert basic_credentials("Basic " + b64("u:p:with:colons")) == ("u", "p:with:colons")
    assert basic_credentials("basic " + b64("u:")) == ("u", "")
    for bad in (
        None,
        "",
        "Basic",
        "Bearer " + b64("u:p"),
        "Basic " + b64("no-colon"),
        "Basic " + b64(":p"),
        "Basic ***",
    ):
        assert basic_credentials(bad) is None


def test_basic_authenticator() -> None:
    auth = BasicAuthenticator({"alice": "s3cret", "bob": "pässword"})
    assert auth.authenticate(header("Basic " + b64("alice:s3cret")))
    assert auth.authenticate(header("Basic " + b64("bob:pässword")))
    assert not auth.authenticate(header("Basic " + b64("alice:S3cret")))
    assert not auth.authenticate(header("Basic " + b64("carol:s3cret")))
    assert not auth.authenticate(AuthRequest("GET", "/", {}))
    assert "s3cret" not in repr(auth)


def test_jaas_file_with_comments_options_and_other_entries(tmp_path: Path) -> None:
    creds = tmp_path / "creds.properties"
    creds.write_text("alice = s3cret\n# comment\nbob:builder\n")
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(
        "/* brokers */ KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required\n"
        '  username="admin" password="x"; };\n'
        "KafkaConnect {\n"
        "   org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule Required // stacked? no\n"
        f'   debug=true file="{creds}";\n'
        "};\n"
    )
    auth = load_authenticator({**EXT, "java.security.auth.login.config": str(jaas)}, environ={})
    assert isinstance(auth, BasicAuthenticator)
    assert auth.authenticate(header("Basic " + b64("bob:builder")))
    assert not auth.authenticate(header("Basic " + b64("bob:x")))


def test_jaas_file_from_kafka_opts_as_java(tmp_path: Path) -> None:
    creds = tmp_path / "creds.properties"
    creds.write_text("alice=s3cret\n")
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(
        "KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule "
        f'required file="{creds}"; }};'
    )
    env = {"KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={jaas} -Dother=1"}
    auth = load_authenticator(EXT, environ=env)
    assert auth is not None and auth.authenticate(header("Basic " + b64("alice:s3cret")))


def test_no_authentication_unless_asked() -> None:
    assert load_authenticator({}, environ={}) is None


@pytest.mark.parametrize(
    ("jaas_text", "needle"),
    [
        ("KafkaServer { x required; };", "no KafkaConnect entry"),
        ('KafkaConnect { com.example.LdapLoginModule required url="ldap://x"; };', "exactly one login module"),
        (
            "KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required; };",
            "Property Credentials file must be specified",
        ),
        (
            "KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required",
            "not a valid JAAS configuration",
        ),
    ],
)
def test_bad_jaas_is_one_clear_error(tmp_path: Path, jaas_text: str, needle: str) -> None:
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(jaas_text)
    with pytest.raises(ConfigError) as e:
        load_authenticator({**EXT, "java.security.auth.login.config": str(jaas)}, environ={})
    assert needle in str(e.value)
    assert e.value.issues[0].key == "java.security.auth.login.config"


def test_configuration_mistakes_name_their_key(tmp_path: Path) -> None:
    cases = [
        (EXT, "rest.extension.classes"),  # no JAAS file anywhere
        ({"rest.extension.classes": "com.example.MyExtension"}, "rest.extension.classes"),
        ({"rest.basic.auth.credentials.file": str(tmp_path / "missing")}, "rest.basic.auth.credentials.file"),
        ({**EXT, "java.security.auth.login.config": str(tmp_path / "missing.conf")}, "java.security.auth.login.config"),
        ({"rest.authenticator.class": "no.such.module.Auth"}, "rest.authenticator.class"),
        ({"rest.authenticator.class": "pathlib.NoSuchClass"}, "rest.authenticator.class"),
        ({"rest.authenticator.class": "pathlib:PurePath"}, "rest.authenticator.class"),  # no authenticate()
        (
            {"rest.authenticator.class": "pathlib.Path", "rest.basic.auth.credentials.file": "x"},
            "rest.authenticator.class",
        ),
    ]
    for props, key in cases:
        with pytest.raises(ConfigError) as e:
            load_authenticator(props, environ={})
        assert [i.key for i in e.value.issues] == [key], props


def test_passwords_never_in_messages(tmp_path: Path) -> None:
    creds = tmp_path / "creds.properties"
    creds.write_text("alice=top-secret-\\u12\n")  # malformed escape
    with pytest.raises(ConfigError) as e:
        load_authenticator({"rest.basic.auth.credentials.file": str(creds)}, environ={})
    assert "top-secret" not in str(e.value) and "line 1" in str(e.value)


def test_parse_jaas_quoted_values_and_escapes() -> None:
    entries = parse_jaas('A { m.M optional k="a \\"b\\" c" n=plain; };', "<test>")
    assert entries == {"A": [("m.M", "optional", {"k": 'a "b" c', "n": "plain"})]}
