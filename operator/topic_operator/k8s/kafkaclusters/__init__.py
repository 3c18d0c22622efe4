"""The KafkaCluster path: its handle and link to Kafka (``registry``, ``cluster_links``, ``cluster_config``),
its batches (``batching``), its status (``clusters``) and the session keeper that runs its rounds (``sessions``)."""
