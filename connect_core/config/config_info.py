"""A ConfigDef key as Connect's ``ConfigKeyInfo``: the one conversion for the validate answer and the
plugin-config listing, as Java's ``AbstractHerder.convertConfigKey`` does it for both.

A key without a default is ``required`` and reports ``default_value: null`` (Java tests its
NO_DEFAULT_VALUE marker); any other default is rendered with ConfigDef's own to-string rule.
"""

from __future__ import annotations

from connect_core.config.configdef import ConfigKey
from connect_core.model import ConfigInfoKey


def config_key_info(key: ConfigKey, prefix: str = "") -> ConfigInfoKey:
    return ConfigInfoKey(
        name=prefix + key.name,
        type=key.type.name,
        required=key.required,
        default_value=None if key.required else key.default_as_string,
        importance=key.importance.name,
        documentation=key.documentation,
        group=key.group,
        order_in_group=key.order_in_group,
        width=key.width.name,
        display_name=key.display_name,
        dependents=list(key.dependents),
    )
