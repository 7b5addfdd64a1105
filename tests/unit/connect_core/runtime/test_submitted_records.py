"""Committable offsets are the longest acknowledged prefix per source partition."""

from __future__ import annotations

import random
import threading

from connect_core.runtime.submitted_records import CommittableOffsets, SubmittedRecords, partition_key

P1 = {"topic": "t", "partition": 0}
P2 = {"topic": "t", "partition": 1}


def offsets_of(c: CommittableOffsets) -> dict:
    return {partition_key(p): o for p, o in c.offsets.values()}


def test_nothing_submitted_is_empty() -> None:
    c = SubmittedRecords().committable_offsets()
    assert c.is_empty and not c.has_pending and c.offsets == {}


def test_out_of_order_acks_commit_only_prefix() -> None:
    sr = SubmittedRecords()
    r = [sr.submit(P1, {"offset": i}) for i in range(5)]
    r[1].ack()
    r[2].ack()
    c = sr.committable_offsets()
    assert c.offsets == {} and c.num_committable == 0 and c.num_uncommittable == 5
    assert c.largest_deque_partition == P1 and c.largest_deque_size == 5
    r[0].ack()
    c = sr.committable_offsets()
    assert offsets_of(c) == {partition_key(P1): {"offset": 2}}
    assert (c.num_committable, c.num_uncommittable) == (3, 2)
    # Already-committed records are not reported again.
    c = sr.committable_offsets()
    assert c.offsets == {} and c.num_committable == 0
    r[4].ack()
    assert sr.committable_offsets().offsets == {}
    r[3].ack()
    c = sr.committable_offsets()
    assert offsets_of(c) == {partition_key(P1): {"offset": 4}}
    assert c.num_deques == 0 and c.is_empty is False and not c.has_pending


def test_partitions_are_independent_and_equal_maps_share_a_deque() -> None:
    sr = SubmittedRecords()
    a0 = sr.submit(P1, {"offset": 0})
    b0 = sr.submit(P2, {"offset": 10})
    a1 = sr.submit(dict(P1), {"offset": 1})  # equal map, different object
    b0.ack()
    a1.ack()
    c = sr.committable_offsets()
    assert offsets_of(c) == {partition_key(P2): {"offset": 10}}
    assert c.num_uncommittable == 2 and c.largest_deque_partition == P1
    a0.ack()
    assert offsets_of(sr.committable_offsets()) == {partition_key(P1): {"offset": 1}}


def test_key_order_and_bool_int_distinction() -> None:
    assert partition_key({"a": 1, "b": "x"}) == partition_key({"b": "x", "a": 1})
    assert partition_key({"a": True}) != partition_key({"a": 1})
    assert partition_key({"a": [1, {"z": 2}]}) == partition_key({"a": [1, {"z": 2}]})
    hash(partition_key({"a": [1, {"z": None}], "b": 1.5}))


def test_null_partition_and_null_offset() -> None:
    sr = SubmittedRecords()
    h = sr.submit(None, None)
    h.ack()
    c = sr.committable_offsets()
    assert c.offsets == {None: (None, None)}


def test_many_partitions_random_acks_match_model() -> None:
    rng = random.Random(7)
    sr = SubmittedRecords()
    parts = [{"cluster": "A", "topic": f"t{i % 7}", "partition": i} for i in range(50)]
    handles = []
    seq = {i: 0 for i in range(50)}
    for _ in range(3000):
        i = rng.randrange(50)
        handles.append((i, seq[i], sr.submit(parts[i], {"offset": seq[i]})))
        seq[i] += 1
    rng.shuffle(handles)
    acked: dict[int, set[int]] = {i: set() for i in range(50)}
    committed: dict[int, int] = {}
    for n, (i, off, h) in enumerate(handles):
        h.ack()
        acked[i].add(off)
        if n % 97 == 0 or n == len(handles) - 1:
            c = sr.committable_offsets()
            for key, (p, o) in c.offsets.items():
                assert key == partition_key(p)
                assert p is not None and o is not None
                committed[p["partition"]] = o["offset"]
            # model: the committed offset is the end of the acked prefix
            for j in range(50):
                prefix = 0
                while prefix in acked[j]:
                    prefix += 1
                if prefix:
                    assert committed[j] == prefix - 1
                else:
                    assert j not in committed
    assert sr.committable_offsets().num_uncommittable == 0


def test_remove_last_occurrence() -> None:
    sr = SubmittedRecords()
    a = sr.submit(P1, {"offset": 0})
    b = sr.submit(P1, {"offset": 1})
    c = sr.submit(P1, {"offset": 2})
    assert sr.remove_last_occurrence(c) is True
    assert sr.remove_last_occurrence(c) is False
    a.ack()
    b.ack()
    snap = sr.committable_offsets()
    assert offsets_of(snap) == {partition_key(P1): {"offset": 1}}
    assert snap.num_uncommittable == 0
    # removing from the middle keeps the rest
    x = sr.submit(P1, {"offset": 3})
    y = sr.submit(P1, {"offset": 4})
    z = sr.submit(P1, {"offset": 5})
    assert y.drop() is True
    x.ack()
    z.ack()
    assert offsets_of(sr.committable_offsets()) == {partition_key(P1): {"offset": 5}}
    assert sr.await_all_messages(0.01) is True


def test_updated_with_prefers_newer() -> None:
    old = CommittableOffsets({"k": ({"p": 1}, {"o": 1}), "j": ({"p": 2}, {"o": 5})}, 3, 2, 1, 2, {"p": 1})
    new = CommittableOffsets({"k": ({"p": 1}, {"o": 9})}, 4, 0, 0, 0, None)
    m = old.updated_with(new)
    assert m.offsets == {"k": ({"p": 1}, {"o": 9}), "j": ({"p": 2}, {"o": 5})}
    assert (m.num_committable, m.num_uncommittable, m.largest_deque_partition) == (7, 0, None)


def test_await_all_messages_with_acks_from_another_thread() -> None:
    sr = SubmittedRecords()
    handles = [sr.submit(P1 if i % 2 else P2, {"offset": i}) for i in range(200)]
    assert sr.await_all_messages(0.01) is False

    def acker() -> None:
        for h in reversed(handles):
            h.ack()
            h.ack()  # idempotent

    t = threading.Thread(target=acker)
    t.start()
    assert sr.await_all_messages(5.0) is True
    t.join()
    assert sr.num_unacked == 0
    c = sr.committable_offsets()
    assert c.num_committable == 200
    assert offsets_of(c) == {partition_key(P1): {"offset": 199}, partition_key(P2): {"offset": 198}}


def test_await_ignores_records_submitted_after_the_call_started() -> None:
    sr = SubmittedRecords()
    h = sr.submit(P1, {"offset": 0})
    done: list[bool] = []
    t = threading.Thread(target=lambda: done.append(sr.await_all_messages(5.0)))
    t.start()
    h.ack()
    t.join()
    assert done == [True]
    sr.submit(P1, {"offset": 1})
    assert sr.await_all_messages(0.0) is False
