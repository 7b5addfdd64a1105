"""The cluster capability object: unknown means the safe path, a fetch answer holding an aborted transaction
with data decides whether the broker lists aborted transactions, and verdicts are cached per cluster."""

from __future__ import annotations

import uuid

from connect_core.kafka.broker_capabilities import (
    BrokerCapabilities,
    aborted_listing_evidence,
    capabilities_for,
    cluster_key,
    record_fetch_answer,
)
from tests.unit.connect_core.kafka.batches import data, marker


def fresh_cluster() -> dict[str, str]:
    host = uuid.uuid4().hex
    return {"bootstrap.servers": f"{host}-b:9092, {host}-a:9092"}


ABORTED = [data(7, 0, 1), marker(7, 2, False)]


def test_an_unknown_cluster_takes_the_safe_path() -> None:
    assert capabilities_for(fresh_cluster()) == BrokerCapabilities(False, False)


def test_an_abort_with_data_the_answer_lists_proves_filtering() -> None:
    assert aborted_listing_evidence(ABORTED, [(7, 0)]) is True


def test_an_abort_with_data_the_answer_does_not_list_proves_the_broker_does_not_filter() -> None:
    assert aborted_listing_evidence(ABORTED, []) is False
    assert aborted_listing_evidence(ABORTED, [(8, 0)]) is False  # another producer's


def test_a_listed_first_offset_after_the_data_or_before_the_previous_marker_does_not_count() -> None:
    assert aborted_listing_evidence(ABORTED, [(7, 1)]) is False
    earlier = [data(7, 0), marker(7, 1, True), data(7, 2), marker(7, 3, False)]
    assert aborted_listing_evidence(earlier, [(7, 0)]) is False  # 0 is the committed transaction's
    assert aborted_listing_evidence(earlier, [(7, 2)]) is True


def test_answers_without_an_aborted_transaction_with_data_prove_nothing() -> None:
    assert aborted_listing_evidence([data(7, 0), marker(7, 1, True)], []) is None
    assert aborted_listing_evidence([data(-1, 0, txn=False)], []) is None
    # an empty transaction's ABORT: Kafka indexes no such transaction, so its absence proves nothing
    assert aborted_listing_evidence([marker(7, 0, False)], []) is None
    # the data came in an earlier answer: this one cannot tell
    assert aborted_listing_evidence([marker(7, 5, False)], [(7, 3)]) is None


def test_one_unlisted_abort_among_listed_ones_means_not_filtering() -> None:
    batches = [data(7, 0), data(8, 1), marker(7, 2, False), marker(8, 3, False)]
    assert aborted_listing_evidence(batches, [(7, 0)]) is False
    assert aborted_listing_evidence(batches, [(8, 1), (7, 0)]) is True


def test_a_verdict_is_cached_per_bootstrap_servers_whatever_their_order() -> None:
    cluster = fresh_cluster()
    reordered = {"bootstrap.servers": ",".join(reversed(cluster["bootstrap.servers"].split(",")))}
    assert cluster_key(cluster) == cluster_key(reordered)
    assert record_fetch_answer(cluster, ABORTED, [(7, 0)]) == BrokerCapabilities(True, True)
    assert capabilities_for(reordered) == BrokerCapabilities(True, True)
    assert record_fetch_answer(cluster, [data(1, 9)], []) == BrokerCapabilities(True, True)  # nothing to judge
    assert capabilities_for(fresh_cluster()) == BrokerCapabilities(False, False)  # another cluster


def test_not_filtering_is_kept_for_good_and_a_contradiction_of_filtering_downgrades() -> None:
    stubborn = fresh_cluster()
    assert record_fetch_answer(stubborn, ABORTED, []) == BrokerCapabilities(False, True)
    assert record_fetch_answer(stubborn, ABORTED, [(7, 0)]) == BrokerCapabilities(False, True)
    wavering = fresh_cluster()
    record_fetch_answer(wavering, ABORTED, [(7, 0)])
    assert record_fetch_answer(wavering, ABORTED, []) == BrokerCapabilities(False, True)
    assert capabilities_for(wavering).filters_aborted_transactions is False
