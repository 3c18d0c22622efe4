"""Everything the drift job does for one cluster, in plain Python: its snapshot lines and declared topics in, its
plan, findings, broker load and summary out.

The Spark job runs ``cluster_drift`` once per cluster, in one grouped Python stage (the snapshot lines and the
declared topics co-grouped by cluster); ``bench/drift.py``'s single-process baseline runs the same function in a
loop. It is made of the engine's own pieces, the ones ``kto plan`` and the reference rules use:
``snapshot_rows.cluster_from_rows`` builds the ``ClusterState``, ``planning.plan_cluster`` plans it exactly as
``kto plan`` does, and ``rules.cluster_findings_and_loads`` classifies it. So the job's findings are the rules' by
construction, and the tests hold them to the rules on states built without any snapshot file.

Snapshot lines are read here, with orjson, and checked against the snapshot format (``snapshot_rows``) before
anything is planned: a line that is not JSON, not of schema 1 or 2, without a cluster, or with a field of the
wrong type is an ``InputProblem`` naming its file, as are two headers of one cluster, topic rows without their
header and topic rows taken at another time than it. ``snapshot_error`` turns the problems of a whole run into the
one message that stops it; a cluster with problems is not planned.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import chain, compress, product
from operator import gt, itemgetter
from typing import Any, Final

import orjson

from topic_operator.drift.kinds import Finding, Severity
from topic_operator.drift.planning import PLANNED_TOPIC_FIELDS, plan_cluster
from topic_operator.drift.rules import (
    BrokerLoad,
    loads_from_counts,
    skew_findings,
    topic_findings,
    topic_health_findings,
    unobserved_finding,
)
from topic_operator.kafka.cluster_release import release_report
from topic_operator.kafka.kraft_migration import KRAFT, STAGE_NAMES
from topic_operator.kafka.releases import KafkaVersion, format_version
from topic_operator.model import Backend, ClusterSpec, ClusterState, TopicSpec, TopicState
from topic_operator.plan import TopicStatus
from topic_operator.snapshot_rows import (
    HEADER_FIELDS,
    READABLE_VERSIONS,
    cluster_from_rows,
    is_header_row,
    topic_state_from_row,
)

__all__ = [
    "ClusterDrift",
    "InputProblem",
    "Problem",
    "SnapshotError",
    "cluster_drift",
    "snapshot_error",
]


class SnapshotError(ValueError):
    """Snapshot input that cannot be planned from: unparseable lines, another schema, two snapshots of one
    cluster. The message names the files."""


class Problem(StrEnum):
    """What can be wrong with a cluster's snapshot lines, in the order a run reports them."""

    UNREADABLE = "unreadable"
    """A line that is not a snapshot row: not JSON, another schema, no cluster, a field of the wrong type."""
    TWO_HEADERS = "two_headers"
    """Two header rows of one cluster (two snapshots of it), or schema 1 rows that disagree on shared fields."""
    NO_HEADER = "no_header"
    """Topic rows without their cluster's header row."""
    OTHER_TIME = "other_time"
    """Topic rows taken at another time than their header."""


@dataclass(frozen=True, slots=True)
class InputProblem:
    problem: Problem
    cluster: str | None
    file: str
    detail: str
    """For an unreadable line, the reason; otherwise empty."""


@dataclass(slots=True)
class ClusterDrift:
    """One cluster's part of the run's outputs."""

    cluster: str | None
    """None only for the lines without a readable cluster, which are all problems."""
    observed: bool
    declared: int
    topics: int = 0
    brokers: int = 0
    racks: int = 0
    taken_at: str | None = None
    read_through: str | None = None
    """The store the cluster's state was read through: ``ZooKeeper`` or ``AdminProtocol`` (its brokers); None
    when not observed."""
    migration_stage: str | None = None
    """Where its migration to KRaft stood when it was read (None: no migration seen)."""
    kafka_release: str | None = None
    """What the snapshot's znodes tell of the brokers' release against the declared one, in words (with the
    warning when they disagree); None when not observed or not read."""
    document: str | None = None
    """``plans/<cluster>.json``: the plan document, as ``kto plan -o json`` prints it; None when not observed."""
    plan: dict[str, int] = field(default_factory=dict)
    """Topics per plan status, every status present."""
    findings: list[Finding] = field(default_factory=list)
    """In ``drift.parquet``'s order (``Finding.sort_key``)."""
    loads: list[BrokerLoad] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    seconds: float = 0.0
    """Time spent in ``cluster_drift`` (reading, planning, classifying)."""

    def sample(self, size: int) -> list[Finding]:
        """The first ``size`` findings, errors first: what the report's table of this cluster shows."""
        rank = {s.value: s.rank for s in Severity}
        return sorted(self.findings, key=lambda f: (rank[f.severity], *f.sort_key()))[:size]


# -- reading one line ---------------------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return type(value) is int  # not bool, which is an int to isinstance


def _is_str(value: object) -> bool:
    return type(value) is str


