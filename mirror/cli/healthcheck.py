"""The container's HEALTHCHECK: ``python -m mirror.cli.healthcheck`` probes what the running mm2 serves.

The image runs any mm2 command, so the check reads the mm2 command line of the container's processes
and probes the port that command serves: ``mm2 run --metrics-port N`` -> ``/metrics``; the REST listener
of ``mm2 run`` with ``dedicated.mode.enable.internal.rest = true`` and of ``mm2 connect``. A command
that serves nothing (``demo``, ``backfill``, ``verify``...) is healthy while it runs: there is nothing to
ask. ``MM2_HEALTHCHECK_URL`` overrides the choice. Exit 0 healthy, 1 not (Docker's convention).
"""

from __future__ import annotations

import os
import ssl
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

from connect_core.config.properties import load_properties

TIMEOUT_S = 5.0
REST_KEY = "dedicated.mode.enable.internal.rest"


def mm2_argv(cmdline: Sequence[str]) -> list[str] | None:
    """The arguments after the ``mm2`` program in a process's command line (through tini, python...)."""
    for i, arg in enumerate(cmdline):
        if Path(arg).name == "mm2":
            return list(cmdline[i + 1 :])
    return None


def _option(args: Sequence[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1 :]
    return None


def _positionals(args: Sequence[str]) -> list[str]:
    """Positional arguments, skipping options and the value of those that take one."""
    takes_value = {"--metrics-port", "--clusters", "--log-level", "--herder"}
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in takes_value
        else:
            out.append(arg)
    return out


def _listener_url(props: dict[str, str]) -> str:
    """The first REST listener as a URL this container can reach (a wildcard host means loopback)."""
    from connect_core.rest.server import DEFAULT_LISTENERS, Listener

    raw = (props.get("listeners") or "").strip() or DEFAULT_LISTENERS
    listener = Listener.parse(raw.split(",")[0])
    host = listener.host if listener.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"{listener.protocol}://{host}:{listener.port}/"


def probe_url(args: Sequence[str]) -> str | None:
    """The URL to probe for an mm2 command line (arguments after ``mm2``), or None: nothing is served.

    Pure apart from reading the command's properties file when it may enable the REST API.
    """
    positionals = _positionals(args)
    if not positionals:
        return None
    command = positionals[0]
    if command == "run":
        port = _option(args, "--metrics-port")
        if port is not None:
            return f"http://127.0.0.1:{int(port)}/metrics"
        if len(positionals) < 2:
            return None
        props = load_properties(positionals[1])
        if props.get(REST_KEY, "false").strip().lower() != "true":
            return None
        return _listener_url(props)
    if command == "connect" and len(positionals) >= 3:
        return _listener_url(load_properties(positionals[2]))
    return None


def _process_cmdlines(proc: Path = Path("/proc")) -> Iterator[list[str]]:
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if raw:
            yield raw.rstrip(b"\0").decode(errors="replace").split("\0")


def find_url(cmdlines: Sequence[Sequence[str]]) -> str | None:
    """The probe URL of the first mm2 process that serves something."""
    for cmdline in cmdlines:
        args = mm2_argv(cmdline)
        if args is not None:
            url = probe_url(args)
            if url is not None:
                return url
    return None


def check(url: str, timeout: float = TIMEOUT_S) -> str | None:
    """None when ``url`` answers with any HTTP status below 500 (401 from an authenticated REST API
    still proves it serves); otherwise why not. TLS is not verified: this is a liveness probe of localhost."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as response:
            status = int(response.status)
    except urllib.error.HTTPError as e:
        status = e.code
    except (OSError, ValueError) as e:
        return f"{url}: {getattr(e, 'reason', None) or e}"
    return None if status < 500 else f"{url}: HTTP {status}"


def main() -> int:
    try:
        url = os.environ.get("MM2_HEALTHCHECK_URL") or find_url(list(_process_cmdlines()))
    except Exception as e:  # an unreadable or bad config: report it, the container is not healthy
        print(f"mm2 healthcheck: {e}", file=sys.stderr)
        return 1
    if url is None:
        print("mm2 healthcheck: this command serves no port; nothing to probe")
        return 0
    problem = check(url)
    if problem is not None:
        print(f"mm2 healthcheck: {problem}", file=sys.stderr)
        return 1
    print(f"mm2 healthcheck: {url} answers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
