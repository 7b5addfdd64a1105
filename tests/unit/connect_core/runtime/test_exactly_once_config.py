"""KIP-618 connector keys: parsing, and the preflight checks in Java's words (distributed herders only)."""

from __future__ import annotations

from typing import Any

import pytest

from connect_core.api.connector import ExactlyOnceSupport, TransactionBoundaryDefinition
from connect_core.connectors.file_stream_source import FileStreamSourceConnector
from connect_core.herder.common import validate_connector_config
from connect_core.runtime.exactly_once_config import (
    ExactlyOnceSettings,
    ExactlyOnceSupportLevel,
    TransactionBoundary,
    exactly_once_errors,
)
from connect_core.runtime.worker_config import override_policy

SOURCE = {"name": "f", "connector.class": "FileStreamSource", "topic": "t", "file": "/tmp/x"}


class _Unknown(FileStreamSourceConnector):
    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        return None

    def can_define_transaction_boundaries(self, props: dict[str, str]) -> Any:
        return None


class _Boundaries(FileStreamSourceConnector):
    def can_define_transaction_boundaries(self, props: dict[str, str]) -> TransactionBoundaryDefinition:
        return TransactionBoundaryDefinition.SUPPORTED


class _Broken(FileStreamSourceConnector):
    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        raise RuntimeError("boom")


def test_settings_defaults_and_interval_from_the_worker_flush_interval() -> None:
    s = ExactlyOnceSettings.from_props({}, 60.0)
    assert (s.support, s.boundary, s.interval_s, s.offsets_topic) == (
        ExactlyOnceSupportLevel.REQUESTED,
        TransactionBoundary.POLL,
        60.0,
        None,
    )
    s = ExactlyOnceSettings.from_props(
        {
            "transaction.boundary": "Interval",
            "transaction.boundary.interval.ms": "250",
            "offsets.storage.topic": "own-offsets",
        },
        60.0,
    )
    assert (s.boundary, s.interval_s, s.offsets_topic) == (TransactionBoundary.INTERVAL, 0.25, "own-offsets")


def test_required_support_is_checked_against_the_worker_and_the_connector() -> None:
    assert exactly_once_errors(SOURCE, FileStreamSourceConnector(), True) == {}
    required = {**SOURCE, "exactly.once.support": "required"}
    assert exactly_once_errors(required, FileStreamSourceConnector(), True) == {}
    assert exactly_once_errors(required, FileStreamSourceConnector(), False) == {
        "exactly.once.support": ["This worker does not have exactly-once source support enabled."]
    }
    no_file = {k: v for k, v in required.items() if k != "file"}
    assert exactly_once_errors(no_file, FileStreamSourceConnector(), True)["exactly.once.support"] == [
        "The connector does not support exactly-once semantics with the provided configuration."
    ]
    unknown = exactly_once_errors(required, _Unknown(), True)["exactly.once.support"][0]
    assert unknown.startswith("The connector does not implement the API required for preflight validation")
    assert exactly_once_errors(required, _Broken(), True)["exactly.once.support"] == [
        "An unexpected error occurred during validation: boom"
    ]


def test_connector_boundaries_need_a_connector_that_defines_them() -> None:
    props = {**SOURCE, "transaction.boundary": "connector"}
    assert exactly_once_errors(props, FileStreamSourceConnector(), True)["transaction.boundary"] == [
        "The connector does not support connector-defined transaction boundaries with the given configuration. "
        "Please reconfigure it to use a different transaction boundary definition."
    ]
    assert (
        "null value from its canDefineTransactionBoundaries"
        in exactly_once_errors(props, _Unknown(), True)["transaction.boundary"][0]
    )
    assert exactly_once_errors(props, _Boundaries(), True) == {}


@pytest.mark.parametrize("enabled", [None, False, True])
def test_herder_validation_adds_the_checks_only_for_distributed_workers(enabled: bool | None) -> None:
    props = {**SOURCE, "exactly.once.support": "required", "transaction.boundary": "connector"}
    infos = validate_connector_config(props, override_policy("All"), exactly_once_enabled=enabled)
    errors = {v.name: v.errors for _, v in infos.configs if v.errors}
    if enabled is None:  # standalone: Java's AbstractHerder checks nothing here
        assert errors == {}
        return
    assert (
        "The connector does not support connector-defined transaction boundaries" in errors["transaction.boundary"][0]
    )
    assert (
        "This worker does not have exactly-once source support enabled." in errors.get("exactly.once.support", [])
    ) is (not enabled)
    bad = validate_connector_config(
        {**props, "exactly.once.support": "sometimes"}, override_policy("All"), exactly_once_enabled=enabled
    )
    bad_errors = {v.name: v.errors for _, v in bad.configs if v.errors}
    assert len(bad_errors["exactly.once.support"]) == 1  # the value's own error only, as in Java
