"""The drift job reads a topic row as ``kto snapshot`` writes it on a fast path (``_Observer._add_usual``, which
checks its partitions' types on their JSON and remembers what that JSON comes to) and any other row one
partition at a time (``_Observer._add_any``). On any sequence of rows as orjson parses them, well-formed,
malformed or in between, the two give the same messages, and the same topics, health findings and broker
counts, in the same order."""

from __future__ import annotations

import copy
import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from topic_operator.drift.cluster_drift import _TOPIC_FIELDS, _Brokers, _Observer

IDS = st.integers(-2, 9)
PLAIN_KEYS = st.sampled_from(["0", "1", "2", "3", "10"])
ODD_KEYS = st.sampled_from(["01", "-1", " 1", "+1", "1_0", "\u0663", "x", "1:", ""])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | IDS | st.floats(-2, 9) | st.text(max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)
NEAR_MISSES = st.sampled_from([True, False, 1.0, -1.5, 1e16, "1", "", None, [], [1], [[1]], {}, {"isr": []}])
"""What an id, a list or a state is most easily mistaken for."""
TOPIC_FIELDS = _TOPIC_FIELDS
"""The fields a topic row is type-checked on, as the observer checks them."""
CORRUPTIONS = (
    "field",
    "absent field",
    "config value",
    "partitions",
    "replica list",
    "replica",
    "states",
    "state",
    "isr",
    "isr id",
    "leader",
    "state key",
    "state order",
    "topic",
)


@st.composite
def brokers(draw: st.DrawFn) -> _Brokers:
    placed = draw(
        st.lists(st.tuples(IDS, st.sampled_from([None, "a", "b", "c"])), max_size=6, unique_by=lambda b: b[0])
    )
    rack_of = {broker: rack for broker, rack in placed if rack is not None}
    return _Brokers(frozenset(broker for broker, _ in placed), rack_of, len(set(rack_of.values())))


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, Any]:
    """A topic's partitions and states: mostly as ``kto snapshot`` writes them, sometimes not."""
    keys = draw(
        st.lists(PLAIN_KEYS | ODD_KEYS if draw(st.booleans()) else PLAIN_KEYS, unique=True, max_size=5)
    )
    partitions = {key: draw(st.lists(IDS, max_size=4)) for key in keys}
    kind = draw(st.sampled_from(["states", "states", "states", "null", "absent"]))
    if kind == "absent":
        return {"partitions": partitions}
    if kind == "null":
        return {"partitions": partitions, "partition_states": None}
    states = {}
    for key, replicas in partitions.items():
        isr = draw(
            st.sampled_from([replicas, replicas[:-1], replicas[::-1], [*replicas, 5]])
            | st.lists(IDS, max_size=4)
        )
        leader = draw(st.sampled_from([*replicas[:1], -1]) | IDS)
        states[key] = {"isr": isr, "leader": leader}
    if states and draw(st.integers(0, 4)) == 0:
        states.pop(draw(st.sampled_from(sorted(states))))
    if draw(st.integers(0, 4)) == 0:
        states[draw(PLAIN_KEYS)] = {"isr": [], "leader": draw(IDS)}
    if draw(st.integers(0, 4)) == 0:
        states = dict(reversed(states.items()))
    return {"partitions": partitions, "partition_states": states}


def _corrupt(draw: st.DrawFn, row: dict[str, Any]) -> None:
    """Replace one part of ``row`` by any JSON value, or drop or reorder it (nothing when it has no such part)."""
    kind = draw(st.sampled_from(CORRUPTIONS))
    value = draw(NEAR_MISSES | JSON_VALUES)
    partitions = row["partitions"]
    states = row.get("partition_states")
    pick = st.sampled_from
    if kind == "field":
        row[draw(pick(TOPIC_FIELDS))] = value
    elif kind == "absent field":
        row.pop(draw(pick(TOPIC_FIELDS)), None)
    elif kind == "config value":
        row["config"][draw(st.text(max_size=2))] = value
    elif kind == "partitions":
        row["partitions"] = value
    elif kind == "states":
        row["partition_states"] = value
    elif kind == "topic":
        row["topic"] = value
    elif kind in ("replica list", "replica") and partitions:
        key = draw(pick(sorted(partitions)))
        if kind == "replica list":
            partitions[key] = value
        elif partitions[key]:
            partitions[key][draw(st.integers(0, len(partitions[key]) - 1))] = value
    elif isinstance(states, dict) and states:
        key = draw(pick(sorted(states)))
        state = states[key]
        if kind == "state":
            states[key] = value
        elif kind == "isr":
            state["isr"] = value
        elif kind == "isr id" and state["isr"]:
            state["isr"][draw(st.integers(0, len(state["isr"]) - 1))] = value
        elif kind == "leader":
            state["leader"] = value
        elif kind == "state key":
            if draw(st.booleans()):
                state.pop(draw(pick(["isr", "leader"])))
            else:
                state[draw(st.sampled_from(["is-r", "isr1", "lead:er", "x"]) | st.text(max_size=3))] = value
        elif kind == "state order":
            states[key] = dict(reversed(state.items()))


