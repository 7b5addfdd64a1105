"""The one resolver from a configured class name to a Python object.

Configs name classes as Python paths, ``package.module.Class`` or ``package.module:Class`` (the form
entry points use); the plugin registry, config providers and MirrorMaker's policy/filter settings all
resolve them here, so the accepted forms and the errors are the same everywhere.
"""

from __future__ import annotations

import importlib
from typing import Any


def import_object(path: str) -> Any:
    """Import ``pkg.mod:Attr`` or ``pkg.mod.Attr``; ImportError or AttributeError if it is not there."""
    path = path.strip()
    if ":" in path:
        module_name, _, attr = path.partition(":")
    else:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise ImportError(f"{path!r} is not a module path")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def import_class(path: str) -> type:
    """:func:`import_object` that must yield a class (ImportError otherwise)."""
    obj = import_object(path)
    if not isinstance(obj, type):
        raise ImportError(f"{path!r} is not a class")
    return obj
