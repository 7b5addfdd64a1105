"""the suite's fixtures use clusters given by MM2_TEST_BOOTSTRAP_<ALIAS> (the path that runs the
whole suite against real Apache Kafka) instead of starting their own brokers, and a test needing an
alias that was not given is skipped with the variable's name as the reason.

Stand-ins for the "real" clusters are two Tansu processes started here; the inner pytest session
must produce to and consume from exactly those."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from embedded_kafka import EmbeddedKafkaCluster, unique_name


def test_fixtures_use_clusters_from_the_environment(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:  # fmt: skip
    if os.environ.get("MM2_TEST_ENGINE") or any(k.startswith("MM2_TEST_BOOTSTRAP_") for k in os.environ):
        pytest.skip("already running against external clusters: the inner run would reuse them")
    topic = unique_name("ext")
    with EmbeddedKafkaCluster("ext-a") as a, EmbeddedKafkaCluster("ext-b") as b:
        monkeypatch.setenv("MM2_TEST_BOOTSTRAP_A", a.bootstrap_servers)
        monkeypatch.setenv("MM2_TEST_BOOTSTRAP_B", b.bootstrap_servers)
        monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[2]))  # the copied conftest loads tests.run_lock
        pytester.makeconftest((Path(__file__).parents[1] / "conftest.py").read_text())
        pytester.makepyfile(
            test_inner=f"""
            def test_two(two_clusters):
                a, b = two_clusters
                assert a.bootstrap_servers == {a.bootstrap_servers!r}
                assert b.bootstrap_servers == {b.bootstrap_servers!r}
                a.create_topic({topic!r})
                b.create_topic({topic!r})
                a.produce({topic!r}, [b"on-a"])
                b.produce({topic!r}, [b"on-b"])
                assert a.read_values({topic!r}) == [b"on-a"]
                assert b.read_values({topic!r}) == [b"on-b"]

            def test_three(three_clusters):
                raise AssertionError("C was not given: must have been skipped")
            """
        )
        result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
        result.assert_outcomes(passed=1, skipped=1)
        result.stdout.fnmatch_lines(["*MM2_TEST_BOOTSTRAP_C*"])
        # the inner run wrote to the clusters given to it, and they are still running
        assert a.running and b.running
        assert a.read_values(topic) == [b"on-a"] and b.read_values(topic) == [b"on-b"]