@st.composite
def rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Topic rows sharing a few layouts (so the fast path meets JSON it has seen), some of them corrupted, as
    orjson parses them."""
    pool = draw(st.lists(layouts(), min_size=1, max_size=3))
    drawn = []
    for _ in range(draw(st.integers(1, 8))):
        row: dict[str, Any] = {
            "topic": draw(st.sampled_from(["t0", "t1", "t2"])),
            "taken_at": "2026-01-05T10:00:00+00:00",
            "topic_id": draw(st.none() | st.just("AAAAAAAAAAAAAAAAAAAAAQ")),
            "config": draw(
                st.dictionaries(st.sampled_from(["retention.ms", "cleanup.policy"]), st.just("1"))
            ),
            "topic_znode_version": draw(st.integers(0, 3)),
            "config_znode_version": draw(st.none() | st.integers(0, 3)),
            "topic_marked_for_deletion": draw(st.booleans()),
            "reassignment_in_progress": False,
            **copy.deepcopy(draw(st.sampled_from(pool))),
        }
        if draw(st.integers(0, 2)) == 0:
            _corrupt(draw, row)
        drawn.append(orjson.loads(json.dumps(row, sort_keys=draw(st.booleans()))))
    return drawn


def _observed(observer: _Observer) -> tuple[object, ...]:
    return (
        [(name, topic, list(topic.partitions.items())) for name, topic in observer.topics.items()],
        observer.health,
        list(observer.replicas.items()),
        list(observer.leaders.items()),
    )


@settings(max_examples=600)
@given(brokers(), rows())
def test_the_fast_path_reads_every_row_as_the_per_partition_reader(
    cluster: _Brokers, topic_rows: list[dict[str, Any]]
) -> None:
    fast = _Observer("c", cluster)
    reference = _Observer("c", cluster)
    reference._add = lambda row, layout_text=None: reference._add_any(row)  # type: ignore[method-assign]
    for row in topic_rows:
        assert fast.add(row) == reference.add(row), row
    assert _observed(fast) == _observed(reference)


def test_rows_as_kto_snapshot_writes_them_take_the_fast_path_and_share_their_layout() -> None:
    cluster = _Brokers(frozenset({1, 2, 3}), {1: "a", 2: "b", 3: "a"}, 2)
    observer = _Observer("c", cluster)
    for name, leader in (("t0", 1), ("t1", 1), ("t2", 4)):
        row = {
            "topic": name,
            "partitions": {"0": [1, 2], "1": [3, 1], "10": [2, 3]},
            "partition_states": {
                "0": {"isr": [1, 2], "leader": leader},
                "1": {"isr": [3], "leader": 3},
                "10": {"isr": [3, 2], "leader": 2},
            },
            "config": {"retention.ms": "1"},
            "topic_znode_version": 0,
        }
        assert observer._add_usual(orjson.loads(json.dumps(row, sort_keys=True)))
    assert len(observer.layouts) == 2  # t1's partitions and states are t0's
    found = [(f.topic, f.kind, f.message) for f in observer.health]
    assert [(topic, kind) for topic, kind, _ in found] == [
        *[(topic, kind) for topic in ("t0", "t1") for kind in ("under_replicated", "rack_violation")],
        ("t2", "under_replicated"),
        ("t2", "offline"),  # its partition 0 led by broker 4, not registered
        ("t2", "rack_violation"),  # partition 1, on brokers 3 and 1 of rack a
    ]
    assert list(observer.topics["t1"].partitions.items()) == [(0, (1, 2)), (1, (3, 1)), (10, (2, 3))]
    assert observer.replicas == {1: 6, 2: 6, 3: 6}
    assert observer.leaders == {1: 2, 3: 3, 2: 3, 4: 1}
