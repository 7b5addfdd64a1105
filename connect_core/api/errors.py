"""Exceptions the SPI and the runtime raise.

One root so callers can catch everything Connect-related; each edge (REST, CLI, task loop)
maps these to its own representation in one table::

    ConnectError
    ├── RetriableError      the worker retries with backoff (Kafka RetriableException)
    ├── DataError           conversion/serialisation; subject to errors.tolerance
    ├── ConfigError         .issues: per-key problems (Kafka ConfigValue errors)   -> REST 400
    ├── BadRequestError     malformed request                                    -> REST 400
    ├── NotFoundError       unknown connector/task/plugin                        -> REST 404
    ├── AlreadyExistsError  connector exists                                     -> REST 409
    ├── ConflictError       rebalance in progress, wrong state                   -> REST 409
    └── NotLeaderError      request must go to the leader (.leader_url)          -> REST 409 / forward
"""

from __future__ import annotations

from dataclasses import dataclass


class ConnectError(Exception):
    """Root of every error raised by connect_core and the plugins it runs."""


class RetriableError(ConnectError):
    """A transient failure: the operation may succeed if retried."""


class DataError(ConnectError):
    """A record could not be converted or transformed."""


@dataclass(frozen=True)
class ConfigIssue:
    """One problem with one configuration key."""

    key: str
    message: str

    def __str__(self) -> str:
        # Messages in Kafka's wording already name the key ("... for configuration tasks.max: ...").
        if not self.key or self.key in self.message:
            return self.message
        return f"{self.key}: {self.message}"


class ConfigError(ConnectError):
    """Configuration is invalid; carries every problem found, each naming its key."""

    def __init__(self, issues: list[ConfigIssue] | str, *, key: str | None = None) -> None:
        if isinstance(issues, str):
            issues = [ConfigIssue(key or "", issues)]
        self.issues: tuple[ConfigIssue, ...] = tuple(issues)
        super().__init__(self.describe())

    def describe(self) -> str:
        parts = [str(i) for i in self.issues]
        return "; ".join(parts) if parts else "invalid configuration"


class BadRequestError(ConnectError):
    """The request itself is malformed (REST 400)."""


class NotFoundError(ConnectError):
    """The named connector, task or plugin does not exist (REST 404)."""


class AlreadyExistsError(ConnectError):
    """A connector with that name exists already (REST 409)."""


class ConflictError(ConnectError):
    """The request cannot be served in the current state, e.g. during a rebalance (REST 409)."""


class NotLeaderError(ConflictError):
    """Only the group leader may perform this write; ``leader_url`` says where to send it."""

    def __init__(self, message: str, leader_url: str | None = None) -> None:
        super().__init__(message)
        self.leader_url = leader_url


class RestError(ConnectError):
    """An error that carries its own HTTP status (Java ``ConnectRestException``): raised by herders as
    well as by the REST layer, so it lives here, below both."""

    def __init__(self, status: int, message: str | None, error_code: int | None = None) -> None:
        super().__init__(message or "")
        self.status = status
        self.error_code = status if error_code is None else error_code
        self.message = message