def _ints(value: object) -> bool:
    return type(value) is list and all(type(item) is int for item in value)


def _strings(value: object) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def _map_of(check: Any) -> Any:
    def valid(value: object) -> bool:
        return type(value) is dict and all(check(item) for item in value.values())

    return valid


def _brokers(value: object) -> bool:
    return type(value) is list and all(
        type(b) is dict and _is_int(b.get("id")) and (b.get("rack") is None or _is_str(b.get("rack")))
        for b in value
    )


def _partition_key(key: str) -> bool:
    return key.isascii() and key.isdigit()


def _partitions(value: object) -> bool:
    return type(value) is dict and all(_partition_key(p) and _ints(r) for p, r in value.items())


def _partition_states(value: object) -> bool:
    return type(value) is dict and all(
        _partition_key(p) and type(s) is dict and _is_int(s.get("leader")) and _ints(s.get("isr"))
        for p, s in value.items()
    )


_FIELD_TYPES: Final[dict[str, Any]] = {
    "cluster_id": _is_str,
    "controller": _is_int,
    "taken_at": _is_str,
    "brokers": _brokers,
    "marked_for_deletion": _strings,
    "orphan_configs": _map_of(_is_int),
    "unreadable_topics": _map_of(_is_str),
    "unreadable_znodes": _map_of(_is_str),
    "kraft_migration": _is_str,
    "kraft_migration_stage": _is_str,
    "kafka_release": lambda v: type(v) is dict,
    "backend": lambda v: v in ("zookeeper", "kraft"),
    "broker_release": lambda v: _is_str(v) and v.count(".") == 1 and all(p.isdigit() for p in v.split(".")),
    "metadata_version": _is_str,
    "topic": _is_str,
    "partitions": _partitions,
    "topic_id": _is_str,
    "config": _map_of(_is_str),
    "topic_znode_version": _is_int,
    "config_znode_version": _is_int,
    "topic_marked_for_deletion": lambda v: type(v) is bool,
    "reassignment_in_progress": lambda v: type(v) is bool,
    "partition_states": _partition_states,
}
"""Each field of the snapshot format (``snapshot_rows``) and the check of a non-null value of it. A field may be
null or absent (a header row has no topic fields, a topic row of schema 2 no header fields); other keys are
ignored, as readers of version 2 ignore fields added later."""


# -- one cluster ----------------------------------------------------------------------------------------------------


def _shared(row: Mapping[str, Any]) -> tuple[bytes, ...]:
    """The fields all rows of a cluster share, comparable: what two headers must agree on."""
    return tuple(orjson.dumps(row.get(name), option=orjson.OPT_SORT_KEYS) for name in HEADER_FIELDS)


@dataclass(frozen=True, slots=True)
class _Brokers:
    """What a topic's health and load are measured against: the header's registered brokers and racks."""

    live: frozenset[int]
    rack_of: dict[int, str]
    racks: int

    @classmethod
    def of(cls, state: ClusterState) -> _Brokers:
        rack_of = {b.id: b.rack for b in state.brokers.values() if b.rack is not None}
        return cls(frozenset(state.brokers), rack_of, len(set(rack_of.values())))


