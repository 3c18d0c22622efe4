"""The KafkaCluster path: its handle and link to Kafka (``registry``, ``cluster_config``; the link itself is ``access.links``),
its batches (``batching``), its status (``clusters``) and the session keeper that runs its rounds (``sessions``)."""
