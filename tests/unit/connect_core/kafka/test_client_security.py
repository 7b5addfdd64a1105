"""Java client security keys -> librdkafka and kafka-python: stores made by keytool, JAAS of every module.

No broker: each translated config is handed to librdkafka's own constructor (which parses the PEM
and rejects what it cannot use); the TLS handshake itself is tested in tests/e2e/test_mm2_tls.py.
"""

from __future__ import annotations

import logging
import os
import re
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from connect_core.api.errors import ConfigError
from connect_core.kafka import jaas, security
from connect_core.kafka.clients import admin_config, consumer_config, create_consumer, create_producer, producer_config
from tests.tls_pki import KEY_PASSWORD, KEYSTORE_PASSWORD, PEM_KEY_PASSWORD, TRUST_PASSWORD, Pki, shared_pki

SSL = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SSL"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return shared_pki(tmp_path_factory)


@pytest.fixture(autouse=True)
def _fresh_warnings() -> Iterator[None]:
    security._warned.clear()
    yield
    security._warned.clear()


def _subjects(pem: str) -> list[str]:
    return [c.subject.rfc4514_string() for c in x509.load_pem_x509_certificates(pem.encode())]


def _key_matches(conf: dict[str, Any]) -> bool:
    cert = x509.load_pem_x509_certificates(conf["ssl.certificate.pem"].encode())[0]
    key = serialization.load_pem_private_key(conf["ssl.key.pem"].encode(), None)
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    return cert.public_key().public_bytes(*spki) == key.public_key().public_bytes(*spki)


# ------------------------------------------------------------------ truststores


@pytest.mark.parametrize(
    "store,declared",
    [
        ("truststore_jks", "JKS"),
        ("truststore_p12", "PKCS12"),
        ("truststore_p12", "JKS"),
        ("truststore_jks", "PKCS12"),
        ("ca_pem", "PEM"),
    ],
)
def test_truststore_becomes_the_ca_pem(pki: Pki, store: str, declared: str) -> None:
    """JKS and PKCS12 by content whatever the declared type (as Java 9+), PEM as a file."""
    conf = consumer_config(
        {
            **SSL,
            "ssl.truststore.location": str(getattr(pki, store)),
            "ssl.truststore.type": declared,
            "ssl.truststore.password": TRUST_PASSWORD,
        }
    )
    assert _subjects(conf["ssl.ca.pem"]) == _subjects(pki.ca_pem.read_text())
    assert not any(k.startswith("ssl.truststore") for k in conf)
    create_consumer({**conf, "group.id": "g"}).close()


