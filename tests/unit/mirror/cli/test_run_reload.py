"""Re-reading mm2.properties in ``mm2 run``: the checks a file must pass, one line when it does not, the watch."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mirror.cli.errors import StartupError
from mirror.cli.run_cmd import check_file
from mirror.cli.run_reload import FileWatch, Reloader, ReloadRequest
from mirror.driver.driver import make_config
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.driver.reload_plan import ReloadPlan

BASE = {
    "clusters": "A, B, C",
    "A.bootstrap.servers": "127.0.0.1:1",
    "B.bootstrap.servers": "127.0.0.1:2",
    "C.bootstrap.servers": "127.0.0.1:3",
    "emit.heartbeats.enabled": "false",
    "A->B.enabled": "true",
}


def write(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
    return path


class Target:
    def __init__(self, config: MirrorMakerConfig) -> None:
        self.config = config
        self.plans: list[ReloadPlan] = []

    def reload(self, plan: ReloadPlan) -> bool:
        self.plans.append(plan)
        self.config = plan.config
        return True


def reloader(path: Path, target: Target, reached: list[list[str]], unreachable: str | None = None) -> Reloader:
    def reachable(config: MirrorMakerConfig, aliases: list[str]) -> None:
        reached.append(aliases)
        if unreachable in aliases:
            raise StartupError(f"cluster '{unreachable}' is unreachable: no answer within 5s")

    return Reloader(path, None, target, check_file, reachable)


@pytest.mark.parametrize(
    ("broken", "needle"),
    [
        ("A->D.enabled = true\n", "unknown cluster alias 'D'"),
        ("A->B.tasks.max = many\n", "tasks.max"),
        ("B.bootstrap.servers =\n", "cluster 'B' has no bootstrap servers"),
        ("clusters =\n", "clusters"),
        (
            "config.providers = env\nconfig.providers.env.class = no.such.Provider\nA->B.topics = ${env:X}\n",
            "config.providers",
        ),
    ],
)
def test_a_file_with_a_mistake_is_refused_in_one_line_and_changes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, broken: str, needle: str
) -> None:
    path = write(tmp_path / "mm2.properties", BASE)
    target = Target(make_config(BASE, source=path))
    path.write_text(path.read_text() + broken)
    caplog.set_level(logging.INFO, logger="mirror.cli.run_reload")
    assert reloader(path, target, []).reload("SIGHUP") is None
    assert target.plans == []
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    message = errors[0].getMessage()
    assert needle in message and "\n" not in message and "refused" in message and errors[0].exc_info is None


def test_a_missing_file_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path / "mm2.properties", BASE)
    target = Target(make_config(BASE, source=path))
    path.unlink()
    assert reloader(path, target, []).reload("SIGHUP") is None
    assert target.plans == [] and "refused" in caplog.text


def test_an_added_flow_whose_cluster_does_not_answer_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path / "mm2.properties", BASE)
    target = Target(make_config(BASE, source=path))
    write(path, {**BASE, "C->A.enabled": "true"})
    reached: list[list[str]] = []
    assert reloader(path, target, reached, unreachable="C").reload("SIGHUP") is None
    assert reached == [["C", "A"]] and target.plans == []
    assert "cluster 'C' is unreachable" in caplog.text


def test_a_valid_file_is_planned_and_applied_and_only_new_clusters_are_probed(tmp_path: Path) -> None:
    path = write(tmp_path / "mm2.properties", BASE)
    target = Target(make_config(BASE, source=path))
    write(path, {**BASE, "A->B.topics": "orders", "A->C.enabled": "true", "B.offset.flush.interval.ms": "1"})
    reached: list[list[str]] = []
    plan = reloader(path, target, reached).reload("SIGHUP")
    assert plan is not None and target.plans == [plan]
    assert plan.added == [SourceAndTarget("A", "C")] and reached == [["A", "C"]]
    assert plan.needs_restart == ["B.offset.flush.interval.ms"]
    again = reloader(path, target, reached).reload("SIGHUP")  # the same file again: only the restart-only
    assert again is not None and not again.added and not again.changed_keys  # setting is still to be told
    assert again.needs_restart == ["B.offset.flush.interval.ms"]


def test_an_unchanged_file_changes_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path / "mm2.properties", BASE)
    target = Target(make_config(BASE, source=path))
    caplog.set_level(logging.INFO, logger="mirror.cli.run_reload")
    assert reloader(path, target, []).reload("SIGHUP") is None
    assert target.plans == [] and "no change" in caplog.text


def test_the_watch_reports_a_content_change_once_and_ignores_a_touch(tmp_path: Path) -> None:
    now = [0.0]
    path = write(tmp_path / "mm2.properties", BASE)
    watch = FileWatch(path, interval_s=3, clock=lambda: now[0])
    write(path, {**BASE, "A->B.topics": "x"})
    assert not watch.changed()  # not yet time to look
    now[0] = 3.0
    assert watch.changed()
    now[0] = 6.0
    assert not watch.changed()
    path.touch()
    now[0] = 9.0
    assert not watch.changed()
    write(path, {**BASE, "A->B.topics": "y"})
    watch.seen()  # a SIGHUP read this content already
    now[0] = 12.0
    assert not watch.changed()


def test_reload_request_is_taken_once() -> None:
    request = ReloadRequest()
    assert not request.take()
    request.set()
    request.set()
    assert request.take() and not request.take()
