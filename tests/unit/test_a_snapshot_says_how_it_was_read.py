"""A snapshot taken through the brokers says so in its header (backend, the release and metadata.version they
answered), a ZooKeeper snapshot stays as it was, and the drift report's line on the release says which store each
cluster was read through."""

from __future__ import annotations

import json

from topic_operator.drift.cluster_drift import _read_row, release_line_text
from topic_operator.model import Backend, Broker, ClusterState, TopicState
from topic_operator.snapshot_rows import cluster_from_rows, rows_from_cluster


def _state(backend: Backend = Backend.KRAFT) -> ClusterState:
    return ClusterState(
        "id",
        {1: Broker(1, "a")},
        {"t": TopicState("t", {0: (1,)}, topic_id="AAAAAAAAAAAAAAAAAAAAAQ")},
        backend=backend,
        broker_release=(3, 9) if backend is Backend.KRAFT else None,
        metadata_version="3.9-IV0" if backend is Backend.KRAFT else None,
    )


def test_a_kraft_snapshot_header_carries_the_backend_and_reads_back() -> None:
    header, *_ = rows_from_cluster("events", _state(), "2026-11-27T08:00:00+00:00")
    assert (header["backend"], header["broker_release"], header["metadata_version"]) == (
        "kraft",
        "3.9",
        "3.9-IV0",
    )
    back = cluster_from_rows(header, ())
    assert (back.backend, back.broker_release, back.metadata_version) == (Backend.KRAFT, (3, 9), "3.9-IV0")


def test_a_zookeeper_snapshot_header_is_as_it_was() -> None:
    header, *_ = rows_from_cluster("legacy", _state(Backend.ZOOKEEPER), "2026-11-27T08:00:00+00:00")
    assert not {"backend", "broker_release", "metadata_version"} & set(header)
    assert cluster_from_rows(header, ()).backend is Backend.ZOOKEEPER


def test_the_report_says_the_cluster_was_read_through_its_brokers() -> None:
    assert release_line_text((3, 9), _state()) == (
        "kafkaVersion 3.9; read through the brokers (Kafka's Admin protocol), which answer as Kafka 3.9, "
        "metadata.version 3.9-IV0"
    )
    warned = release_line_text((3, 4), _state())
    assert warned is not None
    assert warned.endswith(". Warning: the brokers answer as Kafka 3.9, not 3.4")
    assert release_line_text((3, 9), _state(Backend.ZOOKEEPER)) is None  # no znode evidence read: as before


def test_a_header_with_an_unknown_backend_is_refused_as_a_row() -> None:
    header, *_ = rows_from_cluster("events", _state(), "2026-11-27T08:00:00+00:00")
    assert isinstance(_read_row(json.dumps(header)), dict)
    for field, value in (("backend", "etcd"), ("broker_release", "three"), ("metadata_version", 21)):
        assert _read_row(json.dumps({**header, field: value})) == (
            f"not a JSON snapshot row of the expected types ({field})"
        )
