"""Plugins are found through package entry points: mm2's own MirrorMaker connectors, and a third-party
package installed with pip, by Java-style name, simple and pruned alias, with its own version."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_core.plugins import ENTRY_POINT_GROUP, Plugins, installed_plugins

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def registry_restored() -> Iterator[None]:
    saved = (dict(Plugins._entries), dict(Plugins._aliases), dict(Plugins._loaded))
    try:
        yield
    finally:
        Plugins._entries, Plugins._aliases, Plugins._loaded = saved


def test_connect_core_names_no_mirror_module() -> None:
    source = (ROOT / "connect_core" / "plugins.py").read_text(encoding="utf-8")
    assert "mirror.connectors" not in source and '"mirror.' not in source


def test_mirror_connectors_come_from_mm2s_entry_points() -> None:
    declared = {e.java_name: e for e in installed_plugins()}
    for name in ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"):
        java = f"org.apache.kafka.connect.mirror.{name}"
        assert declared[java].kinds == ("source",)
        assert declared[java].target.startswith("mirror.connectors.")
        cls = Plugins.load(java, "source")
        assert Plugins.load(name, "source") is cls
        assert Plugins.load(name.removesuffix("Connector"), "source") is cls


def _build_package(src: Path) -> None:
    (src / "acme_connect_plugins").mkdir(parents=True)
    (src / "acme_connect_plugins" / "__init__.py").write_text(
        textwrap.dedent('''
        class ShoutTransformation:
            """Upper-cases string values."""

            def configure(self, configs):
                self.configs = configs

            def apply(self, record):
                return record

            def close(self):
                pass
    ''')
    )
    (src / "pyproject.toml").write_text(
        textwrap.dedent(f'''
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "acme-connect-plugins"
        version = "1.2.3"

        [tool.setuptools]
        packages = ["acme_connect_plugins"]

        [project.entry-points."{ENTRY_POINT_GROUP}.transformation"]
        "com.acme.connect.transforms.ShoutTransformation" = "acme_connect_plugins:ShoutTransformation"
    ''')
    )


def test_a_third_party_package_installed_with_pip_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry_restored: None
) -> None:
    src, target = tmp_path / "src", tmp_path / "site"
    _build_package(src)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(src)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    with pytest.raises(Exception, match="could not be found"):
        Plugins.load("com.acme.connect.transforms.ShoutTransformation", "transformation")
    monkeypatch.syspath_prepend(str(target))
    Plugins.rescan()
    cls = Plugins.load("com.acme.connect.transforms.ShoutTransformation", "transformation")
    assert cls.__module__ == "acme_connect_plugins"
    assert Plugins.load("ShoutTransformation", "transformation") is cls
    assert Plugins.load("Shout", "transformation") is cls  # pruned alias
    listed = {d.class_name: d for d in Plugins.list("transformation")}
    assert listed["com.acme.connect.transforms.ShoutTransformation"].version == "1.2.3"
    assert Plugins.java_name_of(cls) == "com.acme.connect.transforms.ShoutTransformation"
