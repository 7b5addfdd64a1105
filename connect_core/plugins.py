"""Which class a configured plugin name means: Java class names, Connect aliases, Python paths.

Users keep their Java Connect/MirrorMaker configs, so ``connector.class``, ``*.converter`` and
``transforms.*.type`` accept the Java class name (``org.apache.kafka.connect.mirror.
MirrorSourceConnector``), Connect's aliases (the simple name ``MirrorSourceConnector`` and the
pruned name ``MirrorSource``), or a Python path (``pkg.mod.Class`` / ``pkg.mod:Class``) for
plugins of our own.

The runtime's own plugins are listed here; every other package - mm2's MirrorMaker connectors or a
third party's connector or transformation - declares its plugins as package entry points (the packaging
standard, as Java Connect uses ServiceLoader manifests) in the groups ``connect_core.plugins.<kind>``,
named by the class name users write (``org.apache.kafka.connect.mirror.MirrorSourceConnector``), valued
``package.module:Class``. Whatever is installed is found; nothing is imported until it is used, and
``connect_core`` names no package built on it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, ClassVar, NamedTuple

from connect_core import __version__
from connect_core.api.errors import ConfigError, ConfigIssue, NotFoundError
from connect_core.config.class_names import import_object
from connect_core.model import PluginInfo

KINDS = ("source", "sink", "converter", "header_converter", "transformation", "predicate")

# The plugin-type names Connect strips to form pruned aliases (PluginUtils.prunedName).
_PRUNE_SUFFIX = {
    "source": "Connector",
    "sink": "Connector",
    "converter": "Converter",
    "header_converter": "HeaderConverter",
    "transformation": "Transformation",
    "predicate": "Predicate",
}


class PluginNotFoundError(ConfigError, NotFoundError):
    """No plugin of the wanted kind has that name (a 400 in configs, a 404 on plugin endpoints)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        ConfigError.__init__(self, [ConfigIssue(key or "", message)])


class PluginDesc(NamedTuple):
    """One listed plugin; unpacks as ``(class_name, type, version)``."""

    class_name: str
    type: str
    version: str

    def to_info(self) -> PluginInfo:
        return PluginInfo(self.class_name, self.type, self.version)


@dataclass(frozen=True)
class _Entry:
    java_name: str
    target: str  # "package.module:Class"
    kinds: tuple[str, ...]
    version: str = __version__


ENTRY_POINT_GROUP = "connect_core.plugins"  # one group per kind: connect_core.plugins.source, ...transformation


def installed_plugins() -> list[_Entry]:
    """Plugins that installed packages declare as entry points, one entry per name with all its kinds."""
    found: dict[str, _Entry] = {}
    declared = entry_points()  # one pass over the installed packages (each per-group call makes its own)
    for kind in KINDS:
        for ep in declared.select(group=f"{ENTRY_POINT_GROUP}.{kind}"):
            version = ep.dist.version if ep.dist is not None else __version__
            known = found.get(ep.name)
            kinds = (kind,) if known is None else (*known.kinds, kind)
            found[ep.name] = _Entry(ep.name, ep.value, kinds, version)
    return list(found.values())


_CONNECT = "org.apache.kafka.connect"