class _Observer:
    """Reads one cluster's topic rows into ``TopicState``s and, in the same pass over each topic's partitions,
    measures what ``rules.health_findings`` and ``rules.broker_loads`` measure on the ``ClusterState``: the
    under-replicated, offline and rack-narrow partitions, and each broker's replicas and leaders. One pass
    instead of four (build, health, racks, load), and no ``PartitionState`` objects, which the planner does not
    read; the tests hold the results to the rules on states built without any snapshot."""

    def __init__(self, cluster: str, brokers: _Brokers) -> None:
        self.cluster = cluster
        self.brokers = brokers
        self.topics: dict[str, TopicState] = {}
        self.health: list[Finding] = []
        self._replicas: Counter[int] = Counter()
        self._leaders: Counter[int] = Counter()
        self._uncounted: list[tuple[Sequence[int], Sequence[int]]] = []
        """Added topics' replica and leader ids not counted yet: counted in batches, cheaper than a
        ``Counter.update`` per topic, to the same counters."""
        self.narrow_placements: dict[tuple[int, ...], bool] = {}
        """Whether a placement (a replica tuple) spans fewer racks than it should, by placement: a cluster has
        far fewer distinct placements than partitions."""
        self.leading = frozenset(b for b in brokers.live if b >= 0)
        """The brokers a partition's leader must be one of for it not to be offline: live, and not below 0."""
        self.layouts: dict[bytes, _Layout] = {}
        """What a topic's partitions and partition states come to, by their JSON (``_layout``)."""
        self.layout_partitions = 0
        """The partitions of the layouts remembered, which are at most ``_LAYOUT_PARTITIONS``."""
        self.partition_keys: dict[tuple[str, ...], _Keys] = {}
        """A topic's partition keys -> them read as ints (``_keys``): topics share a handful ("0", "1", "10",
        "11", "2"..., as ``kto snapshot`` sorts them)."""

    @property
    def replicas(self) -> Counter[int]:
        """Replicas per broker id, over the topics added."""
        self._count()
        return self._replicas

    @property
    def leaders(self) -> Counter[int]:
        """Leaders per broker id, over the topics added."""
        self._count()
        return self._leaders

    def _count(self) -> None:
        uncounted = self._uncounted
        self._replicas.update(chain.from_iterable(replica_ids for replica_ids, _ in uncounted))
        self._leaders.update(chain.from_iterable(leaders for _, leaders in uncounted))
        uncounted.clear()

    def add(self, row: Mapping[str, Any], layout_text: bytes | None = None) -> str | None:
        """Add one topic row; None, or why the row is not of the snapshot format (nothing is added then).
        ``layout_text``: the JSON of the row's partitions and states when the reader already has it
        (``_LineReader``), as ``orjson.dumps((partitions, partition_states))`` writes it."""
        try:
            return self._add(row, layout_text)
        except (TypeError, ValueError, AttributeError, KeyError):
            return "not a JSON snapshot row of the expected types (partitions, partition_states)"

    def _add(self, row: Mapping[str, Any], layout_text: bytes | None = None) -> str | None:
        # The hot loop of the job: a million topics at 1M, a dozen partitions each. A row as ``kto snapshot``
        # writes it is added by ``_add_usual`` from what the JSON of its partitions and states comes to, most
        # often remembered from another topic; any other row, malformed or not, by ``_add_any``, one partition
        # at a time, which decides what it is worth. ``_add_usual`` adds a row only when ``_add_any`` would add
        # the same, and otherwise adds nothing (it only fills its caches).
        try:
            added = self._add_usual(row, layout_text)
        except (TypeError, ValueError, AttributeError, KeyError):
            added = False
        return None if added else self._add_any(row)

    def _add_usual(self, row: Mapping[str, Any], layout_text: bytes | None = None) -> bool:
        """Add a row whose fields are all of their type and whose partitions and states make a ``_layout``;
        False, having added nothing, for any other row."""
        if tuple(map(type, map(row.get, _TOPIC_FIELDS))) not in _USUAL_FIELD_TYPES:
            return False
        config = row.get("config")
        if config and not {*map(type, config.values())} <= _STR_ONLY:
            return False
        raw_partitions, raw_states = row["partitions"], row.get("partition_states")
        text = orjson.dumps((raw_partitions, raw_states)) if layout_text is None else layout_text
        layout = self.layouts.get(text)
        if layout is None:
            layout = self._layout(raw_partitions, raw_states, text)
            if layout is None:
                return False
        partitions, replica_ids, leaders, lagging, offline, narrow = layout
        name = row["topic"]
        self.topics[name] = topic_state_from_row(row, partitions.copy())  # the plan reads no partition states
        self._uncounted.append((replica_ids, leaders))
        if len(self._uncounted) >= _COUNT_BATCH:
            self._count()
        if lagging or offline or narrow:
            racks = self.brokers.racks
            self.health += topic_health_findings(self.cluster, name, [*lagging], [*offline], [*narrow], racks)
        return True

    def _layout(self, raw_partitions: Any, raw_states: Any, text: bytes) -> _Layout | None:
        """What a topic's partitions and states (``text``, their JSON) come to, remembered; None unless they are
        ``kto snapshot``'s: lists of ints by partition, states of exactly ``isr`` (a list of ints) and
        ``leader`` (an int) in that order, for exactly the partitions in their order.

        Types are checked on ``text``: every replica, ISR and leader id is an int when ``text`` is made of
        the expected brackets, braces, key quotes and key names once number characters are deleted (a float,
        bool, string or null leaves letters, a dot or quotes, a nested or missing list brackets). That holds of
        rows as orjson parses them, the only ones ``_observe`` reads: their JSON integers are ``int``, never
        ``bool``, and two of their values have the same JSON only when they are equal, types and order alike,
        so the layout of a row whose JSON was seen before is the one remembered."""
        names = tuple(raw_partitions)
        keyed = self.partition_keys.get(names) or self._keys(names)
        keys, template, bare, stated = keyed
        if raw_states is not None and tuple(raw_states) != names:
            return None
        if text.translate(None, _NUMBER_BYTES) != (bare if raw_states is None else stated):
            return None
        values = list(raw_partitions.values())
        placements = list(map(tuple, values))
        partitions = template.copy()
        partitions.update(zip(keys, placements, strict=True))
        narrow_placements = self.narrow_placements
        known = list(map(narrow_placements.get, placements))
        if None in known:  # most partitions repeat a placement seen before: one lookup
            known = [self._narrow(p) if n is None else n for p, n in zip(placements, known, strict=True)]
        narrow = tuple(compress(keys, known))
        lagging: tuple[int, ...] = ()
        offline: tuple[int, ...] = ()
        if raw_states is None:
            leaders = tuple(r[0] for r in placements if r)
        else:
            states = list(raw_states.values())
            isrs = list(map(_ISR, states))  # a key spelled otherwise ("is-r", equal once numbers go) raises
            leaders = tuple(map(_LEADER, states))
            if isrs != values:  # an ISR as long as its replicas, in their order, is the usual one
                lagging = tuple(compress(keys, map(gt, map(len, placements), map(len, isrs))))
            leading = self.leading
            if not leading.issuperset(leaders):  # a leader below 0 or not live
                offline = tuple(p for p, leader in zip(keys, leaders, strict=True) if leader not in leading)
                leaders = tuple(leader for leader in leaders if leader >= 0)
        count = len(keys)
        layout = partitions, tuple(chain.from_iterable(values)), leaders, lagging, offline, narrow
        if self.layout_partitions + count <= _LAYOUT_PARTITIONS:
            # A copy: the bytes orjson returns keep the whole buffer it wrote them in, kilobytes.
            self.layouts[memoryview(text).tobytes()] = layout
            self.layout_partitions += count
        return layout

    def _keys(self, names: tuple[str, ...]) -> _Keys:
        """A topic's partition keys read as ints, remembered with what ``_layout`` expects of them; a key int()
        does not read raises, and two keys of one int ("1" and "01") raise a KeyError, as ``_add_any``
        reads such a row otherwise (it lists a narrow partition as often as its keys)."""
        keys = list(map(int, names))
        template: dict[int, tuple[int, ...]] = dict.fromkeys(keys, ())
        if len(template) != len(keys):
            raise KeyError(names)
        shape = _PARTITIONS_SHAPE * len(keys)
        keyed = keys, template, b"[{%s}null]" % shape, b"[{%s}{%s}]" % (shape, _STATE_SHAPE * len(keys))
        if len(self.partition_keys) < _PARTITION_KEYS:
            self.partition_keys[names] = keyed
        return keyed

    def _narrow(self, placed: tuple[int, ...]) -> bool:
        """Whether ``placed`` spans fewer racks than it should, remembered."""
        spanned = set(map(self.brokers.rack_of.get, placed))
        spanned.discard(None)
        narrow = self.narrow_placements[placed] = len(spanned) < min(len(placed), self.brokers.racks)
        return narrow

    def _add_any(self, row: Mapping[str, Any]) -> str | None:
        # Any row, one partition at a time. Types are checked on whole lists at once (``set(map(type, ...))``
        # runs in C) rather than per value, and keys with ``int`` as ``snapshot_rows`` reads them; anything else
        # malformed raises, and ``add`` names the row's fields.
        for name in _TOPIC_FIELDS:
            value = row.get(name)
            if value is not None and not _FIELD_TYPES[name](value):
                return f"not a JSON snapshot row of the expected types ({name})"
        live, rack_of, racks = self.brokers.live, self.brokers.rack_of, self.brokers.racks
        narrow_placements = self.narrow_placements
        partitions: dict[int, tuple[int, ...]] = {}
        replica_ids: list[int] = []
        narrow: list[int] = []
        list_type = list
        for key, replicas in row["partitions"].items():
            if type(replicas) is not list_type:
                return "not a JSON snapshot row of the expected types (partitions)"
            partition = int(key)
            placed = partitions[partition] = tuple(replicas)
            replica_ids += replicas
            is_narrow = narrow_placements.get(placed)
            if is_narrow is None:  # most partitions repeat a placement seen before: one lookup
                spanned = set(map(rack_of.get, placed))
                spanned.discard(None)
                is_narrow = narrow_placements[placed] = len(spanned) < min(len(placed), racks)
            if is_narrow:
                narrow.append(partition)
        if not set(map(type, replica_ids)) <= _INT_ONLY:
            return "not a JSON snapshot row of the expected types (partitions)"
        raw_states = row.get("partition_states")
        lagging: list[int] = []
        offline: list[int] = []
        if raw_states is None:
            leaders = [r[0] for r in partitions.values() if r]
        else:
            states: dict[int, tuple[int, list[int]]] = {}
            isr_ids: list[int] = []
            for key, state in raw_states.items():
                isr = state["isr"]
                if type(isr) is not list_type:
                    return "not a JSON snapshot row of the expected types (partition_states)"
                states[int(key)] = (state["leader"], isr)
                isr_ids += isr
            leaders = [leader for leader, _ in states.values()]
            if not set(map(type, leaders)) | set(map(type, isr_ids)) <= _INT_ONLY:
                return "not a JSON snapshot row of the expected types (partition_states)"
            leaders = [leader for leader in leaders if leader >= 0]
            for partition, replicas_of in partitions.items():
                found = states.get(partition)
                if found is None:
                    offline.append(partition)
                    continue
                leader, isr = found
                if len(isr) < len(replicas_of):
                    lagging.append(partition)
                if leader < 0 or leader not in live:
                    offline.append(partition)
        name = row["topic"]
        self.topics[name] = topic_state_from_row(row, partitions)  # the plan does not read partition states
        self._uncounted.append((replica_ids, leaders))
        if lagging or offline or narrow:
            self.health += topic_health_findings(self.cluster, name, lagging, offline, narrow, racks)
        return None


