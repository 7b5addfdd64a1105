"""Single-message transformations and predicates, and the chain that applies them."""

from connect_core.transforms.base import PluginBase, Predicate, Transformation
from connect_core.transforms.builtin import (
    DropHeaders,
    Filter,
    HasHeaderKey,
    InsertHeader,
    RecordIsTombstone,
    RegexRouter,
    TimestampRouter,
    TopicNameMatches,
)
from connect_core.transforms.chain import TransformationChain, TransformationStage

__all__ = [
    "DropHeaders",
    "Filter",
    "HasHeaderKey",
    "InsertHeader",
    "PluginBase",
    "Predicate",
    "RecordIsTombstone",
    "RegexRouter",
    "TimestampRouter",
    "TopicNameMatches",
    "Transformation",
    "TransformationChain",
    "TransformationStage",
]
