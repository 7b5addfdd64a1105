"""How user mistakes become one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ClassVar, NoReturn

import typer


class UsageError(Exception):
    """A mistake in how mm2 was invoked or configured; the message is shown as is."""

    exit_code: ClassVar[int] = 2


class StartupError(Exception):
    """mm2 could not start (unreachable cluster, port in use...)."""

    exit_code: ClassVar[int] = 3


def fail(message: str, code: int = 2) -> NoReturn:
    typer.echo(f"mm2: error: {message}", err=True)
    raise typer.Exit(code)


def _exit_codes() -> list[tuple[type[Exception], int]]:
    """One table: exception type -> exit code. ConfigError messages already name the key."""
    # deferred: needed once an error is caught, never by `mm2 --help` (start-up CPU of every mm2 process)
    from connect_core.api.errors import ConfigError, ConnectError
    from mirror.client.errors import ClusterUnreachableError
    from mirror.jobs.spark import SparkUnavailableError

    return [
        (UsageError, UsageError.exit_code),
        (StartupError, StartupError.exit_code),
        (ConfigError, 2),
        (FileNotFoundError, 2),
        (PermissionError, 2),
        (ClusterUnreachableError, 2),
        (SparkUnavailableError, 2),  # no Java, no PySpark, no master: the environment, not a failed job
        (ConnectError, 1),
    ]


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the known error tree into ``mm2: error: ...`` and an exit code."""
    try:
        yield
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Exception as exc:
        code = next((c for t, c in _exit_codes() if isinstance(exc, t)), None)
        if code is None:
            raise  # not a user mistake: the excepthook's one line (or a traceback at debug level)
        fail(_describe(exc), code)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"file not found: {exc.filename}"
    if isinstance(exc, PermissionError) and exc.filename:
        return f"permission denied: {exc.filename}"
    return str(exc) or type(exc).__name__


def guarded(func: Callable[..., None]) -> Callable[..., None]:
    """Decorator form of :func:`user_errors` for command functions."""

    import functools

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> None:
        with user_errors():
            func(*args, **kwargs)

    return wrapper


def excepthook_to_stderr() -> None:
    """Last resort: an unexpected error prints one line (details only at debug level)."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: object) -> None:
        import logging

        if logging.getLogger().isEnabledFor(logging.DEBUG):
            sys.__excepthook__(exc_type, exc, tb)  # type: ignore[arg-type]
        else:
            typer.echo(f"mm2: internal error: {exc_type.__name__}: {exc}", err=True)

    sys.excepthook = hook