_INT_ONLY: Final = frozenset({int})
"""The one type every replica, leader and ISR id may have (``bool`` is a type of its own to ``type``)."""

_TOPIC_FIELDS: Final = (
    "taken_at",
    *(name for name in PLANNED_TOPIC_FIELDS if name not in ("topic", "partitions")),
)
"""The scalar and map fields of a topic row, checked by type: its time and every field the planner reads but the
topic's name (checked with the row) and its partitions (checked, with their states, as they are read)."""

_FIELD_TYPE: Final[dict[str, type]] = {
    "taken_at": str,
    "topic_id": str,
    "config": dict,  # and its values str, checked apart
    "topic_znode_version": int,
    "config_znode_version": int,
    "topic_marked_for_deletion": bool,
    "reassignment_in_progress": bool,
}
"""The type ``_FIELD_TYPES`` checks each of ``_TOPIC_FIELDS`` to be when it is not null (a field added to
``_TOPIC_FIELDS`` needs its type here)."""

_USUAL_FIELD_TYPES: Final = frozenset(product(*((type(None), _FIELD_TYPE[name]) for name in _TOPIC_FIELDS)))
"""Every combination of types ``_TOPIC_FIELDS`` may have (null or absent, or their type): one set lookup checks
a row's fields, but for the values of its config."""

