"""Plugin names resolve like Connect's (Java class names, simple and pruned aliases) plus Python paths."""

from __future__ import annotations

import subprocess
import sys

import pytest

from connect_core.api.errors import ConfigError, NotFoundError
from connect_core.connectors.file_stream_source import FileStreamSourceConnector
from connect_core.converters import ByteArrayConverter, JsonConverter, SimpleHeaderConverter, StringConverter
from connect_core.plugins import KINDS, PluginDesc, PluginNotFoundError, Plugins
from connect_core.transforms import RegexRouter, TopicNameMatches


@pytest.mark.parametrize(
    ("name", "kind", "cls"),
    [
        ("org.apache.kafka.connect.converters.ByteArrayConverter", "converter", ByteArrayConverter),
        ("ByteArrayConverter", "converter", ByteArrayConverter),
        ("ByteArray", "converter", ByteArrayConverter),
        ("org.apache.kafka.connect.storage.StringConverter", "header_converter", StringConverter),
        ("org.apache.kafka.connect.json.JsonConverter", "converter", JsonConverter),
        ("Json", "converter", JsonConverter),
        ("org.apache.kafka.connect.storage.SimpleHeaderConverter", "header_converter", SimpleHeaderConverter),
        ("org.apache.kafka.connect.transforms.RegexRouter", "transformation", RegexRouter),
        ("RegexRouter", "transformation", RegexRouter),
        ("org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicate", TopicNameMatches),
        ("org.apache.kafka.connect.file.FileStreamSourceConnector", "source", FileStreamSourceConnector),
        ("FileStreamSource", "source", FileStreamSourceConnector),
        ("  FileStreamSourceConnector ", "source", FileStreamSourceConnector),
        ("connect_core.converters.byte_array.ByteArrayConverter", "converter", ByteArrayConverter),
        ("connect_core.converters.byte_array:ByteArrayConverter", None, ByteArrayConverter),
    ],
)
def test_load_by_any_name(name: str, kind: str | None, cls: type) -> None:
    assert Plugins.load(name, kind) is cls


def test_load_accepts_a_class() -> None:
    assert Plugins.load(JsonConverter, "converter") is JsonConverter
    assert isinstance(Plugins.new_instance("RegexRouter", "transformation"), RegexRouter)
    with pytest.raises(PluginNotFoundError, match="is not a predicate"):
        Plugins.load(JsonConverter, "predicate")


def test_unknown_and_wrong_kind_errors_are_clear() -> None:
    with pytest.raises(PluginNotFoundError) as e:
        Plugins.load("com.example.Nope", "converter", key="value.converter")
    assert isinstance(e.value, ConfigError) and isinstance(e.value, NotFoundError)
    assert e.value.issues[0].key == "value.converter"
    assert "com.example.Nope could not be found" in str(e.value) and "ByteArrayConverter" in str(e.value)
    with pytest.raises(PluginNotFoundError, match="is not a source"):
        Plugins.load("RegexRouter", "source")
    with pytest.raises(PluginNotFoundError, match="is not a converter"):
        Plugins.load("connect_core.transforms.builtin:RegexRouter", "converter")
    with pytest.raises(PluginNotFoundError, match="is not a class"):
        Plugins.load("connect_core.plugins:KINDS")
    with pytest.raises(PluginNotFoundError, match="Missing"):
        Plugins.load("", "source")
    with pytest.raises(ValueError):
        Plugins.load("x", "gadget")


def test_list_without_importing() -> None:
    sources = Plugins.list("source")
    names = [d.class_name for d in sources]
    assert names == sorted(names)
    assert "org.apache.kafka.connect.mirror.MirrorSourceConnector" in names
    assert "org.apache.kafka.connect.mirror.MirrorCheckpointConnector" in names
    assert "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector" in names
    assert "org.apache.kafka.connect.file.FileStreamSourceConnector" in names
    _name, kind, version = sources[0]
    assert kind == "source" and version
    everything = Plugins.list()
    assert {d.type for d in everything} == set(KINDS)  # FileStreamSink is the bundled sink
    header = {d.class_name for d in everything if d.type == "header_converter"}
    assert "org.apache.kafka.connect.storage.SimpleHeaderConverter" in header
    info = PluginDesc("a", "source", "1").to_info()
    assert (info.class_name, info.type, info.version) == ("a", "source", "1")


def test_register_and_aliases_drop_collisions() -> None:
    saved = dict(Plugins._entries)
    try:
        Plugins.register(
            "com.example.ByteArrayConverter", "connect_core.converters.string:StringConverter", "converter"
        )
        # The simple name is now ambiguous, so it is no alias; full names still work.
        with pytest.raises(PluginNotFoundError):
            Plugins.load("ByteArrayConverter", "converter")
        assert Plugins.load("com.example.ByteArrayConverter", "converter") is StringConverter
        assert Plugins.java_name_of(StringConverter) in (
            "com.example.ByteArrayConverter",
            "org.apache.kafka.connect.storage.StringConverter",
        )
    finally:
        Plugins._entries = saved
        Plugins._loaded.clear()
        Plugins._rebuild_aliases()
    assert Plugins.load("ByteArrayConverter", "converter") is ByteArrayConverter
    assert Plugins.java_name_of(ByteArrayConverter) == "org.apache.kafka.connect.converters.ByteArrayConverter"


def test_connect_core_does_not_import_mirror() -> None:
    code = (
        "import sys, connect_core.plugins as p, connect_core.transforms, connect_core.converters;"
        "p.Plugins.list(); p.Plugins.load('RegexRouter', 'transformation');"
        "assert not any(m == 'mirror' or m.startswith('mirror.') for m in sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
