"""TLS Kafka endpoints for tests: Debian's stunnel4 in front of an embedded Tansu broker.

Tansu listens plaintext on P1 and advertises P2; stunnel accepts TLS on P2 (server certificate for
127.0.0.1 from :mod:`tests.tls_pki`) and forwards to P1. ``mutual=True`` adds ``verify = 2``: a
client without a certificate from the test CA is refused. Clients see only P2, so everything they
do (bootstrap, metadata, produce, fetch, groups) crosses TLS. .ci/run installs stunnel4.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Self

from embedded_kafka import EmbeddedKafkaCluster, free_port
from embedded_kafka.ports import accepts_connections
from tests.tls_pki import Pki


def stunnel_binary() -> str:
    found = shutil.which("stunnel4") or shutil.which("stunnel")
    if found is None:
        raise RuntimeError("stunnel4 is not installed (apt-get install stunnel4; .ci/run does it)")
    return found


class Stunnel:
    """One stunnel process: TLS on ``accept_port`` -> plaintext ``connect_port``."""

    def __init__(
        self, workdir: Path, name: str, accept_port: int, connect_port: int, cert: Path, ca: Path | None = None
    ) -> None:
        self.accept_port = accept_port
        self.log = workdir / f"stunnel-{name}.log"
        self.conf = workdir / f"stunnel-{name}.conf"
        lines = [
            "foreground = yes",
            "pid =",
            f"output = {self.log}",
            "debug = 5",
            "",
            "[kafka]",
            "client = no",
            f"accept = 127.0.0.1:{accept_port}",
            f"connect = 127.0.0.1:{connect_port}",
            f"cert = {cert}",
        ]
        if ca is not None:
            lines += [f"CAfile = {ca}", "verify = 2"]
        self.conf.write_text("\n".join(lines) + "\n")
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30.0) -> Stunnel:
        self.log.unlink(missing_ok=True)  # stunnel appends: a previous run's lines must not count
        self._proc = subprocess.Popen(
            [stunnel_binary(), str(self.conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout_s
        while not (self._configured() and accepts_connections(self.accept_port)):  # ours, not a port thief's
            if self._proc.poll() is not None or time.monotonic() > deadline:
                text = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
                self.stop()
                raise RuntimeError(f"stunnel did not start on {self.accept_port}:\n{text[-2000:]}")
            time.sleep(0.05)
        return self

    def _configured(self) -> bool:
        return self.log.exists() and "Configuration successful" in self.log.read_text(errors="replace")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)


class TlsCluster(EmbeddedKafkaCluster):
    """An embedded broker reached only through stunnel: ``bootstrap_servers`` is the TLS port, and the
    test's own clients (``admin()``, ``producer()``, ``consumer()`` and every helper built on them) go
    through TLS with the test CA in PEM (and the client certificate when ``mutual``)."""

    def __init__(
        self, name: str, workdir: Path, pki: Pki, *, mutual: bool = False, server_cert: Path | None = None
    ) -> None:
        self.tls_port = free_port()
        super().__init__(name, advertised_port=self.tls_port)
        self._workdir, self._pki, self.mutual = workdir, pki, mutual
        self._server_cert = server_cert or pki.server_cert
        self.stunnel: Stunnel | None = None

    @property
    def bootstrap_servers(self) -> str:
        if self.stunnel is None:  # while the broker starts: its own readiness check, plaintext
            return super().bootstrap_servers
        return f"127.0.0.1:{self.tls_port}"

    def client_config(self, **overrides: Any) -> dict[str, Any]:
        if self.stunnel is None:
            return super().client_config(**overrides)
        tls: dict[str, Any] = {"security.protocol": "SSL", "ssl.ca.location": str(self._pki.ca_pem)}
        if self._server_cert != self._pki.server_cert:  # a certificate for another host: the test's own clients
            tls["ssl.endpoint.identification.algorithm"] = "none"  # still reach it
        if self.mutual:
            tls.update(
                {
                    "ssl.certificate.location": str(self._pki.client_cert_pem),
                    "ssl.key.location": str(self._pki.client_key_pem),
                }
            )
        return super().client_config(**{**tls, **overrides})

    def start(self) -> Self:
        if self.stunnel is not None:
            return self
        for attempt in range(3):  # the TLS port was free when picked; someone may have taken it since
            super().start()
            try:
                self.stunnel = Stunnel(
                    self._workdir,
                    self.name,
                    self.tls_port,
                    self.port or 0,
                    self._server_cert,
                    self._pki.ca_pem if self.mutual else None,
                ).start()
                return self
            except RuntimeError:
                super().stop()
                if attempt == 2:
                    raise
                self.tls_port = free_port()
                self._advertised_port = self.tls_port
            except BaseException:
                super().stop()
                raise
        return self

    def stop(self) -> None:
        stunnel, self.stunnel = self.stunnel, None
        if stunnel is not None:
            stunnel.stop()
        super().stop()
