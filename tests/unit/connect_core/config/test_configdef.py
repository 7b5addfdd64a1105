"""ConfigDef parsing/validation, AbstractConfig and secret masking."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from connect_core.api.errors import ConfigError
from connect_core.config import (
    HIDDEN,
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Password,
    Range,
    Type,
    ValidList,
    ValidString,
    Width,
    masked,
    parse_type,
)

SECRET = "s3cr3t-Pa55"


def _defn() -> ConfigDef:
    return (
        ConfigDef()
        .define("name", Type.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH, "Unique name.")
        .define("tasks.max", Type.INT, 1, Range.at_least(1), Importance.HIGH, "Max tasks.")
        .define("ratio", Type.DOUBLE, 0.5, Range.between(0, 1), Importance.LOW, "A ratio.")
        .define("enabled", Type.BOOLEAN, True, importance=Importance.MEDIUM, documentation="On/off.")
        .define("topics", Type.LIST, "", ValidList.in_("a", "b", "c"), documentation="Topics.")
        .define("mode", Type.STRING, "fast", ValidString.in_("fast", "safe"), documentation="Mode.")
        .define("level", Type.STRING, "info", CaseInsensitiveValidString.in_("INFO", "DEBUG"))
        .define("password", Type.PASSWORD, NO_DEFAULT, importance=Importance.HIGH, documentation="Secret.")
        .define("retries", Type.SHORT, 3)
        .define("bytes", Type.LONG, 1 << 40)
        .define("policy.class", Type.CLASS, "org.example.DefaultPolicy")
    )


def _issues(err: ConfigError) -> dict[str, str]:
    return {i.key: i.message for i in err.issues}


# ---------------------------------------------------------------- type parsing


@pytest.mark.parametrize("text", ["true", "TRUE", "True", " true ", "tRuE"])
def test_boolean_true(text: str) -> None:
    assert parse_type("k", text, Type.BOOLEAN) is True


@pytest.mark.parametrize("text", ["yes", "1", "on", "", "t", "truex"])
def test_boolean_rejects_anything_else(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_type("flag", text, Type.BOOLEAN)
    assert info.value.issues[0].key == "flag"
    assert "true or false" in str(info.value)


@pytest.mark.parametrize(
    ("type_", "text", "expected"),
    [
        (Type.INT, "42", 42),
        (Type.INT, " -7 ", -7),
        (Type.INT, "+5", 5),
        (Type.INT, "2147483647", 2**31 - 1),
        (Type.INT, "-2147483648", -(2**31)),
        (Type.SHORT, "32767", 32767),
        (Type.SHORT, "-32768", -32768),
        (Type.LONG, "9223372036854775807", 2**63 - 1),
        (Type.DOUBLE, "1.5", 1.5),
        (Type.DOUBLE, "1e3", 1000.0),
        (Type.DOUBLE, "2", 2.0),
        (Type.DOUBLE, "1.5f", 1.5),
        (Type.DOUBLE, ".5", 0.5),
        (Type.DOUBLE, "-Infinity", float("-inf")),
        (Type.DOUBLE, "0x1.8p1", 3.0),
    ],
)
def test_numbers(type_: Type, text: str, expected: float) -> None:
    assert parse_type("n", text, type_) == expected


@pytest.mark.parametrize(
    ("type_", "text"),
    [
        (Type.INT, "2147483648"),
        (Type.INT, "-2147483649"),
        (Type.INT, "1.0"),
        (Type.INT, "1_000"),
        (Type.INT, "0x10"),
        (Type.INT, "\u0661"),  # Arabic-Indic one: Python int() takes it, Java does not
        (Type.INT, ""),
        (Type.SHORT, "32768"),
        (Type.LONG, "9223372036854775808"),
        (Type.DOUBLE, "abc"),
        (Type.DOUBLE, "inf"),
        (Type.DOUBLE, "1_0"),
        (Type.DOUBLE, ""),
    ],
)
def test_bad_numbers(type_: Type, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_type("num.key", text, type_)
    assert info.value.issues[0].key == "num.key"
    assert f"Not a number of type {type_.value}" in str(info.value)


def test_typed_python_values_accepted() -> None:
    assert parse_type("k", 5, Type.INT) == 5
    assert parse_type("k", 5, Type.DOUBLE) == 5.0
    assert parse_type("k", False, Type.BOOLEAN) is False
    assert parse_type("k", ["a", " b"], Type.LIST) == ["a", "b"]
    assert parse_type("k", None, Type.INT) is None
    with pytest.raises(ConfigError):
        parse_type("k", True, Type.INT)  # bool is not an int here, as in Java
    with pytest.raises(ConfigError):
        parse_type("k", 2**31, Type.INT)
    with pytest.raises(ConfigError):
        parse_type("k", 3, Type.STRING)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   ", []),
        ("a", ["a"]),
        ("a,b", ["a", "b"]),
        (" a , b ,c ", ["a", "b", "c"]),
        ("a,,b", ["a", "", "b"]),
        ("a,b,", ["a", "b", ""]),
        ("a b, c", ["a b", "c"]),
    ],
)
def test_list(text: str, expected: list[str]) -> None:
    assert parse_type("l", text, Type.LIST) == expected


def test_class_and_password() -> None:
    assert parse_type("c", " org.apache.kafka.Foo$Bar ", Type.CLASS) == "org.apache.kafka.Foo$Bar"
    assert parse_type("c", "mirror.policies.Default", Type.CLASS) == "mirror.policies.Default"
    assert parse_type("c", ConfigDef, Type.CLASS) == "connect_core.config.configdef.ConfigDef"
    with pytest.raises(ConfigError):
        parse_type("c", "not a class", Type.CLASS)
    pw = parse_type("p", f" {SECRET} ", Type.PASSWORD)
    assert isinstance(pw, Password) and pw.value == SECRET


# ---------------------------------------------------------------- Password


def test_password_never_renders() -> None:
    pw = Password(SECRET)
    assert str(pw) == HIDDEN and repr(pw) == HIDDEN
    assert SECRET not in f"{pw} {pw!r} {[pw]} { ({'p': pw}) }"
    assert pw == Password(SECRET) and pw != Password("other") and pw != SECRET
    assert pw.value == SECRET


# ---------------------------------------------------------------- define


def test_define_is_chainable_and_keeps_metadata() -> None:
    d = ConfigDef().define(
        "k",
        Type.INT,
        "10",
        Range.between(1, 100),
        Importance.LOW,
        "doc",
        group="G",
        order_in_group=2,
        width=Width.SHORT,
        display_name="Kay",
        dependents=["k2"],
    )
    d.define("k2", Type.STRING, None)
    key = d.keys["k"]
    assert key.default == 10  # defaults given as strings are parsed
    assert (key.importance, key.documentation, key.group, key.order_in_group) == (Importance.LOW, "doc", "G", 2)
    assert (key.width, key.display_name, key.dependents) == (Width.SHORT, "Kay", ("k2",))
    assert d.names() == {"k", "k2"}
    assert d.keys["k2"].display_name == "k2"
    assert d.groups() == ["G"]


def test_define_rejects_duplicates_and_bad_defaults() -> None:
    d = ConfigDef().define("k", Type.INT, 1)
    with pytest.raises(ValueError, match="defined twice"):
        d.define("k", Type.INT, 1)
    with pytest.raises(ValueError, match="x"):
        ConfigDef().define("x", Type.INT, "abc")
    with pytest.raises(ValueError, match="y"):
        ConfigDef().define("y", Type.INT, 0, Range.at_least(1))


def test_merge() -> None:
    shared = Range.at_least(0)
    a = ConfigDef().define("common", Type.INT, 0, shared).define("a", Type.STRING, "x")
    b = ConfigDef().define("common", Type.INT, 0, shared).define("b", Type.STRING, "y")
    m = a.merge(b)
    assert m.names() == {"common", "a", "b"}
    assert a.names() == {"common", "a"}  # originals untouched
    c = ConfigDef().define("common", Type.INT, 5)
    with pytest.raises(ValueError, match="common"):
        a.merge(c)
    assert a.merge(c, override=True).keys["common"].default == 5


# ---------------------------------------------------------------- parse


def test_parse_typed_values_and_defaults() -> None:
    values = _defn().parse({"name": "conn", "password": SECRET, "tasks.max": "4", "topics": "a, b", "level": "debug"})
    assert values["name"] == "conn"
    assert values["tasks.max"] == 4
    assert values["ratio"] == 0.5
    assert values["enabled"] is True
    assert values["topics"] == ["a", "b"]
    assert values["level"] == "debug"
    assert values["password"] == Password(SECRET)
    assert values["retries"] == 3 and values["bytes"] == 1 << 40
    assert values["policy.class"] == "org.example.DefaultPolicy"


def test_parse_reports_every_problem_once_naming_each_key() -> None:
    bad = {
        "tasks.max": "0",
        "ratio": "2.5",
        "enabled": "yes",
        "topics": "a,zzz",
        "mode": "slow",
        "level": "trace",
        "retries": "99999",
        "name": "  ",
    }
    with pytest.raises(ConfigError) as info:
        _defn().parse(bad)
    issues = _issues(info.value)
    assert set(issues) == {
        "name",
        "password",
        "tasks.max",
        "ratio",
        "enabled",
        "topics",
        "mode",
        "level",
        "retries",
    }
    assert "Missing required configuration" in issues["password"]
    assert "at least 1" in issues["tasks.max"]
    assert "no more than 1" in issues["ratio"]
    assert "zzz" in issues["topics"]
    assert "fast, safe" in issues["mode"]
    assert "non-empty" in issues["name"]
    text = str(info.value)
    for key in issues:
        assert key in text


def test_password_never_in_error_text() -> None:
    def reject(name: str, value: Any) -> None:
        # a careless plugin validator that echoes the secret
        raise ConfigError(f"bad password {value.value}", key=name)

    d = (
        ConfigDef()
        .define("pw", Type.PASSWORD, NO_DEFAULT, reject)
        .define("pw.len", Type.PASSWORD, None, LambdaValidator(lambda n, v: _min_len(n, v, 64), "64+ chars"))
        .define("pw.choice", Type.PASSWORD, None, ValidString.in_("x"))
    )
    props = {"pw": SECRET, "pw.len": SECRET, "pw.choice": SECRET}
    with pytest.raises(ConfigError) as info:
        d.parse(props)
    assert set(_issues(info.value)) == {"pw", "pw.len", "pw.choice"}
    rendered = f"{info.value} {info.value!r} {info.value.issues}"
    assert SECRET not in rendered
    assert HIDDEN in rendered
    for cv in d.validate(props):
        assert SECRET not in f"{cv} {cv.errors}"


def _min_len(name: str, value: Any, n: int) -> None:
    if value is not None and len(value.value) < n:
        from connect_core.config import invalid_value

        raise invalid_value(name, value, f"must be at least {n} characters")


def test_callable_validators() -> None:
    def even(name: str, value: Any) -> None:
        if value % 2:
            raise ConfigError("must be even", key=name)

    d = (
        ConfigDef()
        .define("n", Type.INT, 2, even)
        .define("m", Type.INT, 2, CompositeValidator.of(Range.at_least(0), even))
    )
    assert d.parse({"n": "4", "m": "6"}) == {"n": 4, "m": 6}
    with pytest.raises(ConfigError) as info:
        d.parse({"n": "3", "m": "-1"})
    assert _issues(info.value) == {
        "n": "must be even",
        "m": "Invalid value -1 for configuration m: Value must be at least 0",
    }


def test_validators_describe_themselves() -> None:
    assert str(Range.at_least(1)) == "[1,...]"
    assert str(Range.between(0, 1.5)) == "[0,...,1.5]"
    assert str(ValidString.in_("a", "b")) == "[a, b]"
    assert str(CaseInsensitiveValidString.in_("A")) == "(case insensitive) [A]"
    assert str(NonEmptyString()) == "non-empty string"
    with pytest.raises(ConfigError):
        NonNullValidator()("k", None)
    with pytest.raises(ConfigError):
        ValidList.in_("a", allow_empty=False)("k", [])


def test_none_defaults_pass_validators() -> None:
    d = (
        ConfigDef()
        .define("opt", Type.STRING, None, ValidString.in_("a"))
        .define("n", Type.INT, None, Range.at_least(1))
    )
    assert d.parse({}) == {"opt": None, "n": None}


# ---------------------------------------------------------------- validate


def test_validate_returns_per_key_values() -> None:
    results = {cv.name: cv for cv in _defn().validate({"tasks.max": "abc", "name": "x", "mode": "slow"})}
    assert set(results) == set(_defn().names())
    assert all(isinstance(cv, ConfigValue) for cv in results.values())
    assert results["name"].errors == [] and results["name"].value == "x"
    assert results["tasks.max"].errors and "Not a number" in results["tasks.max"].errors[0]
    assert "Missing required" in results["password"].errors[0]
    assert results["mode"].errors and results["ratio"].errors == [] and results["ratio"].value == 0.5


def test_recommender_feeds_validate() -> None:
    class OnlyWhenEnabled:
        def valid_values(self, name: str, parsed: Any) -> list[Any]:
            return ["x", "y"]

        def visible(self, name: str, parsed: Any) -> bool:
            return bool(parsed.get("enabled"))

    d = (
        ConfigDef()
        .define("enabled", Type.BOOLEAN, False, dependents=["choice"])
        .define("choice", Type.STRING, "x", recommender=OnlyWhenEnabled())
    )
    by = {cv.name: cv for cv in d.validate({"enabled": "false"})}
    assert by["choice"].visible is False and by["choice"].recommended_values == ["x", "y"]
    assert {cv.name: cv for cv in d.validate({"enabled": "true"})}["choice"].visible is True


# ---------------------------------------------------------------- AbstractConfig


def test_abstract_config_unknown_keys_warned_once_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    originals = {"name": "c", "password": SECRET, "typo.key": "1", "other.unknown": SECRET, "consumer.x": "y"}
    with caplog.at_level(logging.WARNING):
        cfg = AbstractConfig(_defn(), originals, known_prefixes=["consumer."])
        cfg.get("name")
        cfg.unknown_keys()
        cfg.values()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("typo.key" in w for w in warnings) == 1
    assert sum("other.unknown" in w for w in warnings) == 1
    assert not any("consumer.x" in w for w in warnings)
    assert not any(SECRET in w for w in warnings)
    assert cfg.unknown_keys() == ["typo.key", "other.unknown"]
    assert cfg.originals()["typo.key"] == "1"
    assert cfg.originals() == originals


def test_abstract_config_quiet_when_asked(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        cfg = AbstractConfig(_defn(), {"name": "c", "password": "p", "zzz": "1"}, log_unknown=False)
    assert cfg.unknown_keys() == ["zzz"]
    assert not caplog.records


def test_abstract_config_getters_and_prefixes() -> None:
    cfg = AbstractConfig(
        _defn(),
        {
            "name": "c",
            "password": SECRET,
            "tasks.max": "3",
            "producer.tasks.max": "7",
            "producer.acks": "all",
            "producer.": "empty-suffix",
            "producer.sasl.tasks.max": "9",
        },
        log_unknown=False,
    )
    assert cfg.get("tasks.max") == 3 and cfg.get_int("tasks.max") == 3
    assert cfg.get_password("password") == Password(SECRET)
    assert cfg.get_list("topics") == []
    assert cfg.get_boolean("enabled") is True
    with pytest.raises(ConfigError, match="nope"):
        cfg.get("nope")
    assert cfg.originals_with_prefix("producer.") == {"tasks.max": "7", "acks": "all", "sasl.tasks.max": "9"}
    assert cfg.originals_with_prefix("producer.", strip=False)["producer.acks"] == "all"
    over = cfg.values_with_prefix_override("producer.")
    assert over["tasks.max"] == 7 and over["sasl.tasks.max"] == 9 and over["name"] == "c"
    assert "acks" not in over
    assert SECRET not in repr(cfg)


def test_abstract_config_prefix_override_errors_name_the_prefixed_key() -> None:
    cfg = AbstractConfig(_defn(), {"name": "c", "password": "p", "admin.tasks.max": "0"}, log_unknown=False)
    with pytest.raises(ConfigError) as info:
        cfg.values_with_prefix_override("admin.")
    assert info.value.issues[0].key == "admin.tasks.max"


def test_abstract_config_raises_parse_errors() -> None:
    with pytest.raises(ConfigError) as info:
        AbstractConfig(_defn(), {"tasks.max": "x"})
    assert {"name", "password", "tasks.max"} <= set(_issues(info.value))


# ---------------------------------------------------------------- masking


def test_masked() -> None:
    props = {"name": "c", "password": SECRET, "other": Password(SECRET), "unset": None}
    d = _defn().define("unset", Type.PASSWORD, None)
    out = masked(props, d)
    assert out == {"name": "c", "password": HIDDEN, "other": HIDDEN, "unset": None}
    assert props["password"] == SECRET  # a copy
    assert masked({"password": SECRET}) == {"password": SECRET}  # unknown without a definition
    # prefixed secrets (mm2.properties style) and Kafka's client secrets without a definition
    assert masked({"A.consumer.password": SECRET, "passwordish": "x"}, d) == {
        "A.consumer.password": HIDDEN,
        "passwordish": "x",
    }
    assert masked({"target.cluster.sasl.jaas.config": SECRET, "ssl.key.password": SECRET}) == {
        "target.cluster.sasl.jaas.config": HIDDEN,
        "ssl.key.password": HIDDEN,
    }
    assert masked({"ssl.key.password": SECRET}, guess=False) == {"ssl.key.password": SECRET}
    extra = ConfigDef().define("ssl.key.password", Type.PASSWORD, None)
    assert masked({"ssl.key.password": "k", "password": "p"}, [d, extra]) == {
        "ssl.key.password": HIDDEN,
        "password": HIDDEN,
    }


def test_librdkafka_and_schema_registry_secrets_are_masked_without_a_definition() -> None:
    keys = [
        "target.admin.sasl.password",
        "ssl.key.pem",
        "consumer.sasl.oauthbearer.client.secret",
        "value.converter.basic.auth.user.info",
    ]
    assert masked(dict.fromkeys(keys, SECRET)) == dict.fromkeys(keys, HIDDEN)
    assert masked({"sasl.username": "u", "ssl.certificate.pem": "c"}) == {
        "sasl.username": "u",
        "ssl.certificate.pem": "c",
    }
