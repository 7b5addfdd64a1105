"""The copy path keeps its seams (issue 36): the worker, the copy loops and the MirrorSource task share state
only through what they declare public.

In the modules below no code reads or writes another object's underscore attribute (``other._x``, or
``getattr(other, "_x")``; ``self``, ``cls`` and ``super()`` are the object's own), and no Protocol declares an
underscore member: a Protocol says what its callers use, and a caller uses only what is public.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Where records travel from the source task to the target and their acknowledgements back.
COPY_PATH = (
    "connect_core/api/batch_copy.py",
    "connect_core/api/message_copy.py",
    "connect_core/runtime/batch_copy_loop.py",
    "connect_core/runtime/copied_run.py",
    "connect_core/runtime/exactly_once_source_task.py",
    "connect_core/runtime/message_copy_loop.py",
    "connect_core/runtime/source_offset_flush.py",
    "connect_core/runtime/submitted_records.py",
    "connect_core/runtime/worker_source_task.py",
    "mirror/connectors/offset_mapping_tracker.py",
    "mirror/connectors/offset_sync_producer.py",
    "mirror/connectors/offset_sync_writer.py",
    "mirror/connectors/partition_copy.py",
    "mirror/connectors/source_batches.py",
    "mirror/connectors/source_task.py",
)

_OWN = {"self", "cls"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _own_object(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _OWN
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _is_protocol(cls: ast.ClassDef) -> bool:
    for base in cls.bases:
        target = base.value if isinstance(base, ast.Subscript) else base
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "Protocol":
            return True
    return False


def _reads_private(node: ast.AST) -> bool:
    """``other._x`` or ``getattr(other, "_x")`` (also setattr/hasattr) on an object that is not the code's own."""
    if isinstance(node, ast.Attribute):
        return _private(node.attr) and not _own_object(node.value)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr", "hasattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
        and _private(node.args[1].value)
        and not _own_object(node.args[0])
    )


def seam_breaks(source: str, filename: str = "<source>") -> list[str]:
    """``file:line: what`` for each read of another object's underscore attribute and each underscore member
    of a Protocol."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        if _reads_private(node):
            found.append(f"{filename}:{node.lineno}: reads {ast.unparse(node)}")  # type: ignore[attr-defined]
        elif isinstance(node, ast.ClassDef) and _is_protocol(node):
            for item in node.body:
                name = ""
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    name = item.target.id
                elif isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = item.name
                if _private(name):
                    found.append(f"{filename}:{item.lineno}: Protocol {node.name} declares {name}")
    return found


def test_the_copy_path_reads_no_other_objects_underscore_attributes() -> None:
    breaks = [b for path in COPY_PATH for b in seam_breaks((ROOT / path).read_text(), path)]
    assert breaks == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(worker):\n    return worker._known_topics\n", "<source>:2: reads worker._known_topics"),
        ("def f(self):\n    self.task._run_acknowledged(self)\n", "<source>:2: reads self.task._run_acknowledged"),
        ("def f(x):\n    return getattr(x, '_cond')\n", "<source>:2: reads getattr(x, '_cond')"),
        (
            "class W(Protocol):\n    id: int\n    _producer_error: object\n",
            "<source>:3: Protocol W declares _producer_error",
        ),
        (
            "class W(typing.Protocol):\n    def _run_acknowledged(self) -> None: ...\n",
            "<source>:2: Protocol W declares _run_acknowledged",
        ),
    ],
)
def test_the_check_finds_each_kind_of_break(source: str, expected: str) -> None:
    assert seam_breaks(source) == [expected]


def test_the_check_leaves_own_and_public_attributes_alone() -> None:
    source = (
        "class A(Base):\n"
        "    def f(self, other):\n"
        "        self._x = other.x + super()._y() + self.__class__.__name__.__len__()\n"
        "        return getattr(self, '_z', None)\n"
        "class P(Protocol):\n"
        "    x: int\n"
        "    def __call__(self) -> None: ...\n"
    )
    assert seam_breaks(source) == []
