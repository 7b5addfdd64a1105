"""Scheduled verification settings in mm2.properties: off by default, global or per flow, bad values rejected."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError
from mirror.driver.driver import make_config
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.jobs.verify_schedule import ScheduledVerification, VerifySettings, check_settings, verify_settings

AB, BA = SourceAndTarget("A", "B"), SourceAndTarget("B", "A")


def config(**extra: str) -> MirrorMakerConfig:
    return make_config({"clusters": "A, B", "A.bootstrap.servers": "a:9092", "B.bootstrap.servers": "b:9092",
                        "A->B.enabled": "true", **extra})


def test_off_by_default_and_when_not_positive() -> None:
    assert verify_settings(config(), AB) is None
    assert verify_settings(config(**{"verify.interval.seconds": "-1"}), AB) is None
    assert ScheduledVerification(config(), [AB, BA], None).verifiers == []


def test_global_and_per_flow_settings() -> None:
    cfg = config(**{"verify.interval.seconds": "300", "A->B.verify.interval.seconds": "60",
                    "verify.topics": "orders.*", "verify.chunk.records": "5000"})
    assert verify_settings(cfg, AB) == VerifySettings(60.0, "orders.*", 5000)
    assert verify_settings(cfg, BA) == VerifySettings(300.0, "orders.*", 5000)
    scheduled = ScheduledVerification(cfg, [AB, BA], None)
    assert [v.pair for v in scheduled.verifiers] == [AB]  # B->A is not an enabled flow


@pytest.mark.parametrize(("key", "value"), [("verify.interval.seconds", "often"),
                                            ("verify.chunk.records", "0"), ("A->B.verify.chunk.records", "x")])
def test_bad_values_name_their_key(key: str, value: str) -> None:
    cfg = config(**{"verify.interval.seconds": "10", key: value})
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        check_settings(cfg, [AB])
