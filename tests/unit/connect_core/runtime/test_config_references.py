"""Connector/task configs keep their references in storage; the worker resolves them with its own providers."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from connect_core.runtime.config_references import WorkerConfigTransformer, has_references, reverse_transform


def test_resolves_with_the_workers_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC_TEST_PW", "env-secret")
    secrets = tmp_path / "s.properties"
    secrets.write_text("pw = file-secret\n")
    worker = {
        "config.providers": "f",
        "config.providers.f.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    }
    transformer = WorkerConfigTransformer(worker)
    got = transformer.transform({"a": f"${{f:{secrets}:pw}}", "b": "x${env:CC_TEST_PW}y", "c": "${topic}", "d": "p"})
    assert got == {"a": "file-secret", "b": "xenv-secrety", "c": "${topic}", "d": "p"}
    transformer.close()


def test_an_unresolvable_reference_stays_and_is_named_without_values(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CC_TEST_PW", "env-secret")
    monkeypatch.delenv("CC_TEST_MISSING", raising=False)
    with caplog.at_level(logging.WARNING):
        got = WorkerConfigTransformer({}).transform(
            {"a": "${env:CC_TEST_MISSING}", "b": "${env:CC_TEST_PW}", "c": "${nosuch:k}"}, "config of connector m"
        )
    assert got == {"a": "${env:CC_TEST_MISSING}", "b": "env-secret", "c": "${nosuch:k}"}
    text = caplog.text
    assert "config of connector m" in text and "CC_TEST_MISSING" in text and "nosuch" in text
    assert "env-secret" not in text


def test_reverse_transform_puts_the_stored_references_back() -> None:
    stored = {"pw": "${mm2:A.ssl.key.password}", "jaas": 'x password="${env:P}";', "topics": "t"}
    tasks = [{"pw": "secret", "jaas": 'x password="p";', "topics": "t", "task.index": "0"}, {"task.index": "1"}]
    assert reverse_transform(stored, tasks) == [
        {"pw": "${mm2:A.ssl.key.password}", "jaas": 'x password="${env:P}";', "topics": "t", "task.index": "0"},
        {"task.index": "1"},
    ]
    assert reverse_transform({"topics": "t"}, tasks) is tasks


def test_has_references() -> None:
    assert has_references({"a": "${env:X}"})
    assert not has_references({"a": "${topic}", "b": "plain", "c": None})  # type: ignore[dict-item]
