"""Scheduled verification settings in mm2.properties: off by default, global or per flow, bad values rejected."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError
from mirror.driver.driver import make_config
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.jobs.verify.schedule import ScheduledVerification, VerifySettings, check_settings, verify_settings

AB, BA = SourceAndTarget("A", "B"), SourceAndTarget("B", "A")


def config(**extra: str) -> MirrorMakerConfig:
    return make_config(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": "a:9092",
            "B.bootstrap.servers": "b:9092",
            "A->B.enabled": "true",
            **extra,
        }
    )


def test_off_by_default_and_when_not_positive() -> None:
    assert verify_settings(config(), AB) is None
    assert verify_settings(config(**{"verify.interval.seconds": "-1"}), AB) is None
    assert ScheduledVerification(config(), [AB, BA], None).verifiers == []


def test_global_and_per_flow_settings() -> None:
    cfg = config(
        **{
            "verify.interval.seconds": "300",
            "A->B.verify.interval.seconds": "60",
            "verify.topics": "orders.*",
            "verify.chunk.records": "5000",
        }
    )
    assert verify_settings(cfg, AB) == VerifySettings(60.0, "orders.*", 5000)
    assert verify_settings(cfg, BA) == VerifySettings(300.0, "orders.*", 5000)
    scheduled = ScheduledVerification(cfg, [AB, BA], None)
    assert [v.pair for v in scheduled.verifiers] == [AB]  # B->A is not an enabled flow


@pytest.mark.parametrize(
    ("key", "value"),
    [("verify.interval.seconds", "often"), ("verify.chunk.records", "0"), ("A->B.verify.chunk.records", "x")],
)
def test_bad_values_name_their_key(key: str, value: str) -> None:
    cfg = config(**{"verify.interval.seconds": "10", key: value})
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        check_settings(cfg, [AB])


def test_the_schedule_exports_its_interval_and_start_for_the_staleness_alert() -> None:
    """MM2VerificationStale compares the last success (or the schedule's start, before any) with 3 intervals."""
    import time

    from prometheus_client import CollectorRegistry

    from mirror.driver.metrics import Mm2Metrics

    metrics = Mm2Metrics(CollectorRegistry())
    scheduled = ScheduledVerification(config(**{"verify.interval.seconds": "60"}), [AB], metrics)
    before = time.time()
    scheduled.start()
    try:
        labels = {"source": "A", "target": "B"}
        get = metrics.registry.get_sample_value
        assert get("mm2_verify_interval_seconds", labels) == 60.0
        assert before <= (get("mm2_verify_schedule_start_timestamp_seconds", labels) or 0) <= time.time()
        assert get("mm2_verify_last_success_timestamp_seconds", labels) is None  # the first run is a minute away
    finally:
        scheduled.stop()
