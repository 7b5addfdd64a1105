"""The operator's story, end to end: catch up after an outage with ``mm2 backfill``, through everything.

The mirror was stopped while a backlog piled up (100,000 records here, not the 2M of the story: what the
story checks is the hand-off, the kills and the resume, not the volume, and a million records cost minutes
of CPU to write, copy and read back on a 2-core machine that also runs the rest of the suite; both jobs copy
under a throughput cap instead, so each is caught copying for seconds); a backfill starts; ``mm2 run`` is
started during it; a Spark Python worker is SIGKILLed; the backfill is SIGKILLed; it is run again to
completion, its Python workers SIGKILLed while it copies (the failed task is retried: its report says so).
Live tailing owns the topic afterwards, and the target holds every record exactly once, in order, read
with the suite's read_committed reader (a committed duplicate fails; a retried chunk aborted by the fencing
does not).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster
from tests.e2e.mm2_helpers import Mm2Process, eventually, write_properties
from tests.e2e.test_backfill_lease import (
    REMOTE,
    SHORT_TRANSACTIONS,
    TOPIC,
    Backfill,
    Leases,
    Progress,
    committed_positions,
    flow_props,
    lease_of,
    produce,
    run_the_flow_then_stop,
    spark_python_workers,
    until_exactly_once,
)

BACKLOG = 100_000
#: about 17 bytes a record: the first job takes some 11 s to copy the backlog at the least, however fast the machine
CAP = ("--throughput-limit", "150K")


@pytest.mark.spark
@pytest.mark.timeout(600)  # two jobs (two Spark start-ups) and two mm2 runs: minutes beside the suite
def test_catch_up_after_an_outage_through_restarts_and_kills_is_exactly_once(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    for topic in (TOPIC, "other"):
        a.create_topic(topic, 3)
    produce(a, TOPIC, 0, 300)
    props = flow_props(a, b, **SHORT_TRANSACTIONS)
    config = write_properties(tmp_path / "mm2.properties", props)
    run_the_flow_then_stop(a, b, config, tmp_path)
    produce(a, TOPIC, 300, BACKLOG)  # the outage's backlog

    progress = Progress(b, REMOTE, 3)
    job = Backfill(config, tmp_path, *CAP, name="first")
    mm2: Mm2Process | None = None
    rerun: Backfill | None = None
    try:
        leases = Leases(b)
        try:
            eventually(lambda: leases() is not None, 180, "the job's lease")
        finally:
            leases.close()
        mm2 = Mm2Process(config, log_dir=tmp_path)  # started during the backfill
        eventually(lambda: progress() >= 300 + BACKLOG // 10, 240, "the job copies", mm2)
        workers = eventually(lambda: spark_python_workers(job.proc.pid), 60, "a Spark python worker")
        os.kill(workers[0], signal.SIGKILL)  # its task fails and is retried
        eventually(lambda: progress() >= 300 + BACKLOG // 2, 240, "the job copies on", mm2)
        job.kill()  # the whole backfill, half-way
        assert lease_of(b) is not None, "killed while it held its lease"
        done = sum(position + 1 for position in committed_positions(props, b).values())
        assert done < 300 + BACKLOG, "killed before it finished"

        # the rerun's Python workers SIGKILLed once it committed copies of its own, while it copies (its tasks are
        # mid-copy; the log's end is no trigger: on Tansu it jumps when the rerun's fencing writes markers): Spark
        # retries each failed task, which resumes from its last commit. What is left may be only a few hundred KB,
        # copied in a second, so the rerun runs under a throughput cap that keeps it copying for seconds after its
        # first commit (its transactions still commit every second)
        rerun = Backfill(config, tmp_path, *CAP, name="rerun")
        eventually(
            lambda: sum(p + 1 for p in committed_positions(props, b).values()) > done,
            240,
            "the rerun committing copies",
            mm2,
            interval=0.5,
        )
        killed = eventually(lambda: spark_python_workers(rerun.proc.pid), 60, "the rerun's Python workers")
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        report = rerun.finish()
        why = f"killed {killed}:\n{rerun.err.read_text()[-3000:]}"
        assert report["totals"]["tasks_retried"] >= 1, f"{report['totals']}; {why}"
        assert "was retried: attempt 2 succeeded" in rerun.err.read_text(), why
        assert lease_of(b) is None
        produce(a, TOPIC, 2 * BACKLOG, 300)  # live tailing owns the topic afterwards
        until_exactly_once(a, b, TOPIC, REMOTE, BACKLOG + 600, "every record exactly once, in order", mm2)
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        progress.close()
        job.close()
        if rerun is not None:
            rerun.close()
        if mm2 is not None:
            mm2.close()
