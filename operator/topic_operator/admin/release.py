"""The brokers' release, as the Admin protocol shows it: each broker's ApiVersions answer (the newest release
whose requests it speaks, kafka-python's inference from Kafka's own request versions) and the finalized
``metadata.version`` feature (DescribeFeatures; KRaft only: ZooKeeper-mode brokers never report it).

Configs are judged by the software release, whatever the metadata version: 4.1's ``segment.bytes`` floor is the
4.1 brokers' check at any ``metadata.version``. The inference is a heuristic (``kraft.md`` §1.2: a 3.4 KRaft
broker, which lists no LeaderAndIsr, infers as 3.3), so it is reported beside the declared release, never
silently put in its place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import kafka.errors as kafka_errors
from kafka.admin import KafkaAdminClient

from topic_operator.admin.any_broker import through_any_broker
from topic_operator.kafka.metadata_versions import metadata_version_name
from topic_operator.kafka.releases import KafkaVersion

__all__ = ["broker_release", "metadata_version"]


def broker_release(admin: KafkaAdminClient, broker_ids: Iterable[int]) -> KafkaVersion | None:
    """The oldest release line among the brokers' ApiVersions answers (None when none could be asked)."""
    found: list[KafkaVersion] = []
    for broker in broker_ids:
        try:
            data = admin.get_broker_version_data(broker)
        except (
            kafka_errors.KafkaError
        ):  # not connected yet (just restarted, not in the client's metadata): the rest tell
            continue
        version = getattr(data, "broker_version", None)
        if isinstance(version, tuple) and len(version) >= 2:
            found.append((int(version[0]), int(version[1])))
    return min(found) if found else None


def metadata_version(admin: KafkaAdminClient, deadline: float) -> str | None:
    """The finalized ``metadata.version`` (``3.9-IV0``), or None where the brokers report none (ZooKeeper mode).
    Any broker answers; one that just stopped is passed over for another within ``deadline`` seconds."""
    features: Mapping[str, Mapping[str, Any]] = through_any_broker(
        admin, admin.describe_features, deadline=deadline, reading=True
    )
    finalized = features.get("metadata.version", {}).get("finalized")
    if not finalized:
        return None
    return metadata_version_name(int(finalized[1]))