def test_inline_pem_truststore_certificates(pki: Pki) -> None:
    conf = admin_config({**SSL, "ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki.ca_pem.read_text()})
    assert _subjects(conf["ssl.ca.pem"]) == _subjects(pki.ca_pem.read_text())


def test_truststore_without_password_is_read_from_a_jks(pki: Pki) -> None:
    """Java reads a JKS's certificates without the store password (no integrity check): so do we."""
    conf = consumer_config({**SSL, "ssl.truststore.location": str(pki.truststore_jks)})
    assert _subjects(conf["ssl.ca.pem"]) == _subjects(pki.ca_pem.read_text())


# ------------------------------------------------------------------ keystores


def test_pkcs12_keystore_becomes_the_client_certificate_and_key(pki: Pki) -> None:
    conf = producer_config(
        {
            **SSL,
            "ssl.truststore.location": str(pki.truststore_p12),
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.password": TRUST_PASSWORD,
            "ssl.keystore.location": str(pki.keystore_p12),
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.password": KEYSTORE_PASSWORD,
        }
    )
    assert _key_matches(conf)
    assert _subjects(conf["ssl.certificate.pem"]) == _subjects(pki.client_cert_pem.read_text())
    assert not any(k.startswith(("ssl.keystore", "ssl.truststore")) for k in conf)
    create_producer(conf).flush(0)


def test_jks_keystore_with_its_own_key_password(pki: Pki) -> None:
    conf = producer_config(
        {
            **SSL,
            "ssl.keystore.location": str(pki.keystore_jks),
            "ssl.keystore.password": KEYSTORE_PASSWORD,
            "ssl.key.password": KEY_PASSWORD,
        }
    )
    assert _key_matches(conf) and "ssl.key.password" not in conf
    create_producer(conf).flush(0)


@pytest.mark.parametrize("encrypted", [False, True])
def test_pem_keystore_inline_with_and_without_key_password(pki: Pki, encrypted: bool) -> None:
    key = (pki.client_key_encrypted_pem if encrypted else pki.client_key_pem).read_text()
    props = {
        **SSL,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": key,
        "ssl.keystore.certificate.chain": pki.client_cert_pem.read_text(),
    }
    if encrypted:
        props["ssl.key.password"] = PEM_KEY_PASSWORD
    conf = producer_config(props)
    assert _key_matches(conf)
    create_producer(conf).flush(0)


def test_pem_keystore_file_with_key_and_chain(pki: Pki, tmp_path: Path) -> None:
    store = tmp_path / "client.pem"
    store.write_text(pki.client_key_encrypted_pem.read_text() + pki.client_cert_pem.read_text())
    conf = producer_config(
        {**SSL, "ssl.keystore.type": "PEM", "ssl.keystore.location": str(store), "ssl.key.password": PEM_KEY_PASSWORD}
    )
    assert _key_matches(conf)


# ------------------------------------------------------------------ mistakes: one error naming the key


def _error(props: dict[str, str]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        consumer_config({**SSL, **props})
    assert len(info.value.issues) == 1
    return info.value


@pytest.mark.parametrize("store", ["truststore_jks", "truststore_p12"])
def test_wrong_truststore_password_names_the_password_key(pki: Pki, store: str) -> None:
    e = _error({"ssl.truststore.location": str(getattr(pki, store)), "ssl.truststore.password": "not-it"})
    assert e.issues[0].key == "ssl.truststore.password" and "wrong password" in str(e) and "not-it" not in str(e)


def test_wrong_keystore_and_key_passwords_name_their_keys(pki: Pki) -> None:
    e = _error({"ssl.keystore.location": str(pki.keystore_p12), "ssl.keystore.password": "nope-nope"})
    assert e.issues[0].key == "ssl.keystore.password"
    e = _error(
        {
            "ssl.keystore.location": str(pki.keystore_jks),
            "ssl.keystore.password": KEYSTORE_PASSWORD,
            "ssl.key.password": "nope-nope",
        }
    )
    assert e.issues[0].key == "ssl.key.password"
    e = _error(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": pki.client_key_encrypted_pem.read_text(),
            "ssl.keystore.certificate.chain": pki.client_cert_pem.read_text(),
        }
    )
    assert e.issues[0].key == "ssl.key.password"


def test_missing_unreadable_and_mistyped_stores_name_the_location(pki: Pki, tmp_path: Path) -> None:
    e = _error({"ssl.truststore.location": str(tmp_path / "absent.jks")})
    assert e.issues[0].key == "ssl.truststore.location" and "not found" in str(e)
    junk = tmp_path / "junk.p12"
    junk.write_bytes(b"not a store at all")
    e = _error({"ssl.keystore.location": str(junk), "ssl.keystore.password": "x"})
    assert e.issues[0].key == "ssl.keystore.location"
    e = _error({"ssl.truststore.location": str(pki.ca_pem)})  # PEM while the type says JKS (the default)
    assert e.issues[0].key == "ssl.truststore.location" and "ssl.truststore.type=PEM" in str(e)


# ------------------------------------------------------------------ other TLS keys


def test_endpoint_identification_defaults_to_https_and_empty_disables(pki: Pki) -> None:
    base = {**SSL, "ssl.truststore.location": str(pki.truststore_jks)}
    assert consumer_config(base)["ssl.endpoint.identification.algorithm"] == "https"
    assert (
        consumer_config({**base, "ssl.endpoint.identification.algorithm": ""})["ssl.endpoint.identification.algorithm"]
        == "none"
    )
    assert (
        security.kafka_python_security({**base, "ssl.endpoint.identification.algorithm": ""})["ssl_check_hostname"]
        is False
    )


def test_protocols_and_cipher_suites_map_where_librdkafka_can_and_warn_once_per_key(
    pki: Pki, caplog: pytest.LogCaptureFixture
) -> None:
    props = {
        **SSL,
        "ssl.truststore.location": str(pki.truststore_jks),
        "ssl.enabled.protocols": "TLSv1.3",
        "ssl.cipher.suites": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_AES_256_GCM_SHA384",
    }
    with caplog.at_level(logging.WARNING, logger="connect_core.kafka.security"):
        conf = producer_config(props)
        consumer_config(props)
    assert conf["ssl.cipher.suites"] == "ECDHE-RSA-AES256-GCM-SHA384"
    assert "ssl.enabled.protocols" not in conf
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2, warnings
    assert any(w.startswith("ssl.enabled.protocols:") for w in warnings)
    assert any(w.startswith("ssl.cipher.suites:") and "TLS_AES_256_GCM_SHA384" in w for w in warnings)
    create_producer(conf).flush(0)


# ------------------------------------------------------------------ SASL


PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="pl-secret";'
SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required\n  username="bob"\n  password="sc-\\"secret";'


@pytest.mark.parametrize(
    "module,mechanism,user,password",
    [
        (PLAIN, "PLAIN", "alice", "pl-secret"),
        (SCRAM, "SCRAM-SHA-256", "bob", 'sc-"secret'),
        (SCRAM, "SCRAM-SHA-512", "bob", 'sc-"secret'),
    ],
)
def test_plain_and_scram_become_username_and_password(module: str, mechanism: str, user: str, password: str) -> None:
    conf = producer_config(
        {
            "bootstrap.servers": "h:1",
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": module,
        }
    )
    assert (conf["sasl.mechanism"], conf["sasl.username"], conf["sasl.password"]) == (mechanism, user, password)
    assert "sasl.jaas.config" not in conf
    create_producer(conf).flush(0)
    kp = security.kafka_python_security(
        {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.jaas.config": module}
    )
    assert (kp["sasl_mechanism"], kp["sasl_plain_username"], kp["sasl_plain_password"]) == (mechanism, user, password)


def test_oauthbearer_with_a_token_endpoint_becomes_librdkafka_oidc() -> None:
    conf = producer_config(
        {
            "bootstrap.servers": "h:1",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",  # noqa: E501
            "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'clientId="mm2" clientSecret="oidc-secret" scope="kafka" extension_logicalCluster="lkc-1";',
        }
    )
    assert {k: conf[k] for k in conf if k.startswith("sasl.oauthbearer")} == {
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
        "sasl.oauthbearer.client.id": "mm2",
        "sasl.oauthbearer.client.secret": "oidc-secret",
        "sasl.oauthbearer.scope": "kafka",
        "sasl.oauthbearer.extensions": "logicalCluster=lkc-1",
    }
    assert "sasl.login.callback.handler.class" not in conf
    create_producer(conf).flush(0)


def test_oauthbearer_unsecured_becomes_librdkafka_unsecure_jwt() -> None:
    conf = producer_config(
        {
            "bootstrap.servers": "h:1",
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredLoginStringClaim_sub="svc-mm2" unsecuredLoginListClaim_scope=",read,write" '
            'unsecuredLoginLifetimeSeconds="600";',
        }
    )
    assert conf["enable.sasl.oauthbearer.unsecure.jwt"] == "true"
    assert conf["sasl.oauthbearer.config"] == "principal=svc-mm2 scope=read,write lifeSeconds=600"
    create_producer(conf).flush(0)


def test_gssapi_becomes_librdkafka_kerberos_keys() -> None:
    conf = consumer_config(
        {
            "bootstrap.servers": "h:1",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "GSSAPI",
            "sasl.kerberos.service.name": "kafka",
            "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
            'keyTab="/etc/security/mm2.keytab" principal="mm2/host@EXAMPLE.COM";',
        }
    )
    assert (conf["sasl.kerberos.keytab"], conf["sasl.kerberos.principal"], conf["sasl.kerberos.service.name"]) == (
        "/etc/security/mm2.keytab",
        "mm2/host@EXAMPLE.COM",
        "kafka",
    )


def test_unsupported_or_malformed_jaas_is_one_error_naming_the_key() -> None:
    base = {"bootstrap.servers": "h:1", "security.protocol": "SASL_SSL"}
    for text in ('com.example.CustomLoginModule required token="tk-secret";', 'garbage password="tk-secret"'):
        with pytest.raises(ConfigError) as info:
            producer_config({**base, "sasl.jaas.config": text})
        assert [i.key for i in info.value.issues] == ["sasl.jaas.config"]
        assert "tk-secret" not in str(info.value)
    with pytest.raises(ConfigError, match="CustomLoginModule is not supported"):
        jaas.translate("com.example.CustomLoginModule required;", {})


def test_jaas_of_a_client_without_sasl_is_ignored_as_in_java() -> None:
    conf = producer_config({"bootstrap.servers": "h:1", "sasl.jaas.config": "com.example.Nope required;"})
    assert not any(k.startswith("sasl.") for k in conf)


# ------------------------------------------------------------------ kafka-python (the distributed herder's group)


def test_kafka_python_gets_an_ssl_context_with_the_ca_and_client_key_and_leaves_no_file(
    pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    kw = security.kafka_python_security(
        {
            **SSL,
            "ssl.truststore.location": str(pki.truststore_p12),
            "ssl.truststore.password": TRUST_PASSWORD,
            "ssl.keystore.location": str(pki.keystore_jks),
            "ssl.keystore.password": KEYSTORE_PASSWORD,
            "ssl.key.password": KEY_PASSWORD,
        }
    )
    context: ssl.SSLContext = kw["ssl_context"]
    assert kw["security_protocol"] == "SSL" and context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    assert [c["subject"] for c in context.get_ca_certs()]
    assert os.listdir(tmp_path) == []  # the key's private file is gone once loaded


# ------------------------------------------------------------------ secrets never logged


def test_no_password_or_key_material_in_any_log_line_at_debug(
    pki: Pki, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    key_body = re.sub(r"-----[^-]+-----|\s", "", pki.client_key_pem.read_text())
    secrets = [TRUST_PASSWORD, KEYSTORE_PASSWORD, KEY_PASSWORD, "pl-secret", key_body[20:60], key_body[-60:-20]]
    tls = {
        **SSL,
        "ssl.truststore.location": str(pki.truststore_jks),
        "ssl.truststore.password": TRUST_PASSWORD,
        "ssl.keystore.location": str(pki.keystore_jks),
        "ssl.keystore.password": KEYSTORE_PASSWORD,
        "ssl.key.password": KEY_PASSWORD,
        "ssl.enabled.protocols": "TLSv1.2",
        "ssl.cipher.suites": "X",
    }
    sasl = {**tls, "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN}
    with caplog.at_level(logging.DEBUG):
        for props in (tls, sasl):
            producer = create_producer(producer_config(props, {"debug": "conf,security"}))
            producer.poll(0.5)
            producer.flush(0)
            security.kafka_python_security(props)
        for bad in (
            {"ssl.truststore.password": "wrong-" + TRUST_PASSWORD},
            {"ssl.key.password": "wrong-" + KEY_PASSWORD},
        ):
            with pytest.raises(ConfigError) as info:
                producer_config({**tls, **bad})
            logging.getLogger("test").error("%s", info.value)
    text = "\n".join(r.getMessage() for r in caplog.records) + capfd.readouterr().err
    assert "Client configuration" in text  # librdkafka's conf dump did reach the logs
    leaked = [s for s in secrets if s in text]
    assert not leaked, leaked


def test_translated_config_is_what_librdkafka_takes(pki: Pki) -> None:
    """Every key we emit is one librdkafka knows (it raises on an unknown key before our retry)."""
    conf = producer_config(
        {
            **SSL,
            "ssl.truststore.location": str(pki.truststore_jks),
            "ssl.keystore.location": str(pki.keystore_p12),
            "ssl.keystore.password": KEYSTORE_PASSWORD,
        }
    )
    Producer({k: v for k, v in conf.items()}).flush(0)


# ------------------------------------------------------------------ handshake failures in one line


@pytest.mark.parametrize(
    "line,expected",
    [
        (
            "FAIL [rdkafka#producer-4] [thrd:ssl://h:1/bootstrap]: ssl://h:1/bootstrap: Receive failed: error:0A00045C:SSL "  # noqa: E501
            "routines::tlsv13 alert certificate required: SSL alert number 116 (after 0ms in state APIVERSION_QUERY)",
            "requires a client certificate",
        ),
        (
            "FAIL [rdkafka#producer-5] [thrd:ssl://h:1/bootstrap]: ssl://h:1/bootstrap: SSL handshake failed: "
            "error:0A000086:SSL routines::certificate verify failed: broker certificate could not be verified",
            "certificate was not accepted",
        ),
        (
            "FAIL [rdkafka#producer-1] [thrd:sasl_ssl://h:1/bootstrap]: sasl_ssl://h:1/bootstrap: SASL authentication "
            "error: Authentication failed during authentication due to invalid credentials with SASL mechanism "
            "SCRAM-SHA-512 (after 5ms in state AUTH_REQ)",
            "SASL authentication error: Authentication failed",
        ),
        (
            "FAIL [rdkafka#producer-2] [thrd:sasl_ssl://h:1/bootstrap]: sasl_ssl://h:1/bootstrap: SASL PLAIN mechanism "
            "handshake failed: Broker: Unsupported SASL mechanism: broker's supported mechanisms: SCRAM-SHA-256 (after 6ms "  # noqa: E501
            "in state AUTH_HANDSHAKE)",
            "SASL PLAIN mechanism handshake failed: Broker: Unsupported SASL mechanism",
        ),
        (
            "FAIL [rdkafka#producer-1] [thrd:h:1/bootstrap]: h:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: "
            "Connection refused",
            None,
        ),
    ],
)
def test_librdkafka_handshake_failures_become_one_sentence(line: str, expected: str | None) -> None:
    from connect_core.kafka.connection_failures import explain

    sentence = explain([line])
    assert (sentence is None) if expected is None else (sentence is not None and expected in sentence), sentence
    assert sentence is None or "(after" not in sentence


# ------------------------------------------------------------------ OAUTHBEARER for the group client (kafka-python)


OIDC_JAAS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
    'clientId="mm2 app" clientSecret="oidc-secret" scope="kafka" extension_logicalCluster="lkc-1";'
)


def test_group_client_fetches_oidc_tokens_like_kafka_and_reuses_them() -> None:
    """A real HTTP token endpoint: client credentials grant, HTTP Basic with the url-encoded id and secret."""
    import base64
    import threading
    import urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    requests: list[tuple[str, dict[str, list[str]]]] = []

    class TokenEndpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            requests.append((self.headers["Authorization"], urllib.parse.parse_qs(body)))
            answer = b'{"access_token": "tok-1", "token_type": "bearer", "expires_in": 3600}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), TokenEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        kw = security.kafka_python_security(
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "OAUTHBEARER",
                "sasl.jaas.config": OIDC_JAAS,
                "sasl.oauthbearer.token.endpoint.url": f"http://127.0.0.1:{server.server_port}/token",
            }
        )
        provider = kw["sasl_oauth_token_provider"]
        assert kw["sasl_mechanism"] == "OAUTHBEARER"
        assert provider.token() == "tok-1" and provider.token() == "tok-1"
        assert provider.extensions() == {"logicalCluster": "lkc-1"}
        assert "oidc-secret" not in repr(provider)
    finally:
        server.shutdown()
        server.server_close()
    assert len(requests) == 1  # reused until due for refresh
    auth, form = requests[0]
    assert base64.b64decode(auth.split()[1]).decode() == "mm2%20app:oidc-secret"
    assert form == {"grant_type": ["client_credentials"], "scope": ["kafka"]}


def test_group_client_makes_kafkas_unsecured_tokens() -> None:
    import base64
    import json

    kw = security.kafka_python_security(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            'unsecuredLoginStringClaim_sub="svc-mm2" unsecuredLoginListClaim_scope=" a b";',
        }
    )
    header, payload, signature = kw["sasl_oauth_token_provider"].token().split(".")

    def decode(part: str) -> dict[str, Any]:
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))  # type: ignore[no-any-return]

    claims = decode(payload)
    assert decode(header) == {"alg": "none"} and signature == ""
    assert claims["sub"] == "svc-mm2" and claims["scope"] == ["a", "b"] and claims["exp"] - claims["iat"] == 3600


