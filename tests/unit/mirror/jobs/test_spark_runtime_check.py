"""What the jobs check of Spark's runtime before they write anything: PySpark importable, a java to run."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from mirror.jobs.spark import SUBMITTED_MARKER, SparkUnavailableError, check_spark_runtime, find_java


def fake_java(directory: Path) -> Path:
    java = directory / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    return java


def test_java_home_wins_over_path_as_in_sparks_launcher(tmp_path: Path) -> None:
    on_path = fake_java(tmp_path / "path")
    home = fake_java(tmp_path / "home")
    assert find_java({"PATH": str(on_path.parent)}) == str(on_path)
    assert find_java({"PATH": str(on_path.parent), "JAVA_HOME": str(home.parent.parent)}) == str(home)
    assert find_java({"PATH": str(on_path.parent), "JAVA_HOME": str(tmp_path / "empty")}) is None
    assert find_java({"PATH": str(tmp_path / "empty")}) is None


def test_missing_pyspark_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real(name, *a))
    env = {"PATH": str(fake_java(tmp_path).parent)}
    with pytest.raises(SparkUnavailableError, match=r"^PySpark is not installed: pip install 'mm2\[spark\]'$"):
        check_spark_runtime(env)
    check_spark_runtime({**env, SUBMITTED_MARKER: "1"})  # under spark-submit the JVM is already up


def test_missing_java_names_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(SparkUnavailableError, match="no java on PATH and JAVA_HOME is not set"):
        check_spark_runtime({"PATH": str(tmp_path)})
    check_spark_runtime({"PATH": str(fake_java(tmp_path).parent), "HOME": os.environ.get("HOME", "/")})
