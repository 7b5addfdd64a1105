"""A source connector's exactly-once settings (KIP-618) and their preflight checks, as Java words them.

``exactly.once.support`` (``requested`` | ``required``), ``transaction.boundary`` (``poll`` |
``interval`` | ``connector``) with ``transaction.boundary.interval.ms`` (default: the worker's
``offset.flush.interval.ms``), and ``offsets.storage.topic``. The checks are Java's
``DistributedHerder.validateSourceConnectorExactlyOnceSupport`` and
``validateSourceConnectorTransactionBoundary``: pure logic, so the herders only add their messages.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_core.api.connector import ExactlyOnceSupport, SourceConnector, TransactionBoundaryDefinition
from connect_core.runtime.connector_config import (
    EXACTLY_ONCE_SUPPORT_CONFIG,
    OFFSETS_TOPIC_CONFIG,
    TRANSACTION_BOUNDARY_CONFIG,
    TRANSACTION_BOUNDARY_INTERVAL_CONFIG,
)

log = logging.getLogger(__name__)


class ExactlyOnceSupportLevel(enum.Enum):
    REQUESTED = "requested"
    REQUIRED = "required"


class TransactionBoundary(enum.Enum):
    """Where an exactly-once source task commits its transaction (Java ``SourceTask.TransactionBoundary``)."""

    POLL = "poll"  # after every batch ``poll`` returned was dispatched
    INTERVAL = "interval"  # every transaction.boundary.interval.ms
    CONNECTOR = "connector"  # when the task asks, through its TransactionContext


@dataclass(frozen=True)
class ExactlyOnceSettings:
    """The parsed exactly-once keys of one source connector."""

    support: ExactlyOnceSupportLevel
    boundary: TransactionBoundary
    interval_s: float
    offsets_topic: str | None

    @classmethod
    def from_props(cls, props: Mapping[str, Any], offset_flush_interval_s: float) -> ExactlyOnceSettings:
        """Lenient (validation already ran): a missing key takes Java's default."""
        support = str(props.get(EXACTLY_ONCE_SUPPORT_CONFIG) or "requested").strip().lower()
        boundary = str(props.get(TRANSACTION_BOUNDARY_CONFIG) or "poll").strip().lower()
        interval = props.get(TRANSACTION_BOUNDARY_INTERVAL_CONFIG)
        topic = str(props.get(OFFSETS_TOPIC_CONFIG) or "").strip() or None
        return cls(
            ExactlyOnceSupportLevel(support),
            TransactionBoundary(boundary),
            offset_flush_interval_s if interval in (None, "") else int(str(interval)) / 1000.0,
            topic,
        )


def _unexpected(e: Exception) -> str:
    text = "An unexpected error occurred during validation"
    message = str(e).strip()
    return f"{text}: {message}" if message else f"{text}; please see the worker logs for more details."


def exactly_once_support_errors(
    props: Mapping[str, str], connector: SourceConnector, worker_enabled: bool
) -> list[str]:
    """Errors for ``exactly.once.support`` (none unless it is ``required``)."""
    level = str(props.get(EXACTLY_ONCE_SUPPORT_CONFIG) or "requested").strip().lower()
    if level != ExactlyOnceSupportLevel.REQUIRED.value:
        return []
    errors: list[str] = []
    if not worker_enabled:
        errors.append("This worker does not have exactly-once source support enabled.")
    try:
        support = connector.exactly_once_support(dict(props))
    except Exception as e:
        log.error("Failed while validating connector support for exactly-once semantics", exc_info=True)
        errors.append(_unexpected(e))
        return errors
    if support is None:
        errors.append(
            "The connector does not implement the API required for preflight validation of exactly-once source "
            "support. Please consult the documentation for the connector to determine whether it supports "
            'exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" '
            "for this property (which will disable this preflight check and allow the connector to be created)."
        )
    elif support is not ExactlyOnceSupport.SUPPORTED:
        errors.append("The connector does not support exactly-once semantics with the provided configuration.")
    return errors


def transaction_boundary_errors(props: Mapping[str, str], connector: SourceConnector) -> list[str]:
    """Errors for ``transaction.boundary`` (none unless it is ``connector``)."""
    boundary = str(props.get(TRANSACTION_BOUNDARY_CONFIG) or "poll").strip().lower()
    if boundary != TransactionBoundary.CONNECTOR.value:
        return []
    try:
        defined = connector.can_define_transaction_boundaries(dict(props))
    except Exception as e:
        log.error("Failed while validating connector support for defining its own transaction boundaries",
                  exc_info=True)  # fmt: skip
        return [_unexpected(e)]
    if defined is None:
        return [
            "This connector has returned a null value from its canDefineTransactionBoundaries method, which is not "
            "permitted. The connector will be treated as if it cannot define its own transaction boundaries, and "
            f"cannot be configured with '{TRANSACTION_BOUNDARY_CONFIG}' set to 'connector'."
        ]
    if defined is not TransactionBoundaryDefinition.SUPPORTED:
        return [
            "The connector does not support connector-defined transaction boundaries with the given configuration. "
            "Please reconfigure it to use a different transaction boundary definition."
        ]
    return []


def exactly_once_errors(
    props: Mapping[str, str], connector: SourceConnector, worker_enabled: bool
) -> dict[str, list[str]]:
    """Both preflight checks, by key (empty when valid)."""
    out: dict[str, list[str]] = {}
    support = exactly_once_support_errors(props, connector, worker_enabled)
    if support:
        out[EXACTLY_ONCE_SUPPORT_CONFIG] = support
    boundary = transaction_boundary_errors(props, connector)
    if boundary:
        out[TRANSACTION_BOUNDARY_CONFIG] = boundary
    return out


__all__ = [
    "ExactlyOnceSettings",
    "ExactlyOnceSupportLevel",
    "TransactionBoundary",
    "exactly_once_errors",
    "exactly_once_support_errors",
    "transaction_boundary_errors",
]
