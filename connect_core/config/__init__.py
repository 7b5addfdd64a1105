"""Configuration: Java ``.properties`` files, Kafka-style ``ConfigDef`` definitions, config
providers (``${env:..}``, ``${file:..}``), secret masking and generated reference docs.

Everything a caller needs is re-exported here; submodules hold the implementations.
"""

from connect_core.config.configdef import (
    HIDDEN,
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigKey,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Password,
    Range,
    Recommender,
    Type,
    Validator,
    ValidList,
    ValidString,
    Width,
    convert_to_string,
    invalid_value,
    parse_type,
)
from connect_core.config.masking import is_sensitive, masked
from connect_core.config.properties import (
    PropertiesError,
    format_properties,
    load_properties,
    parse_properties,
)
from connect_core.config.providers import (
    ConfigProvider,
    ConfigTransformer,
    resolve_config_providers,
)

__all__ = [
    "HIDDEN",
    "NO_DEFAULT",
    "AbstractConfig",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "ConfigDef",
    "ConfigKey",
    "ConfigProvider",
    "ConfigTransformer",
    "ConfigValue",
    "Importance",
    "LambdaValidator",
    "NonEmptyString",
    "NonNullValidator",
    "Password",
    "PropertiesError",
    "Range",
    "Recommender",
    "Type",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
    "convert_to_string",
    "format_properties",
    "invalid_value",
    "is_sensitive",
    "load_properties",
    "masked",
    "parse_properties",
    "parse_type",
    "resolve_config_providers",
]
