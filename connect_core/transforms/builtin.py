"""The bundled single-message transformations MirrorMaker users reach for.

Records carry headers as raw bytes (what the producer sends), so header values inserted here are
the UTF-8 bytes of the configured literal, which is what Java's ``InsertHeader`` produces through
the default ``SimpleHeaderConverter`` for textual literals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.records import SourceRecord
from connect_core.config.configdef import (
    NO_DEFAULT,
    CompositeValidator,
    ConfigDef,
    Importance,
    NonEmptyString,
    NonNullValidator,
    Type,
)
from connect_core.transforms.base import PluginBase
from connect_core.transforms.date_format import SimpleDateFormat
from connect_core.transforms.java_regex import (
    compile_java_regex,
    expand_java_replacement,
    validate_java_replacement,
)


def _regex_validator(name: str, value: Any) -> None:
    if value is not None:
        compile_java_regex(str(value), key=name)


def _non_empty_list(name: str, value: Any) -> None:
    if value is not None and len(value) == 0:
        raise ConfigError(f"Invalid value {value}: Empty list", key=name)


class RegexRouter(PluginBase):
    """Rename the topic: if ``regex`` matches the whole topic, it becomes ``replacement``
    (Java ``Matcher.replaceFirst`` syntax, ``$1`` for groups)."""

    CONFIG_DEF = (
        ConfigDef()
        .define("regex", Type.STRING, NO_DEFAULT, _regex_validator, Importance.HIGH,
                "Regular expression to use for matching.")
        .define("replacement", Type.STRING, NO_DEFAULT, None, Importance.HIGH, "Replacement string.")
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.regex = compile_java_regex(parsed["regex"])
        self.replacement: str = parsed["replacement"]
        validate_java_replacement(self.replacement)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        m = self.regex.fullmatch(record.topic)
        if m is None:
            return record
        try:
            topic = expand_java_replacement(m, self.replacement)
        except (ValueError, IndexError) as e:
            raise DataError(
                f"RegexRouter replacement {self.replacement!r} failed for topic {record.topic!r}: {e}"
            ) from e
        return record.new_record(topic=topic)


class TimestampRouter(PluginBase):
    """Route to a per-time-bucket topic: ``topic.format`` with ``${topic}`` and ``${timestamp}``."""

    CONFIG_DEF = (
        ConfigDef()
        .define("topic.format", Type.STRING, "${topic}-${timestamp}", None, Importance.HIGH,
                "Format string which can contain ${topic} and ${timestamp} as placeholders for the topic "
                "and timestamp, respectively.")
        .define("timestamp.format", Type.STRING, "yyyyMMdd", None, Importance.HIGH,
                "Format string for the timestamp that is compatible with java.text.SimpleDateFormat (UTC).")
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.topic_format: str = parsed["topic.format"]
        try:
            self.timestamp_format = SimpleDateFormat(parsed["timestamp.format"])
        except ValueError as e:
            raise ConfigError(f"Invalid value {parsed['timestamp.format']}: {e}", key="timestamp.format") from None

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if record.timestamp is None:
            raise DataError(f"Timestamp missing on record: {record!r}")
        stamp = self.timestamp_format.format_millis(record.timestamp)
        topic = self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", stamp)
        return record.new_record(topic=topic)


class InsertHeader(PluginBase):
    """Append header ``header`` with value ``value.literal`` to every record."""

    CONFIG_DEF = (
        ConfigDef()
        .define("header", Type.STRING, NO_DEFAULT, NonNullValidator(), Importance.HIGH, "The name of the header.")
        .define("value.literal", Type.STRING, NO_DEFAULT, NonNullValidator(), Importance.HIGH,
                "The literal value that is to be set as the header value on all records.")
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.header: str = parsed["header"]
        # Kept as text, like Java's parsed literal: the header converter decides the bytes
        # (SimpleHeaderConverter and ByteArrayConverter both write it as UTF-8).
        self.value: str = str(parsed["value.literal"])

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        headers = list(record.headers) if record.headers else []
        headers.append((self.header, self.value))
        return record.new_record(headers=headers)


class DropHeaders(PluginBase):
    """Remove every header whose key is in ``headers``."""

    CONFIG_DEF = ConfigDef().define(
        "headers", Type.LIST, NO_DEFAULT, _non_empty_list, Importance.HIGH, "The name of the headers to be removed."
    )

    def configure(self, props: Mapping[str, Any]) -> None:
        self.headers = frozenset(self.parse(props)["headers"])

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if not record.headers:
            return record
        return record.new_record(headers=[h for h in record.headers if h[0] not in self.headers])


class Filter(PluginBase):
    """Drop every record; used with a predicate to drop only matching (or non-matching) ones."""

    CONFIG_DEF = ConfigDef()

    def configure(self, props: Mapping[str, Any]) -> None:
        """No settings."""

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        return None


# ----------------------------------------------------------------------------- predicates


class TopicNameMatches(PluginBase):
    """True for records whose topic fully matches ``pattern``."""

    CONFIG_DEF = ConfigDef().define(
        "pattern",
        Type.STRING,
        NO_DEFAULT,
        CompositeValidator.of(NonEmptyString(), _regex_validator),
        Importance.MEDIUM,
        "A Java regular expression for matching against the name of a record's topic.",
    )

    def configure(self, props: Mapping[str, Any]) -> None:
        self.pattern = compile_java_regex(self.parse(props)["pattern"], key="pattern")

    def test(self, record: SourceRecord) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self.pattern.pattern}}}"


class HasHeaderKey(PluginBase):
    """True for records with at least one header named ``name``."""

    CONFIG_DEF = ConfigDef().define(
        "name", Type.STRING, NO_DEFAULT, NonEmptyString(), Importance.MEDIUM, "The header name."
    )

    def configure(self, props: Mapping[str, Any]) -> None:
        self.name: str = self.parse(props)["name"]

    def test(self, record: SourceRecord) -> bool:
        return bool(record.headers) and any(h[0] == self.name for h in record.headers or ())

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self.name}'}}"


class RecordIsTombstone(PluginBase):
    """True for records with a null value."""

    CONFIG_DEF = ConfigDef()

    def configure(self, props: Mapping[str, Any]) -> None:
        """No settings."""

    def test(self, record: SourceRecord) -> bool:
        return record.value is None

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"
