"""Generated markdown reference tables."""

from __future__ import annotations

from connect_core.config import NO_DEFAULT, ConfigDef, Importance, Range, Type, ValidString
from connect_core.config.docs import to_markdown


def _defn() -> ConfigDef:
    return (
        ConfigDef()
        .define("bootstrap.servers", Type.LIST, NO_DEFAULT, importance=Importance.HIGH, documentation="Brokers.")
        .define(
            "tasks.max",
            Type.INT,
            1,
            Range.at_least(1),
            Importance.HIGH,
            "Max tasks | with a pipe\nand a newline.",
            group="Common",
            order_in_group=2,
        )
        .define("name", Type.STRING, NO_DEFAULT, importance=Importance.HIGH, group="Common", order_in_group=1)
        .define("mode", Type.STRING, "fast", ValidString.in_("fast", "safe"), Importance.LOW, "Mode.")
        .define("topics", Type.LIST, "", documentation="Topics.")
        .define("ssl.key.password", Type.PASSWORD, None, importance=Importance.MEDIUM, documentation="Key pw.")
        .define_internal("internal.thing", Type.BOOLEAN, False)
    )


def _rows(md: str) -> list[list[str]]:
    rows = []
    for line in md.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            rows.append(cells)
    return rows


def test_every_public_key_has_one_row() -> None:
    md = to_markdown(_defn())
    names = [r[0].strip("`") for r in _rows(md)]
    assert sorted(names) == sorted(n for n in _defn().names() if n != "internal.thing")
    assert "internal.thing" not in md


def test_row_contents() -> None:
    rows = {r[0].strip("`"): r for r in _rows(to_markdown(_defn()))}
    assert rows["tasks.max"][1:5] == ["int", "`1`", "[1,...]", "high"]
    assert rows["tasks.max"][5] == "Max tasks \\| with a pipe and a newline."
    assert rows["bootstrap.servers"][2] == "*(required)*"
    assert rows["mode"][3] == "[fast, safe]"
    assert rows["topics"][2] == '""'
    assert rows["ssl.key.password"][1:3] == ["password", "null"]


def test_grouping_and_order() -> None:
    md = to_markdown(_defn(), title="Connector")
    assert md.startswith("# Connector\n")
    assert md.index("## Common") < md.index("## Other")
    common = md[md.index("## Common") : md.index("## Other")]
    assert common.index("`name`") < common.index("`tasks.max`")  # order_in_group
    other = md[md.index("## Other") :]
    assert other.index("`bootstrap.servers`") < other.index("`ssl.key.password`") < other.index("`mode`")


def test_several_definitions() -> None:
    worker = ConfigDef().define("group.id", Type.STRING, NO_DEFAULT, documentation="Group.")
    md = to_markdown([("Worker", worker), ("Connector", _defn())], title="Reference")
    assert "## Worker" in md and "## Connector" in md and "### Common" in md
    for n in ["group.id", "bootstrap.servers", "tasks.max", "name", "mode", "topics", "ssl.key.password"]:
        assert f"`{n}`" in md