# Java's field transforms: (Java class, module, Python class); "$Key"/"$Value" name the variants.
_FIELD_TRANSFORM_MODULES = (
    ("Cast", "cast"),
    ("ExtractField", "extract_hoist"),
    ("Flatten", "flatten"),
    ("HoistField", "extract_hoist"),
    ("InsertField", "insert_field"),
    ("MaskField", "mask_field"),
    ("ReplaceField", "replace_field"),
    ("TimestampConverter", "timestamp_converter"),
    ("HeaderFrom", "header_from"),
    ("SetSchemaMetadata", "set_schema_metadata"),
)
_FIELD_TRANSFORMS = (
    *(
        _Entry(f"{_CONNECT}.transforms.{name}${side}", f"connect_core.transforms.{module}:{name}{side}",
               ("transformation",))
        for name, module in _FIELD_TRANSFORM_MODULES
        for side in ("Key", "Value")
    ),
    _Entry(f"{_CONNECT}.transforms.ValueToKey", "connect_core.transforms.value_to_key:ValueToKey", ("transformation",)),
)  # fmt: skip
_BUILTIN: tuple[_Entry, ...] = (
    _Entry(f"{_CONNECT}.converters.ByteArrayConverter", "connect_core.converters.byte_array:ByteArrayConverter",
           ("converter", "header_converter")),
    _Entry(f"{_CONNECT}.storage.StringConverter", "connect_core.converters.string:StringConverter",
           ("converter", "header_converter")),
    _Entry(f"{_CONNECT}.json.JsonConverter", "connect_core.converters.json:JsonConverter",
           ("converter", "header_converter")),
    _Entry(f"{_CONNECT}.storage.SimpleHeaderConverter", "connect_core.converters.simple_header:SimpleHeaderConverter",
           ("header_converter",)),
    _Entry(f"{_CONNECT}.transforms.RegexRouter", "connect_core.transforms.builtin:RegexRouter", ("transformation",)),
    _Entry(f"{_CONNECT}.transforms.InsertHeader", "connect_core.transforms.builtin:InsertHeader", ("transformation",)),
    _Entry(f"{_CONNECT}.transforms.DropHeaders", "connect_core.transforms.builtin:DropHeaders", ("transformation",)),
    _Entry(f"{_CONNECT}.transforms.Filter", "connect_core.transforms.builtin:Filter", ("transformation",)),
    _Entry(f"{_CONNECT}.transforms.TimestampRouter", "connect_core.transforms.builtin:TimestampRouter",
           ("transformation",)),
    *_FIELD_TRANSFORMS,
    _Entry(f"{_CONNECT}.transforms.predicates.TopicNameMatches", "connect_core.transforms.builtin:TopicNameMatches",
           ("predicate",)),
    _Entry(f"{_CONNECT}.transforms.predicates.HasHeaderKey", "connect_core.transforms.builtin:HasHeaderKey",
           ("predicate",)),
    _Entry(f"{_CONNECT}.transforms.predicates.RecordIsTombstone", "connect_core.transforms.builtin:RecordIsTombstone",
           ("predicate",)),
    _Entry(f"{_CONNECT}.file.FileStreamSourceConnector",
           "connect_core.connectors.file_stream_source:FileStreamSourceConnector", ("source",)),
    _Entry(f"{_CONNECT}.file.FileStreamSinkConnector",
           "connect_core.connectors.file_stream_sink:FileStreamSinkConnector", ("sink",)),
)  # fmt: skip


def _simple_name(java_name: str) -> str:
    return java_name.rsplit(".", 1)[-1]


def _pruned_name(java_name: str, kind: str) -> str:
    simple = _simple_name(java_name)
    pos = simple.rfind(_PRUNE_SUFFIX[kind])
    return simple[:pos] if pos > 0 else simple


def _looks_like(cls: type, kind: str) -> bool:
    """Structural check that ``cls`` can serve as ``kind`` (Python plugins need not subclass)."""
    if kind in ("source", "sink"):
        from connect_core.api.connector import Connector, SourceConnector

        if kind == "source":
            return issubclass(cls, SourceConnector)
        return issubclass(cls, Connector) and not issubclass(cls, SourceConnector)
    required = {
        "converter": ("configure", "from_connect", "to_connect"),
        "header_converter": ("configure", "from_connect_header", "to_connect_header"),
        "transformation": ("configure", "apply"),
        "predicate": ("configure", "test"),
    }[kind]
    return all(callable(getattr(cls, name, None)) for name in required)