# ------------------------------------------------------------------ docs/security.md's Java mm2.properties


def test_readme_secured_clusters_example_is_read_as_it_is(pki: Pki, tmp_path: Path) -> None:
    """docs/security.md's file, with its /etc/mm2 paths pointing at this test's stores: every cluster's clients get
    the CA (and B its client certificate) through the same check every command runs first."""
    from connect_core.config.providers import resolve_config_providers
    from connect_core.kafka.clients import client_props
    from mirror.cli.run_cmd import load_mm2_config

    readme = (Path(__file__).resolve().parents[4] / "docs" / "security.md").read_text()
    section = readme.split("## Secured clusters", 1)[1]
    example = section.split("```properties\n", 1)[1].split("```", 1)[0]
    secrets = tmp_path / "secrets.properties"
    secrets.write_text(
        f"a.truststore.password = {TRUST_PASSWORD}\nb.truststore.password = {TRUST_PASSWORD}\n"
        f"b.keystore.password = {KEYSTORE_PASSWORD}\n"
    )
    for path, store in (
        ("/etc/mm2/secrets.properties", secrets),
        ("/etc/mm2/a-truststore.jks", pki.truststore_jks),
        ("/etc/mm2/b-truststore.p12", pki.truststore_p12),
        ("/etc/mm2/mm2-client.p12", pki.keystore_p12),
    ):
        assert path in example
        example = example.replace(path, str(store))
    config_path = tmp_path / "mm2.properties"
    config_path.write_text(example)
    config = load_mm2_config(config_path)
    for alias, client_cert in (("A", False), ("B", True)):
        props = resolve_config_providers(config.cluster_props(alias), config.raw)
        conf = producer_config(client_props(props, "producer."))
        assert _subjects(conf["ssl.ca.pem"]) == _subjects(pki.ca_pem.read_text())
        assert ("ssl.key.pem" in conf) is client_cert


