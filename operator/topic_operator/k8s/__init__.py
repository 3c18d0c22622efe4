"""The Kubernetes face of the engine: kopf handlers for KafkaTopic and KafkaCluster, and what they need.

The only package that imports kopf or a Kubernetes client. Every decision about Kafka (what to create, grow,
change, refuse) is the engine's (``plan``/``reconcile``); what lives here is translation (CR bodies -> specs,
results -> status, conditions and Events), scheduling (batching, the drift timer) and safety (ownership,
finalizers, pause). The pure parts (settings, conditions, status, ownership, deletion) are small modules with no
kopf import, tested without any server.

May import: the engine (``reconcile``, ``plan``, ``plan_output``, ``model``), ``manifests/``, ``zookeeper/``,
``kafka/``, kopf, lightkube and prometheus-client. Never ``drift/``, ``cli/`` or Spark.
"""
