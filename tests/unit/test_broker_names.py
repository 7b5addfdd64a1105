"""No product module names the embedded test broker: its quirks live behind the probed capability object
in ``connect_core/kafka`` (and in the test-broker harness, ``embedded_kafka/``, outside the scanned
trees), so the product's code and comments speak of broker behaviour, not of one broker."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("connect_core", "mirror")
#: The one home of broker quirks inside the product.
ALLOWED = "connect_core/kafka"
NAME = re.compile("tansu", re.IGNORECASE)


def mentions(base: Path, roots: tuple[str, ...], allowed: str) -> list[str]:
    """Each ``path:line: text`` under ``base``'s ``roots`` but not under ``allowed`` (every text file,
    not only Python) that names the broker; paths relative to ``base``."""
    found: list[str] = []
    for root in roots:
        for path in sorted(p for p in (base / root).rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            if path.is_relative_to(base / allowed):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # binary files carry no prose
            found.extend(
                f"{path.relative_to(base)}:{number}: {line.strip()}"
                for number, line in enumerate(text.splitlines(), 1)
                if NAME.search(line)
            )
    return found


def test_no_product_module_outside_connect_core_kafka_names_the_test_broker() -> None:
    named = mentions(ROOT, SCANNED, ALLOWED)
    assert not named, "name the behaviour, not the broker (quirks belong in connect_core/kafka):\n" + "\n".join(named)


def test_the_scan_finds_a_mention_and_reports_its_file_and_line(tmp_path: Path) -> None:
    """The scan itself can fail: a planted mention is reported with its file and line, the allowed home
    is skipped."""
    (tmp_path / "mirror").mkdir()
    (tmp_path / "connect_core" / "kafka").mkdir(parents=True)
    (tmp_path / "mirror" / "quirk.py").write_text("x = 1\n# Tansu lists no aborted transactions\n", encoding="utf-8")
    (tmp_path / "connect_core" / "notes.md").write_text("a TANSU quirk\n", encoding="utf-8")
    (tmp_path / "connect_core" / "kafka" / "home.py").write_text("# tansu is fine here\n", encoding="utf-8")
    assert mentions(tmp_path, SCANNED, ALLOWED) == [
        "connect_core/notes.md:1: a TANSU quirk",
        "mirror/quirk.py:2: # Tansu lists no aborted transactions",
    ]
