"""Why a client could not talk to a cluster, in one line an operator can act on (TLS and SASL).

librdkafka reports a failed TLS handshake as a log line (``certificate verify failed``, ``alert
certificate required``...) while the call itself only times out with "transport failure".
:func:`explain` turns those lines into one sentence; :func:`server_certificate_problem` repeats the
handshake with Python's ssl and the same trust settings to say *why* the server certificate was
refused (a host name mismatch and an unknown CA look the same in librdkafka's words).
"""

from __future__ import annotations

import re
import socket
import ssl
from collections.abc import Iterable, Mapping

from connect_core.kafka.security import tls_material, uses_tls

_RULES: tuple[tuple[str, str], ...] = (
    (
        "alert certificate required",
        "TLS handshake failed: the cluster requires a client certificate (set ssl.keystore.location)",
    ),
    ("alert unknown ca", "TLS handshake failed: the cluster does not trust the client certificate (unknown CA)"),
    ("alert bad certificate", "TLS handshake failed: the cluster rejected the client certificate"),
    ("alert certificate expired", "TLS handshake failed: the cluster says the client certificate expired"),
    (
        "certificate verify failed",
        "TLS handshake failed: the cluster's certificate was not accepted "
        "(check ssl.truststore.* and ssl.endpoint.identification.algorithm)",
    ),
    (
        "connecting to a plaintext broker listener",
        "TLS handshake failed: the port looks like a plaintext listener (security.protocol=SSL against PLAINTEXT?)",
    ),
)
#: SASL failures are said well by librdkafka itself: its words, from "SASL", without the timing.
_SASL = re.compile(r"SASL (?:authentication error|(?:\S+ )?(?:mechanism )?handshake failed).*", re.I)


def explain(lines: Iterable[str]) -> str | None:
    """The first TLS/SASL failure among librdkafka's log lines, as one sentence (None: none seen)."""
    for line in lines:
        lower = line.lower()
        for needle, sentence in _RULES:
            if needle in lower:
                return sentence
        sasl = _SASL.search(line)
        if sasl:
            return sasl.group(0).split(" (after ")[0]
    return None


def server_certificate_problem(bootstrap_servers: str, props: Mapping[str, str], timeout_s: float = 5.0) -> str | None:
    """Why the first bootstrap server's certificate fails verification with these ``ssl.*`` keys (or None)."""
    if not uses_tls(props) or not bootstrap_servers.strip():
        return None
    first = bootstrap_servers.split(",")[0].strip()
    host, _, port = first.rpartition(":")
    host = host.strip("[]")
    context = ssl.create_default_context()
    tls = tls_material(props)
    if tls.ca_pem:
        context = ssl.create_default_context(cadata=tls.ca_pem)
    context.check_hostname = tls.check_hostname
    try:
        with (
            socket.create_connection((host, int(port)), timeout=timeout_s) as sock,
            context.wrap_socket(sock, server_hostname=host),
        ):
            return None
    except ssl.SSLCertVerificationError as e:
        return str(e.verify_message or e.reason or "verification failed").rstrip(".")
    except (OSError, ValueError):
        return None