def test_librdkafka_keys_given_explicitly_win_over_the_translation(pki: Pki) -> None:
    conf = producer_config(
        {
            **SSL,
            "ssl.ca.location": str(pki.ca_pem),
            "ssl.truststore.location": str(pki.truststore_jks),
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": PLAIN,
            "sasl.username": "explicit",
        }
    )
    assert conf["ssl.ca.location"] == str(pki.ca_pem) and "ssl.ca.pem" not in conf
    assert conf["sasl.username"] == "explicit" and conf["sasl.password"] == "pl-secret"
    create_producer(conf).flush(0)


def test_group_client_also_takes_librdkafkas_own_pem_file_keys(pki: Pki) -> None:
    kw = security.kafka_python_security(
        {
            **SSL,
            "ssl.ca.location": str(pki.ca_pem),
            "ssl.certificate.location": str(pki.client_cert_pem),
            "ssl.key.location": str(pki.client_key_encrypted_pem),
            "ssl.key.password": PEM_KEY_PASSWORD,
        }
    )
    assert [c["subject"] for c in kw["ssl_context"].get_ca_certs()]
    with pytest.raises(ConfigError) as info:
        security.kafka_python_security({**SSL, "ssl.ca.location": "/no/such/ca.pem"})
    assert info.value.issues[0].key == "ssl.ca.location"
