"""The oracle shares no code with what it checks: no import of the product or of a Kafka client library.

Only type hints may name the test harness (under ``if TYPE_CHECKING``); a KafkaCluster is then used for
its metadata (where each partition's leader is) and its client settings (TLS), never to decide visibility.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tests.oracle

FORBIDDEN = ("connect_core", "mirror", "kafka", "confluent_kafka")


def _runtime_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    type_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for stmt in block.body
        for node in ast.walk(stmt)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


def test_the_oracle_imports_neither_the_product_nor_a_kafka_client() -> None:
    modules = sorted(Path(tests.oracle.__file__).parent.glob("*.py"))
    assert len(modules) >= 5
    for path in modules:
        imports = _runtime_imports(path)
        assert not [m for m in imports if m.split(".")[0] in FORBIDDEN], (path.name, imports)


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mirror\n"
        "from connect_core.kafka import transaction_markers\n"
    )
    assert _runtime_imports(sample) == ["typing", "connect_core.kafka"]