class Plugins:
    """The plugin registry (class-level: one per process, like Connect's plugin path scan)."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _entries: ClassVar[dict[str, _Entry]] = {e.java_name: e for e in _BUILTIN}
    _aliases: ClassVar[dict[str, str]] = {}
    _loaded: ClassVar[dict[str, type]] = {}

    @classmethod
    def _rebuild_aliases(cls) -> None:
        candidates: dict[str, set[str]] = {}
        for e in cls._entries.values():
            names = {_simple_name(e.java_name)} | {_pruned_name(e.java_name, k) for k in e.kinds}
            for n in names:
                candidates.setdefault(n, set()).add(e.java_name)
        # As in Connect, an alias two plugins would share is no alias at all.
        cls._aliases = {n: next(iter(s)) for n, s in candidates.items() if len(s) == 1}

    @classmethod
    def rescan(cls) -> None:
        """Read the installed packages' entry points again (a package installed after start-up)."""
        with cls._lock:
            for entry in installed_plugins():
                if cls._entries.get(entry.java_name) != entry:
                    cls._entries[entry.java_name] = entry
                    cls._loaded.pop(entry.java_name, None)
            cls._rebuild_aliases()

    @classmethod
    def register(cls, java_name: str, target: str, kinds: tuple[str, ...] | str) -> None:
        """Add a named plugin (``target`` is ``pkg.mod:Class``); names stay lazily imported."""
        kinds_t = (kinds,) if isinstance(kinds, str) else tuple(kinds)
        for k in kinds_t:
            if k not in KINDS:
                raise ValueError(f"unknown plugin kind {k!r}")
        with cls._lock:
            cls._entries[java_name] = _Entry(java_name, target, kinds_t)
            cls._loaded.pop(java_name, None)
            cls._rebuild_aliases()

    @classmethod
    def resolve_name(cls, name: str) -> str | None:
        """The registered Java class name ``name`` refers to, if any."""
        name = name.strip()
        if name in cls._entries:
            return name
        return cls._aliases.get(name)

    @classmethod
    def load(cls, name: str | type, kind: str | None = None, *, key: str | None = None) -> type:
        """The class configured as ``name``; PluginNotFoundError (a ConfigError naming ``key``).

        ``name`` may also be a class already (programmatic configs); it is only kind-checked.
        """
        if kind is not None and kind not in KINDS:
            raise ValueError(f"unknown plugin kind {kind!r}")
        label = kind.replace("_", " ") if kind else "plugin"
        if isinstance(name, type):
            if kind is not None and not _looks_like(name, kind):
                raise PluginNotFoundError(f"Class {name.__qualname__} is not a {label}", key)
            return name
        raw = (name or "").strip()
        if not raw:
            raise PluginNotFoundError(f"Missing {label} class name", key)
        java_name = cls.resolve_name(raw)
        if java_name is not None:
            entry = cls._entries[java_name]
            if kind is not None and kind not in entry.kinds:
                raise PluginNotFoundError(
                    f"Class {raw} is not a {label} (it is a {entry.kinds[0].replace('_', ' ')})", key
                )
            loaded = cls._loaded.get(java_name)
            if loaded is None:
                try:
                    loaded = import_object(entry.target)
                except (ImportError, AttributeError) as e:
                    raise PluginNotFoundError(f"Class {raw} could not be loaded ({entry.target}): {e}", key) from e
                cls._loaded[java_name] = loaded
            return loaded
        try:
            obj = import_object(raw)
        except (ImportError, AttributeError, ValueError):
            known = ", ".join(
                sorted(_simple_name(n) for n, e in cls._entries.items() if kind is None or kind in e.kinds)
            )
            raise PluginNotFoundError(
                f"Class {raw} could not be found. Known {label}s: {known}; a Python class is named "
                "'package.module:Class'",
                key,
            ) from None
        if not isinstance(obj, type):
            raise PluginNotFoundError(f"{raw} is not a class", key)
        if kind is not None and not _looks_like(obj, kind):
            raise PluginNotFoundError(f"Class {raw} is not a {label}", key)
        return obj

    @classmethod
    def new_instance(cls, name: str | type, kind: str | None = None, *, key: str | None = None) -> Any:
        return cls.load(name, kind, key=key)()

    @classmethod
    def list(cls, kind: str | None = None) -> list[PluginDesc]:
        """Registered plugins, Java class names sorted, without importing them."""
        out = [
            PluginDesc(e.java_name, k, e.version)
            for e in cls._entries.values()
            for k in e.kinds
            if kind is None or k == kind
        ]
        return sorted(out, key=lambda d: (KINDS.index(d.type), d.class_name))

    @classmethod
    def java_name_of(cls, plugin_class: type) -> str:
        """The Java-style name to report for a loaded class (its Python path when unregistered)."""
        for java_name, loaded in cls._loaded.items():
            if loaded is plugin_class:
                return java_name
        path = f"{plugin_class.__module__}:{plugin_class.__qualname__}"
        for e in cls._entries.values():
            if e.target == path:
                return e.java_name
        return f"{plugin_class.__module__}.{plugin_class.__qualname__}"


Plugins.rescan()