_Layout = tuple[
    dict[int, tuple[int, ...]],
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[int, ...],
]
"""A topic's partitions, replica ids, leaders (not below 0) and its under-replicated, offline and rack-narrow
partitions, by partition order."""

_Keys = tuple[list[int], dict[int, tuple[int, ...]], bytes, bytes]
"""A topic's partition keys as ints, a dict of them to fill, and its layout's expected shape without and with
partition states (``_Observer._keys``)."""

_PARTITION_KEYS: Final = 1024
"""The partition key lists an observer remembers at most."""

_LAYOUT_PARTITIONS: Final = 1 << 14
"""The partitions of the layouts an observer remembers at most: some 3 MB (a layout of a dozen partitions takes
some 2.5 kB), where the clusters of the 1M benchmark have 6,700 each."""

_NUMBER_BYTES: Final = b"0123456789-,:"
"""What JSON numbers are written with, and the separators: deleted from a layout's JSON, its shape is left."""

_PARTITIONS_SHAPE: Final = b'""[]'
_STATE_SHAPE: Final = b'""{"isr"[]"leader"}'
"""One partition's replica list and one state, as ``kto snapshot`` writes them, once ``_NUMBER_BYTES`` are gone."""

_COUNT_BATCH: Final = 1024
"""Topics whose replica and leader ids are counted at once."""

_STR_ONLY: Final = frozenset({str})
_ISR: Final = itemgetter("isr")
_LEADER: Final = itemgetter("leader")

_HEADER_CHECKS: Final = tuple(name for name in _FIELD_TYPES if name not in ("partitions", "partition_states"))
"""What is checked by type on every header row (a schema 1 row is a header and a topic row)."""


def _read_row(text: str | bytes) -> dict[str, Any] | str:
    """A parsed snapshot row with its schema, cluster and topic checked (the rest is checked by its reader), or
    why it is not one. orjson reads the line's bytes as well as its text, and refuses bytes that are not UTF-8 as
    it refuses the lone surrogates they decode to, with the same error."""
    try:
        row = orjson.loads(text)
    except orjson.JSONDecodeError:
        return "not a JSON snapshot row of the expected types"
    return _checked_row(row)


def _checked_row(row: object) -> dict[str, Any] | str:
    """``_read_row``'s checks on a parsed line."""
    if type(row) is not dict:
        return "not a JSON snapshot row of the expected types"
    schema = row.get("schema")
    if not _is_int(schema) or schema not in READABLE_VERSIONS:
        return f"schema {schema!r}, this version reads schemas 1 and 2"
    cluster, topic = row.get("cluster"), row.get("topic")
    if cluster is None:
        return "no cluster"
    if not _is_str(cluster):
        return "not a JSON snapshot row of the expected types (cluster)"
    if topic is not None and not _is_str(topic):
        return "not a JSON snapshot row of the expected types (topic)"
    if topic is not None and type(row.get("partitions")) is not dict:
        return (
            f"topic {topic!r} without partitions"
            if row.get("partitions") is None
            else ("not a JSON snapshot row of the expected types (partitions)")
        )
    if schema == 1 or topic is None:  # a header row: its fields are checked here, once per cluster
        for name in _HEADER_CHECKS:
            value = row.get(name)
            if value is not None and not _FIELD_TYPES[name](value):
                return f"not a JSON snapshot row of the expected types ({name})"
    return row


