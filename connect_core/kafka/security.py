"""Java client security keys (``ssl.*``, ``sasl.*``) translated for the product's Kafka clients.

One translation for every client: librdkafka (:func:`librdkafka_security`, used by
:mod:`connect_core.kafka.clients` for every producer, consumer and admin, on the driver and on
Spark executors alike) and kafka-python, which runs the distributed herder's group membership
(:func:`kafka_python_security`). Both read the same stores (:mod:`connect_core.kafka.stores`) and
JAAS (:mod:`connect_core.kafka.jaas`), so a setting that works for one works for the other.

As in Java, ``ssl.*`` stores are read only when ``security.protocol`` is SSL or SASL_SSL and the
JAAS only for SASL_*. Keys with no librdkafka equivalent (``ssl.enabled.protocols``,
``ssl.protocol``, TLS 1.3 ``ssl.cipher.suites``) get one warning per key and process.
"""

from __future__ import annotations

import logging
import os
import secrets
import ssl
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connect_core.api.errors import ConfigError
from connect_core.kafka import jaas

if TYPE_CHECKING:
    from connect_core.kafka.stores import ClientCertificate

log = logging.getLogger(__name__)

#: Java keys consumed here (never handed to librdkafka as they are).
SECURITY_KEYS: frozenset[str] = frozenset(
    {
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
        "ssl.enabled.protocols",
        "ssl.protocol",
        "ssl.cipher.suites",
        "sasl.jaas.config",
        "sasl.oauthbearer.token.endpoint.url",
    }
)

#: Java's IANA cipher suite names -> OpenSSL's (TLS 1.2; librdkafka's ssl.cipher.suites is OpenSSL's list).
_OPENSSL_CIPHERS = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "DHE-RSA-AES128-GCM-SHA256",
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384": "DHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
}

_warned: set[str] = set()
_warn_lock = threading.Lock()


def _warn_once(key: str, message: str) -> None:
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning("%s: %s", key, message)


@dataclass(frozen=True)
class TlsMaterial:
    """What the TLS keys of one client amount to: the CA bundle and the client certificate, if any."""

    ca_pem: str | None
    client: ClientCertificate | None
    check_hostname: bool


def _protocol(props: Mapping[str, str]) -> str:
    return props.get("security.protocol", "PLAINTEXT").strip().upper() or "PLAINTEXT"


def uses_tls(props: Mapping[str, str]) -> bool:
    return _protocol(props) in ("SSL", "SASL_SSL")


def uses_sasl(props: Mapping[str, str]) -> bool:
    return _protocol(props) in ("SASL_SSL", "SASL_PLAINTEXT")


def tls_material(props: Mapping[str, str]) -> TlsMaterial:
    """Read the stores the ``ssl.*`` keys name (ConfigError naming the key on any problem)."""
    # deferred to the one reader of stores: every client module imports this one, and the stores module's
    # cryptography (x509 alone ~40 ms) would be start-up CPU of every mm2 process, TLS or not
    from connect_core.kafka.stores import keystore_certificate, pem_certificate, pem_certificates, truststore_pem

    ca: str | None = None
    if props.get("ssl.truststore.certificates", "").strip():
        ca = pem_certificates(props["ssl.truststore.certificates"], "ssl.truststore.certificates")
    elif props.get("ssl.truststore.location", "").strip():
        ca = truststore_pem(
            props["ssl.truststore.location"].strip(),
            props.get("ssl.truststore.type", "JKS"),
            props.get("ssl.truststore.password") or None,
        )
    elif props.get("ssl.ca.location", "").strip():  # librdkafka's own key, for the kafka-python client
        try:
            ca = truststore_pem(props["ssl.ca.location"].strip(), "PEM", None)
        except ConfigError as e:
            raise ConfigError(e.issues[0].message, key="ssl.ca.location") from None
    client: ClientCertificate | None = None
    key_password = props.get("ssl.key.password") or None
    if props.get("ssl.keystore.key", "").strip():
        if not props.get("ssl.keystore.certificate.chain", "").strip():
            raise ConfigError("ssl.keystore.key needs its certificate chain", key="ssl.keystore.certificate.chain")
        client = pem_certificate(
            props["ssl.keystore.certificate.chain"], props["ssl.keystore.key"], key_password, "ssl.keystore.key"
        )
    elif props.get("ssl.keystore.location", "").strip():
        client = keystore_certificate(
            props["ssl.keystore.location"].strip(),
            props.get("ssl.keystore.type", "JKS"),
            props.get("ssl.keystore.password") or None,
            key_password,
        )
    elif props.get("ssl.certificate.location", "").strip() and props.get("ssl.key.location", "").strip():
        chain = Path(props["ssl.certificate.location"].strip())
        key = Path(props["ssl.key.location"].strip())
        try:
            client = pem_certificate(chain.read_text(), key.read_text(), key_password, "ssl.key.location")
        except OSError as e:
            raise ConfigError(f"cannot read {e.filename}: {e.strerror}", key="ssl.certificate.location") from None
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https").strip().lower()
    if algorithm not in ("", "https", "none"):
        raise ConfigError(
            f"unsupported value {algorithm!r} (https, or empty to disable)", key="ssl.endpoint.identification.algorithm"
        )
    return TlsMaterial(ca, client, algorithm == "https")


