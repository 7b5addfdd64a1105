"""TLS for the REST listeners and for the worker-to-worker REST client, from Java Connect's keys.

Java (``SSLUtils``) reads the ``listeners.https.``-prefixed SSL keys when any key has that prefix,
and otherwise the worker's plain ``ssl.*`` keys: all or nothing, never a mix. The same keys
configure the server side of ``https`` listeners and the client that forwards requests to the
leader. Java's stores are JKS/PKCS12; here a keystore is a PEM file holding the private key and
its certificate chain (``ssl.keystore.type=PEM``) or a PKCS12 file, and a truststore a PEM file of
CA certificates or a PKCS12 file. An unset type is guessed from the file's contents; ``JKS`` is
read as PKCS12 (what ``keytool`` writes by default since Java 9). Every mistake is one
:class:`ConfigError` naming the key; no password ever appears in a message.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from connect_core.api.errors import ConfigError

HTTPS_PREFIX = "listeners.https."
CLIENT_AUTH_VALUES = ("none", "requested", "required")

_KEYSTORE_LOCATION = "ssl.keystore.location"
_KEYSTORE_PASSWORD = "ssl.keystore.password"
_KEYSTORE_TYPE = "ssl.keystore.type"
_KEY_PASSWORD = "ssl.key.password"
_TRUSTSTORE_LOCATION = "ssl.truststore.location"
_TRUSTSTORE_PASSWORD = "ssl.truststore.password"
_TRUSTSTORE_TYPE = "ssl.truststore.type"
_CLIENT_AUTH = "ssl.client.auth"
_ENDPOINT_IDENTIFICATION = "ssl.endpoint.identification.algorithm"
_KEYS = (
    _KEYSTORE_LOCATION,
    _KEYSTORE_PASSWORD,
    _KEYSTORE_TYPE,
    _KEY_PASSWORD,
    _TRUSTSTORE_LOCATION,
    _TRUSTSTORE_PASSWORD,
    _TRUSTSTORE_TYPE,
    _CLIENT_AUTH,
    _ENDPOINT_IDENTIFICATION,
)
_STORE_TYPES = ("PEM", "PKCS12", "JKS")


@dataclass(frozen=True)
class SslSettings:
    """The SSL keys of one REST side; ``prefix`` is what the user wrote, for error messages."""

    prefix: str = ""
    keystore_location: str | None = None
    keystore_password: str | None = None
    keystore_type: str | None = None
    key_password: str | None = None
    truststore_location: str | None = None
    truststore_password: str | None = None
    truststore_type: str | None = None
    client_auth: str = "none"
    endpoint_identification: str = "https"

    def __repr__(self) -> str:  # never show the passwords
        return (
            f"SslSettings(prefix={self.prefix!r}, keystore={self.keystore_location!r}, "
            f"truststore={self.truststore_location!r}, client_auth={self.client_auth!r})"
        )

    @classmethod
    def from_props(cls, props: Mapping[str, object]) -> SslSettings:
        prefixed = {k[len(HTTPS_PREFIX) :]: v for k, v in props.items() if k.startswith(HTTPS_PREFIX)}
        prefix, values = (HTTPS_PREFIX, prefixed) if prefixed else ("", dict(props))

        def get(key: str) -> str | None:
            raw = values.get(key)
            text = None if raw is None else str(raw).strip()
            return text or None

        client_auth = (get(_CLIENT_AUTH) or "none").lower()
        if client_auth not in CLIENT_AUTH_VALUES:
            raise ConfigError(
                f"Invalid value {client_auth} for configuration {prefix}{_CLIENT_AUTH}: "
                f"String must be one of: {', '.join(CLIENT_AUTH_VALUES)}",
                key=prefix + _CLIENT_AUTH,
            )
        for type_key in (_KEYSTORE_TYPE, _TRUSTSTORE_TYPE):
            store_type = get(type_key)
            if store_type is not None and store_type.upper() not in _STORE_TYPES:
                raise ConfigError(
                    f"Invalid value {store_type} for configuration {prefix}{type_key}: mm2 reads PEM and PKCS12 "
                    "stores (JKS files written as PKCS12 too)",
                    key=prefix + type_key,
                )
        endpoint = values.get(_ENDPOINT_IDENTIFICATION)
        return cls(
            prefix=prefix,
            keystore_location=get(_KEYSTORE_LOCATION),
            keystore_password=get(_KEYSTORE_PASSWORD),
            keystore_type=(get(_KEYSTORE_TYPE) or "").upper() or None,
            key_password=get(_KEY_PASSWORD),
            truststore_location=get(_TRUSTSTORE_LOCATION),
            truststore_password=get(_TRUSTSTORE_PASSWORD),
            truststore_type=(get(_TRUSTSTORE_TYPE) or "").upper() or None,
            client_auth=client_auth,
            endpoint_identification="https" if endpoint is None else str(endpoint).strip(),
        )

    def key(self, name: str) -> str:
        return self.prefix + name

    # ------------------------------------------------------------------------------ contexts

    def server_context(self) -> ssl.SSLContext:
        """The context of an ``https`` listener (certificate from the keystore, client auth as configured)."""
        if self.keystore_location is None:
            raise ConfigError(
                f"An https listener needs a certificate: set {self.key(_KEYSTORE_LOCATION)} "
                "(a PEM file with the private key and certificate chain, or a PKCS12 file)",
                key=self.key(_KEYSTORE_LOCATION),
            )
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        self._load_keystore(ctx)
        if self.truststore_location is not None:  # checked even when unused, as Jetty loads it at start
            self._load_truststore(ctx)
        if self.client_auth != "none":
            ctx.verify_mode = ssl.CERT_REQUIRED if self.client_auth == "required" else ssl.CERT_OPTIONAL
            if self.truststore_location is None:
                ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """The context for requests to other workers: verifies them against the truststore (or the
        system's CAs), checks the host name unless ``ssl.endpoint.identification.algorithm`` is empty,
        and presents the keystore's certificate when there is one (for peers requiring client auth)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.check_hostname = self.endpoint_identification.lower() == "https"
        ctx.verify_mode = ssl.CERT_REQUIRED
        if self.truststore_location is not None:
            self._load_truststore(ctx)
        else:
            ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
        if self.keystore_location is not None:
            self._load_keystore(ctx)
        return ctx

    # ------------------------------------------------------------------------------ stores

    def _load_keystore(self, ctx: ssl.SSLContext) -> None:
        key = self.key(_KEYSTORE_LOCATION)
        path = _existing_file(self.keystore_location, key)
        data = path.read_bytes()
        store_type = self.keystore_type or _guess_type(data)
        if store_type == "PEM":
            password = self.key_password or self.keystore_password
            try:
                ctx.load_cert_chain(str(path), password=password or "")
            except ssl.SSLError as e:
                raise ConfigError(
                    f"{key} ({path}) is not a usable PEM keystore (it must hold the private key and its "
                    f"certificate chain; an encrypted key needs {self.key(_KEY_PASSWORD)}): {_reason(e)}",
                    key=key,
                ) from None
            return
        try:
            private_key, chain = _read_pkcs12_key(data, self.keystore_password, key, self.key(_KEYSTORE_PASSWORD))
        except ConfigError as e:
            raise _jks_hint(e, store_type, key, path) from None
        _load_chain_in_memory(ctx, private_key, chain, key)

    def _load_truststore(self, ctx: ssl.SSLContext) -> None:
        key = self.key(_TRUSTSTORE_LOCATION)
        path = _existing_file(self.truststore_location, key)
        data = path.read_bytes()
        store_type = self.truststore_type or _guess_type(data)
        try:
            if store_type == "PEM":
                ctx.load_verify_locations(cafile=str(path))
            else:
                try:
                    pem = _read_pkcs12_certs(data, self.truststore_password, key, self.key(_TRUSTSTORE_PASSWORD))
                except ConfigError as e:
                    raise _jks_hint(e, store_type, key, path) from None
                ctx.load_verify_locations(cadata=pem)
        except ssl.SSLError as e:
            raise ConfigError(f"{key} ({path}) holds no usable CA certificate: {_reason(e)}", key=key) from None


def _existing_file(location: str | None, key: str) -> Path:
    assert location is not None
    path = Path(location)
    if not path.is_file():
        raise ConfigError(f"{key}: file {path} does not exist", key=key)
    if not os.access(path, os.R_OK):
        raise ConfigError(f"{key}: file {path} is not readable", key=key)
    return path


def _jks_hint(error: ConfigError, store_type: str, key: str, path: Path) -> ConfigError:
    """A store Java calls JKS may really be in the old JKS format, which only Java reads."""
    if store_type != "JKS":
        return error
    return ConfigError(
        f"{error.issues[0].message}; a store in the old JKS format must be converted first: keytool "
        f"-importkeystore -srckeystore {path} -destkeystore {path}.p12 -deststoretype PKCS12",
        key=key,
    )


def _guess_type(data: bytes) -> str:
    return "PEM" if b"-----BEGIN" in data[:4096] else "PKCS12"


def _reason(e: ssl.SSLError) -> str:
    reason = getattr(e, "reason", None)
    if not reason or reason == "PEM_lib":
        return "no private key/certificate could be read from it"
    return str(reason).replace("_", " ").lower()


def _read_pkcs12_key(data: bytes, password: str | None, key: str, password_key: str) -> tuple[bytes, bytes]:
    """(private key, certificate chain) as PEM from a PKCS12 keystore."""
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12

    try:
        private_key, cert, extra = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError:
        raise ConfigError(
            f"{key} could not be read as PKCS12 (wrong {password_key}, or not a PKCS12/PEM file)", key=key
        ) from None
    if private_key is None or cert is None:
        raise ConfigError(f"{key} holds no private key with its certificate", key=key)
    pem_key = private_key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    chain = b"".join(c.public_bytes(Encoding.PEM) for c in [cert, *(extra or [])])
    return pem_key, chain


def _read_pkcs12_certs(data: bytes, password: str | None, key: str, password_key: str) -> str:
    """Every certificate of a PKCS12 truststore, as one PEM text."""
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        raise ConfigError(
            f"{key} could not be read as PKCS12 (wrong {password_key}, or not a PKCS12/PEM file)", key=key
        ) from None
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.insert(0, store.cert.certificate)
    if not certs:
        raise ConfigError(f"{key} holds no certificate", key=key)
    return "".join(c.public_bytes(Encoding.PEM).decode("ascii") for c in certs)


def _load_chain_in_memory(ctx: ssl.SSLContext, pem_key: bytes, chain: bytes, key: str) -> None:
    """``ssl`` loads certificates from files only: write the key re-encrypted under a one-time
    password to a private temporary file, load it, and delete it at once."""
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        PrivateFormat,
        load_pem_private_key,
    )

    one_time = secrets.token_hex(16)
    encrypted = load_pem_private_key(pem_key, None).private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(one_time.encode())
    )
    fd, name = tempfile.mkstemp(prefix="mm2-rest-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(encrypted + chain)
        ctx.load_cert_chain(name, password=one_time)
    except ssl.SSLError as e:
        raise ConfigError(f"{key}: its key and certificate do not form a usable pair: {_reason(e)}", key=key) from None
    finally:
        os.unlink(name)
