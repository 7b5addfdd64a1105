"""A local S3 server (PyPI ``moto[server]``) that gives the embedded Tansu broker durable storage.

With memory storage a restarted Tansu broker is empty, so broker-restart faults cannot be tested. On
``--storage-engine s3://BUCKET/`` against this server a SIGKILLed broker comes back with its topics,
records and committed group offsets (broker-notes.md, "Durable storage"). moto keeps the buckets in its
own memory: restart the broker, never this server, while the data must survive.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any, Self

from embedded_kafka.children import DURABLE_STORAGE_BOOST, child_preexec
from embedded_kafka.errors import BrokerStartError
from embedded_kafka.ports import LOOPBACK, free_port

#: Credentials and region moto accepts (it checks none of them); Tansu's S3 client needs them set.
_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ALLOW_HTTP": "true",
}


#: Straight to the loopback server, whatever proxy the environment names.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def bucket_name(prefix: str) -> str:
    """A fresh, valid S3 bucket name (lowercase letters, digits and hyphens, at most 63 characters)."""
    stem = re.sub(r"[^a-z0-9-]+", "-", prefix.lower()).strip("-")[:40] or "mm2"
    return f"{stem}-{uuid.uuid4().hex[:12]}"


class MotoS3Server:
    """One S3 server process (moto's S3 service, :mod:`embedded_kafka.s3_server`) on a loopback port;
    :meth:`create_bucket` and :meth:`broker_env` feed Tansu."""

    READY_TIMEOUT = 30.0

    def __init__(self, port: int | None = None, *, ready_timeout: float | None = None) -> None:
        self._requested_port = port
        self._ready_timeout = self.READY_TIMEOUT if ready_timeout is None else ready_timeout
        self._port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None

    @property
    def endpoint(self) -> str:
        if self._port is None:
            raise BrokerStartError("the local S3 server (moto) is not started")
        return f"http://{LOOPBACK}:{self._port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Self:
        """Spawn moto and return once it answers HTTP; BrokerStartError saying what to do otherwise."""
        if self.running:
            return self
        if importlib.util.find_spec("moto") is None:
            raise BrokerStartError(
                "the durable embedded broker keeps its data in a local S3 server, which needs moto: "
                "pip install 'moto[server]'   (or pip install 'mm2[durable]')"
            )
        port = self._requested_port or free_port()
        fd, log_name = tempfile.mkstemp(prefix=f"moto-{port}-", suffix=".log")
        self._log_path = Path(log_name)
        with open(fd, "wb") as log:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "embedded_kafka.s3_server", "--host", LOOPBACK, "--port", str(port)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=child_preexec(DURABLE_STORAGE_BOOST),
            )
        self._port = port
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        proc = self._proc
        assert proc is not None
        deadline = time.monotonic() + self._ready_timeout
        while True:
            if proc.poll() is not None:
                raise BrokerStartError(
                    f"the local S3 server (moto) exited with code {proc.returncode} on port {self._port}: "
                    f"{self.log_tail()}"
                )
            try:
                with _DIRECT.open(f"{self.endpoint}/", timeout=1):  # ListBuckets
                    return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() >= deadline:
                raise BrokerStartError(
                    f"the local S3 server (moto) on port {self._port} did not answer within "
                    f"{self._ready_timeout}s: {self.log_tail()}"
                )
            time.sleep(0.05)

    def create_bucket(self, name: str) -> str:
        """Create bucket ``name`` (moto checks no signature, so a plain PUT does); returns the name."""
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        try:
            with _DIRECT.open(request, timeout=10):
                return name
        except (urllib.error.URLError, OSError) as exc:
            raise BrokerStartError(f"cannot create bucket {name!r} on the local S3 server: {exc}") from exc

    def _client(self) -> Any:
        """A boto3 S3 client of this server (boto3 comes with moto[server]; moto checks no credentials)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=_AWS_ENV["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
            region_name=_AWS_ENV["AWS_DEFAULT_REGION"],
        )

    def list_keys(self, bucket: str, prefix: str) -> list[str]:
        """Keys under ``prefix`` in ``bucket``, in key order."""
        pages = self._client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(str(o["Key"]) for page in pages for o in page.get("Contents", []))

    def delete_key(self, bucket: str, key: str) -> None:
        self._client().delete_object(Bucket=bucket, Key=key)

    def broker_env(self) -> dict[str, str]:
        """What Tansu's S3 storage engine needs in its environment to use this server."""
        return {**_AWS_ENV, "AWS_ENDPOINT": self.endpoint}

    def log_tail(self, lines: int = 15) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "(no log)"
        tail = self._log_path.read_text(errors="replace").splitlines()[-lines:]
        return "\n".join(tail) if tail else "(log is empty)"

    def stop(self) -> None:
        """Kill the server (its buckets go with it) and remove its log; idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        self._port = None
        if self._log_path is not None:
            with contextlib.suppress(OSError):
                self._log_path.unlink()
            self._log_path = None