_STATES_AT: Final = b',"partition_states":{'
_PARTITIONS_AT: Final = b'},"partitions":{'
_BEFORE_STATES: Final = re.compile(
    rb'\{"cluster":"[^"\\]*","config":(?:null|\{(?:"[^"\\]*":"[^"\\]*"(?:,"[^"\\]*":"[^"\\]*")*)?\}),'
    rb'"config_znode_version":(?:null|-?[0-9]+)'
)
"""What precedes a topic row's partition states as ``kto snapshot`` writes it (keys sorted): a cluster and a config
whose strings hold no quote and no escape, and a version. Matched whole, it leaves the text after it at the top
level of the row's object, outside any string."""

_SEGMENTS: Final = 4096
"""The partition segments a line reader remembers at most (a few kB each)."""


class _LineReader:
    """Reads one cluster's snapshot lines as ``_read_row`` does, parsing most of each line only once per
    cluster: the partition states and partitions of a topic row (three quarters of its bytes) repeat from topic
    to topic, as the observer's layouts do.

    A line given as bytes that starts with ``_BEFORE_STATES`` followed by ``_STATES_AT`` is cut in two: its
    segment ``"partition_states":{...},"partitions":{...}`` (up to the first ``}`` after ``_PARTITIONS_AT``,
    which cannot be inside the partitions' lists) and the rest. The segment is parsed (``{`` and ``}`` around
    it) once and remembered with the JSON of its two values, the observer's layout key; the rest is parsed for
    each line. The row is the rest's object with the segment's two members added, which is what parsing the
    whole line gives when

    - the segment parses to an object of exactly those two members: its braces then balance, so the
      ``_PARTITIONS_AT`` found is the one that ends the states, not one nested in them;
    - what precedes it matches ``_BEFORE_STATES``, so that the segment's members are members of the row's
      object, not of a value inside it;
    - the rest parses to an object that has neither member again (a key given twice is read by orjson from its
      last occurrence, which the cut would change);
    - and it is a version 2 topic row (``_checked_row`` and the observer read a header otherwise).

    Any other line, or a part that does not parse, is read whole by ``_read_row``: the answer, a row or why it
    is not one, is always the one ``_read_row`` gives."""

    def __init__(self) -> None:
        self._segments: dict[bytes, tuple[Any, Any, bytes] | None] = {}

    def read(self, text: str | bytes) -> tuple[dict[str, Any] | str, bytes | None]:
        """The line's row (or why it is not one) and, for a row read in two, its layout's JSON."""
        if type(text) is bytes:
            start = text.find(_STATES_AT)
            if start > 0 and _BEFORE_STATES.fullmatch(text, 0, start) is not None:
                middle = text.find(_PARTITIONS_AT, start)
                end = text.find(b"}", middle + len(_PARTITIONS_AT)) if middle > 0 else -1
                if end > 0:
                    read = self._read_cut(text, start, end)
                    if read is not None:
                        return read
        return _read_row(text), None

    def _read_cut(self, text: bytes, start: int, end: int) -> tuple[dict[str, Any] | str, bytes] | None:
        segment = text[start + 1 : end + 1]
        segments = self._segments
        known = segments[segment] if segment in segments else self._segment(segment)
        if known is None:
            return None
        try:
            row = orjson.loads(text[:start] + text[end + 1 :])
        except orjson.JSONDecodeError:
            return None
        if (
            type(row) is not dict
            or "partitions" in row
            or "partition_states" in row
            or type(row.get("schema")) is not int
            or row.get("schema") != 2
            or type(row.get("topic")) is not str
        ):
            return None
        partitions, states, layout_text = known
        row["partition_states"], row["partitions"] = states, partitions
        return _checked_row(row), layout_text

    def _segment(self, segment: bytes) -> tuple[Any, Any, bytes] | None:
        """The segment's partitions and states and the JSON of both (None when it is not an object of exactly
        these two members), remembered."""
        try:
            parsed = orjson.loads(b"{" + segment + b"}")
        except orjson.JSONDecodeError:
            parsed = None
        known: tuple[Any, Any, bytes] | None = None
        if (
            type(parsed) is dict
            and len(parsed) == 2
            and "partitions" in parsed
            and "partition_states" in parsed
        ):
            partitions, states = parsed["partitions"], parsed["partition_states"]
            known = partitions, states, orjson.dumps((partitions, states))
        if len(self._segments) < _SEGMENTS:
            self._segments[segment] = known
        return known


@dataclass(slots=True)
class _Observed:
    state: ClusterState
    taken_at: str | None
    health: list[Finding]
    loads: list[BrokerLoad]


