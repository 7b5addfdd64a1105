"""java.util.Properties.load semantics.

The table of cases was checked against Java 17's ``Properties.load(Reader)`` when written (a
differential fuzz of thousands of random inputs agreed too); each row is text -> expected mapping.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_core.api.errors import ConfigError
from connect_core.config.properties import (
    PropertiesError,
    format_properties,
    load_properties,
    parse_properties,
)

JAVA_VERIFIED = [
    ("key=value", {"key": "value"}),
    ("key = value", {"key": "value"}),
    ("key:value", {"key": "value"}),
    ("key value", {"key": "value"}),
    ("key\tvalue", {"key": "value"}),
    ("key\x0cvalue", {"key": "value"}),
    ("  key  =  value  ", {"key": "value  "}),
    ("key=  = value", {"key": "= value"}),
    ("key  :  = value", {"key": "= value"}),
    ("key==value", {"key": "=value"}),
    ("key", {"key": ""}),
    ("key=", {"key": ""}),
    ("=value", {"": "value"}),
    (":value", {"": "value"}),
    (" =", {"": ""}),
    ("a\\=b=c", {"a=b": "c"}),
    ("a\\:b:c", {"a:b": "c"}),
    ("a\\ b c", {"a b": "c"}),
    ("a\\\\=b", {"a\\": "b"}),
    ("a=b\\\\", {"a": "b\\"}),
    ("a=b\\\\\\\nc", {"a": "b\\c"}),
    ("a=b\\\n   c", {"a": "bc"}),
    ("a=b\\\n\\\n  c", {"a": "bc"}),
    ("a=b\\\n\nc=d", {"a": "b", "c": "d"}),
    ("a=b\\\n   \nc=d", {"a": "b", "c": "d"}),
    ("a=b\\\r\n  c\r\nd=e", {"a": "bc", "d": "e"}),
    ("a=b\\\rc\rd=e", {"a": "bc", "d": "e"}),
    ("# comment\na=1", {"a": "1"}),
    ("! comment\na=1", {"a": "1"}),
    ("   # indented comment\na=1", {"a": "1"}),
    ("# comment \\\na=1", {"a": "1"}),
    ("a=1 # not a comment", {"a": "1 # not a comment"}),
    ("a=b\\\n# continued, not a comment", {"a": "b# continued, not a comment"}),
    ("\\\n# a comment after an empty continuation\nb=2", {"b": "2"}),
    ("a=\\t\\n\\r\\f\\b\\x\\q", {"a": "\t\n\r\x0cbxq"}),
    ("a=\\u0041\\u00e9\\u20AC", {"a": "Aé€"}),
    ("a=\\uD83D\\uDE00", {"a": "😀"}),
    ("\\u0041key=v", {"Akey": "v"}),
    ("k\\u003dx=v", {"k=x": "v"}),
    ("a=1\na=2", {"a": "2"}),
    ("a=1\n\n\n   \n\tb=2", {"a": "1", "b": "2"}),
    ("a=é€ 😀", {"a": "é€ 😀"}),
    ("a=b\\", {"a": "b"}),
    ("\\", {"": ""}),
    ("a=trailing   ", {"a": "trailing   "}),
    ("a=b\\\n", {"a": "b"}),
    ("\\\n", {"": ""}),
    ("\\\r\n", {}),
]


@pytest.mark.parametrize(("text", "expected"), JAVA_VERIFIED)
def test_matches_java(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


def test_separators_and_whitespace() -> None:
    text = "a=1\nb : 2\nc 3\nd\t=\t4\ne\n  f = x = y\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "", "f": "x = y"}


def test_later_duplicates_win() -> None:
    assert parse_properties("k=1\nother=x\nk=2\n") == {"k": "2", "other": "x"}


def test_comment_does_not_continue_but_continuation_is_not_a_comment() -> None:
    text = "# a comment ending in a backslash \\\nreal=1\nlong=first \\\n  #second\n"
    assert parse_properties(text) == {"real": "1", "long": "first #second"}


def test_even_number_of_backslashes_does_not_continue() -> None:
    assert parse_properties("a=x\\\\\nb=y\n") == {"a": "x\\", "b": "y"}
    assert parse_properties("a=x\\\\\\\n  y\n") == {"a": "x\\y"}


def test_mixed_line_endings() -> None:
    assert parse_properties("a=1\r\nb=2\rc=3\nd=\\\r\n   4") == {"a": "1", "b": "2", "c": "3", "d": "4"}


def test_unicode_escapes_and_literals() -> None:
    assert parse_properties("k=\\u00e9t\\u00E9 \u20ac \U0001f600\n") == {"k": "\u00e9t\u00e9 \u20ac \U0001f600"}
    assert parse_properties("k=\\uD83D\\uDE00") == {"k": "\U0001f600"}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a=\\u12", 1),
        ("a=\\uXYZW", 1),
        ("a=\\u", 1),
        ("a=\\u00G1", 1),
        ("\\u12=v", 1),
        ("ok=1\n# comment\n\nbad=\\u004", 4),
        ("a=1\nb=x\\\n  y\\\n  \\u12zz\n", 4),
    ],
)
def test_malformed_unicode_escape_names_line(text: str, line: int) -> None:
    with pytest.raises(PropertiesError) as info:
        parse_properties(text, source="mm2.properties")
    assert info.value.line == line
    assert isinstance(info.value, ConfigError)
    msg = str(info.value)
    assert "Malformed \\uxxxx encoding" in msg
    assert f"mm2.properties: line {line}" in msg
    assert "\n" not in msg


def test_load_properties_utf8_and_bom(tmp_path: Path) -> None:
    p = tmp_path / "x.properties"
    p.write_bytes("\ufeffname=caf\u00e9\n".encode())
    assert load_properties(p) == {"name": "caf\u00e9"}


def test_load_properties_latin1_fallback(tmp_path: Path) -> None:
    p = tmp_path / "x.properties"
    p.write_bytes("name=caf\u00e9\n".encode("iso-8859-1"))
    assert load_properties(str(p)) == {"name": "caf\u00e9"}


def test_missing_file_is_one_line_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.properties"
    with pytest.raises(ConfigError) as info:
        load_properties(missing)
    msg = str(info.value)
    assert str(missing) in msg and "\n" not in msg


def test_directory_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="directory"):
        load_properties(tmp_path)


def test_unreadable_path_is_config_error(tmp_path: Path) -> None:
    parent = tmp_path / "plain-file"
    parent.write_text("x")
    bad = parent / "child.properties"  # a file used as a directory: NotADirectoryError
    with pytest.raises(ConfigError) as info:
        load_properties(bad)
    msg = str(info.value)
    assert str(bad) in msg and "\n" not in msg


def test_malformed_file_error_names_path_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.properties"
    p.write_text("a=1\nb=\\uZZZZ\n")
    with pytest.raises(PropertiesError) as info:
        load_properties(p)
    assert info.value.line == 2
    assert str(p) in str(info.value)


@pytest.mark.parametrize(
    "props",
    [
        {"a": "1"},
        {" lead": " value with leading space", "k=ey": "v:al#ue!", "tab\there": "nl\nhere\r\f"},
        {"back\\slash": "ends with \\", "": "", "uni": "\u00e9\u20ac\U0001f600", "ctl": "\x01\x7f"},
        {"#notcomment": "!x", "!x": "#y", "trailing": "space   "},
    ],
)
def test_format_round_trips(props: dict[str, str]) -> None:
    assert parse_properties(format_properties(props, header="generated\nby mm2")) == props
