"""The transactional id of an exactly-once source task is Java's, so Java and mm2 fence each other."""

from connect_core.runtime.transactional_ids import source_task_transactional_id


def test_java_format_group_connector_task() -> None:
    assert source_task_transactional_id("mm2-A->B", "MirrorSourceConnector", 3) == ("mm2-A->B-MirrorSourceConnector-3")
