"""The offset-mapping index at scale: a million mappings of one partition, in bounded memory.

No time bound here: a timed unit test fails on a busy machine and proves no speed (CPU time of the
same work ranged 4.4-5.4 s on an idle 2-core machine); speed claims live in ``bench/``."""

from __future__ import annotations

from mirror.client.formats import TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.connectors.offset_mapping_index import BYTES_PER_INTERVAL, DEFAULT_MAX_INTERVALS, OffsetMappingIndex

TP = TopicPartition("t", 0)
N = 1_000_000
#: Allocation slack of the int64 columns on top of the documented 1.125 x max_intervals x 64 bytes.
ALLOCATION_SLACK = 1.1


def test_a_million_mappings_inserted_and_looked_up_exactly_within_the_memory_bound() -> None:
    # A transactional source: 4 records then a commit marker, copied to a target whose offsets are shifted.
    mappings = [OffsetMapping(TP, 5 * k, 5 * k + 1, 4 * k + 3, 4) for k in range(N)]
    index = OffsetMappingIndex()
    for m in mappings:
        index.on_mapping(m)
    kept = len(index)
    first_kept = index.intervals(TP)[0][0] // 5
    exact = sum(1 for k in range(first_kept, N) if index.translate(TP, 5 * k + 3) == 4 * k + 5)
    assert exact == N - first_kept  # every kept mapping answers exactly
    assert index.translate(TP, 5 * N) == 4 * N + 3  # a group at the very end
    cap = DEFAULT_MAX_INTERVALS
    assert cap <= kept <= cap + cap // 8  # the oldest dropped, in batches
    bound = (cap + cap // 8) * BYTES_PER_INTERVAL * ALLOCATION_SLACK
    assert index.memory_bytes(TP) <= bound, (index.memory_bytes(TP), bound)
