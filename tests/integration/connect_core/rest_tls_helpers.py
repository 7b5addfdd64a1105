"""Certificates made per test with trustme, written as the PEM/PKCS12 files a worker config names."""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme


@dataclass
class Pki:
    ca: trustme.CA
    server_pem: Path  # private key + certificate chain: ssl.keystore.type=PEM
    ca_pem: Path  # ssl.truststore.type=PEM
    client_pem: Path  # a client certificate signed by the same CA

    def server_props(self, **extra: str) -> dict[str, str]:
        return {
            "listeners": "https://127.0.0.1:0",
            "listeners.https.ssl.keystore.location": str(self.server_pem),
            "listeners.https.ssl.keystore.type": "PEM",
            "listeners.https.ssl.truststore.location": str(self.ca_pem),
            "listeners.https.ssl.truststore.type": "PEM",
            **extra,
        }

    def client_context(self, *, with_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.ca_pem))
        if with_cert:
            ctx.load_cert_chain(str(self.client_pem))
        return ctx


def make_pki(directory: Path) -> Pki:
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    client = ca.issue_cert("client.example")
    pki = Pki(ca, directory / "server.pem", directory / "ca.pem", directory / "client.pem")
    server.private_key_and_cert_chain_pem.write_to_path(str(pki.server_pem))
    ca.cert_pem.write_to_path(str(pki.ca_pem))
    client.private_key_and_cert_chain_pem.write_to_path(str(pki.client_pem))
    return pki


def json_request(
    port: int,
    method: str,
    path: str,
    context: ssl.SSLContext | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
    host: str = "127.0.0.1",
) -> tuple[int, Any, dict[str, str]]:
    """One round trip, over HTTPS when ``context`` is given: (status, decoded JSON body, headers)."""
    conn = (
        http.client.HTTPConnection(host, port, timeout=10)
        if context is None
        else http.client.HTTPSConnection(host, port, timeout=10, context=context)
    )
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, (json.loads(raw) if raw else None), dict(resp.getheaders())
    finally:
        conn.close()


def https_request(
    port: int,
    method: str,
    path: str,
    context: ssl.SSLContext,
    body: Any = None,
    headers: dict[str, str] | None = None,
    host: str = "127.0.0.1",
) -> tuple[int, Any, dict[str, str]]:
    return json_request(port, method, path, context, body, headers, host)
