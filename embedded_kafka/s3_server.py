"""Run moto's S3 service, and only it, as the durable broker's local S3 server: ``python -m
embedded_kafka.s3_server --host H --port P``.

Why not ``python -m moto.server``: that front end serves every AWS service and works out, for each
request, which one is meant (it lists moto's package directory and stats each of its ~200 folders),
about 3 ms of CPU per request before S3 sees it. The broker sends thousands of small requests a minute
(a batch, its watermark and the cluster's metadata per produce; a watermark read and a listing per
fetch), so this server hands them straight to moto's S3 application instead, and writes no access log
line per request.
"""

from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType

from werkzeug.serving import WSGIRequestHandler, run_simple


class _QuietHandler(WSGIRequestHandler):
    """No access log line per request; errors are still logged."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Per-request logging is the hot path's cost, not information the tests read."""


def _exit(signum: int, frame: FrameType | None) -> None:
    sys.exit(0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m embedded_kafka.s3_server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    # moto imports take a second; the parent waits for the port to answer
    from moto.moto_server.werkzeug_app import create_backend_app

    signal.signal(signal.SIGTERM, _exit)
    run_simple(
        args.host,
        args.port,
        create_backend_app("s3"),
        threaded=True,
        use_reloader=False,
        request_handler=_QuietHandler,
    )


if __name__ == "__main__":
    main()
