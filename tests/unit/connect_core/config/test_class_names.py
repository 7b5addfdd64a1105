"""One resolver for configured class names: both Python path forms, the same errors everywhere."""

from __future__ import annotations

import pytest

from connect_core.config.class_names import import_class, import_object
from connect_core.config.providers import EnvVarConfigProvider, instantiate_providers
from connect_core.converters import JsonConverter


@pytest.mark.parametrize(
    "path",
    [
        "connect_core.converters.json.JsonConverter",
        "connect_core.converters.json:JsonConverter",
        "  connect_core.converters.json:JsonConverter ",
    ],
)
def test_both_forms(path: str) -> None:
    assert import_class(path) is JsonConverter


def test_errors() -> None:
    with pytest.raises(ImportError):
        import_object("NoDots")
    with pytest.raises(ImportError):
        import_object("no_such_module_xyz.Thing")
    with pytest.raises(AttributeError):
        import_object("connect_core.converters.json:Nope")
    with pytest.raises(ImportError, match="is not a class"):
        import_class("connect_core.config.class_names:import_object")


def test_config_providers_accept_the_entry_point_form_too() -> None:
    providers = instantiate_providers(
        {
            "config.providers": "e",
            "config.providers.e.class": "connect_core.config.providers:EnvVarConfigProvider",
        },
        builtin=False,
    )
    assert isinstance(providers["e"], EnvVarConfigProvider)
