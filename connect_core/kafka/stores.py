"""Java key and trust stores (JKS, PKCS12, PEM) read into the PEM text librdkafka takes.

Java clients point ``ssl.truststore.location``/``ssl.keystore.location`` at JKS or PKCS12 files;
librdkafka wants the CA as PEM and never reads JKS. Each store is read here, in memory, with
``cryptography`` (PKCS12, PEM) and ``pyjks`` (JKS); nothing is written next to the user's files.
Like Java 9+, the file's content decides between JKS and PKCS12 when the declared type is one of
the two (keytool's default type changed, users' ``*.type`` keys often did not).

Every failure is a :class:`ConfigError` naming the key to fix (the location for a missing or
unreadable file, the password for a wrong one); passwords and key material never appear in it.
Results are cached by file identity and passwords: each client of a worker reads the same stores.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from connect_core.api.errors import ConfigError

_JKS_MAGIC = (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce")  # JKS, JCEKS


@dataclass(frozen=True)
class ClientCertificate:
    """A client certificate chain and its private key, PEM (the key unencrypted, PKCS#8: memory only)."""

    chain_pem: str
    key_pem: str

    def __repr__(self) -> str:  # never print the key
        return "ClientCertificate(<redacted>)"


def _cert_pem(der: bytes) -> str:
    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM).decode()


def _read(location: str, key: str) -> bytes:
    path = Path(location)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"file not found: {location}", key=key) from None
    except OSError as e:
        raise ConfigError(f"cannot read {location}: {e.strerror or type(e).__name__}", key=key) from None


def _kind(data: bytes, declared: str, prefix: str) -> str:
    declared = (declared or "JKS").upper()
    if declared in ("JKS", "PKCS12", "JCEKS") and b"-----BEGIN" in data[:4096]:
        raise ConfigError(f"the file is PEM: set {prefix}.type=PEM", key=f"{prefix}.location")
    if declared in ("JKS", "PKCS12", "JCEKS"):
        return "JKS" if data[:4] in _JKS_MAGIC else "PKCS12"
    return declared


def _file_id(location: str) -> tuple[str, int, int]:
    try:
        st = os.stat(location)
    except OSError:
        return (location, -1, -1)
    return (location, st.st_mtime_ns, st.st_size)


# ------------------------------------------------------------------ truststores


def truststore_pem(location: str, store_type: str, password: str | None) -> str:
    """The trusted certificates of a truststore file, as one PEM bundle."""
    return _truststore_pem(_file_id(location), store_type, password)


@functools.lru_cache(maxsize=64)
def _truststore_pem(file_id: tuple[str, int, int], store_type: str, password: str | None) -> str:
    location = file_id[0]
    data = _read(location, "ssl.truststore.location")
    kind = _kind(data, store_type, "ssl.truststore")
    if kind == "PEM":
        certs = _pem_certs(data, "ssl.truststore.location")
    elif kind == "JKS":
        store = _load_jks(data, password, "ssl.truststore", location)
        certs = [_cert_pem(e.cert) for e in store.certs.values()]
        certs += [_cert_pem(der) for e in store.private_keys.values() for _t, der in e.cert_chain[:1]]
    elif kind == "PKCS12":
        bundle = _load_pkcs12(data, password, "ssl.truststore", location)
        certs = [c.certificate.public_bytes(serialization.Encoding.PEM).decode() for c in bundle.additional_certs]
        if bundle.cert is not None:
            certs.append(bundle.cert.certificate.public_bytes(serialization.Encoding.PEM).decode())
    else:
        raise ConfigError(f"unsupported truststore type {store_type!r} (JKS, PKCS12 or PEM)", key="ssl.truststore.type")
    if not certs:
        raise ConfigError(f"the truststore {location} holds no certificate", key="ssl.truststore.location")
    return "".join(certs)


def pem_certificates(text: str, key: str) -> str:
    """Inline PEM certificates (``ssl.truststore.certificates``, a chain), checked and normalised."""
    return "".join(_pem_certs(text.encode(), key))


def _pem_certs(data: bytes, key: str) -> list[str]:
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError:
        raise ConfigError("holds no readable PEM certificate", key=key) from None
    return [c.public_bytes(serialization.Encoding.PEM).decode() for c in certs]


