"""Source offsets in a local file (standalone mode's ``offset.storage.file.filename``).

Java's FileOffsetBackingStore writes a Java-serialized ``HashMap<byte[], byte[]>``; Python cannot
produce or safely read that format, so this file is NOT interchangeable with Java's. We write JSON
instead: ``{"version": 1, "entries": [[key_b64, value_b64_or_null], ...]}`` where the key/value bytes
are exactly those Connect puts in the offset topic. The file is replaced atomically on every write
(temp file + fsync + rename), so a crash leaves the previous or the new state, never a torn one.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import tempfile
from pathlib import Path

from connect_core.api.errors import ConnectError
from connect_core.storage.memory import MemoryOffsetBackingStore, OffsetTable

log = logging.getLogger(__name__)

OFFSET_STORAGE_FILE_FILENAME_CONFIG = "offset.storage.file.filename"
_FORMAT_VERSION = 1


class FileOffsetBackingStore(MemoryOffsetBackingStore):
    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)

    def start(self) -> None:
        log.info("Starting FileOffsetBackingStore with file %s", self.path)
        with self._lock:
            self._table = self._load()

    def _load(self) -> OffsetTable:
        table = OffsetTable()
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return table  # a first run
        except UnicodeDecodeError:
            text = "<binary>"
        except OSError as e:
            raise ConnectError(f"Cannot read offsets file {self.path}: {e}") from e
        if not text.strip():
            return table
        try:
            doc = json.loads(text)
            if doc.get("version") != _FORMAT_VERSION:
                raise ValueError(f"unsupported version {doc.get('version')!r}")
            for k, v in doc["entries"]:
                table.apply(base64.b64decode(k), None if v is None else base64.b64decode(v))
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise ConnectError(
                f"Offsets file {self.path} is not an mm2 offsets file ({e}); note that Java Connect's "
                "Java-serialized offsets files cannot be read"
            ) from e
        return table

    def _save(self) -> None:
        entries = [
            [base64.b64encode(k).decode("ascii"), None if v is None else base64.b64encode(v).decode("ascii")]
            for k, v in self._table.items()
        ]
        payload = json.dumps({"version": _FORMAT_VERSION, "entries": entries}, separators=(",", ":"))
        directory = self.path.parent if str(self.path.parent) else Path(".")
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
