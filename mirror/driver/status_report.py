"""What ``mm2 status`` shows, and how: pure data and its table/JSON renderings.

Collecting the data (internal topics, end offsets) lives in :mod:`mirror.driver.status`; keeping the
rendering pure lets it be tested without clusters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: Where a partition's MIRRORED figure comes from (see :mod:`mirror.driver.status_lag`).
EVIDENCE_TARGET = "target"  # latest offset sync + the remote partition's end offset, read now
EVIDENCE_FLUSHED = "flushed"  # the committed (flushed) source offset
EVIDENCE_NONE = "none"  # nothing mirrored yet


@dataclass
class TaskState:
    id: int
    state: str
    worker_id: str
    trace: str | None = None


@dataclass
class ConnectorState:
    name: str
    state: str
    worker_id: str
    tasks: list[TaskState] = field(default_factory=list)


@dataclass
class PartitionLag:
    topic: str
    partition: int
    remote_topic: str
    source_end_offset: int
    mirrored_offset: int  # next upstream offset to replicate, 0 if none
    evidence: str = EVIDENCE_FLUSHED
    age_s: float | None = None  # how old the mirrored figure is (0: read now; None: unknown)
    flushed_offset: int | None = None  # committed offset + 1, when there is one
    flushed_age_s: float | None = None

    @property
    def lag(self) -> int:
        return max(self.source_end_offset - self.mirrored_offset, 0)


@dataclass
class GroupCheckpoint:
    group: str
    topic: str  # downstream (renamed) topic
    partition: int
    upstream_offset: int
    downstream_offset: int
    age_s: float | None = None  # since the checkpoint was written


@dataclass
class SourceChange:
    """The source changed under the mirror of one partition (e.g. its topic was recreated)."""

    topic: str
    partition: int
    remote_topic: str
    reason: str  # as the mm2_source_changes metric's reason label
    detected_at: str  # UTC, ISO 8601
    detail: str


@dataclass
class FlowStatus:
    source: str
    target: str
    enabled: bool
    connectors: list[ConnectorState] = field(default_factory=list)
    partitions: list[PartitionLag] = field(default_factory=list)
    checkpoints: list[GroupCheckpoint] = field(default_factory=list)
    error: str | None = None
    unreachable: str | None = None  # the alias of the cluster ``error`` is about, when it could not be reached
    read_at: str | None = None  # when the clusters were read (UTC, ISO 8601)
    delivery: str = "at-least-once"  # or exactly-once (the target's exactly.once.source.support)
    source_changes: list[SourceChange] = field(default_factory=list)
    copy_path: str = "record"  # or batch: the source's record batches copied as bytes (batch.copy.enabled)

    @property
    def total_lag(self) -> int:
        return sum(p.lag for p in self.partitions)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["flow"] = f"{self.source}->{self.target}"
        data["total_lag"] = self.total_lag
        for p, raw in zip(self.partitions, data["partitions"], strict=True):
            raw["lag"] = p.lag
        return data


def age_text(seconds: float | None) -> str:
    """``12s``, ``3m``, ``2h``, ``4d``: how long ago, at a glance."""
    if seconds is None:
        return "?"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _as_of(p: PartitionLag) -> str:
    if p.evidence == EVIDENCE_TARGET:
        return "now (target end)"
    if p.evidence == EVIDENCE_FLUSHED:
        return f"flushed {age_text(p.age_s)} ago"
    return "-"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*headers), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return ["  " + line.rstrip() for line in lines]


def render_table(flows: list[FlowStatus]) -> str:
    """A readable report: per flow, connectors/tasks, per-partition lag, last checkpoint per group."""
    out: list[str] = []
    for flow in flows:
        title = f"{flow.source}->{flow.target}" + ("" if flow.enabled else " (heartbeats only)")
        read_at = f" (read {flow.read_at})" if flow.read_at else ""
        out.append(f"== {title}: total lag {flow.total_lag} records{read_at}")
        out.append(f"  delivery: {flow.delivery}")
        out.append(f"  copy path: {flow.copy_path}")
        if flow.error:
            out.append(f"  error: {flow.error}")
        rows = []
        for c in flow.connectors:
            rows.append([c.name, "-", c.state, c.worker_id])
            rows += [[c.name, str(t.id), t.state, t.worker_id] for t in c.tasks]
        out += _table(["CONNECTOR", "TASK", "STATE", "WORKER"], rows) if rows else ["  no connectors yet"]
        if flow.partitions:
            prow = [
                [
                    p.topic,
                    str(p.partition),
                    p.remote_topic,
                    str(p.source_end_offset),
                    str(p.mirrored_offset),
                    str(p.lag),
                    _as_of(p),
                ]
                for p in sorted(flow.partitions, key=lambda p: (p.topic, p.partition))
            ]
            out += _table(
                ["TOPIC", "PARTITION", "REMOTE TOPIC", "SOURCE END", "MIRRORED", "LAG", "MIRRORED AS OF"], prow
            )
        if flow.source_changes:
            srow = [[c.topic, str(c.partition), c.reason, c.detected_at, c.detail] for c in flow.source_changes]
            out += _table(["SOURCE CHANGE: TOPIC", "PARTITION", "REASON", "DETECTED", "DETAIL"], srow)
        if flow.checkpoints:
            crow = [
                [
                    c.group,
                    c.topic,
                    str(c.partition),
                    str(c.upstream_offset),
                    str(c.downstream_offset),
                    f"{age_text(c.age_s)} ago",
                ]
                for c in sorted(flow.checkpoints, key=lambda c: (c.group, c.topic, c.partition))
            ]
            out += _table(["GROUP", "TOPIC", "PARTITION", "UPSTREAM", "DOWNSTREAM", "WRITTEN"], crow)
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_json(flows: list[FlowStatus]) -> dict[str, Any]:
    return {"flows": [f.to_json() for f in flows]}
