"""Java's number semantics for the field transforms: narrowing, parsing and ``toString``.

Cast and MaskField must give the values a Java Connect worker gives for the same config
(``Cast`` of 300 to int8 is 44, of 2.9 to int32 is 2, of 1.0E10 to string is ``"1.0E10"``), so
Python ints and floats go through Java's primitive conversions here, not Python's.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from typing import Any

from connect_core.api.schema import Struct

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT_RE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)\Z")
_BIG_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")

#: Bit widths of Java's integral primitives, by Connect type name.
INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


def wrap(value: int, bits: int) -> int:
    """Two's-complement narrowing, as Java's ``(byte)``/``(short)``/``(int)``/``(long)`` casts of a wider int."""
    half = 1 << (bits - 1)
    return ((value + half) % (1 << bits)) - half


def float_to_integral(value: float, bits: int) -> int:
    """Java's ``(long)d`` (bits 64) or ``(byte)(int)d`` style narrowing of a double: NaN is 0, saturate, wrap."""
    if math.isnan(value):
        return 0
    wide = 64 if bits == 64 else 32
    lo, hi = -(1 << (wide - 1)), (1 << (wide - 1)) - 1
    as_int = hi if value >= hi else lo if value <= lo else int(value)
    return as_int if bits == wide else wrap(as_int, bits)


def to_float32(value: float) -> float:
    """The double nearest to Java's ``(float)value``."""
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def number_to_integral(value: Any, bits: int) -> int:
    """``Number.byteValue()``/``shortValue()``/``intValue()``/``longValue()`` of a Python number."""
    if isinstance(value, bool):
        raise TypeError("a boolean is not a Number")
    if isinstance(value, int):
        return wrap(value, bits)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError(str(value))
        return wrap(int(value), 32 if bits < 32 else bits)  # BigDecimal.intValue(), then (byte)/(short)
    return float_to_integral(float(value), bits)


def parse_java_integral(text: str, bits: int) -> int:
    """``Byte.parseByte``/``Short.parseShort``/``Integer.parseInt``/``Long.parseLong``; ValueError if invalid."""
    if not _INT_RE.match(text):
        raise ValueError(text)
    n = int(text)
    if n != wrap(n, bits):
        raise ValueError(text)
    return n


def parse_java_double(text: str) -> float:
    """``Double.parseDouble`` (also ``Float.parseFloat`` before rounding); ValueError if invalid."""
    body = text.strip(" \t\n\r\x0b\x0c\x00")
    if not _FLOAT_RE.match(body):
        raise ValueError(text)
    if not body.endswith("Infinity") and not body.endswith("NaN"):
        body = body.rstrip("fFdD")
    return float(body.replace("Infinity", "inf"))


def parse_big_decimal(text: str) -> decimal.Decimal:
    """``new BigDecimal(text)``: no blanks, no NaN/Infinity; ValueError if invalid."""
    if not _BIG_DECIMAL_RE.match(text):
        raise ValueError(text)
    return decimal.Decimal(text)


def _scientific(digits: str, exponent: int) -> str:
    """``d.dddE[-]n`` from significant digits and the decimal exponent of the first digit."""
    frac = digits[1:].rstrip("0") or "0"
    return f"{digits[0]}.{frac}E{exponent}"


def _plain(digits: str, exponent: int) -> str:
    """Positional notation with at least one fractional digit (Java's 1e-3 <= |x| < 1e7 form)."""
    if exponent >= 0:
        whole = digits[: exponent + 1].ljust(exponent + 1, "0")
        frac = digits[exponent + 1 :].rstrip("0") or "0"
        return f"{whole}.{frac}"
    return "0." + "0" * (-exponent - 1) + digits.rstrip("0")


def _shortest_digits(value: float, single: bool) -> tuple[str, int]:
    """Shortest significant digits that read back as ``value`` (as a float32 when ``single``), and the
    decimal exponent of the first digit; from Python's own shortest repr (no Decimal: Cast runs per record)."""
    text = repr(value)
    if single:
        for precision in range(1, 10):
            text = f"{value:.{precision - 1}e}"
            if to_float32(float(text)) == value:
                break
    mantissa, _, exp_text = text.partition("e")
    exp10 = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if whole.strip("0"):
        exponent = len(whole.lstrip("0")) - 1 + exp10
    else:
        exponent = -(len(frac) - len(frac.lstrip("0")) + 1) + exp10
    digits = (whole + frac).strip("0") or "0"
    return digits, exponent


def java_float_string(value: float, single: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString`` when ``single``) of a finite or special double."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    digits, exponent = _shortest_digits(abs(value), single)
    if 1e-3 <= abs(value) < 1e7:
        return sign + _plain(digits, exponent)
    return sign + _scientific(digits, exponent)


def java_string(value: Any, float32: bool = False) -> str:
    """``String.valueOf`` of a Connect value (booleans lower case, doubles in Java's notation)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_float_string(value, float32)
    return str(value)  # Decimal's str follows the same rule as BigDecimal.toString


def java_class_name(value: Any) -> str:
    """The Java class a Connect runtime would hold ``value`` as (for error messages Java users recognise)."""
    if value is None:
        return "null"
    names: tuple[tuple[type | tuple[type, ...], str], ...] = (
        (bool, "java.lang.Boolean"),
        (int, "java.lang.Long"),
        (float, "java.lang.Double"),
        (str, "java.lang.String"),
        ((bytes, bytearray, memoryview), "[B"),
        (decimal.Decimal, "java.math.BigDecimal"),
        ((dt.date, dt.time), "java.util.Date"),
        (dict, "java.util.HashMap"),
        ((list, tuple), "java.util.ArrayList"),
        (Struct, "org.apache.kafka.connect.data.Struct"),
    )
    for kind, name in names:
        if isinstance(value, kind):
            return name
    return type(value).__qualname__