def _observe(
    cluster: str, texts: Sequence[str | bytes], files: Sequence[str]
) -> tuple[_Observed | None, list[InputProblem]]:
    """The cluster's state, health and broker load from its snapshot lines, or the problems that stop the run
    (None, [] for a cluster without lines). Lines may come in any order (Spark's shuffle does not keep the
    files' order): topic rows before the header wait for it."""
    problems: list[InputProblem] = []
    header: dict[str, Any] | None = None
    header_file = ""
    shared: tuple[bytes, ...] | None = None
    observer: _Observer | None = None
    waiting: list[tuple[dict[str, Any], str, bytes | None]] = []
    topic_files: dict[str, list[str | None]] = {}  # file -> taken_at of its topic rows, for the time check
    read = _LineReader().read
    for text, file in zip(texts, files, strict=True):
        if not text.strip():
            continue  # a blank line, as Spark's JSON source skipped them
        row, layout_text = read(text)
        if isinstance(row, str):
            problems.append(InputProblem(Problem.UNREADABLE, cluster, file, row))
            continue
        if row["cluster"] != cluster:  # a key given twice, read differently by the grouping and here
            mismatch = "not a JSON snapshot row of the expected types (cluster)"
            problems.append(InputProblem(Problem.UNREADABLE, cluster, file, mismatch))
            continue
        if is_header_row(row):
            if header is None:
                header, header_file, shared = row, file, _shared(row)
                state = cluster_from_rows(header, ())
                observer = _Observer(cluster, _Brokers.of(state))
            elif (row["schema"] == 2 and row.get("topic") is None) or _shared(row) != shared:
                problems += [
                    InputProblem(Problem.TWO_HEADERS, cluster, header_file, ""),
                    InputProblem(Problem.TWO_HEADERS, cluster, file, ""),
                ]
        if row.get("topic") is None:
            continue
        topic_files.setdefault(file, []).append(row.get("taken_at"))
        if observer is None:
            waiting.append((row, file, layout_text))
        else:
            reason = observer.add(row, layout_text)
            if reason is not None:
                problems.append(InputProblem(Problem.UNREADABLE, cluster, file, reason))
    if observer is not None:
        for row, file, layout_text in waiting:
            reason = observer.add(row, layout_text)
            if reason is not None:
                problems.append(InputProblem(Problem.UNREADABLE, cluster, file, reason))
    if problems:
        return None, problems
    if header is None or observer is None:
        return None, [InputProblem(Problem.NO_HEADER, cluster, file, "") for file in sorted(topic_files)]
    taken_at = header.get("taken_at")
    stray = sorted(f for f, times in topic_files.items() if any(t != taken_at for t in times))
    if stray:
        return None, [InputProblem(Problem.OTHER_TIME, cluster, file, "") for file in stray]
    state = replace(cluster_from_rows(header, ()), topics=observer.topics)
    loads = loads_from_counts(cluster, state.brokers, observer.replicas, observer.leaders)
    return _Observed(state, taken_at, observer.health, loads), []


def cluster_drift(
    cluster: str | None,
    declared: Sequence[TopicSpec],
    texts: Sequence[str | bytes],
    files: Sequence[str],
    settings: ClusterSpec | None,
    *,
    seed: int,
    unreachable: str | None = None,
) -> ClusterDrift:
    """One cluster's plan, findings, broker load and summary from its snapshot lines (``texts``, each read from
    the same place in ``files``) and its declared topics.

    Lines come as text (Spark's) or as the bytes of a file (the process engine's, which saves decoding a million
    lines only for orjson to encode them again). A blank line is skipped, and ``bytes.strip`` strips ASCII
    whitespace only where ``str.strip`` strips more (U+001C...): a caller passes as bytes only lines that cannot
    be blank as text (those starting with ``{``), and the others decoded.

    A cluster without lines is not observed: one ``cluster_unobserved`` finding (``unreachable`` is the reason
    a live read failed). Lines with problems give only the problems."""
    started = time.perf_counter()
    if cluster is None:  # lines without a cluster: every one is a problem
        problems = [
            InputProblem(Problem.UNREADABLE, None, file, reason)
            for text, file in zip(texts, files, strict=True)
            if text.strip()
            for reason in [_read_row(text)]
            if isinstance(reason, str)
        ]
        return ClusterDrift(cluster, False, len(declared), problems=problems)
    observed, problems = _observe(cluster, texts, files)
    if problems:
        return ClusterDrift(cluster, False, len(declared), problems=problems)
    if observed is None:
        finding = unobserved_finding(cluster, len(declared), unreachable)
        return ClusterDrift(cluster, False, len(declared), findings=[finding])
    state = observed.state
    result = plan_cluster(declared, state, settings or ClusterSpec(cluster, ""), seed=seed)
    findings = topic_findings(cluster, declared, state, {f.topic: f for f in result.facts})
    findings += observed.health
    findings += skew_findings(cluster, observed.loads)
    statuses = Counter(topic.status for topic in result.plan.topics)
    return ClusterDrift(
        cluster,
        True,
        len(declared),
        topics=len(state.topics),
        brokers=len(state.brokers),
        racks=len({b.rack for b in state.brokers.values() if b.rack is not None}),
        taken_at=observed.taken_at,
        read_through=read_through(state),
        migration_stage=migration_stage(state),
        kafka_release=release_line_text((settings or ClusterSpec(cluster, "")).kafka_version, state),
        document=result.document,
        plan={status.value: statuses[status] for status in TopicStatus},
        findings=sorted(findings, key=Finding.sort_key),
        loads=observed.loads,
        seconds=time.perf_counter() - started,
    )


