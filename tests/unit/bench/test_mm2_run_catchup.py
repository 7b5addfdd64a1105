"""The catch-up bench's pure pieces: what it writes for mm2, how it reads the copy path, whose CPU it counts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Any, cast

from bench._harness import cpu_seconds, tree_cpu_seconds
from bench.mm2_run_catchup import CONTENDERS, _copy_path, stock_properties

A = cast(Any, SimpleNamespace(bootstrap_servers="127.0.0.1:1111"))
B = cast(Any, SimpleNamespace(bootstrap_servers="127.0.0.1:2222"))


def _props(text: str) -> dict[str, str]:
    return dict(line.split(" = ", 1) for line in text.splitlines())


def test_the_stock_properties_name_clusters_servers_the_flow_and_topic_only() -> None:
    assert _props(stock_properties(A, B, "T", CONTENDERS["batch path"])) == {
        "clusters": "A, B",
        "A.bootstrap.servers": "127.0.0.1:1111",
        "B.bootstrap.servers": "127.0.0.1:2222",
        "A->B.enabled": "true",
        "A->B.topics": "T",
    }
    record = _props(stock_properties(A, B, "T", CONTENDERS["record path"]))
    assert record["A->B.batch.copy.enabled"] == "false" and len(record) == 6
    eos = _props(stock_properties(A, B, "T", CONTENDERS["exactly-once"]))
    assert eos["B.exactly.once.source.support"] == "enabled"
    assert eos["dedicated.mode.enable.internal.rest"] == "true" and len(eos) == 7


def test_the_copy_path_is_the_tasks_word_with_the_workers_loop_where_it_differs() -> None:
    task = "INFO mirror: A->B|MirrorSourceConnector-0 replicating 4 topic-partitions A->B ({} path): ['T-0']\n"
    worker = "INFO w: Source task MirrorSourceConnector-0 finished initialization and start (copy path: {})\n"
    heartbeat = "INFO w: Source task MirrorHeartbeatConnector-0 finished initialization and start (copy path: record)\n"
    assert _copy_path(task.format("batch") + worker.format("batch") + heartbeat) == "batch"
    assert _copy_path(task.format("record") + worker.format("message")) == "record (message loop)"
    assert _copy_path(task.format("record")) == "record"  # the exactly-once task names no loop
    assert _copy_path(heartbeat) == "unknown"


def test_process_tree_cpu_counts_a_busy_child_the_parent_has_not_reaped() -> None:
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\ntime.sleep(60)"
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {burn!r}])"],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while tree_cpu_seconds(parent.pid) - cpu_seconds(parent.pid) < 0.3:
            assert time.monotonic() < deadline, "the child's CPU never showed in the tree's"
            time.sleep(0.05)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)  # the child too
        parent.wait(10)
    assert cpu_seconds(parent.pid) == 0.0  # gone: nothing left to read