def _cipher_suites(value: str) -> str | None:
    names = [s.strip() for s in value.split(",") if s.strip()]
    mapped = [_OPENSSL_CIPHERS[n] for n in names if n in _OPENSSL_CIPHERS]
    others = [n for n in names if n not in _OPENSSL_CIPHERS]
    if others:
        _warn_once(
            "ssl.cipher.suites",
            f"no librdkafka equivalent for {', '.join(others)}; they are left to OpenSSL's defaults",
        )
    return ":".join(mapped) or None


def librdkafka_security(props: Mapping[str, str]) -> dict[str, str]:
    """librdkafka keys for the Java security keys of one client (values already text)."""
    out: dict[str, str] = {}
    if uses_tls(props):
        tls = tls_material(props)
        out["ssl.endpoint.identification.algorithm"] = "https" if tls.check_hostname else "none"
        if tls.ca_pem:
            out["ssl.ca.pem"] = tls.ca_pem
        if tls.client is not None:
            out["ssl.certificate.pem"] = tls.client.chain_pem
            out["ssl.key.pem"] = tls.client.key_pem
        for key in ("ssl.enabled.protocols", "ssl.protocol"):
            if props.get(key, "").strip():
                _warn_once(key, "librdkafka has no equivalent; OpenSSL's defaults apply (TLS 1.2 and 1.3)")
        if props.get("ssl.cipher.suites", "").strip():
            ciphers = _cipher_suites(props["ssl.cipher.suites"])
            if ciphers:
                out["ssl.cipher.suites"] = ciphers
    if uses_sasl(props) and props.get("sasl.jaas.config", "").strip():
        out.update(jaas.translate(props["sasl.jaas.config"], props))
    return out


def check_security(props: Mapping[str, str]) -> None:
    """Raise the ConfigError a client built from these props would raise (reads every store now)."""
    librdkafka_security(props)


# ------------------------------------------------------------------ kafka-python


def kafka_python_security(props: Mapping[str, str]) -> dict[str, Any]:
    """kafka-python keyword arguments for the same keys (the distributed herder's group client)."""
    protocol = _protocol(props)
    out: dict[str, Any] = {"security_protocol": protocol}
    if uses_tls(props):
        tls = tls_material(props)
        out["ssl_context"] = ssl_context(tls)
        out["ssl_check_hostname"] = tls.check_hostname
    if uses_sasl(props):
        mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper() or "GSSAPI"
        out["sasl_mechanism"] = mechanism
        rd = jaas.translate(props["sasl.jaas.config"], props) if props.get("sasl.jaas.config", "").strip() else {}
        if mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            out["sasl_plain_username"] = rd.get("sasl.username")
            out["sasl_plain_password"] = rd.get("sasl.password")
        elif mechanism == "GSSAPI":
            out["sasl_kerberos_service_name"] = props.get("sasl.kerberos.service.name", "kafka")
        elif mechanism == "OAUTHBEARER":
            from connect_core.kafka.oauth_tokens import token_provider

            out["sasl_oauth_token_provider"] = token_provider(rd)
        else:
            raise ConfigError(
                f"unsupported SASL mechanism {mechanism!r} (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI)",
                key="sasl.mechanism",
            )
    return out


def ssl_context(tls: TlsMaterial) -> ssl.SSLContext:
    """A client SSLContext: the CA from memory; the client key through a private file removed at once.

    Python's ssl loads a certificate only from a file: the key goes to a 0600 file in a fresh 0700
    directory, encrypted with a one-time passphrase, and both are deleted as soon as it is loaded.
    """
    context = ssl.create_default_context(cadata=tls.ca_pem) if tls.ca_pem else ssl.create_default_context()
    context.check_hostname = tls.check_hostname
    if tls.client is not None:
        from cryptography.hazmat.primitives import serialization

        passphrase = secrets.token_urlsafe(24).encode()
        private = serialization.load_pem_private_key(tls.client.key_pem.encode(), password=None)
        encrypted = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(passphrase),
        )
        with tempfile.TemporaryDirectory(prefix="mm2-tls-") as tmp:
            cert_path, key_path = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
            for path, data in ((cert_path, tls.client.chain_pem.encode()), (key_path, encrypted)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            context.load_cert_chain(cert_path, key_path, password=passphrase)
    return context
