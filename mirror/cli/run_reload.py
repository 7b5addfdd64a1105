"""``mm2 run`` re-reads its file: on SIGHUP, and with ``--watch-config`` when the file's content changes.

A re-read file passes the checks ``mm2 run`` makes at start (parse, aliases, connector settings,
verification settings, references, REST settings; reachability of the clusters of flows it adds) before
anything changes; a file that fails them is refused in one ERROR line and the running flows stay as they
are. A file that passes becomes a :class:`~mirror.driver.reload_plan.ReloadPlan` the driver applies.
Everything here runs on ``mm2 run``'s main thread, between its waits: never two reloads at once, and
never a reload during start or stop.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.driver.reload_plan import ReloadPlan, plan_reload

log = logging.getLogger(__name__)

#: How often ``--watch-config`` looks at the file (its content, so a touch alone reloads nothing).
WATCH_INTERVAL_S = float(os.environ.get("MM2_WATCH_CONFIG_INTERVAL_S", "3"))


class ReloadRequest:
    """Set from a signal handler (a plain flag: no lock may be taken there), taken by the main loop."""

    def __init__(self) -> None:
        self._requested = False

    def set(self) -> None:
        self._requested = True

    def take(self) -> bool:
        """True once per request; a request that lands while a reload runs is served by the next take."""
        if not self._requested:
            return False
        self._requested = False
        return True


def _fingerprint(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None  # being replaced, or gone: the next look decides


class FileWatch:
    """Tells when a file's content differs from the last look (polled: no dependency, any filesystem)."""

    def __init__(
        self, path: Path, interval_s: float = WATCH_INTERVAL_S, clock: Callable[[], float] | None = None
    ) -> None:
        import time

        self._path = path
        self._interval_s = interval_s
        self._clock = clock or time.monotonic
        self._seen = _fingerprint(path)
        self._next = self._clock() + interval_s

    def changed(self) -> bool:
        """Looks at most once per interval; True when the content differs from what was last seen."""
        now = self._clock()
        if now < self._next:
            return False
        self._next = now + self._interval_s
        current = _fingerprint(self._path)
        if current is None or current == self._seen:
            return False
        self._seen = current
        return True

    def seen(self) -> None:
        """The file was just read for another reason (SIGHUP): its content is not news to the watch."""
        current = _fingerprint(self._path)
        if current is not None:
            self._seen = current


class ReloadTarget(Protocol):
    """What a reload changes: the driver (``MirrorMaker``)."""

    config: MirrorMakerConfig

    def reload(self, plan: ReloadPlan) -> bool: ...


#: ``(path, clusters) -> (config, pairs)``: the start checks that need no cluster
FileCheck = Callable[[Path, list[str] | None], tuple[MirrorMakerConfig, list[SourceAndTarget]]]
#: ``(config, aliases)``: raises when one of the clusters does not answer
Reachability = Callable[[MirrorMakerConfig, list[str]], None]


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


class Reloader:
    """Re-reads ``path`` and applies it to ``target``; ``on_applied`` follows up (scheduled verification)."""

    def __init__(
        self,
        path: Path,
        clusters: list[str] | None,
        target: ReloadTarget,
        check_file: FileCheck,
        check_reachable: Reachability,
        on_applied: Callable[[ReloadPlan], None] = lambda plan: None,
    ) -> None:
        self._path = path
        self._clusters = clusters
        self._target = target
        self._check_file = check_file
        self._check_reachable = check_reachable
        self._on_applied = on_applied

    def plan(self) -> ReloadPlan:
        """The checked plan for the file as it is now; raises (ConfigError, StartupError, OSError...) on a mistake."""
        new, _ = self._check_file(self._path, self._clusters)
        plan = plan_reload(self._target.config, new, self._clusters)
        plan.config.validate(self._clusters)  # with the restart-only settings put back, still a valid file
        added = [alias for pair in plan.added for alias in (pair.source, pair.target)]
        if added:
            self._check_reachable(plan.config, list(dict.fromkeys(added)))
        return plan

    def reload(self, why: str) -> ReloadPlan | None:
        """One reload; returns the applied plan, or None when refused or when nothing changed."""
        log.info("Re-reading %s (%s)", self._path, why)
        try:
            plan = self.plan()
        except Exception as e:  # every mistake in the file is one line; the running mirror is untouched
            log.error("Reload refused, the running flows are unchanged: %s: %s", self._path, one_line(e))
            return None
        if not plan.changes_anything:
            log.info("Reload: %s has no change for this node", self._path)
            return None
        self._target.reload(plan)
        self._on_applied(plan)
        return plan