# ------------------------------------------------------------------ keystores


def keystore_certificate(
    location: str, store_type: str, password: str | None, key_password: str | None
) -> ClientCertificate:
    """The client certificate chain and key of a keystore file (JKS, PKCS12 or PEM)."""
    return _keystore_certificate(_file_id(location), store_type, password, key_password)


@functools.lru_cache(maxsize=64)
def _keystore_certificate(
    file_id: tuple[str, int, int], store_type: str, password: str | None, key_password: str | None
) -> ClientCertificate:
    location = file_id[0]
    data = _read(location, "ssl.keystore.location")
    kind = _kind(data, store_type, "ssl.keystore")
    if kind == "PEM":
        text = data.decode("ascii", errors="replace")
        return pem_certificate(text, text, key_password, "ssl.keystore.location")
    if kind == "JKS":
        return _jks_certificate(data, password, key_password, location)
    if kind == "PKCS12":
        bundle = _load_pkcs12(data, password, "ssl.keystore", location)
        if bundle.key is None or bundle.cert is None:
            raise ConfigError(
                f"the keystore {location} holds no private key with its certificate", key="ssl.keystore.location"
            )
        chain = [bundle.cert.certificate, *(c.certificate for c in bundle.additional_certs)]
        return ClientCertificate(
            "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in chain), _pkcs8(bundle.key)
        )
    raise ConfigError(f"unsupported keystore type {store_type!r} (JKS, PKCS12 or PEM)", key="ssl.keystore.type")


def pem_certificate(chain: str, key_text: str, key_password: str | None, key: str) -> ClientCertificate:
    """A PEM chain and a PEM private key (PKCS#8, possibly encrypted with ``ssl.key.password``)."""
    certs = _pem_certs(chain.encode(), key)
    secret = key_password.encode() if key_password else None
    try:
        private = serialization.load_pem_private_key(key_text.encode(), password=secret)
    except TypeError:  # encrypted without a password, or a password for a plain key
        which = "ssl.key.password" if not secret else key
        raise ConfigError(
            "the private key is encrypted: set ssl.key.password"
            if not secret
            else "the private key is not encrypted: remove ssl.key.password",
            key=which,
        ) from None
    except ValueError:
        raise ConfigError(
            "wrong password, or no readable PEM private key", key="ssl.key.password" if secret else key
        ) from None
    return ClientCertificate("".join(certs), _pkcs8(private))


def _pkcs8(private: object) -> str:
    return private.private_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def _jks_certificate(data: bytes, password: str | None, key_password: str | None, location: str) -> ClientCertificate:
    store = _load_jks(data, password, "ssl.keystore", location)
    if not store.private_keys:
        raise ConfigError(f"the keystore {location} holds no private key", key="ssl.keystore.location")
    entry = next(iter(store.private_keys.values()))
    if not entry.is_decrypted():
        try:
            entry.decrypt(key_password if key_password is not None else password or "")
        except Exception:  # pyjks: DecryptionFailureException
            raise ConfigError("wrong password for the private key", key="ssl.key.password") from None
    private = serialization.load_der_private_key(entry.pkey_pkcs8, password=None)
    chain = "".join(_cert_pem(der) for _t, der in entry.cert_chain)
    return ClientCertificate(chain, _pkcs8(private))


# ------------------------------------------------------------------ loaders


def _load_jks(data: bytes, password: str | None, prefix: str, location: str) -> Any:
    import jks

    try:
        return jks.KeyStore.loads(data, password)
    except jks.KeystoreSignatureException:
        raise ConfigError(
            f"wrong password for {location} (the store's integrity check failed)", key=f"{prefix}.password"
        ) from None
    except Exception as e:  # malformed data: pyjks raises several types
        raise ConfigError(f"unreadable JKS store {location} ({type(e).__name__})", key=f"{prefix}.location") from None


def _load_pkcs12(data: bytes, password: str | None, prefix: str, location: str) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        if not data[:1] == b"\x30":
            raise ConfigError(
                f"unreadable store {location} (neither JKS nor PKCS12)", key=f"{prefix}.location"
            ) from None
        what = "wrong password" if password else "a password is needed"
        raise ConfigError(f"{what} for {location} (or a damaged PKCS12 file)", key=f"{prefix}.password") from None
