"""Certificates and Java stores for TLS tests: made by the test, as a Java user would have them.

A CA, a server certificate for 127.0.0.1/localhost, one for another host (for the hostname check)
and a client certificate come from ``trustme``; the Java stores are made from them with
``keytool`` (the JVM Spark needs provides it): JKS and PKCS12 truststores, PKCS12 and JKS client
keystores (the JKS one with a key password of its own).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
    pkcs12,
)

TRUST_PASSWORD = "trust-secret-1"
KEYSTORE_PASSWORD = "keystore-secret-2"
KEY_PASSWORD = "key-secret-3"  # the JKS keystore's key entry
PEM_KEY_PASSWORD = "pem-key-secret-4"  # the encrypted PEM key


@dataclass(frozen=True)
class Pki:
    dir: Path
    ca_pem: Path
    server_cert: Path  # server chain + key, PEM (stunnel's cert =)
    wrong_host_cert: Path  # issued for another host name only
    client_cert_pem: Path  # client chain, PEM
    client_key_pem: Path  # client key, PKCS8, unencrypted
    client_key_encrypted_pem: Path  # the same key encrypted with PEM_KEY_PASSWORD
    truststore_jks: Path
    truststore_p12: Path
    keystore_p12: Path  # password KEYSTORE_PASSWORD (key too)
    keystore_jks: Path  # store KEYSTORE_PASSWORD, key KEY_PASSWORD
    other_ca_pem: Path  # a CA nobody's certificate comes from


def keytool() -> str:
    found = shutil.which("keytool")
    if found is None:
        raise RuntimeError("keytool (a JDK, as Spark needs) is not on PATH")
    return found


#: keytool's JVM only starts, converts a store and exits: C1 and one GC thread halve its CPU.
_QUICK_JVM = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC")


def _run(*args: str) -> None:
    subprocess.run([keytool(), *_QUICK_JVM, *args], check=True, capture_output=True, timeout=120)


def _layout(root: Path) -> Pki:
    return Pki(
        dir=root,
        ca_pem=root / "ca.pem",
        server_cert=root / "server.pem",
        wrong_host_cert=root / "wrong-host.pem",
        client_cert_pem=root / "client-cert.pem",
        client_key_pem=root / "client-key.pem",
        client_key_encrypted_pem=root / "client-key-enc.pem",
        truststore_jks=root / "truststore.jks",
        truststore_p12=root / "truststore.p12",
        keystore_p12=root / "keystore.p12",
        keystore_jks=root / "keystore.jks",
        other_ca_pem=root / "other-ca.pem",
    )


def shared_pki(factory: pytest.TempPathFactory) -> Pki:
    """One PKI for the whole run, made by the first test worker that needs it (the others wait on a file
    lock and reuse it): five JVM starts per module and worker were a tenth of the unit tests' CPU.
    Tests only read it; a test that needs a CA of its own calls :func:`make_pki`."""
    base = factory.getbasetemp()
    root = (base.parent if base.name.startswith("popen-gw") else base) / "shared-pki"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".done").exists():
            make_pki(root)
            (root / ".done").touch()
    return _layout(root)


def make_pki(root: Path) -> Pki:
    """Everything in ``root``; takes about two seconds (five keytool runs)."""
    root.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    other = trustme.CA()
    p = _layout(root)
    ca.cert_pem.write_to_path(str(p.ca_pem))
    other.cert_pem.write_to_path(str(p.other_ca_pem))
    ca.issue_cert("127.0.0.1", "localhost").private_key_and_cert_chain_pem.write_to_path(str(p.server_cert))
    ca.issue_cert("kafka.example.invalid").private_key_and_cert_chain_pem.write_to_path(str(p.wrong_host_cert))
    for secret in (p.server_cert, p.wrong_host_cert):
        secret.chmod(0o600)  # they hold private keys (stunnel warns otherwise)
    client = ca.issue_cert("mm2-client@example.invalid")
    key = load_pem_private_key(client.private_key_pem.bytes(), None)
    p.client_key_pem.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    p.client_key_encrypted_pem.write_bytes(
        key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(PEM_KEY_PASSWORD.encode()))
    )
    p.client_cert_pem.write_bytes(b"".join(c.bytes() for c in client.cert_chain_pems))
    cert = x509.load_pem_x509_certificate(client.cert_chain_pems[0].bytes())
    source = root / "client-source.p12"
    source.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"client", key, cert, None, BestAvailableEncryption(KEYSTORE_PASSWORD.encode())
        )
    )  # type: ignore[arg-type]
    for old in (p.truststore_jks, p.truststore_p12, p.keystore_p12, p.keystore_jks):
        old.unlink(missing_ok=True)
    for store, kind in ((p.truststore_jks, "JKS"), (p.truststore_p12, "PKCS12")):
        _run(
            "-importcert",
            "-noprompt",
            "-alias",
            "ca",
            "-file",
            str(p.ca_pem),
            "-keystore",
            str(store),
            "-storetype",
            kind,
            "-storepass",
            TRUST_PASSWORD,
        )
    _run(
        "-importkeystore",
        "-noprompt",
        "-srckeystore",
        str(source),
        "-srcstoretype",
        "PKCS12",
        "-srcstorepass",
        KEYSTORE_PASSWORD,
        "-destkeystore",
        str(p.keystore_p12),
        "-deststoretype",
        "PKCS12",
        "-deststorepass",
        KEYSTORE_PASSWORD,
    )
    _run(
        "-importkeystore",
        "-noprompt",
        "-srckeystore",
        str(source),
        "-srcstoretype",
        "PKCS12",
        "-srcstorepass",
        KEYSTORE_PASSWORD,
        "-srcalias",
        "client",
        "-destkeystore",
        str(p.keystore_jks),
        "-deststoretype",
        "JKS",
        "-deststorepass",
        KEYSTORE_PASSWORD,
        "-destkeypass",
        KEY_PASSWORD,
        "-destalias",
        "client",
    )
    source.unlink()
    return p
