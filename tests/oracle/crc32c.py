"""CRC-32C (Castagnoli), the checksum of Kafka's v2 record batches, computed here rather than trusted.

Tansu stores a batch whose CRC is wrong without complaint (batch-copy-notes.md), so the suite's reader
checks every batch itself, with Google's C implementation (``google-crc32c``, a test dependency the product
and its Kafka libraries do not use: the product's batch path uses the ``crc32c`` package), and with the
table-driven pure Python below where that is missing (a few MB/s: tests read whole topics while they wait).
"""

from __future__ import annotations

from typing import Any

_POLY = 0x82F63B78  # the Castagnoli polynomial, bit-reversed


def _tables() -> list[list[int]]:
    first = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        first.append(crc)
    tables = [first]
    for _ in range(7):  # slicing-by-8: table k advances a byte k more places
        previous = tables[-1]
        tables.append([(previous[n] >> 8) ^ first[previous[n] & 0xFF] for n in range(256)])
    return tables


_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _tables()

_google: Any
try:
    import google_crc32c as _google
except ImportError:  # pragma: no cover - the test extra installs it
    _google = None


def crc32c(data: bytes | memoryview) -> int:
    """The CRC-32C of ``data`` (initial value and final xor 0xFFFFFFFF, as Kafka computes it)."""
    if _google is not None:
        return int(_google.value(bytes(data)))
    return pure_crc32c(data)


def pure_crc32c(data: bytes | memoryview) -> int:
    """:func:`crc32c` in pure Python (the unit tests check both agree)."""
    view = memoryview(data)
    crc = 0xFFFFFFFF
    whole = len(view) - len(view) % 8
    t0, t1, t2, t3, t4, t5, t6, t7 = _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7
    for i in range(0, whole, 8):
        word = crc ^ int.from_bytes(view[i : i + 4], "little")
        crc = (
            t7[word & 0xFF]
            ^ t6[(word >> 8) & 0xFF]
            ^ t5[(word >> 16) & 0xFF]
            ^ t4[word >> 24]
            ^ t3[view[i + 4]]
            ^ t2[view[i + 5]]
            ^ t1[view[i + 6]]
            ^ t0[view[i + 7]]
        )
    for byte in view[whole:]:
        crc = t0[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
