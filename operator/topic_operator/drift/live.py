"""Reading one cluster live for the drift job, as ``kto snapshot`` reads it, by the same way in (``access``) as
``kto`` and the operator: what a task of either engine runs.

No pyspark here: Spark's tasks (``inputs.collect_live``) and the process engine's workers
(``processes.collect_live_in_processes``) both call ``collect_cluster``, and write its rows in the same layout,
``cluster=<name>/part-*``, which the run then reads like any snapshot files.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path

from topic_operator.access.address import ClusterAddress

__all__ = ["collect_cluster", "live_file"]


def collect_cluster(
    name: str, address: ClusterAddress, timeout: float
) -> Iterator[tuple[str, str | None, str | None]]:
    """Read one cluster as ``kto snapshot`` does, through its ZooKeeper (a read-only session), its brokers
    (Kafka's Admin protocol), or, while it migrates, the one its stage reads from; yield its rows as JSON
    text, or one row carrying the reason the cluster could not be read: ``(cluster, line, None)`` or
    ``(cluster, None, reason)``. ``timeout``: how long connecting may take."""
    from topic_operator.access.stores import opened_store
    from topic_operator.snapshot_rows import rows_from_cluster

    try:
        with opened_store(address, connect_timeout=timeout, read_only=True) as store:
            state = store.read_cluster(partition_states=True)
    except Exception as error:  # every failure becomes a finding; one cluster must not stop the fleet
        yield name, None, f"{type(error).__name__}: {error}"
        return
    if state.cluster_id is None and not state.brokers:
        yield (
            name,
            None,
            f"{address.text} has no /cluster/id and no brokers: not a Kafka cluster (check the chroot)",
        )
        return
    taken_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    for row in rows_from_cluster(name, state, taken_at):
        yield name, json.dumps(row, separators=(",", ":"), sort_keys=True), None


def live_file(directory: Path, cluster: str) -> Path:
    """Where the process engine writes a cluster's live rows: Spark's ``partitionBy("cluster")`` layout (cluster
    names are Kubernetes names, which Spark writes unescaped)."""
    return directory / f"cluster={cluster}" / "part-00000.jsonl"