def read_through(state: ClusterState) -> str:
    """The store a cluster's state came from, by the name ``writes`` gives it: ``ZooKeeper`` or ``AdminProtocol``."""
    return "AdminProtocol" if state.backend is Backend.KRAFT else "ZooKeeper"


def migration_stage(state: ClusterState) -> str | None:
    """The migration's stage when the state was read, as the plan's ``writes`` names it (or, without a writer
    chosen, as ZooKeeper shows it); None when no migration is under way: what the report's release line says."""
    choice = state.writer
    if choice is not None:
        return None if choice.stage in (STAGE_NAMES[None], KRAFT) else choice.stage
    if state.kraft_migration is None:
        return None
    return state.kraft_migration_stage or state.kraft_migration


def release_line_text(declared: KafkaVersion, state: ClusterState) -> str | None:
    """The report's line on the cluster's Kafka release: declared, what the snapshot shows, and the warning; for
    a cluster read through its brokers, that it was, and the release and ``metadata.version`` they answered;
    for a cluster migrating to KRaft, its stage and the path writes take at it."""
    stage = _migration_text(state)
    if state.backend is Backend.KRAFT:
        return _brokers_release_text(declared, state) + stage
    if state.release_evidence is None:
        return stage.removeprefix("; ") or None
    report = release_report(declared, state.release_evidence)
    text = f"kafkaVersion {report['declared']}; ZooKeeper shows Kafka {report['seen']}{stage}"
    return f"{text}. Warning: {report['warning']}" if report["warning"] else text


def _migration_text(state: ClusterState) -> str:
    """``; migrating to KRaft: stage S, writes through W`` while a migration is under way, else nothing."""
    stage = migration_stage(state)
    if stage is None:
        return ""
    if state.writer is not None:
        return f"; migrating to KRaft: stage {stage}, writes through {state.writer.writer.value}"
    return f"; migrating to KRaft: {stage}"


def _brokers_release_text(declared: KafkaVersion, state: ClusterState) -> str:
    answered = state.broker_release
    text = f"kafkaVersion {format_version(declared)}; read through the brokers (Kafka's Admin protocol)"
    if answered is not None:
        text += f", which answer as Kafka {format_version(answered)}"
    if state.metadata_version is not None:
        text += f", metadata.version {state.metadata_version}"
    if answered is not None and answered != declared:
        text += f". Warning: the brokers answer as Kafka {format_version(answered)}, not {format_version(declared)}"
    return text


# -- the run's message --------------------------------------------------------------------------------------------


def _files(problems: Sequence[InputProblem]) -> str:
    files = sorted({p.file for p in problems})
    return ", ".join(files[:5]) + (f" and {len(files) - 5} more files" if len(files) > 5 else "")


def _clusters(problems: Sequence[InputProblem]) -> str:
    return ", ".join(sorted({p.cluster or "" for p in problems}))


def snapshot_error(problems: Sequence[InputProblem]) -> str | None:
    """The one message that stops a run whose snapshot lines have ``problems`` (None without any). Unreadable
    lines come first, then clusters with two snapshots, then incomplete ones; every message names the files."""
    of = {kind: [p for p in problems if p.problem is kind] for kind in Problem}
    unreadable = of[Problem.UNREADABLE]
    if unreadable:
        first = min(unreadable, key=lambda p: (p.file, p.detail))
        return (
            f"{len(unreadable)} snapshot lines cannot be read ({first.file}: {first.detail}): each line must be "
            f"a kto snapshot row, schema 1 or 2 (in {_files(unreadable)})"
        )
    if of[Problem.TWO_HEADERS]:
        found = of[Problem.TWO_HEADERS]
        return (
            f"the rows of clusters {_clusters(found)} disagree on the cluster's shared fields (brokers, taken_at, "
            f"deletion markers...) or have two header rows: keep one snapshot per cluster, or the plan would mix "
            f"two moments (in {_files(found)})"
        )
    if of[Problem.NO_HEADER]:
        found = of[Problem.NO_HEADER]
        return (
            f"the snapshot rows of clusters {_clusters(found)} have no header row (the row whose topic is null, "
            f"which kto snapshot writes first): their snapshots are incomplete (in {_files(found)})"
        )
    if of[Problem.OTHER_TIME]:
        found = of[Problem.OTHER_TIME]
        return (
            f"clusters {_clusters(found)} have topic rows taken at another time than their header: keep one "
            f"snapshot per cluster, or the plan would mix two moments (in {_files(found)})"
        )
    return None
