"""Converters between Connect data and record bytes (Kafka's ``Converter``/``HeaderConverter``)."""

from connect_core.converters.base import Converter, ConverterBase, HeaderConverter
from connect_core.converters.byte_array import ByteArrayConverter
from connect_core.converters.json import JsonConverter
from connect_core.converters.simple_header import SimpleHeaderConverter
from connect_core.converters.string import StringConverter

__all__ = [
    "ByteArrayConverter",
    "Converter",
    "ConverterBase",
    "HeaderConverter",
    "JsonConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]
