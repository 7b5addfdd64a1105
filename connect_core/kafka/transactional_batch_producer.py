"""Pre-built record batches produced inside Kafka transactions (the exactly-once form of the batch copy).

Built on :class:`~connect_core.kafka.batch_producer.BatchProducer` (its connections, ordering, retries and
sequences), in the order Kafka's own transactional producer keeps:

1. :meth:`~TransactionalBatchProducer.init_transactions`: FindCoordinator (transaction key) ->
   InitProducerId with the transactional id. The coordinator bumps the id's epoch, which fences every
   earlier holder of the id and aborts the transaction it left open (on brokers without a transaction
   timeout that open transaction holds the last stable offset back until then).
2. :meth:`~TransactionalBatchProducer.begin_transaction` (local), then batches
   (:meth:`~TransactionalBatchProducer.send`) and ordinary records built into a batch
   (:meth:`~TransactionalBatchProducer.send_records`): a partition's first batch of a transaction waits
   until AddPartitionsToTxn registered the partition; every batch carries the transactional bit, the
   producer id and epoch and its partition's next sequence (continuing across transactions), its CRC
   recomputed.
3. :meth:`~TransactionalBatchProducer.commit_transaction`: every batch acknowledged, then EndTxn(commit);
   a batch that failed makes the commit fail instead (the caller aborts).
   :meth:`~TransactionalBatchProducer.abort_transaction`: unsent batches dropped, in-flight ones awaited,
   EndTxn(abort), then InitProducerId again: the epoch bump restarts the sequences, which the dropped
   batches would otherwise leave with a gap.

Fencing (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, from any request) raises
:class:`~connect_core.kafka.producer_errors.ProducerFencedError` and leaves the producer unusable: every
later call raises it again. Retriable coordinator answers (loading, moved, concurrent transactions) are
retried until the call's timeout. Single-threaded, like the class it extends.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka import errors as kafka_errors
from kafka.protocol.metadata import FindCoordinatorRequest
from kafka.protocol.producer import AddPartitionsToTxnRequest, EndTxnRequest, InitProducerIdRequest

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.kafka.batch_builder import PlainRecord, build_batch
from connect_core.kafka.batch_producer import BatchCallback, BatchProducer, TopicPartitionKey, _Partition
from connect_core.kafka.producer_errors import FENCED_CODES, ProducerFencedError, mapped_error
from connect_core.kafka.record_batch import RawBatch

log = logging.getLogger(__name__)

_TRANSACTION_COORDINATOR = 1
_INIT_PRODUCER_ID_VERSION = 4  # v0 fails on some brokers; v4 is what the idempotent path uses too
_ADD_PARTITIONS_VERSION = 3  # v4 on is the brokers' own batched form
_END_TXN_VERSION = 3
_COORDINATOR_MOVED = {15, 16}  # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: look it up again
_COORDINATOR_BUSY = {14, 51}  # COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS: ask again shortly
_OPERATION_NOT_ATTEMPTED = 55  # another partition of the same AddPartitionsToTxn failed
_BUSY_BACKOFF_S = 0.02  # Kafka's producer retries CONCURRENT_TRANSACTIONS after 20 ms
_RETRY_BACKOFF_S = 0.1


class TxnState(enum.Enum):
    UNINITIALIZED = "uninitialized"
    READY = "ready"
    IN_TRANSACTION = "in transaction"
    ABORTABLE = "failed: must be aborted"
    FENCED = "fenced"


class TransactionalBatchProducer(BatchProducer):
    """A transactional producer of pre-built v2 batches (see the module docstring)."""

    def __init__(
        self,
        bootstrap_servers: str,
        client_configs: Mapping[str, Any],
        client_id: str,
        transactional_id: str,
        *,
        transaction_timeout_s: float = 60.0,
        request_timeout_s: float = 30.0,
        delivery_timeout_s: float = 120.0,
        max_in_flight: int = 5,
        max_request_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        super().__init__(
            bootstrap_servers,
            client_configs,
            client_id,
            acks=-1,
            request_timeout_s=request_timeout_s,
            delivery_timeout_s=delivery_timeout_s,
            max_in_flight=max_in_flight,
            max_request_bytes=max_request_bytes,
        )
        self._transactional_id = transactional_id
        self._transaction_timeout_ms = int(transaction_timeout_s * 1000)
        self._request_timeout_s = request_timeout_s
        self._coordinator: Any = None
        self.state = TxnState.UNINITIALIZED
        self._in_transaction: set[TopicPartitionKey] = set()
        self._failure: ConnectError | None = None  # the first batch failure of the open transaction
        self._fenced: ProducerFencedError | None = None

    @property
    def transactional_id(self) -> str:
        return self._transactional_id or ""

    # ------------------------------------------------------------------ the transaction's life

    def init_transactions(self, timeout_s: float | None = None) -> None:
        """Get the producer id and a new epoch for the transactional id (fencing earlier holders)."""
        self._usable()
        if self.in_flight:
            raise ConnectError("init_transactions with batches still queued")
        deadline = time.monotonic() + (self._request_timeout_s if timeout_s is None else timeout_s)
        answer = self._coordinator_call(
            lambda: InitProducerIdRequest(
                transactional_id=self._transactional_id,
                transaction_timeout_ms=self._transaction_timeout_ms,
                producer_id=-1,
                producer_epoch=-1,
                max_version=_INIT_PRODUCER_ID_VERSION,
            ),
            "InitProducerId",
            deadline,
        )
        self.producer_id, self.producer_epoch = answer.producer_id, answer.producer_epoch
        self._partitions.clear()  # a new epoch: every partition's sequence starts again at 0
        self._in_transaction.clear()
        self._failure = None
        self.state = TxnState.READY

    def start(self) -> None:
        """The base producer's first send initialises; this one needs :meth:`init_transactions` first."""
        if self.state is TxnState.UNINITIALIZED:
            self.init_transactions()

    def begin_transaction(self) -> None:
        self._usable()
        if self.state is not TxnState.READY:
            raise ConnectError(f"Cannot begin a transaction: the producer is {self.state.value}")
        self.state = TxnState.IN_TRANSACTION

    def send(self, topic: str, partition: int, batch: RawBatch, callback: BatchCallback) -> None:
        """Queue a batch into the open transaction; ``callback`` runs from :meth:`poll`/commit/abort."""
        self._usable()
        if self.state is not TxnState.IN_TRANSACTION:
            raise ConnectError(f"Cannot send a batch: the producer is {self.state.value}, not in a transaction")

        def noted(base_offset: int, error: BaseException | None) -> None:
            if error is not None:
                self._note(error)
            callback(base_offset, error)

        super().send(topic, partition, batch, noted)

    def send_records(
        self,
        topic: str,
        partition: int,
        records: Sequence[PlainRecord],
        callback: BatchCallback,
        compression: int = 0,
    ) -> None:
        """Ordinary records, built into one batch, into the open transaction after what was sent before."""
        self.send(topic, partition, build_batch(records, compression), callback)

    def commit_transaction(self, timeout_s: float | None = None) -> None:
        """Every batch acknowledged, then EndTxn(commit). Raises when a batch failed (abort then), when
        the time ran out (the transaction stays open: abort it) or when fenced."""
        self._usable()
        if self.state is not TxnState.IN_TRANSACTION:
            raise ConnectError(f"Cannot commit: the producer is {self.state.value}")
        timeout = self._request_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout
        if not self.flush(timeout):
            raise RetriableError(f"Batches of the transaction were not acknowledged within {timeout:g} s")
        self._usable()
        if self._failure is not None:
            self.state = TxnState.ABORTABLE
            error = ConnectError(f"The transaction cannot commit, a batch failed: {self._failure}")
            error.code = getattr(self._failure, "code", None)  # type: ignore[attr-defined]  # the batch's cause
            raise error
        self._end(True, deadline)
        self.state = TxnState.READY

    def abort_transaction(self, timeout_s: float | None = None) -> None:
        """Drop what was not sent, wait for what was, EndTxn(abort), new epoch. Nothing open: no-op."""
        self._usable()
        if self.state not in (TxnState.IN_TRANSACTION, TxnState.ABORTABLE):
            return
        deadline = time.monotonic() + (self._request_timeout_s if timeout_s is None else timeout_s)
        self.state = TxnState.ABORTABLE  # nothing more is sent (a retried batch is dropped, not sent again)
        aborted = ConnectError("The transaction was aborted before this batch was sent")
        while True:
            for tp, state in self._partitions.items():
                self._drop_unsent(tp, state, aborted)
            if not self._requests:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RetriableError("Batches in flight were not answered before the abort's timeout")
            self.poll(min(remaining, 0.1))
        self._usable()
        self._end(False, deadline)
        self.init_transactions(max(0.0, deadline - time.monotonic()))

    # ------------------------------------------------------------------ requests to the coordinator

    def _end(self, commit: bool, deadline: float) -> None:
        """EndTxn, when the transaction registered a partition (otherwise nothing reached the broker)."""
        if self._in_transaction:
            self._coordinator_call(
                lambda: EndTxnRequest(
                    transactional_id=self._transactional_id,
                    producer_id=self.producer_id,
                    producer_epoch=self.producer_epoch,
                    committed=commit,
                    max_version=_END_TXN_VERSION,
                ),
                "EndTxn(commit)" if commit else "EndTxn(abort)",
                deadline,
            )
        self._in_transaction.clear()
        self._failure = None

    def _admit(self, partitions: set[TopicPartitionKey]) -> set[TopicPartitionKey]:
        """AddPartitionsToTxn for the partitions not in the transaction yet; the ones that may be sent to."""
        new = partitions - self._in_transaction
        if self._fenced is not None or self.state is not TxnState.IN_TRANSACTION:
            return set()
        if not new:
            return partitions
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(new):
            by_topic.setdefault(topic, []).append(partition)
        answer = self._coordinator_call(
            lambda: AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=self._transactional_id,
                v3_and_below_producer_id=self.producer_id,
                v3_and_below_producer_epoch=self.producer_epoch,
                v3_and_below_topics=[
                    AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=t, partitions=p) for t, p in by_topic.items()
                ],
                max_version=_ADD_PARTITIONS_VERSION,
            ),
            "AddPartitionsToTxn",
            time.monotonic() + self._request_timeout_s,
            _add_partitions_error,
        )
        for topic in answer.results_by_topic_v3_and_below:
            for result in topic.results_by_partition:
                tp, code = (topic.name, result.partition_index), result.partition_error_code
                if code == 0:
                    self._in_transaction.add(tp)
                elif code != _OPERATION_NOT_ATTEMPTED and not kafka_errors.for_code(code).retriable:
                    error = mapped_error(code, f"AddPartitionsToTxn of {tp[0]}-{tp[1]}")
                    self._note(error)
                    state = self._partitions.get(tp)
                    if state is not None:
                        self._fail_partition(tp, state, error)
        return partitions & self._in_transaction

    def _coordinator_call(
        self,
        make: Callable[[], Any],
        what: str,
        deadline: float,
        error_of: Callable[[Any], int] = lambda answer: int(answer.error_code),
    ) -> Any:
        """The coordinator's answer to the request ``make`` builds, retried while the coordinator is
        loading, moving or busy; a fencing answer raises ProducerFencedError, others ConnectError."""
        last = "no answer"
        while True:
            backoff = _RETRY_BACKOFF_S
            try:
                client = self._connected()
                node = self._coordinator if self._coordinator is not None else self._find_coordinator()
                answer = client.send_and_receive(node, make(), timeout_ms=self._timeout_ms)
            except (kafka_errors.KafkaError, RetriableError) as e:
                self._coordinator = None
                last = str(e)
            else:
                code = error_of(answer)
                if code == 0:
                    return answer
                last = f"{kafka_errors.for_code(code).__name__} ({code})"
                if code in FENCED_CODES:
                    error = mapped_error(code, f"{what} for transactional id {self._transactional_id!r}")
                    self._note(error)
                    raise error
                if code in _COORDINATOR_MOVED:
                    self._coordinator = None
                elif code in _COORDINATOR_BUSY:
                    backoff = _BUSY_BACKOFF_S
                elif not kafka_errors.for_code(code).retriable:
                    raise mapped_error(code, f"{what} for transactional id {self._transactional_id!r}")
            if time.monotonic() + backoff > deadline:
                raise RetriableError(f"{what} for transactional id {self._transactional_id!r} kept failing: {last}")
            time.sleep(backoff)

    def _find_coordinator(self) -> Any:
        """The transaction coordinator's node (its own connection), from FindCoordinator."""
        client = self._connected()
        node = client.least_loaded_node(bootstrap_fallback=True)
        key = self.transactional_id
        request = FindCoordinatorRequest(key=key, key_type=_TRANSACTION_COORDINATOR, coordinator_keys=[key])
        answer = client.send_and_receive(node, request, timeout_ms=self._timeout_ms)
        found = answer.coordinators[0] if getattr(answer, "coordinators", None) else answer
        if found.error_code:
            raise mapped_error(found.error_code, f"FindCoordinator for transactional id {key!r}")
        self._coordinator = client.cluster.add_coordinator(found, _TRANSACTION_COORDINATOR, key)
        return self._coordinator

    # ------------------------------------------------------------------ failures

    def _note(self, error: BaseException) -> None:
        """A failure in the open transaction: fencing ends the producer, anything else the transaction."""
        if isinstance(error, ProducerFencedError):
            if self._fenced is None:
                self._fenced = error
                self.state = TxnState.FENCED
                log.warning("Transactional id %r was taken over by another producer: %s", self.transactional_id, error)
                for tp, state in self._partitions.items():
                    self._drop_unsent(tp, state, error)
        elif self._failure is None and isinstance(error, ConnectError):
            self._failure = error

    def _drop_unsent(self, tp: TopicPartitionKey, state: _Partition, error: ConnectError) -> None:
        """Fail the partition's batches not sent yet (the ones in flight are answered as they come)."""
        for entry in [e for e in state.entries if not e.sent]:
            entry.generation += 1
            self._complete(state, entry, -1, error)

    def _usable(self) -> None:
        if self._fenced is not None:
            raise ProducerFencedError(str(self._fenced), self._fenced.code)


def _add_partitions_error(answer: Any) -> int:
    """The code that decides an AddPartitionsToTxn (v3) as a whole: fencing, or a coordinator to retry."""
    codes = {r.partition_error_code for t in answer.results_by_topic_v3_and_below for r in t.results_by_partition}
    for code in sorted(codes):
        if code in FENCED_CODES or code in _COORDINATOR_MOVED or code in _COORDINATOR_BUSY:
            return code
    return 0


__all__ = ["PlainRecord", "TransactionalBatchProducer", "TxnState"]
