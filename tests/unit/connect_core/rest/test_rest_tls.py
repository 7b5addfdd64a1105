"""Which SSL keys a worker's REST side reads: Java's all-or-nothing ``listeners.https.`` prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_core.api.errors import ConfigError
from connect_core.rest.tls import SslSettings


def test_unprefixed_keys_when_no_prefixed_key_is_set() -> None:
    s = SslSettings.from_props(
        {
            "ssl.keystore.location": "/ks.pem",
            "ssl.keystore.type": "pem",
            "ssl.truststore.location": "/ca.pem",
            "ssl.client.auth": "Required",
        }
    )
    assert (s.prefix, s.keystore_location, s.keystore_type, s.truststore_location, s.client_auth) == (
        "",
        "/ks.pem",
        "PEM",
        "/ca.pem",
        "required",
    )
    assert s.endpoint_identification == "https"


def test_any_prefixed_key_replaces_every_unprefixed_one() -> None:
    s = SslSettings.from_props(
        {
            "ssl.keystore.location": "/broker-ks.p12",
            "ssl.truststore.location": "/broker-ca.pem",
            "ssl.client.auth": "required",
            "listeners.https.ssl.keystore.location": "/rest-ks.pem",
        }
    )
    assert (s.prefix, s.keystore_location, s.truststore_location, s.client_auth) == (
        "listeners.https.",
        "/rest-ks.pem",
        None,
        "none",
    )
    assert s.key("ssl.keystore.location") == "listeners.https.ssl.keystore.location"


def test_empty_endpoint_identification_turns_off_host_name_checks() -> None:
    s = SslSettings.from_props({"ssl.endpoint.identification.algorithm": ""})
    assert s.client_context().check_hostname is False
    assert SslSettings().client_context().check_hostname is True


@pytest.mark.parametrize(
    ("key", "value"),
    [("ssl.client.auth", "always"), ("ssl.truststore.type", "JCEKS"), ("listeners.https.ssl.keystore.type", "BKS")],
)
def test_invalid_values_name_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as e:
        SslSettings.from_props({key: value})
    assert [i.key for i in e.value.issues] == [key]


def test_passwords_stay_out_of_repr() -> None:
    s = SslSettings.from_props(
        {"ssl.keystore.password": "hunter2", "ssl.key.password": "hunter3", "ssl.truststore.password": "hunter4"}
    )
    assert "hunter" not in repr(s)


def test_a_jks_store_that_is_not_pkcs12_says_how_to_convert_it(tmp_path: Path) -> None:
    store = tmp_path / "server.jks"
    store.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 64)  # the old JKS magic number
    settings = SslSettings.from_props(
        {"ssl.keystore.location": str(store), "ssl.keystore.type": "JKS", "ssl.keystore.password": "changeit"}
    )
    with pytest.raises(ConfigError) as e:
        settings.server_context()
    assert e.value.issues[0].key == "ssl.keystore.location"
    assert "keytool -importkeystore" in str(e.value) and "changeit" not in str(e.value)
