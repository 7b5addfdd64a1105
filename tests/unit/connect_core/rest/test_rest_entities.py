"""JSON shapes of single entities and Jackson-like request coercion."""

from __future__ import annotations

import pytest

from connect_core.model import AbstractStatus, PluginInfo, State
from connect_core.rest import entities
from connect_core.rest.errors import RestError


def test_task_state_omits_empty_trace() -> None:
    assert entities.task_state(2, AbstractStatus(State.UNASSIGNED, "w:1", trace="")) == {
        "id": 2,
        "state": "UNASSIGNED",
        "worker_id": "w:1",
    }
    assert entities.task_state(0, AbstractStatus(State.FAILED, "w:1", trace="t"))["trace"] == "t"


def test_plugin_version_hidden_when_undefined() -> None:
    assert entities.plugin_info(PluginInfo("a.B", "source", "undefined")) == {"class": "a.B", "type": "source"}
    assert entities.plugin_info(PluginInfo("a.B", "predicate", "1"))["version"] == "1"


def test_string_map_coerces_scalars_like_jackson() -> None:
    assert entities.string_map({"a": 1, "b": True, "c": 1.5, "d": None, "e": "x"}) == {
        "a": "1",
        "b": "true",
        "c": "1.5",
        "d": None,
        "e": "x",
    }
    with pytest.raises(RestError) as e:
        entities.string_map({"a": [1]})
    assert e.value.status == 400  # Java: 500 (a Jackson failure); the client's mistake here
    with pytest.raises(RestError):
        entities.string_map("text")


def test_offsets_shape_and_request_round_trip() -> None:
    rendered = entities.connector_offsets([({"p": 1}, {"o": 2}), ({"p": 2}, None)])
    assert rendered == {
        "offsets": [{"partition": {"p": 1}, "offset": {"o": 2}}, {"partition": {"p": 2}, "offset": None}]
    }
    assert entities.connector_offsets_request(rendered) == [({"p": 1}, {"o": 2}), ({"p": 2}, None)]
    assert entities.connector_offsets_request({}) is None


def test_dumps_is_compact_utf8() -> None:
    assert entities.dumps({"a": "é", "b": [1]}) == '{"a":"é","b":[1]}'.encode()
