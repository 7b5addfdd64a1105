"""One ConfigKey -> ConfigKeyInfo conversion, as Java's AbstractHerder.convertConfigKey: a key without a
default is required with default_value null, in the validate answer and in the plugin-config listing alike."""

from __future__ import annotations

from connect_core.config.config_info import config_key_info
from connect_core.config.configdef import ConfigDef, Importance, Type
from connect_core.herder.common import generate_result
from connect_core.rest import entities
from connect_core.rest.resources import plugin_config_keys


def _definition() -> ConfigDef:
    return (
        ConfigDef()
        .define("needed", Type.STRING, importance=Importance.HIGH, documentation="no default")
        .define("count", Type.INT, 5, importance=Importance.LOW, documentation="has one")
        .define("names", Type.LIST, ["a", "b"], importance=Importance.LOW, documentation="a list")
    )


def test_required_key_has_null_default_like_java() -> None:
    keys = _definition().config_keys()
    needed = entities.config_key_info(config_key_info(keys["needed"]))
    assert needed["required"] is True and needed["default_value"] is None
    assert needed["name"] == "needed" and needed["type"] == "STRING" and needed["importance"] == "HIGH"
    count = entities.config_key_info(config_key_info(keys["count"], "prefix."))
    assert count["required"] is False and count["default_value"] == "5" and count["name"] == "prefix.count"
    assert entities.config_key_info(config_key_info(keys["names"]))["default_value"] == "a,b"


def test_validate_answer_and_plugin_listing_agree() -> None:
    definition = _definition()
    infos = generate_result("Test", definition.config_keys(), definition.validate({"count": "7"}), [])
    from_validate = {k.name: k for k, _v in infos.configs}
    for key in definition.config_keys().values():
        assert from_validate[key.name] == config_key_info(key)


def test_plugin_config_listing_uses_the_same_conversion() -> None:
    listed = {k.name: k for k in plugin_config_keys("RegexRouter")}
    assert listed["regex"].required and listed["regex"].default_value is None
