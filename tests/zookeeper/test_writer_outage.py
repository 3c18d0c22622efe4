"""When ZooKeeper goes away for good in the middle of a batch, the writer still answers for every action, within
its deadline, instead of raising out of the batch or waiting for as long as the outage lasts: what was sent and
lost its answer is UNKNOWN, what was never sent is NOT_WRITTEN."""

import threading
import time
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.retry import KazooRetry

from harness.kafka_cluster import make_kafka_cluster
from topic_operator.plan import CreateTopic
from topic_operator.testing.local_server import LocalZooKeeper
from topic_operator.zookeeper.errors import ZooKeeperUnavailableError
from topic_operator.zookeeper.writer import Outcome, WriteResult, ZooKeeperWriter

BATCH = 50
KILL_AT = 25


def test_a_lasting_outage_is_reported_per_action_within_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    server = LocalZooKeeper().start()
    client = KazooClient(
        hosts=server.connect_string, timeout=3, connection_retry=KazooRetry(max_tries=-1, max_delay=0.2)
    )
    client.start(timeout=10)
    try:
        make_kafka_cluster(client)
        built = 0
        transaction = client.transaction

        def transaction_then_outage() -> Any:
            nonlocal built
            built += 1
            if built == KILL_AT:
                server.stop()  # the process is killed: it never comes back
            return transaction()

        monkeypatch.setattr(client, "transaction", transaction_then_outage)
        writer = ZooKeeperWriter(client, deadline=2.0)
        actions = [CreateTopic(f"t{i:03}", {0: (0, 1, 2)}, {"retention.ms": "1"}) for i in range(BATCH)]
        results: list[WriteResult] = []
        started = time.monotonic()
        worker = threading.Thread(target=lambda: results.extend(writer.apply_all(actions)), daemon=True)
        worker.start()
        worker.join(timeout=60)
        elapsed = time.monotonic() - started
        assert not worker.is_alive(), "apply_all kept waiting for a ZooKeeper that is gone"
        assert len(results) == BATCH
        unfinished = [r for r in results if r.outcome is not Outcome.APPLIED]
        assert all(isinstance(r.error, ZooKeeperUnavailableError) for r in unfinished)
        assert {r.outcome for r in results} <= {Outcome.APPLIED, Outcome.NOT_WRITTEN, Outcome.UNKNOWN}
        assert len(unfinished) >= BATCH - KILL_AT  # nothing after the kill was answered
        unknown = [r for r in results if r.outcome is Outcome.UNKNOWN]
        assert unknown, "commits were in flight at the kill"
        assert "unknown whether the write landed" in str(unknown[0].error)
        not_written = [r for r in results if r.outcome is Outcome.NOT_WRITTEN]
        assert all("not written, nothing of it landed" in str(r.error) for r in not_written)
        assert elapsed < 2.0 + 5, f"the batch took {elapsed:.1f} s"
    finally:
        server.stop()
        client.stop()
        client.close()
