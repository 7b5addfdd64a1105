"""Session keys and signed internal requests (Kafka's ``SessionKey`` + ``InternalRequestSignature``, KIP-507).

With ``connect.protocol=sessioned`` the leader writes a random key to the config topic; every
worker reads it, and worker-to-worker calls (``POST /connectors/{name}/tasks``, ``PUT
/connectors/{name}/fence``) carry an HMAC of the request body under that key in
``X-Connect-Authorization`` (base64) with the JVM algorithm name in
``X-Connect-Request-Signature-Algorithm`` - the same headers and bytes as Java workers, so the
REST endpoints of either accept the other's requests. Pure: no I/O, no Kafka client.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_core.api.errors import BadRequestError, RestError
from connect_core.runtime.distributed_config import MAC_ALGORITHMS

SIGNATURE_HEADER = "X-Connect-Authorization"
SIGNATURE_ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"


@dataclass(frozen=True)
class SessionKey:
    key: bytes
    algorithm: str  # JVM name, e.g. HmacSHA256
    creation_timestamp: int  # ms since the epoch

    @classmethod
    def generate(cls, algorithm: str, size_bits: int, now_ms: int) -> SessionKey:
        if algorithm not in MAC_ALGORITHMS:
            raise ValueError(f"unsupported key algorithm {algorithm}")
        return cls(os.urandom(max(1, size_bits // 8)), algorithm, now_ms)

    @classmethod
    def from_map(cls, value: Mapping[str, Any]) -> SessionKey:
        """The config store's decoded form (``key`` bytes or base64 text, ``algorithm``, ``creation_timestamp``)."""
        raw = value["key"]
        key = raw if isinstance(raw, bytes | bytearray) else base64.b64decode(str(raw))
        created = value.get("creation_timestamp", value.get("creation-timestamp", 0))
        return cls(bytes(key), str(value["algorithm"]), int(created or 0))

    def to_map(self) -> dict[str, Any]:
        return {"key": self.key, "algorithm": self.algorithm, "creation_timestamp": self.creation_timestamp}

    def __repr__(self) -> str:  # never print the secret
        return f"SessionKey(algorithm={self.algorithm}, created={self.creation_timestamp})"


def sign(key: bytes, algorithm: str, body: bytes) -> bytes:
    digest = MAC_ALGORITHMS.get(algorithm)
    if digest is None:
        raise ValueError(f"unsupported signature algorithm {algorithm}")
    return hmac.new(key, body, getattr(hashlib, digest)).digest()


def signature_headers(key: SessionKey, algorithm: str, body: bytes) -> dict[str, str]:
    """Headers that sign ``body`` (the exact bytes sent) with the session key."""
    return {
        SIGNATURE_HEADER: base64.b64encode(sign(key.key, algorithm, body)).decode("ascii"),
        SIGNATURE_ALGORITHM_HEADER: algorithm,
    }


@dataclass(frozen=True)
class InternalRequestSignature:
    body: bytes
    algorithm: str
    signature: bytes

    @classmethod
    def from_headers(cls, body: bytes, headers: Mapping[str, str]) -> InternalRequestSignature | None:
        """None when the request carries no signature; 400 for an unknown algorithm or bad base64."""
        algorithm = _header(headers, SIGNATURE_ALGORITHM_HEADER)
        encoded = _header(headers, SIGNATURE_HEADER)
        if algorithm is None or encoded is None:
            return None
        if algorithm not in MAC_ALGORITHMS:
            raise BadRequestError(f"{algorithm} Mac not available")
        try:
            decoded = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadRequestError(f"Illegal base64 signature: {e}") from None
        return cls(body, algorithm, decoded)

    def is_valid(self, key: SessionKey) -> bool:
        return hmac.compare_digest(sign(key.key, self.algorithm, self.body), self.signature)


def check_signature(
    signature: InternalRequestSignature | None, verification_algorithms: list[str], key: SessionKey | None
) -> None:
    """Raise the error Java's herder reports for an improperly signed internal request (400/503/403)."""
    if signature is None:
        raise BadRequestError("Internal request missing required signature")
    if signature.algorithm not in verification_algorithms:
        raise BadRequestError(
            f"This worker does not support the '{signature.algorithm}' key signing algorithm used by other workers. "
            f"This worker is currently configured to use: {verification_algorithms}. Check that all workers' "
            "configuration files permit the same set of signature algorithms, and correct any misconfigured worker "
            "and restart it."
        )
    if key is None:
        raise RestError(
            503,
            "This worker is still starting up and has not been able to read a session key from the config topic yet",
        )
    if not signature.is_valid(key):
        raise RestError(403, "Internal request contained invalid signature.")


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lname = name.lower()
    for k, v in headers.items():
        if k.lower() == lname:
            return v
    return None
